"""Loops over time for the fused recurrence.

`scan` runs a step function over time-major inputs with
`keras.layers.RNN`'s own backend-agnostic loop (`backend.rnn`), forwards or
in reverse, or as a Python loop with `unroll`.
"""

from keras import ops
# `keras.layers.RNN`'s own backend-agnostic loop.
from keras.src.backend import rnn as backend_rnn


def scan(step, inputs, states, reverse=False, unroll=False):
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
    """`scan` over a time axis whose length is known only at run time.

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

