"""The logical-inference language of `on_lstm_keras.data.logic`: truth
sets, relations, the seeded pair generator, the encoding and the per-length
scoring.

The relations are checked against sets of truth assignments worked out by
hand (or enumerated here with `itertools.product`, independently of the
module's bit masks), not against the generator's own output.
"""

import itertools

import numpy as np
import pytest

from on_lstm_keras.data import logic


def tokens(text):
    return text.split()


# Hand-worked pairs: (left, right, relation).
HAND_PAIRS = [
    ("a", "( not a )", "^"),                      # negation
    ("a", "( a or b )", "<"),                     # forward entailment
    ("( a or b )", "a", ">"),                     # backward entailment
    ("( a and b )", "( b and a )", "="),          # equivalence
    ("( not ( a and b ) )", "( ( not a ) or ( not b ) )", "="),  # De Morgan
    ("( a and b )", "( not a )", "|"),            # alternation: disjoint,
                                                  # a∧¬b is in neither
    ("( a or b )", "( not a )", "v"),             # cover: a∨b∨¬a is all,
                                                  # b∧¬a in both
    ("a", "b", "#"),                              # independence
    ("( a and b )", "( a and c )", "#"),          # overlap, neither inside
    ("( a and b )", "( a or c )", "<"),
    ("( not ( a or b ) )", "( not a )", "<"),
    ("( not a )", "( not ( a or b ) )", ">"),
    ("( ( a and b ) or c )", "( not c )", "v"),   # c∨¬c covers all
    ("( a or b )", "( not ( a or c ) )", "#"),
    ("( a and ( not b ) )", "( b or ( not a ) )", "^"),
    ("( a and ( not b ) )", "( b and c )", "|"),
    ("( a or ( not b ) )", "( b or c )", "v"),
]


@pytest.mark.parametrize("left,right,expected", HAND_PAIRS)
def test_relation_of_hand_worked_pairs(left, right, expected):
    assert logic.formula_relation(tokens(left), tokens(right)) == expected


def _evaluate(formula, env):
    """Truth value of a token list under a dict of variable values, by
    rewriting it as a Python expression (an independent evaluator)."""
    return eval(" ".join(formula), {}, dict(env))  # noqa: S307


def test_truth_sets_match_an_independent_evaluator():
    rng = np.random.default_rng(3)
    for n in range(0, 9):
        formula = logic.random_formula(n, rng)
        assert logic.count_operators(formula) == n
        expected = []
        # Assignment j gives variable k the value of bit k of j.
        for j in range(64):
            env = {v: bool((j >> k) & 1) for k, v in enumerate("abcdef")}
            expected.append(_evaluate(formula, env))
        np.testing.assert_array_equal(logic.truth_set(formula), expected)


def _relation_by_enumeration(a, b):
    """MacCartney's relations from explicit sets of assignments."""
    universe = set(itertools.product([False, True], repeat=6))
    a = {w for w, x in zip(sorted(universe), a) if x}
    b = {w for w, x in zip(sorted(universe), b) if x}
    if a == b:
        return "="
    if a < b:
        return "<"
    if a > b:
        return ">"
    if not a & b:
        return "^" if a | b == universe else "|"
    if a | b == universe:
        return "v"
    return "#"


def test_relation_matches_set_enumeration_on_random_sets():
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(400):
        # Small sets of small support make the rarer relations frequent.
        a = rng.random(64) < rng.choice([0.1, 0.5, 0.9])
        b = rng.random(64) < rng.choice([0.1, 0.5, 0.9])
        if rng.random() < 0.2:
            b = ~a if rng.random() < 0.5 else a.copy()
        if not a.any() or a.all() or not b.any() or b.all():
            continue
        expected = _relation_by_enumeration(a, b)
        assert logic.relation(a, b) == expected
        seen.add(expected)
    assert seen >= {"=", "^", "#", "|", "v"}


@pytest.mark.parametrize("formula", ["( a and ( not a ) )",
                                     "( a or ( not a ) )"])
def test_degenerate_formulas_are_refused(formula):
    value = logic.truth_set(tokens(formula))
    with pytest.raises(ValueError, match="contradiction or a tautology"):
        logic.relation(value, logic.truth_set(["a"]))
    with pytest.raises(ValueError, match="`b`"):
        logic.relation(logic.truth_set(["a"]), value)


