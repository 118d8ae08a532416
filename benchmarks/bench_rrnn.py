"""Training speed and memory of the full RRNN against a GRU of its size.

The full RRNN of `examples/rrnn_chars.py`, at the example's default size
(100 units, sequences of 20 characters of a 27-letter alphabet, 9 merges,
pool "roots", `read_inputs`, a score MLP of 16 units, the tree distance to
a frozen GRU), trains in two stages: the search stage, where the layer
searches every tree at every step (`kind` `search`), and the fixing stage,
where it replays one recorded tree (`fix`: the GRU's tree, through
`replaying`). The script trains each for one epoch of `--sequences`
random sequences with `model.fit` (Adam, the example's loss), after a
first epoch that compiles, beside `keras.layers.GRU(reset_after=False)` of
the same size with its own softmax (`gru`), and reports sequences per
second, each kind's time over the GRU's, and the peak resident memory of
the process that trained it.

Each kind runs in a fresh subprocess (so its peak memory is its own), the
kinds one after the other, `--repeats` times round; the median of each
kind's rounds is reported. The ratio to the GRU is what carries from one
machine to another; the sequences per second are this machine's.

    python benchmarks/bench_rrnn.py [--kinds search,fix,gru]
        [--sequences 320] [--batch-size 32] [--repeats 2] [--json]
        [--record FILE]
"""

import argparse
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time

# Keep TensorFlow's C++ info logs off the terminal (read when it loads).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from on_lstm_keras import runs  # noqa: E402
from on_lstm_keras.rrnn import RRNN  # noqa: E402
from on_lstm_keras.rrnn import SearchConfig  # noqa: E402
from on_lstm_keras.rrnn import TreeConfig  # noqa: E402
from on_lstm_keras.rrnn import gru_tree  # noqa: E402
from on_lstm_keras.rrnn import replaying  # noqa: E402
from on_lstm_keras.rrnn.chars import ALPHABET  # noqa: E402
from on_lstm_keras.rrnn.chars import full_rrnn_model  # noqa: E402
from on_lstm_keras.runs.flags import int_at_least  # noqa: E402

KINDS = ("search", "fix", "gru")
ALPHABET_SIZE = len(ALPHABET)  # 26 letters and space


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help="comma-separated, from " + ", ".join(KINDS))
    parser.add_argument("--units", type=int_at_least(1), default=100)
    parser.add_argument("--length", type=int_at_least(1), default=20)
    parser.add_argument("--batch-size", type=int_at_least(1), default=32)
    parser.add_argument("--sequences", type=int_at_least(1), default=320,
                        help="sequences of the timed epoch")
    parser.add_argument("--repeats", type=int_at_least(1), default=2,
                        help="rounds of fresh processes, one per kind")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true",
                        help="print the rows as JSON on the last line")
    parser.add_argument("--record", metavar="FILE",
                        help="write the result record to FILE")
    parser.add_argument("--child", choices=KINDS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        parser.error(f"argument --kinds: must name some of {', '.join(KINDS)}"
                     f", received: {args.kinds!r}")
    args.kinds = kinds
    return args


def models(kind, units, length, seed):
    """`(model, losses, context)` of `kind`: the model to `fit`, its
    losses, and the context it trains in (the replayed tree for `fix`)."""
    keras.utils.set_random_seed(seed)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    if kind == "gru":
        model = keras.Sequential([
            keras.Input((length, ALPHABET_SIZE)),
            keras.layers.GRU(units, reset_after=False, return_sequences=True),
            keras.layers.Dense(ALPHABET_SIZE)])
        return model, loss, contextlib.nullcontext()
    gru = keras.layers.GRU(units, reset_after=False, return_sequences=True)
    gru.build((None, length, ALPHABET_SIZE))
    rrnn = RRNN(units, TreeConfig(pool="roots"),
                search_config=SearchConfig(score_units=16, read_inputs=True),
                margin_weight=0.1, return_sequences=True, return_trees=True,
                return_nodes=True)
    inputs, logits, _, distance = full_rrnn_model(rrnn, gru, length, 0.003)
    model = keras.Model(inputs, [logits, distance])
    context = (replaying(rrnn.cell, gru_tree()) if kind == "fix"
               else contextlib.nullcontext())
    return model, [loss, None], context


def run_kind(kind, units, length, batch_size, sequences, seed):
    """Trains `kind` for a compiling epoch, then times one epoch: a row
    with `seconds`, `sequences_per_s` and this process's peak memory."""
    rng = np.random.default_rng(seed)
    x = np.eye(ALPHABET_SIZE, dtype="float32")[
        rng.integers(0, ALPHABET_SIZE, size=(sequences, length))]
    y = rng.integers(0, ALPHABET_SIZE, size=(sequences, length))
    model, losses, context = models(kind, units, length, seed)
    with context:
        model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=losses)
        model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0)
        started = time.perf_counter()
        model.fit(x, y, batch_size=batch_size, epochs=1, verbose=0)
        seconds = time.perf_counter() - started
    # ru_maxrss: kilobytes on Linux, bytes on macOS.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    peak_mb = peak / 2**20 if sys.platform == "darwin" else peak / 2**10
    return {"kind": kind, "seconds": seconds,
            "sequences_per_s": sequences / seconds,
            "peak_memory_mb": peak_mb}


