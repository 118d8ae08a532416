"""`on-lstm train | parse | evaluate` end to end on a tiny Chinese corpus."""

import itertools
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from on_lstm_keras import cli
from on_lstm_keras import runs
from on_lstm_keras.config import ModelConfig
from on_lstm_keras.config import TrainingConfig
from on_lstm_keras.data.corpus import load_corpus
from on_lstm_keras.models.saving import load_run

from conftest import Background
from conftest import selected
from conftest import write_fake_nltk_data

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The example's own run (`example_started`) keeps the preset's XLA, the
# path a user's run takes; the other runs leave it off: compiling costs
# about 20 s a process here and checks nothing these tests look at (the
# XLA path's numbers are test_language_model's).
TINY_XLA = ["--epochs", "1", "--embedding-size", "8", "--hidden-size", "16",
            "--layers", "2", "--chunk-size", "4", "--batch-size", "2",
            "--bptt", "6", "--min-count", "1", "--quiet"]
TINY = [*TINY_XLA, "--no-xla"]


def numpy_perplexity(model, ids, rows):
    """exp(mean NLL) of one stateless pass over each of `rows` contiguous
    rows of the stream (every token but each row's first is predicted)."""
    import keras

    steps = len(ids) // rows
    tokens = np.asarray(ids[: rows * steps]).reshape(rows, steps)
    logits = keras.ops.convert_to_numpy(model(tokens[:, :-1])).astype(np.float64)
    logits -= logits.max(-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp, tokens[:, 1:, None], -1)
    return float(np.exp(nll.mean()))


