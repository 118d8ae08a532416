"""Ordered Neurons LSTM (ON-LSTM) for Keras 3.

The package holds the `ONLSTM` layer and its cell, the `cumax` activation,
a stacked ON-LSTM language model, the unsupervised parser that reads trees
off the master-forget distances, and the `RRNN` layer.
"""

__version__ = "0.1.0"

from on_lstm_keras.layers import ONLSTM  # noqa: E402
from on_lstm_keras.layers import ONLSTMCell  # noqa: E402
from on_lstm_keras.ops import cumax  # noqa: E402
from on_lstm_keras.ops import reverse_cumax  # noqa: E402
