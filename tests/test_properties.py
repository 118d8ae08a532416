"""Properties that hold for every input, checked on generated ones
(hypothesis): trees from distances, span F1, the baselines, bracket
strings, the vocabulary and BPTT batching."""

import numpy as np
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from on_lstm_keras.data import BPTTSequence
from on_lstm_keras.data import Vocabulary
from on_lstm_keras.data import batchify
from on_lstm_keras.parsing import balanced
from on_lstm_keras.parsing import corpus_prf
from on_lstm_keras.parsing import distances_to_tree
from on_lstm_keras.parsing import evaluate
from on_lstm_keras.parsing import from_brackets
from on_lstm_keras.parsing import leaves
from on_lstm_keras.parsing import left_branching
from on_lstm_keras.parsing import random_tree
from on_lstm_keras.parsing import right_branching
from on_lstm_keras.parsing import sentence_prf
from on_lstm_keras.parsing import spans
from on_lstm_keras.parsing import to_brackets

# No test here reaches a Keras backend's code: trees, F1, the baselines,
# brackets and the vocabulary are NumPy and plain Python, and BPTTSequence
# slices NumPy arrays (its Keras base class only drives it). CI runs them
# once, on TensorFlow.

FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

# Words that can be written in brackets: no whitespace, no parentheses.
word = st.text(
    st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc"),
                  blacklist_characters="()"),
    min_size=1, max_size=4)
sentence = st.lists(word, min_size=1, max_size=12)
distances = st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=12)


@st.composite
def words_and_distances(draw):
    d = draw(distances)
    words = [f"w{i}" for i in range(len(d))]
    # Ties are the interesting case for "first maximum": draw some.
    if draw(st.booleans()):
        d = [round(x) for x in d]
    return words, d


@st.composite
def trees(draw, max_words=10):
    """Any tree: nested lists of two or more children, distinct leaves."""
    n = draw(st.integers(1, max_words))
    words = [f"w{i}" for i in range(n)]

    def build(lo, hi):
        if hi - lo == 1:
            return words[lo]
        cuts = sorted(draw(st.sets(st.integers(lo + 1, hi - 1), min_size=1,
                                   max_size=min(3, hi - lo - 1))))
        bounds = [lo, *cuts, hi]
        return [build(a, b) for a, b in zip(bounds, bounds[1:])]

    return build(0, n)


def is_binary(tree):
    return isinstance(tree, str) or (
        len(tree) == 2 and all(is_binary(child) for child in tree))


def depth_first_spans(tree):
    """Every constituent's (start, end), the root's included, singletons too."""
    out = []

    def walk(node, start):
        if isinstance(node, str):
            return start + 1
        end = start
        for child in node:
            end = walk(child, end)
        out.append((start, end))
        return end

    walk(tree, 0)
    return out


@FAST
@given(words_and_distances(), st.sampled_from(["official", "plain"]))
def test_tree_from_distances_keeps_the_words_in_order_and_is_binary(case, tree_rule):
    words, d = case
    tree = distances_to_tree(words, d, tree_rule=tree_rule)
    assert leaves(tree) == words
    assert is_binary(tree)
    # A binary tree over n words has n - 1 constituents.
    assert len(depth_first_spans(tree)) == len(words) - 1


@FAST
@given(words_and_distances())
def test_official_split_puts_the_largest_distance_at_the_top(case):
    words, d = case
    tree = distances_to_tree(words, d)
    if len(words) == 1:
        return
    top = int(np.argmax(d))
    # [left, [w_top, right]], [w_top, right] or [left, w_top]:
    right_part = tree if top == 0 else tree[1]
    first = right_part if isinstance(right_part, str) else right_part[0]
    assert first == words[top]


@FAST
@given(trees())
def test_a_tree_scored_against_itself_is_perfect(tree):
    assert sentence_prf(tree, tree).f1 == 1.0
    assert corpus_prf([(tree, tree)]).f1 == 1.0
    if len(leaves(tree)) >= 2:
        result = evaluate([(tree, tree)])
        assert result["sentence_f1"] == 100.0 and result["corpus_f1"] == 100.0


