"""Binary trees from ON-LSTM split distances, and conversions between formats.

A tree here is a plain nested list of words: a word (`str`) is a leaf, a
list is a constituent whose items are its children, in order. A
one-word sentence is the word itself, not a one-item list. This is the
format of the official ON-LSTM code, and it goes to JSON as is.
`nltk.Tree` (an `nltk.Tree` is a `list` too) is the format for labelled
trees; `to_nltk` and `from_nltk` convert.
"""

import json
import re

import nltk
import numpy as np

from on_lstm_keras.utils.validation import choice
from on_lstm_keras.utils.validation import is_node
from on_lstm_keras.utils.validation import tree_arg
from on_lstm_keras.utils.validation import words_list

TREE_RULES = ("official", "plain")


def _is_nltk_tree(node):
    """`isinstance(node, nltk.Tree)`."""
    return isinstance(node, nltk.Tree)


def tree_rule_arg(tree_rule):
    """Returns `tree_rule` checked: `"official"` or `"plain"` (else a
    `ValueError` naming it)."""
    return choice("tree_rule", tree_rule, TREE_RULES)


def _distances_arg(distances, n_words):
    try:
        d = np.asarray(distances, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            "Argument `distances` must be a sequence of numbers, "
            f"received: distances={distances!r}"
        ) from None
    if d.ndim != 1:
        raise ValueError(
            "Argument `distances` must be one-dimensional (one number per "
            f"word), received shape {d.shape}: distances={distances!r}"
        )
    if len(d) != n_words:
        raise ValueError(
            "Arguments `words` and `distances` must have the same length, "
            f"received len(words)={n_words} and len(distances)={len(d)}"
        )
    if not np.all(np.isfinite(d)):
        raise ValueError(
            "Argument `distances` must hold finite numbers, "
            f"received: distances={distances!r}"
        )
    return d


def distances_to_tree(words, distances, tree_rule="official"):
    """Builds a binary tree by greedy top-down splits at the largest distance.

    At each step the word `w_i` with the largest distance in the current
    span is found (the first one on ties, as `numpy.argmax`), and the span
    is split there.

    - `tree_rule="official"` reproduces the official ON-LSTM code
      (`build_tree` in `test_phrase_grammar.py`): the tree is
      `[tree(left), [w_i, tree(right)]]`, where an empty left part is left
      out (giving `[w_i, tree(right)]`) and an empty right part leaves `w_i`
      alone (giving `[tree(left), w_i]`). `w_i` always joins the words to
      its right first.
    - `tree_rule="plain"`: the tree is `[tree(x_<i), tree(x_>=i)]`, i.e. `d_i`
      is read as the boundary just before word `i`, and word `i` starts the
      right part. Since the boundary before the first word of a span would
      leave the left part empty, the first word's distance is never used
      there: when the maximum is at the span's first position the argmax is
      taken over the remaining positions (first maximum again).

    Args:
        words: Sequence of `n >= 1` words (strings).
        distances: Sequence or 1-D array of `n` finite numbers, e.g. the
            ON-LSTM master-forget distances `d_f` of the words.
        tree_rule: `"official"` (default) or `"plain"`, see above.

    Returns:
        A nested-list binary tree of the words; a single word for `n == 1`.

    Raises:
        ValueError: if `words` is empty or not strings, the lengths differ,
            a distance is not finite, or `tree_rule` is unknown.

    Example:

    >>> distances_to_tree(["a", "b", "c", "d"], [0.1, 0.9, 0.3, 0.5])
    ['a', ['b', ['c', 'd']]]
    >>> distances_to_tree(["a", "b", "c", "d"], [0.1, 0.9, 0.3, 0.5],
    ...                   tree_rule="plain")
    ['a', [['b', 'c'], 'd']]
    """
    tree_rule = tree_rule_arg(tree_rule)
    words = words_list("words", words)
    d = _distances_arg(distances, len(words))

    # The first maximum of `d[lo:hi]`, as `numpy.argmax` finds it, over a
    # list: for spans of a few words this is several times faster.
    d = d.tolist()

    def first_max(lo, hi):
        return max(range(lo, hi), key=d.__getitem__)

    def official(lo, hi):
        if hi - lo == 1:
            return words[lo]
        i = first_max(lo, hi)
        node = words[i] if i + 1 == hi else [words[i], official(i + 1, hi)]
        if i == lo:
            return node
        return [official(lo, i), node]

    def plain(lo, hi):
        if hi - lo == 1:
            return words[lo]
        i = first_max(lo, hi)
        if i == lo:
            i = first_max(lo + 1, hi)
        return [plain(lo, i), plain(i, hi)]

    build = official if tree_rule == "official" else plain
    return build(0, len(words))


