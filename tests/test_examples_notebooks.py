"""The examples as narrated notebooks: every code cell has prose before it,
each script reads no command line when run in a notebook, and
`examples/lm_chinese.py`, which trains through the public `runs` API,
gives the run that `on-lstm train` gives.
"""

import ast
import itertools
import json
import os
import re
import subprocess
import sys

import pytest

from on_lstm_keras.config import ModelConfig

from tests.conftest import REPO_ROOT
from tests.conftest import Background

EXAMPLES = REPO_ROOT / "examples"
NARRATED = ["lm_chinese.py", "parse_chinese.py", "ptb_parsing.py",
            "sentiment_chinese.py", "logical_inference.py", "rrnn_chars.py"]
MARKDOWN = "# %% [markdown]"


def cells(path):
    """`[(kind, lines)]` of a `# %%` file, kind `"markdown"` or `"code"`."""
    found, kind, lines = [], None, []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# %%"):
            if kind is not None:
                found.append((kind, lines))
            kind = "markdown" if line.startswith(MARKDOWN) else "code"
            lines = []
        elif kind is not None:
            lines.append(line)
    found.append((kind, lines))
    return found


def prose_words(lines):
    """The words of a markdown cell's text, headings and indented command
    lines left out."""
    text = [line[2:] for line in lines if line.startswith("# ")
            and not line.startswith("# #") and not line.startswith("#     ")]
    return re.findall(r"\w+", " ".join(text))


@pytest.mark.parametrize("name", NARRATED)
def test_every_code_cell_follows_a_prose_cell(name):
    found = cells(EXAMPLES / name)
    assert found[0][0] == "markdown", f"{name} does not start with prose"
    for i, (kind, lines) in enumerate(found):
        if kind != "code":
            continue
        before = found[i - 1]
        assert before[0] == "markdown", (
            f"{name}: code cell {i} follows another code cell:\n"
            + "\n".join(lines[:5]))
        # A heading alone is not prose: a sentence or more of text.
        assert len(prose_words(before[1])) >= 12, (
            f"{name}: the cell before code cell {i} is only a heading:\n"
            + "\n".join(before[1]))


def test_prose_check_fails_on_a_heading_alone(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("# %% [markdown]\n# # Title\n#\n# Some words that say "
                   "what the file is for and why it exists here.\n\n"
                   "# %% [markdown]\n# ## 1. Step\n\n# %%\nx = 1\n")
    found = cells(bad)
    assert [k for k, _ in found] == ["markdown", "markdown", "code"]
    assert len(prose_words(found[0][1])) >= 12
    assert prose_words(found[1][1]) == []


@pytest.mark.parametrize("name", NARRATED)
def test_command_line_is_read_only_outside_a_notebook(name):
    """Every `parse_args(...)` call of a script's top level passes a list
    in a notebook (`ipykernel` loaded): `[]` or the cell's `argv`."""
    source = (EXAMPLES / name).read_text(encoding="utf-8")
    tree = ast.parse(source)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)
             and getattr(node.func, "attr", getattr(node.func, "id", None))
             == "parse_args"]
    assert calls, f"{name} reads no flags"
    assert "ipykernel" in source
    guarded = [c for c in calls if c.args and isinstance(c.args[0], ast.IfExp)
               and ast.unparse(c.args[0].test) == "in_notebook"]
    assert guarded, f"{name}: no parse_args(... if in_notebook else None)"


def flags_added(source):
    """`{flag: dest}` of the script's own `parser.add_argument` calls."""
    found = {}
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call)
                and getattr(node.func, "attr", None) == "add_argument"):
            flag = ast.literal_eval(node.args[0])
            dest = next((ast.literal_eval(k.value) for k in node.keywords
                         if k.arg == "dest"), None)
            found[flag] = dest or flag.lstrip("-").replace("-", "_")
    return found


