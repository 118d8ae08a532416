"""Recurrent layers: ON-LSTM and RRNN, each with its cell.

RRNN lives in `on_lstm_keras.rrnn`; it is re-exported here.
"""

from on_lstm_keras.layers.onlstm import DISTANCE_FORGET
from on_lstm_keras.layers.onlstm import DISTANCE_INPUT
from on_lstm_keras.layers.onlstm import ONLSTM
from on_lstm_keras.layers.onlstm import ONLSTMCell
from on_lstm_keras.rrnn import RRNN
from on_lstm_keras.rrnn import RRNNCell
from on_lstm_keras.rrnn import RRNNTreeDistance
