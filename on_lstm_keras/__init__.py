"""Ordered Neurons LSTM (ON-LSTM) for Keras 3.

The package holds the `ONLSTM` layer and its cell, the `cumax` activation,
a stacked ON-LSTM language model (`on_lstm_keras.models`), the unsupervised
parser that reads trees off the master-forget distances
(`on_lstm_keras.parsing`), the run of a language model from a corpus to its
trees (`on_lstm_keras.runs`), and the `RRNN` layer (`on_lstm_keras.rrnn`).

`import on_lstm_keras` imports every subpackage, which registers every
serializable class and function with Keras, so that
`keras.saving.load_model` finds them in a fresh process.

TensorFlow's C++ log lines below the level `TF_CPP_MIN_LOG_LEVEL` names
(`2`, errors only, unless the user set it) stay off the terminal, the
start-up lines included: see `utils.native_logs`.
"""

import os

from on_lstm_keras.utils.native_logs import native_logs_filtered

# Read by TensorFlow when it loads, which the imports below do.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

with native_logs_filtered():
    from on_lstm_keras import data
    from on_lstm_keras import layers
    from on_lstm_keras import models
    from on_lstm_keras import parsing
    from on_lstm_keras import plotting
    from on_lstm_keras import rrnn
    from on_lstm_keras import runs
    from on_lstm_keras.layers import ONLSTM
    from on_lstm_keras.layers import ONLSTMCell
    from on_lstm_keras.ops import cumax
    from on_lstm_keras.ops import reverse_cumax
    from on_lstm_keras.rrnn import RRNN
    from on_lstm_keras.rrnn import RRNNCell
    from on_lstm_keras.rrnn import RRNNTreeDistance

__version__ = "0.2.0"

__all__ = [
    "ONLSTM",
    "ONLSTMCell",
    "RRNN",
    "RRNNCell",
    "RRNNTreeDistance",
    "cumax",
    "data",
    "layers",
    "models",
    "parsing",
    "plotting",
    "reverse_cumax",
    "rrnn",
    "runs",
]
