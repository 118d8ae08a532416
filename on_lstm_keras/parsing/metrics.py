"""Unlabelled span precision, recall and F1 between a predicted and a gold tree.

Trees are nested lists of words or `nltk.Tree`s. A constituent is
identified by its word span `(start, end)`, `end` exclusive, and only spans
of two or more words count (single words are always right).

Two conventions are reported, as in the unsupervised-parsing literature:

- sentence-level F1 (`sentence_prf`): the official ON-LSTM / PRPN script.
  The span of the whole sentence is left out, and F1 is computed per
  sentence, then averaged.
- corpus-level F1 (`corpus_prf`): the micro-averaged span F1, the whole
  sentence's span included: total matches over total predicted / gold.
  On unlabelled trees without unary chains this counts what EVALB counts
  (EVALB also counts the sentence's bracket), and the ON-LSTM paper's
  tables report EVALB's figure; but it is computed here in Python, not by
  the EVALB program (no length cutoff, no error limit, spans as a set).
"""

import math
from typing import NamedTuple

from on_lstm_keras.utils.validation import tree_arg


class PRF(NamedTuple):
    """Precision, recall and F1, as fractions in [0, 1]."""

    precision: float
    recall: float
    f1: float


def _spans_and_length(tree, name="tree"):
    tree_arg(name, tree)
    found = set()

    def walk(node, start):
        if isinstance(node, str):
            return start + 1
        end = start
        for child in node:
            end = walk(child, end)
        if end - start > 1:
            found.add((start, end))
        return end

    n = walk(tree, 0)
    return found, n


def spans(tree, include_root=False):
    """The set of word spans of a tree's constituents of two or more words.

    With `include_root=False` this is the `get_brackets` of the official
    ON-LSTM / PRPN evaluation, which collects the spans of the children of
    every node: the span `(0, n)` of the whole sentence is left out. (For a
    tree with a unary chain at the top, e.g. `(ROOT (S ...))`, the official
    code would keep `(0, n)` from the child `S`; here `(0, n)` is always left
    out. The two agree on trees whose unary chains are collapsed, such as
    the ones from `from_nltk` and the treebank loaders.) Duplicate spans from
    unary chains count once.

    Args:
        tree: A word, a nested list of words, or an `nltk.Tree` (a
            preterminal such as `(NN cat)` spans one word and so never
            counts).
        include_root: Whether to keep the span of the whole sentence.

    Returns:
        A set of `(start, end)` tuples, `end` exclusive.

    Example:

    >>> sorted(spans([["the", "cat"], ["sat", ["down", "here"]]]))
    [(0, 2), (2, 5), (3, 5)]
    >>> sorted(spans(["a", "b"], include_root=True))
    [(0, 2)]
    """
    found, n = _spans_and_length(tree)
    if not include_root:
        found.discard((0, n))
    return found


def _check_same_length(n_pred, n_gold, where=""):
    if n_pred != n_gold:
        raise ValueError(
            f"Arguments `pred` and `gold` must have the same number of words"
            f"{where}, received a `pred` tree of {n_pred} words and a `gold` "
            f"tree of {n_gold} words"
        )


def _f1(p, r):
    return 2.0 * p * r / (p + r) if p + r > 0 else 0.0


def sentence_prf(pred, gold):
    """Per-sentence unlabelled precision, recall and F1 (official ON-LSTM).

    Spans are `spans(tree, include_root=False)`.
    `precision = |pred & gold| / |pred|`, `recall = |pred & gold| / |gold|`.
    If gold has no span (sentences of one or two words), recall is 1, and
    precision is 1 too if pred has none either. An empty pred against a
    non-empty gold has precision 0. F1 is `2pr / (p + r)`, 0 when
    `p + r == 0`. The official script adds `1e-8` to each denominator;
    here the values are exact, which differs from it by less than `1e-7`.

    Args:
        pred: Predicted tree (nested list or `nltk.Tree`).
        gold: Gold tree over the same number of words.

    Returns:
        `PRF(precision, recall, f1)`, fractions in [0, 1].

    Raises:
        ValueError: if the trees have different numbers of words.

    Example:

    >>> gold = [["the", "cat"], ["sat", ["on", "mats"]]]
    >>> pred = [[["the", "cat"], "sat"], ["on", "mats"]]
    >>> sentence_prf(pred, gold)  # pred: (0,3) (0,2) (3,5); gold: (0,2) (2,5) (3,5)
    PRF(precision=0.6666666666666666, recall=0.6666666666666666, f1=0.6666666666666666)
    """
    pred_spans, n_pred = _spans_and_length(pred, "pred")
    gold_spans, n_gold = _spans_and_length(gold, "gold")
    _check_same_length(n_pred, n_gold)
    return _sentence_from_spans(pred_spans, gold_spans, n_gold)


