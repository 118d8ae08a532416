"""Several trainings at once, each in a process of its own.

`workflow.train_runs(side_by_side=True)` trains its planned runs (the
forward and the backward model of `--direction both`) this way. On a CPU a
language model's training step does not keep two cores busy (small matrix
products, one time step after another), while two processes with one
thread each do: on 2 cores the `small` preset's pair of models trained
in 0.63 of the time it took one after the other (1,266 s against 1,997 s,
huge pages included, see `HUGE_PAGES`).

Each run is `workflow.train(**job)` in a fresh Python process
(`python -m on_lstm_keras._side_by_side JOB RESULT`), given a share of the
CPU threads; its output is printed with the run's name in front. A fresh
interpreter, not `multiprocessing`, so that a script without a
`__main__` guard (the examples are notebooks) is not run again in the
child.
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
# each training step touches hundreds of megabytes of fresh 4 kB pages:
# the `small` preset's run took 270 million page faults and a quarter of
# its CPU time in the kernel. With this tunable (glibc 2.35 and later; other
# C libraries ignore it) those blocks get 2 MB pages where the kernel
# allows them (transparent huge pages on "madvise" or "always"), and a
# training step took 365-430 ms instead of 500 ms on a 2-core CPU.
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
    """Runs `workflow.train(**job)` for every job at once, each in its own
    process.

    Args:
        jobs: Keyword arguments of `workflow.train`, one dict a run; they
            are pickled (the corpus, the configs and the callbacks must
            be picklable).
        names: A name for each run, printed before its lines.
        threads: Threads of each process; default `thread_share`.

    Returns:
        The `run.json` dict of each run, in the order of `jobs`.

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
                [sys.executable, "-m", "on_lstm_keras._side_by_side",
                 job_path, result_path],
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


def _main(job_path, result_path):
    with open(job_path, "rb") as f:
        job = pickle.load(f)
    from on_lstm_keras.workflow import train_job

    try:
        outcome = ("ok", train_job(job))
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


if __name__ == "__main__":
    sys.exit(_main(*sys.argv[1:]))
