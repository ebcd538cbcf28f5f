"""Point values, uncertainties, intervals and draws of any model variable of a fit.

MAP and NUTS fits have the same groups; the only difference downstream code needs is how an
interval is made, which the ``estimate`` group states (``attrs["interval"]``): ``"wald"``
(point ± z·se: the MLE's model-based or sandwich interval) or ``"quantile"`` (equal-tailed, of
the draws: posterior draws, or bootstrap replicates of the MLE). :func:`interval` is the one
place that reads it. A MAP fit of point estimates only (``intervals="none"``) has
``"none"`` there, no standard errors and no draws: :func:`has_intervals` says so, and
:func:`se`, :func:`draws` and :func:`interval` raise :class:`~bayesrank.errors.BayesrankError`
saying how to refit. Which method made the uncertainty is ``attrs["interval_method"]``
(:func:`interval_method`), which dependence between comparisons it allows for,
``attrs["cluster"]`` (:func:`cluster`, :func:`dependence`), and what the point value is,
``attrs["point"]`` (:func:`point_kind`: the MLE, or the posterior mean).

**Enough draws.** An interval at level L made from draws (rank intervals; score intervals of
NUTS and bootstrap fits; rank sets and tie groups from draws) has ends at the (1 − L)/2 and
(1 + L)/2 quantiles of the draws. With fewer than :data:`MIN_TAIL_DRAWS` draws beyond each
end those quantiles are the extreme draws themselves — one draw gives [1, 1], a certainty
nothing supports — so such intervals need at least :func:`min_draws` draws (200 at 95 %)
and are missing (NaN / NA) with fewer; :func:`too_few_draws` says so in words.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import ndtri

from bayesrank.errors import BayesrankError


def point(tree: xr.DataTree, name: str) -> np.ndarray:
    """The MLE (MAP) or posterior mean (NUTS) of a model variable."""
    return _estimate(tree, name).values


#: What a fit of point estimates only answers when asked for uncertainty.
NO_INTERVALS = ("this fit has point estimates only (fitted with intervals='none'): no standard errors, intervals "
                "or draws; refit with intervals='wald', 'sandwich' or 'bootstrap' (the default: the model's).")


def has_intervals(tree: xr.DataTree) -> bool:
    """Whether the fit carries uncertainty (False for a MAP fit with ``intervals="none"``)."""
    return interval_kind(tree) != "none"


def se(tree: xr.DataTree, name: str) -> np.ndarray:
    """Delta-method standard error (MAP) or posterior sd (NUTS) of a model variable."""
    if not has_intervals(tree):
        raise BayesrankError(NO_INTERVALS)
    return _estimate(tree, f"{name}_se").values


def draws(tree: xr.DataTree, name: str) -> np.ndarray:
    """``(draws, *shape)``: posterior draws (NUTS) or draws from the asymptotic normal (MAP)."""
    if not has_intervals(tree):
        raise BayesrankError(NO_INTERVALS)
    post = tree["posterior"]
    if name not in post:
        raise BayesrankError(f"the fit has no variable {name!r}.")
    x = post[name].transpose("chain", "draw", ...).values
    return x.reshape(-1, *x.shape[2:])


#: Draws needed beyond each end of an interval made from draws (module docstring).
MIN_TAIL_DRAWS = 5


def min_draws(level: float) -> int:
    """The fewest draws an interval at ``level`` is made from: :data:`MIN_TAIL_DRAWS` beyond
    each end (200 at 0.95, 1000 at 0.99)."""
    check_level(level)
    return math.ceil(round(2 * MIN_TAIL_DRAWS / (1 - level), 9))


def n_draws(tree: xr.DataTree) -> int:
    """The fit's draws (chains × draws; 0 for a fit of point estimates only)."""
    if not has_intervals(tree) or "posterior" not in tree.children:
        return 0
    sizes = tree["posterior"].sizes
    return int(sizes.get("chain", 1) * sizes.get("draw", 0))


def enough_draws(tree: xr.DataTree, level: float = 0.95) -> bool:
    """Whether the fit has the :func:`min_draws` an interval at ``level`` needs."""
    return n_draws(tree) >= min_draws(level)


def too_few_draws(tree: xr.DataTree, level: float = 0.95) -> str | None:
    """The sentence saying which intervals are missing for want of draws, or None."""
    if not has_intervals(tree) or enough_draws(tree, level):
        return None
    which = "rank intervals" if interval_kind(tree) == "wald" else "intervals, rank intervals"
    return (f"{which} at {100 * level:g}% are not reported: they come from the fit's {n_draws(tree)} draws, and "
            f"an interval at that level needs at least {min_draws(level)} ({MIN_TAIL_DRAWS} beyond each end); "
            "fit with more draws (MAP: draws / --draws; NUTS: draws × chains; bootstrap: n_boot)")


