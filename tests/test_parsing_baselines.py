"""Baseline trees: exact shapes written out by hand for one to five words."""

import collections

import numpy as np
import pytest

from on_lstm_keras.parsing import balanced
from on_lstm_keras.parsing import baseline_tree
from on_lstm_keras.parsing import leaves
from on_lstm_keras.parsing import left_branching
from on_lstm_keras.parsing import random_tree
from on_lstm_keras.parsing import right_branching

W = ["w1", "w2", "w3", "w4", "w5"]

LEFT = {
    1: "w1",
    2: ["w1", "w2"],
    3: [["w1", "w2"], "w3"],
    4: [[["w1", "w2"], "w3"], "w4"],
    5: [[[["w1", "w2"], "w3"], "w4"], "w5"],
}
RIGHT = {
    1: "w1",
    2: ["w1", "w2"],
    3: ["w1", ["w2", "w3"]],
    4: ["w1", ["w2", ["w3", "w4"]]],
    5: ["w1", ["w2", ["w3", ["w4", "w5"]]]],
}
BALANCED = {
    1: "w1",
    2: ["w1", "w2"],
    3: ["w1", ["w2", "w3"]],
    4: [["w1", "w2"], ["w3", "w4"]],
    5: [["w1", "w2"], ["w3", ["w4", "w5"]]],
}


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_shapes(n):
    assert left_branching(W[:n]) == LEFT[n]
    assert right_branching(W[:n]) == RIGHT[n]
    assert balanced(W[:n]) == BALANCED[n]
    assert baseline_tree("left", W[:n]) == LEFT[n]
    assert baseline_tree("right", W[:n]) == RIGHT[n]
    assert baseline_tree("balanced", W[:n]) == BALANCED[n]


def test_balanced_seven():
    # 7 -> 3 + 4; 3 -> 1 + 2; 4 -> 2 + 2
    words = list("abcdefg")
    assert balanced(words) == [["a", ["b", "c"]], [["d", "e"], ["f", "g"]]]


def _is_binary(tree):
    if isinstance(tree, str):
        return True
    return len(tree) == 2 and _is_binary(tree[0]) and _is_binary(tree[1])


def test_random_small_and_valid():
    assert random_tree(["w1"], rng=0) == "w1"
    assert random_tree(W[:2], rng=0) == ["w1", "w2"]
    rng = np.random.default_rng(0)
    for n in range(1, 12):
        words = [f"w{i}" for i in range(n)]
        tree = random_tree(words, rng)
        assert _is_binary(tree)
        assert leaves(tree) == words


def test_random_seed_reproducible():
    words = [f"w{i}" for i in range(12)]
    assert random_tree(words, rng=7) == random_tree(words, rng=7)
    a = random_tree(words, np.random.default_rng(7))
    assert a == random_tree(words, rng=7)
    assert baseline_tree("random", words, rng=7) == a


def test_random_root_split_is_uniform():
    # Four words: the root splits after w1, w2 or w3, each with probability 1/3.
    rng = np.random.default_rng(123)
    counts = collections.Counter()
    for _ in range(3000):
        tree = random_tree(W[:4], rng)
        counts[len(leaves(tree[0]))] += 1
    assert set(counts) == {1, 2, 3}
    for k in (1, 2, 3):
        assert abs(counts[k] / 3000 - 1 / 3) < 0.04


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="`name`.*'middle'"):
        baseline_tree("middle", W)
    with pytest.raises(ValueError, match="`words`"):
        left_branching([])
    with pytest.raises(ValueError, match="`words`"):
        balanced("abc")
    with pytest.raises(ValueError, match="`rng`.*'x'"):
        random_tree(W, rng="x")
