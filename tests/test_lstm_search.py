"""What the fair LSTM-vs-ON-LSTM search needs: the learning-rate warm-up
(`TrainingConfig.warmup_steps`), the PyTorch-style uniform initialisation
(`ModelConfig.initializer`), the diagnosis of a model that does not learn
(`models.diagnostics`), and the search script `benchmarks/lstm_search.py`
itself, end to end at a tiny scale."""

import csv
import dataclasses
import io
import json
import math
import os

import keras
import numpy as np
import pytest

from on_lstm_keras import runs
from on_lstm_keras.config import ModelConfig
from on_lstm_keras.config import TrainingConfig
from on_lstm_keras.data import Corpus
from on_lstm_keras.data import Vocabulary
from on_lstm_keras.models import ONLSTMLanguageModel
from on_lstm_keras.models import diagnostics
from on_lstm_keras.models import language_model
from on_lstm_keras.models.schedules import LinearWarmup
from on_lstm_keras.models.training import compile_language_model
from on_lstm_keras.models.training import make_optimizer
from on_lstm_keras.models.training import train_language_model
from on_lstm_keras.runs.training import prepare_resume
from on_lstm_keras.runs.training import record_run

from conftest import REPO_ROOT
from conftest import load_benchmark
from test_language_model import pattern_stream


def np_(x):
    return keras.ops.convert_to_numpy(x)


# -- the warm-up ----------------------------------------------------------

@pytest.mark.backend
def test_warmup_rises_linearly_then_stays():
    schedule = LinearWarmup(2e-3, warmup_steps=500)
    # lr * min(1, (step + 1) / 500), by hand.
    want = {0: 4e-6, 1: 8e-6, 249: 1e-3, 498: 1.996e-3, 499: 2e-3,
            500: 2e-3, 10_000: 2e-3}
    for step, value in want.items():
        assert float(np_(schedule(step))) == pytest.approx(value, rel=1e-6), step
    one = LinearWarmup(0.5, warmup_steps=1)  # a warm-up of one step: none
    assert [float(np_(one(s))) for s in (0, 1, 7)] == [0.5, 0.5, 0.5]


def test_warmup_checks_its_arguments():
    with pytest.raises(ValueError, match=r"`warmup_steps` must be a positive "
                                         r"integer, received: warmup_steps=0"):
        LinearWarmup(0.1, 0)
    with pytest.raises(ValueError, match=r"`learning_rate` must be a finite "
                                         r"number > 0, received: learning_rate=-1"):
        LinearWarmup(-1, 10)
    with pytest.raises(ValueError, match=r"`warmup_steps` must be a "
                                         r"non-negative integer, received: "
                                         r"warmup_steps=-5"):
        make_optimizer("adam", 1e-3, warmup_steps=-5)


@pytest.mark.backend
def test_warmup_config_round_trip_and_the_optimizers_rate():
    schedule = LinearWarmup(4e-3, warmup_steps=10)
    assert schedule.get_config() == {"learning_rate": 4e-3, "warmup_steps": 10}
    again = keras.optimizers.schedules.deserialize(
        json.loads(json.dumps(keras.optimizers.schedules.serialize(schedule))))
    assert isinstance(again, LinearWarmup)
    assert again.get_config() == schedule.get_config()

    optimizer = make_optimizer("adam", 4e-3, clipnorm=0.25, warmup_steps=10)
    assert isinstance(optimizer.get_config()["learning_rate"], dict)
    copy = keras.optimizers.Adam.from_config(
        json.loads(json.dumps(optimizer.get_config())))
    assert copy.get_config() == optimizer.get_config()
    # The rate follows the optimizer's step count.
    optimizer.iterations.assign(4)
    assert float(np_(optimizer.learning_rate)) == pytest.approx(2e-3)
    # No warm-up: a plain rate, as before.
    plain = make_optimizer("adam", 4e-3, warmup_steps=0)
    assert plain.get_config()["learning_rate"] == pytest.approx(4e-3)


