"""Trivial binary trees over a word list, the reference points for parsing F1.

All trees are nested lists of words, as made by `distances_to_tree`; a
single word gives the word itself.
"""

import numbers

import numpy as np

from on_lstm_keras.utils.validation import choice
from on_lstm_keras.utils.validation import words_list

BASELINES = ("left", "right", "balanced", "random")


def left_branching(words):
    """The left-branching tree `(((w1 w2) w3) w4)`.

    Args:
        words: Non-empty sequence of words.

    Returns:
        The nested-list tree.

    Example:

    >>> left_branching(["a", "b", "c", "d"])
    [[['a', 'b'], 'c'], 'd']
    """
    words = words_list("words", words)
    tree = words[0]
    for w in words[1:]:
        tree = [tree, w]
    return tree


def right_branching(words):
    """The right-branching tree `(w1 (w2 (w3 w4)))`.

    Args:
        words: Non-empty sequence of words.

    Returns:
        The nested-list tree.

    Example:

    >>> right_branching(["a", "b", "c", "d"])
    ['a', ['b', ['c', 'd']]]
    """
    words = words_list("words", words)
    tree = words[-1]
    for w in reversed(words[:-1]):
        tree = [w, tree]
    return tree


def balanced(words):
    """The balanced tree: split into `words[:n // 2]` and `words[n // 2:]`.

    Each part is split the same way, recursively. With an odd number of
    words the right part is the larger one, so `n = 3` gives
    `(w1 (w2 w3))` and `n = 5` gives `((w1 w2) (w3 (w4 w5)))`.

    Args:
        words: Non-empty sequence of words.

    Returns:
        The nested-list tree.

    Example:

    >>> balanced(["a", "b", "c", "d", "e"])
    [['a', 'b'], ['c', ['d', 'e']]]
    """
    words = words_list("words", words)

    def build(lo, hi):
        if hi - lo == 1:
            return words[lo]
        mid = lo + (hi - lo) // 2
        return [build(lo, mid), build(mid, hi)]

    return build(0, len(words))


def _rng_arg(rng):
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (
        isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0
    ):
        return np.random.default_rng(rng)
    raise ValueError(
        "Argument `rng` must be a numpy Generator, a non-negative integer "
        f"seed or None, received: rng={rng!r}"
    )


def random_tree(words, rng=None):
    """A random binary tree: split at a uniformly random point, recursively.

    Each span of `m >= 2` words is split after one of its first `m - 1`
    words, each with probability `1 / (m - 1)`, and both parts are split
    the same way. (This is not uniform over tree shapes.)

    Args:
        words: Non-empty sequence of words.
        rng: A `numpy.random.Generator`, an integer seed, or `None` for a
            fresh unseeded generator.

    Returns:
        The nested-list tree.

    Example:

    >>> t = random_tree(["a", "b", "c", "d"], rng=0)
    >>> t == random_tree(["a", "b", "c", "d"], rng=0)
    True
    >>> random_tree(["a", "b"], rng=0)
    ['a', 'b']
    """
    words = words_list("words", words)
    rng = _rng_arg(rng)

    def build(lo, hi):
        if hi - lo == 1:
            return words[lo]
        mid = int(rng.integers(lo + 1, hi))
        return [build(lo, mid), build(mid, hi)]

    return build(0, len(words))


def baseline_tree(name, words, rng=None):
    """One of the baseline trees, by name.

    Args:
        name: `"left"`, `"right"`, `"balanced"` or `"random"`.
        words: Non-empty sequence of words.
        rng: Generator or seed, used by `"random"` only.

    Returns:
        The nested-list tree.

    Raises:
        ValueError: if `name` is unknown.

    Example:

    >>> baseline_tree("right", ["a", "b", "c"])
    ['a', ['b', 'c']]
    """
    choice("name", name, BASELINES)
    if name == "left":
        return left_branching(words)
    if name == "right":
        return right_branching(words)
    if name == "balanced":
        return balanced(words)
    return random_tree(words, rng)
