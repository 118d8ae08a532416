"""ONLSTM as a drop-in `keras.layers.LSTM`, with several levels.

Whatever `keras.layers.LSTM` survives (a new sequence length on every call,
in eager mode, traced, XLA-compiled and in `fit`/`predict`; `Bidirectional`;
integer inputs; `use_cudnn`; loading a saved model after `import
on_lstm_keras`; a batch of size 0), ONLSTM survives, with numbers checked
against the NumPy reference `onlstm_reference.py`. `test_keras_conformance.py`
runs Keras' own LSTM tests against the one-level case.
"""

import inspect
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import keras

import onlstm_reference as ref
from on_lstm_keras import ONLSTM

pytestmark = pytest.mark.backend

UNITS, CHUNK, FEATURES = 6, 2, 3
WIDTH = 4 * UNITS + 2 * (UNITS // CHUNK)
REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]


def np_(x):
    return keras.ops.convert_to_numpy(x)


def random_weights(rng, scale=0.5):
    return [
        rng.normal(0, scale, (FEATURES, WIDTH)).astype("float32"),
        rng.normal(0, scale, (UNITS, WIDTH)).astype("float32"),
        rng.normal(0, scale, (WIDTH,)).astype("float32"),
    ]


@pytest.fixture
def rng():
    keras.utils.set_random_seed(7)
    return np.random.default_rng(7)


def sequences(rng, batch, time):
    return rng.normal(size=(batch, time, FEATURES)).astype("float32")


# -- 1. any sequence length on every call --------------------------------


def test_eager_calls_with_two_lengths(rng):
    layer = ONLSTM(UNITS, CHUNK, return_sequences=True, return_distances=True)
    layer.build((None, None, FEATURES))
    layer.set_weights(random_weights(rng))
    for time in (5, 3):
        x = sequences(rng, 2, time)
        out, dist = layer(x)
        want_out, want_dist, _, _ = ref.run(x, *layer.get_weights(), CHUNK)
        np.testing.assert_allclose(np_(out), want_out, atol=1e-5)
        np.testing.assert_allclose(np_(dist), want_dist, atol=1e-5)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_predict_twice_with_two_lengths(rng, jit_compile):
    model = keras.Sequential([
        keras.Input((None, FEATURES)),
        ONLSTM(UNITS, CHUNK, return_sequences=True),
    ])
    model.layers[0].set_weights(random_weights(rng))
    model.compile(jit_compile=jit_compile)
    for time in (5, 3):
        x = sequences(rng, 3, time)
        want, _, _, _ = ref.run(x, *model.get_weights(), CHUNK)
        got = model.predict(x, batch_size=2, verbose=0)
        np.testing.assert_allclose(got, want, atol=1e-5)


class VariableLengthBatches(keras.utils.PyDataset):
    """Batches of 2 sequences, each batch with its own length."""

    def __init__(self, batches):
        super().__init__()
        self.batches = batches

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, index):
        return self.batches[index]


def test_fit_and_evaluate_over_batches_of_different_lengths(rng):
    model = keras.Sequential([
        keras.Input((None, FEATURES)),
        ONLSTM(UNITS, CHUNK, go_backwards=True),
    ])
    model.layers[0].set_weights(random_weights(rng))
    batches = [
        (sequences(rng, 2, time), rng.normal(size=(2, UNITS)).astype("float32"))
        for time in (5, 3, 4)
    ]
    data = VariableLengthBatches(batches)
    model.compile(keras.optimizers.SGD(0.0), "mse")
    # The reference runs the reversed sequences (go_backwards).
    want = np.mean([
        np.mean((ref.run(x[:, ::-1], *model.get_weights(), CHUNK)[0][:, -1]
                 - y) ** 2)
        for x, y in batches
    ])
    np.testing.assert_allclose(model.evaluate(data, verbose=0), want, rtol=1e-4)
    model.compile(keras.optimizers.Adam(0.05), "mse")
    before = model.get_weights()
    history = model.fit(data, epochs=1, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    assert not np.allclose(model.get_weights()[1], before[1])


@pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="tf.function with an unknown time axis is TensorFlow's (JAX "
    "always traces with the concrete length; predict above covers jit)",
)
@pytest.mark.parametrize("go_backwards", [False, True])
def test_tf_function_with_unknown_length_values_and_gradients(
    rng, go_backwards
):
    import tensorflow as tf

    options = dict(return_sequences=True, return_state=True,
                   return_distances=True, go_backwards=go_backwards)
    fused = ONLSTM(UNITS, CHUNK, **options)
    stepwise = ONLSTM(UNITS, CHUNK, **options)
    stepwise.use_fused_recurrence = False  # autodiff through the cell
    for layer in (fused, stepwise):
        layer.build((None, None, FEATURES))
    fused.set_weights(random_weights(rng))
    stepwise.set_weights(fused.get_weights())
    mask = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], bool)

    def loss_and_grads(layer, x, mask):
        with tf.GradientTape() as tape:
            tape.watch(x)
            out, dist, h, c = layer(x, mask=mask)
            loss = (tf.reduce_sum(out * out) + tf.reduce_sum(dist)
                    + tf.reduce_sum(h) + tf.reduce_sum(c * c))
        return loss, tape.gradient(loss, [x, *layer.trainable_weights])

    traced = tf.function(
        lambda x, m: loss_and_grads(fused, x, m),
        input_signature=[tf.TensorSpec((None, None, FEATURES)),
                         tf.TensorSpec((None, None), tf.bool)],
    )
    for time in (4, 2):
        x = tf.constant(sequences(rng, 2, time))
        m = tf.constant(mask[:, :time])
        got_loss, got_grads = traced(x, m)
        want_loss, want_grads = loss_and_grads(stepwise, x, m)
        np.testing.assert_allclose(np_(got_loss), np_(want_loss), rtol=1e-5)
        for got, want in zip(got_grads, want_grads):
            np.testing.assert_allclose(np_(got), np_(want), atol=1e-4)


