"""Text data for language modelling: corpora, tokenizers, vocabulary, batches."""

from on_lstm_keras.data.batching import BPTTSequence
from on_lstm_keras.data.batching import batchify
from on_lstm_keras.data.corpora import CorpusError
from on_lstm_keras.data.corpora import peoples_daily_sentences
from on_lstm_keras.data.corpora import ptb_lm_splits
from on_lstm_keras.data.corpora import read_sentences
from on_lstm_keras.data.corpora import split_sentences
from on_lstm_keras.data.corpora import train_valid_test_split
from on_lstm_keras.data.corpus import Corpus
from on_lstm_keras.data.corpus import chinese_script
from on_lstm_keras.data.corpus import in_reading_order
from on_lstm_keras.data.corpus import load_corpus
from on_lstm_keras.data.tokenizers import JiebaTokenizer
from on_lstm_keras.data.tokenizers import WhitespaceTokenizer
from on_lstm_keras.data.tokenizers import get_tokenizer
from on_lstm_keras.data.vocabulary import EOS
from on_lstm_keras.data.vocabulary import PAD
from on_lstm_keras.data.vocabulary import UNK
from on_lstm_keras.data.vocabulary import Vocabulary

__all__ = [
    "BPTTSequence",
    "Corpus",
    "CorpusError",
    "EOS",
    "JiebaTokenizer",
    "PAD",
    "UNK",
    "Vocabulary",
    "WhitespaceTokenizer",
    "batchify",
    "chinese_script",
    "get_tokenizer",
    "in_reading_order",
    "load_corpus",
    "peoples_daily_sentences",
    "ptb_lm_splits",
    "read_sentences",
    "split_sentences",
    "train_valid_test_split",
]
