"""TensorFlow's C++ start-up lines, kept off a user's terminal.

TensorFlow 2.21 writes "oneDNN custom operations are on" and "Could not find
cuda drivers" through absl from static initializers that run before the one
applying `TF_CPP_MIN_LOG_LEVEL` (tensorflow/tensorflow#100442), so no
environment variable reaches them. `native_logs_filtered` holds file
descriptor 2 while TensorFlow loads and then writes back every line but the
absl lines below the level.
"""

import contextlib
import os
import re
import sys
import tempfile

# An absl log line: severity letter, date, time, thread, file:line].
_ABSL_LINE = re.compile(r"([IWEF])\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [^ \]]+\] ")
_ABSL_HEADER = "WARNING: All log messages before absl::InitializeLog()"


def _kept_lines(text, min_level):
    """The lines of `text` to show: absl log lines of severity `min_level`
    or above (0 info, 1 warning, 2 error, 3 fatal) and every other line
    except absl's note that logging is not initialized yet."""
    kept = []
    for line in text.splitlines(keepends=True):
        match = _ABSL_LINE.match(line)
        if match and "IWEF".index(match.group(1)) < min_level:
            continue
        if line.startswith(_ABSL_HEADER):
            continue
        kept.append(line)
    return "".join(kept)


@contextlib.contextmanager
def native_logs_filtered():
    """Holds back the C++ log lines TensorFlow writes while it loads.

    TensorFlow 2.21 logs through absl, and applies `TF_CPP_MIN_LOG_LEVEL`
    (`absl::SetMinLogLevel`) from a static initializer of
    `libtensorflow_framework.so` that runs after the initializers writing
    "oneDNN custom operations are on" and "Could not find cuda drivers";
    absl writes those to file descriptor 2 before `absl::InitializeLog()`
    and reads no environment variable that could stop them. So while the
    subpackages (and with them Keras and TensorFlow) load, descriptor 2
    goes to a temporary file; afterwards the lines below the level are
    dropped and everything else is written to stderr.
    """
    level = os.environ.get("TF_CPP_MIN_LOG_LEVEL", "")
    if not level.isdigit() or int(level) < 1 or "tensorflow" in sys.modules:
        yield
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, AttributeError, ValueError):  # no descriptor 2
        yield
        return
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            text = captured.read().decode("utf-8", errors="replace")
            shown = _kept_lines(text, int(level))
            if shown:
                sys.stderr.write(shown)
                sys.stderr.flush()
