"""The ON-LSTM recurrence fused into one differentiable op.

`ONLSTM.inner_loop` runs whole sequences through `fused_inner_loop` (when
`fused_path_unsupported` has nothing against it) instead of stepping
through `ONLSTMCell` with autodiff. `fused_inner_loop` is the glue: dropout,
masks, `go_backwards` and time-major layout around `FusedRecurrence`, whose
forward loop keeps only what its hand-written backward loop needs.
"""

import keras
import numpy as np
from keras import activations
from keras import ops

# `keras.layers.RNN`'s own backend-agnostic loop.
from keras.src.backend import rnn as backend_rnn

from on_lstm_keras.ops import DISTANCE_FORGET
from on_lstm_keras.ops import DISTANCE_INPUT
from on_lstm_keras.ops import master_distances

# -- the fused recurrence with a hand-written backward pass -------------------
#
# `ONLSTM` runs the whole sequence through `FusedRecurrence` when
# `fused_path_unsupported` finds nothing against it: one
# `keras.ops.custom_gradient` function around two loops (`keras.layers.RNN`'s
# own `backend.rnn`). The forward loop does the matmuls `x_t · W` and
# `h₋₁ · U` (all six gate blocks at once) and keeps, per step, `c₋₁` and the
# activations (`i, f, ĉ, o, tanh c`, the master gates and their softmaxes).
# The reverse loop then needs no transcendental function, only element-wise
# products and one matmul, `dz · Uᵀ`; `dU = Σ_t h_{t-1}ᵀ dz_t`,
# `dW = Σ_t x_tᵀ dz_t` and `dx = dz · Wᵀ` are matmuls over whole segments
# of steps (see `backward_segments`). Autodiff through the generic loop
# instead keeps TensorArrays of every intermediate (on TensorFlow) and
# accumulates `dU` and `dW` with two small matmuls per step.
#
# On TensorFlow without XLA every op is a kernel call of its own, and on an
# idle machine a step costs the chain of ops from one step's state to the
# next (the rest runs ahead on the other core). So the input and forget
# sides are stacked on one axis (one op for both), and the reverse step
# first forms the factors that need no gradient (`o∘(1 − tanh²c)`,
# `ω∘σ'`, ...), so that its chain is one op per term.
#
# The cell (see `ONLSTMCell`), per step, with levels broadcast over a chunk:
#
#     f̃ = p_f · M_f,  ĩ = p_i · M_i,  p = softmax(z_master) per gate,
#     M_f[k, j] = [k <= j],  M_i[k, j] = [k > j] (paper) or [k >= j] (Su)
#     c = c₋₁ ∘ A + ĉ ∘ B,   A = f̃ − ω + ω∘f,   B = ĩ − ω + ω∘i,   ω = f̃∘ĩ
#     h = o ∘ tanh(c)
#
# (`ĩ = Σ_{k>j} p_k` is the paper's `1 − cumsum(p)` without the
# cancellation; both cumulative sums are one small matmul.) Given dh and the
# carried dc:
#
#     dc  += dh ∘ o ∘ (1 − tanh²c)           do = dh ∘ tanh c
#     di   = dc ∘ ĉ ∘ ω     df = dc ∘ c₋₁ ∘ ω     dĉ = dc ∘ B     dc₋₁ = dc ∘ A
#     dq   = Σ_chunk dc ∘ (c₋₁∘(f − 1) + ĉ∘(i − 1))
#     df̃   = Σ_chunk dc ∘ c₋₁ + ĩ∘dq            dĩ = Σ_chunk dc ∘ ĉ + f̃∘dq
#
# then through the activations: σ' = σ(1 − σ), tanh' = 1 − tanh²; a
# cumulative sum backward is a matmul with `Mᵀ`; softmax backward is
# `p ∘ (g − Σ p∘g)`, where `Σ_k p_k (Mᵀ d)_k = Σ_j d_j f̃_j` (resp. `ĩ_j`).

_FUSED_BACKENDS = ("tensorflow", "jax")


def fused_path_unsupported(cell):
    """Why `ONLSTM` must step through the cell generically, or `None`."""
    backend = keras.backend.backend()
    if backend not in _FUSED_BACKENDS:
        return f"backend {backend!r}"
    if cell.activation is not activations.tanh:
        return "activation is not tanh"
    if cell.recurrent_activation is not activations.sigmoid:
        return "recurrent_activation is not sigmoid"
    return None


