"""`on-lstm`: train a language model, parse with it, evaluate its trees.

    on-lstm train --language zh [--corpus PATH] --output DIR [--with-lstm]
    on-lstm parse --model DIR [--layer K] [--format json|brackets|ascii] [SENTENCE ...]
    on-lstm evaluate (--model DIR | --baseline right) --treebank ptb [--max-length 10] [--json]
    on-lstm controls --model DIR --treebank sinica [--record FILE]
"""

import argparse
import sys

from on_lstm_keras import __version__
from on_lstm_keras.cli.controls import add_controls_arguments
from on_lstm_keras.cli.controls import run_controls
from on_lstm_keras.cli.evaluate import add_evaluate_arguments
from on_lstm_keras.cli.evaluate import run_evaluate
from on_lstm_keras.cli.parse import add_parse_arguments
from on_lstm_keras.cli.parse import run_parse
from on_lstm_keras.cli.train import add_train_arguments
from on_lstm_keras.cli.train import run_train
from on_lstm_keras.models.training import TrainingDiverged
from on_lstm_keras.utils.lock import DirectoryLocked

__all__ = ["build_parser", "main"]


def build_parser():
    parser = argparse.ArgumentParser(
        prog="on-lstm", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version",
                        version=f"on-lstm {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    add_train_arguments(commands.add_parser(
        "train", help="train an ON-LSTM language model on a corpus"))
    add_parse_arguments(commands.add_parser(
        "parse", help="print unsupervised trees of sentences"))
    add_evaluate_arguments(commands.add_parser(
        "evaluate", help="unlabeled F1 against a treebank"))
    add_controls_arguments(commands.add_parser(
        "controls", help="a run's trees beside its LSTM, untrained and "
        "trivial controls, on a treebank and its mirror"))
    return parser


def main(argv=None):
    """Runs `on-lstm`; returns the exit code: 0 done, 2 bad input (a flag,
    a file, a locked or unusable directory), 1 training diverged, 130
    interrupted. Errors print one line, no traceback."""
    args = build_parser().parse_args(argv)

    def error(message):
        print(f"on-lstm {args.command}: error: {message}", file=sys.stderr)

    try:
        if args.command == "train":
            run_train(args)
        elif args.command == "parse":
            run_parse(args)
        elif args.command == "controls":
            run_controls(args, ["on-lstm", *(sys.argv[1:] if argv is None
                                             else argv)])
        else:
            run_evaluate(args, ["on-lstm", *(sys.argv[1:] if argv is None
                                             else argv)])
    except TrainingDiverged as e:
        error(e)
        return 1
    except (FileNotFoundError, FileExistsError, ValueError, LookupError,
            DirectoryLocked) as e:
        error(e)
        return 2
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        error(f"{where}{e.strerror or e}")
        return 2
    except KeyboardInterrupt:
        return 130
    return 0
