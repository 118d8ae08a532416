"""A step-by-step NumPy ON-LSTM, written from the paper's equations.

It is the independent reference the layer is checked against: float64, one
explicit loop over time, no Keras. Weight layout (the layer's documented
one): columns `[i | f | ĉ | o | master forget | master input]`.
"""

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def master_gates(z_forget, z_input, master_input="cumax"):
    """f̃ = cumsum(softmax), ĩ = 1 − cumsum(softmax) or right-to-left cumsum."""
    f_master = np.cumsum(softmax(z_forget), axis=-1)
    p_input = softmax(z_input)
    if master_input == "cumax":
        i_master = 1.0 - np.cumsum(p_input, axis=-1)
    else:
        i_master = np.cumsum(p_input[:, ::-1], axis=-1)[:, ::-1]
    return f_master, i_master


def step(x_t, h, c, kernel, recurrent_kernel, bias, chunk_size, master_input):
    """One ON-LSTM step. Returns `(h, c, distances)`."""
    units = h.shape[-1]
    levels = units // chunk_size
    z = x_t @ kernel + h @ recurrent_kernel + bias
    i = sigmoid(z[:, :units])
    f = sigmoid(z[:, units : 2 * units])
    c_hat = np.tanh(z[:, 2 * units : 3 * units])
    o = sigmoid(z[:, 3 * units : 4 * units])
    f_master, i_master = master_gates(
        z[:, 4 * units : 4 * units + levels],
        z[:, 4 * units + levels :],
        master_input,
    )
    # Each level is repeated `chunk_size` times across the units.
    f_rep = np.repeat(f_master, chunk_size, axis=-1)
    i_rep = np.repeat(i_master, chunk_size, axis=-1)
    omega = f_rep * i_rep
    c_new = (
        omega * (f * c + i * c_hat)
        + (f_rep - omega) * c
        + (i_rep - omega) * c_hat
    )
    h_new = o * np.tanh(c_new)
    distances = np.stack(
        [1.0 - f_master.mean(axis=-1), i_master.mean(axis=-1)], axis=-1
    )
    return h_new, c_new, distances


def run(
    x,
    kernel,
    recurrent_kernel,
    bias,
    chunk_size,
    master_input="cumax",
    mask=None,
    h0=None,
    c0=None,
):
    """Runs a whole batch `(batch, time, features)`.

    Masked steps keep the states and repeat the previous output (Keras'
    convention); their distances are 0.

    Returns:
        `(outputs (batch, time, units), distances (batch, time, 2), h, c)`.
    """
    x = np.asarray(x, np.float64)
    kernel, recurrent_kernel, bias = (
        np.asarray(a, np.float64) for a in (kernel, recurrent_kernel, bias)
    )
    batch, time, _ = x.shape
    units = recurrent_kernel.shape[0]
    h = np.zeros((batch, units)) if h0 is None else np.array(h0, np.float64)
    c = np.zeros((batch, units)) if c0 is None else np.array(c0, np.float64)
    out = np.zeros((batch, units))
    outputs, all_distances = [], []
    for t in range(time):
        h_new, c_new, distances = step(
            x[:, t], h, c, kernel, recurrent_kernel, bias, chunk_size,
            master_input,
        )
        if mask is None:
            keep = np.ones((batch, 1), bool)
        else:
            keep = np.asarray(mask)[:, t : t + 1].astype(bool)
        h = np.where(keep, h_new, h)
        c = np.where(keep, c_new, c)
        out = np.where(keep, h_new, out)
        outputs.append(out)
        all_distances.append(np.where(keep, distances, 0.0))
    return np.stack(outputs, 1), np.stack(all_distances, 1), h, c


def piecewise_update(c_prev, c_hat, f, i, d_forget, d_input_last, chunk_size):
    """The blog's interval update with binary master gates (seed 000).

    Levels `>= d_forget` hold history, levels `<= d_input_last` hold input.
    If they overlap, the overlap `[d_forget, d_input_last]` is an LSTM
    update; if not, the gap between them is zero.
    """
    units = c_prev.shape[-1]
    out = np.zeros_like(c_prev)
    for unit in range(units):
        level = unit // chunk_size
        history = level >= d_forget
        current = level <= d_input_last
        if history and current:
            out[:, unit] = f[:, unit] * c_prev[:, unit] + i[:, unit] * c_hat[:, unit]
        elif history:
            out[:, unit] = c_prev[:, unit]
        elif current:
            out[:, unit] = c_hat[:, unit]
    return out