# -- 2. Bidirectional with distances --------------------------------------


def merged(mode, forward, backward):
    if mode == "concat":
        return [np.concatenate([forward, backward], -1)]
    if mode == "sum":
        return [forward + backward]
    if mode == "ave":
        return [(forward + backward) / 2]
    if mode == "mul":
        return [forward * backward]
    return [forward, backward]


@pytest.mark.parametrize(
    "merge_mode, return_sequences, return_state",
    [("concat", True, False), ("sum", True, True), ("ave", False, False),
     ("mul", False, True), (None, True, True), (None, False, False)],
)
def test_bidirectional_returns_the_distances_of_both_directions(
    rng, merge_mode, return_sequences, return_state
):
    bi = keras.layers.Bidirectional(
        ONLSTM(UNITS, CHUNK, return_sequences=return_sequences,
               return_state=return_state, return_distances=True),
        merge_mode=merge_mode,
    )
    bi.build((None, None, FEATURES))
    forward_weights, backward_weights = random_weights(rng), random_weights(rng)
    bi.forward_layer.set_weights(forward_weights)
    bi.backward_layer.set_weights(backward_weights)
    x = sequences(rng, 2, 5)

    # Each direction on its own: the backward one reads the reversed input,
    # its outputs and distances are put back in the input's time order.
    f_out, f_dist, f_h, f_c = ref.run(x, *forward_weights, CHUNK)
    b_out, b_dist, b_h, b_c = ref.run(x[:, ::-1], *backward_weights, CHUNK)
    if return_sequences:
        f_out, b_out = f_out, b_out[:, ::-1]
    else:
        f_out, b_out = f_out[:, -1], b_out[:, -1]
    want = merged(merge_mode, f_out, b_out)
    want += [f_dist] + [f_h, f_c] * return_state
    want += [b_dist[:, ::-1]] + [b_h, b_c] * return_state

    inputs = keras.Input((None, FEATURES))
    symbolic = bi(inputs)
    assert [tuple(t.shape) for t in symbolic] == [
        (None, None, w.shape[-1]) if w.ndim == 3 else (None, w.shape[-1])
        for w in want
    ]
    model = keras.Model(inputs, symbolic)
    for results in (bi(x), model(x), model.predict(x, verbose=0)):
        assert len(results) == len(want)
        for got, expected in zip(results, want):
            np.testing.assert_allclose(np_(got), expected, atol=1e-5)


def test_layer_alone_and_in_bidirectional_agree_on_return_state():
    layer = ONLSTM(UNITS, CHUNK, return_distances=True)
    # The result is a tuple, which is what wrappers read `return_state` for;
    # the states themselves come back only if asked for.
    assert layer.return_state and layer.result_is_tuple
    assert layer.get_config()["return_state"] is False
    assert len(layer(np.zeros((1, 3, FEATURES), "float32"))) == 2
    assert ONLSTM(UNITS, CHUNK).return_state is False


# -- 3. integer inputs ------------------------------------------------------


def test_integer_inputs_are_cast_like_lstm(rng):
    ints = np.array([[[101, 202], [303, 404]]])
    bi = keras.layers.Bidirectional(ONLSTM(2, 1))
    got = np_(bi(ints))
    np.testing.assert_allclose(got, np_(bi(ints.astype("float32"))))
    layer = ONLSTM(UNITS, CHUNK, return_sequences=True)
    x = rng.integers(-3, 4, size=(2, 4, FEATURES))
    out = layer(keras.ops.convert_to_tensor(x, dtype="int32"))
    want, _, _, _ = ref.run(x, *layer.get_weights(), CHUNK)
    np.testing.assert_allclose(np_(out), want, atol=1e-5)