def child(args):
    row = run_kind(args.child, args.units, args.length, args.batch_size,
                   args.sequences, args.seed)
    print(json.dumps(row))


def run_children(args):
    """Each kind in a fresh subprocess, `--repeats` rounds; the median
    row of each kind, with its time over the GRU's where the GRU ran."""
    rounds = {kind: [] for kind in args.kinds}
    for _ in range(args.repeats):
        for kind in args.kinds:
            argv = [sys.executable, os.path.abspath(__file__), "--child", kind,
                    "--units", str(args.units), "--length", str(args.length),
                    "--batch-size", str(args.batch_size),
                    "--sequences", str(args.sequences),
                    "--seed", str(args.seed)]
            done = subprocess.run(argv, capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"benchmark subprocess for {kind} failed:\n"
                                 + done.stderr[-3000:])
            rounds[kind].append(json.loads(done.stdout.strip().splitlines()[-1]))
    rows = []
    for kind, runs_of_kind in rounds.items():
        seconds = statistics.median(r["seconds"] for r in runs_of_kind)
        rows.append({
            "kind": kind, "seconds": seconds,
            "sequences_per_s": args.sequences / seconds,
            "peak_memory_mb": max(r["peak_memory_mb"] for r in runs_of_kind),
            "rounds": len(runs_of_kind)})
    return with_ratios(rows)


def with_ratios(rows):
    """Each row's time over the GRU's (`over_gru`), where a GRU row is."""
    gru = next((r for r in rows if r["kind"] == "gru"), None)
    for r in rows:
        if gru is not None:
            r["over_gru"] = r["seconds"] / gru["seconds"]
    return rows


def print_rows(rows, args):
    print(f"{args.sequences} sequences of {args.length} steps, batch "
          f"{args.batch_size}, {args.units} units; median of {args.repeats} "
          "fresh process(es) per kind")
    print(f"{'kind':<8} {'seq/s':>9} {'seconds':>9} {'× GRU':>8} "
          f"{'peak MB':>9}")
    for r in rows:
        ratio = f"{r['over_gru']:.1f}" if "over_gru" in r else "–"
        print(f"{r['kind']:<8} {r['sequences_per_s']:9.1f} "
              f"{r['seconds']:9.2f} {ratio:>8} {r['peak_memory_mb']:9.0f}")


def main(argv=None):
    args = parse_args(argv)
    if args.child:
        child(args)
        return
    print(f"Machine: {runs.machine_label(runs.machine())}; keras "
          f"{keras.__version__} on {keras.backend.backend()}")
    rows = run_children(args)
    print_rows(rows, args)
    if args.record:
        runs.write_record(args.record, runs.result_record(
            "bench_rrnn", {"rows": rows, "units": args.units,
                           "length": args.length,
                           "batch_size": args.batch_size,
                           "sequences": args.sequences},
            seed=args.seed))
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
