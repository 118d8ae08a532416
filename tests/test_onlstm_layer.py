"""The ONLSTM layer against a NumPy re-derivation of the paper's equations.

Runs on every Keras backend (`.ci/run` repeats it under KERAS_BACKEND=jax).
"""

import numpy as np
import pytest

import keras

import onlstm_reference as ref
from on_lstm_keras import ONLSTM
from on_lstm_keras import ONLSTMCell
from on_lstm_keras import cumax
from on_lstm_keras import reverse_cumax

pytestmark = pytest.mark.backend

UNITS, CHUNK, FEATURES = 12, 3, 5
LEVELS = UNITS // CHUNK


def random_weights(rng, features=FEATURES, units=UNITS, levels=LEVELS, scale=0.5):
    width = 4 * units + 2 * levels
    return [
        rng.normal(0, scale, (features, width)).astype("float32"),
        rng.normal(0, scale, (units, width)).astype("float32"),
        rng.normal(0, scale, (width,)).astype("float32"),
    ]


def built_layer(rng, **kwargs):
    layer = ONLSTM(UNITS, CHUNK, **kwargs)
    layer.build((None, None, FEATURES))
    layer.set_weights(random_weights(rng))
    return layer


def np_(x):
    return keras.ops.convert_to_numpy(x)


@pytest.fixture
def rng():
    keras.utils.set_random_seed(1234)
    return np.random.default_rng(0)


@pytest.mark.parametrize("master_input", ["cumax", "reverse_cumsum"])
def test_matches_numpy_reference(rng, master_input):
    layer = built_layer(
        rng,
        master_input=master_input,
        return_sequences=True,
        return_state=True,
        return_distances=True,
    )
    x = rng.normal(size=(4, 9, FEATURES)).astype("float32")
    out, dist, h, c = layer(x)
    r_out, r_dist, r_h, r_c = ref.run(
        x, *layer.get_weights(), CHUNK, master_input=master_input
    )
    np.testing.assert_allclose(np_(out), r_out, atol=1e-5)
    np.testing.assert_allclose(np_(dist), r_dist, atol=1e-5)
    np.testing.assert_allclose(np_(h), r_h, atol=1e-5)
    np.testing.assert_allclose(np_(c), r_c, atol=1e-5)


@pytest.mark.parametrize("master_input", ["cumax", "reverse_cumsum"])
def test_matches_numpy_reference_with_mask(rng, master_input):
    layer = built_layer(
        rng,
        master_input=master_input,
        return_sequences=True,
        return_state=True,
        return_distances=True,
    )
    x = rng.normal(size=(3, 7, FEATURES)).astype("float32")
    mask = np.array(
        [[1] * 7, [1] * 4 + [0] * 3, [1, 1, 0, 1, 1, 0, 1]], dtype=bool
    )
    out, dist, h, c = layer(x, mask=mask)
    r_out, r_dist, r_h, r_c = ref.run(
        x, *layer.get_weights(), CHUNK, master_input=master_input, mask=mask
    )
    np.testing.assert_allclose(np_(out), r_out, atol=1e-5)
    np.testing.assert_allclose(np_(dist), r_dist, atol=1e-5)
    np.testing.assert_allclose(np_(h), r_h, atol=1e-5)
    np.testing.assert_allclose(np_(c), r_c, atol=1e-5)
    assert np.all(np_(dist)[1, 4:] == 0.0)


def test_initial_state_and_last_output(rng):
    layer = built_layer(rng)
    x = rng.normal(size=(2, 6, FEATURES)).astype("float32")
    h0 = rng.normal(size=(2, UNITS)).astype("float32")
    c0 = rng.normal(size=(2, UNITS)).astype("float32")
    out = layer(x, initial_state=[h0, c0])
    r_out, _, _, _ = ref.run(x, *layer.get_weights(), CHUNK, h0=h0, c0=c0)
    assert out.shape == (2, UNITS)
    np.testing.assert_allclose(np_(out), r_out[:, -1], atol=1e-5)


