"""A lock on a run's output directory, so that two training processes never
write into the same one.

The lock is a file (`.lock`, holding the owner's process id) locked with the
operating system's advisory file lock (`fcntl.flock`, `msvcrt.locking` on
Windows). The operating system drops the lock when its process dies, however
it dies, so the file left by a killed process is simply taken over.
"""

import contextlib
import os

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
    import msvcrt

LOCK_FILE = ".lock"

# Directories locked by this process, with a count: a nested `output_lock`
# of the same directory (the CLI locks before loading the corpus, training
# locks again) passes through.
_held = {}


class DirectoryLocked(RuntimeError):
    """Another process is training into the directory."""


def _try_lock(fd):
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    else:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)


def _owner(path):
    try:
        with open(path, encoding="ascii") as f:
            return f.read().strip() or "unknown"
    except (OSError, ValueError):
        return "unknown"


def _acquire(directory):
    path = os.path.join(directory, LOCK_FILE)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _try_lock(fd)
        except OSError:
            os.close(fd)
            raise DirectoryLocked(
                f"{directory} is in use by another training process (pid "
                f"{_owner(path)}); wait for it to end or stop it, or choose "
                "another --output"
            ) from None
        # The previous owner may have removed the file between our open and
        # our lock; then the lock is on a file nobody else sees: retry.
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode("ascii"))
    return fd, path


@contextlib.contextmanager
def output_lock(directory):
    """Holds the lock on `directory` (created if missing) for the block.

    Raises:
        DirectoryLocked: A live process holds it; the message names its pid.
    """
    key = os.path.realpath(directory)
    if key in _held:
        _held[key][0] += 1
        try:
            yield
        finally:
            _held[key][0] -= 1
        return
    created = not os.path.exists(directory)
    os.makedirs(directory, exist_ok=True)
    fd, path = _acquire(directory)
    _held[key] = [1, fd]
    try:
        yield
    finally:
        del _held[key]
        with contextlib.suppress(OSError):
            os.remove(path)  # while still locked, so no one else holds it
        os.close(fd)
        if created:
            # A run that failed before writing anything leaves no folder.
            with contextlib.suppress(OSError):
                os.rmdir(directory)
