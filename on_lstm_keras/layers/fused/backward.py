"""The hand-written backward pass of the fused ON-LSTM recurrence.

`BackwardPass.gradients` runs the reverse loop over the activations that
`ForwardPass.forward` kept. Per step it needs only element-wise products
and one matmul, `dz · Uᵀ`; `dU = Σ_t h_{t-1}ᵀ dz_t`, `dW = Σ_t x_tᵀ dz_t`
and `dx = dz · Wᵀ` are matmuls over whole segments of steps (see
`backward_segments`). Autodiff through the generic loop would instead keep
every intermediate and accumulate `dU` and `dW` with two small matmuls per
step. The reverse step first forms the factors that need no gradient
(`o∘(1 − tanh²c)`, `ω∘σ'`, ...), off the chain of ops from one step's
`dh, dc` to the next, so that the chain is one op per term.

Given `dh` and the carried `dc` (notation of `forward.py`):

    dc  += dh ∘ o ∘ (1 − tanh²c)           do = dh ∘ tanh c
    di   = dc ∘ ĉ ∘ ω     df = dc ∘ c₋₁ ∘ ω     dĉ = dc ∘ B     dc₋₁ = dc ∘ A
    dq   = Σ_chunk dc ∘ (c₋₁∘(f − 1) + ĉ∘(i − 1))
    df̃   = Σ_chunk dc ∘ c₋₁ + ĩ∘dq            dĩ = Σ_chunk dc ∘ ĉ + f̃∘dq

then through the activations: σ' = σ(1 − σ), tanh' = 1 − tanh²; a
cumulative sum backward is a matmul with `Mᵀ`; softmax backward is
`p ∘ (g − Σ p∘g)`, where `Σ_k p_k (Mᵀ d)_k = Σ_j d_j f̃_j` (resp. `ĩ_j`).
"""

from keras import ops

from on_lstm_keras.layers.fused.scan import scan
from on_lstm_keras.ops import DISTANCE_FORGET
from on_lstm_keras.ops import DISTANCE_INPUT

# The reverse loop runs in segments of at least this many steps, at most
# `_BACKWARD_SEGMENTS` of them (see `BackwardPass.gradients`).
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


def _reverse_factors(a):
    """The factors of a reverse step that need no gradient, from what the
    forward pass kept of the step (`a`)."""
    o, tanh_c, i_f, mixed = a["o"], a["tanh_c"], a["i_f"], a["mixed"]
    gates = ops.expand_dims(a["gates"], -1)  # [ĩ, f̃]
    overlap = ops.prod(gates, axis=1, keepdims=True)  # ω
    i_f_minus_1 = i_f - 1.0
    scales = gates + overlap * i_f_minus_1  # [B, A]
    c_hat = mixed[:, 0]
    return {
        "mixed": mixed,
        "i_f_minus_1": i_f_minus_1,
        "to_c": o * (1.0 - tanh_c * tanh_c),  # dc/dh
        "to_z_o": tanh_c * o * (1.0 - o),  # dz_o/dh
        "to_z_i_f": overlap * i_f * (1.0 - i_f),  # dz_[i,f]/d[B, A]
        "to_z_c": scales[:, 0] * (1.0 - c_hat * c_hat),  # dz_c/dc
        "keep_prev": scales[:, 1],  # A = dc₋₁/dc
        "other_gate": ops.flip(a["gates"], axis=1),  # [f̃, ĩ]
        "p": a["p"],
    }


