"""The trees each tree rule can reach: the exact set of binary trees over
`n` words that `distances_to_tree` builds from some distances.

Dyer, Melis and Blunsom (2019, §4) show that the official rule's
`[left, [w_i, right]]` form reaches only a fraction of the binary trees,
and that what it reaches leans to the right. Here the sets are exact: with
distinct distances only their order matters, and each rule's recursion
splits a span at one position and reads the parts on each side of it
alone, so the reachable trees of a span are the union, over the positions
the rule may split at, of every combination of the parts' reachable trees
(ties add nothing: the first maximum wins, as under the strict order that
ranks an earlier tied word higher). The `plain` rule may split any span at
any inner boundary and so reaches every binary tree (a Catalan number of
them); the `official` rule's reach is smaller from five words on.
"""

import functools

from on_lstm_keras.parsing.trees import TREE_RULES
from on_lstm_keras.parsing.trees import to_brackets
from on_lstm_keras.parsing.trees import tree_rule_arg
from on_lstm_keras.utils import validation as check

# Beyond this the sets grow past what is worth holding (the Catalan number
# of 13 words is 208012).
MAX_WORDS = 13


@functools.lru_cache(maxsize=None)
def _official(lo, hi):
    """The official rule's trees over words `lo..hi-1`, as nested tuples
    of word positions."""
    if hi - lo == 1:
        return frozenset([lo])
    out = set()
    for i in range(lo, hi):
        nodes = ([i] if i + 1 == hi
                 else [(i, right) for right in _official(i + 1, hi)])
        if i == lo:
            out.update(nodes)
        else:
            out.update((left, node) for left in _official(lo, i)
                       for node in nodes)
    return frozenset(out)


@functools.lru_cache(maxsize=None)
def _plain(lo, hi):
    """The plain rule's trees over words `lo..hi-1`: a split at any inner
    boundary `j` (the largest distance after the span's first word)."""
    if hi - lo == 1:
        return frozenset([lo])
    return frozenset((left, right) for j in range(lo + 1, hi)
                     for left in _plain(lo, j) for right in _plain(j, hi))


def _as_words(node, words):
    if isinstance(node, int):
        return words[node]
    return [_as_words(child, words) for child in node]


def reachable_trees(n, tree_rule="official", words=None):
    """Every binary tree over `n` words that `distances_to_tree` builds with
    `tree_rule` from some distances.

    Args:
        n: The number of words, 1 to `MAX_WORDS` (13).
        tree_rule: `"official"` (default) or `"plain"`.
        words: The `n` words of the trees; default `"0"`, `"1"`, ….

    Returns:
        The trees (nested lists of the words), sorted by their
        `to_brackets` string, each once.

    Example:

    >>> reachable_trees(3)
    [[['0', '1'], '2'], ['0', ['1', '2']]]
    >>> len(reachable_trees(5)), len(reachable_trees(5, "plain"))
    (13, 14)
    """
    n = check.positive_int("n", n)
    if n > MAX_WORDS:
        raise ValueError(
            f"Argument `n` must be at most {MAX_WORDS} (the sets are "
            f"enumerated), received: n={n}")
    tree_rule = tree_rule_arg(tree_rule)
    if words is None:
        words = [str(k) for k in range(n)]
    elif len(words) != n:
        raise ValueError(
            f"Argument `words` must hold n={n} words, received "
            f"{len(words)}: words={words!r}")
    build = _official if tree_rule == "official" else _plain
    trees = [_as_words(node, list(words)) for node in build(0, n)]
    return sorted(trees, key=to_brackets)


def reach_counts(sizes=range(2, 11), tree_rules=TREE_RULES):
    """How many binary trees each tree rule reaches, per sentence length.

    Args:
        sizes: Sentence lengths (default 2 to 10).
        tree_rules: The rules (default both).

    Returns:
        `{tree_rule: {n: count}}`; `"plain"`'s counts are the Catalan
        numbers `C(n − 1)`, every binary tree.

    Example:

    >>> reach_counts(range(2, 7))
    {'official': {2: 1, 3: 2, 4: 5, 5: 13, 6: 35}, 'plain': {2: 1, 3: 2, 4: 5, 5: 14, 6: 42}}
    """
    return {rule: {n: len(reachable_trees(n, rule)) for n in sizes}
            for rule in (tree_rule_arg(r) for r in tree_rules)}
