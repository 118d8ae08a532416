"""A fair search: the deep LSTM and the same-size ON-LSTM, each given the
same small grid of learning rate x initialisation x warm-up and the same
training budget per trial.

Why: trained alike with Adam (lr 2e-3, clip 0.25), the 3-layer LSTM of the
package's language model stays on the unigram plateau for epochs while the
ON-LSTM of the same size learns (docs/notes/lstm-baseline.md). That may be
the LSTM, or the one setting both were given. Here each cell (`--cells`, default
`onlstm,lstm`) is trained once per point of the grid (`--lrs`,
`--initializers`, `--warmups`), every trial from the same seed, on the
same windows, for the same budget: `--budget-seconds` of training wall
clock and/or `--budget-steps` optimizer steps, whichever comes first. The
first step of a trial, which builds the training graph, is not counted.

Every `--eval-every` steps (and at the start and the end) the trial's
validation perplexity is measured on a fixed slice of the validation
stream (its first `--eval-tokens` tokens; the time it takes is not
counted). The model, the corpus and the training settings are those of
`on-lstm train`: a `--preset` (default `small`), the same config flags
(`--hidden-size`, `--batch-size`, `--clip`, ...; the grid replaces `--lr`,
`--initializer` and `--warmup-steps`, the budget `--epochs`), the same
corpus flags (default: People's Daily through `load_corpus("zh")`;
`--corpus ptb` for Mikolov's PTB text).

Files in `--output` (default `runs/lstm_search`), each written atomically;
the directory is locked while the search runs:

- `trials.csv`: `cell, lr, initializer, warmup, seconds, steps, val_ppl`,
  one row per measurement of every finished trial;
- `summary.json`: the settings, every finished trial (steps, seconds,
  best and final perplexity, whether it diverged), the best trial of each
  cell (lowest perplexity measured), each cell's best perplexity at
  equal training times (a quarter, half, three quarters and all of the
  time budget, or of the shortest trial's time if some trial stopped
  earlier, each trial with its lowest measurement by then), the
  unigram perplexity of the validation slice (the training words'
  frequencies, add-one smoothed): the plateau, and when each trial left
  it (its first measurement 10% or more below it; per cell, how many
  trials did and the earliest time);
- `curves.png`: validation perplexity against training seconds, the best
  trial of each cell drawn bold, every other trial faint, the unigram
  perplexity dashed;
- `best-<cell>.npz`: the trained weights of each cell's best trial;
- `diagnosis.json` with `--diagnose`;
- `record.json` (or `--record FILE`): the result record of the search
  (`runs.result_record`): the best trial of each cell, the perplexities at
  equal times, the unigram plateau and each trial's best and final
  perplexity, with the command, commit, machine and library versions.

`--resume` keeps the finished trials of an interrupted search (a trial cut
short starts again) and runs the rest of the grid, which may have grown;
the other settings must be those recorded.

`--diagnose` then looks into the best trial of each cell, at its
initialisation and after its budget, on `--diagnose-batches` training
windows (dropout off, each window from a zero state): the global norm of
the loss gradient per layer (embedding, each recurrent layer, softmax),
and per recurrent layer the share of forget, input and output gate
activations below 0.05 and above 0.95, the share of candidates with
|c̃| > 0.95 and the mean master forget and master input gates (both 1 in
the LSTM). The gates are recomputed from each layer's weights and its
input (the layers called one after another), not taken from the layer.
Gradients need the TensorFlow or the JAX backend.

    python benchmarks/lstm_search.py --max-sentences 3000 --budget-seconds 60
    python benchmarks/lstm_search.py --corpus ptb --preset ptb-cpu \\
        --budget-seconds 1800 --output runs/lstm_search_ptb --diagnose
    python benchmarks/lstm_search.py --output runs/lstm_search --resume
"""

import argparse
import csv
import dataclasses
import io
import json
import math
import os
import sys
import time

# TensorFlow's C++ logs off (unless set), before the package starts it.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from on_lstm_keras import config  # noqa: E402
from on_lstm_keras import runs  # noqa: E402
from on_lstm_keras.runs.flags import float_in  # noqa: E402
from on_lstm_keras.runs.flags import int_at_least  # noqa: E402
from on_lstm_keras.runs.plan import check_output_dir  # noqa: E402
from on_lstm_keras.config import INITIALIZERS  # noqa: E402
from on_lstm_keras.config import RECURRENT_KINDS  # noqa: E402
from on_lstm_keras.data.corpus import LANGUAGES  # noqa: E402
from on_lstm_keras.models.metrics import OFF_PLATEAU  # noqa: E402
from on_lstm_keras.models.metrics import unigram_perplexity  # noqa: E402

