"""Per-category leaderboards of a :class:`~bayesrank.model.categories.ByCategory` fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from bayesrank.errors import BayesrankError
from bayesrank.results.estimates import check_level, draws, interval, point, se


def category_leaderboards(tree: xr.DataTree, level: float = 0.95) -> pd.DataFrame:
    """One leaderboard per category, partially pooled.

    Returns
    -------
    DataFrame
        ``category, rank, name, score, se, lower, upper, rank_lower, rank_upper``, best first
        within each category; ranks from the draws of the category's scores.
    """
    check_level(level)
    if "category_score" not in tree["estimate"]:
        raise BayesrankError("the fit has no per-category scores: fit the 'by-category' framework "
                             "to records read with by=COLUMN.")
    categories = [str(x) for x in tree["estimate"]["category"].values]
    names = np.asarray([str(x) for x in tree["constant_data"]["item"].values], dtype=object)
    est, err = point(tree, "category_score"), se(tree, "category_score")
    lower, upper = interval(tree, "category_score", level)
    x = draws(tree, "category_score")
    alpha = (1 - level) / 2
    frames = []
    for k, category in enumerate(categories):
        ranks = np.argsort(np.argsort(-x[:, k], axis=1, kind="stable"), axis=1) + 1
        order = np.argsort(-est[k], kind="stable")
        frames.append(pd.DataFrame({
            "category": category, "rank": np.arange(1, names.size + 1), "name": names[order],
            "score": est[k, order], "se": err[k, order], "lower": lower[k, order], "upper": upper[k, order],
            "rank_lower": np.quantile(ranks, alpha, axis=0, method="lower").astype(int)[order],
            "rank_upper": np.quantile(ranks, 1 - alpha, axis=0, method="higher").astype(int)[order],
        }))
    return pd.concat(frames, ignore_index=True)
