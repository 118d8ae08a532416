"""Every training and CLI failure ends cleanly and loses nothing.

A crash at any moment of a checkpoint write (`kill -9`), a corrupt
checkpoint, a second process on the same output directory, bad flags, an
unusable `--output`, divergence, empty evaluations, bad `--layer` values, a
truncated `model.keras`, non-UTF-8 input on stdin and Ctrl-C before the
first epoch: each gives one clear message and the right exit code, and a
run can always be continued. Tiny models on a tiny corpus written here.
"""

import argparse
import csv
import dataclasses
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest

import on_lstm_keras
from on_lstm_keras import cli
from on_lstm_keras import config
from on_lstm_keras import runs
from on_lstm_keras.runs import training as run_training
from on_lstm_keras.utils.atomic import replacing
from on_lstm_keras.utils.atomic import write_text
from on_lstm_keras.utils.lock import LOCK_FILE
from on_lstm_keras.utils.lock import DirectoryLocked
from on_lstm_keras.utils.lock import output_lock
from on_lstm_keras.models import callbacks
from on_lstm_keras.models import checkpoints
from on_lstm_keras.models.saving import load_run

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# XLA off: compiling costs about 20 s a process and none of these
# failures depends on it.
TINY = ["--embedding-size", "8", "--hidden-size", "8", "--layers", "1",
        "--chunk-size", "4", "--batch-size", "2", "--bptt", "6",
        "--no-xla", "--quiet"]


def write_corpus(path):
    """24 short sentences, one a line."""
    subjects = ["我们", "他们", "老师", "学生"]
    verbs = ["喜欢", "学习"]
    objects = ["数学", "历史", "音乐"]
    lines = [f"{s}{v}{o}。" for s in subjects for v in verbs for o in objects]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def train_args(corpus, output, *more):
    return ["train", "--language", "zh", "--corpus", str(corpus),
            "--output", str(output), *TINY, *more]


def history_epochs(output):
    with open(os.path.join(output, "history.csv"), newline="") as f:
        return [int(row["epoch"]) for row in csv.DictReader(f)]


def checkpoint_state(output):
    with open(os.path.join(output, "checkpoint", "training_metadata.json")) as f:
        meta = json.load(f)
    return meta["epoch"], sorted(os.listdir(os.path.join(output, "checkpoint")))