def test_a_resumed_run_continues_the_warmup(tmp_path):
    """Epoch 1 of 2 ends mid warm-up (10 steps an epoch, warm-up 15); the
    run resumed from its checkpoint goes on from step 10 of the schedule,
    not from step 0."""
    ids, valid = pattern_stream(100), pattern_stream(20, seed=1)

    class Rates(keras.callbacks.Callback):
        """The rate each optimizer step uses."""

        def __init__(self):
            super().__init__()
            self.rates = []

        def on_train_batch_begin(self, batch, logs=None):
            self.rates.append(float(np_(self.model.optimizer.learning_rate)))

    def run(epochs, resume=False):
        keras.utils.set_random_seed(0)
        model = ONLSTMLanguageModel(8, embedding_size=8, hidden_size=8,
                                    num_layers=1, chunk_size=4, seed=3,
                                    stateful=True)
        compile_language_model(model, make_optimizer(
            "adam", 0.05, warmup_steps=15))
        rates = Rates()
        train_language_model(model, ids, valid, str(tmp_path), batch_size=4,
                             bptt=10, epochs=epochs, eval_batch_size=2,
                             resume=resume, verbose=0, callbacks=[rates])
        return model, rates.rates

    first, rates = run(1)
    want = [0.05 * min(1, (step + 1) / 15) for step in range(20)]
    assert rates == pytest.approx(want[:10])
    assert int(np_(first.optimizer.iterations)) == 10
    resumed, rates = run(2, resume=True)
    assert rates == pytest.approx(want[10:])  # 11/15 of the rate, ...
    assert int(np_(resumed.optimizer.iterations)) == 20


def test_resuming_with_a_new_rate_and_a_warmup_needs_no_callback(tmp_path):
    # The rate of a warm-up run is a schedule made from the config (a
    # LearningRateScheduler could not set it); without a warm-up the new
    # rate still comes from the callback.
    corpus = Corpus([["a", "b"]] * 4, [["a"]], [["b"]],
                    tokenizer={"name": "whitespace", "lowercase": False},
                    source="tiny", settings={})
    vocab = Vocabulary.build(corpus.train)
    for warmup, callbacks in ((100, 0), (0, 1)):
        directory = str(tmp_path / str(warmup))
        training = TrainingConfig(optimizer="adam", warmup_steps=warmup)
        record_run(directory, corpus, vocab, ModelConfig(), training)
        (run,) = runs.plan_training(
            directory, ModelConfig(),
            dataclasses.replace(training, learning_rate=1e-4),
            resume=True).runs
        new = run.training_config
        assert new.warmup_steps == warmup and new.learning_rate == 1e-4
        assert len(prepare_resume(directory, new)) == callbacks
    with pytest.raises(ValueError, match="`warmup_steps` cannot change when "
                                         "a run is resumed"):
        runs.plan_training(directory, ModelConfig(),
                           dataclasses.replace(training, warmup_steps=5),
                           resume=True)


# -- the initialisation ---------------------------------------------------

SIZES = dict(embedding_size=32, hidden_size=4, num_layers=2, chunk_size=2,
             tie_weights=False)


def built(initializer, recurrent="onlstm", seed=0, **sizes):
    keras.utils.set_random_seed(seed)
    model = ONLSTMLanguageModel(20, **{**SIZES, **sizes}, recurrent=recurrent,
                                initializer=initializer, seed=seed)
    return model.build_for(2)


@pytest.mark.backend
@pytest.mark.parametrize("recurrent", ["onlstm", "lstm"])
def test_uniform_draws_every_recurrent_weight_within_one_over_sqrt_units(
        recurrent):
    model = built("uniform", recurrent)
    for layer in model.rnn_layers:
        bound = 1 / np.sqrt(layer.units)  # 0.5 for 4 units
        cell = layer.cell
        for weight in (cell.kernel, cell.recurrent_kernel, cell.bias):
            values = np_(weight)
            assert np.abs(values).max() <= bound + 1e-7, weight.path
            # Spread over the whole interval: not Glorot's (whose bound
            # is sqrt(6 / (32 + 20)) = 0.34 for the first kernel), not
            # orthogonal, and no forget-gate bias of 1.
            assert np.abs(values).max() > 0.8 * bound, weight.path
            assert np.abs(values).mean() == pytest.approx(bound / 2, rel=0.35)
    first = np_(model.rnn_layers[0].cell.kernel)
    assert np.abs(first).max() > np.sqrt(6 / (32 + first.shape[1]))
    assert not layer.cell.unit_forget_bias
    # The embedding is drawn as with the default.
    assert np.abs(np_(model.embedding.embeddings)).max() <= 0.1
    config = model.get_config()
    assert config["initializer"] == "uniform"
    assert ONLSTMLanguageModel.from_config(config).initializer == "uniform"


