"""Language models built on the ONLSTM layer, their metric and training."""

from on_lstm_keras.models.embedding import WordDropoutEmbedding
from on_lstm_keras.models.language_model import ONLSTMLanguageModel
from on_lstm_keras.models.metrics import Perplexity
from on_lstm_keras.models.schedules import LinearWarmup
