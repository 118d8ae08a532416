"""Shared pytest fixtures."""

import os
import pathlib

import pytest

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]


def load_benchmark(name):
    """The module of the script `benchmarks/<name>.py`, loaded from its
    file (the benchmarks are scripts, not a package)."""
    import importlib.util

    path = REPO_ROOT / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

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


def write_fake_nltk_data(path):
    """Makes `path` an NLTK data folder holding only `FAKE_SINICA` as the
    Sinica treebank; returns `path`."""
    sinica = path / "corpora" / "sinica_treebank"
    sinica.mkdir(parents=True)
    (sinica / "parsed").write_text(FAKE_SINICA, encoding="utf-8")
    return path


@pytest.fixture
def fake_nltk_data(tmp_path):
    """An NLTK data folder holding only `FAKE_SINICA` as the Sinica treebank."""
    return write_fake_nltk_data(tmp_path)


def selected(request, test=None, fixture=None):
    """Whether this session runs a test named `test`, or one that uses
    `fixture`: a module fixture that starts work early asks first, so that
    nothing is started for tests left out (`-k`, `-m "not slow"`)."""
    return any(item.name == test
               or fixture in getattr(item, "fixturenames", ())
               for item in request.session.items)


class Background:
    """A command started in its own process, so that the test process can
    go on (two cores: a training in each). Its output goes to temporary
    files, not pipes, so that nothing blocks however much it prints.

    Args:
        argv: The command.
        cwd: Its working directory.
        env: Its environment (default: this one's, TensorFlow's C++ log
            quiet, the repository on `PYTHONPATH`).
    """

    def __init__(self, argv, cwd=None, env=None):
        import subprocess
        import tempfile

        if env is None:
            env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3",
                       PYTHONPATH=str(REPO_ROOT))
        self.logs = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self.process = subprocess.Popen(argv, cwd=cwd, env=env,
                                        stdout=self.logs[0],
                                        stderr=self.logs[1])
        self.result = None

    def finish(self, timeout=600):
        """`(returncode, stdout, stderr)`, waiting for the end (killed after
        `timeout` seconds, with returncode None)."""
        import locale
        import subprocess

        if self.result is None:
            try:
                code = self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.stop()
                code = None
            encoding = locale.getpreferredencoding(False)
            texts = []
            for log in self.logs:
                log.seek(0)
                texts.append(log.read().decode(encoding, "replace"))
                log.close()
            self.result = (code, *texts)
        return self.result

    def succeeded(self, timeout=600):
        """The standard output; asserts the command ended with status 0."""
        code, out, err = self.finish(timeout)
        said = (f"killed after {timeout} s" if code is None
                else f"exit status {code}")
        assert code == 0, said + "\n" + out[-2000:] + err[-3000:]
        return out

    def stop(self):
        """Ends the process if it still runs."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