@pytest.mark.parametrize("name", ["lm_chinese.py", "ptb_parsing.py"])
def test_every_train_flag_a_script_offers_is_read(name):
    """A flag the script accepts but never reads would be ignored without a
    word: the config flags (`runs.add_config_arguments`) are read by
    `runs.configs_from_args`, which both scripts call, and each flag of the
    script's own is read as `args.<dest>`."""
    source = (EXAMPLES / name).read_text(encoding="utf-8")
    assert "runs.add_config_arguments(parser)" in source
    assert "runs.configs_from_args(args, " in source
    read = set(re.findall(r"\bargs\.(\w+)", source))
    unread = [flag for flag, dest in flags_added(source).items()
              if dest not in read]
    assert unread == []


def test_the_examples_import_only_public_names():
    """Each `from on_lstm_keras... import Y` of every example names a `Y`
    in the module's `__all__`, or a subpackage that has one; nothing of
    `cli` or of a private module. An example is a user's script: it reads
    as one, on the package's public API."""
    import importlib

    for name in NARRATED:
        source = (EXAMPLES / name).read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert alias.name.split(".")[0] != "on_lstm_keras", (
                        f"{name}: import {alias.name} (use from ... import)")
                continue
            if not isinstance(node, ast.ImportFrom) or not (
                    node.module or "").startswith("on_lstm_keras"):
                continue
            assert ".cli" not in node.module and "._" not in node.module, (
                f"{name}: from {node.module} import ...")
            module = importlib.import_module(node.module)
            assert hasattr(module, "__all__"), (
                f"{name}: {node.module} has no __all__")
            for alias in node.names:
                assert alias.name in module.__all__, (
                    f"{name}: {alias.name} is not in {node.module}.__all__")


def test_the_public_names_check_fails_on_an_internal_import(tmp_path,
                                                            monkeypatch):
    """The check above, on an example that reaches into the package."""
    bad = tmp_path / "bad.py"
    bad.write_text("from on_lstm_keras.runs.training import score_run\n")
    monkeypatch.setattr(sys.modules[__name__], "EXAMPLES", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "NARRATED", ["bad.py"])
    with pytest.raises(AssertionError, match="no __all__|not in"):
        test_the_examples_import_only_public_names()


@pytest.mark.parametrize("name", NARRATED)
def test_examples_stay_short(name):
    """A keras.io-style story: about 300 lines at most."""
    lines = (EXAMPLES / name).read_text(encoding="utf-8").count("\n")
    assert lines <= 300, f"{name} has {lines} lines"


CORPUS = [f"{s}{v}{o}。" for s, v, o in itertools.product(
    ["我们", "他们", "老师", "学生", "朋友"], ["喜欢", "学习", "讨论"],
    ["数学", "历史", "音乐", "语言"])]
# XLA off: compiling costs about 20 s a model here, and the example and
# the command get the same setting either way (the example's XLA run is
# test_cli's `test_examples_run_end_to_end`).
TINY = ["--epochs", "2", "--embedding-size", "8", "--hidden-size", "16",
        "--layers", "2", "--chunk-size", "4", "--batch-size", "2",
        "--bptt", "6", "--min-count", "1", "--no-xla", "--quiet"]


def _run(argv, cwd):
    return Background(argv, cwd).succeeded()


def test_training_builds_the_model_with_every_config_field():
    """`runs.train` builds each model from its whole `ModelConfig`
    (`from_model_config`), so that a field added later (or recorded by a
    resumed run) is not dropped, which the run comparison below misses
    while the field has its default: a config with no field at its default
    gives a model of that very config."""
    from on_lstm_keras.models import ONLSTMLanguageModel

    source = (REPO_ROOT / "on_lstm_keras" / "runs" / "training.py").read_text(
        encoding="utf-8")
    builds = [node for node in ast.walk(ast.parse(source))
              if isinstance(node, ast.Call)
              and getattr(node.func, "attr", None) == "from_model_config"]
    assert len(builds) == 1
    assert ast.unparse(builds[0].args[0]) == "model_config"
    default = ModelConfig()
    changed = ModelConfig(
        embedding_size=6, hidden_size=9, num_layers=2, chunk_size=3,
        recurrent="onlstm", master_input="reverse_cumsum", input_dropout=0.1,
        layer_dropout=0.2, output_dropout=0.3, embedding_dropout=0.05,
        recurrent_dropconnect=0.15, tie_weights=False, direction="backward",
        initializer="uniform")
    assert all(getattr(changed, f) != getattr(default, f)
               for f in ModelConfig.field_names() if f != "recurrent")
    model = ONLSTMLanguageModel.from_model_config(changed, 20)
    assert model.model_config == changed


