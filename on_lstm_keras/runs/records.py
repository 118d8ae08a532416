"""Result records: the figures of a run with what they depend on.

A result record is a small JSON object that a script writes beside its
figures, so that any figure quoted in the documentation can be traced to
the command, code, machine and libraries that produced it:

    {"format": "on_lstm_keras.result/1",
     "name": "lm_chinese",
     "command": "python examples/lm_chinese.py --seed 0",
     "commit": "f63e594...", "dirty": false,
     "date": "2026-12-07T15:02:11Z",
     "machine": {"cpu": "Intel(R) Xeon(R) Processor",
                 "cpu_id": "cpu family 6, model 207, stepping 2",
                 "cpu_vector": "avx2 avx512f avx512_bf16 amx_tile",
                 "logical_cores": 2, "usable_cores": 2},
     "versions": {"python": "3.11.9", "keras": "3.15.1", ...},
     "backend": "tensorflow", "seed": 0, "seconds": 1281.4,
     "figures": {...}}

`result_record` builds one (`run_figures` gathers the figures of a
language-model run from its directory), `write_record` writes it
atomically and `read_record` reads one back and checks its format. The records that back
the documentation live under `docs/results/`; `tools/make_docs.py` builds
every table and picture of `docs/` from them.
"""

import csv
import datetime
import json
import math
import os
import platform
import shlex
import subprocess
import sys
from importlib import metadata

from on_lstm_keras.models.saving import read_run_info
from on_lstm_keras.models.training import HISTORY
from on_lstm_keras.runs.layout import LSTM_DIR
from on_lstm_keras.runs.layout import planned_runs
from on_lstm_keras.runs.layout import recorded_directions
from on_lstm_keras.utils.atomic import replacing

RECORD_FORMAT = "on_lstm_keras.result/1"

# The distributions whose versions a figure may depend on; those not
# installed are left out.
VERSIONED = ("on_lstm_keras", "keras", "tensorflow", "jax", "jaxlib", "torch",
             "numpy", "nltk", "jieba")

# The fields every record has, in the order they are written.
FIELDS = ("format", "name", "command", "commit", "dirty", "date", "machine",
          "versions", "backend", "seed", "seconds", "figures")


def cpu_info(path="/proc/cpuinfo"):
    """The processor's name and, where the system says (Linux), its family,
    model and stepping and the widest vector extensions it has: two
    machines of one name (an "Intel Xeon Processor" under a hypervisor) can
    differ threefold in a training step, and these tell them apart.

    Args:
        path: The system's processor description, read up to the end of
            its first processor's block; where it cannot be read (macOS,
            Windows), the platform's own name of the processor is given.

    Returns:
        A dict: `cpu`, the processor's name; where the file says,
        `cpu_id` (`"cpu family 6, model 207, stepping 2"`) and
        `cpu_vector`, those of avx2, avx512f, avx512_bf16 and amx_tile it
        has (`"none of avx2, avx512f"` for none).
    """
    fields = {}
    try:
        with open(path) as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if not key:
                    break  # the first processor's block is enough
                fields[key] = value.strip()
    except OSError:
        pass
    info = {"cpu": fields.get("model name")
            or platform.processor() or platform.machine()}
    ident = [f"{k} {fields[k]}" for k in ("cpu family", "model", "stepping")
             if k in fields]
    if ident:
        info["cpu_id"] = ", ".join(ident)
    if "flags" in fields:
        flags = fields["flags"].split()
        info["cpu_vector"] = " ".join(
            flag for flag in ("avx2", "avx512f", "avx512_bf16", "amx_tile")
            if flag in flags) or "none of avx2, avx512f"
    return info


def machine():
    """The machine a figure was measured on: `cpu_info()` and the number
    of logical cores (and of those this process may use)."""
    info = {**cpu_info(), "logical_cores": os.cpu_count()}
    if hasattr(os, "sched_getaffinity"):
        info["usable_cores"] = len(os.sched_getaffinity(0))
    return info


