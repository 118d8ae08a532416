"""`on-lstm evaluate`: unlabeled F1 of a model's or a baseline's trees."""

import argparse
import json
import math
import os
import sys
import tempfile
import time

from on_lstm_keras import runs
from on_lstm_keras.runs.flags import NON_NEGATIVE
from on_lstm_keras.runs.flags import POSITIVE
from on_lstm_keras.runs.records import json_safe
from on_lstm_keras.cli._args import add_output_arguments
from on_lstm_keras.cli._args import layer_or_all
from on_lstm_keras.cli.parse import add_reading_arguments
from on_lstm_keras.cli.parse import add_tree_rule_argument
from on_lstm_keras.cli.parse import check_reading_flags
from on_lstm_keras.cli.parse import or_mean
from on_lstm_keras.parsing import BASELINES

EPILOG = (
    "Two F1 figures are printed. 'sentence F1' is the mean over sentences of "
    "each sentence's span F1 without the whole-sentence span (the official "
    "ON-LSTM script's 'Mean F1'). 'corpus F1 (micro-averaged spans)' sums "
    "the matching spans of all sentences, the whole-sentence span "
    "included: what EVALB counts on these unlabelled trees, and the figure "
    "the ON-LSTM paper's tables report, but computed here, not by the EVALB "
    "program. JSON keys: sentence_f1, corpus_f1.")


def fileid_list(values):
    """The file ids of repeated and comma-separated `--fileids`."""
    if values is None:
        return None
    ids = [f.strip() for value in values for f in value.split(",")]
    ids = [f for f in ids if f]
    if not ids:
        raise ValueError(f"--fileids must name at least one file, received "
                         f"{values!r}")
    return ids


def add_evaluate_arguments(parser):
    parser.epilog = EPILOG
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="model directory")
    source.add_argument("--baseline",
                        choices=BASELINES,
                        help="score a trivial tree instead of a model's")
    parser.add_argument("--treebank", choices=("ptb", "sinica"), required=True,
                        help="ptb: nltk's Penn Treebank sample, with the "
                             "paper's preprocessing; sinica: nltk's Sinica "
                             "treebank sample")
    parser.add_argument("--max-length", type=POSITIVE, default=None,
                        metavar="N",
                        help="only sentences of at most N words (10: WSJ10; "
                             "default: every length)")
    parser.add_argument("--nltk-data", default=None,
                        help="folder with corpora/treebank or "
                             "corpora/sinica_treebank (default: nltk's path)")
    parser.add_argument("--fileids", action="append", default=None,
                        metavar="IDS",
                        help="PTB only: score these .mrg files (comma list, "
                             "or repeat the flag), e.g. wsj_2300.mrg,"
                             "wsj_2301.mrg (default: all)")
    parser.add_argument("--layer", type=or_mean(layer_or_all),
                        default=None,
                        help="layer number from 1, 'mean' (the mean over "
                             "layers of the per-sentence z-scored distances) "
                             "or 'all' (each layer; default: the run's "
                             "recorded default, else the middle one)")
    add_reading_arguments(parser)
    add_tree_rule_argument(parser)
    parser.add_argument("--half", choices=("dev", "test"), default=None,
                        help="one of the sample's two fixed halves: dev or "
                             "test. Sinica: the sentences at even (dev) or "
                             "odd (test) positions of the file, from 0; "
                             "ptb: the files at even (dev: wsj_0001, "
                             "wsj_0003, ...) or odd (test) positions of the "
                             "sorted file ids, not with --fileids (default: "
                             "the whole sample)")
    parser.add_argument("--choose-default", action="store_true", help=(
        "score every reading x layer (each, and mean) x tree rule, and "
        "record the best as the run's default for parse and evaluate "
        "(run.json default_reading); it is chosen on the dev half, and the "
        "test half is scored beside it; --max-length applies (10: chosen "
        "on the WSJ10-style sentences)"))
    parser.add_argument("--untrained", action="store_true", help=(
        "score the model's architecture untrained instead (a control): a "
        "copy of the run, its backward and LSTM runs included, with "
        "freshly drawn weights (runs.untrained_copy), made in a temporary "
        "folder and read with the run's recorded reading; with "
        "--choose-default, the copy's best reading is chosen and printed, "
        "and nothing is recorded"))
    parser.add_argument("--untrained-seed", type=NON_NEGATIVE, default=None,
                        metavar="N",
                        help="with --untrained: the seed of the weights "
                             "(default: the run's training seed)")
    parser.add_argument("--mirrored", action="store_true", help=(
        "score the mirrored treebank: each sentence reversed and its gold "
        "tree mirrored, baselines included, read as a user of that "
        "left-branching language would: its forward model is the run's "
        "backward one (trained on reversed sentences), its backward model "
        "the run's forward one, so --reading names them so; without "
        "--reading, the same model(s) as on the treebank itself. Read both "
        "ways the distances are the mirror of the original ones: a change "
        "in F1 is the parser's bias"))
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the random baseline (default: 0)")
    add_output_arguments(parser)


