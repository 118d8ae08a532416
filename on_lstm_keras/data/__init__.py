"""Text data for language modelling: corpora, tokenizers, vocabulary, batches."""

from on_lstm_keras.data.batching import BPTTSequence
from on_lstm_keras.data.batching import batchify
from on_lstm_keras.data.corpora import CorpusError
from on_lstm_keras.data.corpora import peoples_daily_sentences
from on_lstm_keras.data.corpora import ptb_lm_splits
from on_lstm_keras.data.corpora import read_sentences
from on_lstm_keras.data.corpora import split_sentences
from on_lstm_keras.data.corpora import train_valid_test_split
from on_lstm_keras.data.tokenizers import JiebaTokenizer
from on_lstm_keras.data.tokenizers import WhitespaceTokenizer
from on_lstm_keras.data.tokenizers import get_tokenizer
from on_lstm_keras.data.vocabulary import EOS
from on_lstm_keras.data.vocabulary import PAD
from on_lstm_keras.data.vocabulary import UNK
from on_lstm_keras.data.vocabulary import Vocabulary