DEFAULT_OUTPUT = os.path.join("runs", "lstm_search")
TRIALS_FILE = "trials.csv"
SUMMARY_FILE = "summary.json"
CURVES_FILE = "curves.png"
DIAGNOSIS_FILE = "diagnosis.json"
RECORD_FILE = "record.json"
# What the record keeps of each trial (the best trials are kept whole).
TRIAL_FIGURES = ("cell", "lr", "initializer", "warmup", "best_val_ppl",
                 "final_val_ppl")
COLUMNS = ("cell", "lr", "initializer", "warmup", "seconds", "steps",
           "val_ppl")
# The `on-lstm train` flags that the grid and the budget replace: `{flag:
# (config field, what replaces it)}`.
REPLACED = {"--lr": ("learning_rate", "--lrs"),
            "--initializer": ("initializer", "--initializers"),
            "--warmup-steps": ("warmup_steps", "--warmups"),
            "--epochs": ("epochs", "--budget-seconds / --budget-steps")}
# A gate activation counts as saturated below LOW or above HIGH.
LOW, HIGH = 0.05, 0.95
# A trial has left the unigram plateau at its first measurement at most
# OFF_PLATEAU times the unigram perplexity of the validation slice.
CELL_COLOURS = {"onlstm": "#4c72b0", "lstm": "#dd8452"}


# -- flags ----------------------------------------------------------------

def _list_of(parse_one, what):
    """An argparse `type`: comma-separated values, each parsed by
    `parse_one`, none twice; the message names the value at fault."""
    def parse(text):
        items = [item.strip() for item in text.split(",")]
        if not all(items):
            raise argparse.ArgumentTypeError(
                f"must be comma-separated {what}, received {text!r}")
        values = []
        for item in items:
            try:
                values.append(parse_one(item))
            except (ValueError, argparse.ArgumentTypeError) as e:
                raise argparse.ArgumentTypeError(
                    f"must be comma-separated {what}, received {text!r} "
                    f"({item!r} {e})") from None
        if len(set(values)) < len(values):
            raise argparse.ArgumentTypeError(
                f"must not repeat a value, received {text!r}")
        return values
    return parse


def _one_of(choices):
    def parse(text):
        if text not in choices:
            raise ValueError("is not one of " + ", ".join(choices))
        return text
    return parse