@pytest.mark.backend
def test_the_default_initialisation_is_unchanged(monkeypatch):
    """`"keras"` draws, seed for seed, the weights of `ONLSTM` layers made
    with Keras' LSTM initializers written out, as the model made them
    before the choice existed."""
    default = built("keras")
    layer = default.rnn_layers[0]
    assert type(layer.kernel_initializer).__name__ == "GlorotUniform"
    assert type(layer.recurrent_initializer).__name__ == "Orthogonal"
    assert type(layer.bias_initializer).__name__ == "Zeros"
    assert layer.unit_forget_bias
    bias = np_(layer.cell.bias)
    assert (bias[4:8] == 1).all() and (bias[:4] == 0).all() and (bias[8:] == 0).all()

    made = language_model.ONLSTM

    def explicit(*args, **kwargs):
        assert not {"kernel_initializer", "recurrent_initializer",
                    "bias_initializer", "unit_forget_bias"} & set(kwargs)
        return made(*args, kernel_initializer="glorot_uniform",
                    recurrent_initializer="orthogonal",
                    bias_initializer="zeros", unit_forget_bias=True, **kwargs)

    monkeypatch.setattr(language_model, "ONLSTM", explicit)
    reference = built("keras")
    for a, b in zip(default.weights, reference.weights):
        np.testing.assert_array_equal(np_(a), np_(b), err_msg=a.path)
    monkeypatch.undo()
    uniform = built("uniform")
    assert not np.array_equal(np_(uniform.rnn_layers[0].cell.kernel),
                              np_(default.rnn_layers[0].cell.kernel))


def test_recurrent_initializers_checks_its_arguments():
    with pytest.raises(ValueError, match="`initializer` must be one of "
                                         "'keras', 'uniform', received: "
                                         "initializer='torch'"):
        language_model.recurrent_initializers("torch", 8)
    assert language_model.recurrent_initializers("keras", 8) == {}
    config = dataclasses.replace(ModelConfig(), initializer="uniform")
    assert ModelConfig.from_dict(config.to_dict()) == config


# -- the diagnosis --------------------------------------------------------

@pytest.mark.backend
@pytest.mark.parametrize("recurrent", ["onlstm", "lstm"])
def test_the_recomputed_gates_give_back_the_layers_output(recurrent):
    """The diagnosis's gates, put through the cell's update by hand, give
    the layer's own output sequence: they are the gates it used."""
    model = built("uniform", recurrent, hidden_size=8, chunk_size=4,
                  num_layers=1, embedding_size=6)
    layer = model.rnn_layers[0]
    x = np.random.default_rng(0).integers(1, 20, (3, 7)).astype("int32")
    inputs = model.embedding(x)
    outputs = layer(inputs)[0]
    gates = diagnostics.gate_activations(layer.cell, inputs, outputs)
    chunk = layer.chunk_size
    mf = np.repeat(gates["master_forget"], chunk, axis=-1)
    mi = np.repeat(gates["master_input"], chunk, axis=-1)
    if recurrent == "lstm":  # both master gates are constantly 1
        np.testing.assert_allclose(mf, 1, atol=1e-6)
        np.testing.assert_allclose(mi, 1, atol=1e-6)
    c = np.zeros((3, 8), "float32")
    for t in range(7):
        overlap = mf[:, t] * mi[:, t]
        lstm = gates["forget"][:, t] * c + gates["input"][:, t] * gates["candidate"][:, t]
        c = (overlap * lstm + (mf[:, t] - overlap) * c
             + (mi[:, t] - overlap) * gates["candidate"][:, t])
        h = gates["output"][:, t] * np.tanh(c)
        np.testing.assert_allclose(h, np_(outputs)[:, t], atol=1e-5)

    saturation = diagnostics.gate_saturation(model, [(x, x, None)])
    row = saturation[layer.name]
    assert set(row) == {"forget", "input", "output", "candidate",
                        "master_forget", "master_input"}
    assert row["forget"]["mean"] == pytest.approx(gates["forget"].mean(),
                                                  rel=1e-5)
    assert 0 <= row["forget"]["below"] <= 1 and 0 <= row["output"]["above"] <= 1
    with pytest.raises(ValueError, match=r"0 < low < high < 1, received: "
                                         r"low=0\.5, high=0\.4"):
        diagnostics.gate_saturation(model, [(x, x, None)], low=0.5, high=0.4)


