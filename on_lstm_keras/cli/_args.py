"""Argument types shared by the `on-lstm` subcommands."""

import argparse
import math
import os


def quiet_tensorflow():
    """Keeps TensorFlow's C++ info and warning logs (device probing, XLA)
    off the terminal, unless `TF_CPP_MIN_LOG_LEVEL` is set. Call it before
    the backend starts; TensorFlow still prints a few lines at import."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def int_at_least(minimum):
    """An argparse `type`: an integer >= `minimum`; argparse's message names
    the flag."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be an integer, received {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f"must be an integer >= {minimum}, received {value}")
        return value
    return parse


def float_in(low, high=math.inf, low_open=True, high_open=True):
    """An argparse `type`: a float in the given interval (finite)."""
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"must be a number, received {text!r}") from None
        ok = (math.isfinite(value)
              and (value > low if low_open else value >= low)
              and (value < high if high_open else value <= high))
        if not ok:
            where = (f"{'>' if low_open else '>='} {low:g}"
                     if high == math.inf else
                     f"in {'(' if low_open else '['}{low:g}, {high:g}"
                     f"{')' if high_open else ']'}")
            raise argparse.ArgumentTypeError(
                f"must be a finite number {where}, received {text!r}")
        return value
    return parse


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


POSITIVE = int_at_least(1)
RATE = float_in(0.0, 1.0, low_open=False)


def json_safe(value):
    """`value` with every NaN or inf float replaced by `None` (JSON null)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_safe(v) for v in value]
    return value
