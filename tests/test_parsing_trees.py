"""Trees from distances, and tree format conversions (expected values by hand)."""

import json
import math

import nltk
import numpy as np
import pytest

from on_lstm_keras.parsing import ascii_tree
from on_lstm_keras.parsing import collapse_unary
from on_lstm_keras.parsing import distances_to_tree
from on_lstm_keras.parsing import from_brackets
from on_lstm_keras.parsing import from_nltk
from on_lstm_keras.parsing import leaves
from on_lstm_keras.parsing import to_brackets
from on_lstm_keras.parsing import to_json
from on_lstm_keras.parsing import to_nltk

ABCD = ["a", "b", "c", "d"]
ABCDE = ["a", "b", "c", "d", "e"]


# --- distances_to_tree, tree_rule="official" ---------------------------------


def test_official_max_inside():
    # max at b: [a] | b | [c d]; in [c d] the max is d (last): [c, d].
    assert distances_to_tree(ABCD, [0.1, 0.9, 0.3, 0.5]) == ["a", ["b", ["c", "d"]]]


def test_official_left_and_right_parts():
    # max at c: left [a b] (max a, first -> [a, b]), right [d e] (max e -> [d, e]).
    tree = distances_to_tree(ABCDE, [0.5, 0.1, 0.9, 0.2, 0.3])
    assert tree == [["a", "b"], ["c", ["d", "e"]]]


def test_official_max_at_last_word_stands_alone():
    # max at c (no right part): [tree(a b), c]; in [a b] max b: [a, b].
    assert distances_to_tree(["a", "b", "c"], [0.1, 0.2, 0.9]) == [["a", "b"], "c"]


def test_official_max_at_first_word():
    assert distances_to_tree(["a", "b", "c"], [0.9, 0.1, 0.5]) == ["a", ["b", "c"]]


def test_official_tie_first_maximum_wins():
    # b and d tie at 0.7; b (first) wins. (d winning would give [[a [b c]] d].)
    assert distances_to_tree(ABCD, [0.1, 0.7, 0.2, 0.7]) == ["a", ["b", ["c", "d"]]]
    # all equal: always the first word -> right branching.
    assert distances_to_tree(ABCD, [0.3] * 4) == ["a", ["b", ["c", "d"]]]


def test_default_tree_rule_is_official():
    d = [0.2, 0.4, 0.9, 0.1, 0.3]
    assert distances_to_tree(ABCDE, d) == distances_to_tree(ABCDE, d, tree_rule="official")
    # max at c: [tree(a b), [c, tree(d e)]]; [a b]: max b -> [a, b]; [d e]: max e.
    assert distances_to_tree(ABCDE, d) == [["a", "b"], ["c", ["d", "e"]]]


# --- distances_to_tree, tree_rule="plain" ---------------------------------


def test_plain_split_word_starts_right_part():
    # max at b: [a] | [b c d]; in [b c d] the max is at b (first) -> argmax over
    # [c d] = d: [[b c], d].
    tree = distances_to_tree(ABCD, [0.1, 0.9, 0.3, 0.5], tree_rule="plain")
    assert tree == ["a", [["b", "c"], "d"]]


def test_plain_max_at_first_position_uses_the_rest():
    # max at a (position 0) -> argmax over [b c] = c: [[a b], c].
    assert distances_to_tree(["a", "b", "c"], [0.9, 0.1, 0.5], tree_rule="plain") == [
        ["a", "b"],
        "c",
    ]


def test_plain_tie_first_maximum_wins():
    # b and d tie: b wins -> [a | b c d e]; then in [b c d e] max at b (first
    # position) -> argmax over c d e = d (0.9): [[b c], [d e]].
    tree = distances_to_tree(ABCDE, [0.3, 0.9, 0.2, 0.9, 0.1], tree_rule="plain")
    assert tree == ["a", [["b", "c"], ["d", "e"]]]


def test_plain_is_always_binary():
    rng = np.random.default_rng(0)
    for n in range(2, 12):
        tree = distances_to_tree([str(i) for i in range(n)], rng.random(n), "plain")

        def check(node):
            if isinstance(node, str):
                return
            assert len(node) == 2
            check(node[0])
            check(node[1])

        check(tree)
        assert leaves(tree) == [str(i) for i in range(n)]


@pytest.mark.parametrize("tree_rule", ["official", "plain"])
def test_one_and_two_words(tree_rule):
    assert distances_to_tree(["w"], [0.5], tree_rule=tree_rule) == "w"
    assert distances_to_tree(["a", "b"], [0.1, 0.9], tree_rule=tree_rule) == ["a", "b"]
    assert distances_to_tree(["a", "b"], [0.9, 0.1], tree_rule=tree_rule) == ["a", "b"]


def test_numpy_distances_and_tuple_words():
    tree = distances_to_tree(tuple(ABCD), np.array([0.1, 0.9, 0.3, 0.5], np.float32))
    assert tree == ["a", ["b", ["c", "d"]]]


