"""The Penn Treebank sample's dev/test halves (split by file), the flags
that take them, the F1-against-time picture, and a tiny run of
`examples/ptb_parsing.py` with both models and every reading.
"""

import csv
import json
import os
import subprocess
import sys

import pytest

from on_lstm_keras import cli
from on_lstm_keras import runs
from on_lstm_keras.parsing.treebanks import CorpusNotFoundError
from on_lstm_keras.parsing.treebanks import load_ptb
from on_lstm_keras.parsing.treebanks import ptb_half_fileids
from tests.conftest import REPO_ROOT

# Five files. In the odd-numbered ones (positions 0, 2, 4 of the sorted ids:
# the dev half) every gold tree is right-branching once the tags are
# applied; in the even-numbered ones (the test half) left-branching. So
# the right-branching baseline scores 100 on the dev half and 0 sentence
# F1 on the test half. Punctuation and -NONE- are dropped, unary chains
# collapsed.
RIGHT = "( (S (NP (DT the)) (VP (VBD saw) (NP (NNS dogs))) (. .)) )"
RIGHT_2 = ("( (S (NP (NNS dogs)) (VP (VBD saw) (NP (DT the) (NN cat))) "
           "(. .)) )")
LEFT = "( (S (NP (DT the) (NN dog)) (VP (VBD barked)) (-NONE- *T*)) )"
LEFT_2 = "( (S (NP (NP (DT the) (NN cat)) (NN mat)) (VP (VBD sat)) (. .)) )"
FILES = {
    # Written out of order: the split follows the sorted ids.
    "wsj_0004.mrg": LEFT_2,
    "wsj_0001.mrg": RIGHT + "\n" + RIGHT_2,
    "wsj_0005.mrg": RIGHT_2,
    "wsj_0002.mrg": LEFT,
    "wsj_0003.mrg": RIGHT,
}
DEV_WORDS = [["the", "saw", "dogs"], ["dogs", "saw", "the", "cat"],
             ["the", "saw", "dogs"], ["dogs", "saw", "the", "cat"]]
TEST_WORDS = [["the", "dog", "barked"], ["the", "cat", "mat", "sat"]]


@pytest.fixture
def ptb_data(tmp_path):
    """An NLTK data folder holding `FILES` as the PTB sample."""
    combined = tmp_path / "nltk" / "corpora" / "treebank" / "combined"
    combined.mkdir(parents=True)
    for name, text in FILES.items():
        (combined / name).write_text(text + "\n")
    return tmp_path / "nltk"


def test_halves_split_the_fixture_by_sorted_file_position(ptb_data):
    dev = load_ptb(nltk_data=ptb_data, half="dev")
    test = load_ptb(nltk_data=ptb_data, half="test")
    assert [g.words for g in dev] == DEV_WORDS
    assert [g.words for g in test] == TEST_WORDS
    assert dev[1].tree == ["dogs", ["saw", ["the", "cat"]]]
    assert test[1].tree == [[["the", "cat"], "mat"], "sat"]
    whole = [g.words for g in load_ptb(nltk_data=ptb_data)]
    assert sorted(whole) == sorted(DEV_WORDS + TEST_WORDS)
    # A half is the same as naming its files.
    assert load_ptb(nltk_data=ptb_data, fileids=[
        "wsj_0001.mrg", "wsj_0003.mrg", "wsj_0005.mrg"]) == dev
    assert load_ptb(nltk_data=ptb_data, half="test", max_length=3) == test[:1]


def test_half_fileids_sorts_then_alternates():
    ids = ["wsj_0010.mrg", "wsj_0002.mrg", "wsj_0007.mrg", "wsj_0001.mrg"]
    assert ptb_half_fileids(ids, "dev") == ["wsj_0001.mrg", "wsj_0007.mrg"]
    assert ptb_half_fileids(ids, "test") == ["wsj_0002.mrg", "wsj_0010.mrg"]
    assert ptb_half_fileids(ids, None) == sorted(ids)


def test_halves_of_the_real_sample_are_disjoint_files_covering_it(
        dev_treebanks):
    try:
        whole = load_ptb(nltk_data=dev_treebanks)
    except CorpusNotFoundError as e:
        pytest.skip(f"the NLTK data folder has no PTB sample: {e}")
    combined = dev_treebanks / "corpora" / "treebank" / "combined"
    ids = sorted(p.name for p in combined.glob("*.mrg"))
    dev_ids, test_ids = ids[0::2], ids[1::2]
    assert dev_ids[:2] == ["wsj_0001.mrg", "wsj_0003.mrg"]
    dev = load_ptb(nltk_data=dev_treebanks, half="dev")
    test = load_ptb(nltk_data=dev_treebanks, half="test")
    assert dev == load_ptb(nltk_data=dev_treebanks, fileids=dev_ids)
    assert test == load_ptb(nltk_data=dev_treebanks, fileids=test_ids)
    assert len(dev) + len(test) == len(whole) and dev and test
    # Every sentence of the whole sample is in exactly one half, file by file.
    by_file = [load_ptb(nltk_data=dev_treebanks, fileids=f) for f in ids]
    assert sum(by_file[0::2], []) == dev and sum(by_file[1::2], []) == test


