"""Recurrent layers: ON-LSTM (and its cell)."""

from on_lstm_keras.layers.onlstm import ONLSTM
from on_lstm_keras.layers.onlstm import ONLSTMCell
