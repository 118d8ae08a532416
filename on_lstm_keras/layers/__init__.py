"""The ON-LSTM layer and its cell.

The RRNN layer stands beside this package, in `on_lstm_keras.rrnn`.
"""

from on_lstm_keras.layers.onlstm import ONLSTM
from on_lstm_keras.layers.onlstm_cell import ONLSTMCell
# The columns of the distances that `ONLSTM(return_distances=True)` returns.
from on_lstm_keras.ops import DISTANCE_FORGET
from on_lstm_keras.ops import DISTANCE_INPUT

__all__ = ["DISTANCE_FORGET", "DISTANCE_INPUT", "ONLSTM", "ONLSTMCell"]