def test_distances_without_return_sequences(rng):
    layer = built_layer(rng, return_distances=True)
    x = rng.normal(size=(2, 6, FEATURES)).astype("float32")
    out, dist = layer(x)
    r_out, r_dist, _, _ = ref.run(x, *layer.get_weights(), CHUNK)
    assert out.shape == (2, UNITS) and dist.shape == (2, 6, 2)
    np.testing.assert_allclose(np_(out), r_out[:, -1], atol=1e-5)
    np.testing.assert_allclose(np_(dist), r_dist, atol=1e-5)


def test_layer_equals_generic_rnn_over_the_cell(rng):
    """The fused fast path equals `keras.layers.RNN(ONLSTMCell)` step by step."""
    layer = built_layer(rng, return_sequences=True)
    rnn = keras.layers.RNN(ONLSTMCell(UNITS, CHUNK), return_sequences=True)
    rnn.build((None, None, FEATURES))
    rnn.set_weights(layer.get_weights())
    x = rng.normal(size=(3, 8, FEATURES)).astype("float32")
    np.testing.assert_allclose(np_(layer(x)), np_(rnn(x)), atol=1e-6)


@pytest.mark.parametrize(
    "master_input, d_forget, d_input, d_input_last",
    [
        # Paper: ĩ = 1 − cumax puts the input on levels < d_input.
        ("cumax", 1, 3, 2),  # overlap [1, 2]
        ("cumax", 3, 1, 0),  # gap at levels 1, 2
        ("cumax", 2, 2, 1),  # touching, no overlap, no gap
        ("cumax", 0, 0, -1),  # history everywhere, no input
        # Su: right-to-left cumsum puts the input on levels <= d_input.
        ("reverse_cumsum", 1, 3, 3),
        ("reverse_cumsum", 3, 1, 1),
        ("reverse_cumsum", 0, 0, 0),
    ],
)
def test_binary_master_gates_give_the_interval_update(
    rng, master_input, d_forget, d_input, d_input_last
):
    kernel, recurrent_kernel, bias = random_weights(rng)
    # Master-gate columns: no dependence on x or h, a huge one-hot bias, so
    # both softmaxes are exactly one-hot in float32.
    master = slice(4 * UNITS, None)
    kernel[:, master] = 0.0
    recurrent_kernel[:, master] = 0.0
    bias[master] = 0.0
    bias[4 * UNITS + d_forget] = 200.0
    bias[4 * UNITS + LEVELS + d_input] = 200.0
    layer = ONLSTM(
        UNITS, CHUNK, master_input=master_input, return_state=True,
        return_distances=True,
    )
    layer.build((None, None, FEATURES))
    layer.set_weights([kernel, recurrent_kernel, bias])

    x = rng.normal(size=(2, 1, FEATURES)).astype("float32")
    h0 = rng.normal(size=(2, UNITS)).astype("float32")
    c0 = rng.normal(size=(2, UNITS)).astype("float32")
    _, dist, _, c = layer(x, initial_state=[h0, c0])

    z = x[:, 0] @ kernel + h0 @ recurrent_kernel + bias
    i = ref.sigmoid(z[:, :UNITS])
    f = ref.sigmoid(z[:, UNITS : 2 * UNITS])
    c_hat = np.tanh(z[:, 2 * UNITS : 3 * UNITS])
    expected = ref.piecewise_update(
        c0, c_hat, f, i, d_forget, d_input_last, CHUNK
    )
    np.testing.assert_allclose(np_(c), expected, atol=1e-5)
    # d_f = 1 − mean(f̃): f̃ is 1 on levels >= d_forget.
    np.testing.assert_allclose(
        np_(dist)[:, 0, 0], d_forget / LEVELS, atol=1e-6
    )
    np.testing.assert_allclose(
        np_(dist)[:, 0, 1], (d_input_last + 1) / LEVELS, atol=1e-6
    )