@pytest.mark.slow
def test_lm_chinese_gives_the_run_of_on_lstm_train(tmp_path):
    pytest.importorskip("jieba")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS) + "\n", encoding="utf-8")
    example = tmp_path / "runs" / "lm_chinese"
    command = tmp_path / "cli"
    # No treebank there: the parse-default step (`on-lstm evaluate
    # --choose-default`, covered by test_cli) is skipped, so the runs match.
    no_treebank = tmp_path / "no_nltk_data"
    no_treebank.mkdir()
    # The example and the command train side by side (separate processes
    # and output folders), which halves the wait on two cores.
    example_run = Background(
        [sys.executable, str(EXAMPLES / "lm_chinese.py"), "--corpus",
         str(corpus), "--output", str(example), "--with-lstm", "--nltk-data",
         str(no_treebank), *TINY], tmp_path)
    # The example trains both reading directions by default.
    command_run = Background(
        [sys.executable, "-m", "on_lstm_keras.cli", "train", "--language",
         "zh", "--corpus", str(corpus), "--output", str(command),
         "--directions", "both", "--with-lstm", *TINY], tmp_path)
    try:
        out = example_run.succeeded()
        command_run.succeeded()
    finally:
        example_run.stop()
        command_run.stop()
    assert "No Sinica treebank, so no reading is chosen" in out
    for sub in ("", "backward", "lstm"):
        ours = json.loads((example / sub / "run.json").read_text("utf-8"))
        theirs = json.loads((command / sub / "run.json").read_text("utf-8"))
        for info in (ours, theirs):
            del info["results"]["train_seconds_this_call"]
        assert ours == theirs
        assert ((example / sub / "history.csv").read_text()
                == (command / sub / "history.csv").read_text())
        assert ((example / sub / "vocab.json").read_text("utf-8")
                == (command / sub / "vocab.json").read_text("utf-8"))
    valid = ours["results"]["valid_perplexity"]
    assert f"{valid:8.2f}" in out and (example / "tree.svg").exists()

    # parse_chinese.py as a notebook: no command line read, its `argv`
    # names runs/lm_chinese under the working directory.
    notebook = (
        "import sys, types, runpy\n"
        "sys.modules['ipykernel'] = types.ModuleType('ipykernel')\n"
        "sys.argv = ['parse_chinese.py', '--no-such-flag']\n"
        f"runpy.run_path({str(EXAMPLES / 'parse_chinese.py')!r})\n")
    out = _run([sys.executable, "-c", notebook], tmp_path)
    assert out.splitlines().count("*") == 2  # two ASCII trees, a root each
    assert "爱" in out and "天气" in out


def test_ptb_parsing_old_flag_spelling_is_gone(tmp_path):
    """`--no-lstm` is the flag; `--no-baseline`, its old spelling, is
    refused by argparse, named."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "ptb_parsing.py"), "--no-baseline",
         "--output", str(tmp_path / "ptb")],
        env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "unrecognized arguments: --no-baseline" in done.stderr
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "ptb_parsing.py"), "--no-lstm",
         "--epochs", "0", "--output", str(tmp_path / "ptb")],
        env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "--epochs" in done.stderr and "received 0" in done.stderr


def test_lm_chinese_refuses_to_overwrite_a_checkpoint(tmp_path):
    """Without --resume, a directory holding a checkpoint is refused before
    anything in it is written."""
    output = tmp_path / "run"
    (output / "checkpoint").mkdir(parents=True)
    (output / "checkpoint" / "training_metadata.json").write_text(
        '{"epoch": 1}')
    (output / "run.json").write_text('{"kept": true}')
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(REPO_ROOT))
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "lm_chinese.py"), "--output",
         str(output), "--quiet"],
        env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "holds a training checkpoint" in done.stderr
    assert "--resume" in done.stderr
    assert (output / "run.json").read_text() == '{"kept": true}'
    assert sorted(p.name for p in output.iterdir()) == ["checkpoint", "run.json"]
