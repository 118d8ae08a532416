"""Treebank loaders: tiny hand-written corpora, and the dev treebanks (NLTK data)."""

import re
import sys

import nltk
import numpy as np
import pytest
from nltk.corpus.reader import BracketParseCorpusReader
from nltk.corpus.reader import SinicaTreebankCorpusReader

from on_lstm_keras.parsing import PTB_WORD_TAGS
from on_lstm_keras.parsing import CorpusNotFoundError
from on_lstm_keras.parsing import GoldSentence
from on_lstm_keras.parsing import baseline_tree
from on_lstm_keras.parsing import evaluate
from on_lstm_keras.parsing import leaves
from on_lstm_keras.parsing import load_ptb
from on_lstm_keras.parsing import load_sinica
from on_lstm_keras.parsing import ptb_word_preprocess

# wsj_0001.mrg: sentence 1 has punctuation, traces (-NONE-) whose parents
# become empty, digits, and unary chains (NP-PRD > NP, S > VP, SBAR > S);
# sentence 2 keeps one word; sentence 3 keeps none.
FAKE_MRG_1 = """\
( (S
    (NP-SBJ-1 (NNP Pierre) (NNP Vinken) )
    (, ,)
    (VP (VBD said)
      (SBAR (-NONE- 0)
        (S (NP-SBJ (-NONE- *T*-1) )
          (VP (VBZ is)
            (NP-PRD (NP (CD 61) (NNS years) ))))))
    (. .) ))
( (FRAG (INTJ (UH Yes) ) (. !) ))
( (X (-NONE- *U*) (. .) ))
"""
# wsj_0002.mrg: currency and quotes dropped, PRP$ kept, a 3-word tree.
FAKE_MRG_2 = """\
( (S (`` ``) (NP (PRP$ Their) (NNS costs) ) (VP (VBD rose) (NP ($ $) (CD 12) (-NONE- *U*) )) ('' '') ))
"""

FAKE_PTB_1 = [
    GoldSentence(
        ["pierre", "vinken", "said", "is", "N", "years"],
        [["pierre", "vinken"], ["said", ["is", ["N", "years"]]]],
    ),
    GoldSentence(["yes"], "yes"),
]
FAKE_PTB_2 = [
    GoldSentence(["their", "costs", "rose", "N"], [["their", "costs"], ["rose", "N"]]),
]

# Sinica lines, in the file's own format. Line 2 has an inner COMMACATEGORY
# leaf (made up, to exercise the filter) and line 3 the "Head:Head:" glitch
# of the real file (sentence 4510).
FAKE_SINICA = (
    "#1:1.[4257] NP(Head:Neu:一)#。(PERIODCATEGORY)\n"
    "#3:3.[39029] S(theme:NP(Head:N(DUMMY1:Nba:嘉珍|Head:Caa:和|DUMMY2:Nhaa:我))"
    "|Head:VC1:住在|goal:NP(quantifier:DM:同一條|Head:Nab:巷子))#，(COMMACATEGORY)\n"
    "#9:9.[1] S(theme:NP(Head:N(Head:Nad:臉色))|Head:VH11:蒼白|DUMMY:COMMACATEGORY:，"
    "|theme:NP(Head:Head:Nab:鱟))#，(COMMACATEGORY)\n"
)
FAKE_SINICA_TREES = [
    "一",
    [["嘉珍", "和", "我"], "住在", ["同一條", "巷子"]],
    ["臉色", "蒼白", "鱟"],
]


@pytest.fixture
def fake_data(tmp_path):
    combined = tmp_path / "corpora" / "treebank" / "combined"
    combined.mkdir(parents=True)
    (combined / "wsj_0001.mrg").write_text(FAKE_MRG_1, encoding="ascii")
    (combined / "wsj_0002.mrg").write_text(FAKE_MRG_2, encoding="ascii")
    sinica = tmp_path / "corpora" / "sinica_treebank"
    sinica.mkdir(parents=True)
    (sinica / "parsed").write_text(FAKE_SINICA, encoding="utf-8")
    return tmp_path


# --- hand-written corpora ----------------------------------------------------


def test_ptb_word_preprocess():
    assert ptb_word_preprocess("Nov.") == "nov."
    assert ptb_word_preprocess("1,234.50") == "N,N.N"
    assert ptb_word_preprocess("ABC123def4") == "abcNdefN"
    assert ptb_word_preprocess("1990s") == "Ns"
    with pytest.raises(ValueError, match="`word`"):
        ptb_word_preprocess(3)


def test_ptb_word_tags():
    assert len(PTB_WORD_TAGS) == 36
    assert {"PRP$", "WP$", "SYM", "POS"} <= PTB_WORD_TAGS
    assert not {"-NONE-", ",", ".", "$", "#", "``", "''", "-LRB-"} & PTB_WORD_TAGS


