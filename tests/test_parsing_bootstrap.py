"""`parsing.paired_bootstrap` against what a paired difference's interval
must be: exact for a constant difference, the normal approximation's
`mean ± 1.96 sd / sqrt(n)` for many items, SciPy's percentile bootstrap
where SciPy is installed, and narrow where two systems share their
per-item difficulty."""

import numpy as np
import pytest

from on_lstm_keras.parsing import PairedDifference
from on_lstm_keras.parsing import paired_bootstrap


def test_a_constant_difference_has_no_spread():
    a = [10.0, 80.0, 33.0, 0.0]
    d = paired_bootstrap(a, [x - 2.5 for x in a], resamples=200)
    assert d == PairedDifference(2.5, 2.5, 2.5, 0.95, 200, 4)


def test_many_items_give_the_normal_approximation():
    rng = np.random.default_rng(1)
    n = 3000
    a = rng.normal(50.0, 20.0, n)
    b = a - rng.normal(1.0, 8.0, n)
    d = paired_bootstrap(a, b, resamples=4000, seed=3)
    diff = a - b
    half = 1.959964 * diff.std(ddof=1) / np.sqrt(n)
    assert d.difference == pytest.approx(diff.mean(), abs=1e-12)
    assert d.low == pytest.approx(diff.mean() - half, abs=0.06 * half)
    assert d.high == pytest.approx(diff.mean() + half, abs=0.06 * half)
    assert d.items == n


def test_pairing_keeps_the_shared_difficulty_out():
    """Sentences easy or hard for both (spread 30 points) move both means
    alike; the interval is as wide as the differences' spread (1 point),
    not the scores'."""
    rng = np.random.default_rng(2)
    difficulty = rng.normal(40.0, 30.0, 500)
    a = difficulty + rng.normal(0.5, 1.0, 500)
    b = difficulty
    d = paired_bootstrap(a, b, resamples=2000)
    assert d.high - d.low < 4 * 1.0 / np.sqrt(500) * 1.96
    assert d.low > 0


def test_scipy_percentile_bootstrap_agrees():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(4)
    a = rng.uniform(0, 100, 400)
    b = np.clip(a + rng.normal(-3, 15, 400), 0, 100)
    d = paired_bootstrap(a, b, resamples=20000, confidence=0.9, seed=5)
    ref = stats.bootstrap((a - b,), np.mean, n_resamples=20000,
                          confidence_level=0.9, method="percentile",
                          random_state=np.random.default_rng(6))
    width = ref.confidence_interval.high - ref.confidence_interval.low
    assert d.low == pytest.approx(ref.confidence_interval.low, abs=0.03 * width)
    assert d.high == pytest.approx(ref.confidence_interval.high, abs=0.03 * width)


def test_the_seed_fixes_the_interval():
    a, b = [1.0, 5.0, 2.0, 9.0, 4.0], [2.0, 3.0, 2.0, 4.0, 1.0]
    assert paired_bootstrap(a, b, seed=7) == paired_bootstrap(a, b, seed=7)
    first, other = paired_bootstrap(a, b, seed=7), paired_bootstrap(a, b, seed=8)
    assert (first.low, first.high) != (other.low, other.high)
    assert first.difference == other.difference == pytest.approx(1.8)


@pytest.mark.parametrize("a, b, kwargs, message", [
    ([1.0, 2.0], [1.0], {}, "same length"),
    ([], [], {}, "empty"),
    ([1.0, float("nan")], [1.0, 2.0], {}, "finite"),
    ([1.0], [1.0], {"confidence": 1.0}, "confidence=1.0"),
    ([1.0], [1.0], {"resamples": 0}, "resamples"),
    ([1.0], [1.0], {"seed": -1}, "seed"),
])
def test_bad_input_is_refused_by_name(a, b, kwargs, message):
    with pytest.raises(ValueError, match=message):
        paired_bootstrap(a, b, **kwargs)