def held_out_perplexity(output, corpus, split):
    """The perplexity `train` reports, recomputed from the loaded model."""
    run = load_run(str(output))
    ids = run.vocab.encode_sentences(getattr(corpus, split))
    rows = min(run.info["training"]["eval_batch_size"], len(ids) // 2)
    return numpy_perplexity(run.model, ids, rows)


def write_corpus(path):
    """Sentences from a small grammar, two to a line, with blank lines."""
    subjects = ["我们", "他们", "老师", "学生"]
    verbs = ["喜欢", "学习", "讨论"]
    objects = ["数学", "历史", "音乐", "语言"]
    sentences = [f"{s}{v}{o}。" for s, v, o in
                 itertools.product(subjects, verbs, objects)]
    lines = ["".join(pair) for pair in zip(sentences[::2], sentences[1::2])]
    lines.insert(3, "")
    lines.insert(7, "   ")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    corpus = write_corpus(root / "corpus.txt")
    output = root / "model"
    code = cli.main(["train", "--language", "zh", "--corpus", str(corpus),
                     "--output", str(output), *TINY])
    assert code == 0
    return corpus, output


def test_train_writes_a_loadable_model_directory(trained):
    corpus, output = trained
    for name in ("model.keras", "vocab.json", "run.json", "history.csv"):
        assert (output / name).exists(), name
    info = json.loads((output / "run.json").read_text(encoding="utf-8"))
    assert info["tokenizer"]["name"] == "jieba"
    run = load_run(str(output))
    assert "数学" in run.vocab and run.model.stateful is False
    assert info["corpus_settings"]["corpus"] == str(corpus)
    # 48 sentences, 5% / 5% held out by sentence: round(2.4) = 2 each.
    split = load_corpus("zh", str(corpus), progress=False)
    assert (len(split.train), len(split.valid), len(split.test)) == (44, 2, 2)
    assert sorted(map(tuple, split.train + split.valid + split.test)) == sorted(
        tuple(run.tokenizer(s)) for s in sentences_of(corpus))
    assert info["corpus_summary"].startswith("train 44 sentences")
    for name in ("valid", "test"):
        assert info["results"][f"{name}_perplexity"] == pytest.approx(
            held_out_perplexity(output, split, name), rel=1e-4)


def sentences_of(corpus):
    """The corpus's sentences, cut after every 。 (blank lines dropped)."""
    text = corpus.read_text(encoding="utf-8").replace("\n", "")
    return [s.strip() + "。" for s in text.split("。") if s.strip()]


def test_parse_prints_one_tree_per_input(trained, capsys, monkeypatch):
    _, output = trained
    assert cli.main(["parse", "--model", str(output), "我们喜欢音乐",
                     "老师讨论自然语言处理和火星文"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert workflow_leaves(first) == ["我们", "喜欢", "音乐"]
    # Unknown words and a sentence longer than any in training still parse.
    run = load_run(str(output))
    second = "老师讨论自然语言处理和火星文"
    assert workflow_leaves(json.loads(lines[1])) == run.tokenizer(second)

    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("我们 喜欢 音乐\n\n学生 学习\n"))
    assert cli.main(["parse", "--model", str(output), "--presegmented",
                     "--format", "brackets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[1] == ""
    assert lines[2] == "(学生 学习)"


def to_brackets_of(tree):
    from on_lstm_keras.parsing import to_brackets

    return to_brackets(tree)


def workflow_leaves(tree):
    from on_lstm_keras.parsing import leaves

    return leaves(tree)


def test_parse_layers_and_ascii(trained, capsys, tmp_path):
    _, output = trained
    import keras

    from on_lstm_keras.parsing import ascii_tree
    from on_lstm_keras.parsing import distances_to_tree

    assert cli.main(["parse", "--model", str(output), "--layer", "2",
                     "--format", "ascii", "学生学习历史"]) == 0
    text = capsys.readouterr().out
    # The tree of layer 2's distances, computed here from the model itself.
    run = load_run(str(output))
    words = ["学生", "学习", "历史"]
    ids = [[run.vocab.eos_id, *run.vocab.encode(words), run.vocab.eos_id]]
    _, d = run.model(np.asarray(ids, "int32"), return_distances=True)
    d = keras.ops.convert_to_numpy(d)[0, :, 1:-1, 0]
    assert text == ascii_tree(distances_to_tree(words, d[1])) + "\n"
    assert cli.main(["parse", "--model", str(output), "--layer", "1",
                     "--format", "brackets", "--tree-rule", "plain",
                     "学生学习历史"]) == 0
    assert capsys.readouterr().out == to_brackets_of(
        distances_to_tree(words, d[0], tree_rule="plain")) + "\n"
    # --file: one sentence a line, the same trees as on the command line.
    listed = tmp_path / "sentences.txt"
    listed.write_text("学生学习历史\n", encoding="utf-8")
    assert cli.main(["parse", "--model", str(output), "--layer", "2",
                     "--format", "ascii", "--file", str(listed)]) == 0
    assert capsys.readouterr().out == text
    assert cli.main(["parse", "--model", str(output), "--layer", "3", "学生"]) == 2
    assert "layer=3" in capsys.readouterr().err


def test_resume_continues_the_run(trained, tmp_path):
    corpus, _ = trained
    output = tmp_path / "m"
    args = ["train", "--language", "zh", "--corpus", str(corpus),
            "--output", str(output), *TINY]
    assert cli.main(args) == 0
    # Without --resume an existing run is not overwritten.
    assert cli.main(args) == 2
    args[args.index("--epochs") + 1] = "2"
    assert cli.main(args + ["--resume"]) == 0
    rows = (output / "history.csv").read_text().strip().splitlines()
    assert len(rows) == 3  # header + epoch 0 + epoch 1


def test_interrupted_training_keeps_the_last_checkpoint(trained, tmp_path):
    import keras

    corpus_path, _ = trained
    corpus = load_corpus("zh", str(corpus_path), progress=False)

    class CtrlC(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            if epoch == 1:
                raise KeyboardInterrupt

    model = ModelConfig(embedding_size=8, hidden_size=16, num_layers=2,
                        chunk_size=4)
    training = TrainingConfig(batch_size=2, bptt=6, epochs=3)
    output = str(tmp_path / "run")
    with pytest.raises(KeyboardInterrupt):
        runs.train(runs.plan_training(output, model, training), corpus,
                   verbose=0, callbacks=[CtrlC()])
    assert load_run(output).model is not None  # epoch 0's best model
    info = runs.train(runs.plan_training(output, model, training,
                                         resume=True),
                      corpus, verbose=0)["onlstm"]
    rows = open(os.path.join(output, "history.csv")).read().strip().splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == ["0", "1", "2"]
    # The reported perplexity is the kept model's, recomputed in NumPy.
    assert info["results"]["valid_perplexity"] == pytest.approx(
        held_out_perplexity(output, corpus, "valid"), rel=1e-4)


def test_bad_corpus_files(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes("好的。\n".encode("utf-8") + b"\xff\xfe broken\n")
    assert cli.main(["train", "--corpus", str(bad), "--output",
                     str(tmp_path / "o"), *TINY]) == 2
    err = capsys.readouterr().err
    assert "bad.txt, line 2" in err and "UTF-8" in err
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n", encoding="utf-8")
    assert cli.main(["train", "--corpus", str(blank), "--output",
                     str(tmp_path / "o"), *TINY]) == 2
    assert "holds no text" in capsys.readouterr().err
    assert cli.main(["parse", "--model", str(tmp_path / "none"), "好"]) == 2
    assert "No model directory" in capsys.readouterr().err


def test_evaluate_baseline_json_matches_hand_computed_f1(fake_nltk_data, capsys,
                                                        tmp_path):
    assert cli.main(["evaluate", "--baseline", "right", "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data), "--json",
                     "--record", str(tmp_path / "right.json")]) == 0
    result = json.loads(capsys.readouterr().out)
    # The record keeps what --json printed, under the command that gave it.
    record = runs.read_record(tmp_path / "right.json")
    assert record["name"] == "evaluate" and record["figures"] == result
    assert record["command"] == (
        f"on-lstm evaluate --baseline right --treebank sinica --nltk-data "
        f"{fake_nltk_data} --json --record {tmp_path / 'right.json'}")
    assert record["seed"] is None  # right-branching draws nothing
    # Sentence 2 (6 words): right-branching spans (1,6) (2,6) (3,6) (4,6),
    # gold (0,3) (4,6): P 1/4, R 1/2, F1 1/3. Sentence 3 (3 words, flat
    # gold): P 0, R 1, F1 0. Mean: 1/6.
    assert result["treebank"] == "sinica" and result["baseline"] == "right"
    assert result["sentences"] == 2 and result["skipped"] == 1
    assert result["sentence_f1"] == pytest.approx(100 / 6)
    # With roots: overlaps 2 + 1, predicted 5 + 2, gold 3 + 1:
    # P 3/7, R 3/4, F1 18/33.
    assert result["corpus_f1"] == pytest.approx(100 * 18 / 33)
    # The same as text; its record holds the same figures.
    assert cli.main(["evaluate", "--baseline", "right", "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data),
                     "--record", str(tmp_path / "text.json")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "sinica: 2 sentences scored (1 with fewer than 2 words skipped), "
        "baseline right",
        "  trees: sentence F1 16.7  corpus F1 (micro-averaged spans) 54.5",
    ]
    assert runs.read_record(tmp_path / "text.json")["figures"] == result
    # The random baseline's record names its seed.
    assert cli.main(["evaluate", "--baseline", "random", "--treebank",
                     "sinica", "--nltk-data", str(fake_nltk_data), "--seed",
                     "3", "--json", "--record",
                     str(tmp_path / "random.json")]) == 0
    random = json.loads(capsys.readouterr().out)
    record = runs.read_record(tmp_path / "random.json")
    assert record["figures"] == random and record["seed"] == 3


def test_evaluate_a_model_on_every_layer(trained, fake_nltk_data, capsys,
                                        tmp_path):
    _, output = trained
    assert cli.main(["evaluate", "--model", str(output), "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data), "--layer", "all",
                     "--json", "--record", str(tmp_path / "x.json")]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [row["layer"] for row in result["per_layer"]] == [1, 2]
    record = runs.read_record(tmp_path / "x.json")
    assert record["name"] == "evaluate" and record["figures"] == result
    assert record["command"].startswith(
        f"on-lstm evaluate --model {output} --treebank sinica")
    assert record["seed"] is None
    # Each row is what `--layer k` gives on its own.
    for row in result["per_layer"]:
        assert cli.main(["evaluate", "--model", str(output), "--treebank",
                         "sinica", "--nltk-data", str(fake_nltk_data),
                         "--layer", str(row["layer"]), "--json"]) == 0
        single = json.loads(capsys.readouterr().out)
        assert (single["layer"], single["sentence_f1"], single["corpus_f1"]) == (
            row["layer"], row["sentence_f1"], row["corpus_f1"])
    assert cli.main(["evaluate", "--model", str(output), "--treebank", "ptb",
                     "--nltk-data", str(fake_nltk_data / "nothing")]) == 2
    assert "treebank" in capsys.readouterr().err


def test_evaluate_layer_flag_picks_the_layer(trained, fake_nltk_data, capsys,
                                             monkeypatch):
    """With hand-made distances (worked out in test_parsing_model_parser.py)
    the layers give different, known scores: `--layer` must reach them."""
    from test_parsing_model_parser import FAKE_DISTANCES
    from test_parsing_model_parser import WANT

    from on_lstm_keras.runs import evaluation

    monkeypatch.setattr(
        evaluation, "sentence_distances",
        lambda model, vocab, sentences, batch_size=64, progress=False: [
            FAKE_DISTANCES[tuple(w)] for w in sentences])
    _, output = trained
    for layer in ("1", "2"):
        assert cli.main(["evaluate", "--model", str(output), "--treebank",
                         "sinica", "--nltk-data", str(fake_nltk_data),
                         "--layer", layer, "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        assert result["layer"] == int(layer)
        assert result["sentence_f1"] == pytest.approx(WANT[int(layer)][0])
        assert result["corpus_f1"] == pytest.approx(WANT[int(layer)][1])
    assert cli.main(["evaluate", "--model", str(output), "--treebank",
                     "sinica", "--nltk-data", str(fake_nltk_data),
                     "--layer", "all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:3] == [
        "  layer 1: sentence F1 16.7  corpus F1 (micro-averaged spans) 54.5",
        "  layer 2: sentence F1 33.3  corpus F1 (micro-averaged spans) 72.7",
    ]
    # Then the throughput: the 2 sentences scored over the seconds taken.
    rate, seconds = re.fullmatch(
        r"  (\d+) sentences/s: ([\d.]+) s to load, read, parse and score "
        r"them", lines[3]).groups()
    assert len(lines) == 4
    assert int(rate) == pytest.approx(2 / float(seconds), rel=0.2, abs=1)


@pytest.fixture(scope="module", autouse=True)
def example_started(request, tmp_path_factory):
    """`examples/lm_chinese.py` on the tiny corpus and the fake Sinica
    sample, started in its own process at the module's first test, so that
    its three trainings run beside the tests before
    `test_examples_run_end_to_end`, which checks it; not started when that
    test is not selected."""
    if not selected(request, test="test_examples_run_end_to_end"):
        yield None
        return
    root = tmp_path_factory.mktemp("example")
    corpus = write_corpus(root / "corpus.txt")
    nltk_data = write_fake_nltk_data(root / "nltk_data")
    output = root / "example"
    run = Background(
        [sys.executable, os.path.join(REPO, "examples", "lm_chinese.py"),
         "--corpus", str(corpus), "--output", str(output), "--with-lstm",
         "--nltk-data", str(nltk_data), "--f1-by-epoch", *TINY_XLA],
        env=dict(os.environ, PYTHONUNBUFFERED="1"))
    yield output, nltk_data, run
    run.stop()


@pytest.mark.slow
def test_examples_run_end_to_end(example_started):
    # The corpus is `write_corpus`'s (the `trained` run's), the NLTK data
    # `fake_nltk_data`'s.
    output, fake_nltk_data, run = example_started
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    returncode, stdout, stderr = run.finish(timeout=600)
    assert returncode == 0, stderr[-3000:]
    assert "test perplexity" in stdout and '"苹果' in stdout.replace("[", "")
    assert (output / "tree.svg").exists() and (output / "lstm" / "model.keras").exists()
    # Both models by default, and the default chosen on the
    # (fake) Sinica dev half, recorded with its table and bar charts.
    assert (output / "backward" / "model.keras").exists()
    default = json.loads((output / "run.json").read_text())["default_reading"]
    assert default["chosen_on"] == "sinica dev half"
    assert default["reading"] in ("forward", "backward", "both")
    assert (output / "sinica_f1_dev.png").exists()
    assert (output / "sinica_readings.json").exists()
    # The result record: every model's figures as its run recorded them.
    record = runs.read_record(output / "record.json")
    assert record["name"] == "lm_chinese" and record["seed"] == 0
    assert record["command"].startswith("python ") and "--with-lstm" in record["command"]
    assert record["machine"]["logical_cores"] == os.cpu_count()
    models = record["figures"]["models"]
    assert set(models) == {"onlstm", "onlstm backward", "lstm"}
    for name, place in [("onlstm", ""), ("onlstm backward", "backward"), ("lstm", "lstm")]:
        results = json.loads((output / place / "run.json").read_text())["results"]
        assert models[name]["valid_perplexity"] == results["valid_perplexity"]
        history = (output / place / "history.csv").read_text().splitlines()
        assert len(models[name]["epochs"]) == len(history) - 1
        # Whether it is still on the unigram plateau, as its run says.
        assert models[name]["on_unigram_plateau"] == results["on_unigram_plateau"]
    lstm_training = json.loads((output / "lstm" / "run.json").read_text())["training"]
    assert lstm_training["warmup_steps"] == lstm_training["lstm_warmup_steps"] == 500
    assert record["figures"]["default_reading"] == default
    assert {c["half"] for c in record["figures"]["readings"]["cells"]} == {"dev", "test"}
    # --f1-by-epoch: every model's trees scored on the dev half (one
    # sentence of three words; the one-word one is skipped) after its
    # epoch, the LSTM's through its forget gates.
    from on_lstm_keras.runs import read_f1_curve

    rows = read_f1_curve(str(output / "f1_by_epoch.csv"))
    assert {(r["run"], r["reading"]) for r in rows} == {
        ("onlstm", "forward"), ("onlstm backward", "backward"),
        ("onlstm backward", "both"), ("lstm", "forward")}
    # (2 layers + mean) x 2 rules, read 1 + 2 + 1 ways
    assert len(rows) == 6 + 12 + 6
    assert {(r["half"], r["sentences"], r["epoch"]) for r in rows} == {
        ("dev", 1, 1)}
    assert "onlstm epoch 1: Sinica dev sentence F1, best" in stdout
    assert re.search(r"^lstm epoch 1: Sinica dev sentence F1, best", stdout,
                     re.M)
    assert (output / "f1_by_epoch.png").exists()
    done = subprocess.run(
        [sys.executable, os.path.join(REPO, "examples", "parse_chinese.py"),
         "--model", str(output), "--eval-sinica", str(fake_nltk_data),
         "爱真的需要勇气"],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| forward | 2 | official |" in done.stdout
    assert "| both | mean | plain |" in done.stdout
    assert "right-branching" in done.stdout
    assert (output / "sinica_f1_dev.png").exists()
    assert json.loads(done.stdout.strip().splitlines()[-1])


def test_parse_json_distances_gives_every_layers_d_f(trained, capsys):
    _, output = trained
    import keras

    assert cli.main(["parse", "--model", str(output), "--distances",
                     "学生学习历史", "我们喜欢音乐"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    run = load_run(str(output))
    for line, words in zip(lines, (["学生", "学习", "历史"],
                                   ["我们", "喜欢", "音乐"])):
        got = json.loads(line)
        assert sorted(got) == ["distances", "tree", "words"]
        assert got["words"] == words
        # d_f of both layers, from the model reading the sentence alone.
        ids = [[run.vocab.eos_id, *run.vocab.encode(words), run.vocab.eos_id]]
        _, d = run.model(np.asarray(ids, "int32"), return_distances=True)
        d = keras.ops.convert_to_numpy(d)[0, :, 1:-1, 0]
        np.testing.assert_allclose(got["distances"], d, atol=1e-6)
        # The tree is the default (middle, lower of two) layer's.
        from on_lstm_keras.parsing import distances_to_tree

        assert got["tree"] == distances_to_tree(words, d[0])
    assert cli.main(["parse", "--model", str(output), "--distances",
                     "--format", "ascii", "学生"]) == 2
    assert "--distances needs --format json" in capsys.readouterr().err


def test_missing_extra_is_one_line_and_exit_2(trained, fake_nltk_data,
                                              tmp_path, capsys, monkeypatch):
    """A model trained on simplified text converts Sinica with opencc; without
    it, `evaluate` says which extra to install, in one line."""
    import shutil

    _, output = trained
    model = tmp_path / "simplified"
    shutil.copytree(output, model)
    info = json.loads((model / "run.json").read_text(encoding="utf-8"))
    info["script"] = "simplified"
    (model / "run.json").write_text(json.dumps(info), encoding="utf-8")
    monkeypatch.setitem(sys.modules, "opencc", None)  # `import opencc` fails
    assert cli.main(["evaluate", "--model", str(model), "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data)]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "on-lstm evaluate: error: load_sinica(to_simplified=True), which "
        "converts traditional to simplified characters, needs opencc: "
        "pip install 'on-lstm-keras[zh]'"]


# Two PTB files: "the cat sat on the mat ." and "it is big and red .".
FAKE_PTB = {
    "wsj_0001.mrg": "( (S (NP (DT The) (NN cat)) (VP (VBD sat) (PP (IN on) "
                    "(NP (DT the) (NN mat)))) (. .)) )",
    "wsj_0002.mrg": "( (S (NP (PRP It)) (VP (VBZ is) (ADJP (JJ big) (CC and) "
                    "(JJ red))) (. .)) )",
}


@pytest.fixture
def fake_ptb(tmp_path):
    folder = tmp_path / "corpora" / "treebank" / "combined"
    folder.mkdir(parents=True)
    for name, text in FAKE_PTB.items():
        (folder / name).write_text(text + "\n", encoding="utf-8")
    return tmp_path


def test_evaluate_fileids_scores_only_those_files(fake_ptb, capsys):
    """Right-branching trees, scored by hand.

    wsj_0001 (6 words): gold (0,2) (2,6) (3,6) (4,6), right-branching
    (1,6) (2,6) (3,6) (4,6): sentence P = R = F1 = 3/4; with the root
    (0,6): 4 of 5 predicted, of 5 gold.
    wsj_0002 (5 words): gold (1,5) (2,5), predicted (1,5) (2,5) (3,5):
    sentence P 2/3 R 1 F1 4/5; with the root: 3 of 4, of 3.
    """
    def run(*flags):
        assert cli.main(["evaluate", "--baseline", "right", "--treebank",
                         "ptb", "--nltk-data", str(fake_ptb), "--json",
                         *flags]) == 0
        return json.loads(capsys.readouterr().out)

    second = run("--fileids", "wsj_0002.mrg")
    assert second["sentences"] == 1 and second["fileids"] == ["wsj_0002.mrg"]
    assert second["sentence_f1"] == pytest.approx(80.0)
    assert second["corpus_f1"] == pytest.approx(100 * 6 / 7)  # P 3/4, R 1
    both = run()
    assert both["sentences"] == 2 and "fileids" not in both
    assert both["sentence_f1"] == pytest.approx(100 * (3 / 4 + 4 / 5) / 2)
    assert both["corpus_f1"] == pytest.approx(100 * 14 / 17)  # P 7/9, R 7/8
    for flags in (["--fileids", "wsj_0001.mrg,wsj_0002.mrg"],
                  ["--fileids", "wsj_0001.mrg", "--fileids", "wsj_0002.mrg"]):
        got = run(*flags)
        assert got.pop("fileids") == ["wsj_0001.mrg", "wsj_0002.mrg"]
        assert got == both
    assert cli.main(["evaluate", "--baseline", "right", "--treebank", "ptb",
                     "--nltk-data", str(fake_ptb), "--fileids",
                     "wsj_0003.mrg"]) == 2
    assert "fileids=['wsj_0003.mrg']" in capsys.readouterr().err
    assert cli.main(["evaluate", "--baseline", "right", "--treebank", "sinica",
                     "--nltk-data", str(fake_ptb), "--fileids",
                     "wsj_0001.mrg"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "on-lstm evaluate: error: --fileids selects files of --treebank ptb; "
        "the Sinica sample is one file, received --treebank sinica "
        "--fileids wsj_0001.mrg"]


def test_help_names_the_corpus_f1_for_what_it_is(capsys):
    with pytest.raises(SystemExit):
        cli.main(["evaluate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "micro-averaged" in text and "not by the EVALB program" in text
    assert "--tree-rule" in text and "--fileids" in text
