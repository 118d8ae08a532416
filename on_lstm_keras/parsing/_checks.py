"""Argument checks shared by the parsing modules.

Like `on_lstm_keras._validation`, every check raises a `ValueError` that
names the argument and the value received.
"""

import nltk


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
    """True for an internal node: a list, a tuple or an `nltk.Tree`."""
    return isinstance(tree, (list, tuple, nltk.Tree))


def tree_arg(name, tree):
    """Raises unless `tree` is a word or a nested list/tuple/nltk.Tree of them.

    Checks the whole tree so that a bad leaf is reported with its path
    from the root, e.g. ``tree[1][0]=3``.
    """
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
    return tree
