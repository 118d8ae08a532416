"""The paired bootstrap: how sure a difference of two parsers' mean
sentence F1 on the same sentences is."""

from typing import NamedTuple

import numpy as np

from on_lstm_keras.utils import validation as check


class PairedDifference(NamedTuple):
    """`mean(a) − mean(b)` over the same items, with the percentile
    interval of that difference over bootstrap resamples of the items."""

    difference: float
    low: float
    high: float
    confidence: float
    resamples: int
    items: int


def paired_bootstrap(scores_a, scores_b, *, resamples=10000,
                     confidence=0.95, seed=0):
    """The difference of two systems' mean scores on the same items
    (sentences, test pairs), with its paired bootstrap interval.

    Each resample draws `len(scores_a)` items with replacement, the same
    items for both systems, and takes the difference of the two means
    over them; the interval holds the central `confidence` share of those
    differences (the percentile method). Pairing keeps what the two
    systems share (a sentence that is easy for both) out of the interval.

    Args:
        scores_a: One score per item of system A (e.g. sentence F1).
        scores_b: System B's scores of the same items, in the same order.
        resamples: How many resamples.
        confidence: The interval's coverage, in (0, 1).
        seed: Seed of the resampling.

    Returns:
        A `PairedDifference(difference, low, high, confidence, resamples,
        items)`; `difference` is `mean(scores_a) − mean(scores_b)`.

    Raises:
        ValueError: The score lists differ in length, are empty or not
            finite, or an argument is out of range.

    Example:

    >>> d = paired_bootstrap([60.0, 40.0, 50.0], [55.0, 35.0, 45.0])
    >>> d.difference, d.low, d.high  # A is 5 above B on every item
    (5.0, 5.0, 5.0)
    """
    a = np.asarray(scores_a, dtype="float64")
    b = np.asarray(scores_b, dtype="float64")
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(
            "Arguments `scores_a` and `scores_b` must be lists of the same "
            f"length, one score per item, received lengths {a.shape} and "
            f"{b.shape}")
    if a.size == 0:
        raise ValueError("Arguments `scores_a` and `scores_b` are empty: "
                         "there is nothing to resample")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("Arguments `scores_a` and `scores_b` must be "
                         "finite numbers, received a NaN or an infinity")
    resamples = check.positive_int("resamples", resamples)
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError("Argument `confidence` must be in (0, 1), received: "
                         f"confidence={confidence!r}")
    seed = check.non_negative_int("seed", seed)
    difference = a - b
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    # In blocks, so that memory stays small for long lists of items.
    block = max(1, 2_000_000 // difference.size)
    for start in range(0, resamples, block):
        count = min(block, resamples - start)
        picks = rng.integers(0, difference.size, size=(count, difference.size))
        means[start:start + count] = difference[picks].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return PairedDifference(float(difference.mean()), float(low), float(high),
                            confidence, resamples, int(difference.size))