def _scan(step, inputs, states, reverse=False, unroll=False):
    """Runs `step(inputs_t, states) -> (outputs_t, states)` over time.

    `inputs` is a tuple of time-major tensors, `outputs_t` a tuple of
    tensors (only one with `reverse`). Returns the stacked outputs, in
    input order also when `reverse`, and the last states. The loop is
    `keras.layers.RNN`'s own (`backend.rnn`), or a Python loop with `unroll`.
    """
    if unroll:
        n_steps = inputs[0].shape[0]
        order = range(n_steps - 1, -1, -1) if reverse else range(n_steps)
        collected = [None] * n_steps
        for t in order:
            collected[t], states = step(tuple(x[t] for x in inputs), states)
        outputs = tuple(ops.stack(ys, axis=0) for ys in zip(*collected))
        return outputs, states

    if inputs[0].shape[0] is None:
        return _scan_unknown_length(step, inputs, states, reverse)

    def backend_step(inputs_t, states):
        # A lone output goes through as a tensor: JAX's `rnn` can only flip
        # a tensor.
        outputs_t, new_states = step(inputs_t, states)
        new_states = _same_static_shapes(new_states, states)
        return (outputs_t[0] if reverse else outputs_t), new_states

    _, outputs, states = backend_rnn(
        backend_step,
        inputs,
        list(states),
        go_backwards=reverse,
        time_major=True,
        input_length=inputs[0].shape[0],
        return_all_outputs=True,
    )
    if reverse:  # `backend.rnn` gives them in processing order
        outputs = (ops.flip(outputs, axis=0),)
    return tuple(outputs), states


def _same_static_shapes(new_states, states):
    """`new_states`, each given the fully known static shape of its state.

    TensorFlow's `while_loop` wants every loop variable to keep its static
    shape. A state of static batch size 1 (a stateful model's carried
    state, or a fixed-size initial state) combined with inputs whose batch
    size is unknown (Keras relaxes the input shapes of a retraced function)
    comes out with an unknown batch size, since 1 broadcasts against any
    size. The sizes agree at run time; the reshape only restores the
    static shape.
    """
    fixed = []
    for new, old in zip(new_states, states):
        shape = tuple(old.shape)
        if None not in shape and tuple(new.shape) != shape:
            new = ops.reshape(new, shape)
        fixed.append(new)
    return fixed


def _scan_unknown_length(step, inputs, states, reverse):
    """`_scan` over a time axis whose length is known only at run time.

    `backend.rnn` reads the number of steps from its input's static shape
    unless that input is one tensor, batch-major; a tuple of time-major
    tensors of unknown length makes it fail. So the loop runs over a
    `(1, time, 1)` placeholder, and each step reads its own slice of
    `inputs` at a step counter carried as an extra state.
    """
    n_steps = ops.shape(inputs[0])[0]
    clock = ops.zeros((1, n_steps, 1), dtype="int8")
    first = n_steps - 1 if reverse else 0
    stride = -1 if reverse else 1

    def counted_step(_, carried):
        t, states = carried[0], carried[1:]
        inputs_t = tuple(ops.take(x, t, axis=0) for x in inputs)
        outputs_t, new_states = step(inputs_t, list(states))
        new_states = _same_static_shapes(new_states, states)
        return (outputs_t[0] if reverse else outputs_t), [t + stride,
                                                          *new_states]

    start = ops.convert_to_tensor(first, dtype="int32")
    _, outputs, carried = backend_rnn(
        counted_step,
        clock,
        [start, *states],
        return_all_outputs=True,
    )
    # `backend.rnn` gives the outputs batch-major, in processing order.
    if reverse:
        outputs = (ops.flip(ops.swapaxes(outputs, 0, 1), axis=0),)
    else:
        outputs = tuple(ops.swapaxes(y, 0, 1) for y in outputs)
    return outputs, list(carried[1:])


# The reverse loop runs in segments of at least this many steps, at most
# `_BACKWARD_SEGMENTS` of them (see `FusedRecurrence`'s gradient).
_BACKWARD_SEGMENTS = 4
_MIN_SEGMENT_STEPS = 8