def test_malformed_formula_is_an_error():
    with pytest.raises(ValueError, match="missing"):
        logic.truth_set(tokens("( a and b c )"))


def _small(seed):
    return logic.logic_datasets(seed, train_pairs=600, test_pairs=30,
                               max_test_operators=8)


def test_data_is_deterministic_per_seed():
    assert _small(5) == _small(5)
    assert _small(5) != _small(6)


def test_data_shapes_labels_and_no_test_pair_in_training():
    data = _small(1)
    assert len(data["train"]) + len(data["valid"]) == 600
    assert len(data["valid"]) == 60
    assert sorted(data["test"]) == list(range(1, 9))
    train_keys = set()
    for left, right, rel in data["train"] + data["valid"]:
        assert 1 <= max(logic.count_operators(left),
                        logic.count_operators(right)) <= 6
        assert rel == _relation_by_enumeration(logic.truth_set(left),
                                               logic.truth_set(right))
        train_keys.add((tuple(left), tuple(right)))
    for n, pairs in data["test"].items():
        assert len(pairs) == 30
        assert len({(tuple(l), tuple(r)) for l, r, _ in pairs}) == 30
        for left, right, rel in pairs:
            assert max(logic.count_operators(left),
                       logic.count_operators(right)) == n
            assert (tuple(left), tuple(right)) not in train_keys
            assert (tuple(right), tuple(left)) not in train_keys
            assert rel == _relation_by_enumeration(logic.truth_set(left),
                                                   logic.truth_set(right))
    # Short test formulas do occur in the training range: the exclusion
    # above is what keeps them apart.
    assert {tuple(l) for l, _, _ in data["test"][1]} & {
        tuple(l) for l, _, _ in data["train"]}


def test_encode_pads_with_zero_and_maps_relations():
    left, right, labels = logic.encode_pairs(
        [(tokens("( not a )"), tokens("a"), "^")], length=6)
    ids = logic.TOKEN_ID
    assert left.tolist() == [[ids["("], ids["not"], ids["a"], ids[")"], 0, 0]]
    assert right.tolist() == [[ids["a"], 0, 0, 0, 0, 0]]
    assert labels.tolist() == [logic.RELATIONS.index("^")]


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="train_pairs"):
        logic.logic_datasets(0, train_pairs=0)
    with pytest.raises(ValueError, match="valid_fraction"):
        logic.logic_datasets(0, valid_fraction=1.0)


class _FixedModel:
    """Answers each pair with the relation its left formula's first token
    names in `answers`; records the shapes it was given."""

    def __init__(self, answers):
        self.answers = answers
        self.shapes = []

    def predict(self, inputs, batch_size, verbose):
        left, right = inputs
        self.shapes.append((left.shape, right.shape))
        scores = np.zeros((len(left), len(logic.RELATIONS)))
        for i, first in enumerate(left[:, 0]):
            token = logic.TOKENS[first]
            scores[i, logic.RELATIONS.index(self.answers[token])] = 1.0
        return scores


def test_accuracy_by_operator_count_against_hand_counts():
    test = {
        1: [(tokens("( not a )"), tokens("a"), "^"),     # "(" -> "^": right
            (tokens("a"), tokens("( a or b )"), "<")],   # "a" -> "#": wrong
        2: [(tokens("( ( not a ) and b )"), tokens("b"), "<"),  # wrong
            (tokens("b"), tokens("( not ( not b ) )"), "="),    # "b": right
            (tokens("c"), tokens("( a and ( not c ) )"), "|")],  # wrong
    }
    model = _FixedModel({"(": "^", "a": "#", "b": "=", "c": "v"})
    accuracy = logic.accuracy_by_operator_count(model, test)
    assert accuracy == {1: 0.5, 2: pytest.approx(1 / 3)}
    # Every bucket padded to the longest formula of all (8 tokens), so
    # that a Keras model traces `predict` once.
    assert model.shapes == [((2, 8), (2, 8)), ((3, 8), (3, 8))]


def test_majority_accuracy_against_hand_counts():
    pair = (["a"], ["b"])
    test = {1: [(*pair, "#"), (*pair, "#"), (*pair, "<"), (*pair, "=")],
            3: [(*pair, "|")]}
    assert logic.majority_accuracy(test) == {1: 0.5, 3: 1.0}
