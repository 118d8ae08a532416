"""Span metrics, checked against spans and fractions worked out by hand."""

import math

import nltk
import pytest

from on_lstm_keras.parsing import corpus_prf
from on_lstm_keras.parsing import evaluate
from on_lstm_keras.parsing import sentence_prf
from on_lstm_keras.parsing import spans

# Five words a b c d e.
GOLD5 = [["a", "b"], ["c", ["d", "e"]]]  # spans (0,2) (2,5) (3,5), root (0,5)
PRED5 = [["a", "b", "c"], ["d", "e"]]  # spans (0,3) (3,5), root (0,5)
# Three words x y z.
GOLD3 = [["x", "y"], "z"]  # span (0,2), root (0,3)
PRED3 = ["x", ["y", "z"]]  # span (1,3), root (0,3)


def approx(x):
    return pytest.approx(x, abs=1e-12)


def test_spans_by_hand():
    assert spans(GOLD5) == {(0, 2), (2, 5), (3, 5)}
    assert spans(GOLD5, include_root=True) == {(0, 5), (0, 2), (2, 5), (3, 5)}
    assert spans(PRED5) == {(0, 3), (3, 5)}
    assert spans(["a", ["b", ["c", "d"]]]) == {(1, 4), (2, 4)}


def test_spans_small_trees():
    assert spans("a") == set()
    assert spans("a", include_root=True) == set()
    assert spans(["a", "b"]) == set()
    assert spans(["a", "b"], include_root=True) == {(0, 2)}
    assert spans(["a", "b", "c"]) == set()


def test_spans_unary_chain_counts_once():
    assert spans([[["a", "b"]], "c"]) == {(0, 2)}
    # unary chain at the top: the whole sentence is still left out
    assert spans([[["a", "b"], "c"]]) == {(0, 2)}


def test_spans_nltk_tree_with_preterminals():
    t = nltk.Tree.fromstring(
        "(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (NNS mats)))))"
    )
    # NP (0,2), VP (2,5), PP (3,5); (NP mats) and preterminals span one word.
    assert spans(t) == {(0, 2), (2, 5), (3, 5)}
    assert spans(t, include_root=True) == {(0, 5), (0, 2), (2, 5), (3, 5)}


def test_sentence_prf_two_thirds():
    pred = ["a", ["b", ["c", ["d", "e"]]]]  # (1,5) (2,5) (3,5)
    p, r, f = sentence_prf(pred, GOLD5)  # overlap (2,5) (3,5)
    assert (p, r, f) == (approx(2 / 3), approx(2 / 3), approx(2 / 3))


def test_sentence_prf_unequal_precision_recall():
    # overlap {(3,5)}: P = 1/2, R = 1/3, F = 2 * 1/2 * 1/3 / (1/2 + 1/3) = 2/5
    result = sentence_prf(PRED5, GOLD5)
    assert result.precision == approx(1 / 2)
    assert result.recall == approx(1 / 3)
    assert result.f1 == approx(2 / 5)


def test_sentence_prf_perfect_and_nltk_gold():
    assert tuple(sentence_prf(GOLD5, GOLD5)) == (1.0, 1.0, 1.0)
    gold = nltk.Tree.fromstring("(S (A a b) (B c (C d e)))")
    assert tuple(sentence_prf(GOLD5, gold)) == (1.0, 1.0, 1.0)


def test_sentence_prf_gold_without_spans():
    # two words: nothing to find on either side -> 1, 1, 1
    assert tuple(sentence_prf(["a", "b"], ["a", "b"])) == (1.0, 1.0, 1.0)
    # flat gold of three words, pred has (1,3): P = 0/1, R = 1 -> F = 0
    assert tuple(sentence_prf(["a", ["b", "c"]], ["a", "b", "c"])) == (0.0, 1.0, 0.0)


def test_sentence_prf_pred_without_spans():
    # flat pred, gold (0,2): P = 0 (nothing predicted), R = 0/1, F = 0
    assert tuple(sentence_prf(["x", "y", "z"], GOLD3)) == (0.0, 0.0, 0.0)


def test_sentence_prf_no_overlap():
    assert tuple(sentence_prf(PRED3, GOLD3)) == (0.0, 0.0, 0.0)


def test_length_mismatch_names_pred_and_gold():
    with pytest.raises(ValueError) as e:
        sentence_prf(["a", "b", "c"], ["a", ["b", "c", "d"]])
    msg = str(e.value)
    assert "`pred`" in msg and "`gold`" in msg and "3 words" in msg and "4 words" in msg
    with pytest.raises(ValueError, match=r"pair 1"):
        corpus_prf([(GOLD3, GOLD3), (["a", "b"], "a")])
    with pytest.raises(ValueError, match=r"`pred`.*pair 0"):
        evaluate([(["a", "b"], "a")])