def test_cumax_is_monotone_ends_at_one_and_distances_in_unit_interval(rng):
    x = rng.normal(0, 3, size=(50, 17)).astype("float32")
    y = np_(cumax(x))
    assert np.all(np.diff(y, axis=-1) >= -1e-7)
    np.testing.assert_allclose(y[:, -1], 1.0, atol=1e-6)
    assert np.all((y >= 0) & (y <= 1 + 1e-6))
    r = np_(reverse_cumax(x))
    assert np.all(np.diff(r, axis=-1) <= 1e-7)
    np.testing.assert_allclose(r[:, 0], 1.0, atol=1e-6)
    np.testing.assert_allclose(y, np.cumsum(ref.softmax(x), -1), atol=1e-6)

    layer = built_layer(rng, return_distances=True)
    _, dist = layer(rng.normal(0, 5, size=(8, 20, FEATURES)).astype("float32"))
    dist = np_(dist)
    assert np.all((dist >= -1e-6) & (dist <= 1 + 1e-6))


def test_right_padded_batch_equals_each_sequence_alone(rng):
    layer = built_layer(rng, return_sequences=True, return_distances=True)
    lengths = [6, 3, 1]
    seqs = [rng.normal(size=(n, FEATURES)).astype("float32") for n in lengths]
    batch = np.zeros((3, 6, FEATURES), "float32")
    for k, s in enumerate(seqs):
        batch[k, : len(s)] = s
    mask = np.arange(6)[None, :] < np.array(lengths)[:, None]
    out, dist = layer(batch, mask=mask)
    for k, s in enumerate(seqs):
        alone_out, alone_dist = layer(s[None])
        n = len(s)
        np.testing.assert_allclose(np_(out)[k, :n], np_(alone_out)[0], atol=1e-5)
        np.testing.assert_allclose(np_(dist)[k, :n], np_(alone_dist)[0], atol=1e-5)
        assert np.all(np_(dist)[k, n:] == 0.0)


def test_mask_from_embedding_mask_zero(rng):
    tokens = np.array([[3, 1, 4, 0, 0], [2, 7, 1, 8, 2]])
    inputs = keras.Input((None,), dtype="int32")
    emb = keras.layers.Embedding(10, FEATURES, mask_zero=True)
    out, dist = ONLSTM(UNITS, CHUNK, return_distances=True)(emb(inputs))
    model = keras.Model(inputs, [out, dist])
    got_out, got_dist = model(tokens)
    alone_out, alone_dist = model(tokens[:1, :3])
    np.testing.assert_allclose(np_(got_out)[0], np_(alone_out)[0], atol=1e-5)
    np.testing.assert_allclose(np_(got_dist)[0, :3], np_(alone_dist)[0], atol=1e-5)
    assert np.all(np_(got_dist)[0, 3:] == 0.0)


def test_stateful_halves_equal_whole(rng):
    x = rng.normal(size=(2, 8, FEATURES)).astype("float32")
    whole = built_layer(rng, return_sequences=True)
    stateful = ONLSTM(UNITS, CHUNK, return_sequences=True, stateful=True)
    stateful.build((2, None, FEATURES))
    stateful.set_weights(whole.get_weights())
    first = np_(stateful(x[:, :4]))
    second = np_(stateful(x[:, 4:]))
    np.testing.assert_allclose(
        np.concatenate([first, second], 1), np_(whole(x)), atol=1e-5
    )
    stateful.reset_state()
    np.testing.assert_allclose(np_(stateful(x[:, :4])), first, atol=1e-6)


def test_go_backwards_runs_the_reversed_sequence(rng):
    forward = built_layer(rng, return_sequences=True, return_distances=True)
    backward = ONLSTM(
        UNITS, CHUNK, go_backwards=True, return_sequences=True,
        return_distances=True,
    )
    backward.build((None, None, FEATURES))
    backward.set_weights(forward.get_weights())
    x = rng.normal(size=(2, 7, FEATURES)).astype("float32")
    b_out, b_dist = backward(x)
    f_out, f_dist = forward(x[:, ::-1])
    # Outputs in processing order (as keras.layers.LSTM), distances in the
    # input's time order.
    np.testing.assert_allclose(np_(b_out), np_(f_out), atol=1e-6)
    np.testing.assert_allclose(np_(b_dist), np_(f_dist)[:, ::-1], atol=1e-6)