def exit_code(argv):
    """`cli.main(argv)`, or argparse's exit code."""
    try:
        return cli.main(argv)
    except SystemExit as e:
        return e.code


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A corpus and a 1-epoch run (copied by the tests that change it)."""
    root = tmp_path_factory.mktemp("failures")
    corpus = write_corpus(root / "corpus.txt")
    output = root / "run"
    assert cli.main(train_args(corpus, output, "--epochs", "1")) == 0
    return corpus, output


def copy_run(trained, tmp_path):
    corpus, output = trained
    copy = tmp_path / "run"
    shutil.copytree(output, copy)
    return corpus, copy


# -- atomic writes -----------------------------------------------------------

def test_a_write_failing_midway_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "history.csv"
    write_text(str(path), "epoch,loss\n0,1.5\n")

    with pytest.raises(OSError, match="disk full"):
        with replacing(str(path)) as tmp:
            with open(tmp, "w") as f:
                f.write("epoch,loss\n0,1.5\n1,")
            raise OSError("disk full")
    assert path.read_text() == "epoch,loss\n0,1.5\n"
    assert os.listdir(tmp_path) == ["history.csv"]
    with replacing(str(path)) as tmp:
        with open(tmp, "w") as f:
            f.write("new")
    assert path.read_text() == "new" and os.listdir(tmp_path) == ["history.csv"]
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask  # as open() makes it


KILL_DURING_SECOND_CHECKPOINT = textwrap.dedent("""
    import os, signal, sys
    import keras
    from on_lstm_keras import cli

    original = keras.Model.save_weights
    calls = []

    def save_then_die(self, path, *args, **kwargs):
        calls.append(path)
        original(self, path, *args, **kwargs)
        if len(calls) == 2:  # epoch 2: half of the file is on disk
            size = os.path.getsize(path)
            with open(path, "r+b") as f:
                f.truncate(size // 2)
            os.kill(os.getpid(), signal.SIGKILL)

    keras.Model.save_weights = save_then_die
    sys.exit(cli.main(sys.argv[1:]))
""")


def test_kill_9_during_a_checkpoint_write_then_resume(trained, tmp_path, capsys):
    corpus, _ = trained
    output = tmp_path / "run"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(
        [sys.executable, "-c", KILL_DURING_SECOND_CHECKPOINT,
         *train_args(corpus, output, "--epochs", "2")],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=300,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    # Killed with epoch 2's weights half written: epoch 1's checkpoint is
    # whole; epoch 2 was logged (just before the checkpoint) and a torn
    # temporary file is left.
    epoch, files = checkpoint_state(output)
    assert epoch == 1
    assert "epoch-1.weights.h5" in files and len(files) == 3
    assert history_epochs(output) == [0, 1]

    # --resume without --epochs trains to the 2 epochs the run recorded,
    # logs epoch 2 once, and cleans up.
    assert cli.main(train_args(corpus, output, "--resume")) == 0
    out = capsys.readouterr().out
    assert "resuming after epoch 1 of 2" in out
    assert history_epochs(output) == [0, 1]
    assert checkpoint_state(output) == (
        2, ["epoch-2.weights.h5", "training_metadata.json"])
    assert not [f for f in os.listdir(output) if f.startswith(".")]
    info = json.loads((output / "run.json").read_text(encoding="utf-8"))
    assert info["training"]["epochs"] == 2

    # Resumed again: nothing to do, and it says so.
    assert cli.main(train_args(corpus, output, "--resume")) == 0
    assert "done, 2 epochs trained (pass an --epochs above 2" in capsys.readouterr().out
    assert history_epochs(output) == [0, 1]


def test_resume_takes_the_recorded_epoch_count_not_the_preset():
    # A run's recorded configs, unlike the preset's: the flags not given
    # keep them.
    recorded = (dataclasses.replace(config.PRESETS["paper"][0], chunk_size=5,
                                    hidden_size=20, embedding_size=10),
                dataclasses.replace(config.PRESETS["paper"][1], epochs=3))
    args = cli.build_parser().parse_args(["train", "--resume", "--quiet"])
    assert runs.configs_from_args(args, recorded) == recorded
    args = cli.build_parser().parse_args(
        ["train", "--resume", "--epochs", "4", "--lr", "0.01"])
    assert runs.configs_from_args(args, recorded) == (
        recorded[0], dataclasses.replace(recorded[1], epochs=4,
                                         learning_rate=0.01))
    args = cli.build_parser().parse_args(["train"])
    _, training_config = runs.configs_from_args(
        args, config.PRESETS[args.preset])
    assert training_config.epochs == config.PRESETS["small"][1].epochs


def test_a_resume_may_not_change_the_model(trained, tmp_path, capsys):
    corpus, output = copy_run(trained, tmp_path)
    assert cli.main(train_args(corpus, output, "--resume", "--hidden-size",
                               "12", "--chunk-size", "4")) == 2
    err = capsys.readouterr().err
    assert "`hidden_size` cannot change" in err and "hidden_size=8" in err


def test_a_resume_refuses_a_corpus_flag_that_differs_from_the_runs(
        trained, tmp_path, capsys):
    """A resumed run reads the corpus it recorded: a corpus flag with
    another value is named and refused (not ignored), nothing written; the
    same corpus file, under another spelling of its path, is accepted."""
    corpus, output = copy_run(trained, tmp_path)
    other = write_corpus(tmp_path / "other.txt")
    before = sorted(os.listdir(output))
    argv = train_args(other, output, "--resume", "--epochs", "2")
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert f"received --corpus {other}, where the run in {output} has" in err
    assert "Traceback" not in err
    assert cli.main(train_args(corpus, output, "--resume", "--epochs", "2",
                               "--max-sentences", "5")) == 2
    assert "received --max-sentences 5, where the run" in capsys.readouterr().err
    assert sorted(os.listdir(output)) == before
    assert history_epochs(output) == [0]
    relative = os.path.relpath(corpus)
    assert relative != str(corpus)
    assert cli.main(train_args(relative, output, "--resume", "--epochs",
                               "2")) == 0
    assert history_epochs(output) == [0, 1]


def test_history_rows_past_the_checkpoint_are_dropped_on_resume(tmp_path):
    path = tmp_path / "history.csv"
    path.write_text("epoch,loss\n0,3.0\n1,2.5\n1,2.5\n2,2.0\n2,")
    assert [r["epoch"] for r in callbacks.read_history(str(path), 2)] == ["0", "1", "1"]
    assert [r["loss"] for r in callbacks.read_history(str(path))] == [
        "3.0", "2.5", "2.5", "2.0", ""]


# -- corrupt files -------------------------------------------------------------

@pytest.mark.parametrize("damaged", ["epoch-1.weights.h5", "training_metadata.json"])
def test_a_corrupt_checkpoint_is_reported_by_name(trained, tmp_path, capsys,
                                                  damaged):
    corpus, output = copy_run(trained, tmp_path)
    path = output / "checkpoint" / damaged
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert cli.main(train_args(corpus, output, "--resume", "--epochs", "2")) == 2
    err = capsys.readouterr().err
    assert f"Corrupt training checkpoint {path}" in err
    assert f"delete {output / 'checkpoint'}" in err and "without --resume" in err
    assert "Traceback" not in err
    assert history_epochs(output) == [0]


def test_a_truncated_model_file_says_so(trained, tmp_path, capsys):
    _, output = copy_run(trained, tmp_path)
    model = output / "model.keras"
    model.write_bytes(model.read_bytes()[:1000])
    assert cli.main(["parse", "--model", str(output), "我们喜欢音乐"]) == 2
    err = capsys.readouterr().err
    assert f"Corrupt model file {model}: not a complete .keras archive" in err
    assert "not found" not in err.lower()


# -- the output directory --------------------------------------------------------

# Loads the lock module by its path: it needs nothing else, and the package
# would import Keras.
LOCK_AND_WAIT = textwrap.dedent("""
    import importlib.util, sys, time
    spec = importlib.util.spec_from_file_location("lock", sys.argv[2])
    lock = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lock)
    with lock.output_lock(sys.argv[1]):
        print("locked", flush=True)
        time.sleep(120)
