"""The fused ON-LSTM recurrence as one differentiable op, and its glue.

`fused_inner_loop` runs a whole sequence of an `ONLSTM` layer through
`FusedRecurrence`: one `keras.ops.custom_gradient` function around the
forward loop (`forward.py`) and the hand-written reverse loop
(`backward.py`). It raises `NotImplementedError` where
`fused_path_unsupported` names a reason; the layer then steps through its
cell instead, as `keras.layers.LSTM` falls back from cuDNN.
"""

import keras
from keras import activations
from keras import ops

from on_lstm_keras.layers.fused.backward import BackwardPass
from on_lstm_keras.layers.fused.forward import ForwardPass

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


class FusedRecurrence(ForwardPass, BackwardPass):
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
            forward = {
                "x": x, "kernel": kernel, "recurrent_kernel": recurrent_kernel,
                "h0": h0, "bias": bias, "keep": keep, "drop": drop,
                "h_seq": h_seq, "c_last": c_last, "saved": saved,
            }

            def grad(*upstream):
                # TensorFlow passes one gradient per output, JAX one tuple.
                if len(upstream) == 1:
                    upstream = upstream[0]
                return self.gradients(upstream, forward)

            return outputs, grad

        return recurrence(*args)


def fused_inner_loop(layer, sequences, initial_state, mask, training):
    """The recurrence of an `ONLSTM` layer through `FusedRecurrence`.

    Args:
        layer: The `ONLSTM` layer (its cell, `go_backwards`, `unroll`,
            `zero_output_for_mask` and `return_distances`).
        sequences: `(batch, time, features)`.
        initial_state: `[h0, c0]`.
        mask: `None` or `(batch, time)`, `False` at padded steps.
        training: Whether the dropouts apply.

    Returns:
        `(last_output, outputs, [h, c], distances)`: the triple that
        `keras.layers.RNN.inner_loop` returns, then the distances
        `(batch, time, 2)` in the input's time order, 0 at padded steps,
        or `None` without `layer.return_distances`.

    Raises:
        NotImplementedError: Where `fused_path_unsupported` names a reason.
    """
    cell = layer.cell
    reason = fused_path_unsupported(cell)
    if reason is not None:
        raise NotImplementedError(f"No fused ON-LSTM recurrence: {reason}")
    dtype = sequences.dtype
    # Copies: a stateful caller assigns new values to the variables that
    # hold these states right after this call, and on TensorFlow a tensor
    # read from a variable can see that assignment; the backward pass
    # needs the values from before it.
    h0, c0 = (ops.copy(s) for s in initial_state)
    x, step_mask = _time_major(layer, sequences, mask, training)
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
    return _batch_major(layer, result, step_mask)


def _time_major(layer, sequences, mask, training):
    """`(x, step_mask)`: the inputs after dropout, `(time, batch,
    features)`, and the mask `(time, batch, 1)` or `None`, both in the
    order the layer reads them."""
    cell = layer.cell
    if training and cell.dropout > 0:  # one mask for every step
        sequences = sequences * ops.expand_dims(
            cell.get_dropout_mask(sequences[:, 0]), 1
        )
    x = ops.transpose(sequences, (1, 0, 2))
    step_mask = None
    if mask is not None:
        step_mask = ops.expand_dims(
            ops.transpose(ops.cast(mask, sequences.dtype), (1, 0)), -1
        )
    if layer.go_backwards:
        x = ops.flip(x, axis=0)
        if step_mask is not None:
            step_mask = ops.flip(step_mask, axis=0)
    return x, step_mask


def _batch_major(layer, result, step_mask):
    """`fused_inner_loop`'s answer from `FusedRecurrence`'s `result`."""
    h_seq, c_last = result[0], result[1]
    outputs = h_seq
    if step_mask is not None:
        # A padded step repeats the last output of a real step, or gives
        # 0 before the first real step (or always, with
        # `zero_output_for_mask`); the states just carry over.
        if layer.zero_output_for_mask:
            valid = step_mask
        else:
            valid = ops.cast(
                ops.cumsum(step_mask, axis=0) > 0, h_seq.dtype
            )
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
    return last_output, outputs, [h_seq[-1], c_last], distances
