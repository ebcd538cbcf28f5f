"""Estimates the data barely pin down, found from their draws and said in words.

A positive parameter γ = e^α estimated on its log scale is *weakly identified* when the
interval of α is so wide that the interval of γ spans an order of magnitude or more: its upper
end is at least :data:`WIDE_FACTOR` times its lower end. Such an interval carries little more
than the sign of log γ (often not even that), and a Wald interval on γ's own scale — symmetric
about the estimate — then runs below zero, which no γ can. A coefficient β that multiplies a
covariate inside an exponential, γ(z) = e^{α + β z}, is *not identified* in the same sense when
the factor e^{β} by which one unit of z changes γ is unknown within :data:`WIDE_FACTOR`.

The intervals are the equal-tailed ones of the draws the fit already made (the asymptotic
normal or the bootstrap replicates of a MAP fit, the posterior of a NUTS fit), so the rule
reads the same uncertainty the fit reports; for NUTS the prior bounds how wide they can be, and
a coefficient the data leave alone shows the prior's width, which the rule names too.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

#: Upper end over lower end (on the natural scale) at which an interval of a log-scale
#: parameter spans an order of magnitude: the parameter is named as weakly identified.
WIDE_FACTOR = 10.0

#: Probability of the intervals the rule reads (the fit's default reporting level).
LEVEL = 0.95


def log_intervals(draws: Mapping[str, np.ndarray], name: str, level: float = LEVEL
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """Equal-tailed ``level`` interval of every element of the log-scale variable ``name`` from
    its draws (leading axis = draw); None when the fit has no finite draws of it (no intervals,
    or a variable the fit does not have)."""
    if name not in draws:
        return None
    x = np.asarray(draws[name], dtype=float)
    if x.ndim == 0 or x.shape[0] < 2 or not np.isfinite(x).any():
        return None
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        lo, hi = np.nanquantile(x, [tail, 1.0 - tail], axis=0)
    return lo, hi


def wide(lo: np.ndarray, hi: np.ndarray, factor: float = WIDE_FACTOR) -> np.ndarray:
    """Whether each log-scale interval [lo, hi] spans a factor of at least ``factor``; an interval
    the draws could not make (not finite) is not judged here — the fit says why elsewhere."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(lo) & np.isfinite(hi) & (hi - lo >= np.log(factor))


__all__ = ["LEVEL", "WIDE_FACTOR", "log_intervals", "wide"]
