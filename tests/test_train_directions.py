"""Training backward models: `run_api.train` of a plan with
`directions="backward"` or `"both"` and `on-lstm train --directions`, on
tiny corpora with a few steps, checked against hand-built reversals."""

import dataclasses
import json
import os
import sys

import pytest

from on_lstm_keras import cli
from on_lstm_keras import runs as run_api
from on_lstm_keras.runs import training
from on_lstm_keras.config import ModelConfig
from on_lstm_keras.config import TrainingConfig
from on_lstm_keras.data.corpus import Corpus
from on_lstm_keras.data.corpus import in_reading_order

from conftest import Background
from conftest import selected
from test_cli import TINY
from test_cli import write_corpus

TRAIN = [["the", "cat", "sat"], ["a", "dog", "ran", "far"], ["the", "dog"]]
VALID = [["a", "cat", "sat"]]
TEST = [["the", "cat", "ran"]]
TINY_MODEL = ModelConfig(embedding_size=4, hidden_size=8, num_layers=2,
                         chunk_size=4, tie_weights=False)
TINY_TRAINING = TrainingConfig(batch_size=2, bptt=3, epochs=2,
                               optimizer="adam", min_count=1, seed=3)


def tiny_corpus():
    return Corpus(TRAIN, VALID, TEST,
                  tokenizer={"name": "whitespace", "lowercase": False},
                  source="tiny", settings={"language": "en"})


def test_in_reading_order_reverses_words_inside_each_sentence():
    assert in_reading_order(TRAIN, "forward") == TRAIN
    assert in_reading_order(TRAIN, "backward") == [
        ["sat", "cat", "the"], ["far", "ran", "dog", "a"], ["dog", "the"]]
    with pytest.raises(ValueError, match="`direction`.*'sideways'"):
        in_reading_order(TRAIN, "sideways")


@pytest.mark.parametrize("direction", ["forward", "backward"])
def test_the_training_streams_are_the_sentences_in_reading_order(
        direction, tmp_path, monkeypatch):
    seen = {}

    def fake_fit(model, train_ids, valid_ids, output_dir, **kwargs):
        seen.update(train=list(train_ids), valid=list(valid_ids),
                    model_direction=model.direction)

    def fake_score(output_dir, train_ids, valid_ids, test_ids, seconds):
        seen["test"] = list(test_ids)
        return {}

    monkeypatch.setattr(training, "train_language_model", fake_fit)
    monkeypatch.setattr(training, "score_run", fake_score)
    plan = run_api.plan_training(str(tmp_path / "run"), TINY_MODEL,
                              TINY_TRAINING, directions=direction)
    run_api.train(plan, tiny_corpus(), verbose=0)
    # The vocabulary: every word once (min_count 1), most frequent first,
    # ties in first-seen order of the sentences as written.
    words = json.loads((tmp_path / "run" / "vocab.json").read_text())["words"]
    assert words == ["<pad>", "<unk>", "<eos>", "the", "dog", "cat", "sat",
                     "a", "ran", "far"]
    ids = {w: i for i, w in enumerate(words)}
    # Written out by hand: each sentence (reversed for backward), <eos>.
    if direction == "backward":
        train = "sat cat the <eos> far ran dog a <eos> dog the <eos>"
        valid, test = "sat cat a <eos>", "ran cat the <eos>"
    else:
        train = "the cat sat <eos> a dog ran far <eos> the dog <eos>"
        valid, test = "a cat sat <eos>", "the cat ran <eos>"
    assert seen["train"] == [ids[w] for w in train.split()]
    assert seen["valid"] == [ids[w] for w in valid.split()]
    assert seen["test"] == [ids[w] for w in test.split()]
    assert seen["model_direction"] == direction


def test_planned_runs_for_each_direction(tmp_path):
    out = str(tmp_path)
    assert run_api.planned_runs(out, "forward") == [
        ("onlstm", out, "onlstm", "forward")]
    assert run_api.planned_runs(out, "backward", with_lstm=True) == [
        ("onlstm", out, "onlstm", "backward"),
        ("lstm", os.path.join(out, "lstm"), "lstm", "backward")]
    assert run_api.planned_runs(out, "both", with_lstm=True) == [
        ("onlstm", out, "onlstm", "forward"),
        ("onlstm backward", os.path.join(out, "backward"), "onlstm",
         "backward"),
        ("lstm", os.path.join(out, "lstm"), "lstm", "forward")]