def test_dropout_masks_are_applied_in_training_only(rng):
    layer = built_layer(
        rng, dropout=0.5, recurrent_dropout=0.5, return_sequences=True
    )
    x = rng.normal(size=(3, 5, FEATURES)).astype("float32")
    r_out, _, _, _ = ref.run(x, *layer.get_weights(), CHUNK)
    np.testing.assert_allclose(np_(layer(x, training=False)), r_out, atol=1e-5)
    assert not np.allclose(np_(layer(x, training=True)), r_out, atol=1e-3)


class _RecordingCell(ONLSTMCell):
    """Records every DropConnect mask handed out during a call."""

    handed_out = []

    def get_dropconnect_mask(self):
        mask = super().get_dropconnect_mask()
        if mask is not None:
            self.handed_out.append(np_(mask))
        return mask


@pytest.mark.parametrize("fused", [True, False])
def test_dropconnect_uses_one_mask_for_every_step(rng, fused):
    rate = 0.5
    if fused:
        layer = built_layer(
            rng, recurrent_dropconnect=rate, return_sequences=True
        )
        cell = layer.cell
        cell.__class__ = _RecordingCell
    else:
        cell = _RecordingCell(UNITS, CHUNK, recurrent_dropconnect=rate)
        layer = keras.layers.RNN(cell, return_sequences=True)
        layer.build((None, None, FEATURES))
        layer.set_weights(random_weights(rng))
    _RecordingCell.handed_out = []
    x = rng.normal(size=(3, 6, FEATURES)).astype("float32")
    out = np_(layer(x, training=True))
    masks = _RecordingCell.handed_out
    assert masks, "no DropConnect mask was drawn in training"
    for m in masks[1:]:
        np.testing.assert_array_equal(m, masks[0])
    mask = masks[0]
    assert set(np.unique(mask)) <= {0.0, 1.0 / (1.0 - rate)}
    assert 0.3 < np.mean(mask == 0) < 0.7
    kernel, recurrent_kernel, bias = layer.get_weights()
    r_out, _, _, _ = ref.run(x, kernel, recurrent_kernel * mask, bias, CHUNK)
    np.testing.assert_allclose(out, r_out, atol=1e-5)

    # Inference: no mask at all, the stored weights unchanged.
    _RecordingCell.handed_out = []
    r_plain, _, _, _ = ref.run(x, kernel, recurrent_kernel, bias, CHUNK)
    np.testing.assert_allclose(np_(layer(x, training=False)), r_plain, atol=1e-5)
    # A second training call draws a fresh mask.
    layer(x, training=True)
    assert not np.array_equal(_RecordingCell.handed_out[0], mask)


def test_dropconnect_training_gives_finite_gradients(rng):
    model = keras.Sequential(
        [
            keras.Input((6, FEATURES)),
            ONLSTM(UNITS, CHUNK, recurrent_dropconnect=0.45, dropout=0.2),
            keras.layers.Dense(1),
        ]
    )
    model.compile(keras.optimizers.SGD(0.1), "mse")
    before = [w.copy() for w in model.get_weights()]
    x = rng.normal(size=(8, 6, FEATURES)).astype("float32")
    loss = model.train_on_batch(x, np.ones((8, 1), "float32"))
    assert np.isfinite(loss)
    after = model.get_weights()
    assert all(np.all(np.isfinite(w)) for w in after)
    assert not np.allclose(before[1], after[1])  # the recurrent kernel moved


def test_save_and_load_keras_file(rng, tmp_path):
    inputs = keras.Input((None, FEATURES))
    out, dist = ONLSTM(
        UNITS, CHUNK, return_sequences=True, return_distances=True,
        master_input="reverse_cumsum", recurrent_dropconnect=0.2,
    )(inputs)
    model = keras.Model(inputs, [keras.layers.Dense(2)(out), dist])
    x = rng.normal(size=(2, 5, FEATURES)).astype("float32")
    expected = [np_(t) for t in model(x)]
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    for got, want in zip(loaded(x), expected):
        np.testing.assert_array_equal(np_(got), want)


