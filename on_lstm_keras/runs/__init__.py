"""A run on disk: parse with it, score its trees on a treebank, choose
its reading on a dev half.

`parse` gives the trees of raw sentences; `evaluate_treebank` scores one
reading of a run (or a baseline) against a gold treebank;
`evaluate_readings` scores every reading, layer and tree rule at once;
`choose_reading` picks the best on a dev half and records it in the run
(`run.json` `default_reading`), where `parse` and `evaluate_treebank` find
it. `EpochF1` logs that table after every epoch of training.
"""

from on_lstm_keras.runs.defaults import DEFAULT_READING
from on_lstm_keras.runs.defaults import saved_reading
from on_lstm_keras.runs.epoch_f1 import EpochF1
from on_lstm_keras.runs.epoch_f1 import draw_f1_curve
from on_lstm_keras.runs.epoch_f1 import read_f1_curve
from on_lstm_keras.runs.evaluation import evaluate_readings
from on_lstm_keras.runs.evaluation import evaluate_treebank
from on_lstm_keras.runs.layout import BACKWARD_DIR
from on_lstm_keras.runs.layout import LSTM_DIR
from on_lstm_keras.runs.parse import backward_of
from on_lstm_keras.runs.parse import parse
from on_lstm_keras.runs.readings import best_reading
from on_lstm_keras.runs.readings import choose_reading
from on_lstm_keras.runs.readings import format_readings_table
from on_lstm_keras.runs.readings import record_reading

__all__ = [
    "BACKWARD_DIR",
    "DEFAULT_READING",
    "EpochF1",
    "LSTM_DIR",
    "backward_of",
    "best_reading",
    "choose_reading",
    "draw_f1_curve",
    "evaluate_readings",
    "evaluate_treebank",
    "format_readings_table",
    "parse",
    "read_f1_curve",
    "record_reading",
    "saved_reading",
]
