"""The weak-identification rule: equal-tailed intervals of log-scale draws, named when their
natural-scale ends differ by a factor of ten or more."""

from __future__ import annotations

import numpy as np

from bayesrank.model.weak import WIDE_FACTOR, log_intervals, wide


def test_intervals_are_the_draws_equal_tailed_quantiles():
    rng = np.random.default_rng(0)
    x = rng.normal([0.0, 1.0, -2.0], [0.1, 0.5, 2.0], size=(4000, 3))
    lo, hi = log_intervals({"log_gamma": x}, "log_gamma", level=0.9)
    np.testing.assert_allclose(lo, np.quantile(x, 0.05, axis=0), rtol=1e-12)
    np.testing.assert_allclose(hi, np.quantile(x, 0.95, axis=0), rtol=1e-12)


def test_an_order_of_magnitude_is_the_line():
    span = np.log(WIDE_FACTOR)
    lo = np.zeros(4)
    hi = np.array([0.5 * span, span - 1e-9, span, 3 * span])
    np.testing.assert_array_equal(wide(lo, hi), [False, False, True, True])
    assert not wide(np.array([np.nan]), np.array([10.0]))[0]  # no interval: not judged here


def test_no_draws_no_judgement():
    assert log_intervals({}, "beta") is None
    assert log_intervals({"beta": np.full((100, 3), np.nan)}, "beta") is None
    assert log_intervals({"beta": np.zeros((1, 3))}, "beta") is None