def run_evaluate(args, argv=None):
    """`on-lstm evaluate`: scores the trees and prints their F1.

    Args:
        args: The parsed flags of `add_evaluate_arguments`.
        argv: The command's words, as `--record`'s record names them
            (default: `on-lstm` and this process's arguments).

    Returns:
        `evaluate_treebank`'s result, or with `--choose-default`
        `choose_reading`'s table.
    """
    started = time.time()
    argv = ["on-lstm", *sys.argv[1:]] if argv is None else argv
    fileids = fileid_list(args.fileids)
    if fileids is not None and args.treebank != "ptb":
        raise ValueError("--fileids selects files of --treebank ptb; the "
                         f"Sinica sample is one file, received --treebank "
                         f"{args.treebank} --fileids {','.join(fileids)}")
    if args.baseline and (args.reading or args.backward_model):
        raise ValueError(
            "--reading and --backward-model read a model, not a baseline, "
            f"received --baseline {args.baseline} with --reading "
            f"{args.reading} --backward-model {args.backward_model}")
    if args.half is not None and fileids is not None:
        raise ValueError(f"--half picks its own files of the PTB sample; give "
                         f"--half or --fileids, received --half {args.half} "
                         f"--fileids {','.join(fileids)}")
    if args.mirrored and args.backward_model is not None and (
            args.reading not in ("forward", "both")):
        raise ValueError(
            "With --mirrored, --backward-model is the mirrored language's "
            "forward model, read with --reading forward or both, received "
            f"--reading {args.reading or '(none)'} --backward-model "
            f"{args.backward_model}")
    if args.model and not args.mirrored:
        check_reading_flags(args)
    if args.mirrored and args.choose_default:
        raise ValueError(
            "--choose-default records a reading chosen on the treebank "
            "itself, and --mirrored scores its mirror; give one, received "
            "--choose-default --mirrored")
    if args.untrained or args.untrained_seed is not None:
        return evaluate_untrained(args, argv, started, fileids)
    return evaluate_model(args, argv, started, fileids)


def evaluate_untrained(args, argv, started, fileids):
    """`evaluate --untrained`: `run_evaluate` on an untrained copy of the
    run, made in a temporary folder, read with the run's recorded reading
    for each of `--reading`, `--layer` and `--tree-rule` not given (the
    copy records none: `--choose-default` chooses its own); the result
    names the run and the seed."""
    if not args.untrained:
        raise ValueError("--untrained-seed goes with --untrained, received "
                         f"--untrained-seed {args.untrained_seed} without it")
    if not args.model:
        raise ValueError("--untrained copies a model's run, received "
                         f"--baseline {args.baseline}")
    if args.backward_model:
        raise ValueError(
            "--untrained copies the run with its own backward run "
            "(<model>/backward); --backward-model is not copied, received "
            f"--backward-model {args.backward_model}")
    reading = {}
    if not args.choose_default:
        saved = runs.saved_reading(args.model) or {}
        recorded = saved.get("reading")
        if args.mirrored:
            recorded = runs.mirror_reading(recorded)
        reading = {"reading": args.reading or recorded,
                   "layer": (args.layer if args.layer is not None
                             else saved.get("layer")),
                   "tree_rule": args.tree_rule or saved.get("tree_rule")}
    with tempfile.TemporaryDirectory(prefix="untrained-") as folder:
        copy = os.path.join(folder, "untrained")
        info = runs.untrained_copy(args.model, copy, seed=args.untrained_seed)
        untrained = {"from": args.model, "seed": info["untrained"]["seed"]}
        copied = argparse.Namespace(**{**vars(args), **reading, "model": copy,
                                       "untrained_of": untrained})
        return evaluate_model(copied, argv, started, fileids)


