"""Ordered Neurons LSTM (ON-LSTM) for Keras 3.

The package holds the `ONLSTM` layer and its cell, the `cumax` activation,
a stacked ON-LSTM language model (`on_lstm_keras.models`), the unsupervised
parser that reads trees off the master-forget distances
(`on_lstm_keras.parsing`), the run of a language model from a corpus to its
trees (`on_lstm_keras.runs`), and the `RRNN` layer (`on_lstm_keras.rrnn`).

`import on_lstm_keras` imports every subpackage, which registers every
serializable class and function with Keras, so that
`keras.saving.load_model` finds them in a fresh process.
"""

import os

# TensorFlow writes C++ start-up lines (oneDNN notices, CUDA probing) when
# it loads, which the next import does; keep them off a user's terminal
# unless the user chose a level.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from on_lstm_keras import data  # noqa: E402
from on_lstm_keras import layers  # noqa: E402
from on_lstm_keras import models  # noqa: E402
from on_lstm_keras import parsing  # noqa: E402
from on_lstm_keras import rrnn  # noqa: E402
from on_lstm_keras.layers import ONLSTM  # noqa: E402
from on_lstm_keras.layers import ONLSTMCell  # noqa: E402
from on_lstm_keras.ops import cumax  # noqa: E402
from on_lstm_keras.ops import reverse_cumax  # noqa: E402
from on_lstm_keras.rrnn import RRNN  # noqa: E402
from on_lstm_keras.rrnn import RRNNCell  # noqa: E402
from on_lstm_keras.rrnn import RRNNTreeDistance  # noqa: E402

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
    "reverse_cumax",
    "rrnn",
]