def test_evaluate_treebank_scores_a_ptb_half(ptb_data):
    def right(half):
        return runs.evaluate_treebank("ptb", baseline="right", half=half,
                                      nltk_data=ptb_data)

    dev, test = right("dev"), right("test")
    assert (dev["sentences"], dev["half"]) == (4, "dev")
    assert (dev["sentence_f1"], dev["corpus_f1"]) == (100.0, 100.0)
    # Left-branching gold of 3 and 4 words: no inner span right; over the
    # corpus 2 of 5 predicted spans (the whole sentences) match 2 of 5.
    assert test["sentence_f1"] == 0.0
    assert test["corpus_f1"] == pytest.approx(40.0)
    assert right(None)["sentences"] == 6


def test_ptb_half_arguments_are_checked(ptb_data):
    with pytest.raises(ValueError, match=r"half='odd'"):
        load_ptb(nltk_data=ptb_data, half="odd")
    with pytest.raises(ValueError, match=r"fileids=\['wsj_0001.mrg'\], "
                                         r"half='dev'"):
        load_ptb(nltk_data=ptb_data, fileids=["wsj_0001.mrg"], half="dev")
    with pytest.raises(ValueError, match=r"half='odd'"):
        runs.evaluate_treebank("ptb", baseline="left", half="odd",
                               nltk_data=ptb_data)