def build_parser():
    parser = argparse.ArgumentParser(
        prog="lstm_search.py", description=__doc__.split("\n\n")[0],
        allow_abbrev=False,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        # The flags of REPLACED replace runs.add_config_arguments' own.
        conflict_handler="resolve",
        epilog=__doc__.split("\n\n", 1)[1])
    grid = parser.add_argument_group("the grid and the budget")
    grid.add_argument("--cells", type=_list_of(_one_of(RECURRENT_KINDS),
                                               "cells: onlstm, lstm"),
                      default=list(RECURRENT_KINDS),
                      help="the cells to search (default: onlstm,lstm)")
    grid.add_argument("--lrs", type=_list_of(float_in(0.0), "numbers > 0"),
                      default=[1e-3, 2e-3, 4e-3],
                      help="learning rates (default: 1e-3,2e-3,4e-3)")
    grid.add_argument("--initializers",
                      type=_list_of(_one_of(INITIALIZERS),
                                    "initializers: " + ", ".join(INITIALIZERS)),
                      default=list(INITIALIZERS),
                      help="initialisations, see --initializer of on-lstm "
                           "train (default: keras,uniform)")
    grid.add_argument("--warmups", type=_list_of(int_at_least(0),
                                                 "integers >= 0"),
                      default=[0, 500],
                      help="warm-up lengths in optimizer steps, 0 for none "
                           "(default: 0,500)")
    grid.add_argument("--budget-seconds", type=float_in(0.0, low_open=False),
                      default=600.0,
                      help="training wall-clock seconds per trial, 0 for no "
                           "limit (default: 600)")
    grid.add_argument("--budget-steps", type=int_at_least(0), default=0,
                      help="optimizer steps per trial, 0 for no limit "
                           "(default: 0)")
    grid.add_argument("--eval-every", type=int_at_least(1), default=100,
                      help="measure the validation perplexity every N steps "
                           "(default: 100)")
    grid.add_argument("--eval-tokens", type=int_at_least(2), default=20000,
                      help="the validation slice: the first N tokens of the "
                           "validation stream (default: 20000)")
    data = parser.add_argument_group("the corpus")
    data.add_argument("--language", choices=LANGUAGES, default="zh",
                      help="zh: jieba segmentation; en: whitespace (default: "
                           "zh)")
    data.add_argument("--corpus", default=None, help=(
        "a UTF-8 text file, a folder with ptb.{train,valid,test}.txt, or ptb "
        "(Mikolov's PTB text, English) (default: People's Daily 1998-01 for "
        "zh, PTB for en)"))
    data.add_argument("--max-sentences", type=int_at_least(1), default=None,
                      help="use only the first N sentences (default: all)")
    data.add_argument("--lowercase", action="store_true",
                      help="lower-case English text (default: off)")
    run = parser.add_argument_group("the run")
    run.add_argument("--output", default=DEFAULT_OUTPUT,
                     help=f"output directory (default: {DEFAULT_OUTPUT})")
    run.add_argument("--resume", action="store_true",
                     help="keep the finished trials in --output and run the "
                          "rest of the grid (default: off)")
    run.add_argument("--diagnose", action="store_true",
                     help="gradient norms and gate saturation per layer of "
                          "each cell's best trial (default: off)")
    run.add_argument("--diagnose-batches", type=int_at_least(1), default=5,
                     help="training windows the diagnosis reads (default: 5)")
    run.add_argument("--quiet", action="store_true",
                     help="no progress lines (default: off)")
    run.add_argument("--record", default=None, metavar="FILE",
                     help="where to write the result record (default: "
                          f"OUTPUT/{RECORD_FILE})")
    run.add_argument("--preset", choices=sorted(config.PRESETS),
                     default="small", help="the settings the model and "
                                           "training flags default to "
                                           "(default: small)")
    _, training = runs.add_config_arguments(parser)
    for flag, (name, instead) in REPLACED.items():
        training.add_argument(flag, dest=name, nargs="?", default=None,
                              action=_Replaced, instead=instead,
                              help=argparse.SUPPRESS)
    return parser


class _Replaced(argparse.Action):
    """A flag of `on-lstm train` that the search sets in its own way."""

    def __init__(self, *args, instead, **kwargs):
        super().__init__(*args, **kwargs)
        self.instead = instead

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} {values or ''}".rstrip()
                     + f": the search sets it from {self.instead}")


def parse_args(argv=None, parser=None):
    """The flags, every one checked (argparse's exit 2, naming the flag and
    the value, on a bad one) before anything is read or written."""
    parser = parser or build_parser()
    args = parser.parse_args(argv)
    if not args.budget_seconds and not args.budget_steps:
        parser.error("--budget-seconds 0 and --budget-steps 0: a trial needs "
                     "a budget, give either a number > 0")
    if args.corpus == "ptb":
        args.language = "en"
    try:
        args.model_config, args.training_config = configs_of(args)
    except ValueError as e:
        parser.error(str(e))
    return args


def configs_of(args):
    """The preset's `(ModelConfig, TrainingConfig)` with the config flags
    given; raises `ValueError` naming a bad flag."""
    return runs.configs_from_args(args, config.PRESETS[args.preset])


def grid_of(args):
    """The trials, `(cell, lr, initializer, warmup)`, the cells interleaved
    so that a search cut short has tried both alike."""
    return [(cell, lr, initializer, warmup)
            for lr in args.lrs for initializer in args.initializers
            for warmup in args.warmups for cell in args.cells]


def trial_name(trial):
    cell, lr, initializer, warmup = trial
    return f"{cell} lr {lr:g} {initializer} warmup {warmup}"