@FAST
@given(trees(), trees())
def test_f1_is_symmetric_in_pred_and_gold(a, b):
    n = min(len(leaves(a)), len(leaves(b)))
    if len(leaves(a)) != len(leaves(b)) or n < 2:
        return
    pa, pb = corpus_prf([(a, b)]), corpus_prf([(b, a)])
    assert pa.f1 == pytest.approx(pb.f1)
    assert pa.precision == pytest.approx(pb.recall)


@FAST
@given(sentence)
def test_baselines_have_their_defining_shapes(words):
    n = len(words)
    left, right, bal = left_branching(words), right_branching(words), balanced(words)
    for tree in (left, right, bal):
        assert leaves(tree) == words and is_binary(tree)
    # Left-branching: every constituent starts at 0; right: ends at n.
    assert sorted(spans(left, include_root=True)) == [(0, k) for k in range(2, n + 1)]
    assert sorted(spans(right, include_root=True)) == [(k, n) for k in range(n - 1)]
    # Balanced: each constituent splits at its middle (the right part the larger).
    def check(node, lo, hi):
        if hi - lo == 1:
            assert isinstance(node, str)
            return
        mid = lo + (hi - lo) // 2
        check(node[0], lo, mid)
        check(node[1], mid, hi)

    check(bal, 0, n)


@FAST
@given(sentence, st.integers(0, 2**32 - 1))
def test_random_trees_are_binary_seeded_and_keep_the_words(words, seed):
    a = random_tree(words, rng=np.random.default_rng(seed))
    b = random_tree(words, rng=np.random.default_rng(seed))
    assert a == b and leaves(a) == words and is_binary(a)


@FAST
@given(trees())
def test_brackets_round_trip(tree):
    text = to_brackets(tree)
    assert from_brackets(text) == tree
    assert to_brackets(from_brackets(text)) == text


@FAST
@given(sentence)
def test_brackets_round_trip_any_words(words):
    tree = right_branching(words)
    assert from_brackets(to_brackets(tree)) == tree


@FAST
@given(st.lists(st.lists(word, min_size=1, max_size=8), min_size=1, max_size=6),
       st.integers(1, 3))
def test_vocabulary_encode_decode(sentences, min_count):
    vocab = Vocabulary.build(sentences, min_count=min_count)
    counts = {}
    for s in sentences:
        for w in s:
            counts[w] = counts.get(w, 0) + 1
    specials = {"<pad>", "<unk>", "<eos>"}
    kept = {w for w, n in counts.items() if n >= min_count and w not in specials}
    assert set(vocab.words[3:]) == kept
    for s in sentences:
        ids = vocab.encode(s)
        assert vocab.decode(ids) == [w if w in kept else "<unk>" for w in s]
    stream = vocab.encode_sentences(sentences)
    assert len(stream) == sum(len(s) + 1 for s in sentences)
    assert stream.count(vocab.eos_id) >= len(sentences)


@FAST
@given(st.integers(4, 200), st.integers(1, 6), st.integers(1, 30),
       st.booleans(), st.integers(0, 3))
def test_bptt_batches_cover_every_target_once(n, batch_size, bptt, variable, epoch):
    if n < 2 * batch_size:
        return
    ids = np.arange(1, n + 1)
    data = BPTTSequence(ids, batch_size, bptt, variable_length=variable, seed=7)
    data.set_epoch(epoch)
    rows = batchify(ids, batch_size)
    seen_x, seen_y = [], []
    for k in range(len(data)):
        x, y, w = data[k]
        real = w.astype(bool)
        # Weight 1 exactly where there is a token; padding is id 0.
        assert np.all(x[~real] == 0) and np.all(y[~real] == 0)
        assert np.all(real == real[:1])  # every row has the same length
        seen_x.append(x[:, real[0]])
        seen_y.append(y[:, real[0]])
    x_all, y_all = np.concatenate(seen_x, 1), np.concatenate(seen_y, 1)
    # Every token but each row's last is read once, in order, and every
    # token but each row's first is a target once.
    np.testing.assert_array_equal(x_all, rows[:, :-1])
    np.testing.assert_array_equal(y_all, rows[:, 1:])
