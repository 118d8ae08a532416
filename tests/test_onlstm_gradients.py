"""Gradients of ONLSTM's fused recurrence against autodiff of the cell.

`ONLSTM` runs its recurrence through a hand-written backward pass
(`keras.ops.custom_gradient`). These tests differentiate a loss that uses
every output (sequence, distances, last `h` and `c`) with respect to the
kernel, recurrent kernel, bias, inputs and initial states, and compare with
autodiff through the per-step cell: `keras.layers.RNN(ONLSTMCell)` (for the
outputs and states) and `ONLSTM` with `use_fused_recurrence = False` (which
also gives the distances), with the same weights and the same dropout masks.

The gradient code is backend-specific (`tf.GradientTape`, `jax.grad` over a
stateless call). TensorFlow runs the cases eagerly and one under XLA; JAX
runs them under `jax.jit` and one eagerly.
"""

import numpy as np
import pytest

import keras
from keras import ops

from on_lstm_keras import ONLSTM
from on_lstm_keras import ONLSTMCell

pytestmark = pytest.mark.backend

BATCH, TIME, FEATURES, UNITS, CHUNK = 3, 6, 5, 12, 3
LEVELS = UNITS // CHUNK
WIDTH = 4 * UNITS + 2 * LEVELS

# First and last steps real, so that no sequence starts with padding in
# either direction (the backends' generic loops disagree there, see
# `test_leading_padding_outputs_zero_like_the_reference`).
HOLES = np.array(
    [[1, 1, 1, 1, 1, 1], [1, 1, 0, 1, 0, 1], [1, 0, 0, 1, 1, 1]], dtype=bool
)
RIGHT_PADDED = np.array(
    [[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0], [1, 0, 0, 0, 0, 0]], dtype=bool
)


class FixedMaskCell(ONLSTMCell):
    """An `ONLSTMCell` whose dropout and DropConnect masks are given."""

    fixed_masks = {}

    def get_dropout_mask(self, step_input):
        return ops.convert_to_tensor(self.fixed_masks["dropout"])

    def get_recurrent_dropout_mask(self, step_input):
        return ops.convert_to_tensor(self.fixed_masks["recurrent_dropout"])

    def get_dropconnect_mask(self):
        return ops.convert_to_tensor(self.fixed_masks["dropconnect"])


def draw_masks(rng, rate=0.4):
    def keep(shape):
        return (rng.random(shape) >= rate).astype("float32") / (1 - rate)

    return {
        "dropout": keep((BATCH, FEATURES)),
        "recurrent_dropout": keep((BATCH, UNITS)),
        "dropconnect": keep((UNITS, WIDTH)),
    }


def make_layers(rng, options, masks):
    """The fused layer and the two per-step references, same weights."""
    cell_options = {
        k: options[k]
        for k in ("dropout", "recurrent_dropout", "recurrent_dropconnect",
                  "master_input")
        if k in options
    }
    layer_options = dict(
        cell_options,
        go_backwards=options.get("go_backwards", False),
        unroll=options.get("unroll", False),
        zero_output_for_mask=options.get("zero_output_for_mask", False),
        return_sequences=options.get("return_sequences", True),
        return_state=True,
    )
    weights = [
        rng.normal(0, 0.5, (FEATURES, WIDTH)).astype("float32"),
        rng.normal(0, 0.5, (UNITS, WIDTH)).astype("float32"),
        rng.normal(0, 0.5, (WIDTH,)).astype("float32"),
    ]
    fused = ONLSTM(UNITS, CHUNK, return_distances=True, **layer_options)
    stepwise = ONLSTM(UNITS, CHUNK, return_distances=True, **layer_options)
    stepwise.use_fused_recurrence = False
    generic = keras.layers.RNN(
        FixedMaskCell(UNITS, CHUNK, **cell_options),
        **{k: v for k, v in layer_options.items() if k not in cell_options},
    )
    for layer in (fused, stepwise, generic):
        layer.build((None, TIME, FEATURES))
        layer.set_weights(weights)
        layer.cell.__class__ = FixedMaskCell
        layer.cell.fixed_masks = masks
    assert fused.use_fused_recurrence and not stepwise.use_fused_recurrence
    return fused, stepwise, generic