def recorded_settings(args):
    """What a resumed search must share with the one it continues."""
    model = args.model_config.to_dict()
    training = args.training_config.to_dict()
    for name in ("recurrent", "initializer"):
        model.pop(name)
    for name in ("learning_rate", "warmup_steps", "epochs"):
        training.pop(name)
    return {
        "language": args.language, "corpus": args.corpus,
        "max_sentences": args.max_sentences, "lowercase": args.lowercase,
        "preset": args.preset, "model": model, "training": training,
        "budget_seconds": args.budget_seconds,
        "budget_steps": args.budget_steps, "eval_every": args.eval_every,
        "eval_tokens": args.eval_tokens,
    }


# -- the state in --output ------------------------------------------------

def _read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def previous_trials(args):
    """`(trials, rows)` of the finished trials kept from `--output`.

    Raises:
        FileExistsError: `--output` holds a search and `--resume` is off.
        ValueError: With `--resume`, a setting differs from the recorded
            one (the message names it and both values).
    """
    path = os.path.join(args.output, SUMMARY_FILE)
    found = os.path.exists(path) or os.path.exists(
        os.path.join(args.output, TRIALS_FILE))
    if not args.resume:
        if found:
            raise FileExistsError(
                f"{args.output} holds a search; pass --resume to continue "
                "it, or choose another --output")
        return [], []
    if not found:
        return [], []
    summary = _read_json(path)
    was, now = summary["settings"], recorded_settings(args)
    for key in now:
        if was.get(key) != now[key]:
            raise ValueError(
                f"--resume: the search in {args.output} has {key}="
                f"{was.get(key)!r}, received: {key}={now[key]!r}; only the "
                "grid (--cells, --lrs, --initializers, --warmups) may change")
    trials = summary["trials"]
    keys = {key_of(t) for t in trials}
    with open(os.path.join(args.output, TRIALS_FILE), newline="",
              encoding="utf-8") as f:
        rows = [row for row in csv.DictReader(f) if key_of(row) in keys]
    return trials, rows


def key_of(row):
    """The trial `(cell, lr, initializer, warmup)` of a row or summary."""
    return (row["cell"], float(row["lr"]), row["initializer"],
            int(row["warmup"]))


def write_outputs(args, trials, rows):
    """`trials.csv`, `summary.json` and `curves.png`, each atomically."""
    from on_lstm_keras.utils.atomic import write_text
    from on_lstm_keras.models.saving import write_json

    text = io.StringIO()
    writer = csv.DictWriter(text, COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: row[k] for k in COLUMNS} for row in rows)
    write_text(os.path.join(args.output, TRIALS_FILE), text.getvalue())
    summary = summarise(trials, rows, args.budget_seconds, args.unigram)
    summary["settings"] = recorded_settings(args)
    summary["unigram_val_ppl"] = round(args.unigram, 3)
    write_json(os.path.join(args.output, SUMMARY_FILE), summary)
    draw_curves(rows, summary["best"], os.path.join(args.output, CURVES_FILE),
                title=f"{args.preset} preset, {args.corpus or args.language}",
                unigram=args.unigram)
    return summary


# -- the results ----------------------------------------------------------

def curves_of(rows):
    """`{trial: [(seconds, steps, val_ppl), ...]}` in row order."""
    curves = {}
    for row in rows:
        curves.setdefault(key_of(row), []).append(
            (float(row["seconds"]), int(row["steps"]), float(row["val_ppl"])))
    return curves


def at_time(curve, seconds=math.inf):
    """The best perplexity a trial had by `seconds` of training: the
    lowest of its measurements by then (what keeping the best model
    gives)."""
    return min((ppl for when, _, ppl in curve if when <= seconds + 1e-9),
               default=math.inf)


