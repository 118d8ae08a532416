"""`on-lstm parse`: trees of sentences with a trained model."""

import argparse
import json
import os
import sys

from on_lstm_keras import runs
from on_lstm_keras.runs.flags import POSITIVE
from on_lstm_keras.data.corpora import decode_lines
from on_lstm_keras.data.corpora import read_sentences
from on_lstm_keras.models.saving import load_run
from on_lstm_keras.parsing import READINGS
from on_lstm_keras.parsing import TREE_RULES
from on_lstm_keras.parsing import ascii_tree
from on_lstm_keras.parsing import to_brackets
from on_lstm_keras.parsing import to_json
from on_lstm_keras.runs.layout import BACKWARD_DIR
from on_lstm_keras.runs.parse import lstm_has_no_backward

READING_HELP = (
    "where the split scores come from: forward (the model left to right), "
    "backward (a model of reversed sentences) or both (the two, each "
    "z-scored per sentence, averaged); default: the run's recorded default "
    "(run.json default_reading), else the model's own direction")
BACKWARD_HELP = (
    "directory of the backward model's run, for --reading both or "
    "backward (default: MODEL/backward if it holds a run)")

TREE_RULE_HELP = (
    "how a tree is built from the distances: 'official' (the ON-LSTM "
    "code's rule: the word at the largest distance joins the words to its "
    "right first) or 'plain' (split just before that word)")


def format_parse(parse, fmt, distances=False):
    """One output line for one `Parse`.

    With `distances` (JSON only): an object with the words, the tree and
    each layer's `d_f` (`{"words": ..., "tree": ..., "distances": [[layer
    1's d_f per word], ...]}`), plus `"backward_distances"` (the backward
    model's, in input order) and `"scores"` (what the tree was built from)
    when a backward model was read.
    """
    if distances:
        record = {"words": parse.words, "tree": parse.tree,
                  "distances": parse.layer_distances}
        if parse.backward_layer_distances:
            record["backward_distances"] = parse.backward_layer_distances
            record["scores"] = parse.split_scores
        return json.dumps(record, ensure_ascii=False)
    if parse.tree is None:
        return "" if fmt != "json" else "null"
    if fmt == "json":
        return to_json(parse.tree)
    if fmt == "brackets":
        return to_brackets(parse.tree)
    return ascii_tree(parse.tree)


def or_mean(layer_type):
    """An argparse `type` for `--layer`: `mean` (the mean over layers), or
    what `layer_type` takes (its message, with `mean` named, otherwise)."""
    def parse(text):
        if text == "mean":
            return text
        try:
            return layer_type(text)
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError(
                f"{e} (or 'mean', the mean over layers)") from None
    return parse


def add_reading_arguments(parser):
    """`--reading` and `--backward-model`."""
    parser.add_argument("--reading", choices=READINGS, default=None,
                        help=READING_HELP)
    parser.add_argument("--backward-model", default=None, metavar="DIR",
                        help=BACKWARD_HELP)


def check_reading_flags(args):
    """Raises a `ValueError` naming the flags when `--reading` and
    `--backward-model` do not go together."""
    if args.backward_model is not None and args.reading not in ("backward", "both"):
        raise ValueError(
            "--backward-model is read with --reading both or backward, "
            f"received --reading {args.reading or '(none)'} "
            f"--backward-model {args.backward_model}")
    if args.reading == "both" and args.backward_model is None and not (
            args.model and os.path.isfile(
                os.path.join(args.model, BACKWARD_DIR, "run.json"))):
        raise ValueError(
            "--reading both needs a backward model: give --backward-model "
            f"DIR (or put its run in {os.path.join(args.model, BACKWARD_DIR)}),"
            " received --reading both without one."
            + (lstm_has_no_backward(args.model) if args.model else ""))


def add_tree_rule_argument(parser):
    """`--tree-rule`."""
    parser.add_argument("--tree-rule", choices=TREE_RULES,
                        default=None,
                        help=TREE_RULE_HELP + " (default: the run's "
                        "recorded default, else official)")


def add_parse_arguments(parser):
    parser.add_argument("--model", required=True, help="model directory")
    parser.add_argument("--layer", type=or_mean(POSITIVE), default=None,
                        help="layer number from 1, or 'mean' (the mean over "
                             "layers of the per-sentence z-scored distances; "
                             "default: the run's recorded default, else the "
                             "middle layer)")
    add_reading_arguments(parser)
    parser.add_argument("--format", choices=("json", "brackets", "ascii"),
                        default="json", help="output (default: %(default)s)")
    parser.add_argument("--distances", action="store_true",
                        help="with --format json: one object a sentence with "
                             "its words, tree and each layer's distances d_f")
    parser.add_argument("--presegmented", action="store_true",
                        help="words are separated by spaces; no jieba")
    add_tree_rule_argument(parser)
    parser.add_argument("--file", default=None,
                        help="read sentences from a UTF-8 file, one a line")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bar (it shows only on a terminal)")
    parser.add_argument("sentences", nargs="*",
                        help="sentences (default: one a line on stdin)")


def read_input_sentences(args):
    if args.sentences:
        return list(args.sentences)
    if args.file:
        return read_sentences(args.file, split=False)
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # already text (e.g. replaced by a StringIO)
        return [line.rstrip("\r\n") for line in sys.stdin]
    return [line.rstrip("\r\n") for _, line in decode_lines(stream, "<stdin>")]


def run_parse(args):
    if args.distances and args.format != "json":
        raise ValueError("--distances needs --format json, received "
                         f"--format {args.format}")
    check_reading_flags(args)
    run = load_run(args.model)
    # No --reading: the run's recorded default may read the backward model.
    reading = args.reading or (runs.saved_reading(run) or {}).get("reading")
    backward = runs.backward_of(args.model, args.backward_model, reading)
    sentences = read_input_sentences(args)
    for parse in runs.parse(run, sentences, reading=args.reading,
                            layer=args.layer, tree_rule=args.tree_rule,
                            presegmented=args.presegmented,
                            backward_run=backward, progress=not args.quiet):
        print(format_parse(parse, args.format, args.distances), flush=True)