def mirror_tree(tree):
    """The tree read right to left: the children of every node reversed.

    The mirror of a right-branching tree is left-branching; a span
    `(i, j)` of an `n`-word tree becomes `(n − j, n − i)`. Scoring a model
    on mirrored sentences (`mirror_sentence`) shows how much of its F1 a
    parser's bias towards one branching direction gives it (Dyer, Melis
    and Blunsom 2019).

    Args:
        tree: A word, a nested list of words, or an `nltk.Tree` (whose
            labels are kept).

    Returns:
        The mirrored tree, of the same kind; mirroring it again gives
        `tree` back.

    Example:

    >>> mirror_tree(["a", ["b", ["c", "d"]]])
    [[['d', 'c'], 'b'], 'a']
    >>> mirror_tree("a")
    'a'
    """
    tree_arg("tree", tree)

    def walk(node):
        if isinstance(node, str):
            return node
        children = [walk(child) for child in reversed(node)]
        if _is_nltk_tree(node):
            return nltk.Tree(node.label(), children)
        return children

    return walk(tree)


def leaves(tree):
    """The words of a tree, left to right.

    Args:
        tree: A word, a nested list of words, or an `nltk.Tree`.

    Returns:
        List of the leaf strings.

    Example:

    >>> leaves([["the", "cat"], ["sat", "down"]])
    ['the', 'cat', 'sat', 'down']
    >>> leaves("hello")
    ['hello']
    """
    tree_arg("tree", tree)
    out = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            out.append(node)
        else:
            stack.extend(reversed(node))
    return out


def to_nltk(tree, label="X", leaf_label=None):
    """Converts a nested-list tree to an `nltk.Tree`.

    Args:
        tree: A word or a nested list of words (an `nltk.Tree` is accepted
            too; its labels are replaced).
        label: Label of every constituent. Default: `"X"`.
        leaf_label: If given, every word is wrapped in a preterminal
            `Tree(leaf_label, [word])`; if `None` (default) the words are
            the children of the constituents directly.

    Returns:
        An `nltk.Tree`. A single word `w` gives `Tree(label, [w])`.

    Example:

    >>> print(to_nltk([["the", "cat"], "sat"]))
    (X (X the cat) sat)
    >>> print(to_nltk(["the", "cat"], label="S", leaf_label="W"))
    (S (W the) (W cat))
    """
    tree_arg("tree", tree)

    def convert(node):
        if isinstance(node, str):
            return node if leaf_label is None else nltk.Tree(leaf_label, [node])
        return nltk.Tree(label, [convert(child) for child in node])

    if isinstance(tree, str):
        return nltk.Tree(label, [convert(tree)])
    return convert(tree)


def collapse_unary(tree, keep_word=None):
    """Labels dropped, words filtered, empty constituents dropped, unary
    chains collapsed: the one reduction of a labelled tree to a nested list.

    Every preterminal (a constituent whose single child is a word, such as
    `(NN cat)`) and every word outside one becomes `keep_word(tag, word)`:
    the word to keep, or `None` to drop it. `tag` is the preterminal's
    label, `None` for a plain list or a word outside a preterminal. Then a
    constituent left without words is dropped, and one left with a single
    child becomes that child.

    Args:
        tree: An `nltk.Tree`, a nested list, or a word.
        keep_word: `keep_word(tag, word) -> word or None`; default keeps
            every word as it is.

    Returns:
        A word or a nested list of words in which every list has at least
        two children; `None` when no word is kept.

    Raises:
        ValueError: if the tree holds something that is neither a word nor
            a subtree.

    Example:

    >>> import nltk
    >>> t = nltk.Tree.fromstring("(S (NP (DT the) (NN cat)) (VP (VBD sat)) (. .))")
    >>> collapse_unary(t)
    [['the', 'cat'], 'sat', '.']
    >>> collapse_unary(t, lambda tag, word: None if tag == "." else word)
    [['the', 'cat'], 'sat']
    """
    if keep_word is None:
        def keep_word(tag, word):
            return word

    def walk(node):
        if isinstance(node, str):
            return keep_word(None, node)
        if not is_node(node):
            raise ValueError(
                "Argument `tree` must hold words (str) and subtrees only, "
                f"received a child {node!r} in tree={tree!r}"
            )
        if len(node) == 1 and isinstance(node[0], str):
            tag = node.label() if _is_nltk_tree(node) else None
            return keep_word(tag, node[0])
        children = [c for c in map(walk, node) if c is not None]
        if not children:
            return None
        return children[0] if len(children) == 1 else children

    return walk(tree)


def from_nltk(tree):
    """Converts an `nltk.Tree` to a nested-list tree of its words.

    Labels are dropped, constituents without words are dropped, and unary
    chains are collapsed: a constituent with a single child becomes that
    child (so a preterminal `(NN cat)` becomes `"cat"`). Plain nested lists
    are accepted too, and come back with the same normalisation. This is
    `collapse_unary` keeping every word.

    Args:
        tree: An `nltk.Tree`, a nested list, or a word.

    Returns:
        A word or a nested list of words in which every list has at least
        two children.

    Raises:
        ValueError: if the tree holds no word at all.

    Example:

    >>> import nltk
    >>> from_nltk(nltk.Tree.fromstring("(S (NP (DT the) (NN cat)) (VP (VBD sat)))"))
    [['the', 'cat'], 'sat']
    """
    if not (isinstance(tree, str) or is_node(tree)):
        raise ValueError(
            "Argument `tree` must be an nltk.Tree, a nested list or a word, "
            f"received: tree={tree!r}"
        )
    out = collapse_unary(tree)
    if out is None:
        raise ValueError(f"Argument `tree` holds no word, received: tree={tree!r}")
    return out


