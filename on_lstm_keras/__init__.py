"""Ordered Neurons LSTM (ON-LSTM) for Keras 3.

The package holds the `ONLSTM` layer and its cell, the `cumax` activation,
a stacked ON-LSTM language model (`on_lstm_keras.models`), the unsupervised
parser that reads trees off the master-forget distances
(`on_lstm_keras.parsing`), and the `RRNN` layer
(`on_lstm_keras.rrnn`).

`import on_lstm_keras` registers every serializable class and function with
Keras, so that `keras.saving.load_model` finds them in a fresh process.
Only the `on-lstm` command (the console script, or
`python -m on_lstm_keras.cli`) defers that: it sets TensorFlow's log level
before Keras starts, and then imports what it needs.
"""

import importlib
import os
import sys

__version__ = "0.1.0"

_EXPORTS = {
    "ONLSTM": "on_lstm_keras.layers.onlstm",
    "ONLSTMCell": "on_lstm_keras.layers.onlstm",
    "RRNN": "on_lstm_keras.rrnn",
    "RRNNCell": "on_lstm_keras.rrnn",
    "RRNNTreeDistance": "on_lstm_keras.rrnn",
    "cumax": "on_lstm_keras.ops",
    "reverse_cumax": "on_lstm_keras.ops",
}

# Every module that registers classes or functions with
# `keras.saving.register_keras_serializable`.
_SERIALIZABLE_MODULES = (
    "on_lstm_keras.ops",
    "on_lstm_keras.layers",
    "on_lstm_keras.rrnn",
    "on_lstm_keras.models",
)

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'on_lstm_keras' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_EXPORTS))


def register_serializables():
    """Imports every module that registers objects with Keras' saving."""
    for module in _SERIALIZABLE_MODULES:
        importlib.import_module(module)


def _started_as_command():
    """Whether this process is the `on-lstm` command starting up."""
    if os.path.basename(sys.argv[0] if sys.argv else "").startswith(
        "on-lstm"
    ):
        return True
    argv = list(getattr(sys, "orig_argv", ()))
    return any(
        flag == "-m" and module == "on_lstm_keras.cli"
        for flag, module in zip(argv, argv[1:])
    )


if not _started_as_command():
    register_serializables()