def summarise(trials, rows, budget_seconds=0.0, unigram=None):
    """The best trial of each cell and each cell's best perplexity at equal
    training times: a quarter, a half, three quarters and all of the
    common training time, each trial with its lowest perplexity measured
    by then. When every trial (but those that diverged) ran out of the
    time budget, that budget is the common time, and at its end each
    trial counts with all its measurements (the last one is taken when it
    runs out, less than a step past the budget); else the common time is
    the shortest trial's.

    With the `unigram` perplexity of the validation slice, each trial
    also gets `off_plateau`: the training seconds and steps of its first
    measurement at most `OFF_PLATEAU` times the unigram perplexity
    (`None` if none was), and the summary `off_plateau`: per cell, how
    many of its trials left the plateau and the earliest seconds any did.
    """
    curves = curves_of(rows)
    if unigram is not None:
        trials = [dict(t, off_plateau=off_plateau(curves[key_of(t)],
                                                  unigram))
                  for t in trials]
    best = {}
    for trial in trials:
        cell = trial["cell"]
        if cell not in best or _ppl(trial) < _ppl(best[cell]):
            best[cell] = trial
    lasted = [t["seconds"] for t in trials if not t["diverged"]]
    common = min(lasted) if lasted else 0.0
    timed_out = bool(budget_seconds and lasted and common >= budget_seconds)
    if timed_out:
        common = budget_seconds
    equal = []
    if common > 0:
        for quarter in (1, 2, 3, 4):
            seconds = common * quarter / 4
            end = timed_out and quarter == 4

            def value(trial):
                curve = curves[key_of(trial)]
                if end and not trial["diverged"]:
                    return at_time(curve)
                return at_time(curve, seconds)

            point = {"seconds": round(seconds, 2)}
            for cell, top in best.items():
                mine = [t for t in trials if t["cell"] == cell]
                point[cell] = _number(min(value(t) for t in mine))
                point[f"{cell}_best_trial"] = _number(value(top))
            equal.append(point)
    summary = {"trials": trials, "best": best, "at_equal_time": equal}
    if unigram is not None:
        summary["off_plateau"] = {}
        for cell in best:
            left = [t["off_plateau"] for t in trials
                    if t["cell"] == cell and t["off_plateau"]]
            summary["off_plateau"][cell] = {
                "trials": len(left),
                "of": sum(t["cell"] == cell for t in trials),
                "earliest_seconds": min((p["seconds"] for p in left),
                                        default=None)}
    return summary


def off_plateau(curve, unigram):
    """`{"seconds", "steps"}` of a trial's first measurement at most
    `OFF_PLATEAU` times `unigram`, or `None`."""
    for seconds, steps, ppl in curve:
        if ppl <= OFF_PLATEAU * unigram:
            return {"seconds": seconds, "steps": steps}
    return None


def record_figures(summary):
    """The figures of `summary.json` that the result record keeps: the
    `best` trial of each cell, the perplexities `at_equal_time`, the
    unigram plateau (`unigram_val_ppl`) and `off_plateau`, and of every
    trial its grid point and best and final perplexity (`TRIAL_FIGURES`):
    a few KB where the whole summary of the default grid is about ten."""
    return {"best": summary["best"],
            "at_equal_time": summary["at_equal_time"],
            "unigram_val_ppl": summary["unigram_val_ppl"],
            "off_plateau": summary["off_plateau"],
            "trials": [{k: t[k] for k in TRIAL_FIGURES}
                       for t in summary["trials"]]}


def _ppl(trial):
    """A trial's best perplexity, inf for none."""
    value = trial["best_val_ppl"]
    return math.inf if value is None else value


def _number(value):
    """A JSON number, `None` for inf or NaN."""
    return round(value, 3) if math.isfinite(value) else None


def draw_curves(rows, best, path, title=None, unigram=None):
    """`curves.png`: perplexity against training seconds, every trial
    faint, each cell's best trial bold, the unigram perplexity (if given)
    dashed."""
    from on_lstm_keras.utils.atomic import replacing
    from on_lstm_keras.utils.extras import require

    require("matplotlib", "plot", "Drawing the search's curves")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    fig = Figure(figsize=(7.5, 4.6))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    tops = {key_of(t): cell for cell, t in best.items()}
    for key, curve in curves_of(rows).items():
        kept = [(s, p) for s, _, p in curve if math.isfinite(p)]
        if not kept:
            continue
        xs, ys = zip(*kept)
        colour = CELL_COLOURS.get(key[0], "0.4")
        if key in tops:
            ax.plot(xs, ys, color=colour, lw=2, marker="o", ms=3,
                    label=f"{trial_name(key)} (best {min(ys):.1f})")
        else:
            ax.plot(xs, ys, color=colour, lw=0.8, alpha=0.3)
    if unigram is not None:
        ax.axhline(unigram, color="0.3", lw=1, ls="--",
                   label=f"unigram {unigram:.1f}")
    ax.set_yscale("log")
    # Plain numbers on the log axis: 10^k, and 2 and 5 times it.
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_minor_formatter(FuncFormatter(
        lambda v, _: f"{v:g}" if v > 0 and round(
            v / 10 ** math.floor(math.log10(v))) in (2, 5) else ""))
    ax.set_xlabel("training time (s)")
    ax.set_ylabel("validation perplexity")
    ax.set_title(title or "validation perplexity")
    if tops or unigram is not None:
        ax.legend(fontsize=7)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    with replacing(path, suffix=".png") as tmp:
        fig.savefig(tmp)


