"""The ON-LSTM layer and its cell.

The RRNN layer stands beside this package, in `on_lstm_keras.rrnn`.
"""

from on_lstm_keras.layers.onlstm import DISTANCE_FORGET
from on_lstm_keras.layers.onlstm import DISTANCE_INPUT
from on_lstm_keras.layers.onlstm import ONLSTM
from on_lstm_keras.layers.onlstm import ONLSTMCell

__all__ = ["DISTANCE_FORGET", "DISTANCE_INPUT", "ONLSTM", "ONLSTMCell"]
