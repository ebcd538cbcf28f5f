"""The judges of a judge-aware fit: discriminations γ_k with intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from bayesrank.errors import BayesrankError
from bayesrank.results.estimates import has_intervals, interval, interval_kind, point, se
from bayesrank.results.hja import judge_table
from bayesrank.results.io import framework_of


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
