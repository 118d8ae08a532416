"""Where the pieces of a run directory lie."""

BACKWARD_DIR = "backward"
"""The sub-directory of a run holding the run of its backward model."""

LSTM_DIR = "lstm"
"""The sub-directory of a run holding the LSTM trained beside the ON-LSTM."""
