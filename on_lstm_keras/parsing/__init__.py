"""Unsupervised constituency parsing from ON-LSTM split distances.

The modules exported here build binary trees from per-word
distances (`distances_to_tree`), convert trees between formats, score them
against gold trees with unlabelled span F1, make baseline trees, and load
gold trees from the Penn and Sinica treebanks. `reachable_trees` gives the
exact set of trees a tree rule can build, and `mirror_tree` and
`mirror_sentence` read trees and sentences right to left (the controls of
Dyer, Melis and Blunsom 2019). `paired_bootstrap` gives the interval of
two parsers' difference on the same sentences. `split_scores` combines the
distances of a forward and a backward model (and of several layers) into
one score per word; `model_parser` reads the distances off a language
model. A `Parse` holds one parsed sentence.

Trees are nested lists of words; a single word is the word itself.
"""

from on_lstm_keras.parsing.baselines import BASELINES
from on_lstm_keras.parsing.baselines import balanced
from on_lstm_keras.parsing.baselines import baseline_tree
from on_lstm_keras.parsing.baselines import left_branching
from on_lstm_keras.parsing.baselines import random_tree
from on_lstm_keras.parsing.baselines import right_branching
from on_lstm_keras.parsing.bootstrap import PairedDifference
from on_lstm_keras.parsing.bootstrap import paired_bootstrap
from on_lstm_keras.parsing.metrics import PRF
from on_lstm_keras.parsing.metrics import corpus_prf
from on_lstm_keras.parsing.metrics import evaluate
from on_lstm_keras.parsing.metrics import sentence_prf
from on_lstm_keras.parsing.metrics import spans
from on_lstm_keras.parsing.parse import Parse
from on_lstm_keras.parsing.reach import reach_counts
from on_lstm_keras.parsing.reach import reachable_trees
from on_lstm_keras.parsing.scores import READINGS
from on_lstm_keras.parsing.scores import layer_view
from on_lstm_keras.parsing.scores import split_scores
from on_lstm_keras.parsing.scores import zscore
from on_lstm_keras.parsing.treebanks import PTB_WORD_TAGS
from on_lstm_keras.parsing.treebanks import CorpusNotFoundError
from on_lstm_keras.parsing.treebanks import GoldSentence
from on_lstm_keras.parsing.treebanks import load_ptb
from on_lstm_keras.parsing.treebanks import load_sinica
from on_lstm_keras.parsing.treebanks import mirror_sentence
from on_lstm_keras.parsing.treebanks import ptb_word_preprocess
from on_lstm_keras.parsing.trees import TREE_RULES
from on_lstm_keras.parsing.trees import ascii_tree
from on_lstm_keras.parsing.trees import collapse_unary
from on_lstm_keras.parsing.trees import distances_to_tree
from on_lstm_keras.parsing.trees import from_brackets
from on_lstm_keras.parsing.trees import from_nltk
from on_lstm_keras.parsing.trees import leaves
from on_lstm_keras.parsing.trees import mirror_tree
from on_lstm_keras.parsing.trees import to_brackets
from on_lstm_keras.parsing.trees import to_json
from on_lstm_keras.parsing.trees import to_nltk

__all__ = [
    "BASELINES",
    "PRF",
    "PTB_WORD_TAGS",
    "PairedDifference",
    "Parse",
    "READINGS",
    "TREE_RULES",
    "CorpusNotFoundError",
    "GoldSentence",
    "ascii_tree",
    "balanced",
    "baseline_tree",
    "collapse_unary",
    "corpus_prf",
    "distances_to_tree",
    "evaluate",
    "from_brackets",
    "from_nltk",
    "layer_view",
    "leaves",
    "left_branching",
    "load_ptb",
    "load_sinica",
    "mirror_sentence",
    "mirror_tree",
    "paired_bootstrap",
    "ptb_word_preprocess",
    "random_tree",
    "reach_counts",
    "reachable_trees",
    "right_branching",
    "sentence_prf",
    "spans",
    "split_scores",
    "to_brackets",
    "to_json",
    "to_nltk",
    "zscore",
]

