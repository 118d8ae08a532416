"""Mutation testing of the ON-LSTM layer and its fused recurrence.

A developer command, not part of CI. It copies the working tree (tracked
and untracked, not ignored, files) to a scratch folder, so the checkout is
never mutated, and runs cosmic-ray (`pip install cosmic-ray`) there over
the modules of `on_lstm_keras/layers/` (the cell, the layer, its two
recurrences).
Each mutant is one change written into the module on disk; the tests then
run in a fresh process, so no wrapper stands between Keras and the layer's
`__init__` (mutmut 3's trampolines do, and Keras reads that signature).

cosmic-ray makes thousands of mutants of these modules, and each costs
a TensorFlow start and a run of the layer tests, so by
default a seeded random sample of each module's mutants is run and the
rest are marked skipped. `--sample 0` runs them all.

Usage:

    python tools/mutation/run_layers.py                 # 40 a module, seed 0
    python tools/mutation/run_layers.py --sample 60 --seed 1
    python tools/mutation/run_layers.py --report-only   # print the last run
    python tools/mutation/run_layers.py --only JOB_ID...  # rerun some mutants

Mutants that survive the fast test selection are run once more against
every test of the layer (drop-in and Keras conformance tests included);
`--no-confirm` skips that.

It prints, per module, killed / run and the surviving mutants as diffs; the
sessions (`*.sqlite`) stay in the work folder for `cr-report` and
`cr-html`. Judge every survivor: a test gap (write the test that kills it,
against the NumPy reference) or an equivalent mutant (say why).
"""

import argparse
import os
import random
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

MODULES = (
    "on_lstm_keras/layers/onlstm_cell.py",
    "on_lstm_keras/layers/onlstm.py",
    "on_lstm_keras/layers/stepwise.py",
    "on_lstm_keras/layers/fused/scan.py",
    "on_lstm_keras/layers/fused/forward.py",
    "on_lstm_keras/layers/fused/backward.py",
    "on_lstm_keras/layers/fused/recurrence.py",
)

# The layer's tests that compare with the NumPy reference, the gradient
# tests and the step-path tests, without the slow ones (jit compilation,
# fitting, mixed precision), which add a minute a mutant.
TESTS = (
    "tests/test_onlstm_layer.py",
    "tests/test_onlstm_step_path.py",
    "tests/test_onlstm_gradients.py",
    "tests/test_ops_distances.py",
)
DESELECT = (
    "not jit and not other_execution_mode and not fit_lowers "
    "and not mixed_precision and not finite_gradients"
)
# Every test of the layer: a mutant that survives the fast selection runs
# these too (drop-in behaviour, unknown lengths, empty batches, Keras' own
# LSTM tests), and counts as killed if any of them fails.
WIDE_TESTS = TESTS + (
    "tests/test_onlstm_dropin.py",
    "tests/test_keras_conformance.py",
)

REPO = Path(__file__).resolve().parents[2]


def positive_or_zero(text):
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(
            f"--sample must be 0 (all) or positive, received: {text}"
        )
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--sample", type=positive_or_zero, default=40,
                        help="mutants run per module (0: all)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the sample")
    parser.add_argument("--workdir", type=Path,
                        default=Path("/tmp/onlstm-mutation"),
                        help="scratch folder for the copy and the sessions")
    parser.add_argument("--backend", default="tensorflow",
                        choices=("tensorflow", "jax"),
                        help="Keras backend of the tests (the fused path "
                        "runs on both)")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds a mutant's tests may run; a timeout "
                        "counts as killed, so keep it well above the "
                        "unmutated run")
    parser.add_argument("--module", action="append", choices=MODULES,
                        help="only this module (repeatable)")
    parser.add_argument("--only", nargs="+", metavar="JOB_ID",
                        help="rerun these mutants of the last session, "
                        "after refreshing the copy (e.g. with new tests)")
    parser.add_argument("--no-confirm", action="store_true",
                        help="do not rerun the survivors with every test "
                        "of the layer")
    parser.add_argument("--report-only", action="store_true",
                        help="print the last sessions' results, run nothing")
    return parser.parse_args(argv)