def backward_segments(n_steps):
    """Slices that cut `n_steps` time steps into the reverse loop's
    segments, in time order: one segment for a short or unknown length."""
    if n_steps is None:
        return [slice(None)]
    count = max(1, min(_BACKWARD_SEGMENTS, n_steps // _MIN_SEGMENT_STEPS))
    cuts = [round(k * n_steps / count) for k in range(count + 1)]
    return [slice(a, b) for a, b in zip(cuts[:-1], cuts[1:])]


def _add(tensors):
    """The sum of a non-empty list of tensors."""
    total = tensors[0]
    for t in tensors[1:]:
        total = total + t
    return total


def _concatenate(tensors):
    """`tensors` joined along the time axis (one is given back as is)."""
    return tensors[0] if len(tensors) == 1 else ops.concatenate(tensors, 0)


class FusedRecurrence:
    """The ON-LSTM layer's recurrence, with a hand-written backward pass.

    Args:
        cell: The `ONLSTMCell` (its sizes and `master_input` only).
        dtype: The compute dtype.
        return_distances: Whether to also return the per-step distances.
        unroll: Unroll both loops.

    Call arguments:
        x: `(time, batch, features)`, the inputs, time-major, after dropout.
        kernel, bias, recurrent_kernel: The weights in the compute dtype;
            `bias` may be `None`; DropConnect already applied to
            `recurrent_kernel`.
        h0, c0: `(batch, units)` initial states.
        step_mask: `None`, or `(time, batch, 1)`: 1 for real steps, 0 for
            padding (a padded step keeps both states).
        recurrent_mask: `None`, or `(batch, units)`: the recurrent-dropout
            mask on `h₋₁`.

    Returns:
        `(h_seq, c_last)`, or `(h_seq, c_last, distances)`: the state `h`
        after every step `(time, batch, units)`, the last `c`, and the
        `(time, batch, 2)` distances (not masked). Differentiable in `x`,
        the weights, `h0` and `c0`.
    """

    def __init__(self, cell, dtype, return_distances=False, unroll=False):
        self.units, self.levels = cell.units, cell.levels
        self.chunk, self.gates = cell.chunk_size, cell.gate_size
        self.return_distances = return_distances
        self.unroll = unroll
        levels = self.levels
        k, j = np.indices((levels, levels))
        upto = k <= j  # f̃_j = Σ_{k<=j} p_k
        beyond = k > j if cell.master_input == "cumax" else k >= j
        zero = np.zeros((levels, levels))
        # `[p_f, p_i] · sums = [ĩ, f̃]`: the master gates in the order of
        # the gates they scale, `[i, f]`.
        sums = np.block([[zero, upto], [beyond, zero]])
        self.sums = ops.convert_to_tensor(sums, dtype=dtype)
        self.sums_t = ops.convert_to_tensor(sums.T, dtype=dtype)

    def by_level(self, t):
        return ops.reshape(t, (-1, self.levels, self.chunk))

    def master_gates(self, z_master):
        """`[ĩ, f̃]` and the softmaxes `[p_f, p_i]`, each `(n, 2, levels)`."""
        z = ops.reshape(z_master, (-1, 2, self.levels))
        if self.levels == 1:
            # p = 1 exactly (and Keras warns of a softmax over one level).
            p = ops.ones_like(z)
        else:
            # The softmax spelled out: on TensorFlow CPU `softmax` is a
            # oneDNN call whose set-up costs more than these few element-
            # wise ops on a `(batch, 2, levels)` tensor, once per step.
            # `initial`: TensorFlow's `max` refuses the empty tensor of a
            # batch of size 0 without it.
            e = ops.exp(
                z - ops.max(z, axis=-1, keepdims=True, initial=-np.inf)
            )
            p = e / ops.sum(e, axis=-1, keepdims=True)
        sums = ops.matmul(ops.reshape(p, (-1, 2 * self.levels)), self.sums)
        return ops.reshape(sums, (-1, 2, self.levels)), p

    def cell(self, z, c_prev):
        """One step from the fused pre-activations: `(h, c, saved)`, with
        `saved` what the backward pass needs of this step.

        The input and forget sides are stacked on axis 1, `(n, 2, L, C)`:
        `i_f = [i, f]`, `scales = [B, A]`, `mixed = [ĉ, c₋₁]`, so that
        `c = ĉ∘B + c₋₁∘A` and the backward pass treats both sides in one
        op each.
        """
        units = self.units
        z_i_f, z_c, z_o, z_m = ops.split(
            z, [2 * units, 3 * units, 4 * units], axis=-1
        )
        gates, p = self.master_gates(z_m)
        gates = ops.expand_dims(gates, -1)  # [ĩ, f̃], (n, 2, L, 1)
        overlap = ops.prod(gates, axis=1, keepdims=True)  # ω
        i_f = ops.reshape(
            ops.sigmoid(z_i_f), (-1, 2, self.levels, self.chunk)
        )
        c_hat, o = ops.tanh(z_c), ops.sigmoid(z_o)
        scales = gates + overlap * (i_f - 1.0)  # [B, A]
        c_hat, c_prev = self.by_level(c_hat), self.by_level(c_prev)
        c = ops.reshape(
            c_hat * scales[:, 0] + c_prev * scales[:, 1], (-1, units)
        )
        # Stacked for the backward pass only (a forward pass without
        # gradient leaves it out).
        mixed = ops.stack([c_hat, c_prev], axis=1)
        tanh_c = ops.tanh(c)
        saved = {"i_f": i_f, "mixed": mixed, "o": o, "tanh_c": tanh_c,
                 "gates": gates[..., 0], "p": p}
        return o * tanh_c, c, saved

    def distances(self, gates):
        """The `(time, batch, 2)` distances (see `master_distances`) from
        `gates` `(time, batch, 2, L)`, which hold `[ĩ, f̃]`."""
        return master_distances(gates[..., 1, :], gates[..., 0, :])

    def forward(self, x, kernel, bias, recurrent_kernel, h0, c0, keep, drop):
        """The forward loop: `(h_seq, saved), c_last`: the state `h` after
        every step, what the backward pass needs of every step (a dict of
        time-major stacks), and the last `c`."""
        names = []

        def step(inputs, states):
            h, c = states
            h_in = h if drop is None else h * drop
            z = ops.matmul(inputs[0], kernel) + ops.matmul(
                h_in, recurrent_kernel
            )
            if bias is not None:
                z = z + bias
            h_new, c_new, saved = self.cell(z, c)
            if keep is not None:
                keep_t = inputs[1]
                h_new = ops.where(keep_t, h_new, h)
                c_new = ops.where(keep_t, c_new, c)
            names[:] = sorted(saved)
            return (h_new, *(saved[k] for k in names)), [h_new, c_new]

        inputs = (x,) if keep is None else (x, keep)
        outputs, (_, c_last) = _scan(
            step, inputs, [h0, c0], unroll=self.unroll
        )
        return (outputs[0], dict(zip(names, outputs[1:]))), c_last

    def backward(self, dh_seq, dh_last, dc_last, d_dist, saved,
                 recurrent_kernel_t, keep, drop):
        """The reverse loop over the steps given, from the gradients
        `dh_last` and `dc_last` carried into their last step:
        `(dz_seq, dh0, dc0)`."""
        units, levels = self.units, self.levels
        names = sorted(saved)
        inputs = (dh_seq, *(saved[k] for k in names))
        if keep is not None:
            inputs += (keep,)
        if d_dist is not None:
            # d(mean ĩ)/dĩ_j = 1/L, d(1 − mean f̃)/df̃_j = −1/L; stacked as
            # the gates are, `[ĩ, f̃]`.
            d_gates_from_distances = ops.stack(
                [
                    d_dist[..., DISTANCE_INPUT] / levels,
                    -d_dist[..., DISTANCE_FORGET] / levels,
                ],
                axis=-1,
            )
            inputs += (ops.expand_dims(d_gates_from_distances, -1),)

        def step(inputs, states):
            dh_next, dc_next = states
            a = dict(zip(names, inputs[1 : 1 + len(names)]))
            rest = list(inputs[1 + len(names) :])
            # First the factors that need no gradient: the loop computes
            # them ahead, off the chain of ops from one step's `dh, dc` to
            # the next, which is what a step costs on an idle core.
            o, tanh_c, i_f, mixed = a["o"], a["tanh_c"], a["i_f"], a["mixed"]
            gates = ops.expand_dims(a["gates"], -1)  # [ĩ, f̃]
            overlap = ops.prod(gates, axis=1, keepdims=True)  # ω
            i_f_minus_1 = i_f - 1.0
            scales = gates + overlap * i_f_minus_1  # [B, A]
            to_c = o * (1.0 - tanh_c * tanh_c)  # dc/dh
            to_z_o = tanh_c * o * (1.0 - o)  # dz_o/dh
            to_z_i_f = overlap * i_f * (1.0 - i_f)  # dz_[i,f]/d[B, A]
            c_hat = mixed[:, 0]
            to_z_c = scales[:, 0] * (1.0 - c_hat * c_hat)  # dz_c/dc
            keep_prev = scales[:, 1]  # A = dc₋₁/dc
            other_gate = ops.flip(a["gates"], axis=1)  # [f̃, ĩ]
            p = a["p"]

            dh = dh_next + inputs[0]
            dc = dc_next
            if keep is not None:  # a padded step passes both gradients on
                keep_t = rest.pop(0)
                dh_all = dh
                dh = ops.where(keep_t, dh, ops.zeros_like(dh))
                dc = ops.where(keep_t, dc, ops.zeros_like(dc))
            dc = dc + dh * to_c
            dz_o = dh * to_z_o
            dc = self.by_level(dc)
            # [dB, dA] = dc ∘ [ĉ, c₋₁], summed over each chunk.
            d_scales = ops.expand_dims(dc, 1) * mixed
            dz_i_f = d_scales * to_z_i_f
            d_q = ops.sum(d_scales * i_f_minus_1, axis=(1, 3))
            d_gates = ops.sum(d_scales, axis=-1) + other_gate * (
                ops.expand_dims(d_q, 1)
            )
            if d_dist is not None:
                d_gates = d_gates + rest.pop(0)
            d_p = ops.reshape(
                ops.matmul(
                    ops.reshape(d_gates, (-1, 2 * levels)), self.sums_t
                ),
                (-1, 2, levels),
            )
            d_mean = ops.sum(p * d_p, axis=-1, keepdims=True)
            dz = ops.concatenate(
                [
                    ops.reshape(dz_i_f, (-1, 2 * units)),
                    ops.reshape(dc * to_z_c, (-1, units)),
                    dz_o,
                    ops.reshape(p * (d_p - d_mean), (-1, 2 * levels)),
                ],
                axis=-1,
            )
            dh_prev = ops.matmul(dz, recurrent_kernel_t)
            if drop is not None:
                dh_prev = dh_prev * drop
            dc_prev = ops.reshape(dc * keep_prev, (-1, units))
            if keep is not None:
                dh_prev = ops.where(keep_t, dh_prev, dh_all)
                dc_prev = ops.where(keep_t, dc_prev, dc_next)
            return (dz,), [dh_prev, dc_prev]

        (dz_seq,), (dh0, dc0) = _scan(
            step,
            inputs,
            [dh_last, dc_last],
            reverse=True,
            unroll=self.unroll,
        )
        return dz_seq, dh0, dc0

    def __call__(self, x, kernel, bias, recurrent_kernel, h0, c0,
                 step_mask=None, recurrent_mask=None):
        has_bias = bias is not None
        has_mask = step_mask is not None
        has_dropout = recurrent_mask is not None
        args = [x, kernel, recurrent_kernel, h0, c0]
        args += [a for a in (bias, step_mask, recurrent_mask) if a is not None]

        @ops.custom_gradient
        def recurrence(*args):
            x, kernel, recurrent_kernel, h0, c0 = args[:5]
            rest = list(args[5:])
            bias = rest.pop(0) if has_bias else None
            keep = ops.cast(rest.pop(0), "bool") if has_mask else None
            drop = rest.pop(0) if has_dropout else None
            (h_seq, saved), c_last = self.forward(
                x, kernel, bias, recurrent_kernel, h0, c0, keep, drop
            )
            outputs = (h_seq, c_last)
            if self.return_distances:
                outputs += (self.distances(saved["gates"]),)

            def grad(*upstream):
                # TensorFlow passes one gradient per output, JAX one tuple.
                if len(upstream) == 1:
                    upstream = upstream[0]
                dh_seq, dc_last = upstream[0], upstream[1]
                d_dist = upstream[2] if self.return_distances else None
                if dh_seq is None:
                    dh_seq = ops.zeros_like(h_seq)
                if dc_last is None:
                    dc_last = ops.zeros_like(c_last)
                h_prev = ops.concatenate(
                    [ops.expand_dims(h0, 0), h_seq[:-1]], axis=0
                )
                if drop is not None:
                    h_prev = h_prev * drop
                kernel_t = ops.transpose(kernel)
                recurrent_kernel_t = ops.transpose(recurrent_kernel)
                dh_next, dc_next = ops.zeros_like(dc_last), dc_last
                parts = {"dx": [], "kernel": [], "recurrent": [], "bias": []}
                # Segment by segment, last first: each segment's `dx`, `dW`,
                # `dU` and `db` matmuls need only its own `dz`, so they run
                # on the other core while the next segment's loop runs.
                for seg in reversed(backward_segments(x.shape[0])):
                    dz_seq, dh_next, dc_next = self.backward(
                        dh_seq[seg], dh_next, dc_next,
                        None if d_dist is None else d_dist[seg],
                        {k: v[seg] for k, v in saved.items()},
                        recurrent_kernel_t,
                        None if keep is None else keep[seg],
                        drop,
                    )
                    dz = ops.reshape(dz_seq, (-1, self.gates))
                    x_seg = ops.reshape(x[seg], (-1, x.shape[-1]))
                    h_seg = ops.reshape(h_prev[seg], (-1, self.units))
                    parts["dx"].insert(0, ops.matmul(dz_seq, kernel_t))
                    parts["kernel"].append(
                        ops.matmul(ops.transpose(x_seg), dz)
                    )
                    parts["recurrent"].append(
                        ops.matmul(ops.transpose(h_seg), dz)
                    )
                    if has_bias:
                        parts["bias"].append(ops.sum(dz, axis=0))
                grads = [
                    _concatenate(parts["dx"]),
                    _add(parts["kernel"]),
                    _add(parts["recurrent"]),
                    dh_next,
                    dc_next,
                ]
                if has_bias:
                    grads.append(_add(parts["bias"]))
                return tuple(grads) + (None,) * (has_mask + has_dropout)

            return outputs, grad

        return recurrence(*args)


def fused_inner_loop(layer, sequences, initial_state, mask, training):
    """`ONLSTM.inner_loop` through `FusedRecurrence`, time-major inside.

    Args:
        layer: The `ONLSTM` layer (its cell, `go_backwards`, `unroll`,
            `zero_output_for_mask` and `return_distances`).
        sequences: `(batch, time, features)`.
        initial_state: `[h0, c0]`.
        mask: `None` or `(batch, time)`, `False` at padded steps.
        training: Whether the dropouts apply.

    Returns:
        `((last_output, outputs, [h, c]), distances)`, as
        `keras.layers.RNN.inner_loop` returns its triple; `distances` is
        `(batch, time, 2)` in the input's time order, 0 at padded steps,
        or `None` without `layer.return_distances`.
    """
    cell = layer.cell
    dtype = sequences.dtype
    # Copies: a stateful caller assigns new values to the variables that
    # hold these states right after this call, and on TensorFlow a tensor
    # read from a variable can see that assignment; the backward pass
    # needs the values from before it.
    h0, c0 = (ops.copy(s) for s in initial_state)
    if training and cell.dropout > 0:  # one mask for every step
        sequences = sequences * ops.expand_dims(
            cell.get_dropout_mask(sequences[:, 0]), 1
        )
    x = ops.transpose(sequences, (1, 0, 2))
    step_mask = None
    if mask is not None:
        step_mask = ops.expand_dims(
            ops.transpose(ops.cast(mask, dtype), (1, 0)), -1
        )
    if layer.go_backwards:
        x = ops.flip(x, axis=0)
        if step_mask is not None:
            step_mask = ops.flip(step_mask, axis=0)
    recurrent_mask = None
    if training and cell.recurrent_dropout > 0:
        recurrent_mask = cell.get_recurrent_dropout_mask(h0)

    def weight(w):
        return ops.cast(ops.convert_to_tensor(w), dtype)

    recurrence = FusedRecurrence(
        cell, dtype, return_distances=layer.return_distances,
        unroll=layer.unroll,
    )
    result = recurrence(
        x,
        weight(cell.kernel),
        weight(cell.bias) if cell.use_bias else None,
        weight(cell.effective_recurrent_kernel(training)),
        h0,
        c0,
        step_mask=step_mask,
        recurrent_mask=recurrent_mask,
    )
    h_seq, c_last = result[0], result[1]
    outputs = h_seq
    if step_mask is not None:
        # A padded step repeats the last output of a real step, or gives
        # 0 before the first real step (or always, with
        # `zero_output_for_mask`); the states just carry over.
        if layer.zero_output_for_mask:
            valid = step_mask
        else:
            valid = ops.cast(ops.cumsum(step_mask, axis=0) > 0, dtype)
        outputs = outputs * valid
    distances = None
    if layer.return_distances:
        distances = result[2]
        if step_mask is not None:
            distances = distances * step_mask
        if layer.go_backwards:  # to the input's time order
            distances = ops.flip(distances, axis=0)
        distances = ops.transpose(distances, (1, 0, 2))
    last_output, outputs = outputs[-1], ops.transpose(outputs, (1, 0, 2))
    return (last_output, outputs, [h_seq[-1], c_last]), distances
