"""`runs.epoch_f1`: the per-epoch F1 log (`EpochF1`), read back and
drawn, on a tiny PTB-like corpus scored on the fake PTB sample of
`test_ptb_directions` (its dev half is right-branching, its test half
left-branching)."""

import csv

import pytest

from on_lstm_keras import runs as run_api
from on_lstm_keras.config import ModelConfig
from on_lstm_keras.config import TrainingConfig
from on_lstm_keras.data.corpus import Corpus
from on_lstm_keras.runs import EpochF1
from on_lstm_keras.runs import evaluate_readings
from on_lstm_keras.runs import read_f1_curve
from on_lstm_keras.runs.epoch_f1 import F1_CURVE_FIELDS
from tests.test_ptb_directions import ptb_data  # noqa: F401 (a fixture)

SENTENCES = [s.split() for s in (
    "the cat saw dogs", "dogs saw the cat", "the dog barked", "the cat sat",
    "dogs sat on the mat", "the dog saw the cat")]
MODEL = ModelConfig(embedding_size=8, hidden_size=8, num_layers=2,
                    chunk_size=4, tie_weights=False)


def training(epochs):
    return TrainingConfig(batch_size=4, bptt=8, epochs=epochs,
                          optimizer="adam", min_count=1, seed=1)


def corpus():
    return Corpus(SENTENCES * 5, SENTENCES[:2], SENTENCES[2:4],
                  tokenizer={"name": "whitespace", "lowercase": True},
                  source="tiny", settings={"language": "en"})


def test_read_f1_curve_types_the_numbers_and_reports_a_bad_file(tmp_path):
    path = tmp_path / "f1.csv"
    assert read_f1_curve(str(path)) == []
    path.write_text(
        ",".join(F1_CURVE_FIELDS) + "\n"
        "onlstm,2,10.5,10.5,123.4,dev,forward,1,plain,7,50.0,60.0\n"
        "onlstm,2,10.5,10.5,,test,forward,mean,official,3,0.0,12.5\n")
    first, second = read_f1_curve(str(path))
    assert (first["epoch"], first["sentences"], first["layer"]) == (2, 7, 1)
    assert (first["seconds"], first["val_perplexity"]) == (10.5, 123.4)
    assert (first["sentence_f1"], first["corpus_f1"]) == (50.0, 60.0)
    assert second["layer"] == "mean" and second["val_perplexity"] != 0
    assert second["val_perplexity"] != second["val_perplexity"]  # NaN
    path.write_text("run,epoch\nonlstm,two\n")
    with pytest.raises(ValueError, match=r"f1\.csv is not a per-epoch F1 log"):
        read_f1_curve(str(path))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"`treebank`.*treebank='wsj'"):
        EpochF1("run", "wsj")
    with pytest.raises(ValueError, match=r"`max_length`.*max_length=0"):
        EpochF1("run", "ptb", max_length=0)
    with pytest.raises(ValueError, match=r"`halves`.*halves=\('train',\)"):
        EpochF1("run", "ptb", halves=("train",))
    with pytest.raises(ValueError, match=r"`halves`.*halves=\(\)"):
        EpochF1("run", "ptb", halves=())
    with pytest.raises(ValueError, match="tree_rule"):
        EpochF1("run", "ptb", tree_rule="greedy")