def test_the_lstm_trains_with_its_own_warm_up(tmp_path):
    """The LSTM beside an ON-LSTM takes `lstm_warmup_steps` as its
    `warmup_steps` (without one it stays on the unigram plateau); the
    ON-LSTMs keep theirs."""
    out = str(tmp_path / "run")
    training_config = dataclasses.replace(TINY_TRAINING, warmup_steps=3,
                                          lstm_warmup_steps=7)
    plan = run_api.plan_training(out, TINY_MODEL, training_config,
                                 directions="both", with_lstm=True)
    assert {r.name: r.training_config.warmup_steps for r in plan.runs} == {
        "onlstm": 3, "onlstm backward": 3, "lstm": 7}
    assert TrainingConfig().lstm_warmup_steps == 500


def test_a_bad_direction_is_refused_before_anything_is_written(
        tmp_path, capsys):
    output = tmp_path / "never"
    with pytest.raises(ValueError, match=r"`directions` \(--directions\).*"
                                         r"directions='up'"):
        run_api.plan_training(str(output), directions="up")
    assert not output.exists()
    with pytest.raises(SystemExit) as stop:
        cli.main(["train", "--output", str(output), "--directions",
                  "sideways", *TINY])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--directions" in err and "'sideways'" in err
    assert not output.exists()


def epochs_in(directory):
    """The epochs logged in a run's `history.csv`, as written."""
    rows = open(os.path.join(directory, "history.csv")).read().split()
    return [r.split(",")[0] for r in rows[1:]]


