"""The step-by-step ON-LSTM path, Bidirectional and jit against the NumPy
reference (`onlstm_reference`, the paper's equations in float64).

The layer runs a fused recurrence where it can (TensorFlow and JAX with the
default activations) and steps through the cell otherwise (torch, other
activations, `use_fused_recurrence = False`); both paths are compared here,
the step path explicitly.
"""

import numpy as np
import pytest

import keras

import onlstm_reference as ref
from on_lstm_keras import ONLSTM
from on_lstm_keras.layers.fused import fused_path_unsupported

pytestmark = pytest.mark.backend

UNITS, CHUNK, FEATURES = 12, 3, 5


def np_(x):
    return keras.ops.convert_to_numpy(x)


def set_random_weights(layer, rng, scale=0.5):
    layer.set_weights([rng.normal(0, scale, w.shape).astype("float32")
                       for w in layer.get_weights()])


@pytest.fixture
def rng():
    keras.utils.set_random_seed(1234)
    return np.random.default_rng(3)


def step_layer(rng, **kwargs):
    layer = ONLSTM(UNITS, CHUNK, return_sequences=True, return_state=True,
                   return_distances=True, **kwargs)
    layer.build((None, None, FEATURES))
    set_random_weights(layer, rng)
    layer.use_fused_recurrence = False
    return layer


@pytest.mark.parametrize("master_input", ["cumax", "reverse_cumsum"])
@pytest.mark.parametrize("masked", [False, True])
def test_step_path_matches_the_reference(rng, master_input, masked):
    layer = step_layer(rng, master_input=master_input)
    x = rng.normal(size=(3, 7, FEATURES)).astype("float32")
    mask = None
    if masked:
        mask = np.array([[1] * 7, [1] * 4 + [0] * 3, [1, 1, 0, 1, 1, 0, 1]], bool)
    out, dist, h, c = layer(x, mask=mask)
    want_out, want_dist, want_h, want_c = ref.run(
        x, *layer.get_weights(), CHUNK, master_input=master_input, mask=mask)
    # d_f and d_i separately: they come from different master gates.
    np.testing.assert_allclose(np_(dist)[..., 0], want_dist[..., 0], atol=1e-5)
    np.testing.assert_allclose(np_(dist)[..., 1], want_dist[..., 1], atol=1e-5)
    np.testing.assert_allclose(np_(out), want_out, atol=1e-5)
    np.testing.assert_allclose(np_(h), want_h, atol=1e-5)
    np.testing.assert_allclose(np_(c), want_c, atol=1e-5)


def test_step_and_fused_paths_agree(rng):
    layer = step_layer(rng)
    x = rng.normal(size=(2, 6, FEATURES)).astype("float32")
    step = [np_(t) for t in layer(x)]
    layer.use_fused_recurrence = True
    fused = [np_(t) for t in layer(x)]
    for a, b in zip(step, fused):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_other_activations_take_the_step_path_with_their_own_equations(rng):
    """With `activation="relu"` the fused path is off; the step path then
    computes the paper's update with relu in place of tanh."""
    layer = ONLSTM(UNITS, CHUNK, activation="relu", return_sequences=True,
                   return_distances=True)
    layer.build((None, None, FEATURES))
    set_random_weights(layer, rng)
    assert fused_path_unsupported(layer.cell) is not None
    x = rng.normal(size=(2, 5, FEATURES)).astype("float32")
    out, dist = (np_(t) for t in layer(x))

    kernel, recurrent_kernel, bias = (w.astype(np.float64) for w in layer.get_weights())
    levels = UNITS // CHUNK
    h = c = np.zeros((2, UNITS))
    for t in range(5):
        z = x[:, t] @ kernel + h @ recurrent_kernel + bias
        i, f, o = (ref.sigmoid(z[:, k * UNITS:(k + 1) * UNITS]) for k in (0, 1, 3))
        c_hat = np.maximum(z[:, 2 * UNITS:3 * UNITS], 0)
        mf, mi = ref.master_gates(z[:, 4 * UNITS:4 * UNITS + levels],
                                  z[:, 4 * UNITS + levels:])
        mf_u, mi_u = (np.repeat(m, CHUNK, axis=-1) for m in (mf, mi))
        w = mf_u * mi_u
        c = w * (f * c + i * c_hat) + (mf_u - w) * c + (mi_u - w) * c_hat
        h = o * np.maximum(c, 0)
        np.testing.assert_allclose(out[:, t], h, atol=1e-5)
        np.testing.assert_allclose(dist[:, t, 0], 1 - mf.mean(-1), atol=1e-6)
        np.testing.assert_allclose(dist[:, t, 1], mi.mean(-1), atol=1e-6)