# -- 4. use_cudnn and the signature -------------------------------------------


def test_takes_exactly_lstms_arguments_plus_its_own():
    lstm = inspect.signature(keras.layers.LSTM.__init__).parameters
    onlstm = inspect.signature(ONLSTM.__init__).parameters
    own = {"chunk_size", "recurrent_dropconnect", "master_input",
           "return_distances"}
    assert set(onlstm) - set(lstm) == own
    assert set(lstm) - set(onlstm) == set()
    for name, parameter in lstm.items():
        assert onlstm[name].default == parameter.default, name
        assert onlstm[name].kind == parameter.kind, name


def test_use_cudnn(rng):
    x = sequences(rng, 2, 4)
    outputs = []
    for use_cudnn in ("auto", False):
        layer = ONLSTM(UNITS, CHUNK, use_cudnn=use_cudnn)
        layer.build((None, None, FEATURES))
        layer.set_weights(random_weights(np.random.default_rng(0)))
        outputs.append(np_(layer(x)))
        assert layer.get_config()["use_cudnn"] == use_cudnn
    np.testing.assert_allclose(outputs[0], outputs[1])
    with pytest.raises(ValueError, match="use_cudnn.*no cuDNN kernel"):
        ONLSTM(UNITS, CHUNK, use_cudnn=True)(x)
    with pytest.raises(ValueError, match="use_cudnn.*received: use_cudnn='yes'"):
        ONLSTM(UNITS, CHUNK, use_cudnn="yes")


# -- 5. `import on_lstm_keras` registers every serializable object -----------


def registered_names():
    """`package>Name` of every object the package's source registers."""
    names = []
    pattern = re.compile(
        r'register_keras_serializable\(package="([^"]+)"\)\s*\n'
        r"(?:class|def) (\w+)"
    )
    for path in (REPO_ROOT / "on_lstm_keras").rglob("*.py"):
        names += [f"{p}>{n}" for p, n in pattern.findall(path.read_text())]
    return sorted(names)


def test_import_alone_registers_everything_for_load_model(rng, tmp_path):
    names = registered_names()
    assert "on_lstm_keras>ONLSTM" in names and len(names) >= 8
    inputs = keras.Input((None, FEATURES))
    hidden, _, backward_distances = keras.layers.Bidirectional(
        ONLSTM(UNITS, CHUNK, return_sequences=True, return_distances=True)
    )(inputs)
    model = keras.Model(
        inputs, [ONLSTM(UNITS, CHUNK)(hidden), backward_distances])
    x = sequences(rng, 2, 4)
    path = tmp_path / "m.keras"
    model.save(path)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "want.npy",
            np.concatenate([np_(t).reshape(-1) for t in model(x)]))
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        import on_lstm_keras
        import keras
        missing = [n for n in {names!r}
                   if keras.saving.get_registered_object(n) is None]
        assert not missing, missing
        model = keras.saving.load_model({str(path)!r})
        got = model.predict(np.load({str(tmp_path / "x.npy")!r}), verbose=0)
        got = np.concatenate([t.reshape(-1) for t in got])
        np.testing.assert_allclose(
            got, np.load({str(tmp_path / "want.npy")!r}), atol=1e-6)
        print("loaded")
    """)
    env = dict(os.environ, KERAS_BACKEND=keras.backend.backend(),
               TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "loaded" in done.stdout, done.stderr[-3000:]


# -- 6. zero-length time axis and batches of size 0 ---------------------------


def test_zero_time_steps_raise_a_clear_error():
    x = np.zeros((2, 0, FEATURES), "float32")
    with pytest.raises(Exception):  # keras.layers.LSTM has no result either
        keras.layers.LSTM(UNITS)(x)
    for options in ({}, {"return_sequences": True, "return_distances": True}):
        with pytest.raises(ValueError, match=r"no time steps.*\(2, 0, 3\)"):
            ONLSTM(UNITS, CHUNK, **options)(x)


@pytest.mark.parametrize("fused", [True, False])
def test_batch_of_size_zero(fused):
    layer = ONLSTM(UNITS, CHUNK, return_sequences=True, return_state=True,
                   return_distances=True)
    layer.use_fused_recurrence = fused
    results = layer(np.zeros((0, 4, FEATURES), "float32"))
    assert [tuple(t.shape) for t in results] == [
        (0, 4, UNITS), (0, 4, 2), (0, UNITS), (0, UNITS)
    ]
    assert tuple(ONLSTM(UNITS, CHUNK)(np.zeros((0, 4, FEATURES))).shape) == (
        0, UNITS)