@pytest.mark.backend
def test_gradient_norms_cover_every_part_of_the_model():
    model = built("keras", "lstm", hidden_size=8, chunk_size=4, num_layers=2,
                  embedding_size=6)
    x = np.random.default_rng(0).integers(1, 20, (2, 5)).astype("int32")
    norms = diagnostics.gradient_norms(model, [(x, x, np.ones((2, 5), "float32"))])
    assert list(norms) == ["embedding", "lstm_0", "lstm_1", "softmax"]
    assert all(v["gradient_norm"] > 0 and v["weight_norm"] > 0
               for v in norms.values())
    total = sum(float((np_(w).astype("float64") ** 2).sum())
                for w in model.trainable_weights)
    assert sum(v["weight_norm"] ** 2 for v in norms.values()) == pytest.approx(total)


# -- the search script ----------------------------------------------------

@pytest.fixture(scope="module")
def search():
    return load_benchmark("lstm_search")


def write_corpus(path):
    """60 short English sentences, one a line."""
    rng = np.random.default_rng(0)
    subjects = ["the cat", "a dog", "my friend", "the teacher"]
    verbs = ["sees", "likes", "takes"]
    objects = ["the ball", "a book", "some food"]
    lines = [f"{rng.choice(subjects)} {rng.choice(verbs)} {rng.choice(objects)} ."
             for _ in range(60)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def tiny_flags(corpus, output, *more):
    return ["--language", "en", "--corpus", str(corpus), "--output",
            str(output), "--lrs", "0.01", "--initializers", "uniform",
            "--warmups", "2", "--budget-steps", "3", "--eval-every", "2",
            "--eval-tokens", "40", "--embedding-size", "8", "--hidden-size",
            "8", "--layers", "1", "--chunk-size", "4", "--batch-size", "2",
            "--bptt", "5", "--eval-batch-size", "2", "--min-count", "1",
            "--quiet", *more]


def exit_code(search, argv):
    try:
        return search.main(argv)
    except SystemExit as e:
        return e.code


@pytest.mark.parametrize("flags, message", [
    (["--lrs", "1e-3,x"], "argument --lrs: must be comma-separated numbers "
                          "> 0, received '1e-3,x' ('x' must be a number"),
    (["--lrs", "1e-3,0.001"], "argument --lrs: must not repeat a value, "
                              "received '1e-3,0.001'"),
    (["--cells", "lstm,gru"], "argument --cells: must be comma-separated "
                              "cells: onlstm, lstm, received 'lstm,gru' "
                              "('gru' is not one of onlstm, lstm)"),
    (["--initializers", "keras,he"], "received 'keras,he' ('he' is not one "
                                     "of keras, uniform)"),
    (["--warmups", "0,-5"], "argument --warmups: must be comma-separated "
                            "integers >= 0, received '0,-5'"),
    (["--budget-seconds", "-1"], "argument --budget-seconds: must be a "
                                 "finite number >= 0, received '-1'"),
    (["--budget-seconds", "0"], "--budget-seconds 0 and --budget-steps 0: a "
                                "trial needs a budget"),
    (["--eval-tokens", "1"], "argument --eval-tokens: must be an integer >= "
                             "2, received 1"),
    (["--chunk-size", "3"], "--chunk-size 3 must divide --hidden-size 256"),
    (["--lr", "0.1"], "--lr 0.1: the search sets it from --lrs"),
    (["--warmup-steps", "5"], "--warmup-steps 5: the search sets it from "
                              "--warmups"),
    (["--epochs", "2"], "--epochs 2: the search sets it from --budget-seconds"),
])
def test_a_bad_flag_is_named_before_anything_is_written(search, tmp_path,
                                                       capsys, flags, message):
    output = tmp_path / "out"
    assert exit_code(search, ["--output", str(output), *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: lstm_search.py") and message in err, err
    assert not output.exists()


def test_the_grid_interleaves_the_cells_and_takes_the_presets_configs(search):
    args = search.parse_args(["--lrs", "1e-3,2e-3", "--warmups", "0",
                              "--hidden-size", "64"])
    assert search.grid_of(args) == [
        ("onlstm", 1e-3, "keras", 0), ("lstm", 1e-3, "keras", 0),
        ("onlstm", 1e-3, "uniform", 0), ("lstm", 1e-3, "uniform", 0),
        ("onlstm", 2e-3, "keras", 0), ("lstm", 2e-3, "keras", 0),
        ("onlstm", 2e-3, "uniform", 0), ("lstm", 2e-3, "uniform", 0)]
    model, training = search.config.PRESETS["small"]
    assert args.model_config == dataclasses.replace(model, hidden_size=64)
    assert args.training_config == training
    assert search.parse_args(["--corpus", "ptb"]).language == "en"


def test_equal_time_takes_each_trials_best_so_far(search):
    def rows(cell, lr, points):
        return [dict(cell=cell, lr=lr, initializer="keras", warmup=0,
                     seconds=s, steps=k, val_ppl=p)
                for k, (s, p) in enumerate(points)]

    def trial(cell, lr, seconds, best, diverged=False):
        return dict(cell=cell, lr=lr, initializer="keras", warmup=0,
                    seconds=seconds, best_val_ppl=best, diverged=diverged)

    measured = (rows("lstm", 1.0, [(0, 900), (5, 800), (10, 700)])
                + rows("lstm", 2.0, [(0, 900), (4, 600), (12, 650)])
                + rows("lstm", 3.0, [(0, 900), (1, math.inf)])
                + rows("onlstm", 1.0, [(0, 900), (6, 300), (11, 200)]))
    trials = [trial("lstm", 1.0, 10, 700), trial("lstm", 2.0, 12, 600),
              trial("lstm", 3.0, 1, 900, diverged=True),
              trial("onlstm", 1.0, 11, 200)]
    summary = search.summarise(trials, measured)
    assert summary["best"]["lstm"]["lr"] == 2.0
    # The shortest trial that did not diverge trained 10 s.
    assert summary["at_equal_time"] == [
        {"seconds": 2.5, "lstm": 900, "lstm_best_trial": 900,
         "onlstm": 900, "onlstm_best_trial": 900},
        {"seconds": 5.0, "lstm": 600, "lstm_best_trial": 600,
         "onlstm": 900, "onlstm_best_trial": 900},
        {"seconds": 7.5, "lstm": 600, "lstm_best_trial": 600,
         "onlstm": 300, "onlstm_best_trial": 300},
        {"seconds": 10.0, "lstm": 600, "lstm_best_trial": 600,
         "onlstm": 300, "onlstm_best_trial": 300}]
    # With a time budget of 10 s that every trial ran out of, the common
    # time is the budget, and at its end each trial has all its values.
    summary = search.summarise(trials, measured, budget_seconds=10)
    assert [p["seconds"] for p in summary["at_equal_time"]] == [2.5, 5, 7.5, 10]
    assert summary["at_equal_time"][-1] == {
        "seconds": 10.0, "lstm": 600, "lstm_best_trial": 600,
        "onlstm": 200, "onlstm_best_trial": 200}
    assert summary["at_equal_time"][1]["lstm"] == 600


def test_leaving_the_plateau_is_the_first_measurement_ten_percent_below(
        search):
    def rows(cell, lr, points):
        return [dict(cell=cell, lr=lr, initializer="keras", warmup=0,
                     seconds=s, steps=10 * k, val_ppl=p)
                for k, (s, p) in enumerate(points)]

    def trial(cell, lr, best):
        return dict(cell=cell, lr=lr, initializer="keras", warmup=0,
                    steps=30, seconds=12, best_val_ppl=best,
                    final_val_ppl=best, diverged=False)

    # Unigram 500: off the plateau at 450 or below.
    measured = (rows("lstm", 1.0, [(0, 9000), (4, 480), (8, 451), (12, 460)])
                + rows("lstm", 2.0, [(0, 9000), (4, 470), (8, 450), (12, 300)])
                + rows("onlstm", 1.0, [(0, 9000), (3, 449), (6, 400)])
                + rows("onlstm", 2.0, [(0, 9000), (5, 200)]))
    trials = [trial("lstm", 1.0, 451), trial("lstm", 2.0, 300),
              trial("onlstm", 1.0, 400), trial("onlstm", 2.0, 200)]
    summary = search.summarise(trials, measured, unigram=500)
    assert [t["off_plateau"] for t in summary["trials"]] == [
        None, {"seconds": 8, "steps": 20}, {"seconds": 3, "steps": 10},
        {"seconds": 5, "steps": 10}]
    assert summary["off_plateau"] == {
        "lstm": {"trials": 1, "of": 2, "earliest_seconds": 8},
        "onlstm": {"trials": 2, "of": 2, "earliest_seconds": 3}}
    assert summary["best"]["lstm"]["off_plateau"] == {"seconds": 8,
                                                      "steps": 20}
    out = io.StringIO()
    search.print_table(dict(summary, unigram_val_ppl=500), file=out)
    lines = out.getvalue().splitlines()
    assert lines[1].endswith(" never") and lines[2].endswith(" 8 s")
    assert "lstm: 1 of 2 trials left the plateau, the first after 8 s" in lines
    # Without the unigram perplexity nothing is added.
    assert "off_plateau" not in search.summarise(trials, measured)


def test_the_unigram_plateau_by_hand(search):
    # Training counts of ids 3, 4: 2, 1; add one to every id but <pad>:
    # 1, 1, 3, 2 out of 7. The validation slice predicts its second token.
    assert search.unigram_perplexity([3, 3, 4], [3, 4], 5) == pytest.approx(3.5)
    assert search.unigram_perplexity([3, 3, 4], [4, 3, 1], 5) == pytest.approx(
        math.sqrt(7 / 3 * 7))


def test_the_search_end_to_end(search, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)  # where the record's command is run
    corpus = write_corpus(tmp_path / "corpus.txt")
    output = tmp_path / "out"
    assert search.main(tiny_flags(corpus, output)) == 0
    out = capsys.readouterr().out
    assert "best lstm: lstm lr 0.01 uniform warmup 2" in out
    assert sorted(os.listdir(output)) == [
        "best-lstm.npz", "best-onlstm.npz", "curves.png", "record.json",
        "summary.json", "trials.csv"]
    with open(output / "trials.csv", newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames) == search.COLUMNS
        rows = list(reader)
    # Measured at the start, at step 2 and at the end of the budget.
    assert [(r["cell"], r["steps"]) for r in rows] == [
        ("onlstm", "0"), ("onlstm", "2"), ("onlstm", "3"),
        ("lstm", "0"), ("lstm", "2"), ("lstm", "3")]
    assert {(r["lr"], r["initializer"], r["warmup"]) for r in rows} == {
        ("0.01", "uniform", "2")}
    assert all(float(r["val_ppl"]) > 1 and float(r["seconds"]) >= 0
               for r in rows)
    summary = json.loads((output / "summary.json").read_text())
    assert sorted(summary["best"]) == ["lstm", "onlstm"]
    assert [t["steps"] for t in summary["trials"]] == [3, 3]
    assert len(summary["at_equal_time"]) == 4
    assert summary["settings"]["budget_steps"] == 3
    assert summary["unigram_val_ppl"] > 1
    assert (output / "curves.png").read_bytes()[:4] == b"\x89PNG"
    # The record: the summary's figures, each trial's in short.
    record = runs.read_record(output / "record.json")
    assert record["name"] == "lstm_search" and record["seed"] == 0
    assert record["command"].startswith(
        "python benchmarks/lstm_search.py --language en --corpus ")
    figures = record["figures"]
    assert figures == search.record_figures(summary)
    assert figures["best"] == summary["best"]
    assert figures["at_equal_time"] == summary["at_equal_time"]
    assert figures["unigram_val_ppl"] == summary["unigram_val_ppl"]
    assert figures["trials"] == [
        {"cell": cell, "lr": 0.01, "initializer": "uniform", "warmup": 2,
         "best_val_ppl": t["best_val_ppl"],
         "final_val_ppl": t["final_val_ppl"]}
        for cell, t in zip(["onlstm", "lstm"], summary["trials"])]

    # Again into the same folder: refused, unless resumed; resumed with
    # the same grid, nothing is left to run and nothing changes.
    before = (output / "trials.csv").read_bytes()
    assert search.main(tiny_flags(corpus, output)) == 2
    assert "holds a search; pass --resume" in capsys.readouterr().err
    elsewhere = tmp_path / "records" / "x.json"
    assert search.main(tiny_flags(corpus, output, "--resume", "--record",
                                  str(elsewhere))) == 0
    assert "0 trials to run, 2 kept" in capsys.readouterr().out
    assert (output / "trials.csv").read_bytes() == before
    assert runs.read_record(elsewhere)["figures"] == figures
    assert search.main(tiny_flags(corpus, output, "--resume", "--bptt",
                                  "4")) == 2
    err = capsys.readouterr().err
    assert "--resume: the search in" in err and "received: training=" in err
    assert (output / "trials.csv").read_bytes() == before