def test_resume_of_both_interrupted_in_the_backward_half(tmp_path, capsys):
    import keras

    class CtrlCInBackward(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            if epoch == 1 and self.model.direction == "backward":
                raise KeyboardInterrupt

    output = str(tmp_path / "run")
    with pytest.raises(KeyboardInterrupt):
        run_api.train(run_api.plan_training(output, TINY_MODEL, TINY_TRAINING,
                                      directions="both"),
                   tiny_corpus(), verbose=0, callbacks=[CtrlCInBackward()])

    back = os.path.join(output, "backward")
    assert epochs_in(output) == ["0", "1"] and epochs_in(back) == ["0"]
    forward_model = os.path.getmtime(os.path.join(output, "model.keras"))
    capsys.readouterr()
    # No directions given: the run's recorded ones (both).
    trained = run_api.train(run_api.plan_training(output, resume=True),
                         tiny_corpus(), verbose=0)
    out = capsys.readouterr().out
    assert "onlstm: done, 2 epochs trained" in out
    assert "resuming after epoch 1 of 2" in out
    assert epochs_in(back) == ["0", "1"] and epochs_in(output) == ["0", "1"]
    assert os.path.getmtime(os.path.join(output, "model.keras")) == forward_model
    assert trained["onlstm backward"]["model"]["direction"] == "backward"
    assert trained["onlstm backward"]["results"]["test_perplexity"] > 1


def test_backward_epochs_trains_the_backward_model_its_own_count(
        tmp_path, capsys):
    output = str(tmp_path / "run")

    back = os.path.join(output, "backward")
    trained = run_api.train(run_api.plan_training(
        output, TINY_MODEL, TINY_TRAINING,  # epochs=2
        directions="both", backward_epochs=1), tiny_corpus(), verbose=0)
    assert epochs_in(output) == ["0", "1"] and epochs_in(back) == ["0"]
    assert trained["onlstm"]["training"]["epochs"] == 2
    assert trained["onlstm backward"]["training"]["epochs"] == 1
    recorded = json.loads(open(os.path.join(output, "run.json")).read())
    assert recorded["backward_epochs"] == 1
    # Resumed with more epochs: the forward model trains on, the backward
    # one keeps its recorded count.
    capsys.readouterr()
    model, recorded_training = run_api.recorded_configs(output)
    run_api.train(run_api.plan_training(
        output, model, dataclasses.replace(recorded_training, epochs=3),
        resume=True), tiny_corpus(), verbose=0)
    out = capsys.readouterr().out
    assert "resuming after epoch 2 of 3" in out
    assert "onlstm backward: done, 1 epochs trained" in out
    assert epochs_in(output) == ["0", "1", "2"] and epochs_in(back) == ["0"]
    # Given anew on resume, it is recorded and trained to.
    run_api.train(run_api.plan_training(output, resume=True, backward_epochs=2),
               tiny_corpus(), verbose=0)
    assert epochs_in(output) == ["0", "1", "2"]
    assert epochs_in(back) == ["0", "1"]
    recorded = json.loads(open(os.path.join(output, "run.json")).read())
    assert recorded["backward_epochs"] == 2


@pytest.mark.parametrize("value, direction, message", [
    (0, "both", "positive integer.*backward_epochs=0"),
    ("2", "both", "positive integer.*backward_epochs='2'"),
    (True, "both", "positive integer.*backward_epochs=True"),
    (1.5, "both", "positive integer.*backward_epochs=1.5"),
    (2, "forward", "directions 'both'.*backward_epochs=2 with "
                   "directions='forward'"),
])
def test_bad_backward_epochs_are_refused_before_anything_is_written(
        value, direction, message, tmp_path):
    output = tmp_path / "never"
    with pytest.raises(ValueError, match=r"`backward_epochs` "
                                         r"\(--backward-epochs\).*" + message):
        run_api.plan_training(str(output), directions=direction,
                           backward_epochs=value)
    assert not output.exists()


def test_backward_epochs_takes_numpy_integers():
    import numpy as np

    plan = run_api.plan_training("never", directions="both",
                              backward_epochs=np.int64(3))
    assert plan.backward_epochs == 3 and type(plan.backward_epochs) is int
    assert run_api.plan_training("never").backward_epochs is None


def test_backward_epochs_flag_needs_direction_both(tmp_path, capsys):
    output = tmp_path / "never"
    assert cli.main(["train", "--output", str(output),
                     "--backward-epochs", "2", *TINY]) == 2
    err = capsys.readouterr().err
    assert "--backward-epochs" in err and "directions='forward'" in err
    assert not output.exists()
    with pytest.raises(SystemExit) as stop:
        cli.main(["train", "--output", str(output), "--directions", "both",
                  "--backward-epochs", "0", *TINY])
    assert stop.value.code == 2
    assert "--backward-epochs" in capsys.readouterr().err
    assert not output.exists()


@pytest.fixture(scope="module", autouse=True)
def both_run_started(request, tmp_path_factory):
    """`on-lstm train --directions both` on the tiny Chinese corpus, started
    in its own process at the module's first test: the tests that do not
    read it (the resumed run below trains two models of its own) run
    meanwhile, on the other core. Not started when no selected test reads
    it."""
    if not selected(request, fixture="both_run"):
        yield None
        return
    root = tmp_path_factory.mktemp("both")
    corpus = write_corpus(root / "corpus.txt")
    output = root / "model"
    run = Background([sys.executable, "-m", "on_lstm_keras.cli", "train",
                      "--language", "zh", "--corpus", str(corpus),
                      "--output", str(output), "--directions", "both", *TINY])
    yield corpus, output, run
    run.stop()


@pytest.fixture(scope="module")
def both_run(both_run_started):
    corpus, output, run = both_run_started
    run.succeeded()  # exit status 0
    return corpus, output


def test_direction_both_writes_both_runs_and_parses_with_both(
        both_run, capsys):
    corpus, output = both_run
    forward = json.loads((output / "run.json").read_text())
    backward = json.loads((output / "backward" / "run.json").read_text())
    assert forward["model"]["direction"] == "forward"
    assert backward["model"]["direction"] == "backward"
    assert forward["train_directions"] == "both"
    assert "train_directions" not in backward
    assert (output / "backward" / "model.keras").exists()
    # The same vocabulary (built from the sentences as written).
    assert ((output / "vocab.json").read_text()
            == (output / "backward" / "vocab.json").read_text())
    capsys.readouterr()
    assert cli.main(["parse", "--model", str(output), "--reading", "both",
                     "--format", "json", "--presegmented",
                     "我们 喜欢 数学"]) == 0
    tree = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    flat = json.dumps(tree, ensure_ascii=False)
    assert all(w in flat for w in ("我们", "喜欢", "数学"))
    # A new run never overwrites it, the backward half included.
    assert cli.main(["train", "--language", "zh", "--corpus", str(corpus),
                     "--output", str(output), "--directions", "both",
                     *TINY]) == 2
    assert "holds a training checkpoint" in capsys.readouterr().err


def test_resume_refuses_a_direction_the_run_cannot_take(both_run, capsys):
    corpus, output = both_run
    assert cli.main(["train", "--language", "zh", "--corpus", str(corpus),
                     "--output", str(output), "--directions", "backward",
                     "--resume", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--directions backward" in err and "reads forward" in err


# ---- the halves of the Sinica sample, the table, the saved default ----

from on_lstm_keras import runs  # noqa: E402
from on_lstm_keras.parsing.treebanks import load_sinica  # noqa: E402


def test_sinica_halves_are_the_even_and_odd_positions(fake_nltk_data):
    # FAKE_SINICA holds three sentences: 一 / 嘉珍和我住在同一條巷子 / 臉色蒼白鱟.
    dev = load_sinica(nltk_data=fake_nltk_data, half="dev")
    test = load_sinica(nltk_data=fake_nltk_data, half="test")
    assert [g.words for g in dev] == [["一"], ["臉色", "蒼白", "鱟"]]
    assert [g.words[0] for g in test] == ["嘉珍"]
    every = load_sinica(nltk_data=fake_nltk_data)
    assert sorted(map(str, every)) == sorted(map(str, dev + test))
    # Positions are counted before max_length leaves any out.
    assert load_sinica(nltk_data=fake_nltk_data, half="test",
                       max_length=3) == []
    with pytest.raises(ValueError, match="`half`.*half='train'"):
        load_sinica(nltk_data=fake_nltk_data, half="train")


def cell(reading, layer, rule, half, f1):
    return {"reading": reading, "layer": layer, "tree_rule": rule,
            "half": half, "sentence_f1": f1, "corpus_f1": 100 - f1}


def test_best_reading_picks_the_best_dev_cell():
    cells = [cell("forward", 1, "official", "dev", 20.0),
             cell("both", "mean", "plain", "dev", 26.5),
             cell("backward", 2, "official", "dev", 26.5),  # a tie: later
             cell("forward", 3, "plain", "test", 40.0),     # not dev
             cell("both", 1, "official", "dev", 25.0)]
    assert runs.best_reading(cells) == {
        "reading": "both", "layer": "mean", "tree_rule": "plain",
        "metric": "sentence_f1", "sentence_f1": 26.5}
    assert runs.best_reading(cells, half="test")["layer"] == 3
    # By corpus F1 (100 - sentence F1 here) the lowest sentence F1 wins.
    assert runs.best_reading(cells, metric="corpus_f1")["corpus_f1"] == 80.0
    with pytest.raises(ValueError, match="no cell of half='all'"):
        runs.best_reading(cells, half="all")


@pytest.fixture
def both_copy(both_run, tmp_path):
    import shutil

    corpus, output = both_run
    copy = tmp_path / "copy"
    shutil.copytree(output, copy)
    return copy


def write_default(run_dir, **default):
    path = run_dir / "run.json"
    info = json.loads(path.read_text())
    info["default_reading"] = default
    path.write_text(json.dumps(info))


SENTENCES = [["我们", "喜欢", "数学", "和", "历史"],
             ["老师", "讨论", "音乐"]]


def test_the_saved_default_is_used_and_explicit_settings_win(both_copy, capsys):
    write_default(both_copy, reading="both", layer="mean",
                  tree_rule="plain", chosen_on="by hand")
    out = str(both_copy)
    saved = runs.parse(out, SENTENCES)
    explicit = runs.parse(out, SENTENCES, reading="both", layer="mean",
                          tree_rule="plain")
    assert [p.tree for p in saved] == [p.tree for p in explicit]
    assert [p.split_scores for p in saved] == [p.split_scores for p in explicit]
    assert saved[0].backward_layer_distances  # the backward model was read
    # A setting given wins; the others still come from the default.
    given = runs.parse(out, SENTENCES, reading="forward", layer=1)
    assert [p.tree for p in given] == [p.tree for p in runs.parse(
        out, SENTENCES, reading="forward", layer=1, tree_rule="plain")]
    assert not given[0].backward_layer_distances
    # The same through the command line.
    def cli_trees(*flags):
        assert cli.main(["parse", "--model", out, "--presegmented", *flags,
                         *(" ".join(s) for s in SENTENCES)]) == 0
        return capsys.readouterr().out.strip().splitlines()

    assert cli_trees() == cli_trees("--reading", "both", "--layer", "mean",
                                    "--tree-rule", "plain")
    assert cli_trees() == [json.dumps(p.tree, ensure_ascii=False)
                           for p in explicit]


def test_evaluate_uses_the_saved_default(both_copy, fake_nltk_data):
    write_default(both_copy, reading="backward", layer=1,
                  tree_rule="plain", chosen_on="by hand")
    out = str(both_copy)
    saved = runs.evaluate_treebank("sinica", model=out,
                                   nltk_data=fake_nltk_data)
    explicit = runs.evaluate_treebank(
        "sinica", model=out, nltk_data=fake_nltk_data, reading="backward",
        layer=1, tree_rule="plain")
    assert saved == explicit
    assert (saved["reading"], saved["layer"], saved["tree_rule"]) == (
        "backward", 1, "plain")


def test_the_table_and_the_recorded_choice(both_copy, fake_nltk_data, capsys):
    out = str(both_copy)
    table = runs.evaluate_readings(out, "sinica", nltk_data=fake_nltk_data)
    assert table["halves"] == {"dev": {"sentences": 1, "skipped": 1},
                               "test": {"sentences": 1, "skipped": 0}}
    # 3 readings x (2 layers + mean) x 2 rules x 2 halves.
    assert len(table["cells"]) == 36 and len(table["baselines"]) == 8
    # Each cell is what evaluate_treebank gives for that setting and half.
    for c in table["cells"][::7]:
        one = runs.evaluate_treebank(
            "sinica", model=out, nltk_data=fake_nltk_data, half=c["half"],
            reading=c["reading"], layer=c["layer"],
            tree_rule=c["tree_rule"])
        assert (one["sentence_f1"], one["corpus_f1"]) == (
            c["sentence_f1"], c["corpus_f1"])
    for b in table["baselines"]:
        one = runs.evaluate_treebank("sinica", baseline=b["baseline"],
                                     nltk_data=fake_nltk_data, half=b["half"])
        assert one["sentence_f1"] == b["sentence_f1"]
    record_path = both_copy / "record.json"
    assert cli.main(["evaluate", "--model", out, "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data), "--choose-default",
                     "--quiet", "--record", str(record_path)]) == 0
    printed = capsys.readouterr().out
    recorded = json.loads((both_copy / "run.json").read_text())["default_reading"]
    best = runs.best_reading(table["cells"], "dev")
    assert recorded == {**best, "chosen_on": "sinica dev half"}
    assert "Default recorded in" in printed and "| balanced" in printed
    # The record holds what --json would print: the table and the choice.
    from on_lstm_keras.runs.records import json_safe

    record = runs.read_record(record_path)
    assert record["command"].startswith(f"on-lstm evaluate --model {out}")
    assert record["seed"] == table["seed"] == 0
    assert record["figures"] == json.loads(json.dumps(json_safe(
        {**table, "default_reading": recorded, "model": out})))


def test_half_and_choose_default_flags_are_checked(both_copy, capsys):
    # The PTB sample has halves too (split by file); they pick their own
    # files, so `--fileids` beside `--half` is refused.
    assert cli.main(["evaluate", "--baseline", "right", "--treebank", "ptb",
                     "--half", "dev", "--fileids", "wsj_0001.mrg"]) == 2
    assert ("give --half or --fileids, received --half dev --fileids "
            "wsj_0001.mrg") in capsys.readouterr().err
    assert cli.main(["evaluate", "--model", str(both_copy), "--treebank",
                     "sinica", "--choose-default", "--layer", "1"]) == 2
    assert "received --layer" in capsys.readouterr().err
    with pytest.raises(ValueError, match="half='odd'"):
        runs.evaluate_treebank("sinica", baseline="left", half="odd")


def test_plot_parse_draws_the_default_and_both_models_layer(both_copy,
                                                            monkeypatch):
    """The picture's rows: the parse's split scores, then both models'
    `d_f` of its layer (the middle one for the mean), checked against
    single-reading parses; the backward model's value at a word is the
    score of the boundary after it."""
    from on_lstm_keras import plotting
    from on_lstm_keras.parsing import Parse

    drawn = {}

    def capture(tree, rows, path, title=None):
        drawn.update(tree=tree, rows=rows, path=path, title=title)
        return path

    monkeypatch.setattr(plotting, "plot_tree", capture)
    out, words = str(both_copy), SENTENCES[0]
    for default, k in (({"layer": "mean", "tree_rule": "plain"}, 1),
                       ({"layer": 2, "tree_rule": "official"}, 2)):
        write_default(both_copy, reading="both", chosen_on="by hand",
                      **default)
        parsed = runs.parse(out, [" ".join(words)], presegmented=True)[0]
        assert plotting.plot_parse(parsed, "tree.svg") == "tree.svg"
        rows = drawn["rows"]
        assert list(rows) == ["split score", f"forward d_f (layer {k})",
                              f"backward d_f (layer {k})"]
        expected = runs.parse(out, [words])[0]
        assert drawn["tree"] == parsed.tree == expected.tree
        assert rows["split score"] == expected.split_scores
        forward = runs.parse(out, [words], reading="forward", layer=k)[0]
        assert rows[f"forward d_f (layer {k})"] == pytest.approx(
            forward.split_scores)
        backward = runs.parse(out, [words], reading="backward", layer=k)[0]
        assert rows[f"backward d_f (layer {k})"][:-1] == pytest.approx(
            backward.split_scores[1:])
        assert drawn["title"] == (
            f"{' '.join(words)}  (reading both, layer {default['layer']})")
    with pytest.raises(ValueError, match="`parse` must have a word"):
        plotting.plot_parse(Parse([], None, []), "tree.svg")
