"""Gold trees from the Penn Treebank (WSJ) and the Sinica Treebank, via NLTK.

The files are read with NLTK's own corpus readers
(`BracketParseCorpusReader` for the PTB, `SinicaTreebankCorpusReader` for
Sinica), then reduced to unlabelled nested-list trees (see
`on_lstm_keras.parsing.trees`) the way the ON-LSTM paper prepares them.

Data location: `nltk_data=None` searches NLTK's data path (`nltk.data.path`,
which includes the `NLTK_DATA` environment variable); a directory passed
as `nltk_data` is searched alone. That directory must have NLTK's layout
(`corpora/treebank/combined/*.mrg`, `corpora/sinica_treebank/parsed`). Recent
NLTK versions refuse to read corpora outside `nltk.data.path`; a directory
passed as `nltk_data` is treated as authorised by the caller and is added to
`nltk.data.path` for the duration of the call only (not thread-safe with
code that edits `nltk.data.path` at the same time).
"""

import contextlib
import os
import re
from typing import Any
from typing import NamedTuple

import nltk
from nltk.corpus.reader import BracketParseCorpusReader
from nltk.corpus.reader import SinicaTreebankCorpusReader

from on_lstm_keras.utils.extras import require
from on_lstm_keras.utils.validation import positive_int
from on_lstm_keras.parsing.trees import collapse_unary
from on_lstm_keras.parsing.trees import leaves
from on_lstm_keras.parsing.trees import mirror_tree

# Preterminal tags whose words the ON-LSTM / PRPN code keeps (`word_tags` in
# the official data_ptb.py). Punctuation, currency symbols ($, #), brackets
# (-LRB-, -RRB-), quotes and traces (-NONE-) are all left out.
PTB_WORD_TAGS = frozenset(
    "CC CD DT EX FW IN JJ JJR JJS LS MD NN NNS NNP NNPS PDT POS PRP PRP$ RB "
    "RBR RBS RP SYM TO UH VB VBD VBG VBN VBP VBZ WDT WP WP$ WRB".split()
)

_DIGITS = re.compile("[0-9]+")


class GoldSentence(NamedTuple):
    """A preprocessed treebank sentence.

    Attributes:
        words: The kept words, in order (equal to `leaves(tree)`).
        tree: The unlabelled gold tree: nested lists of words, every list
            with two or more children; a one-word sentence is the word.
    """

    words: list
    tree: Any


def mirror_sentence(sentence):
    """A gold sentence read right to left: its words reversed and its tree
    mirrored (`mirror_tree`), so that a right-branching language looks
    left-branching to the parser and its baselines.

    Args:
        sentence: A `GoldSentence`.

    Returns:
        A `GoldSentence`; mirroring it again gives `sentence` back.

    Example:

    >>> mirror_sentence(GoldSentence(["a", "b", "c"], ["a", ["b", "c"]]))
    GoldSentence(words=['c', 'b', 'a'], tree=[['c', 'b'], 'a'])
    """
    if not isinstance(sentence, GoldSentence):
        raise ValueError(
            "Argument `sentence` must be a `GoldSentence`, received: "
            f"sentence={sentence!r}")
    return GoldSentence(list(reversed(sentence.words)),
                        mirror_tree(sentence.tree))


class CorpusNotFoundError(LookupError, FileNotFoundError):
    """A treebank is not where it was looked for.

    It is both a `LookupError` (what `nltk.data.find` raises) and a
    `FileNotFoundError`.
    """


def ptb_word_preprocess(word):
    """The ON-LSTM normalisation of a PTB word: lower case, digit runs -> N.

    Use it on a language model's vocabulary so that it matches the words
    of `load_ptb`.

    Args:
        word: A word (str).

    Returns:
        `re.sub("[0-9]+", "N", word.lower())`.

    Example:

    >>> ptb_word_preprocess("Nov.")
    'nov.'
    >>> ptb_word_preprocess("$1,234.50")
    '$N,N.N'
    """
    if not isinstance(word, str):
        raise ValueError(f"Argument `word` must be a string, received: word={word!r}")
    return _DIGITS.sub("N", word.lower())


@contextlib.contextmanager
def _locate(resources, nltk_data, download):
    """Yields the first of `resources` found, with its data dir authorised."""
    if nltk_data is None:
        paths = list(nltk.data.path)
        added = None
    else:
        if not isinstance(nltk_data, (str, os.PathLike)):
            raise ValueError(
                "Argument `nltk_data` must be a directory path or None, "
                f"received: nltk_data={nltk_data!r}"
            )
        added = os.path.abspath(os.fspath(nltk_data))
        paths = [added]
        nltk.data.path.append(added)
    try:
        for resource in resources:
            try:
                found = nltk.data.find(resource, paths=paths)
            except LookupError:
                continue
            yield found
            return
        hint = f"python -m nltk.downloader {download}"
        if nltk_data is not None:
            hint += f" -d {added}"
        raise CorpusNotFoundError(
            f"Could not find {' or '.join(resources)} in "
            f"{'nltk_data=' + repr(added) if added else 'the NLTK data path'} "
            f"(searched: {', '.join(str(p) for p in paths) or 'nothing'}). "
            f"Get it with: {hint}"
        )
    finally:
        if added is not None:
            # Remove the entry appended above (the last equal one).
            for k in range(len(nltk.data.path) - 1, -1, -1):
                if nltk.data.path[k] == added:
                    del nltk.data.path[k]
                    break


