"""`on-lstm controls`: a run's trees beside its LSTM, its untrained
network and the trivial trees, on a treebank and its mirror."""

import json
import sys
import time

from on_lstm_keras import runs
from on_lstm_keras.runs.flags import NON_NEGATIVE
from on_lstm_keras.runs.flags import POSITIVE
from on_lstm_keras.runs.flags import float_in
from on_lstm_keras.runs.comparison import COLUMNS
from on_lstm_keras.runs.records import json_safe
from on_lstm_keras.cli._args import add_output_arguments


def add_controls_arguments(parser):
    parser.description = (
        "Score a run's trees beside its controls (Dyer, Melis and Blunsom "
        "2019): the same-size LSTM trained beside it (RUN/lstm, read by its "
        "forget gates), the same network untrained, and the trivial trees; "
        "on the dev and test halves of a treebank and of its mirror (each "
        "sentence reversed, its gold tree mirrored). Each model's reading "
        "and layer are chosen per tree rule on the dev half, as "
        "--choose-default does; the differences come with paired bootstrap "
        "intervals over sentences.")
    parser.add_argument("--model", required=True, help="the run directory")
    parser.add_argument("--treebank", choices=("ptb", "sinica"), required=True,
                        help="ptb: nltk's Penn Treebank sample; sinica: "
                             "nltk's Sinica treebank sample")
    parser.add_argument("--max-length", type=POSITIVE, default=None,
                        metavar="N", help="only sentences of at most N words "
                        "(10: WSJ10; default: every length)")
    parser.add_argument("--nltk-data", default=None,
                        help="folder with corpora/treebank or "
                             "corpora/sinica_treebank (default: nltk's path)")
    parser.add_argument("--untrained-seed", type=NON_NEGATIVE, default=None,
                        metavar="SEED", help="seed of the untrained weights "
                        "(default: the run's training seed)")
    parser.add_argument("--resamples", type=POSITIVE, default=10000,
                        help="bootstrap resamples (default: %(default)s)")
    parser.add_argument("--confidence", type=float_in(0.0, 1.0),
                        default=0.95, help="the intervals' coverage "
                        "(default: %(default)s)")
    parser.add_argument("--seed", type=NON_NEGATIVE, default=0,
                        help="seed of the random baseline and of the "
                             "bootstrap (default: 0)")
    add_output_arguments(parser)


def run_controls(args, argv=None):
    """`on-lstm controls`: `runs.compare_controls`, printed, and recorded
    with `--record`."""
    started = time.time()
    argv = ["on-lstm", *sys.argv[1:]] if argv is None else argv
    result = runs.compare_controls(
        args.model, args.treebank, max_length=args.max_length,
        nltk_data=args.nltk_data, untrained_seed=args.untrained_seed,
        resamples=args.resamples, confidence=args.confidence, seed=args.seed,
        progress=not args.quiet and sys.stderr.isatty())
    result = json_safe(result)
    if args.record:
        runs.write_record(args.record, runs.result_record(
            "controls", result, seed=result["run_seed"],
            seconds=time.time() - started, argv=argv))
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(format_controls(result))
    return result


def format_controls(result):
    """`compare_controls`' result as a text table: sentence F1 per row and
    column, then each difference with its interval."""
    where = result["treebank"] + (f", at most {result['max_length']} words"
                                  if result["max_length"] else "")
    sizes = ", ".join(f"{h} {v['sentences']}"
                      for h, v in result["halves"].items())
    lines = [f"{where}: sentences {sizes}; sentence F1 (mirrored: each "
             "sentence reversed, its gold tree mirrored)",
             f"{'':34}" + "".join(f"{c:>15}" for c in COLUMNS)]
    for row in result["rows"]:
        label = row["system"]
        if row["tree_rule"]:
            label += (f" {row['tree_rule']} ({row['reading']}, layer "
                      f"{row['layer']})")
        lines.append(f"{label:34}" + "".join(
            f"{row['cells'][c]['sentence_f1']:15.1f}" for c in COLUMNS))
    if "lstm" not in result["perplexity"]:
        lines.append("(no LSTM row: the run holds no LSTM in RUN/lstm; "
                     "train one with --resume --with-lstm)")
    confidence = result["differences"][0]["confidence"]
    lines.append(f"onlstm minus each control, with the {confidence:.0%} "
                 "paired bootstrap interval:")
    for d in result["differences"]:
        minus = ("best trivial tree (" + d["minus"] + ")"
                 if d["best_baseline"] else d["minus"])
        lines.append(f"  {d['tree_rule']:8} {d['column']:13} − {minus:28} "
                     f"{d['difference']:+6.1f} [{d['low']:+.1f}, "
                     f"{d['high']:+.1f}]")
    return "\n".join(lines)