def test_load_ptb_fake(fake_data):
    before = list(nltk.data.path)
    sents = load_ptb(nltk_data=fake_data)
    assert sents == FAKE_PTB_1 + FAKE_PTB_2
    assert nltk.data.path == before  # the temporary authorisation is undone
    for s in sents:
        assert s.words == leaves(s.tree)


def test_load_ptb_fake_options(fake_data):
    assert load_ptb(nltk_data=str(fake_data), fileids="wsj_0002.mrg") == FAKE_PTB_2
    assert load_ptb(nltk_data=fake_data, fileids=["wsj_0001.mrg"]) == FAKE_PTB_1
    assert load_ptb(nltk_data=fake_data, max_length=4) == FAKE_PTB_1[1:] + FAKE_PTB_2
    assert load_ptb(nltk_data=fake_data, max_length=1) == FAKE_PTB_1[1:]


def test_load_ptb_bad_arguments(fake_data):
    with pytest.raises(ValueError, match="`max_length`.*0"):
        load_ptb(nltk_data=fake_data, max_length=0)
    with pytest.raises(ValueError, match="`fileids`.*wsj_9999.mrg"):
        load_ptb(nltk_data=fake_data, fileids=["wsj_9999.mrg"])
    with pytest.raises(ValueError, match="`nltk_data`"):
        load_ptb(nltk_data=3)


def test_missing_corpus_error(tmp_path):
    before = list(nltk.data.path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CorpusNotFoundError) as e:
        load_ptb(nltk_data=empty)
    assert isinstance(e.value, LookupError) and isinstance(e.value, FileNotFoundError)
    assert str(empty) in str(e.value)
    assert "python -m nltk.downloader treebank" in str(e.value)
    with pytest.raises(CorpusNotFoundError, match="nltk.downloader sinica_treebank"):
        load_sinica(nltk_data=tmp_path / "does_not_exist")
    assert nltk.data.path == before


def test_load_sinica_fake(fake_data):
    sents = load_sinica(nltk_data=fake_data)
    assert [s.tree for s in sents] == FAKE_SINICA_TREES
    assert [s.words for s in sents] == [leaves(t) for t in FAKE_SINICA_TREES]
    assert [s.tree for s in load_sinica(nltk_data=fake_data, max_length=3)] == [
        "一",
        ["臉色", "蒼白", "鱟"],
    ]


def test_load_sinica_simplified(fake_data):
    pytest.importorskip("opencc")
    sents = load_sinica(nltk_data=fake_data, to_simplified=True)
    # 條 -> 条, 臉 -> 脸, 鱟 -> 鲎; the segmentation is unchanged
    assert sents[1].tree == [["嘉珍", "和", "我"], "住在", ["同一条", "巷子"]]
    assert sents[2].words == ["脸色", "苍白", "鲎"]


def test_load_sinica_simplified_without_opencc(fake_data, monkeypatch):
    monkeypatch.setitem(sys.modules, "opencc", None)  # makes `import opencc` fail
    with pytest.raises(ImportError) as caught:
        load_sinica(nltk_data=fake_data, to_simplified=True)
    assert str(caught.value) == (
        "load_sinica(to_simplified=True), which converts traditional to "
        "simplified characters, needs opencc: "
        "pip install 'on-lstm-keras[zh]'")
    assert isinstance(caught.value, LookupError)  # `on-lstm` prints one line


# --- the dev treebanks (skipped when absent) ------------------------------


@pytest.fixture(scope="module")
def ptb_dir(dev_treebanks):
    if not (dev_treebanks / "corpora" / "treebank" / "combined").is_dir():
        pytest.skip(f"no corpora/treebank/combined in {dev_treebanks}")
    return dev_treebanks


@pytest.fixture(scope="module")
def sinica_dir(dev_treebanks):
    if not (dev_treebanks / "corpora" / "sinica_treebank" / "parsed").is_file():
        pytest.skip(f"no corpora/sinica_treebank/parsed in {dev_treebanks}")
    return dev_treebanks


@pytest.fixture(scope="module")
def ptb(ptb_dir):
    return load_ptb(nltk_data=ptb_dir)


@pytest.fixture(scope="module")
def sinica(sinica_dir):
    return load_sinica(nltk_data=sinica_dir)


