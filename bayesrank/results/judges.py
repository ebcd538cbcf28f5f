"""The judges of a fit: discriminations γ_k with intervals (judge-aware fits), and how every
judge's verdicts split between the positions (any fit of data with judges or positions)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from bayesrank.data import positions
from bayesrank.errors import BayesrankError
from bayesrank.results.estimates import has_intervals, interval, interval_kind, point, se
from bayesrank.results.hja import judge_table
from bayesrank.results.io import data_of, framework_of


def judges(tree: xr.DataTree, level: float = 0.95) -> pd.DataFrame:
    """Judge discriminations γ_k.

    Returns
    -------
    DataFrame
        ``name, gamma, se, lower, upper, lower_log, upper_log``: MAP — the delta-method Wald
        interval of γ and the log-scale interval exp(log γ̂ ± z·se(log γ̂)) (for a positive
        γ); NUTS — posterior mean, sd and the equal-tailed interval (both interval columns
        equal, which a log scale leaves unchanged). HJA fits: :func:`bayesrank.results.hja.judge_table`
        (signed sensitivities and leverages). ``name, gamma`` for a fit without intervals.
    """
    framework = framework_of(tree)
    if framework.name == "hja":
        return judge_table(tree, level)
    if "gamma" not in framework.reported():
        raise BayesrankError(f"{framework.label} has no judge discriminations.")
    names = [str(x) for x in tree["constant_data"]["judge"].values]
    if not has_intervals(tree):
        return pd.DataFrame({"name": names, "gamma": point(tree, "gamma")})
    lower, upper = interval(tree, "gamma", level)
    table = pd.DataFrame({"name": names, "gamma": point(tree, "gamma"), "se": se(tree, "gamma"),
                          "lower": lower, "upper": upper})
    if interval_kind(tree) == "wald" and "log_gamma" in framework.reported():
        lo, hi = interval(tree, "log_gamma", level)
        table["lower_log"], table["upper_log"] = np.exp(lo), np.exp(hi)
    else:
        table["lower_log"], table["upper_log"] = lower, upper
    return table


def verdict_shares(tree: xr.DataTree) -> pd.DataFrame:
    """Per judge, the shares of its verdicts for the answer shown first (``a``), second (``b``)
    and ties, and whether it follows the position
    (:func:`bayesrank.data.positions.verdict_shares`, on the data as given to the fit)."""
    return positions.verdict_shares(data_of(tree))


def presentation_order(tree: xr.DataTree) -> positions.PresentationOrder | None:
    """How the fit's data ordered the answers and what a position preference does to each
    model's score (:func:`bayesrank.data.positions.presentation_order`); None without positions."""
    return positions.presentation_order(data_of(tree))


__all__ = ["judges", "presentation_order", "verdict_shares"]
