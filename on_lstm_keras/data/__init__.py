"""Text data for language modelling: corpora, tokenizers, vocabulary, batches.

The names below are imported when first used, so that the command line can
read the corpus settings without starting Keras (only `batching` needs it).
"""

import importlib

_EXPORTS = {
    "BPTTSequence": "batching",
    "batchify": "batching",
    "CorpusError": "corpora",
    "peoples_daily_sentences": "corpora",
    "ptb_lm_splits": "corpora",
    "read_sentences": "corpora",
    "split_sentences": "corpora",
    "train_valid_test_split": "corpora",
    "Corpus": "corpus",
    "chinese_script": "corpus",
    "in_reading_order": "corpus",
    "load_corpus": "corpus",
    "load_corpus_of_run": "corpus",
    "JiebaTokenizer": "tokenizers",
    "WhitespaceTokenizer": "tokenizers",
    "get_tokenizer": "tokenizers",
    "EOS": "vocabulary",
    "PAD": "vocabulary",
    "UNK": "vocabulary",
    "Vocabulary": "vocabulary",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        module = importlib.import_module(f"{__name__}.{_EXPORTS[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_EXPORTS))