""")


def test_a_second_process_refuses_at_once_and_a_dead_ones_lock_is_taken(
        trained, tmp_path, capsys):
    corpus, _ = trained
    output = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_AND_WAIT, str(output),
         os.path.join(REPO, "on_lstm_keras", "utils", "lock.py")],
        stdout=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert cli.main(train_args(corpus, output, "--epochs", "1")) == 2
        err = capsys.readouterr().err
        assert f"{output} is in use by another training process (pid {holder.pid})" in err
        assert os.listdir(output) == [LOCK_FILE]  # nothing written
    finally:
        holder.kill()
        holder.wait()
    # The killed process left its lock file; it is taken over.
    assert os.listdir(output) == [LOCK_FILE]
    with output_lock(str(output)):
        assert (output / LOCK_FILE).read_text().strip() == str(os.getpid())
        with output_lock(str(output)):  # the same process may nest
            pass
    assert not (output / LOCK_FILE).exists()


def test_the_lock_refuses_another_open_of_the_file(tmp_path):
    # Locks are per open file: a second, independent acquisition fails the
    # way another process's would.
    from on_lstm_keras.utils import lock as _lock

    with output_lock(str(tmp_path)):
        held = _lock._held.pop(os.path.realpath(tmp_path))
        try:
            with pytest.raises(DirectoryLocked, match=f"pid {os.getpid()}"):
                with output_lock(str(tmp_path)):
                    pass
        finally:
            _lock._held[os.path.realpath(tmp_path)] = held


@pytest.mark.parametrize("flags, message", [
    (["--max-vocab", "0"], "argument --max-vocab: must be an integer >= 4, received 0"),
    (["--lr", "-1"], "argument --lr: must be a finite number > 0, received '-1'"),
    (["--lr", "0"], "argument --lr: must be a finite number > 0"),
    (["--epochs", "0"], "argument --epochs: must be an integer >= 1"),
    (["--input-dropout", "1.5"], "argument --input-dropout: must be a finite number in [0, 1)"),
    (["--seed", "-3"], "argument --seed: must be an integer >= 0"),
    (["--batch-size", "two"], "argument --batch-size: must be an integer, received 'two'"),
])
def test_bad_flags_are_named_and_nothing_is_written(trained, tmp_path, capsys,
                                                   flags, message):
    corpus, _ = trained
    output = tmp_path / "out"
    assert exit_code(train_args(corpus, output, *flags)) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: on-lstm train") and message in err
    assert "max_size" not in err
    assert not output.exists()


@pytest.mark.parametrize("flags, message", [
    (["--warmup-steps", "-1"],
     "argument --warmup-steps: must be an integer >= 0, received -1"),
    (["--weight-decay", "-1"],
     "argument --weight-decay: must be a finite number >= 0, received '-1'"),
    (["--warmup-steps", "1e3"],
     "argument --warmup-steps: must be an integer, received '1e3'"),
])
def test_a_bad_flag_is_named_before_the_corpus_is_read(tmp_path, capsys,
                                                       flags, message):
    output = tmp_path / "out"
    assert exit_code(["train", "--output", str(output), *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: on-lstm train") and message in err
    assert not output.exists()


def test_the_warmup_flag_reaches_the_config():
    args = cli.build_parser().parse_args(["train", "--warmup-steps", "500"])
    _, training = runs.configs_from_args(args, config.PRESETS[args.preset])
    assert training == dataclasses.replace(config.PRESETS["small"][1],
                                           warmup_steps=500)
    assert "--warmup-steps WARMUP_STEPS" in train_subparser().format_help()


def test_the_initializer_flag_is_checked_and_reaches_the_config(tmp_path,
                                                                capsys):
    output = tmp_path / "out"
    assert exit_code(["train", "--output", str(output),
                      "--initializer", "torch"]) == 2
    err = capsys.readouterr().err
    assert "argument --initializer: invalid choice: 'torch'" in err
    assert not output.exists()
    args = cli.build_parser().parse_args(["train", "--initializer", "uniform"])
    model, _ = runs.configs_from_args(args, config.PRESETS[args.preset])
    assert model == dataclasses.replace(config.PRESETS["small"][0],
                                        initializer="uniform")
    assert "--initializer {keras,uniform}" in train_subparser().format_help()


def test_flag_combinations_and_a_bad_corpus_write_nothing(trained, tmp_path, capsys):
    corpus, _ = trained
    output = tmp_path / "out"
    assert cli.main(train_args(corpus, output, "--chunk-size", "3")) == 2
    assert "--chunk-size 3 must divide --hidden-size 8" in capsys.readouterr().err
    assert cli.main(train_args(corpus, output, "--tie-weights",
                               "--embedding-size", "6")) == 2
    assert "--chunk-size 4 must divide --embedding-size 6" in capsys.readouterr().err
    assert cli.main(train_args(tmp_path / "missing.txt", output)) == 2
    assert "No corpus file" in capsys.readouterr().err
    assert not output.exists()
    # The library checks its arguments, by their names, before writing.
    with pytest.raises(ValueError, match="`max_vocab` must be at least 4"):
        config.TrainingConfig(max_vocab=2)
    with pytest.raises(ValueError, match="`learning_rate` must be a finite number > 0"):
        config.TrainingConfig(learning_rate=-1.0)


def test_an_unusable_output_path_is_a_clear_error(trained, tmp_path, capsys):
    corpus, _ = trained
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    assert cli.main(train_args(corpus, a_file / "sub")) == 2
    err = capsys.readouterr().err
    assert f"--output {a_file / 'sub'}: {a_file} is a file" in err
    assert "Traceback" not in err and "Errno" not in err
    assert cli.main(train_args(corpus, a_file)) == 2
    assert f"--output {a_file} is a file, not a directory" in capsys.readouterr().err
    assert a_file.read_text() == "x"


def test_other_os_errors_give_exit_code_2(monkeypatch, capsys):
    def fail(args):
        raise PermissionError(13, "Permission denied", "runs/x/run.json")

    monkeypatch.setattr(cli, "run_parse", fail)
    assert cli.main(["parse", "--model", "runs/x", "a"]) == 2
    assert capsys.readouterr().err == (
        "on-lstm parse: error: runs/x/run.json: Permission denied\n")


# -- divergence and Ctrl-C -----------------------------------------------------

def test_divergence_stops_and_keeps_the_last_good_epoch(trained, tmp_path, capsys):
    corpus, output = copy_run(trained, tmp_path)
    model_before = (output / "model.keras").read_bytes()
    assert cli.main(train_args(corpus, output, "--resume", "--epochs", "2",
                               "--lr", "1e30")) == 1
    err = capsys.readouterr().err
    assert "Training diverged in epoch 2" in err
    assert "checkpoint of epoch 1 is kept" in err and "lower --lr" in err
    assert checkpoint_state(output) == (
        1, ["epoch-1.weights.h5", "training_metadata.json"])
    assert history_epochs(output) == [0]
    assert (output / "model.keras").read_bytes() == model_before
    # The kept checkpoint continues with a sane learning rate.
    assert cli.main(train_args(corpus, output, "--resume", "--lr", "0.003")) == 0
    assert history_epochs(output) == [0, 1]
    with open(output / "history.csv", newline="") as f:
        assert all(float(r["val_perplexity"]) < 1e3 for r in csv.DictReader(f))
    assert load_run(str(output)).model is not None


def test_ctrl_c_before_the_first_epoch_says_nothing_was_saved(
        trained, tmp_path, capsys, monkeypatch):
    corpus, saved_run = copy_run(trained, tmp_path)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(run_training, "train_language_model", interrupted)
    assert cli.main(train_args(corpus, tmp_path / "new", "--epochs", "1")) == 130
    err = capsys.readouterr().err
    assert "before the first epoch ended: no epoch was saved" in err
    assert "last finished" not in err
    assert cli.main(train_args(corpus, saved_run, "--resume", "--epochs", "2")) == 130
    assert "epoch 1, the last finished, is saved" in capsys.readouterr().err


# -- evaluate and parse ----------------------------------------------------------

ONE_WORD_SINICA = "#1:1.[4257] NP(Head:Neu:一)#。(PERIODCATEGORY)\n"


@pytest.fixture
def tiny_sinica(tmp_path):
    folder = tmp_path / "nltk" / "corpora" / "sinica_treebank"
    folder.mkdir(parents=True)
    (folder / "parsed").write_text(ONE_WORD_SINICA, encoding="utf-8")
    return tmp_path / "nltk"


def test_evaluate_with_nothing_to_score_prints_json_null(trained, tiny_sinica, capsys):
    _, output = trained
    for source in (["--model", str(output)], ["--baseline", "right"]):
        assert cli.main(["evaluate", *source, "--treebank", "sinica",
                         "--nltk-data", str(tiny_sinica), "--max-length", "1",
                         "--json"]) == 0
        out, err = capsys.readouterr()
        result = json.loads(out)  # strict JSON: NaN would not parse
        assert "NaN" not in out
        assert result["sentences"] == 0 and result["skipped"] == 1
        assert result["sentence_f1"] is None and result["corpus_f1"] is None
        assert "0 sentences were scored" in err
    assert cli.main(["evaluate", "--baseline", "left", "--treebank", "sinica",
                     "--nltk-data", str(tiny_sinica)]) == 0
    assert ("sentence F1 n/a  corpus F1 (micro-averaged spans) n/a"
            in capsys.readouterr().out)


def test_evaluate_rejects_a_layer_before_reading_the_treebank(trained, tmp_path, capsys):
    _, output = trained
    # The treebank folder does not exist: a layer check made after reading
    # it would report the treebank instead.
    assert cli.main(["evaluate", "--model", str(output), "--treebank", "ptb",
                     "--nltk-data", str(tmp_path / "none"), "--layer", "5"]) == 2
    err = capsys.readouterr().err
    assert "must be an integer in 1..1 (the model has 1 layer)" in err
    assert "layer=5" in err


@pytest.mark.parametrize("command, value, message", [
    ("evaluate", "abc", "must be a layer number (from 1) or 'all', received 'abc'"),
    ("evaluate", "0", "must be a layer number (from 1) or 'all', received 0"),
    ("parse", "abc", "must be an integer, received 'abc'"),
    ("parse", "0", "must be an integer >= 1, received 0"),
])
def test_a_bad_layer_is_a_usage_error(command, value, message, capsys):
    source = (["--baseline", "left", "--treebank", "ptb"] if command == "evaluate"
              else ["--model", "m"])
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, *source, "--layer", value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: on-lstm {command}")
    assert f"on-lstm {command}: error: argument --layer: {message}" in err


def test_parse_rejects_non_utf8_on_stdin_like_a_file(trained, tmp_path, capsys,
                                                     monkeypatch):
    _, output = trained
    bad = "我们喜欢音乐\n".encode("utf-8") + b"\xff\xfe broken\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bad)))
    assert cli.main(["parse", "--model", str(output), "--format", "brackets"]) == 2
    out, err = capsys.readouterr()
    assert "<stdin>, line 2: not valid UTF-8 (byte 0: b'\\xff\\xfe b')" in err
    assert out == ""
    path = tmp_path / "bad.txt"
    path.write_bytes(bad)
    assert cli.main(["parse", "--model", str(output), "--file", str(path)]) == 2
    assert f"{path}, line 2: not valid UTF-8" in capsys.readouterr().err

    good = "我们 喜欢 音乐\r\n学生 学习\n".encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(good), newline=""))
    assert cli.main(["parse", "--model", str(output), "--presegmented",
                     "--format", "brackets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1] == "(学生 学习)"
    assert sorted(lines[0].replace("(", " ").replace(")", " ").split()) == sorted(
        ["我们", "喜欢", "音乐"])


# -- flags from the configs, and the old spellings ---------------------------

def train_subparser():
    commands = next(a for a in cli.build_parser()._actions
                    if isinstance(a, argparse._SubParsersAction))
    return commands.choices["train"]


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"on-lstm {on_lstm_keras.__version__}\n"


def test_every_train_flag_shows_its_default_and_each_presets():
    parser = train_subparser()
    options = [a for a in parser._actions if a.option_strings and a.dest != "help"]
    assert all("(default: " in a.help for a in options), [
        a.option_strings for a in options if "(default: " not in a.help]
    by_flag = {s: a for a in options for s in a.option_strings}
    # One flag per field the CLI exposes, with the old spellings.
    for field in ("embedding_size", "hidden_size", "num_layers", "chunk_size",
                  "learning_rate", "clipnorm", "variable_length", "max_vocab"):
        assert any(a.dest == field for a in options), field
    for flag, field in (("--layers", "num_layers"), ("--lr", "learning_rate"),
                        ("--clip", "clipnorm"), ("--variable-bptt", "variable_length")):
        assert by_flag[flag].dest == field
    want = ", ".join(f"{name} {model.hidden_size}"
                     for name, (model, _) in config.PRESETS.items())
    assert f"(default: the --preset's: {want})" in by_flag["--hidden-size"].help
    seed = config.PRESETS["small"][1].seed
    assert f"(default: {seed}, every preset)" in by_flag["--seed"].help
    help_text = parser.format_help()
    assert "--with-lstm" in help_text and "--baseline" not in help_text
    # The config flags in their groups, beside the corpus and the run's.
    assert [g.title for g in parser._action_groups][2:] == [
        "corpus", "model", "training", "run"]


def test_train_flags_show_their_defaults():
    """`train` keeps every flag, its output by language and no default
    directory; the help shows what a flag not given means."""
    train = train_subparser()
    assert train.parse_args([]).output is None
    text = " ".join(train.format_help().split())
    assert "(default: runs/zh for zh, runs/en for en)" in text
    assert "(default: forward; with --resume" in text
    assert "(default: small)" in text and "--side-by-side" in text
    assert "Example: on-lstm train" in text


def test_an_empty_output_is_named_not_taken_for_the_working_directory():
    with pytest.raises(ValueError, match="--output is empty.*received ''"):
        runs.plan_training("")


def test_flags_override_the_presets_configs():
    def configs(argv):
        args = cli.build_parser().parse_args(argv)
        return runs.configs_from_args(args, config.PRESETS[args.preset])

    assert configs(["train", "--preset", "paper"]) == config.PRESETS["paper"]
    model, training = configs(
        ["train", "--layers", "2", "--lr", "0.1", "--clip", "0.5",
         "--variable-bptt", "--tie-weights", "--weight-decay", "0",
         "--eval-batch-size", "3", "--chunk-size", "4",
         "--recurrent-dropconnect", "0.1"])
    small_model, small_training = config.PRESETS["small"]
    assert model == dataclasses.replace(
        small_model, num_layers=2, tie_weights=True, chunk_size=4,
        recurrent_dropconnect=0.1)
    assert training == dataclasses.replace(
        small_training, learning_rate=0.1, clipnorm=0.5, variable_length=True,
        weight_decay=0.0, eval_batch_size=3)


def test_with_lstm_plans_the_lstm_with_the_flags_configs(
        trained, tmp_path, capsys, monkeypatch):
    corpus, _ = trained
    calls = {}

    def fake_train(plan, corpus, **kwargs):
        calls.update(kwargs, plan=plan)
        return {}

    monkeypatch.setattr(runs, "train", fake_train)
    assert cli.main(train_args(corpus, tmp_path / "o", "--with-lstm",
                               "--epochs", "2")) == 0
    assert "warning" not in capsys.readouterr().err
    plan = calls["plan"]
    assert plan.with_lstm is True
    main, lstm = plan.runs
    model, training = main.model_config, main.training_config
    assert (model.hidden_size, model.chunk_size, training.epochs) == (8, 4, 2)
    assert model.recurrent == "onlstm"
    assert lstm.model_config == dataclasses.replace(model, recurrent="lstm")
    assert lstm.directory == os.path.join(str(tmp_path / "o"), "lstm")
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["train", "--baseline"])


def test_a_new_run_records_both_configs_and_the_script(trained):
    _, output = trained
    info = json.loads((output / "run.json").read_text(encoding="utf-8"))
    model, training = runs.recorded_configs(str(output))
    assert info["model"] == model.to_dict() and info["training"] == training.to_dict()
    assert (model.hidden_size, model.num_layers, training.bptt) == (8, 1, 6)
    # A corpus file of the user's: its script is unknown unless --script.
    assert info["script"] is None and info["language"] == "zh"


def test_a_resume_names_the_setting_it_may_not_change_first(trained, tmp_path, capsys):
    # 2 divides every layer size of the run; what is wrong is changing it.
    corpus, output = copy_run(trained, tmp_path)
    assert cli.main(train_args(corpus, output, "--resume", "--chunk-size", "2")) == 2
    err = capsys.readouterr().err
    assert "`chunk_size` cannot change when a run is resumed" in err
    assert "chunk_size=4), received: chunk_size=2" in err
    # 3 divides none: the flags' own message says so first.
    assert cli.main(train_args(corpus, output, "--resume", "--chunk-size", "3")) == 2
    assert "--chunk-size 3 must divide --hidden-size 8" in capsys.readouterr().err


def test_a_resumed_run_starts_its_lstm_with_the_runs_configs(trained, tmp_path,
                                                           monkeypatch, capsys):
    _, output = copy_run(trained, tmp_path)
    recorded = runs.recorded_configs(str(output))
    calls = []

    def fake_train_run(run, corpus, **kwargs):
        calls.append(run)
        return {}

    monkeypatch.setattr(run_training, "train_run", fake_train_run)
    runs.train(runs.plan_training(str(output), with_lstm=True, resume=True),
               None, verbose=0)
    assert "onlstm: done, 1 epochs trained" in capsys.readouterr().out
    [run] = calls
    assert run.directory == os.path.join(str(output), "lstm")
    assert run.model_config == dataclasses.replace(recorded[0], recurrent="lstm")
    # The run's training, with the LSTM's own warm-up.
    assert run.training_config == dataclasses.replace(
        recorded[1], warmup_steps=500)


def test_one_checkpoint_check_on_the_named_files(tmp_path):
    # A checkpoint folder without its metadata file (a crash before the
    # first epoch was committed) holds nothing to lose.
    (tmp_path / checkpoints.BACKUP_DIR).mkdir()
    (tmp_path / checkpoints.BACKUP_DIR / ".epoch-1.weights.h5.tmp").write_text("x")
    assert not checkpoints.has_checkpoint(str(tmp_path))
    checkpoints.refuse_to_overwrite(str(tmp_path))
    write_text(str(tmp_path / checkpoints.BACKUP_DIR / checkpoints.CHECKPOINT_FILE),
               json.dumps({"epoch": 1, "weights": "epoch-1.weights.h5"}))
    assert checkpoints.has_checkpoint(str(tmp_path))
    with pytest.raises(FileExistsError, match="holds a training checkpoint; pass "
                                              "--resume to continue it"):
        checkpoints.refuse_to_overwrite(str(tmp_path))
    from on_lstm_keras.models.saving import RUN_FILE
    from on_lstm_keras.models.saving import has_run

    assert not has_run(str(tmp_path))
    write_text(str(tmp_path / RUN_FILE), "{}")
    assert has_run(str(tmp_path))