def _max_length_arg(max_length):
    if max_length is None:
        return None
    return positive_int("max_length", max_length)


HALVES = ("dev", "test")
"""The two halves of a treebank sample. Sinica (`load_sinica(half=...)`),
one file: `"dev"` holds the sentences at even positions of the file (the
1st, 3rd, ...), `"test"` those at odd positions, counted before any is
left out. Penn Treebank (`load_ptb(half=...)`), split by file so that the
sentences of one document stay together: `"dev"` holds the files at even
positions of the sorted file ids (`wsj_0001.mrg`, `wsj_0003.mrg`, ... in
NLTK's sample), `"test"` those at odd positions (`wsj_0002.mrg`, ...)."""


def half_arg(half):
    """`half` checked: `None` (the whole treebank), `"dev"` or `"test"`."""
    if half is None:
        return None
    if half not in HALVES:
        raise ValueError(
            "Argument `half` must be one of 'dev', 'test' or None (the "
            f"whole treebank), received: half={half!r}")
    return half


def in_half(index, half):
    """Whether the item at position `index` (from 0) belongs to `half`
    (`None`: every item does): a Sinica sentence, in file order, or a PTB
    file, in sorted file-id order.

    >>> [i for i in range(5) if in_half(i, "dev")], [i for i in range(5) if in_half(i, "test")]
    ([0, 2, 4], [1, 3])
    """
    return half is None or index % 2 == HALVES.index(half)


def ptb_half_fileids(fileids, half):
    """The file ids of `half` of a Penn Treebank sample: of `fileids`
    sorted, those at even positions (from 0) for `"dev"`, at odd positions
    for `"test"`; all of them (sorted) for `None`.

    Args:
        fileids: Every file id of the sample (e.g. `reader.fileids()`).
        half: `"dev"`, `"test"` or `None`.

    >>> ids = ["wsj_0003.mrg", "wsj_0001.mrg", "wsj_0002.mrg"]
    >>> ptb_half_fileids(ids, "dev"), ptb_half_fileids(ids, "test")
    (['wsj_0001.mrg', 'wsj_0003.mrg'], ['wsj_0002.mrg'])
    """
    half = half_arg(half)
    return [f for i, f in enumerate(sorted(fileids)) if in_half(i, half)]


def _gold_sentences(nltk_trees, keep_leaf, max_length, half=None):
    out = []
    for index, t in enumerate(nltk_trees):
        if not in_half(index, half):
            continue
        tree = collapse_unary(t, keep_leaf)
        if tree is None:
            continue
        words = leaves(tree)
        if max_length is None or len(words) <= max_length:
            out.append(GoldSentence(words, tree))
    return out


def _ptb_leaf(tag, word):
    return ptb_word_preprocess(word) if tag in PTB_WORD_TAGS else None


def load_ptb(nltk_data=None, max_length=None, fileids=None, half=None):
    """Loads the WSJ Penn Treebank with the ON-LSTM paper's preprocessing.

    Reads `corpora/treebank/combined/*.mrg` (NLTK's 10% WSJ sample, or any
    `.mrg` files in that layout) with `BracketParseCorpusReader`, then, as
    the official ON-LSTM `data_ptb.py`:

    - keeps only the words whose tag is in `PTB_WORD_TAGS` (so punctuation,
      `-NONE-` traces and the constituents left empty disappear);
    - normalises them with `ptb_word_preprocess` (lower case, digits -> N);
    - collapses unary chains (a constituent with one child becomes it).

    Sentences left with no word are dropped (the NLTK sample has none).

    Args:
        nltk_data: NLTK data directory, or None for NLTK's data path.
        max_length: If given, keep only sentences of at most this many
            words after preprocessing (`10` gives the WSJ10 subset).
        fileids: None for all files, or a file id / list of file ids such
            as `"wsj_0001.mrg"`.
        half: `None` (every file), or one of two fixed halves of the
            sample, split by file so that a document's sentences stay
            together (`ptb_half_fileids`): `"dev"`, the files at even
            positions of the sorted file ids (`wsj_0001.mrg`,
            `wsj_0003.mrg`, ... in NLTK's sample), on which settings are
            chosen, and `"test"`, those at odd positions, held out. Not
            with `fileids`.

    Returns:
        List of `GoldSentence(words, tree)`, in corpus order.

    Raises:
        CorpusNotFoundError: if the treebank is not found.
        ValueError: for a bad `max_length` or `half`, an unknown file id,
            or both `fileids` and `half`.

    Example:

    >>> import pathlib, tempfile
    >>> data = pathlib.Path(tempfile.mkdtemp())
    >>> mrg = data / "corpora" / "treebank" / "combined" / "wsj_0001.mrg"
    >>> mrg.parent.mkdir(parents=True)
    >>> _ = mrg.write_text("( (S (NP (NNP Pierre) (CD 61)) (VP (VBD left)) (. .)) )")
    >>> load_ptb(nltk_data=data)
    [GoldSentence(words=['pierre', 'N', 'left'], tree=[['pierre', 'N'], 'left'])]
    """

    max_length = _max_length_arg(max_length)
    half = half_arg(half)
    if half is not None and fileids is not None:
        raise ValueError(
            "Give `fileids` or `half`, not both: `half` picks its own files, "
            f"received: fileids={fileids!r}, half={half!r}")
    resources = ("corpora/treebank/combined", "corpora/treebank")
    with _locate(resources, nltk_data, "treebank") as root:
        reader = BracketParseCorpusReader(root, r".*\.mrg")
        available = reader.fileids()
        if not available:
            raise CorpusNotFoundError(
                f"No .mrg file found in {root}. Get the sample with: "
                "python -m nltk.downloader treebank"
            )
        if fileids is None:
            fileids = (available if half is None
                       else ptb_half_fileids(available, half))
        else:
            if isinstance(fileids, str):
                fileids = [fileids]
            fileids = list(fileids)
            unknown = [f for f in fileids if f not in available]
            if unknown or not fileids:
                raise ValueError(
                    "Argument `fileids` must name files of the treebank "
                    f"(e.g. {available[0]!r}), received: fileids={fileids!r}"
                )
        return _gold_sentences(reader.parsed_sents(fileids), _ptb_leaf, max_length)