def evaluate_model(args, argv, started, fileids):
    """`run_evaluate` once its flags are checked: the F1 of the model's (or
    the baseline's) trees, or with `--choose-default` the table."""
    if args.choose_default:
        table = choose_default(args)
        write_result_record(args, json_safe(table), argv, started)
        return table

    timer = time.perf_counter()
    result = runs.evaluate_treebank(
        args.treebank, model=args.model, baseline=args.baseline,
        reading=args.reading, layer=args.layer, tree_rule=args.tree_rule,
        max_length=args.max_length, nltk_data=args.nltk_data,
        seed=args.seed, fileids=fileids, half=args.half,
        backward_model=args.backward_model, mirrored=args.mirrored,
        progress=not args.quiet,
    )
    seconds = time.perf_counter() - timer
    if args.model:
        result["model"] = model_name(args)
    if untrained_of(args):
        result["untrained"] = untrained_of(args)
    if not result["sentences"]:
        print(f"on-lstm evaluate: warning: 0 sentences were scored (none of "
              f"the {result['skipped']} selected has 2 words or more), so "
              "there is no F1", file=sys.stderr)
    figures = json_safe(result)
    if args.json:
        print(json.dumps(figures, allow_nan=False))
    else:
        print_scores(args, result, seconds)
    write_result_record(args, figures, argv, started)
    return result


def write_result_record(args, figures, argv, started):
    """With `--record FILE`, writes the result record of `figures` (what
    `--json` prints) to FILE, with the baseline's seed where one was used
    (the random baseline's, also among `--choose-default`'s baselines)."""
    if args.record:
        runs.write_record(args.record, runs.result_record(
            "evaluate", figures, seed=figures.get("seed"),
            seconds=time.time() - started, argv=argv))


def untrained_of(args):
    """With `--untrained`: `{"from": run, "seed": seed}`, else `None`."""
    return getattr(args, "untrained_of", None)


def model_name(args):
    """The model as the user named it (the run, for an untrained copy)."""
    return untrained_of(args)["from"] if untrained_of(args) else args.model


def print_scores(args, result, seconds):
    """The F1 of `evaluate_treebank`'s `result`, as text; for a model, also
    the sentences scored per second of the `seconds` it took."""
    what = (f"baseline {args.baseline}" if args.baseline
            else f"model {model_name(args)}")
    if untrained_of(args):
        what += f" untrained (weights drawn with seed {untrained_of(args)['seed']})"
    if result.get("reading"):
        what += f", reading {result['reading']}"
    treebank = (f"{args.treebank} mirrored (each sentence reversed, its "
                "gold tree mirrored)" if result.get("mirrored")
                else args.treebank)
    print(f"{treebank}: {result['sentences']} sentences scored "
          f"({result['skipped']} with fewer than 2 words skipped), {what}")
    rows = result.get("per_layer") or [result]

    def f1(value):
        return f"{value:.1f}" if math.isfinite(value) else "n/a"

    for row in rows:
        label = f"layer {row['layer']}" if "layer" in row else "trees"
        print(f"  {label}: sentence F1 {f1(row['sentence_f1'])}  "
              f"corpus F1 (micro-averaged spans) {f1(row['corpus_f1'])}")
    if args.model and result["sentences"]:
        print(f"  {result['sentences'] / seconds:.0f} sentences/s: "
              f"{seconds:.1f} s to load, read, parse and score them")


def choose_default(args):
    """`evaluate --choose-default`: the full table, and the best setting
    recorded in the run."""
    if not args.model:
        raise ValueError("--choose-default records a default in a model's "
                         f"run, received --baseline {args.baseline}")
    given = [flag for flag, value in (
        ("--layer", args.layer), ("--reading", args.reading),
        ("--tree-rule", args.tree_rule), ("--half", args.half),
        ("--fileids", args.fileids)) if value]
    if given:
        raise ValueError("--choose-default scores every reading, layer and "
                         "tree rule itself, received " + ", ".join(given))
    choice, table = runs.choose_reading(
        args.model, args.treebank, nltk_data=args.nltk_data,
        backward_model=args.backward_model, max_length=args.max_length,
        seed=args.seed, progress=not args.quiet)
    table = {**table, runs.DEFAULT_READING: choice, "model": model_name(args)}
    if untrained_of(args):
        table["untrained"] = untrained_of(args)
    if args.json:
        print(json.dumps(json_safe(table), allow_nan=False))
        return table
    for line in runs.format_readings_table(table, choice):
        print(line)
    if untrained_of(args):
        print(f"Best reading of {model_name(args)} untrained (seed "
              f"{untrained_of(args)['seed']}; nothing recorded in the run): "
              f"reading {choice['reading']}, layer {choice['layer']}, tree "
              f"rule {choice['tree_rule']} ({choice['metric']} "
              f"{choice[choice['metric']]:.1f} on the {choice['chosen_on']})")
        return table
    print(f"Default recorded in {args.model}/run.json: reading "
          f"{choice['reading']}, layer {choice['layer']}, tree rule "
          f"{choice['tree_rule']} ({choice['metric']} "
          f"{choice[choice['metric']]:.1f} on the {choice['chosen_on']})")
    return table
