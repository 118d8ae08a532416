"""`on-lstm parse`: trees of sentences with a trained model."""

import argparse
import json
import os
import sys

from on_lstm_keras.cli._args import POSITIVE
from on_lstm_keras.parsing.trees import TREE_RULES

DIRECTION_CHOICES = ("forward", "backward", "both")
DIRECTION_HELP = (
    "which reading of the sentences the split scores come from: forward "
    "(the model left to right), backward (a model of reversed sentences) "
    "or both (the two, each z-scored per sentence, averaged); default: the "
    "run's recorded default (run.json parse_default), else the model's own "
    "direction")
BACKWARD_HELP = (
    "directory of the backward model's run, for --direction both or "
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
    from on_lstm_keras import parsing

    if distances:
        record = {"words": parse.words, "tree": parse.tree,
                  "distances": parse.layer_distances}
        if getattr(parse, "backward_layer_distances", None):
            record["backward_distances"] = parse.backward_layer_distances
            record["scores"] = parse.distances
        return json.dumps(record, ensure_ascii=False)
    if parse.tree is None:
        return "" if fmt != "json" else "null"
    if fmt == "json":
        return parsing.to_json(parse.tree)
    if fmt == "brackets":
        return parsing.to_brackets(parse.tree)
    return parsing.ascii_tree(parse.tree)


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


def add_direction_arguments(parser):
    """`--direction` and `--backward-model`."""
    parser.add_argument("--direction", choices=DIRECTION_CHOICES,
                        default=None, help=DIRECTION_HELP)
    parser.add_argument("--backward-model", default=None, metavar="DIR",
                        help=BACKWARD_HELP)


def check_direction_flags(args):
    """Raises a `ValueError` naming the flags when `--direction` and
    `--backward-model` do not go together."""
    if args.backward_model is not None and args.direction not in ("backward", "both"):
        raise ValueError(
            "--backward-model is read with --direction both or backward, "
            f"received --direction {args.direction or '(none)'} "
            f"--backward-model {args.backward_model}")
    if args.direction == "both" and args.backward_model is None and not (
            args.model and os.path.isfile(
                os.path.join(args.model, "backward", "run.json"))):
        raise ValueError(
            "--direction both needs a backward model: give --backward-model "
            f"DIR (or put its run in {os.path.join(args.model, 'backward')}),"
            " received --direction both without one")


def add_tree_rule_arguments(parser):
    """`--tree-rule`, and `--split`, its deprecated old name."""
    parser.add_argument("--tree-rule", choices=TREE_RULES,
                        default=None,
                        help=TREE_RULE_HELP + " (default: the run's "
                        "recorded default, else official)")
    parser.add_argument("--split", choices=TREE_RULES,
                        default=None, help="deprecated name of --tree-rule")


def tree_rule_of(args, command):
    """The tree rule of `--tree-rule`, or of the deprecated `--split` (with a
    line on stderr); `None` when neither is given (the run's recorded
    default, else official)."""
    if args.split is None:
        return args.tree_rule
    print(f"on-lstm {command}: warning: --split is deprecated; use "
          "--tree-rule", file=sys.stderr)
    if args.tree_rule not in (None, args.split):
        raise ValueError(
            "--split is the deprecated name of --tree-rule: give one, "
            f"received --tree-rule {args.tree_rule} --split {args.split}")
    return args.split


def add_parse_arguments(parser):
    parser.add_argument("--model", required=True, help="model directory")
    parser.add_argument("--layer", type=or_mean(POSITIVE), default=None,
                        help="layer number from 1, or 'mean' (the mean over "
                             "layers of the per-sentence z-scored distances; "
                             "default: the run's recorded default, else the "
                             "middle layer)")
    add_direction_arguments(parser)
    parser.add_argument("--format", choices=("json", "brackets", "ascii"),
                        default="json", help="output (default: %(default)s)")
    parser.add_argument("--distances", action="store_true",
                        help="with --format json: one object a sentence with "
                             "its words, tree and each layer's distances d_f")
    parser.add_argument("--presegmented", action="store_true",
                        help="words are separated by spaces; no jieba")
    add_tree_rule_arguments(parser)
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
        from on_lstm_keras.data.corpora import read_sentences

        return read_sentences(args.file, split=False)
    from on_lstm_keras.data.corpora import decode_lines

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # already text (e.g. replaced by a StringIO)
        return [line.rstrip("\r\n") for line in sys.stdin]
    return [line.rstrip("\r\n") for _, line in decode_lines(stream, "<stdin>")]


def run_parse(args):
    if args.distances and args.format != "json":
        raise ValueError("--distances needs --format json, received "
                         f"--format {args.format}")
    tree_rule = tree_rule_of(args, "parse")
    check_direction_flags(args)
    from on_lstm_keras.parsing import runs
    from on_lstm_keras.models.saving import load_run

    run = load_run(args.model)
    # No --direction: the run's recorded default may read both directions.
    direction, _, _ = runs.with_parse_default(run, args.direction)
    backward = runs.backward_of(args.model, args.backward_model, direction)
    sentences = read_input_sentences(args)
    for parse in runs.parse(run, sentences, layer=args.layer,
                            presegmented=args.presegmented,
                            tree_rule=tree_rule,
                            progress=not args.quiet,
                            direction=args.direction, backward_run=backward):
        print(format_parse(parse, args.format, args.distances), flush=True)