def _sentence_from_spans(pred_spans, gold_spans, n):
    pred_spans = pred_spans - {(0, n)}
    gold_spans = gold_spans - {(0, n)}
    overlap = len(pred_spans & gold_spans)
    if not gold_spans:
        recall = 1.0
        precision = 1.0 if not pred_spans else 0.0
    else:
        recall = overlap / len(gold_spans)
        precision = overlap / len(pred_spans) if pred_spans else 0.0
    return PRF(precision, recall, _f1(precision, recall))


def _corpus_counts(pairs):
    n_overlap = n_pred = n_gold = 0
    for k, (pred, gold) in enumerate(pairs):
        pred_spans, np_ = _spans_and_length(pred, "pred")
        gold_spans, ng = _spans_and_length(gold, "gold")
        _check_same_length(np_, ng, f" (pair {k})")
        n_overlap += len(pred_spans & gold_spans)
        n_pred += len(pred_spans)
        n_gold += len(gold_spans)
    return n_overlap, n_pred, n_gold


def _corpus_from_counts(n_overlap, n_pred, n_gold):
    if n_gold == 0:
        recall = 1.0
        precision = 1.0 if n_pred == 0 else 0.0
    else:
        recall = n_overlap / n_gold
        precision = n_overlap / n_pred if n_pred else 0.0
    return PRF(precision, recall, _f1(precision, recall))


def corpus_prf(pairs):
    """Corpus-level unlabelled P, R and F1: micro-averaged over spans.

    Spans are `spans(tree, include_root=True)` (the whole sentence counts,
    as EVALB counts it; single words never do). Precision is the total number of
    matching spans over the total predicted, recall over the total gold.
    With no gold span at all, recall is 1, and precision is 1 if there is
    no predicted span either (else 0, as for an empty prediction).

    Args:
        pairs: Iterable of `(pred_tree, gold_tree)` pairs.

    Returns:
        `PRF(precision, recall, f1)`, fractions in [0, 1].

    Raises:
        ValueError: if a pair's trees have different numbers of words.

    Example:

    >>> corpus_prf([(["a", ["b", "c"]], [["a", "b"], "c"]),  # 1 of 2 match
    ...             (["a", "b"], ["a", "b"])])               # 1 of 1
    PRF(precision=0.6666666666666666, recall=0.6666666666666666, f1=0.6666666666666666)
    """
    return _corpus_from_counts(*_corpus_counts(pairs))


def evaluate(pairs):
    """Sentence-level and corpus-level unlabelled scores over a corpus.

    Pairs whose gold tree has fewer than two words are skipped (they have
    no span to find) and counted in `"skipped"`; all the scores are over
    the other pairs.

    Args:
        pairs: Iterable of `(pred_tree, gold_tree)` pairs.

    Returns:
        A dict with
        `"sentences"` (number of pairs scored), `"skipped"`,
        `"sentence_precision"`, `"sentence_recall"`, `"sentence_f1"`
        (means of the `sentence_prf` values) and `"corpus_precision"`,
        `"corpus_recall"`, `"corpus_f1"` (`corpus_prf`, micro-averaged
        over spans; the key keeps its old name), all scores in
        PERCENT. The scores are NaN when no pair is scored.

    Raises:
        ValueError: if a pair's trees have different numbers of words.

    Example:

    >>> r = evaluate([(["a", ["b", "c"]], [["a", "b"], "c"]),
    ...               (["a", "b"], ["a", "b"]),
    ...               ("a", "a")])
    >>> r["sentences"], r["skipped"], r["sentence_f1"], round(r["corpus_f1"], 2)
    (2, 1, 50.0, 66.67)
    """
    n_sent = n_skipped = 0
    sums = [0.0, 0.0, 0.0]
    counts = [0, 0, 0]
    for k, (pred, gold) in enumerate(pairs):
        pred_spans, n_pred = _spans_and_length(pred, "pred")
        gold_spans, n_gold = _spans_and_length(gold, "gold")
        _check_same_length(n_pred, n_gold, f" (pair {k})")
        if n_gold < 2:
            n_skipped += 1
            continue
        n_sent += 1
        counts[0] += len(pred_spans & gold_spans)
        counts[1] += len(pred_spans)
        counts[2] += len(gold_spans)
        for i, v in enumerate(_sentence_from_spans(pred_spans, gold_spans, n_gold)):
            sums[i] += v
    if n_sent == 0:
        nan = math.nan
        sentence, corpus = PRF(nan, nan, nan), PRF(nan, nan, nan)
    else:
        sentence = PRF(*(s / n_sent for s in sums))
        corpus = _corpus_from_counts(*counts)
    return {
        "sentences": n_sent,
        "skipped": n_skipped,
        "sentence_precision": 100.0 * sentence.precision,
        "sentence_recall": 100.0 * sentence.recall,
        "sentence_f1": 100.0 * sentence.f1,
        "corpus_precision": 100.0 * corpus.precision,
        "corpus_recall": 100.0 * corpus.recall,
        "corpus_f1": 100.0 * corpus.f1,
    }
