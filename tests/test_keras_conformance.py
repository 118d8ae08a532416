"""Keras' own LSTM tests, run against a one-level ON-LSTM.

With one level (`chunk_size=units`) both master gates are 1 whatever their
inputs (a softmax over one level), and with `master_input="reverse_cumsum"`
the overlap `ω = f̃ ∘ ĩ` is 1 too, so the cell update is exactly an LSTM's:
`c = f∘c₋₁ + i∘ĉ`. The test classes of the installed Keras
(`keras.src.layers.rnn.lstm_test`, `bidirectional_test`,
`stacked_rnn_cells_test`) then run unchanged, hard-coded expected values
included, with the name `layers` of their module pointing, for the duration
of each test, at Keras' layers where `LSTM` and `LSTMCell` are that
one-level ON-LSTM. `test_onlstm_dropin.py` checks the same behaviours with
several levels against a NumPy reference.
"""

import unittest

import numpy as np
import pytest

import keras
from keras.src import layers as keras_layers

from on_lstm_keras import ONLSTM
from on_lstm_keras import ONLSTMCell


def _keras_test_module(name):
    # Not every Keras wheel ships its test modules (3.10's has none, 3.15's
    # has them).
    return pytest.importorskip(
        f"keras.src.layers.rnn.{name}",
        reason=f"this Keras ({keras.__version__}) ships without its test "
        f"module keras.src.layers.rnn.{name}",
    )


bidirectional_test = _keras_test_module("bidirectional_test")
lstm_test = _keras_test_module("lstm_test")
stacked_rnn_cells_test = _keras_test_module("stacked_rnn_cells_test")

pytestmark = pytest.mark.backend


@keras.saving.register_keras_serializable(package="on_lstm_conformance")
class OneLevelONLSTM(ONLSTM):
    """`ONLSTM` that takes `keras.layers.LSTM`'s arguments: one level."""

    def __init__(self, units, chunk_size=None, master_input="reverse_cumsum",
                 **kwargs):
        super().__init__(
            units, units if chunk_size is None else chunk_size,
            master_input=master_input, **kwargs,
        )


@keras.saving.register_keras_serializable(package="on_lstm_conformance")
class OneLevelONLSTMCell(ONLSTMCell):
    """`ONLSTMCell` that takes `keras.layers.LSTMCell`'s arguments."""

    def __init__(self, units, chunk_size=None, master_input="reverse_cumsum",
                 **kwargs):
        super().__init__(
            units, units if chunk_size is None else chunk_size,
            master_input=master_input, **kwargs,
        )


class LayersWithONLSTM:
    """`keras.src.layers`, except that `LSTM` and `LSTMCell` are ON-LSTMs."""

    LSTM = OneLevelONLSTM
    LSTMCell = OneLevelONLSTMCell

    def __getattr__(self, name):
        return getattr(keras_layers, name)


@pytest.fixture(autouse=True)
def onlstm_in_keras_tests(monkeypatch):
    for module in (lstm_test, bidirectional_test, stacked_rnn_cells_test):
        monkeypatch.setattr(module, "layers", LayersWithONLSTM())


def test_one_level_onlstm_equals_keras_lstm():
    """The premise: same weights (plus the master-gate columns), same
    numbers as `keras.layers.LSTM`, with a mask and returned states."""
    rng = np.random.default_rng(0)
    units, features = 4, 3
    lstm = keras.layers.LSTM(units, return_sequences=True, return_state=True)
    lstm.build((None, None, features))
    lstm.set_weights([rng.normal(0, 0.5, w.shape).astype("float32")
                      for w in lstm.get_weights()])
    onlstm = OneLevelONLSTM(units, return_sequences=True, return_state=True)
    onlstm.build((None, None, features))
    # Columns i, f, c, o as in LSTM, then one master-forget and one
    # master-input column, whose values cannot matter with one level.
    kernel, recurrent_kernel, bias = lstm.get_weights()
    onlstm.set_weights([
        np.concatenate([kernel, rng.normal(size=(features, 2))], -1),
        np.concatenate([recurrent_kernel, rng.normal(size=(units, 2))], -1),
        np.concatenate([bias, rng.normal(size=(2,))], -1),
    ])
    x = rng.normal(size=(2, 5, features)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    for got, want in zip(onlstm(x, mask=mask), lstm(x, mask=mask)):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(got), keras.ops.convert_to_numpy(want),
            atol=1e-6,
        )


class TestKerasLSTM(lstm_test.LSTMTest):
    pass


_FUSED_DISPATCH = (
    "tests Keras' private fused bidirectional-LSTM dispatch "
    "(`Bidirectional._can_attempt_fused_lstm`), which only takes Keras' own "
    "LSTM class: ON-LSTM runs its own recurrence in each direction"
)


class TestKerasBidirectional(bidirectional_test.SimpleRNNTest):
    @unittest.skip(_FUSED_DISPATCH)
    def test_fused_lstm_eligibility(self):
        pass

    @unittest.skip(_FUSED_DISPATCH + "; the GRU half asserts an LSTM is "
                   "recognised as such")
    def test_fused_gru_eligibility(self):
        pass


class TestKerasStackedRNNCells(stacked_rnn_cells_test.StackedRNNTest):
    pass