def test_get_config_round_trip(rng):
    layer = ONLSTM(
        24, 6, dropout=0.1, recurrent_dropout=0.2, recurrent_dropconnect=0.3,
        master_input="reverse_cumsum", return_distances=True,
        return_sequences=True, go_backwards=True, unit_forget_bias=False,
        kernel_regularizer="l2", seed=7, name="on",
    )
    config = layer.get_config()
    clone = ONLSTM.from_config(config)
    assert clone.get_config() == config
    assert (clone.units, clone.chunk_size, clone.levels) == (24, 6, 4)
    assert clone.recurrent_dropconnect == 0.3
    assert clone.master_input == "reverse_cumsum"
    layer.build((None, None, 3))
    clone.build((None, None, 3))
    clone.set_weights(layer.get_weights())
    x = rng.normal(size=(2, 4, 3)).astype("float32")
    for a, b in zip(layer(x), clone(x)):
        np.testing.assert_array_equal(np_(a), np_(b))
    cell = ONLSTMCell.from_config(layer.cell.get_config())
    assert cell.get_config() == layer.cell.get_config()


def test_weight_shapes_and_forget_bias():
    layer = ONLSTM(20, 5)
    layer.build((None, None, 3))
    kernel, recurrent_kernel, bias = layer.get_weights()
    assert kernel.shape == (3, 4 * 20 + 2 * 4)
    assert recurrent_kernel.shape == (20, 4 * 20 + 2 * 4)
    expected_bias = np.zeros(88)
    expected_bias[20:40] = 1.0
    np.testing.assert_array_equal(bias, expected_bias)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(units=0, chunk_size=1), "units=0"),
        (dict(units=-4, chunk_size=2), "units=-4"),
        (dict(units=8, chunk_size=0), "chunk_size=0"),
        (dict(units=10, chunk_size=4), "chunk_size=4"),
        (dict(units=8, chunk_size=2, dropout=1.0), "dropout=1.0"),
        (dict(units=8, chunk_size=2, recurrent_dropout=-0.1), "recurrent_dropout=-0.1"),
        (dict(units=8, chunk_size=2, recurrent_dropconnect=1.5), "recurrent_dropconnect=1.5"),
        (dict(units=8, chunk_size=2, master_input="cumsum"), "master_input='cumsum'"),
    ],
)
def test_bad_arguments_raise_value_errors(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(")):
        ONLSTM(**kwargs)


def test_bad_input_rank_raises():
    with pytest.raises(ValueError, match=r"inputs.*shape=\(2, 5\)"):
        ONLSTM(8, 2)(np.zeros((2, 5), "float32"))


def test_stacked_layers_in_sequential_match_the_chained_reference(rng):
    # Bidirectional (both halves) is checked against the reference in
    # test_onlstm_step_path.py.
    model = keras.Sequential()
    model.add(keras.Input((7, FEATURES)))
    model.add(ONLSTM(16, 4, return_sequences=True))
    model.add(ONLSTM(8, 2))
    model.set_weights(
        [rng.normal(0, 0.5, w.shape).astype("float32")
         for w in model.get_weights()]
    )
    x = rng.normal(size=(3, 7, FEATURES)).astype("float32")
    first, second = model.layers
    hidden, _, _, _ = ref.run(x, *first.get_weights(), 4)
    _, _, want, _ = ref.run(hidden, *second.get_weights(), 2)
    got = np_(model(x))
    assert got.shape == (3, 8)
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_fit_lowers_the_loss_on_a_toy_task(rng):
    # Predict the running sign of the sum of a random +-1 sequence: needs memory.
    x = rng.choice([-1.0, 1.0], size=(256, 10, 1)).astype("float32")
    y = (x.sum(axis=(1, 2)) > 0).astype("float32")
    model = keras.Sequential(
        [keras.Input((10, 1)), ONLSTM(16, 4), keras.layers.Dense(1, "sigmoid")]
    )
    model.compile(keras.optimizers.Adam(0.02), "binary_crossentropy")
    history = model.fit(x, y, epochs=12, batch_size=32, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < 0.6 * losses[0], losses


def test_jit_compiled_dropconnect_draws_a_fresh_mask_per_step(rng):
    """Under `jit_compile`, DropConnect's mask is drawn inside every
    compiled training step (not frozen when the step is traced), and a
    compiled inference uses the stored weights unmasked.

    The losses of jit-compiled training without DropConnect are checked
    against the reference in test_onlstm_step_path.py.
    """
    model = keras.Sequential([
        keras.Input((6, FEATURES)),
        ONLSTM(UNITS, CHUNK, recurrent_dropconnect=0.3, seed=5),
        keras.layers.Dense(1),
    ])
    # A learning rate of 0: the weights stay put, so only the mask changes.
    model.compile(keras.optimizers.SGD(0.0), "mse", jit_compile=True)
    assert model.jit_compile
    model.set_weights(
        [rng.normal(0, 0.5, w.shape).astype("float32")
         for w in model.get_weights()]
    )
    x = rng.normal(size=(16, 6, FEATURES)).astype("float32")
    y = rng.normal(size=(16, 1)).astype("float32")
    kernel, recurrent_kernel, bias, dense_w, dense_b = (
        w.astype(np.float64) for w in model.get_weights()
    )
    _, _, h, _ = ref.run(x, kernel, recurrent_kernel, bias, CHUNK)
    np.testing.assert_allclose(
        model.predict(x, verbose=0), h @ dense_w + dense_b, atol=1e-5
    )
    unmasked = np.mean((h @ dense_w + dense_b - y) ** 2)
    losses = [float(np.ravel(model.train_on_batch(x, y))[0])
              for _ in range(3)]
    assert all(np.isfinite(losses))
    # Masked: none is the unmasked loss; fresh masks: no two are equal.
    assert all(abs(loss - unmasked) > 1e-4 for loss in losses), losses
    assert len({round(loss, 6) for loss in losses}) == 3, losses
    # The weights did not move, and inference is still unmasked.
    np.testing.assert_allclose(
        model.predict(x, verbose=0), h @ dense_w + dense_b, atol=1e-5
    )


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision(rng, policy):
    x = rng.normal(size=(2, 6, FEATURES)).astype("float32")
    reference = built_layer(rng, return_sequences=True, return_distances=True)
    want_out, want_dist = (np_(t) for t in reference(x))
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(policy)
    try:
        layer = ONLSTM(UNITS, CHUNK, return_sequences=True, return_distances=True)
        layer.build((None, None, FEATURES))
        layer.set_weights(reference.get_weights())
        out, dist = layer(x)
        assert layer.cell.kernel.dtype == "float32"
        assert keras.backend.standardize_dtype(out.dtype) == policy.split("_")[1]
        assert keras.backend.standardize_dtype(dist.dtype) == policy.split("_")[1]
        tol = 2e-2 if policy == "mixed_float16" else 6e-2
        np.testing.assert_allclose(np_(out).astype("float32"), want_out, atol=tol)
        np.testing.assert_allclose(np_(dist).astype("float32"), want_dist, atol=tol)
        model = keras.Sequential([keras.Input((6, FEATURES)),
                                  ONLSTM(UNITS, CHUNK), keras.layers.Dense(1)])
        model.compile("adam", "mse")
        history = model.fit(x, np.ones((2, 1)), epochs=1, verbose=0)
        assert np.isfinite(history.history["loss"][0])
    finally:
        keras.config.set_dtype_policy(previous)


def test_unroll_equals_loop(rng):
    looped = built_layer(rng, return_sequences=True, return_distances=True)
    unrolled = ONLSTM(UNITS, CHUNK, unroll=True, return_sequences=True,
                      return_distances=True)
    unrolled.build((None, 5, FEATURES))
    unrolled.set_weights(looped.get_weights())
    x = rng.normal(size=(2, 5, FEATURES)).astype("float32")
    for a, b in zip(looped(x), unrolled(x)):
        np.testing.assert_allclose(np_(a), np_(b), atol=1e-6)


def test_effective_recurrent_kernel_is_masked_in_training_only(rng):
    cell = ONLSTMCell(UNITS, CHUNK, recurrent_dropconnect=0.5, seed=3)
    cell.build((None, FEATURES))
    stored = np_(cell.recurrent_kernel)
    # Inference is the default: the stored weights, unmasked.
    np.testing.assert_array_equal(np_(cell.effective_recurrent_kernel()), stored)
    np.testing.assert_array_equal(
        np_(cell.effective_recurrent_kernel(training=False)), stored
    )
    masked = np_(cell.effective_recurrent_kernel(training=True))
    nonzero = stored != 0
    scale = np.round(masked[nonzero] / stored[nonzero], 5)
    assert set(np.unique(scale)) == {0.0, 2.0}  # dropped, or kept / (1 - rate)


@pytest.mark.parametrize("return_sequences", [False, True])
@pytest.mark.parametrize("return_state", [False, True])
@pytest.mark.parametrize("return_distances", [False, True])
def test_symbolic_outputs_have_the_shapes_of_the_eager_outputs(
    rng, return_sequences, return_state, return_distances
):
    options = dict(return_sequences=return_sequences,
                   return_state=return_state,
                   return_distances=return_distances)
    symbolic = ONLSTM(UNITS, CHUNK, **options)(
        keras.Input((7, FEATURES), batch_size=3)
    )
    eager = ONLSTM(UNITS, CHUNK, **options)(
        rng.normal(size=(3, 7, FEATURES)).astype("float32")
    )
    symbolic = symbolic if isinstance(symbolic, (list, tuple)) else [symbolic]
    eager = eager if isinstance(eager, (list, tuple)) else [eager]
    count = 1 + return_distances + 2 * return_state
    assert len(symbolic) == len(eager) == count
    for s, e in zip(symbolic, eager):
        assert tuple(s.shape) == tuple(e.shape)
    assert tuple(eager[0].shape) == (
        (3, 7, UNITS) if return_sequences else (3, UNITS)
    )


def test_no_dropconnect_mask_without_dropconnect():
    cell = ONLSTMCell(UNITS, CHUNK, recurrent_dropout=0.5)
    cell.build((None, FEATURES))
    assert cell.get_dropconnect_mask() is None
    cell.get_recurrent_dropout_mask(np.zeros((2, UNITS), "float32"))
    assert cell.get_dropconnect_mask() is None


def test_recurrent_step_is_an_inference_step_by_default(rng):
    """Without `training`, `recurrent_step` applies no recurrent dropout:
    it is the reference's step."""
    cell = ONLSTMCell(UNITS, CHUNK, recurrent_dropout=0.5, seed=1)
    cell.build((None, FEATURES))
    kernel, recurrent_kernel, bias = random_weights(rng)
    cell.set_weights([kernel, recurrent_kernel, bias])
    x = rng.normal(size=(3, FEATURES)).astype("float32")
    h0 = rng.normal(size=(3, UNITS)).astype("float32")
    c0 = rng.normal(size=(3, UNITS)).astype("float32")
    z_x = cell.input_projection(x)
    h, (_, c), distances = cell.recurrent_step(
        z_x, [h0, c0], cell.recurrent_kernel
    )
    want_h, want_c, want_d = ref.step(
        x.astype(np.float64), h0, c0, kernel, recurrent_kernel, bias, CHUNK,
        "cumax",
    )
    np.testing.assert_allclose(np_(h), want_h, atol=1e-5)
    np.testing.assert_allclose(np_(c), want_c, atol=1e-5)
    np.testing.assert_allclose(np_(distances), want_d, atol=1e-5)
