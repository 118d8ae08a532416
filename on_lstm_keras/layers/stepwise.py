"""The ON-LSTM recurrence stepping through `ONLSTMCell`, with autodiff.

The generic path of `ONLSTM`: every backend and activation, on
`keras.layers.RNN`'s own backend-agnostic loop.
"""

from keras import ops
# The backend-agnostic recurrence that `keras.layers.RNN` itself runs on.
from keras.src.backend import rnn as backend_rnn


def stepwise_inner_loop(layer, sequences, initial_state, mask, training):
    """The recurrence of an `ONLSTM` layer, one `ONLSTMCell` step a step.

    Args and returns as `fused_inner_loop`: `(last_output, outputs,
    [h, c], distances)`, the distances `None` unless
    `layer.return_distances`.
    """
    cell = layer.cell
    # The input transformation of every step at once, outside the loop.
    z_x = cell.input_projection(sequences, training=training)
    recurrent_kernel = cell.effective_recurrent_kernel(training)
    units = cell.units

    if layer.return_distances:
        # The distances ride along with `h` in the first state, so that a
        # masked step carries them over exactly as it carries `h` over
        # (every backend treats the first state as the previous output).
        def step(z_t, states):
            h_and_distances, c_tm1 = states
            h, (_, c), distances = cell.recurrent_step(
                z_t,
                [h_and_distances[:, :units], c_tm1],
                recurrent_kernel,
                training=training,
            )
            out = ops.concatenate([h, ops.cast(distances, h.dtype)], -1)
            return out, [out, c]

        h0, c0 = initial_state
        no_distances = ops.zeros((ops.shape(h0)[0], 2), dtype=h0.dtype)
        initial_state = [ops.concatenate([h0, no_distances], -1), c0]
    else:

        def step(z_t, states):
            h, new_states, _ = cell.recurrent_step(
                z_t, states, recurrent_kernel, training=training
            )
            return h, new_states

    last_output, outputs, states = backend_rnn(
        step,
        z_x,
        list(initial_state),
        go_backwards=layer.go_backwards,
        mask=mask,
        unroll=layer.unroll,
        input_length=sequences.shape[1],
        zero_output_for_mask=layer.zero_output_for_mask,
        return_all_outputs=layer.return_sequences or layer.return_distances,
    )
    if not layer.return_distances:
        return last_output, outputs, states, None
    distances = outputs[..., units:]
    if layer.go_backwards:  # to the input's time order
        distances = ops.flip(distances, axis=1)
    if mask is not None:
        step_mask = ops.cast(mask, distances.dtype)
        distances = distances * ops.expand_dims(step_mask, -1)
    states = [states[0][..., :units], states[1]]
    return last_output[..., :units], outputs[..., :units], states, distances