_BAD_LEAF = re.compile(r"[\s()]")


def to_brackets(tree):
    """Writes a tree as an unlabelled bracketing string.

    Args:
        tree: A word or a nested list of words (words must not contain
            whitespace or parentheses, which would make the string
            ambiguous).

    Returns:
        A string such as `"((the cat) (sat down))"`; a single word is
        written as itself.

    Raises:
        ValueError: if a word contains whitespace or a parenthesis.

    Example:

    >>> to_brackets([["the", "cat"], ["sat", "down"]])
    '((the cat) (sat down))'
    >>> to_brackets("hi")
    'hi'
    """
    tree_arg("tree", tree)

    def write(node):
        if isinstance(node, str):
            if not node or _BAD_LEAF.search(node):
                raise ValueError(
                    "Argument `tree` has a word that cannot be written in "
                    "brackets (empty, or with whitespace or parentheses), "
                    f"received word {node!r}"
                )
            return node
        return "(" + " ".join(write(child) for child in node) + ")"

    return write(tree)


_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def from_brackets(s):
    """Reads an unlabelled bracketing string, the inverse of `to_brackets`.

    Every parenthesised group becomes a list (a one-item group `(a)` becomes
    the one-item list `["a"]`, so the structure is kept exactly); anything
    else separated by whitespace is a word.

    Args:
        s: A string such as `"((the cat) (sat down))"` or a single word.

    Returns:
        The nested-list tree.

    Raises:
        ValueError: if the parentheses do not balance, a group is empty, or
            the string holds more (or less) than one tree.

    Example:

    >>> from_brackets("((the cat) (sat down))")
    [['the', 'cat'], ['sat', 'down']]
    >>> from_brackets("hi")
    'hi'
    """
    if not isinstance(s, str):
        raise ValueError(f"Argument `s` must be a string, received: s={s!r}")
    tokens = _TOKEN.findall(s)
    stack = [[]]
    for tok in tokens:
        if tok == "(":
            stack.append([])
        elif tok == ")":
            if len(stack) == 1:
                raise ValueError(f"Argument `s` has an unmatched ')', received: s={s!r}")
            group = stack.pop()
            if not group:
                raise ValueError(f"Argument `s` has an empty group '()', received: s={s!r}")
            stack[-1].append(group)
        else:
            stack[-1].append(tok)
    if len(stack) != 1:
        raise ValueError(f"Argument `s` has an unmatched '(', received: s={s!r}")
    if len(stack[0]) != 1:
        raise ValueError(
            "Argument `s` must hold exactly one tree (wrap several in one "
            f"pair of parentheses), received: s={s!r}"
        )
    return stack[0][0]


def to_json(tree):
    """Serialises a tree to JSON, keeping non-ASCII words readable.

    Args:
        tree: A word or a nested list of words. An `nltk.Tree` is first
            converted with `from_nltk` (labels dropped, unary chains
            collapsed).

    Returns:
        `json.dumps(tree, ensure_ascii=False)`.

    Example:

    >>> to_json([["我", "住"], "在"])
    '[["我", "住"], "在"]'
    """
    tree_arg("tree", tree)
    if _is_nltk_tree(tree):
        tree = from_nltk(tree)
    return json.dumps(tree, ensure_ascii=False)


def ascii_tree(tree):
    """Renders a tree as indented text, one node per line.

    Constituents of a nested-list tree are drawn as `*`; an `nltk.Tree`
    shows its labels. Each line is a prefix of ASCII guides followed by
    one label or word, so the layout also holds for wide (CJK) characters.

    Args:
        tree: A word, a nested list of words, or an `nltk.Tree`.

    Returns:
        A multi-line string (no trailing newline).

    Example:

    >>> print(ascii_tree([["the", "cat"], "sat"]))
    *
    |-- *
    |   |-- the
    |   `-- cat
    `-- sat
    """
    tree_arg("tree", tree)
    lines = []

    def name(node):
        if isinstance(node, str):
            return node
        if _is_nltk_tree(node):
            return str(node.label())
        return "*"

    def draw(node, prefix):
        if isinstance(node, str):
            return
        for k, child in enumerate(node):
            last = k == len(node) - 1
            lines.append(prefix + ("`-- " if last else "|-- ") + name(child))
            draw(child, prefix + ("    " if last else "|   "))

    lines.append(name(tree))
    draw(tree, "")
    return "\n".join(lines)
