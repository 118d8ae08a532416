"""Argument types shared by the `on-lstm` subcommands."""

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