def interval_kind(tree: xr.DataTree) -> str:
    """``"wald"``, ``"quantile"`` or ``"none"`` (point estimates only)."""
    return tree["estimate"].attrs["interval"]


def stored_covariance(tree: xr.DataTree, name: str) -> np.ndarray | None:
    """The Wald covariance ``name`` (``theta_cov``, ``score_cov``, …) a MAP fit stores, or None
    where contrasts come from the draws instead: quantile intervals (NUTS, bootstrap), or a fit
    of many items that keeps its covariance as a factor (``estimate.attrs["covariance_stored"]
    = 0``, :data:`bayesrank.inference.map.DENSE_COVARIANCE_MAX`) — its draws are θ̂ + F z from
    that factor, so contrasts are the asymptotic normal's, up to Monte-Carlo error."""
    estimate = tree["estimate"]
    if interval_kind(tree) != "wald" or name not in estimate:
        return None
    return estimate[name].values


def interval_method(tree: xr.DataTree) -> str:
    """``"wald"``, ``"sandwich"``, ``"bootstrap"``, ``"none"``, ``"laplace"`` (MAP; random effects) or
    ``"posterior"`` (NUTS)."""
    attrs = tree["estimate"].attrs
    return attrs.get("interval_method", "wald" if attrs["interval"] == "wald" else "posterior")


def cluster(tree: xr.DataTree) -> tuple[str, ...]:
    """The cluster columns whose dependence the intervals allow for (``estimate.attrs["cluster"]``):
    empty where the comparisons are treated as independent; the clusters of a cluster-robust
    sandwich or cluster bootstrap, or the column of random effects."""
    return tuple(json.loads(tree["estimate"].attrs.get("cluster", "[]")))


def dependence(tree: xr.DataTree) -> str:
    """Which dependence the intervals allow for, in words (leaderboards, reports)."""
    names = cluster(tree)
    if not names:
        return "comparisons treated as independent"
    listed = " and ".join(repr(n) for n in names)
    if interval_method(tree) in ("laplace", "posterior"):
        return f"dependence within clusters of {listed} modelled by random effects"
    return f"allowing for dependence within clusters of {listed}"


def point_kind(tree: xr.DataTree) -> str:
    """``"mle"`` (a MAP fit: every point value is at the MLE) or ``"posterior mean"`` (NUTS)."""
    attrs = tree["estimate"].attrs
    return attrs.get("point", "mle" if attrs["interval"] == "wald" else "posterior mean")


def interval(tree: xr.DataTree, name: str, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of a ``level`` interval for every entry of a model variable."""
    check_level(level)
    alpha = (1 - level) / 2
    if interval_kind(tree) == "wald":
        z = ndtri(1 - alpha)
        p, s = point(tree, name), se(tree, name)
        return p - z * s, p + z * s
    x = draws(tree, name)
    if not enough_draws(tree, level):
        missing = np.full(x.shape[1:], np.nan)
        return missing, missing.copy()
    return np.quantile(x, alpha, axis=0), np.quantile(x, 1 - alpha, axis=0)


def parameters(tree: xr.DataTree, names, level: float = 0.95) -> pd.DataFrame:
    """Estimate, uncertainty and interval of every entry of the named variables.

    Returns
    -------
    DataFrame
        ``parameter, index, estimate, se, lower, upper`` (``se``: standard error for MAP,
        posterior sd for NUTS); ``parameter, index, estimate`` for a fit without intervals.
    """
    if not has_intervals(tree):
        rows = [{"parameter": name, "index": k, "estimate": v} for name in names
                for k, v in enumerate(np.ravel(point(tree, name)))]
        return pd.DataFrame(rows, columns=["parameter", "index", "estimate"])
    rows = []
    for name in names:
        est, err = np.ravel(point(tree, name)), np.ravel(se(tree, name))
        lower, upper = (np.ravel(b) for b in interval(tree, name, level))
        for k in range(est.size):
            rows.append({"parameter": name, "index": k, "estimate": est[k], "se": err[k],
                         "lower": lower[k], "upper": upper[k]})
    return pd.DataFrame(rows, columns=["parameter", "index", "estimate", "se", "lower", "upper"])


def _estimate(tree, name):
    est = tree["estimate"]
    if name not in est:
        raise BayesrankError(f"the fit has no variable {name!r}.")
    return est[name]


def check_level(level: float) -> None:
    """Refuse an interval level outside (0, 1)."""
    if not 0 < level < 1:
        raise BayesrankError(f"the interval level must be in (0, 1), got {level}.")


__all__ = [
    "MIN_TAIL_DRAWS", "NO_INTERVALS", "check_level", "cluster", "dependence", "draws", "enough_draws",
    "has_intervals", "interval", "interval_kind", "interval_method", "min_draws", "n_draws", "parameters", "point",
    "point_kind", "se", "stored_covariance", "too_few_draws"
]
