"""Ordered Neurons LSTM (ON-LSTM) for Keras 3.

The package holds the `ONLSTM` layer and its cell, the `cumax` activation,
a stacked ON-LSTM language model (`on_lstm_keras.models`), the unsupervised
parser that reads trees off the master-forget distances
(`on_lstm_keras.parsing`), and the `RRNN` layer.

Names are imported on first use, so that `import on_lstm_keras.parsing` or
the `on-lstm` command do not pay for a Keras backend start-up they do not
need (yet).
"""

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "ONLSTM": "on_lstm_keras.layers.onlstm",
    "ONLSTMCell": "on_lstm_keras.layers.onlstm",
    "RRNN": "on_lstm_keras.layers.rrnn",
    "RRNNCell": "on_lstm_keras.layers.rrnn",
    "RRNNTreeDistance": "on_lstm_keras.layers.rrnn",
    "cumax": "on_lstm_keras.ops",
    "reverse_cumax": "on_lstm_keras.ops",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'on_lstm_keras' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_EXPORTS))
