"""`on-lstm train | parse | evaluate` end to end on a tiny Chinese corpus."""

import itertools
import json
import os
import subprocess
import sys

import pytest

from on_lstm_keras import cli
from on_lstm_keras import workflow
from on_lstm_keras.models.saving import load_run

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TINY = ["--epochs", "1", "--embedding-size", "8", "--hidden-size", "16",
        "--layers", "2", "--chunk-size", "4", "--batch-size", "2",
        "--bptt", "6", "--min-count", "1", "--quiet"]


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
    assert info["results"]["test_perplexity"] > 1
    run = load_run(str(output))
    assert "数学" in run.vocab and run.model.stateful is False
    # 48 sentences, 5% / 5% held out by sentence.
    assert info["corpus_settings"]["corpus"] == str(corpus)


def test_parse_prints_one_tree_per_input(trained, capsys, monkeypatch):
    _, output = trained
    assert cli.main(["parse", "--model", str(output), "我们喜欢音乐",
                     "老师讨论自然语言处理和火星文"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert workflow_leaves(first) == ["我们", "喜欢", "音乐"]
    # Unknown words and a sentence longer than any in training still parse.
    assert len(workflow_leaves(json.loads(lines[1]))) >= 4

    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("我们 喜欢 音乐\n\n学生 学习\n"))
    assert cli.main(["parse", "--model", str(output), "--presegmented",
                     "--format", "brackets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[1] == ""
    assert lines[2] == "(学生 学习)"


def workflow_leaves(tree):
    from on_lstm_keras.parsing import leaves

    return leaves(tree)


def test_parse_layers_and_ascii(trained, capsys):
    _, output = trained
    assert cli.main(["parse", "--model", str(output), "--layer", "2",
                     "--format", "ascii", "学生学习历史"]) == 0
    text = capsys.readouterr().out
    for word in ("学生", "学习", "历史"):
        assert word in text
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
    corpus = workflow.load_corpus("zh", str(corpus_path), progress=False)

    class CtrlC(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            if epoch == 1:
                raise KeyboardInterrupt

    settings = dict(embedding_size=8, hidden_size=16, num_layers=2,
                    chunk_size=4, batch_size=2, bptt=6, epochs=3)
    output = str(tmp_path / "run")
    with pytest.raises(KeyboardInterrupt):
        workflow.train_runs(corpus, output, verbose=0, callbacks=[CtrlC()],
                            **settings)
    assert load_run(output).model is not None  # epoch 0's best model
    info = workflow.train_runs(corpus, output, resume=True, verbose=0,
                               **settings)["onlstm"]
    rows = open(os.path.join(output, "history.csv")).read().strip().splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == ["0", "1", "2"]
    assert info["results"]["valid_perplexity"] > 1


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


FAKE_SINICA = (
    "#1:1.[4257] NP(Head:Neu:一)#。(PERIODCATEGORY)\n"
    "#3:3.[39029] S(theme:NP(Head:N(DUMMY1:Nba:嘉珍|Head:Caa:和|DUMMY2:Nhaa:我))"
    "|Head:VC1:住在|goal:NP(quantifier:DM:同一條|Head:Nab:巷子))#，(COMMACATEGORY)\n"
    "#9:9.[1] S(theme:NP(Head:Nad:臉色)|Head:VH11:蒼白|theme:NP(Head:Nab:鱟))"
    "#，(COMMACATEGORY)\n"
)


@pytest.fixture
def fake_nltk_data(tmp_path):
    sinica = tmp_path / "corpora" / "sinica_treebank"
    sinica.mkdir(parents=True)
    (sinica / "parsed").write_text(FAKE_SINICA, encoding="utf-8")
    return tmp_path


def test_evaluate_baseline_json_matches_hand_computed_f1(fake_nltk_data, capsys):
    assert cli.main(["evaluate", "--baseline", "right", "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    # Sentence 2 (6 words): right-branching spans (1,6) (2,6) (3,6) (4,6),
    # gold (0,3) (4,6): P 1/4, R 1/2, F1 1/3. Sentence 3 (3 words, flat
    # gold): P 0, R 1, F1 0. Mean: 1/6.
    assert result["treebank"] == "sinica" and result["baseline"] == "right"
    assert result["sentences"] == 2 and result["skipped"] == 1
    assert result["sentence_f1"] == pytest.approx(100 / 6)
    # With roots: overlaps 2 + 1, predicted 5 + 2, gold 3 + 1:
    # P 3/7, R 3/4, F1 18/33.
    assert result["corpus_f1"] == pytest.approx(100 * 18 / 33)


def test_evaluate_a_model_on_every_layer(trained, fake_nltk_data, capsys):
    _, output = trained
    assert cli.main(["evaluate", "--model", str(output), "--treebank", "sinica",
                     "--nltk-data", str(fake_nltk_data), "--layer", "all",
                     "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [row["layer"] for row in result["per_layer"]] == [1, 2]
    for row in result["per_layer"]:
        assert 0 <= row["sentence_f1"] <= 100 and 0 <= row["corpus_f1"] <= 100
    assert cli.main(["evaluate", "--model", str(output), "--treebank", "ptb",
                     "--nltk-data", str(fake_nltk_data / "nothing")]) == 2
    assert "treebank" in capsys.readouterr().err


@pytest.mark.slow
def test_examples_run_end_to_end(trained, tmp_path, fake_nltk_data):
    corpus, _ = trained
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    output = tmp_path / "example"
    done = subprocess.run(
        [sys.executable, os.path.join(REPO, "examples", "lm_chinese.py"),
         "--corpus", str(corpus), "--output", str(output), "--baseline", *TINY],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "test perplexity" in done.stdout and '"苹果' in done.stdout.replace("[", "")
    assert (output / "tree.svg").exists() and (output / "lstm" / "model.keras").exists()
    done = subprocess.run(
        [sys.executable, os.path.join(REPO, "examples", "parse_chinese.py"),
         "--model", str(output), "--eval-sinica", str(fake_nltk_data),
         "爱真的需要勇气"],
        capture_output=True, text=True, env=env, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "| ON-LSTM layer 2 |" in done.stdout and "right-branching" in done.stdout
    assert json.loads(done.stdout.strip().splitlines()[-1])
