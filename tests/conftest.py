"""Shared pytest fixtures."""

import os
import pathlib

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]

# A script that test_distributed.py runs in its own process (it sets the
# Keras backend from its command line), not a module to import.
collect_ignore = ["distributed_check.py"]


@pytest.fixture(scope="session")
def shared_nltk_data():
    """The shared NLTK data directory with the dev treebanks, or a skip.

    Looked up in the `NLTK_DATA` environment variable if it is set (the first
    existing directory of its os.pathsep-separated list), else at
    `../shared/nltk_data` relative to the repository root.
    """
    env = os.environ.get("NLTK_DATA")
    if env:
        candidates = [pathlib.Path(p) for p in env.split(os.pathsep) if p]
        where = f"NLTK_DATA={env!r}"
    else:
        candidates = [REPO_ROOT.parent / "shared" / "nltk_data"]
        where = str(candidates[0])
    for path in candidates:
        if path.is_dir():
            return path.resolve()
    pytest.skip(
        f"shared NLTK data not found (looked in {where}); set NLTK_DATA or "
        "put the NLTK data directory at ../shared/nltk_data"
    )
