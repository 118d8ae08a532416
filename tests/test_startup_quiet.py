"""`import on_lstm_keras` keeps TensorFlow's C++ start-up lines (absl logs
written before `absl::InitializeLog()`, which `TF_CPP_MIN_LOG_LEVEL` does
not reach) off stderr, and shows them when the user asks for level 0."""

import os
import subprocess
import sys

from tests.conftest import REPO_ROOT


def _stderr_of_import(**env):
    environ = {k: v for k, v in os.environ.items()
               if k != "TF_CPP_MIN_LOG_LEVEL"}
    environ.update(env, PYTHONPATH=str(REPO_ROOT), KERAS_BACKEND="tensorflow")
    result = subprocess.run(
        [sys.executable, "-c", "import on_lstm_keras, sys; "
         "sys.stderr.write('after import\\n')"],
        env=environ, capture_output=True, text=True, timeout=120,
        cwd=REPO_ROOT.parent)
    assert result.returncode == 0, result.stderr
    return result.stderr


def test_import_writes_nothing_on_stderr():
    assert _stderr_of_import() == "after import\n"


def test_level_zero_shows_the_start_up_lines():
    # The lines the test above expects to be gone do exist on this install
    # (without them it could not fail).
    shown = _stderr_of_import(TF_CPP_MIN_LOG_LEVEL="0")
    assert "absl::InitializeLog()" in shown
    assert shown.endswith("after import\n")
