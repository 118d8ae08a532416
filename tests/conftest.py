"""Shared pytest fixtures."""

import os
import pathlib

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]

# A script that test_distributed.py runs in its own process (it sets the
# Keras backend from its command line), not a module to import.
collect_ignore = ["distributed_check.py"]


@pytest.fixture(scope="session")
def dev_treebanks():
    """The NLTK data directory with the dev treebanks, or a skip.

    Looked up in the `NLTK_DATA` environment variable if it is set (the first
    existing directory of its os.pathsep-separated list); else on nltk's own
    search path (`~/nltk_data` after
    `python -m nltk.downloader treebank sinica_treebank`): the first folder
    that holds a `corpora` folder.
    """
    env = os.environ.get("NLTK_DATA")
    if env:
        candidates = [pathlib.Path(p) for p in env.split(os.pathsep) if p]
        where = f"NLTK_DATA={env!r}"
    else:
        import nltk

        candidates = [pathlib.Path(p) for p in nltk.data.path]
        where = ", ".join(str(p) for p in candidates)
    for path in candidates:
        if (path / "corpora").is_dir():
            return path.resolve()
    pytest.skip(
        f"no NLTK data with a corpora folder found (looked in {where}); get "
        "the treebanks with `python -m nltk.downloader treebank "
        "sinica_treebank` or set NLTK_DATA to the folder that holds them"
    )


# Three Sinica sentences in the treebank's own format: one of one word
# (skipped by the scorers), one of six and one of three words.
FAKE_SINICA = (
    "#1:1.[4257] NP(Head:Neu:一)#。(PERIODCATEGORY)\n"
    "#3:3.[39029] S(theme:NP(Head:N(DUMMY1:Nba:嘉珍|Head:Caa:和|DUMMY2:Nhaa:我))"
    "|Head:VC1:住在|goal:NP(quantifier:DM:同一條|Head:Nab:巷子))#，(COMMACATEGORY)\n"
    "#9:9.[1] S(theme:NP(Head:Nad:臉色)|Head:VH11:蒼白|theme:NP(Head:Nab:鱟))"
    "#，(COMMACATEGORY)\n"
)


@pytest.fixture
def fake_nltk_data(tmp_path):
    """An NLTK data folder holding only `FAKE_SINICA` as the Sinica treebank."""
    sinica = tmp_path / "corpora" / "sinica_treebank"
    sinica.mkdir(parents=True)
    (sinica / "parsed").write_text(FAKE_SINICA, encoding="utf-8")
    return tmp_path