def _t2s_converter():
    opencc = require(
        "opencc", "zh", "load_sinica(to_simplified=True), which converts "
        "traditional to simplified characters,")
    return opencc.OpenCC("t2s").convert


def load_sinica(nltk_data=None, max_length=None, to_simplified=False,
                half=None):
    """Loads the Sinica Treebank sample (traditional Chinese) as gold trees.

    Reads `corpora/sinica_treebank/parsed` with NLTK's
    `SinicaTreebankCorpusReader`. The words are the treebank's own
    segmentation (the tree leaves). What the reader gives, and what is done:

    - The sentence-final punctuation (`#，(COMMACATEGORY)` etc.) is cut off
      by the reader itself; any leaf whose tag still ends in `CATEGORY` is
      dropped too (none in the NLTK sample).
    - The enumeration comma `、` is tagged `Caa` (a coordinating
      conjunction) and heads coordinations in the annotation, so it is kept
      as a word.
    - Labels are phrase categories (`S`, `NP`, `VP`, `GP`, `N‧的`, ...) and
      tags may carry features (`VC2[+NEG]`); labels are dropped anyway.
    - Unary chains are collapsed. There are no empty elements.

    Args:
        nltk_data: NLTK data directory, or None for NLTK's data path.
        max_length: If given, keep only sentences of at most this many words.
        to_simplified: Convert each word from traditional to simplified
            characters with OpenCC (`opencc.OpenCC("t2s")`; needs
            `pip install 'on-lstm-keras[zh]'`). The segmentation is kept.
        half: `None` (every sentence), or one of two fixed halves of the
            sample: `"dev"`, the sentences at even positions of the file
            (counting from 0, before any is left out), on which settings
            are chosen, and `"test"`, those at odd positions, held out.

    Returns:
        List of `GoldSentence(words, tree)`, in corpus order.

    Raises:
        CorpusNotFoundError: if the treebank is not found.
        MissingExtraError: (an `ImportError`) if `to_simplified=True` and
            opencc is not installed.

    Example:

    >>> import pathlib, tempfile
    >>> data = pathlib.Path(tempfile.mkdtemp())
    >>> parsed = data / "corpora" / "sinica_treebank" / "parsed"
    >>> parsed.parent.mkdir(parents=True)
    >>> _ = parsed.write_text(
    ...     "#1:1.[0] S(agent:NP(Head:Nhaa:我)|Head:VC2:打開|goal:NP("
    ...     "property:Nab:鐵|Head:Nab:門))#，(COMMACATEGORY)", encoding="utf-8")
    >>> load_sinica(nltk_data=data, to_simplified=True)
    [GoldSentence(words=['我', '打开', '铁', '门'], tree=['我', '打开', ['铁', '门']])]
    """

    max_length = _max_length_arg(max_length)
    half = half_arg(half)
    convert = _t2s_converter() if to_simplified else (lambda w: w)

    def keep_leaf(tag, word):
        # tag None: a word outside a preterminal has no tag.
        if tag is None or tag.endswith("CATEGORY"):
            return None
        return convert(word)

    with _locate(("corpora/sinica_treebank",), nltk_data, "sinica_treebank") as root:
        reader = SinicaTreebankCorpusReader(root, "parsed", encoding="utf-8")
        return _gold_sentences(reader.parsed_sents(), keep_leaf, max_length,
                               half)
