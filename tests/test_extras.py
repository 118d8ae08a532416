"""`require`: optional dependencies named with the extra that installs them."""

import configparser
import os
import sys

import pytest

from on_lstm_keras.utils import extras as _extras
from on_lstm_keras.utils.extras import MissingExtraError
from on_lstm_keras.utils.extras import require

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# `require` imports modules and formats messages: no Keras backend is
# involved, so these tests run once, on TensorFlow.


def test_require_returns_the_module():
    import json

    assert require("json", "zh", "Anything") is json


def test_missing_module_gives_one_line_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "opencc", None)  # `import opencc` fails
    with pytest.raises(MissingExtraError) as caught:
        require("opencc", "zh", "Converting to simplified characters")
    error = caught.value
    assert str(error) == ("Converting to simplified characters needs opencc: "
                          "pip install 'on-lstm-keras[zh]'")
    assert "\n" not in str(error)
    # An ImportError for Python callers, a LookupError for `on-lstm` (which
    # prints LookupErrors as one line and exits 2).
    assert isinstance(error, ImportError) and isinstance(error, LookupError)
    assert error.name == "opencc"
    assert isinstance(error.__cause__, ImportError)


def test_unknown_extra_is_named():
    with pytest.raises(ValueError, match=r"`extra`.*extra='chinese'"):
        require("json", "chinese", "Anything")


def test_extras_match_setup_cfg():
    """Each extra `require` can name exists in setup.cfg and lists a
    requirement for each of its modules."""
    config = configparser.ConfigParser()
    config.read(os.path.join(REPO, "setup.cfg"), encoding="utf-8")
    declared = config["options.extras_require"]
    for extra, modules in _extras.EXTRAS.items():
        assert extra in declared, extra
        requirements = declared[extra]
        for module in modules:
            assert module in requirements, (extra, module)
    assert config["metadata"]["name"].replace("_", "-") == _extras.DISTRIBUTION


class _Terminal:
    """A stderr that says it is a terminal, and keeps what is written."""

    def __init__(self, tty=True):
        self.text, self.tty = "", tty

    def write(self, text):
        self.text += text

    def flush(self):
        pass

    def isatty(self):
        return self.tty


def test_progress_bar_shows_only_on_a_terminal_and_when_enabled(monkeypatch):
    pytest.importorskip("tqdm")
    from on_lstm_keras.utils.extras import progress_bar

    for tty, enabled, shown in ((True, True, True), (False, True, False),
                                (True, False, False)):
        stderr = _Terminal(tty)
        monkeypatch.setattr(sys, "stderr", stderr)
        with progress_bar(5, "parsing", enabled=enabled) as bar:
            bar.update(2)
            bar.update(3)
        assert ("parsing" in stderr.text and "5/5" in stderr.text) == shown
        if not shown:
            assert stderr.text == ""


def test_progress_bar_without_tqdm_is_silent(monkeypatch):
    from on_lstm_keras.utils.extras import progress_bar

    monkeypatch.setitem(sys.modules, "tqdm", None)
    stderr = _Terminal()
    monkeypatch.setattr(sys, "stderr", stderr)
    with progress_bar(3, "parsing") as bar:
        bar.update(3)
    assert stderr.text == ""
