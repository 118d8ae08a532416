"""Training runs side by side (`runs.train(side_by_side=True)`,
`on_lstm_keras.runs.side_by_side`): each run in a process of its own, the
same models as one after another, errors and Ctrl-C passed back, and the
choice of `"auto"`."""

import csv
import dataclasses
import os
import pickle

import keras
import numpy as np
import pytest

from on_lstm_keras import runs
from on_lstm_keras.config import ModelConfig
from on_lstm_keras.runs import side_by_side as _side_by_side
from on_lstm_keras.runs import training

from test_train_directions import TINY_MODEL
from test_train_directions import TINY_TRAINING
from test_train_directions import tiny_corpus

HERE = os.path.dirname(os.path.abspath(__file__))


def test_thread_share_splits_the_cores_evenly():
    assert _side_by_side.thread_share(2, cores=2) == 1
    assert _side_by_side.thread_share(3, cores=16) == 5
    assert _side_by_side.thread_share(4, cores=2) == 1  # at least one
    assert _side_by_side.thread_share(1, cores=8) == 8
    env = _side_by_side.child_environment(3, base={"KEEP": "1"})
    assert env == {"KEEP": "1", "TF_NUM_INTRAOP_THREADS": "3",
                   "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1",
                   "PYTHONUNBUFFERED": "1"}
    # The user's own tunables are kept, a hugetlb choice of theirs wins.
    env = _side_by_side.child_environment(
        1, base={"GLIBC_TUNABLES": "glibc.malloc.arena_max=2"})
    assert env["GLIBC_TUNABLES"] == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"
    env = _side_by_side.child_environment(
        1, base={"GLIBC_TUNABLES": "glibc.malloc.hugetlb=0"})
    assert env["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=0"


def test_auto_trains_side_by_side_only_where_it_pays(monkeypatch):
    monkeypatch.setattr(training, "cpu_cores", lambda: 2)
    assert runs.resolve_side_by_side("auto", 2) is True
    assert runs.resolve_side_by_side("auto", 1) is False
    assert runs.resolve_side_by_side(True, 1) is False  # nothing to pair
    assert runs.resolve_side_by_side(False, 3) is False
    assert runs.resolve_side_by_side("auto", 2, data_parallel=True) is False
    monkeypatch.setattr(training, "cpu_cores", lambda: 1)
    assert runs.resolve_side_by_side("auto", 2) is False
    assert runs.resolve_side_by_side(True, 2) is True
    for bad in ("yes", 1, None):
        with pytest.raises(ValueError, match=r"`side_by_side` "
                           r"\(--side-by-side\).*side_by_side=" + repr(bad)):
            runs.resolve_side_by_side(bad, 2)


def test_a_bad_value_is_refused_before_anything_is_written(tmp_path):
    output = tmp_path / "never"
    plan = runs.plan_training(str(output), TINY_MODEL, TINY_TRAINING,
                              directions="both")
    with pytest.raises(ValueError, match="side_by_side='both'"):
        runs.train(plan, tiny_corpus(), side_by_side="both")
    assert not output.exists()


def history(directory):
    with open(os.path.join(directory, "history.csv"), newline="") as f:
        return [float(r["val_perplexity"]) for r in csv.DictReader(f)]


def weights(directory):
    model = keras.saving.load_model(os.path.join(directory, "model.keras"))
    return [keras.ops.convert_to_numpy(w) for w in model.weights]


def test_side_by_side_trains_the_models_one_after_another_would(
        tmp_path, capsys):
    one, two = str(tmp_path / "one"), str(tmp_path / "two")
    def plan(output):
        return runs.plan_training(output, TINY_MODEL, TINY_TRAINING,
                                  directions="both")

    after = runs.train(plan(one), tiny_corpus(), side_by_side=False,
                       verbose=0)
    capsys.readouterr()
    # Keras' one line per epoch, so that each child has lines to relay.
    beside = runs.train(plan(two), tiny_corpus(), side_by_side=True,
                        verbose=1)
    out = capsys.readouterr().out
    assert "Training onlstm, onlstm backward side by side" in out
    assert "[onlstm backward] " in out  # the child's lines, named
    assert sorted(beside) == sorted(after) == ["onlstm", "onlstm backward"]
    for kind, sub in (("onlstm", ""), ("onlstm backward", "backward")):
        a, b = after[kind], beside[kind]
        assert (a["model"], a["training"]) == (b["model"], b["training"])
        assert b["results"]["test_perplexity"] == pytest.approx(
            a["results"]["test_perplexity"], rel=1e-4)
        assert history(os.path.join(two, sub)) == pytest.approx(
            history(os.path.join(one, sub)), rel=1e-4)
        for x, y in zip(weights(os.path.join(one, sub)),
                        weights(os.path.join(two, sub))):
            np.testing.assert_allclose(x, y, atol=1e-5)
    assert beside["onlstm"]["train_directions"] == "both"
    assert beside["onlstm backward"]["model"]["direction"] == "backward"


class InterruptBackwardAtEpoch1(keras.callbacks.Callback):
    """Ctrl-C in the backward model's second epoch (importable by the
    child processes, so picklable by reference)."""

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == 1 and self.model.direction == "backward":
            raise KeyboardInterrupt


def test_ctrl_c_in_one_run_keeps_both_runs_and_resume_finishes(
        tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", HERE + os.pathsep
                       + os.environ.get("PYTHONPATH", ""))
    output = str(tmp_path / "run")
    with pytest.raises(KeyboardInterrupt):
        runs.train(
            runs.plan_training(output, TINY_MODEL, TINY_TRAINING,
                               directions="both"),
            tiny_corpus(), verbose=0, side_by_side=True,
            callbacks=[InterruptBackwardAtEpoch1()])
    err = capsys.readouterr().err
    # Said of the run that stopped, not of the one that had finished.
    assert err.count("run again with --resume") == 1
    assert os.path.join(output, "backward") in err
    # The forward run finished; the backward one kept its first epoch.
    assert len(history(output)) == 2
    assert len(history(os.path.join(output, "backward"))) == 1
    trained = runs.train(runs.plan_training(output, resume=True),
                         tiny_corpus(), verbose=0, side_by_side=True)
    out = capsys.readouterr().out
    assert "onlstm: done, 2 epochs trained" in out
    assert "resuming after epoch 1 of 2" in out
    assert len(history(os.path.join(output, "backward"))) == 2
    assert trained["onlstm backward"]["results"]["test_perplexity"] > 1


def test_an_error_in_a_run_reaches_the_caller(tmp_path):
    (run,) = runs.plan_training(
        str(tmp_path / "a"), TINY_MODEL,
        dataclasses.replace(TINY_TRAINING, epochs=1)).runs
    good = (training.train_run, dict(run=run, corpus=tiny_corpus(),
                                     verbose=0))
    # The child raises `ModelConfig`'s ValueError, pickled back.
    bad = (ModelConfig, dict(hidden_size=-3))
    with pytest.raises(ValueError, match=r"hidden_size=-3"):
        _side_by_side.train_side_by_side([good, bad], ["good", "bad"])
    # The other run was trained to its end all the same.
    assert len(history(tmp_path / "a")) == 1


def test_runs_that_cannot_be_pickled_are_refused_before_any_starts(tmp_path):
    (run,) = runs.plan_training(str(tmp_path / "a"), TINY_MODEL,
                                TINY_TRAINING).runs
    job = (training.train_run, dict(
        run=run, corpus=tiny_corpus(),
        callbacks=[keras.callbacks.LambdaCallback(
            on_epoch_end=lambda *a: None)]))
    with pytest.raises(ValueError, match="run 'lambda' must be picklable"):
        _side_by_side.train_side_by_side([job, job], ["lambda", "twin"])
    assert not (tmp_path / "a").exists()
    with pytest.raises(ValueError, match="2 jobs and 1 names"):
        _side_by_side.train_side_by_side([job, job], ["x"])


def test_an_error_that_cannot_be_read_back_still_says_what_happened(tmp_path):
    path = tmp_path / "result.pickle"
    assert isinstance(_side_by_side._read_outcome(str(path), 1)[1],
                      _side_by_side.RunFailed)
    path.write_bytes(b"not a pickle")
    outcome = _side_by_side._read_outcome(str(path), 1)
    assert outcome[0] == "error" and "could not be read back" in str(outcome[1])
    path.write_bytes(pickle.dumps(("ok", {"results": {}})))
    assert _side_by_side._read_outcome(str(path), 0) == ("ok", {"results": {}})