@pytest.fixture(scope="module")
def ptb_tagged_words(ptb_dir):
    """Second route: word-tag leaves counted from nltk's tagged sentences."""
    mp = pytest.MonkeyPatch()
    mp.setattr(nltk.data, "path", [str(ptb_dir)] + list(nltk.data.path))
    try:
        reader = BracketParseCorpusReader(
            str(ptb_dir / "corpora" / "treebank" / "combined"), r"wsj_.*\.mrg"
        )
        out = [
            [re.sub("[0-9]+", "N", w.lower()) for w, tag in sent if tag in PTB_WORD_TAGS]
            for sent in reader.tagged_sents()
        ]
    finally:
        mp.undo()
    return out


def test_real_ptb_first_sentence(ptb):
    assert ptb[0].words == [
        "pierre", "vinken", "N", "years", "old", "will", "join", "the", "board",
        "as", "a", "nonexecutive", "director", "nov.", "N",
    ]  # fmt: skip
    # by hand from wsj_0001.mrg: commas and the period go, ADJP keeps (NP 61 years) old
    assert ptb[0].tree == [
        [["pierre", "vinken"], [["N", "years"], "old"]],
        [
            "will",
            [
                "join",
                ["the", "board"],
                ["as", ["a", "nonexecutive", "director"]],
                ["nov.", "N"],
            ],
        ],
    ]


def test_real_ptb_counts(ptb, ptb_tagged_words):
    assert len(ptb) == 1921
    assert len(ptb_tagged_words) == 1921
    assert [s.words for s in ptb] == ptb_tagged_words
    wsj10 = sum(1 for words in ptb_tagged_words if len(words) <= 10)
    assert wsj10 == 270
    assert len([s for s in ptb if len(s.words) <= 10]) == 270


def test_real_ptb_max_length(ptb_dir, ptb):
    wsj10 = load_ptb(nltk_data=ptb_dir, max_length=10)
    assert wsj10 == [s for s in ptb if len(s.words) <= 10]
    assert len(wsj10) == 270


# (sentence F1, corpus F1) of every baseline on the whole NLTK samples
# (random: seed 0). Deterministic: the trees depend on the sentence lengths
# alone.
PTB_BASELINES = {
    "left": (8.3282, 11.6897), "right": (39.7226, 39.2632),
    "balanced": (24.1096, 25.3459), "random": (17.7207, 20.0988),
}
SINICA_BASELINES = {
    "left": (14.8072, 24.9518), "right": (20.0872, 28.8013),
    "balanced": (21.5238, 30.5950), "random": (19.3291, 28.5763),
}


def baseline_scores(gold, name):
    rng = np.random.default_rng(0)
    r = evaluate((baseline_tree(name, s.words, rng), s.tree) for s in gold)
    return r, (round(r["sentence_f1"], 4), round(r["corpus_f1"], 4))


@pytest.mark.parametrize("name", sorted(PTB_BASELINES))
def test_real_ptb_baselines(ptb, name):
    r, scores = baseline_scores(ptb, name)
    assert r["skipped"] == 7  # 7 one-word sentences (counted with the second route)
    assert r["sentences"] == 1914
    # Right-branching: the paper reports 39.8 on the WSJ test set.
    assert scores == PTB_BASELINES[name]


def test_real_ptb_wsj10_right_branching(ptb):
    wsj10 = [s for s in ptb if len(s.words) <= 10]
    r, scores = baseline_scores(wsj10, "right")
    assert (r["sentences"], r["skipped"]) == (263, 7)
    assert scores == (57.9564, 63.6054)


def test_real_sinica(sinica, sinica_dir):
    assert len(sinica) == 5000
    # Second route: words from the reader's regex-based tagged sentences. They
    # agree except on sentence 4509, whose last leaf is "Head:Head:Nab:鱟" in
    # the file: the regex reads the tag "Head" and the word "Nab" there.
    mp = pytest.MonkeyPatch()
    mp.setattr(nltk.data, "path", [str(sinica_dir)] + list(nltk.data.path))
    try:
        reader = SinicaTreebankCorpusReader(
            str(sinica_dir / "corpora" / "sinica_treebank"), "parsed"
        )
        tagged = [[w for w, _ in sent] for sent in reader.tagged_sents()]
    finally:
        mp.undo()
    differ = [i for i, (s, t) in enumerate(zip(sinica, tagged)) if s.words != t]
    assert differ == [4509]
    assert tagged[4509][-1] == "Nab" and sinica[4509].words[-1] == "鱟"
    assert sinica[0].words == ["一"]
    assert sinica[1].tree == [["嘉珍", "和", "我"], "住在", ["同一條", "巷子"]]
    assert not any(w.endswith("CATEGORY") for s in sinica for w in s.words)


@pytest.mark.parametrize("name", sorted(SINICA_BASELINES))
def test_real_sinica_baselines(sinica, name):
    r, scores = baseline_scores(sinica, name)
    assert (r["sentences"], r["skipped"]) == (4937, 63)
    assert scores == SINICA_BASELINES[name]