# --- distances_to_tree, errors ------------------------------------------------


def test_length_mismatch_names_both_arguments():
    with pytest.raises(ValueError) as e:
        distances_to_tree(["a", "b", "c"], [0.1, 0.2])
    msg = str(e.value)
    assert "`words`" in msg and "`distances`" in msg
    assert "len(words)=3" in msg and "len(distances)=2" in msg


def test_empty_words():
    with pytest.raises(ValueError, match="`words`"):
        distances_to_tree([], [])


def test_unknown_tree_rule():
    with pytest.raises(ValueError, match="`tree_rule`.*'binary'"):
        distances_to_tree(ABCD, [0.1] * 4, tree_rule="binary")


def test_an_unknown_attribute_is_an_attribute_error():
    import on_lstm_keras.parsing as parsing

    with pytest.raises(AttributeError) as error:
        parsing.trees.NO_SUCH_NAME
    assert str(error.value) == (
        "module 'on_lstm_keras.parsing.trees' has no attribute "
        "'NO_SUCH_NAME'")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_distances(bad):
    with pytest.raises(ValueError, match="`distances`.*finite"):
        distances_to_tree(ABCD, [0.1, bad, 0.3, 0.5])


def test_bad_distances_shape_and_type():
    with pytest.raises(ValueError, match="`distances`"):
        distances_to_tree(["a", "b"], [[0.1, 0.2]])
    with pytest.raises(ValueError, match="`distances`"):
        distances_to_tree(["a", "b"], ["x", "y"])


