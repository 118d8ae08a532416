"""Recurrent layers: ON-LSTM and RRNN, each with its cell."""

from on_lstm_keras.layers.onlstm import ONLSTM
from on_lstm_keras.layers.onlstm import ONLSTMCell
from on_lstm_keras.layers.rrnn import RRNN
from on_lstm_keras.layers.rrnn import RRNNCell
from on_lstm_keras.layers.rrnn import RRNNTreeDistance