def test_evaluate_half_flag_with_ptb(ptb_data, capsys):
    assert cli.main(["evaluate", "--baseline", "right", "--treebank", "ptb",
                     "--half", "test", "--nltk-data", str(ptb_data),
                     "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert (printed["half"], printed["sentences"]) == ("test", 2)
    assert printed["sentence_f1"] == 0.0
    assert cli.main(["evaluate", "--baseline", "right", "--treebank", "ptb",
                     "--half", "dev", "--fileids", "wsj_0001.mrg",
                     "--nltk-data", str(ptb_data)]) == 2
    err = capsys.readouterr().err
    assert "--half dev --fileids wsj_0001.mrg" in err
    with pytest.raises(SystemExit):
        cli.main(["evaluate", "--baseline", "right", "--treebank", "ptb",
                  "--half", "odd"])
    assert "--half" in capsys.readouterr().err


def test_f1_curves_figure_draws_each_reading_against_minutes():
    pytest.importorskip("matplotlib")
    from on_lstm_keras.plotting import f1_curves_figure

    rows = [
        {"reading": "forward", "layer": 1, "tree_rule": "official",
         "total_seconds": 60.0, "sentence_f1": 40.0, "corpus_f1": 45.0},
        {"reading": "forward", "layer": "mean", "tree_rule": "official",
         "total_seconds": 60.0, "sentence_f1": 42.0, "corpus_f1": 44.0},
        {"reading": "forward", "layer": 1, "tree_rule": "official",
         "total_seconds": 150.0, "sentence_f1": 50.0, "corpus_f1": 55.0},
        {"run": "lstm", "reading": "forward", "layer": 1,
         "tree_rule": "official", "total_seconds": 240.0,
         "sentence_f1": 30.0, "corpus_f1": 35.0},
    ]
    fig = f1_curves_figure(rows, [{"baseline": "right", "sentence_f1": 58.0,
                                   "corpus_f1": 63.0}])
    lines = {line.get_label(): line for line in fig.axes[0].get_lines()}
    layer_1 = lines["forward, layer 1, official"]
    assert list(layer_1.get_xdata()) == [1.0, 2.5]
    assert list(layer_1.get_ydata()) == [40.0, 50.0]
    assert list(lines["forward, mean, official"].get_ydata()) == [42.0]
    # the LSTM's same reading and layer is a line of its own
    assert list(lines["LSTM, forward, layer 1, official"].get_ydata()) == [30.0]
    assert list(lines["right-branching 58.0"].get_ydata()) == [58.0, 58.0]
    with pytest.raises(ValueError, match="metric='f1'"):
        f1_curves_figure(rows, metric="f1")
    with pytest.raises(ValueError, match="`rows`"):
        f1_curves_figure([])


def _ptb_text(folder):
    """Mikolov-style PTB text files, built from the fixture's words."""
    sentences = ["the cat saw dogs", "dogs saw the cat", "the dog barked",
                 "the cat sat", "dogs sat on the mat", "the dog saw the cat"]
    folder.mkdir()
    for name, repeat in (("train", 20), ("valid", 2), ("test", 2)):
        (folder / f"ptb.{name}.txt").write_text(
            "".join(f" {s} \n" for s in sentences * repeat))
    return folder


@pytest.mark.slow
def test_example_trains_both_directions_and_chooses_on_the_dev_half(
        ptb_data, tmp_path):
    """A tiny run of the recipe: both models (the backward one trained
    fewer epochs), the F1 log after each epoch, the tables on both halves,
    the default chosen on the WSJ10-style dev half and recorded, and the
    result record of it all."""
    out = tmp_path / "run"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "examples" / "ptb_parsing.py"),
         "--ptb-dir", str(_ptb_text(tmp_path / "ptb")), "--nltk-data",
         str(ptb_data), "--output", str(out), "--quiet", "--epochs", "2",
         "--backward-epochs", "1",
         "--embedding-size", "8", "--hidden-size", "8", "--chunk-size", "4",
         "--layers", "2", "--batch-size", "4", "--bptt", "8",
         "--eval-batch-size", "2", "--no-xla",
         "--record", str(tmp_path / "x.json")],
        env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert (out / "backward" / "model.keras").exists()
    assert not (out / "lstm").exists()  # the LSTM is off by default
    results = json.loads((out / "ptb_results.json").read_text())
    assert set(results["perplexity"]) == {"onlstm", "onlstm backward"}
    wsj10 = results["readings"]["WSJ10-style (≤ 10 words)"]
    assert wsj10["halves"] == {"dev": {"sentences": 4, "skipped": 0},
                               "test": {"sentences": 2, "skipped": 0}}
    # 3 readings x (2 layers + mean) x 2 rules x 2 halves.
    assert len(wsj10["cells"]) == 36
    dev = [c for c in wsj10["cells"] if c["half"] == "dev"]
    top = max(c["sentence_f1"] for c in dev)
    first_best = next(c for c in dev if c["sentence_f1"] == top)
    recorded = json.loads((out / "run.json").read_text())["default_reading"]
    assert recorded["chosen_on"] == (
        "ptb dev half, sentences of at most 10 words")
    assert (recorded["reading"], recorded["layer"], recorded["tree_rule"],
            recorded["sentence_f1"]) == (
        first_best["reading"], first_best["layer"],
        first_best["tree_rule"], top)
    right = [b for b in wsj10["baselines"] if b["baseline"] == "right"]
    assert [(b["half"], b["sentence_f1"]) for b in right] == [
        ("dev", 100.0), ("test", 0.0)]
    with open(out / "f1_by_epoch.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    forward = [r for r in rows if r["run"] == "onlstm"]
    backward = [r for r in rows if r["run"] == "onlstm backward"]
    assert {r["reading"] for r in forward} == {"forward"}
    assert {r["reading"] for r in backward} == {"backward", "both"}
    assert [r["epoch"] for r in forward] == ["1"] * 12 + ["2"] * 12
    assert {r["epoch"] for r in backward} == {"1"}
    assert len(backward) == 24  # settings x halves
    assert json.loads((out / "run.json").read_text())["training"][
        "epochs"] == 2
    assert json.loads((out / "backward" / "run.json").read_text())[
        "training"]["epochs"] == 1
    # The backward model's clock starts where the forward one's stopped.
    assert float(backward[0]["total_seconds"]) == pytest.approx(
        float(forward[-1]["seconds"]) + float(backward[0]["seconds"]),
        abs=0.2)
    for name in ("f1_by_epoch.png", "ptb_f1_wsj10_dev.png",
                 "ptb_f1_all_test.png", "tree.svg"):
        assert (out / name).exists(), name
    assert "Default, chosen on the ptb dev half" in done.stdout
    # The result record: each model's perplexities and epochs, the default
    # and both tables (F1s to 0.01), as ptb_results.json has them.
    record = runs.read_record(tmp_path / "x.json")
    assert record["name"] == "ptb_parsing" and record["seed"] == 0
    assert record["command"].startswith(
        "python examples/ptb_parsing.py --ptb-dir ")
    assert not (out / "record.json").exists()  # --record put it elsewhere
    figures = record["figures"]
    assert figures["default_reading"] == recorded
    assert {name: (m["direction"], m["valid_perplexity"], len(m["epochs"]))
            for name, m in figures["models"].items()} == {
        "onlstm": ("forward", results["perplexity"]["onlstm"][
            "valid_perplexity"], 2),
        "onlstm backward": ("backward", results["perplexity"][
            "onlstm backward"]["valid_perplexity"], 1)}
    assert figures["readings"] == {
        "wsj10": runs.readings_figures(wsj10),
        "all": runs.readings_figures(results["readings"]["all lengths"])}