def test_the_log_scores_the_trained_weights_and_resumes(ptb_data, tmp_path,
                                                        capsys):
    output = str(tmp_path / "run")
    callback = EpochF1(output, "ptb", max_length=10, nltk_data=str(ptb_data),
                       label="WSJ10-style")
    run_api.train(run_api.plan_training(output, MODEL, training(1)),
                  corpus(), verbose=0, callbacks=[callback])
    printed = capsys.readouterr().out
    assert "onlstm epoch 1: WSJ10-style dev sentence F1, best" in printed
    assert "best baseline right 100.0" in printed
    rows = read_f1_curve(callback.csv_path)
    # 2 layers + their mean, 2 tree rules, 2 halves.
    assert len(rows) == 12
    assert {(r["run"], r["epoch"], r["reading"]) for r in rows} == {
        ("onlstm", 1, "forward")}
    assert {r["half"]: r["sentences"] for r in rows} == {"dev": 4, "test": 2}
    # One epoch: the saved model is the weights the callback scored.
    table = evaluate_readings(output, "ptb", readings=("forward",),
                              max_length=10, nltk_data=str(ptb_data))
    assert [(r["half"], r["layer"], r["tree_rule"], r["sentence_f1"],
             r["corpus_f1"]) for r in rows] == [
        (c["half"], c["layer"], c["tree_rule"], c["sentence_f1"],
         c["corpus_f1"]) for c in table["cells"]]
    first_seconds = rows[0]["seconds"]
    assert first_seconds > 0 and rows[0]["total_seconds"] == first_seconds

    # A crash after an epoch-2 row was logged but before its checkpoint:
    # the resumed run drops that row and logs epoch 2 anew.
    with open(callback.csv_path, "a", newline="") as f:
        csv.writer(f).writerow(["onlstm", 2, 999.0, 999.0, 1.0, "dev",
                                "forward", 1, "plain", 4, 1.0, 1.0])
    run_api.train(run_api.plan_training(output, MODEL, training(2),
                                        resume=True),
                  corpus(), verbose=0,
                  callbacks=[EpochF1(output, "ptb", max_length=10,
                                     nltk_data=str(ptb_data))])
    rows = read_f1_curve(callback.csv_path)
    assert [r["epoch"] for r in rows] == [1] * 12 + [2] * 12
    second = rows[12:]
    assert all(r["seconds"] != 999.0 for r in second)
    # The clock continues from the first epoch's.
    assert all(first_seconds < r["seconds"] < first_seconds + 300
               for r in second)
    assert (tmp_path / "run" / "f1_by_epoch.png").exists()


def test_the_lstm_beside_is_scored_through_its_forget_gates(ptb_data,
                                                           tmp_path, capsys):
    output = str(tmp_path / "run")
    callback = EpochF1(output, "ptb", max_length=10, nltk_data=str(ptb_data))
    run_api.train(run_api.plan_training(output, MODEL, training(1),
                                        with_lstm=True),
                  corpus(), verbose=0, callbacks=[callback])
    assert "lstm epoch 1: dev sentence F1, best" in capsys.readouterr().out
    rows = read_f1_curve(callback.csv_path)
    lstm = [r for r in rows if r["run"] == "lstm"]
    # its own rows, after the ON-LSTM's: 2 layers + mean, 2 rules, 2 halves
    assert len(lstm) == 12 and rows[:12] == [r for r in rows
                                             if r["run"] == "onlstm"]
    # the trees of its trained weights, as `evaluate_readings` reads the
    # LSTM run (its forget gates)
    table = evaluate_readings(str(tmp_path / "run" / "lstm"), "ptb",
                              max_length=10, nltk_data=str(ptb_data))
    assert [(r["half"], r["layer"], r["tree_rule"], r["sentence_f1"])
            for r in lstm] == [(c["half"], c["layer"], c["tree_rule"],
                                c["sentence_f1"]) for c in table["cells"]]
    # its clock starts after the ON-LSTM's
    assert lstm[0]["total_seconds"] > rows[0]["total_seconds"]


def test_a_missing_treebank_skips_scoring_and_training_goes_on(tmp_path,
                                                               capsys):
    output = str(tmp_path / "run")
    empty = tmp_path / "no_nltk"
    empty.mkdir()
    callback = EpochF1(output, "ptb", nltk_data=str(empty))
    runs = run_api.train(run_api.plan_training(output, MODEL, training(1)),
                         corpus(), verbose=0, callbacks=[callback])
    assert "F1 by epoch: no ptb treebank, skipped" in capsys.readouterr().out
    assert runs["onlstm"]["results"]["test_perplexity"] > 1
    assert not (tmp_path / "run" / "f1_by_epoch.csv").exists()