def print_table(summary, file=None):
    file = file or sys.stdout
    print(f"{'cell':7s} {'lr':>7s} {'init':8s} {'warmup':>6s} {'steps':>6s} "
          f"{'seconds':>8s} {'best ppl':>9s} {'final ppl':>9s} "
          f"{'off plateau':>11s}", file=file)
    for t in summary["trials"]:
        best = _shown(t["best_val_ppl"])
        final = "diverged" if t["diverged"] else _shown(t["final_val_ppl"])
        left = t.get("off_plateau")
        left = "never" if left is None else f"{left['seconds']:.0f} s"
        print(f"{t['cell']:7s} {t['lr']:7g} {t['initializer']:8s} "
              f"{t['warmup']:6d} {t['steps']:6d} {t['seconds']:8.1f} "
              f"{best:>9s} {final:>9s} {left:>11s}", file=file)
    for cell, t in summary["best"].items():
        print(f"best {cell}: {trial_name(key_of(t))}, perplexity "
              f"{_shown(t['best_val_ppl'])}", file=file)
    if summary.get("unigram_val_ppl") is not None:
        print(f"unigram perplexity of the validation slice: "
              f"{summary['unigram_val_ppl']:.1f}; off the plateau: at most "
              f"{OFF_PLATEAU:g} times that", file=file)
    for cell, left in summary.get("off_plateau", {}).items():
        when = left["earliest_seconds"]
        print(f"{cell}: {left['trials']} of {left['of']} trials left the "
              "plateau" + ("" if when is None else
                           f", the first after {when:.0f} s"), file=file)
    if summary["at_equal_time"]:
        cells = list(summary["best"])
        print("best perplexity at equal training time (any trial / the best "
              "trial):", file=file)
        print(f"{'seconds':>8s} " + " ".join(f"{c:>17s}" for c in cells),
              file=file)
        for point in summary["at_equal_time"]:
            print(f"{point['seconds']:8.1f} " + " ".join(
                f"{_shown(point[c]):>8s}/{_shown(point[c + '_best_trial']):>8s}"
                for c in cells), file=file)


def _shown(value):
    return "inf" if value is None else f"{value:.1f}"


# -- a trial --------------------------------------------------------------

def new_model(args, cell, initializer, stateful=True):
    """The trial's model, seeded: the same initial weights for every trial
    of a cell and an initialisation."""
    import keras

    from on_lstm_keras.models import ONLSTMLanguageModel

    training = args.training_config
    keras.utils.set_random_seed(training.seed)
    model_config = dataclasses.replace(args.model_config, recurrent=cell,
                                       initializer=initializer)
    model = ONLSTMLanguageModel.from_model_config(
        model_config, args.vocab_size, stateful=stateful, seed=training.seed)
    return model.build_for(training.batch_size)


