"""Argument types shared by the `on-lstm` subcommands."""

import argparse
import math


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


def json_safe(value):
    """`value` with every NaN or inf float replaced by `None` (JSON null)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value
