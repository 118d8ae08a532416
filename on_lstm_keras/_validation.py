"""Argument checks shared by the package's layers, models and tools.

Every check raises a `ValueError` that names the argument and the value
received, so that a bad call is fixed from the message alone.
"""

import math
import numbers


def positive_int(name, value):
    """Returns `value` if it is an integer > 0, else raises `ValueError`."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or value <= 0
    ):
        raise ValueError(
            f"Argument `{name}` must be a positive integer, "
            f"received: {name}={value!r}"
        )
    return int(value)


def non_negative_int(name, value):
    """Returns `value` if it is an integer >= 0, else raises `ValueError`."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or value < 0
    ):
        raise ValueError(
            f"Argument `{name}` must be a non-negative integer, "
            f"received: {name}={value!r}"
        )
    return int(value)


def positive_float(name, value):
    """Returns `value` as a float if it is a finite number > 0, else raises."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(float(value))
        or value <= 0
    ):
        raise ValueError(
            f"Argument `{name}` must be a finite number > 0, "
            f"received: {name}={value!r}"
        )
    return float(value)


def rate(name, value):
    """Returns `value` as a float if it lies in [0, 1), else raises."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(
            f"Argument `{name}` must be a float in [0, 1), "
            f"received: {name}={value!r}"
        )
    if not 0.0 <= float(value) < 1.0:
        raise ValueError(
            f"Argument `{name}` must be in [0, 1), received: {name}={value!r}"
        )
    return float(value)


def choice(name, value, choices):
    """Returns `value` if it is one of `choices`, else raises."""
    if value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(
            f"Argument `{name}` must be one of {allowed}, "
            f"received: {name}={value!r}"
        )
    return value