@pytest.mark.parametrize("fused", [True, False])
def test_bidirectional_both_halves_match_the_reference(rng, fused):
    bi = keras.layers.Bidirectional(
        ONLSTM(8, 2, return_sequences=True), merge_mode="concat")
    x = rng.normal(size=(3, 7, FEATURES)).astype("float32")
    bi.build(x.shape)
    for half in (bi.forward_layer, bi.backward_layer):
        half.build((None, None, FEATURES))
        set_random_weights(half, rng)
        half.use_fused_recurrence = fused
    y = np_(bi(x))
    assert y.shape == (3, 7, 16)
    forward, _, _, _ = ref.run(x, *bi.forward_layer.get_weights(), 2)
    backward, _, _, _ = ref.run(x[:, ::-1], *bi.backward_layer.get_weights(), 2)
    np.testing.assert_allclose(y[..., :8], forward, atol=1e-5)
    # Keras flips the backward half back into input order.
    np.testing.assert_allclose(y[..., 8:], backward[:, ::-1], atol=1e-5)
    # The halves differ (so neither check is the other one again).
    assert not np.allclose(y[..., :8], y[..., 8:], atol=1e-3)


def test_jit_compiled_training_step_at_two_lengths(rng):
    """One compiled training step per sequence length: the loss it reports
    is the reference's, and plain SGD moves the weights by `-lr * grad`
    (checked against the same step run eagerly)."""
    def model_for(jit):
        keras.utils.set_random_seed(0)
        model = keras.Sequential([
            keras.Input((None, FEATURES)),
            ONLSTM(UNITS, CHUNK),
            keras.layers.Dense(1),
        ])
        model.compile(keras.optimizers.SGD(0.1), "mse", jit_compile=jit)
        return model

    compiled, eager = model_for(True), model_for(False)
    assert compiled.jit_compile
    weights = [rng.normal(0, 0.5, w.shape).astype("float32")
               for w in compiled.get_weights()]
    compiled.set_weights(weights)
    eager.set_weights(weights)
    for steps in (4, 9):
        x = rng.normal(size=(8, steps, FEATURES)).astype("float32")
        y = rng.normal(size=(8, 1)).astype("float32")
        kernel, recurrent_kernel, bias, dense_w, dense_b = (
            w.astype(np.float64) for w in compiled.get_weights())
        _, _, h, _ = ref.run(x, kernel, recurrent_kernel, bias, CHUNK)
        want = np.mean((h @ dense_w + dense_b - y) ** 2)
        loss = compiled.train_on_batch(x, y)
        assert float(np.ravel(loss)[0]) == pytest.approx(want, rel=1e-4)
        eager.train_on_batch(x, y)
        for a, b, before in zip(compiled.get_weights(), eager.get_weights(),
                                [kernel, recurrent_kernel, bias, dense_w, dense_b]):
            np.testing.assert_allclose(a, b, atol=1e-5)
            assert not np.allclose(a, before)


def test_the_fused_recurrence_runs_by_default_where_it_can(rng, monkeypatch):
    """On TensorFlow and JAX, with the default activations, a call runs the
    fused recurrence (once); with `use_fused_recurrence = False`, other
    activations or another backend it steps through the cell."""
    from on_lstm_keras.layers import onlstm

    calls = []
    fused_inner_loop = onlstm.fused_inner_loop

    def counting(*args, **kwargs):
        # Counted once it has run: where it cannot, it raises
        # `NotImplementedError` and the layer falls back.
        result = fused_inner_loop(*args, **kwargs)
        calls.append(1)
        return result

    monkeypatch.setattr(onlstm, "fused_inner_loop", counting)
    x = rng.normal(size=(2, 4, FEATURES)).astype("float32")
    layer = ONLSTM(UNITS, CHUNK)
    assert layer.use_fused_recurrence is True
    layer.build(x.shape)
    want = ref.run(x, *layer.get_weights(), CHUNK)[0][:, -1]
    np.testing.assert_allclose(np_(layer(x)), want, atol=1e-5)
    fused_backend = keras.backend.backend() in ("tensorflow", "jax")
    assert len(calls) == (1 if fused_backend else 0)

    calls.clear()
    layer.use_fused_recurrence = False
    np.testing.assert_allclose(np_(layer(x)), want, atol=1e-5)
    relu = ONLSTM(UNITS, CHUNK, activation="relu")
    relu(x)
    assert calls == []