def loss_weights(rng, return_sequences):
    out_shape = (BATCH, TIME, UNITS) if return_sequences else (BATCH, UNITS)
    return {
        "out": rng.normal(size=out_shape).astype("float32"),
        "dist": rng.normal(size=(BATCH, TIME, 2)).astype("float32"),
        "h": rng.normal(size=(BATCH, UNITS)).astype("float32"),
        "c": rng.normal(size=(BATCH, UNITS)).astype("float32"),
    }


def weighted_loss(outputs, w, with_distances):
    if len(outputs) == 4:
        out, dist, h, c = outputs
    else:
        out, h, c = outputs
    loss = (
        ops.sum(out * w["out"]) + ops.sum(h * w["h"]) + ops.sum(c * w["c"])
    )
    if with_distances:
        loss = loss + ops.sum(dist * w["dist"])
    return loss


def gradients(layer, x, h0, c0, mask, training, w, with_distances, compiled):
    """d loss / d (kernel, recurrent_kernel, bias, x, h0, c0), as NumPy."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        def grad_fn(x, h0, c0):
            with tf.GradientTape() as tape:
                tape.watch([x, h0, c0])
                outputs = layer(
                    x, initial_state=[h0, c0], mask=mask, training=training
                )
                loss = weighted_loss(outputs, w, with_distances)
            variables = list(layer.trainable_variables)
            return loss, tape.gradient(loss, variables + [x, h0, c0])

        if compiled:
            grad_fn = tf.function(grad_fn, jit_compile=True)
        loss, grads = grad_fn(*(tf.constant(a) for a in (x, h0, c0)))
    elif backend == "jax":
        import jax

        trainable = [v.value for v in layer.trainable_variables]
        non_trainable = [v.value for v in layer.non_trainable_variables]

        def loss_fn(trainable, x, h0, c0):
            outputs, _ = layer.stateless_call(
                trainable, non_trainable, x, initial_state=[h0, c0],
                mask=mask, training=training,
            )
            return weighted_loss(outputs, w, with_distances)

        grad_fn = jax.value_and_grad(loss_fn, argnums=(0, 1, 2, 3))
        args = (trainable, x, h0, c0)
        if compiled:
            # Unoptimised machine code: these problems are tiny, and XLA's
            # CPU compile time would dominate the test.
            grad_fn = jax.jit(grad_fn).lower(*args).compile(
                compiler_options={"xla_backend_optimization_level": 0}
            )
        loss, (g_weights, g_x, g_h0, g_c0) = grad_fn(*args)
        grads = list(g_weights) + [g_x, g_h0, g_c0]
    else:
        pytest.skip(f"no gradient code for backend {backend}")
    return float(loss), [ops.convert_to_numpy(g) for g in grads]


NAMES = ["kernel", "recurrent_kernel", "bias", "x", "h0", "c0"]

CASES = {
    "plain": {},
    "last_output_only": dict(return_sequences=False),
    "reverse_cumsum": dict(master_input="reverse_cumsum"),
    "mask_holes": dict(mask=HOLES),
    "mask_right_padded": dict(mask=RIGHT_PADDED),
    "mask_zero_output": dict(mask=RIGHT_PADDED, zero_output_for_mask=True),
    "go_backwards": dict(go_backwards=True),
    "go_backwards_mask": dict(go_backwards=True, mask=HOLES),
    "dropout_training": dict(
        dropout=0.3, recurrent_dropout=0.4, recurrent_dropconnect=0.4,
        training=True,
    ),
    "dropout_mask_training": dict(
        recurrent_dropout=0.4, recurrent_dropconnect=0.4, mask=HOLES,
        master_input="reverse_cumsum", training=True,
    ),
    # The unrolled loops (forward and the reverse gradient loop); names
    # sort last, so the cases above keep their seeds.
    "unroll": dict(unroll=True),
    "unroll_go_backwards_mask": dict(unroll=True, go_backwards=True, mask=HOLES),
}


def check_case(case, compiled, against_generic):
    options = CASES[case]
    rng = np.random.default_rng(sorted(CASES).index(case))
    masks = draw_masks(rng)
    fused, stepwise, generic = make_layers(rng, options, masks)
    x = rng.normal(size=(BATCH, TIME, FEATURES)).astype("float32")
    h0 = rng.normal(0, 0.5, (BATCH, UNITS)).astype("float32")
    c0 = rng.normal(0, 0.5, (BATCH, UNITS)).astype("float32")
    mask = options.get("mask")
    training = options.get("training", False)
    w = loss_weights(rng, options.get("return_sequences", True))
    # `generic` has no distances: the loss then leaves them out.
    reference, with_distances = (
        (generic, False) if against_generic else (stepwise, True)
    )

    def run(layer):
        return gradients(
            layer, x, h0, c0, mask, training, w, with_distances, compiled
        )

    loss, grads = run(fused)
    want_loss, want = run(reference)
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5, atol=1e-4)
    for name, got, expected in zip(NAMES, grads, want):
        assert np.all(np.isfinite(got)), name
        assert np.abs(expected).max() > 0, name  # the check bites
        np.testing.assert_allclose(
            got, expected, rtol=1e-4, atol=2e-5,
            err_msg=f"d loss / d {name} ({case}, vs {reference.name})",
        )


# TensorFlow runs eagerly by default, JAX under `jax.jit` (its eager mode is
# slow); a few cases run in the other mode too.
DEFAULT_COMPILED = keras.backend.backend() == "jax"


@pytest.mark.parametrize("case", list(CASES))
def test_fused_gradients_with_distances_equal_the_stepwise_layer(case):
    check_case(case, DEFAULT_COMPILED, against_generic=False)


@pytest.mark.parametrize(
    "case", ["plain", "go_backwards_mask", "dropout_mask_training"]
)
def test_fused_gradients_equal_keras_rnn_over_the_cell(case):
    check_case(case, DEFAULT_COMPILED, against_generic=True)


@pytest.mark.parametrize("case", ["dropout_mask_training"])
def test_fused_gradients_in_the_other_execution_mode(case):
    check_case(case, not DEFAULT_COMPILED, against_generic=False)


@pytest.mark.parametrize(
    "case", ["plain", "mask_holes", "go_backwards_mask", "dropout_mask_training"]
)
def test_fused_gradients_with_the_reverse_loop_in_segments(case, monkeypatch):
    # Sequences of `TIME` steps are short enough for one segment; with
    # segments of one step or more the 6 steps run as 4 segments of 2, 1,
    # 1 and 2 steps (uneven on purpose).
    from on_lstm_keras.layers import fused as onlstm_fused
    from on_lstm_keras.layers.fused import backward as onlstm_backward

    monkeypatch.setattr(onlstm_backward, "_MIN_SEGMENT_STEPS", 1)
    lengths = [s.stop - s.start for s in onlstm_fused.backward_segments(TIME)]
    assert lengths == [2, 1, 1, 2]
    check_case(case, DEFAULT_COMPILED, against_generic=False)


@pytest.mark.parametrize("n_steps", [1, 7, 15, 16, 17, 31, 32, 70, 1000])
def test_backward_segments_cover_the_steps_in_order(n_steps):
    from on_lstm_keras.layers import fused as onlstm_fused

    segments = onlstm_fused.backward_segments(n_steps)
    covered = [t for s in segments for t in range(n_steps)[s]]
    assert covered == list(range(n_steps))
    lengths = [len(range(n_steps)[s]) for s in segments]
    assert len(segments) == max(1, min(4, n_steps // 8))
    assert min(lengths) >= min(n_steps, 8)
    assert max(lengths) - min(lengths) <= 1


def test_backward_segments_of_an_unknown_length():
    from on_lstm_keras.layers import fused as onlstm_fused

    assert onlstm_fused.backward_segments(None) == [slice(None)]


def test_fused_path_conditions():
    cell = ONLSTMCell(UNITS, CHUNK)
    from on_lstm_keras.layers import fused as onlstm_fused

    if keras.backend.backend() in ("tensorflow", "jax"):
        assert onlstm_fused.fused_path_unsupported(cell) is None
    else:
        # Other backends always step through the cell and say why.
        assert "backend" in onlstm_fused.fused_path_unsupported(cell)
        return
    other = ONLSTMCell(UNITS, CHUNK, activation="relu")
    assert "activation" in onlstm_fused.fused_path_unsupported(other)
    other = ONLSTMCell(UNITS, CHUNK, recurrent_activation="hard_sigmoid")
    assert "recurrent_activation" in onlstm_fused.fused_path_unsupported(other)


def test_other_activations_fall_back_to_the_cell():
    rng = np.random.default_rng(5)
    layer = ONLSTM(
        UNITS, CHUNK, activation="relu", recurrent_activation="hard_sigmoid",
        return_sequences=True,
    )
    generic = keras.layers.RNN(
        ONLSTMCell(UNITS, CHUNK, activation="relu",
                   recurrent_activation="hard_sigmoid"),
        return_sequences=True,
    )
    x = rng.normal(size=(BATCH, TIME, FEATURES)).astype("float32")
    layer.build(x.shape)
    generic.build(x.shape)
    generic.set_weights(layer.get_weights())
    np.testing.assert_allclose(
        ops.convert_to_numpy(layer(x)), ops.convert_to_numpy(generic(x)),
        atol=1e-6,
    )


def test_leading_padding_outputs_zero_like_the_reference():
    """Before a sequence's first real step the output is 0 (not `h0`)."""
    import onlstm_reference as ref

    rng = np.random.default_rng(7)
    layer = ONLSTM(UNITS, CHUNK, return_sequences=True, return_state=True,
                   return_distances=True)
    layer.build((None, TIME, FEATURES))
    x = rng.normal(size=(BATCH, TIME, FEATURES)).astype("float32")
    h0 = rng.normal(size=(BATCH, UNITS)).astype("float32")
    c0 = rng.normal(size=(BATCH, UNITS)).astype("float32")
    mask = RIGHT_PADDED[:, ::-1]  # left padding
    out, dist, h, c = layer(x, initial_state=[h0, c0], mask=mask)
    r_out, r_dist, r_h, r_c = ref.run(
        x, *layer.get_weights(), CHUNK, mask=mask, h0=h0, c0=c0
    )
    for got, want in ((out, r_out), (dist, r_dist), (h, r_h), (c, r_c)):
        np.testing.assert_allclose(ops.convert_to_numpy(got), want, atol=1e-5)


