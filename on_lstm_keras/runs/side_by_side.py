"""Several trainings at once, each in a process of its own.

`runs.train(plan, corpus, side_by_side=True)` trains its planned runs (the
forward and the backward model of `--directions both`) this way. On a CPU a
language model's training step does not keep two cores busy (small matrix
products, one time step after another), while two processes with one
thread each do.

Each job is a pair `(function, kwargs)`, called as `function(**kwargs)` in
a fresh Python process given a share of the CPU threads; its output is
printed with the run's name in front. A fresh interpreter, not
`multiprocessing`, so that a script without a `__main__` guard (the
examples are notebooks) is not run again in the child. The function is
pickled by reference, so this module needs to know nothing of training.
"""

import os
import pickle
import subprocess
import sys
import tempfile
import threading
import traceback

from on_lstm_keras.utils.atomic import replacing


def cpu_cores():
    """The CPU cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def thread_share(runs, cores=None):
    """Threads each of `runs` processes gets: the cores split evenly, at
    least one."""
    cores = cpu_cores() if cores is None else cores
    return max(1, cores // max(1, runs))


# glibc's malloc hands every block above 32 MB (a batch's logits over a
# 10,000-word vocabulary are 45 MB) to the kernel and takes it back, so
# each training step touches hundreds of megabytes of fresh 4 kB pages.
# With this tunable (glibc 2.35 and later; other C libraries ignore it)
# those blocks get 2 MB pages where the kernel allows them (transparent
# huge pages on "madvise" or "always"), and far fewer page faults.
HUGE_PAGES = "glibc.malloc.hugetlb=1"


def child_environment(threads, base=None):
    """The environment of a child process limited to `threads` threads.

    TensorFlow reads its intra-op pool size from `TF_NUM_INTRAOP_THREADS`
    when it starts (XLA's CPU code uses that pool too); the inter-op pool is
    left alone (with one thread, Keras' input pipeline stalls a second a
    batch). `GLIBC_TUNABLES` gets `HUGE_PAGES`. Output is unbuffered so
    that lines arrive as they are printed.
    """
    env = dict(os.environ if base is None else base)
    tunables = [t for t in env.get("GLIBC_TUNABLES", "").split(":") if t]
    if not any(t.startswith("glibc.malloc.hugetlb=") for t in tunables):
        tunables.append(HUGE_PAGES)
    env.update(TF_NUM_INTRAOP_THREADS=str(threads),
               GLIBC_TUNABLES=":".join(tunables), PYTHONUNBUFFERED="1")
    return env


class RunFailed(RuntimeError):
    """A run trained side by side raised an error that could not be passed
    back as itself; the message holds its traceback."""


def _relay(stream, prefix):
    for line in stream:
        sys.stdout.write(prefix + line)
        sys.stdout.flush()


def train_side_by_side(jobs, names, threads=None):
    """Runs `function(**kwargs)` for every job `(function, kwargs)` at once,
    each in its own process.

    Args:
        jobs: `(function, kwargs)` pairs, one a run; they are pickled (the
            function by reference, so a module-level one; the corpus, the
            configs and the callbacks in `kwargs` must be picklable).
        names: A name for each run, printed before its lines.
        threads: Threads of each process; default `thread_share`.

    Returns:
        What each function returned, in the order of `jobs`.

    Raises:
        KeyboardInterrupt: Ctrl-C. It reaches every child too (they share
            the terminal), and each stops between two checkpoints; this
            waits for them before raising. Its `unfinished` holds the
            names of the runs that did not end.
        Exception: The first error a run raised, after the others ended
            (each keeps what it saved); `RunFailed` with the traceback
            when the error cannot be passed back as itself.
    """
    jobs, names = list(jobs), list(names)
    if len(jobs) != len(names):
        raise ValueError(
            f"Arguments `jobs` and `names` must be as long as each other, "
            f"received {len(jobs)} jobs and {len(names)} names")
    threads = thread_share(len(jobs)) if threads is None else threads
    width = max(len(n) for n in names) if names else 0
    pickled = []
    for name, job in zip(names, jobs):
        try:
            pickled.append(pickle.dumps(job))
        except Exception as e:
            raise ValueError(
                f"The arguments of run {name!r} must be picklable to train it "
                f"side by side (in a process of its own), received one that "
                f"is not: {e}") from e
    with tempfile.TemporaryDirectory(prefix="on_lstm_side_by_side_") as tmp:
        children = []
        for k, (name, data) in enumerate(zip(names, pickled)):
            job_path = os.path.join(tmp, f"job{k}.pickle")
            result_path = os.path.join(tmp, f"result{k}.pickle")
            with open(job_path, "wb") as f:
                f.write(data)
            process = subprocess.Popen(
                [sys.executable, "-c", _CHILD, job_path, result_path],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                bufsize=1, env=child_environment(threads))
            relay = threading.Thread(
                target=_relay, args=(process.stdout, f"[{name:{width}}] "),
                daemon=True)
            relay.start()
            children.append((process, relay, result_path))
        interrupted = False
        try:
            for process, _, _ in children:
                process.wait()
        except KeyboardInterrupt:
            interrupted = True
            for process, _, _ in children:
                process.wait()
        finally:
            for _, relay, _ in children:
                relay.join(timeout=5)
        outcomes = [_read_outcome(path, process.returncode)
                    for process, _, path in children]
    if interrupted or any(o[0] == "interrupted" for o in outcomes):
        stop = KeyboardInterrupt()
        stop.unfinished = [name for name, o in zip(names, outcomes)
                           if o[0] != "ok"]
        raise stop
    for outcome in outcomes:
        if outcome[0] == "error":
            raise outcome[1]
    return [outcome[1] for outcome in outcomes]


def _read_outcome(path, returncode):
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except FileNotFoundError:
        return ("error", RunFailed(
            f"A run trained side by side ended (exit status {returncode}) "
            "without a result; its output above says why"))
    except Exception as e:  # an error that pickles but does not unpickle
        return ("error", RunFailed(
            f"A run trained side by side failed, and its error could not "
            f"be read back ({e!r}); its output above says why"))


# The child's program: `python -c` rather than `-m`, which would run this
# module a second time beside the copy its package imports.
_CHILD = ("import sys; from on_lstm_keras.runs.side_by_side import run_child; "
          "sys.exit(run_child(*sys.argv[1:]))")


def run_child(job_path, result_path):
    """A child's work: calls the pickled `(function, kwargs)` in
    `job_path` and pickles `("ok", result)`, `("interrupted", None)` or
    `("error", exception)` into `result_path`; returns the exit status."""
    with open(job_path, "rb") as f:
        function, kwargs = pickle.load(f)
    try:
        outcome = ("ok", function(**kwargs))
    except KeyboardInterrupt:
        outcome = ("interrupted", None)
    except Exception as e:
        text = traceback.format_exc()
        print(text, file=sys.stderr, end="")
        outcome = ("error", e)
        try:
            pickle.loads(pickle.dumps(e))
        except Exception:
            outcome = ("error", RunFailed(text))
    with replacing(result_path) as tmp:
        with open(tmp, "wb") as f:
            pickle.dump(outcome, f)
    return 0 if outcome[0] == "ok" else 1