def run_trial(args, trial, train_ids, valid_ids):
    """Trains one trial for the budget.

    Returns:
        `(summary, rows, model)`: the trial's summary (for
        `summary.json`), its measurements (rows of `trials.csv`) and the
        trained model.
    """
    import numpy as np

    from on_lstm_keras.data.batching import BPTTSequence
    from on_lstm_keras.models.callbacks import EpochStart
    from on_lstm_keras.models.training import ValidationPerplexity
    from on_lstm_keras.models.training import compile_language_model
    from on_lstm_keras.models.training import make_optimizer

    cell, lr, initializer, warmup = trial
    training = args.training_config
    model = new_model(args, cell, initializer)
    compile_language_model(model, make_optimizer(
        training.optimizer, lr, training.clipnorm, training.weight_decay,
        warmup), xla=training.xla)
    data = BPTTSequence(train_ids, training.batch_size, training.bptt,
                        variable_length=training.variable_length,
                        seed=training.seed)
    epoch_start = EpochStart(data, training.seed)
    validation = ValidationPerplexity(valid_ids, training.eval_batch_size,
                                      training.bptt, verbose=0)
    for callback in (epoch_start, validation):
        callback.set_model(model)

    def measure():
        logs = {}
        validation.on_epoch_end(0, logs)
        return logs["val_perplexity"]

    rows = []

    def record(seconds, steps, ppl):
        rows.append({"cell": cell, "lr": lr, "initializer": initializer,
                     "warmup": warmup, "seconds": round(seconds, 3),
                     "steps": steps, "val_ppl": round(ppl, 3)})
        if not args.quiet:
            print(f"  {trial_name(trial)}: step {steps}, {seconds:.1f} s, "
                  f"validation perplexity {ppl:.1f}", flush=True)

    record(0.0, 0, measure())
    seconds, steps, epoch, index = 0.0, 0, 0, 0
    first_step = diverged = None
    epoch_start.on_epoch_begin(epoch)
    while True:
        if index == len(data):
            epoch, index = epoch + 1, 0
            epoch_start.on_epoch_begin(epoch)
        x, y, w = data[index]
        index += 1
        started = time.perf_counter()
        logs = model.train_on_batch(x, y, sample_weight=w, return_dict=True)
        loss = float(np.asarray(logs["loss"]))
        took = time.perf_counter() - started
        steps += 1
        if first_step is None:
            first_step = took  # builds the training graph: not counted
        else:
            seconds += took
        diverged = not math.isfinite(loss)
        done = (diverged
                or (args.budget_seconds and seconds >= args.budget_seconds)
                or (args.budget_steps and steps >= args.budget_steps))
        if done or steps % args.eval_every == 0:
            record(seconds, steps, math.inf if diverged else measure())
        if done:
            break
    finite = [row["val_ppl"] for row in rows if math.isfinite(row["val_ppl"])]
    summary = {"cell": cell, "lr": lr, "initializer": initializer,
               "warmup": warmup, "steps": steps, "seconds": round(seconds, 3),
               "epochs": round(epoch + index / len(data), 3),
               "first_step_seconds": round(first_step, 3),
               # None: no finite measurement (JSON has no inf)
               "best_val_ppl": min(finite, default=None),
               "final_val_ppl": None if diverged else rows[-1]["val_ppl"],
               "diverged": diverged}
    return summary, rows, model


def save_weights(model, path):
    """The trainable weights, in order, as an `.npz`, atomically."""
    import keras
    import numpy as np

    from on_lstm_keras.utils.atomic import replacing

    with replacing(path, suffix=".npz") as tmp:
        with open(tmp, "wb") as f:
            np.savez(f, *[keras.ops.convert_to_numpy(w)
                          for w in model.trainable_weights])


def load_weights(model, path):
    import numpy as np

    with np.load(path) as saved:
        for k, weight in enumerate(model.trainable_weights):
            weight.assign(saved[f"arr_{k}"])
    return model


# -- the diagnosis --------------------------------------------------------

def diagnose(args, trial, weights_path, train_ids):
    """Gradient norms and gate saturation of a trial's model at its
    initialisation and with its trained weights."""
    from on_lstm_keras.data.batching import BPTTSequence
    from on_lstm_keras.models.diagnostics import gate_saturation
    from on_lstm_keras.models.diagnostics import gradient_norms

    training = args.training_config
    data = BPTTSequence(train_ids, training.batch_size, training.bptt)
    count = min(args.diagnose_batches, max(1, len(data) - 1))
    batches = [data[k] for k in range(count)]
    result = {}
    for when in ("initial", "trained"):
        model = new_model(args, trial["cell"], trial["initializer"],
                          stateful=False)
        if when == "trained":
            load_weights(model, weights_path)
        result[when] = {"gradients": gradient_norms(model, batches),
                        "gates": gate_saturation(model, batches, LOW, HIGH)}
    return result