def copy_tree(dest):
    """The working tree's tracked and untracked, not ignored, files."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, check=True, capture_output=True,
    ).stdout.decode().split("\0")
    if dest.exists():
        shutil.rmtree(dest)
    for name in filter(None, listing):
        source = REPO / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def test_command(src, backend, wide=False):
    tests = WIDE_TESTS if wide else TESTS
    pytest_args = [
        "-x", "-q", "-p", "no:cacheprovider", "--no-cov", "-o", "addopts=",
        *([] if wide else ["-k", DESELECT]),
        *[t for t in tests if (src / t).exists()],
    ]
    return shlex.join([
        "env", f"KERAS_BACKEND={backend}", f"PYTHONPATH={src}",
        "TF_CPP_MIN_LOG_LEVEL=3", sys.executable, "-m", "pytest",
        *pytest_args,
    ])


def write_config(path, module, command, timeout):
    path.write_text(
        "[cosmic-ray]\n"
        f"module-path = {module!r}\n"
        f"timeout = {timeout}\n"
        "excluded-modules = []\n"
        f"test-command = {command!r}\n"
        "\n[cosmic-ray.distributor]\nname = \"local\"\n"
    )


def session_path(workdir, module):
    return workdir / (Path(module).stem + ".sqlite")


def compiles(item, src):
    """Whether the mutant is valid Python.

    cosmic-ray also rewrites the `**` of a dict display (`{**a, **b}`) as if
    it were a power, which gives a syntax error: such a mutant fails every
    test without saying anything about them, so it is left out.
    """
    from cosmic_ray.mutating import mutate_code
    from cosmic_ray.plugins import get_operator

    (mutation,) = item.mutations
    operator = get_operator(mutation.operator_name)(
        **(mutation.operator_args or {})
    )
    code = (src / mutation.module_path).read_text(encoding="utf-8")
    mutated = mutate_code(code, operator, mutation.occurrence)
    if mutated is None:
        return False
    try:
        compile(mutated, str(mutation.module_path), "exec")
    except SyntaxError:
        return False
    return True


def sample_session(session, size, seed, src):
    """Marks all but a seeded sample of the pending mutants as skipped.

    The sample is drawn in a seeded random order, passing over mutants
    that are not valid Python, until `size` are found (all, if `size` is 0).
    """
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_item import WorkerOutcome
    from cosmic_ray.work_item import WorkResult

    with use_db(str(session)) as db:
        # Job ids are random; the operator and occurrence are not, so the
        # same seed draws the same mutants of the same code.
        items = sorted(
            db.pending_work_items,
            key=lambda item: (item.mutations[0].operator_name,
                              item.mutations[0].occurrence),
        )
        random.Random(seed).shuffle(items)
        keep, invalid = set(), []
        for item in items:
            if size and len(keep) == size:
                break
            if compiles(item, src):
                keep.add(item.job_id)
            else:
                invalid.append(item.job_id)
        if invalid:
            db.set_multiple_results(
                invalid,
                WorkResult(output="not valid Python",
                           worker_outcome=WorkerOutcome.SKIPPED),
            )
        skipped = [item.job_id for item in items
                   if item.job_id not in keep and item.job_id not in invalid]
        if skipped:
            db.set_multiple_results(
                skipped,
                WorkResult(output="not in the sample",
                           worker_outcome=WorkerOutcome.SKIPPED),
            )
    return len(items), len(keep), len(invalid)


def reopen(session, job_ids):
    """Makes `job_ids` pending again (their old results are dropped)."""
    import sqlite3

    with sqlite3.connect(session) as db:
        db.executemany("DELETE FROM work_results WHERE job_id = ?",
                       [(job,) for job in job_ids])


def survivors(session):
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_db import WorkDB
    from cosmic_ray.work_item import TestOutcome

    with use_db(str(session), WorkDB.Mode.open) as db:
        return [item.job_id for item, result in db.completed_work_items
                if result.test_outcome == TestOutcome.SURVIVED]


def report(session, module, src):
    from cosmic_ray.work_db import use_db
    from cosmic_ray.work_db import WorkDB
    from cosmic_ray.work_item import TestOutcome
    from cosmic_ray.work_item import WorkerOutcome

    with use_db(str(session), WorkDB.Mode.open) as db:
        total = db.num_work_items
        results = [
            (item, result) for item, result in db.completed_work_items
            if result.worker_outcome != WorkerOutcome.SKIPPED
        ]
    invalid = [r for r in results if not compiles(r[0], src)]
    results = [r for r in results if r not in invalid]
    killed = [r for r in results
              if r[1].test_outcome == TestOutcome.KILLED]
    survived = [r for r in results
                if r[1].test_outcome == TestOutcome.SURVIVED]
    incompetent = [r for r in results
                   if r[1].test_outcome == TestOutcome.INCOMPETENT]
    run = len(killed) + len(survived)
    rate = 100.0 * len(killed) / run if run else float("nan")
    print(f"\n== {module}: {len(killed)} killed / {run} run "
          f"({rate:.1f}%), {len(survived)} survived, "
          f"{len(incompetent)} incompetent, {len(invalid)} not valid Python "
          f"(left out); {total} mutants in all")
    for item, result in survived:
        print(f"-- survived {item.job_id}")
        print(result.diff)
    return len(killed), run


def run_session(config, session, src):
    subprocess.run(["nice", "-n", "10", "cosmic-ray", "exec", str(config),
                    str(session)], cwd=src, check=True)


def main(argv=None):
    args = parse_args(argv)
    workdir = args.workdir.resolve()
    src = workdir / "src"
    modules = args.module or MODULES
    if not args.report_only:
        shutil.which("cosmic-ray") or sys.exit(
            "cosmic-ray is not installed: pip install cosmic-ray"
        )
        workdir.mkdir(parents=True, exist_ok=True)
        copy_tree(src)
        command = test_command(src, args.backend)
        for module in modules:
            session = session_path(workdir, module)
            config = workdir / (Path(module).stem + ".toml")
            write_config(config, module, command, args.timeout)
            if args.only:
                reopen(session, args.only)
            else:
                if session.exists():
                    session.unlink()
                subprocess.run(["cosmic-ray", "init", str(config),
                                str(session)], cwd=src, check=True)
                total, kept, invalid = sample_session(
                    session, args.sample, args.seed, src
                )
                print(f"{module}: {total} mutants, running {kept} "
                      f"(seed {args.seed}; {invalid} passed over as not "
                      "valid Python)", flush=True)
            run_session(config, session, src)
            left = survivors(session)
            if args.only:
                left = [job for job in left if job in args.only]
            if left and not args.no_confirm:
                print(f"{module}: {len(left)} survived the fast tests; "
                      "running them against every layer test", flush=True)
                write_config(config, module,
                             test_command(src, args.backend, wide=True),
                             args.timeout)
                reopen(session, left)
                run_session(config, session, src)
    for module in modules:
        session = session_path(workdir, module)
        if session.exists():
            report(session, module, src)


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    main()