def test_stateful_layer_gradients_use_the_states_from_before_the_call():
    """A stateful layer updates its state variables after the call; the
    recurrent-kernel gradient must still use the old states (eager TF)."""
    if keras.backend.backend() != "tensorflow":
        pytest.skip("only TensorFlow tensors can alias a variable's buffer")
    import tensorflow as tf

    rng = np.random.default_rng(11)
    x = tf.constant(rng.normal(size=(BATCH, TIME, FEATURES)).astype("float32"))
    h0 = rng.normal(0, 0.5, (BATCH, UNITS)).astype("float32")
    c0 = rng.normal(0, 0.5, (BATCH, UNITS)).astype("float32")
    stateful = ONLSTM(UNITS, CHUNK, stateful=True, return_sequences=True)
    stateful.build((BATCH, TIME, FEATURES))
    explicit = ONLSTM(UNITS, CHUNK, return_sequences=True)
    explicit.build((BATCH, TIME, FEATURES))
    explicit.set_weights(stateful.get_weights())
    for variable, value in zip(stateful.states, (h0, c0)):
        variable.assign(value)

    def grads(layer, **kwargs):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.sin(3.0 * layer(x, **kwargs)))
        return [g.numpy() for g in tape.gradient(loss, layer.trainable_variables)]

    got = grads(stateful)
    want = grads(explicit, initial_state=[tf.constant(h0), tf.constant(c0)])
    assert not np.allclose(stateful.states[0].numpy(), h0)  # it did update
    for name, a, b in zip(NAMES, got, want):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6, err_msg=name)
