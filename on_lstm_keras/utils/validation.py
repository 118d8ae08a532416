"""Argument checks shared by the package's layers, models, parser and tools.

Every check raises a `ValueError` that names the argument and the value
received, so that a bad call is fixed from the message alone. The last
three check the parser's word lists and nested-list trees.
"""

import math
import numbers


def boolean(name, value):
    """Returns `value` if it is `True` or `False`, else raises
    `ValueError`."""
    if not isinstance(value, bool):
        raise ValueError(
            f"Argument `{name}` must be True or False, "
            f"received: {name}={value!r}"
        )
    return value


def positive_int(name, value):
    """Returns `value` if it is an integer > 0, else raises `ValueError`."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or value <= 0
    ):
        raise ValueError(
            f"Argument `{name}` must be a positive integer, "
            f"received: {name}={value!r}"
        )
    return int(value)


def non_negative_int(name, value):
    """Returns `value` if it is an integer >= 0, else raises `ValueError`."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or value < 0
    ):
        raise ValueError(
            f"Argument `{name}` must be a non-negative integer, "
            f"received: {name}={value!r}"
        )
    return int(value)


def positive_float(name, value):
    """Returns `value` as a float if it is a finite number > 0, else raises."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(float(value))
        or value <= 0
    ):
        raise ValueError(
            f"Argument `{name}` must be a finite number > 0, "
            f"received: {name}={value!r}"
        )
    return float(value)


def non_negative_float(name, value):
    """Returns `value` as a float if it is a finite number >= 0, else raises."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(float(value))
        or value < 0
    ):
        raise ValueError(
            f"Argument `{name}` must be a finite number >= 0, "
            f"received: {name}={value!r}"
        )
    return float(value)


def rate(name, value):
    """Returns `value` as a float if it lies in [0, 1), else raises."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(
            f"Argument `{name}` must be a float in [0, 1), "
            f"received: {name}={value!r}"
        )
    if not 0.0 <= float(value) < 1.0:
        raise ValueError(
            f"Argument `{name}` must be in [0, 1), received: {name}={value!r}"
        )
    return float(value)


def choice(name, value, choices):
    """Returns `value` if it is one of `choices`, else raises."""
    if value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(
            f"Argument `{name}` must be one of {allowed}, "
            f"received: {name}={value!r}"
        )
    return value


def words_list(name, words):
    """Returns `words` as a list of strings, non-empty, else raises."""
    if isinstance(words, str) or not hasattr(words, "__iter__"):
        raise ValueError(
            f"Argument `{name}` must be a sequence of strings, "
            f"received: {name}={words!r}"
        )
    words = list(words)
    if not words:
        raise ValueError(
            f"Argument `{name}` must contain at least one word, "
            f"received: {name}={words!r}"
        )
    for i, w in enumerate(words):
        if not isinstance(w, str):
            raise ValueError(
                f"Argument `{name}` must hold strings only, received: "
                f"{name}[{i}]={w!r}"
            )
    return words


def is_node(tree):
    """True for an internal node of a tree: a list, a tuple or an
    `nltk.Tree` (which is a list)."""
    return isinstance(tree, (list, tuple))


def tree_arg(name, tree):
    """Raises unless `tree` is a word or a nested list/tuple/nltk.Tree of them.

    Checks the whole tree so that a bad leaf is reported with its path
    from the root, e.g. ``tree[1][0]=3``.
    """
    # A plain walk first (scoring checks every tree it reads); the paths
    # are only spelled out for a tree that fails.
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            continue
        if not is_node(node) or len(node) == 0:
            _raise_bad_tree(name, tree)
        stack.extend(node)
    return tree


def _raise_bad_tree(name, tree):
    """Raises the `ValueError` for the first bad node of `tree` that
    `tree_arg`'s walk meets, naming its path from the root."""
    stack = [(tree, name)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            continue
        if not is_node(node):
            raise ValueError(
                f"Argument `{name}` must be a word (str) or a nested list of "
                f"words, received: {where}={node!r}"
            )
        if len(node) == 0:
            raise ValueError(
                f"Argument `{name}` must not contain empty constituents, "
                f"received: {where}={node!r}"
            )
        stack.extend((child, f"{where}[{i}]") for i, child in enumerate(node))
