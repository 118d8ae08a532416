"""Argument types and flags shared by the `on-lstm` subcommands."""

import argparse


def layer_or_all(text):
    """`--layer` of `evaluate`: a layer number from 1, or `all`."""
    if text == "all":
        return text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a layer number (from 1) or 'all', received {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"must be a layer number (from 1) or 'all', received {value}")
    return value


def add_output_arguments(parser):
    """`--json`, `--record FILE` and `--quiet`: how `evaluate` and
    `controls` give their result."""
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object")
    parser.add_argument("--record", default=None, metavar="FILE",
                        help="write the result record to FILE: the object "
                             "--json prints, with the command, commit, "
                             "machine and library versions behind it")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bar (it shows only on a terminal)")