def test_non_string_word():
    with pytest.raises(ValueError, match=r"words\[1\]=2"):
        distances_to_tree(["a", 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="`words`"):
        distances_to_tree("ab", [0.1, 0.2])


# --- conversions ----------------------------------------------------------------

TREE = [["the", "cat"], ["sat", ["on", "mats"]]]


def test_leaves():
    assert leaves(TREE) == ["the", "cat", "sat", "on", "mats"]
    assert leaves("w") == ["w"]
    assert leaves(nltk.Tree.fromstring("(S (NP (DT the) (NN cat)) (VBD sat))")) == [
        "the",
        "cat",
        "sat",
    ]


def test_to_nltk():
    t = to_nltk(TREE)
    assert isinstance(t, nltk.Tree)
    assert str(t) == "(X (X the cat) (X sat (X on mats)))"
    assert t == nltk.Tree.fromstring("(X (X the cat) (X sat (X on mats)))")
    t = to_nltk(["a", "b"], label="S", leaf_label="W")
    assert t == nltk.Tree("S", [nltk.Tree("W", ["a"]), nltk.Tree("W", ["b"])])
    assert to_nltk("w") == nltk.Tree("X", ["w"])


def test_from_nltk_drops_labels_and_collapses_unary_chains():
    t = nltk.Tree.fromstring(
        "(ROOT (S (NP (NP (DT the) (NN cat))) (VP (VBD sat) (PP (IN on) (NP (NNS mats))))))"
    )
    assert from_nltk(t) == [["the", "cat"], ["sat", ["on", "mats"]]]
    assert from_nltk(nltk.Tree.fromstring("(S (NP (NN yes)))")) == "yes"
    # constituents without words disappear
    assert from_nltk(nltk.Tree("S", ["a", nltk.Tree("E", []), "b"])) == ["a", "b"]
    with pytest.raises(ValueError, match="`tree`"):
        from_nltk(nltk.Tree("S", [nltk.Tree("E", [])]))
    with pytest.raises(ValueError, match="`tree`"):
        from_nltk(3)


def test_collapse_unary_filters_words_by_tag_then_collapses():
    t = nltk.Tree.fromstring(
        "(S (NP (-NONE- *T*)) (NP (DT the) (NN cat)) (VP (VBD sat) (. .)))")
    seen = []

    def keep(tag, word):
        seen.append((tag, word))
        return None if tag in ("-NONE-", ".") else word.upper()

    # (NP *T*) is left empty and dropped; (VP sat .) keeps one word and
    # collapses to it; the words come back as `keep` returned them.
    assert collapse_unary(t, keep) == [["THE", "CAT"], "SAT"]
    assert seen == [("-NONE-", "*T*"), ("DT", "the"), ("NN", "cat"),
                    ("VBD", "sat"), (".", ".")]
    # Without keep_word every word stays: the same as from_nltk.
    assert collapse_unary(t) == from_nltk(t) == [
        "*T*", ["the", "cat"], ["sat", "."]]
    # A word outside a preterminal, and a plain list, have the tag None.
    seen.clear()
    assert collapse_unary(nltk.Tree("S", ["x", nltk.Tree("NN", ["y"])]),
                          keep) == ["X", "Y"]
    assert collapse_unary([["a"], "b"], keep) == ["A", "B"]
    assert seen == [(None, "x"), ("NN", "y"), (None, "a"), (None, "b")]
    # Nothing kept: None (from_nltk raises instead).
    assert collapse_unary(t, lambda tag, word: None) is None
    with pytest.raises(ValueError, match=r"received a child 3"):
        collapse_unary(["a", 3])


def test_nltk_round_trip():
    for tree in [TREE, "w", ["a", "b"], [["a", "b", "c"], "d"]]:
        assert from_nltk(to_nltk(tree)) == tree
        assert from_nltk(to_nltk(tree, leaf_label="W")) == tree


def test_to_brackets():
    assert to_brackets(TREE) == "((the cat) (sat (on mats)))"
    assert to_brackets("w") == "w"
    assert to_brackets(["a", "b", "c"]) == "(a b c)"
    with pytest.raises(ValueError, match="`tree`.*'a b'"):
        to_brackets(["a b", "c"])
    with pytest.raises(ValueError, match="`tree`"):
        to_brackets(["(", "c"])
    with pytest.raises(ValueError, match=r"`tree`.*tree\[1\]=3"):
        to_brackets(["a", 3])
    with pytest.raises(ValueError, match="`tree`.*empty"):
        to_brackets(["a", []])


def test_from_brackets():
    assert from_brackets("((the cat) (sat (on mats)))") == TREE
    assert from_brackets("  ( (the  cat)\n(sat (on mats)) ) ") == TREE
    assert from_brackets("w") == "w"
    assert from_brackets("(a)") == ["a"]


@pytest.mark.parametrize("bad", ["(a b", "a b)", "(a ())", "a b", "", "(a) (b)"])
def test_from_brackets_errors(bad):
    with pytest.raises(ValueError, match="`s`"):
        from_brackets(bad)


def test_brackets_round_trip():
    trees = [TREE, "w", [["我", "住在"], ["同一條", "巷子"]], [["a", "b", "c"], "d"]]
    for tree in trees:
        assert from_brackets(to_brackets(tree)) == tree
    s = "((嘉珍 (和 我)) 住在)"
    assert to_brackets(from_brackets(s)) == s


def test_to_json():
    assert to_json([["我", "住"], "在"]) == '[["我", "住"], "在"]'
    assert json.loads(to_json(TREE)) == TREE
    assert to_json("w") == '"w"'
    assert to_json(nltk.Tree.fromstring("(S (NP (DT the) (NN cat)) (VBD sat))")) == (
        '[["the", "cat"], "sat"]'
    )


def test_ascii_tree():
    expected = "\n".join(
        [
            "*",
            "|-- *",
            "|   |-- the",
            "|   `-- cat",
            "`-- *",
            "    |-- sat",
            "    `-- *",
            "        |-- on",
            "        `-- mats",
        ]
    )
    assert ascii_tree(TREE) == expected
    assert ascii_tree("w") == "w"
    labelled = nltk.Tree.fromstring("(S (NP the cat) sat)")
    assert ascii_tree(labelled) == "S\n|-- NP\n|   |-- the\n|   `-- cat\n`-- sat"


def message(call):
    with pytest.raises(ValueError) as e:
        call()
    return str(e.value)


def test_error_messages_name_the_argument_exactly():
    """Each message starts with the argument's name, as the user wrote it."""
    assert message(lambda: distances_to_tree(["a"], [object()])).startswith(
        "Argument `distances` must be a sequence of numbers, received: distances=")
    assert message(lambda: distances_to_tree(["a"], [[1.0]])).startswith(
        "Argument `distances` must be one-dimensional (one number per word), "
        "received shape (1, 1)")
    assert message(lambda: distances_to_tree(["a", "b"], [1.0])) == (
        "Arguments `words` and `distances` must have the same length, "
        "received len(words)=2 and len(distances)=1")
    assert message(lambda: distances_to_tree(["a"], [float("inf")])) == (
        "Argument `distances` must hold finite numbers, received: distances=[inf]")
    for function in (leaves, to_nltk, to_json, ascii_tree):
        assert message(lambda: function(["a", 3])) == (
            "Argument `tree` must be a word (str) or a nested list of words, "
            "received: tree[1]=3"), function.__name__
    assert message(lambda: from_nltk(3)) == (
        "Argument `tree` must be an nltk.Tree, a nested list or a word, "
        "received: tree=3")
    assert message(lambda: from_nltk(["a", 3])) == (
        "Argument `tree` must hold words (str) and subtrees only, received a "
        "child 3 in tree=['a', 3]")
    assert message(lambda: to_brackets(["a b", "c"])) == (
        "Argument `tree` has a word that cannot be written in brackets (empty, "
        "or with whitespace or parentheses), received word 'a b'")
    assert message(lambda: from_brackets(3)) == (
        "Argument `s` must be a string, received: s=3")
    assert message(lambda: from_brackets("a b")) == (
        "Argument `s` must hold exactly one tree (wrap several in one pair of "
        "parentheses), received: s='a b'")