def test_bad_tree_names_argument():
    with pytest.raises(ValueError, match=r"`gold`.*gold\[1\]=5"):
        sentence_prf(["a", "b"], ["a", 5])


def test_corpus_prf_two_sentences():
    # sentence 1, root included: pred {(0,5) (0,3) (3,5)}, gold {(0,5) (0,2)
    # (2,5) (3,5)}: 2 match. Sentence 2: pred {(0,3) (1,3)}, gold {(0,3) (0,2)}:
    # 1 match. P = 3/5, R = 3/6, F = 2 * 3/5 * 1/2 / (3/5 + 1/2) = 6/11.
    p, r, f = corpus_prf([(PRED5, GOLD5), (PRED3, GOLD3)])
    assert p == approx(3 / 5)
    assert r == approx(1 / 2)
    assert f == approx(6 / 11)


def test_corpus_prf_degenerate():
    assert tuple(corpus_prf([])) == (1.0, 1.0, 1.0)
    assert tuple(corpus_prf([("a", "a")])) == (1.0, 1.0, 1.0)


def test_evaluate_by_hand():
    pairs = [(PRED5, GOLD5), (PRED3, GOLD3), ("w", "w")]
    r = evaluate(iter(pairs))  # any iterable, read once
    assert r["sentences"] == 2
    assert r["skipped"] == 1
    # per sentence: (1/2, 1/3, 2/5) and (0, 0, 0); means in percent
    assert r["sentence_precision"] == approx(100 * (1 / 2) / 2)
    assert r["sentence_recall"] == approx(100 * (1 / 3) / 2)
    assert r["sentence_f1"] == approx(100 * (2 / 5) / 2)
    # corpus: as in test_corpus_prf_two_sentences, in percent
    assert r["corpus_precision"] == approx(60.0)
    assert r["corpus_recall"] == approx(50.0)
    assert r["corpus_f1"] == approx(600 / 11)


def test_evaluate_skips_short_gold_only():
    r = evaluate([("a", "a"), (["a", "b"], ["a", "b"])])
    assert (r["sentences"], r["skipped"]) == (1, 1)
    assert r["sentence_f1"] == 100.0 and r["corpus_f1"] == 100.0


def test_evaluate_nothing_scored():
    r = evaluate([])
    assert (r["sentences"], r["skipped"]) == (0, 0)
    assert math.isnan(r["sentence_f1"]) and math.isnan(r["corpus_f1"])


def message(call):
    with pytest.raises(ValueError) as e:
        call()
    return str(e.value)


def test_error_messages_name_the_argument_exactly():
    bad = ["a", 3]
    expected = ("Argument `{}` must be a word (str) or a nested list of words, "
                "received: {}[1]=3")
    assert message(lambda: spans(bad)) == expected.format("tree", "tree")
    for call in (lambda t: sentence_prf(t, ["a", "b"]),
                 lambda t: corpus_prf([(t, ["a", "b"])]),
                 lambda t: evaluate([(t, ["a", "b"])])):
        assert message(lambda: call(bad)) == expected.format("pred", "pred")
    for call in (lambda t: sentence_prf(["a", "b"], t),
                 lambda t: corpus_prf([(["a", "b"], t)]),
                 lambda t: evaluate([(["a", "b"], t)])):
        assert message(lambda: call(bad)) == expected.format("gold", "gold")
    assert message(lambda: sentence_prf(["a", "b"], ["a", "b", "c"])) == (
        "Arguments `pred` and `gold` must have the same number of words, "
        "received a `pred` tree of 2 words and a `gold` tree of 3 words")


def test_corpus_scores_with_no_span_on_one_side():
    # Root included: pred (0,3) (1,3), gold (0,3): P 1/2, R 1.
    assert corpus_prf([(["a", ["b", "c"]], ["a", "b", "c"])]) == (0.5, 1.0, 2 / 3)
    assert corpus_prf([("a", "a"), ("b", "b")]) == (1.0, 1.0, 1.0)
    # From the counts (overlap, predicted, gold): no gold span but some
    # predicted gives P 0, R 1; no predicted span gives P 0.
    from on_lstm_keras.parsing.metrics import _corpus_from_counts

    assert _corpus_from_counts(0, 3, 0) == (0.0, 1.0, 0.0)
    assert _corpus_from_counts(0, 0, 2) == (0.0, 0.0, 0.0)
    assert _corpus_from_counts(1, 2, 4) == (0.5, 0.25, 1 / 3)


def test_evaluate_counts_every_skipped_sentence():
    r = evaluate([("a", "a"), (["a", "b"], ["a", "b"]), ("b", "b")])
    assert (r["sentences"], r["skipped"]) == (1, 2)
