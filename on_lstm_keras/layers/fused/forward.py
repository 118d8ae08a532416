"""The forward pass of the fused ON-LSTM recurrence.

`ForwardPass` runs the whole sequence in one loop (`scan`): per step the
matmuls `x_t · W` and `h₋₁ · U` (all six gate blocks at once) and the cell,
keeping `c₋₁` and the activations (`i, f, ĉ, o, tanh c`, the master gates
and their softmaxes) for the hand-written backward pass (`backward.py`),
which then needs no transcendental function.

The cell (see `ONLSTMCell`), per step, with levels broadcast over a chunk:

    f̃ = p_f · M_f,  ĩ = p_i · M_i,  p = softmax(z_master) per gate,
    M_f[k, j] = [k <= j],  M_i[k, j] = [k > j] (paper) or [k >= j] (Su)
    c = c₋₁ ∘ A + ĉ ∘ B,   A = f̃ − ω + ω∘f,   B = ĩ − ω + ω∘i,   ω = f̃∘ĩ
    h = o ∘ tanh(c)

(`ĩ = Σ_{k>j} p_k` is the paper's `1 − cumsum(p)` without the
cancellation; both cumulative sums are one small matmul.) The input and
forget sides are stacked on one axis, so that one op serves both and the
chain of ops from one step's state to the next stays short.
"""

import numpy as np
from keras import ops

from on_lstm_keras.layers.fused.scan import scan
from on_lstm_keras.ops import master_distances


class ForwardPass:
    """The sizes, the cumulative-sum matrices and the forward loop.

    Args:
        cell: The `ONLSTMCell` (its sizes and `master_input` only).
        dtype: The compute dtype.
        return_distances: Whether to also return the per-step distances.
        unroll: Unroll the loops.
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
            # The softmax spelled out in element-wise ops: TensorFlow's CPU
            # `softmax` kernel sets up more than these few ops on a
            # `(batch, 2, levels)` tensor need, once per step.
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
        outputs, (_, c_last) = scan(
            step, inputs, [h0, c0], unroll=self.unroll
        )
        return (outputs[0], dict(zip(names, outputs[1:]))), c_last
