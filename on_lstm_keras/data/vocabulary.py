"""Word vocabulary with padding, `<unk>` and the boundary token `<eos>`."""

import collections
import json

from on_lstm_keras.utils import validation as check
from on_lstm_keras.utils.atomic import write_text
from on_lstm_keras.config import MIN_VOCAB

PAD = "<pad>"
UNK = "<unk>"
EOS = "<eos>"
SPECIALS = (PAD, UNK, EOS)


class Vocabulary:
    """Maps words to integer ids and back.

    Id 0 is padding (`<pad>`, masked out by the language model), id 1 is
    `<unk>` (every unknown word) and id 2 is `<eos>`, the token the language
    model reads between sentences; they are followed by the kept words, most
    frequent first (ties in first-seen order).

    Args:
        words: The words, in id order, starting with `<pad>`, `<unk>`,
            `<eos>`.

    Example:

    >>> vocab = Vocabulary.build([["a", "b", "a"], ["a", "c"]], min_count=2)
    >>> vocab.words
    ['<pad>', '<unk>', '<eos>', 'a']
    >>> vocab.encode(["a", "b"])
    [3, 1]
    >>> vocab.encode_sentences([["a"], ["c", "a"]])
    [3, 2, 1, 3, 2]
    """

    def __init__(self, words):
        words = list(words)
        if tuple(words[:3]) != SPECIALS:
            raise ValueError(
                f"Argument `words` must start with {SPECIALS!r}, "
                f"received: words[:3]={words[:3]!r}"
            )
        if len(set(words)) != len(words):
            dupes = [w for w, n in collections.Counter(words).items() if n > 1]
            raise ValueError(
                f"Argument `words` holds duplicates, received: {dupes[:5]!r}"
            )
        self.words = words
        self.index = {w: i for i, w in enumerate(words)}

    @classmethod
    def build(cls, sentences, min_count=1, max_size=None):
        """Counts the words of tokenized `sentences` and keeps the frequent.

        Args:
            sentences: Iterable of lists of words.
            min_count: Keep words seen at least this many times.
            max_size: Optional cap on the vocabulary size (specials included).
        """
        min_count = check.positive_int("min_count", min_count)
        if max_size is not None:
            max_size = check.positive_int("max_size", max_size)
            if max_size < MIN_VOCAB:
                raise ValueError(
                    f"Argument `max_size` must be at least {MIN_VOCAB}, "
                    f"received: max_size={max_size}"
                )
        counts = collections.Counter()
        for sentence in sentences:
            counts.update(sentence)
        kept = [
            w for w, n in counts.most_common()
            if n >= min_count and w not in SPECIALS
        ]
        if max_size is not None:
            kept = kept[: max_size - len(SPECIALS)]
        return cls([*SPECIALS, *kept])

    def __len__(self):
        return len(self.words)

    def __contains__(self, word):
        return word in self.index

    pad_id = 0
    unk_id = 1
    eos_id = 2

    def encode(self, words):
        """Ids of `words`; unknown words give the `<unk>` id."""
        return [self.index.get(w, self.unk_id) for w in words]

    def decode(self, ids):
        """Words of `ids`."""
        return [self.words[int(i)] for i in ids]

    def encode_sentences(self, sentences):
        """One id stream: each sentence followed by `<eos>`."""
        ids = []
        for sentence in sentences:
            ids.extend(self.encode(sentence))
            ids.append(self.eos_id)
        return ids

    def save(self, path):
        """Writes the vocabulary as JSON, atomically (temporary file, fsync,
        rename)."""
        write_text(path, json.dumps({"format": "on_lstm_keras.vocabulary/1",
                                     "words": self.words}, ensure_ascii=False))

    @classmethod
    def load(cls, path):
        """Reads a vocabulary written by `save`, with a clear error if not."""
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            words = data["words"]
        except FileNotFoundError:
            raise FileNotFoundError(f"No vocabulary file at {path}") from None
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(
                f"Corrupt vocabulary file {path}: {type(e).__name__}: {e}"
            ) from None
        return cls(words)