def print_diagnosis(name, result, file=None):
    file = file or sys.stdout
    for when, found in result.items():
        print(f"{name}, {when} weights:", file=file)
        print("  gradient global norm (weight norm): " + ", ".join(
            f"{part} {v['gradient_norm']:.3g} ({v['weight_norm']:.3g})"
            for part, v in found["gradients"].items()), file=file)
        print(f"  {'layer':10s} {'forget <.05/>.95':>17s} "
              f"{'input <.05/>.95':>17s} {'output <.05/>.95':>17s} "
              f"{'|c~|>.95':>8s} {'master f':>8s} {'master i':>8s}", file=file)
        for layer, g in found["gates"].items():
            def pair(name):
                return f"{g[name]['below']:.2f}/{g[name]['above']:.2f}"
            print(f"  {layer:10s} {pair('forget'):>17s} {pair('input'):>17s} "
                  f"{pair('output'):>17s} {g['candidate']['saturated']:8.2f} "
                  f"{g['master_forget']['mean']:8.2f} "
                  f"{g['master_input']['mean']:8.2f}", file=file)


# -- the search -----------------------------------------------------------

def search(args):
    """Runs the grid into `--output` (locked); returns `summary.json`."""
    from on_lstm_keras.data.vocabulary import Vocabulary
    from on_lstm_keras.models.saving import write_json
    from on_lstm_keras.data import load_corpus

    trials, rows = previous_trials(args)
    training = args.training_config
    corpus = load_corpus(args.language, args.corpus, args.max_sentences,
                         lowercase=args.lowercase, seed=training.seed,
                         progress=not args.quiet)
    print(f"Corpus: {corpus.source}: {corpus.summary()}")
    vocab = Vocabulary.build(corpus.train, training.min_count,
                             training.max_vocab)
    args.vocab_size = len(vocab)
    train_ids = vocab.encode_sentences(corpus.train)
    valid_ids = vocab.encode_sentences(corpus.valid)[:args.eval_tokens]
    args.unigram = unigram_perplexity(train_ids, valid_ids, len(vocab))
    print(f"Validation slice: {len(valid_ids):,} tokens, unigram perplexity "
          f"{args.unigram:.1f}")
    done = {key_of(t) for t in trials}
    todo = [t for t in grid_of(args) if t not in done]
    print(f"{len(todo)} trials to run, {len(done)} kept; budget per trial: "
          + ", ".join(filter(None, [
              args.budget_seconds and f"{args.budget_seconds:g} s",
              args.budget_steps and f"{args.budget_steps} steps"])))
    summary = write_outputs(args, trials, rows) if trials else None
    for k, trial in enumerate(todo, 1):
        print(f"[{k}/{len(todo)}] {trial_name(trial)}", flush=True)
        found, measured, model = run_trial(args, trial, train_ids, valid_ids)
        cell = trial[0]
        best = (summary or {}).get("best", {}).get(cell)
        if best is None or _ppl(found) < _ppl(best):
            save_weights(model, os.path.join(args.output, f"best-{cell}.npz"))
        trials.append(found)
        rows.extend(measured)
        summary = write_outputs(args, trials, rows)
    print()
    print_table(summary)
    if args.diagnose:
        results = {}
        for cell, trial in summary["best"].items():
            results[cell] = {"trial": trial, **diagnose(
                args, trial, os.path.join(args.output, f"best-{cell}.npz"),
                train_ids)}
            print()
            print_diagnosis(trial_name(key_of(trial)),
                            {k: results[cell][k] for k in ("initial",
                                                           "trained")})
        write_json(os.path.join(args.output, DIAGNOSIS_FILE), results)
    return summary


def main(argv=None):
    """Runs the search; returns the exit code: 0 done, 2 bad input (a flag,
    a file, a locked or used directory), 130 interrupted."""
    parser = build_parser()
    args = parse_args(argv, parser)
    try:
        check_output_dir(args.output)
    except ValueError as e:
        parser.error(str(e))
    from on_lstm_keras.utils.lock import DirectoryLocked
    from on_lstm_keras.utils.lock import output_lock

    try:
        with output_lock(args.output):
            started = time.time()
            summary = search(args)
            runs.write_record(
                args.record or os.path.join(args.output, RECORD_FILE),
                runs.result_record(
                    "lstm_search", record_figures(summary),
                    seed=args.training_config.seed,
                    seconds=time.time() - started,
                    argv=[__file__, *(sys.argv[1:] if argv is None
                                      else argv)]))
    except (FileNotFoundError, FileExistsError, ValueError, LookupError,
            DirectoryLocked) as e:
        print(f"{parser.prog}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nInterrupted: the finished trials are kept in {args.output}; "
              "run again with --resume to go on.", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
