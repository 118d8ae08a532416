"""Language models built on the ONLSTM layer, their metric and training."""

from on_lstm_keras.models.embedding import WordDropoutEmbedding
from on_lstm_keras.models.language_model import ONLSTMLanguageModel
from on_lstm_keras.models.metrics import Perplexity
from on_lstm_keras.models.schedules import LinearWarmup
from on_lstm_keras.models.training import compile_language_model
from on_lstm_keras.models.training import evaluate_perplexity
from on_lstm_keras.models.training import make_optimizer
from on_lstm_keras.models.training import train_language_model

__all__ = [
    "LinearWarmup",
    "ONLSTMLanguageModel",
    "Perplexity",
    "WordDropoutEmbedding",
    "compile_language_model",
    "evaluate_perplexity",
    "make_optimizer",
    "train_language_model",
]
