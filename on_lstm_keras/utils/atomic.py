"""Atomic file writes: a crash at any moment leaves the old file or the new
one, never a part of one.

Every file that training writes (epoch checkpoints, `model.keras`,
`run.json`, `vocab.json`, `history.csv`) goes through `replacing`.
"""

import contextlib
import os
import tempfile


def _fsync_directory(directory):
    """Flushes a directory entry (a rename) to disk, where the OS allows."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # Windows cannot open a directory.
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def replacing(path, suffix=""):
    """Writes `path` atomically: yields a temporary path in the same folder
    for the caller to write; then the file is flushed to disk (fsync),
    renamed over `path` and the rename flushed too (fsync of the folder).

    A crash or an error at any moment leaves either the old `path` or the
    new one, never a part of a file; an error removes the temporary file.

    Args:
        path: The file to write.
        suffix: End of the temporary file's name (Keras checks extensions,
            e.g. `".keras"`, `".weights.h5"`).
    """
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(
        prefix=f".{os.path.basename(path)}.", suffix=f".tmp{suffix}",
        dir=directory,
    )
    os.close(fd)
    try:
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        # mkstemp makes the file private (0600); give it the mode a plain
        # open() would have.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    _fsync_directory(directory)


def write_text(path, text):
    """Writes a UTF-8 text file atomically (see `replacing`)."""
    with replacing(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