class BackwardPass:
    """The reverse loop and the gradients of the fused recurrence.

    A mix-in of `FusedRecurrence`: it uses `ForwardPass`'s sizes,
    `sums_t`, `by_level`, `unroll` and `return_distances`.
    """

    def reverse_dz(self, dh, dc, f, d_gates_from_distances):
        """`(dz, dc)` of one reverse step: the gradient of the fused
        pre-activations and that of `c` (by level), from `dh`, the carried
        `dc` and the step's factors `f` (see `_reverse_factors`)."""
        units, levels = self.units, self.levels
        dc = dc + dh * f["to_c"]
        dz_o = dh * f["to_z_o"]
        dc = self.by_level(dc)
        # [dB, dA] = dc ∘ [ĉ, c₋₁], summed over each chunk.
        d_scales = ops.expand_dims(dc, 1) * f["mixed"]
        dz_i_f = d_scales * f["to_z_i_f"]
        d_q = ops.sum(d_scales * f["i_f_minus_1"], axis=(1, 3))
        d_gates = ops.sum(d_scales, axis=-1) + f["other_gate"] * (
            ops.expand_dims(d_q, 1)
        )
        if d_gates_from_distances is not None:
            d_gates = d_gates + d_gates_from_distances
        d_p = ops.reshape(
            ops.matmul(ops.reshape(d_gates, (-1, 2 * levels)), self.sums_t),
            (-1, 2, levels),
        )
        p = f["p"]
        d_mean = ops.sum(p * d_p, axis=-1, keepdims=True)
        dz = ops.concatenate(
            [
                ops.reshape(dz_i_f, (-1, 2 * units)),
                ops.reshape(dc * f["to_z_c"], (-1, units)),
                dz_o,
                ops.reshape(p * (d_p - d_mean), (-1, 2 * levels)),
            ],
            axis=-1,
        )
        return dz, dc

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
            f = _reverse_factors(dict(zip(names, inputs[1 : 1 + len(names)])))
            rest = list(inputs[1 + len(names) :])
            dh = dh_next + inputs[0]
            dc = dc_next
            if keep is not None:  # a padded step passes both gradients on
                keep_t = rest.pop(0)
                dh_all = dh
                dh = ops.where(keep_t, dh, ops.zeros_like(dh))
                dc = ops.where(keep_t, dc, ops.zeros_like(dc))
            from_distances = rest.pop(0) if d_dist is not None else None
            dz, dc = self.reverse_dz(dh, dc, f, from_distances)
            dh_prev = ops.matmul(dz, recurrent_kernel_t)
            if drop is not None:
                dh_prev = dh_prev * drop
            dc_prev = ops.reshape(dc * f["keep_prev"], (-1, units))
            if keep is not None:
                dh_prev = ops.where(keep_t, dh_prev, dh_all)
                dc_prev = ops.where(keep_t, dc_prev, dc_next)
            return (dz,), [dh_prev, dc_prev]

        (dz_seq,), (dh0, dc0) = scan(
            step,
            inputs,
            [dh_last, dc_last],
            reverse=True,
            unroll=self.unroll,
        )
        return dz_seq, dh0, dc0

    def gradients(self, upstream, forward):
        """The gradients of `FusedRecurrence`'s arguments.

        Args:
            upstream: The gradients of its outputs `(h_seq, c_last[,
                distances])`; `None` for an output with no gradient.
            forward: A dict of the forward pass: its arguments `x`,
                `kernel`, `recurrent_kernel`, `h0`, `bias`, `keep`, `drop`,
                its outputs `h_seq`, `c_last` and what it kept, `saved`.

        Returns:
            The gradients of `x`, `kernel`, `recurrent_kernel`, `h0`, `c0`
            (and `bias` if any), then `None` for the masks.
        """
        dh_seq, dc_last = upstream[0], upstream[1]
        d_dist = upstream[2] if self.return_distances else None
        h_seq, c_last = forward["h_seq"], forward["c_last"]
        if dh_seq is None:
            dh_seq = ops.zeros_like(h_seq)
        if dc_last is None:
            dc_last = ops.zeros_like(c_last)
        h_prev = ops.concatenate(
            [ops.expand_dims(forward["h0"], 0), h_seq[:-1]], axis=0
        )
        if forward["drop"] is not None:
            h_prev = h_prev * forward["drop"]
        parts, dh0, dc0 = self._segment_gradients(
            dh_seq, dc_last, d_dist, h_prev, forward
        )
        grads = [
            _concatenate(parts["dx"]),
            _add(parts["kernel"]),
            _add(parts["recurrent"]),
            dh0,
            dc0,
        ]
        has_bias = forward["bias"] is not None
        if has_bias:
            grads.append(_add(parts["bias"]))
        has_mask = forward["keep"] is not None
        has_dropout = forward["drop"] is not None
        return tuple(grads) + (None,) * (has_mask + has_dropout)

    def _segment_gradients(self, dh_seq, dc_last, d_dist, h_prev, forward):
        """The reverse loop segment by segment, last first: the parts of
        `dx`, `dW`, `dU` and `db` of each segment, and `dh0`, `dc0`."""
        x, keep, saved = forward["x"], forward["keep"], forward["saved"]
        kernel_t = ops.transpose(forward["kernel"])
        recurrent_kernel_t = ops.transpose(forward["recurrent_kernel"])
        dh_next, dc_next = ops.zeros_like(dc_last), dc_last
        parts = {"dx": [], "kernel": [], "recurrent": [], "bias": []}
        # Each segment's `dx`, `dW`, `dU` and `db` matmuls need only its own
        # `dz`, so they need not wait for the next segment's loop.
        for seg in reversed(backward_segments(x.shape[0])):
            dz_seq, dh_next, dc_next = self.backward(
                dh_seq[seg], dh_next, dc_next,
                None if d_dist is None else d_dist[seg],
                {k: v[seg] for k, v in saved.items()},
                recurrent_kernel_t,
                None if keep is None else keep[seg],
                forward["drop"],
            )
            dz = ops.reshape(dz_seq, (-1, self.gates))
            x_seg = ops.reshape(x[seg], (-1, x.shape[-1]))
            h_seg = ops.reshape(h_prev[seg], (-1, self.units))
            parts["dx"].insert(0, ops.matmul(dz_seq, kernel_t))
            parts["kernel"].append(ops.matmul(ops.transpose(x_seg), dz))
            parts["recurrent"].append(ops.matmul(ops.transpose(h_seg), dz))
            if forward["bias"] is not None:
                parts["bias"].append(ops.sum(dz, axis=0))
        return parts, dh_next, dc_next