def machine_label(machine_info):
    """How a table names a machine: its CPU string and core count, e.g.
    `"Intel(R) Xeon(R) Processor (cpu family 6, model 207), 2 cores"`."""
    cpu = machine_info.get("cpu", "unknown CPU")
    ident = machine_info.get("cpu_id", "")
    # The stepping rarely tells machines apart; family and model do.
    ident = ", ".join(p for p in ident.split(", ") if p and
                      not p.startswith("stepping"))
    cores = machine_info.get("usable_cores", machine_info.get("logical_cores"))
    return f"{cpu}{f' ({ident})' if ident else ''}, {cores} cores"


def versions():
    """The Python version and those of the installed distributions of
    `VERSIONED`, read from their metadata (nothing is imported)."""
    found = {"python": platform.python_version()}
    for name in VERSIONED:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


def _git(*args):
    """`git ARGS` run in the package's source folder, or None where that
    is not a git checkout (an installed wheel) or git is missing."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", *args], cwd=here, capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def source_commit():
    """`(commit, dirty)`: the git commit of the package's source and
    whether tracked files differ from it; `(None, None)` for an install
    that is not a git checkout."""
    commit = _git("rev-parse", "HEAD")
    if commit is None:
        return None, None
    status = _git("status", "--porcelain", "--untracked-files=no")
    return commit, bool(status)


def command_line(argv=None):
    """The command as a user would type it again: `python SCRIPT ARGS`
    (or `on-lstm ARGS` for the console script), shell-quoted."""
    argv = list(sys.argv if argv is None else argv)
    if argv and os.path.basename(argv[0]) == "on-lstm":
        words = ["on-lstm", *argv[1:]]
    elif argv and argv[0].endswith(".py"):
        script = argv[0]
        if os.path.isabs(script):
            try:
                script = os.path.relpath(script)
            except ValueError:  # another drive, on Windows
                pass
        words = ["python", script, *argv[1:]]
    else:
        words = ["python", *argv]
    return " ".join(shlex.quote(w) for w in words)


def _backend():
    if "keras" not in sys.modules:
        return os.environ.get("KERAS_BACKEND", "tensorflow")
    return sys.modules["keras"].backend.backend()


def result_record(name, figures, *, seed=None, seconds=None, argv=None):
    """A result record of `figures`, with what they depend on.

    Args:
        name: What produced the figures, e.g. `"lm_chinese"` or
            `"bench_layer"`; `tools/make_docs.py` groups records by it.
        figures: A JSON-serialisable dict of the figures.
        seed: The seed the run used, or None where none applies.
        seconds: The run's wall time, or None.
        argv: The command's words (default: `sys.argv`).

    Returns:
        A dict with the keys of `FIELDS`: the format, `name`, `command`,
        the source `commit` and whether it was `dirty` (None for an
        install that is not a git checkout: `versions` then names the
        package's version), the UTC `date`, `machine()`, `versions()`, the Keras `backend`,
        `seed`, `seconds` and `figures`.

    Example:

    >>> record = result_record("example", {"f1": 25.8}, seed=0,
    ...                        argv=["examples/x.py", "--seed", "0"])
    >>> record["command"], record["figures"]
    ('python examples/x.py --seed 0', {'f1': 25.8})
    """
    if not isinstance(figures, dict):
        raise TypeError(f"Argument `figures` must be a dict, received a "
                        f"{type(figures).__name__}: figures={figures!r:.80}")
    commit, dirty = source_commit()
    now = datetime.datetime.now(datetime.timezone.utc)
    return {
        "format": RECORD_FORMAT,
        "name": name,
        "command": command_line(argv),
        "commit": commit,
        "dirty": dirty,
        "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "versions": versions(),
        "backend": _backend(),
        "seed": seed,
        "seconds": None if seconds is None else round(float(seconds), 1),
        "figures": figures,
    }


def json_safe(value):
    """`value` with every NaN or infinite float as None: JSON has no NaN
    (an F1 over no sentence is one)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def write_record(path, record):
    """Writes `record` as indented JSON to `path` atomically (a crash
    leaves the old file or the new one), making its folder if needed.
    NaN and infinite figures are written as `null`."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with replacing(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(json_safe(record), f, indent=1, ensure_ascii=False,
                      allow_nan=False)
            f.write("\n")
    return path


def read_record(path):
    """Reads a record written by `write_record`; a file that is not one
    raises ValueError naming it."""
    with open(path, encoding="utf-8") as f:
        try:
            record = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path} is not JSON: {e}") from None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise ValueError(f"{path} is not a result record (no \"format\": "
                         f"\"{RECORD_FORMAT}\")")
    missing = [k for k in FIELDS if k not in record]
    if missing:
        raise ValueError(f"{path} lacks the record fields {missing}")
    return record


def _epoch_perplexities(directory):
    """The validation perplexity after each epoch, from `history.csv`."""
    path = os.path.join(directory, HISTORY)
    if not os.path.exists(path):
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return [round(float(row["val_perplexity"]), 2)
                for row in csv.DictReader(f) if row.get("val_perplexity")]


def readings_figures(table):
    """`evaluate_readings`' (or `choose_reading`'s) table in short, for a
    record: its `halves`, and its `cells` and `baselines` with their
    reading, layer, tree rule, baseline and half and their F1s rounded to
    0.01."""
    keep = ("reading", "layer", "tree_rule", "baseline", "half")
    return {
        "halves": table["halves"],
        "cells": [{**{k: c[k] for k in keep if k in c},
                   "sentence_f1": round(c["sentence_f1"], 2),
                   "corpus_f1": round(c["corpus_f1"], 2)}
                  for c in table["cells"]],
        "baselines": [{**{k: b[k] for k in keep if k in b},
                       "sentence_f1": round(b["sentence_f1"], 2),
                       "corpus_f1": round(b["corpus_f1"], 2)}
                      for b in table["baselines"]],
    }


def run_figures(run_dir, readings=None):
    """The figures of the language-model run in `run_dir`, for a record.

    Args:
        run_dir: The main run's directory (as `plan_training` was given).
        readings: Optionally, `evaluate_readings`' (or `choose_reading`'s)
            table, kept as `readings_figures` gives it.

    Returns:
        A dict: `models`, for each trained model of the run (`onlstm`,
        `onlstm backward`, `lstm`), its direction, `valid_perplexity`,
        `test_perplexity`, `parameters`, `unknown_rate_test`,
        `unigram_valid_perplexity` and `on_unigram_plateau` (whether it is
        still on the unigram plateau, `models.metrics.on_unigram_plateau`)
        and the validation perplexity after each epoch
        (`epochs`); the run's
        `default_reading` where one is recorded; and `readings`.
    """
    info = read_run_info(run_dir)
    if not info.get("model"):
        raise FileNotFoundError(f"{run_dir} holds no run (no run.json)")
    models = {}
    for place in planned_runs(run_dir, recorded_directions(run_dir),
                              with_lstm=os.path.exists(
                                  os.path.join(run_dir, LSTM_DIR, "run.json"))):
        results = read_run_info(place.directory).get("results") or {}
        models[place.name] = {
            "direction": place.direction,
            **{k: results[k] for k in ("valid_perplexity", "test_perplexity",
                                       "parameters", "unknown_rate_test",
                                       "unigram_valid_perplexity",
                                       "on_unigram_plateau")
               if k in results},
            "epochs": _epoch_perplexities(place.directory),
        }
    figures = {"models": models}
    if info.get("default_reading"):
        figures["default_reading"] = info["default_reading"]
    if readings is not None:
        figures["readings"] = readings_figures(readings)
    return figures
