"""Per-group leaderboards: the categories of a :class:`~bayesrank.model.categories.ByCategory` fit,
and (:func:`group_leaderboards`) any group × item scores, such as the clusters of random effects."""

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
    return group_leaderboards(tree, "category_score", "category", level)


def group_leaderboards(tree: xr.DataTree, name: str, dim: str, level: float = 0.95) -> pd.DataFrame:
    """One leaderboard per entry of the first axis of the (group × item) variable ``name``
    (categories, clusters), best first within each group.

    Returns
    -------
    DataFrame
        ``<dim>, rank, name, score, se, lower, upper, rank_lower, rank_upper``; ranks from the
        draws of the group's scores.
    """
    groups = [str(x) for x in tree["estimate"][dim].values]
    names = np.asarray([str(x) for x in tree["constant_data"]["item"].values], dtype=object)
    est, err = point(tree, name), se(tree, name)
    lower, upper = interval(tree, name, level)
    x = draws(tree, name)
    alpha = (1 - level) / 2
    frames = []
    for k, group in enumerate(groups):
        ranks = np.argsort(np.argsort(-x[:, k], axis=1, kind="stable"), axis=1) + 1
        order = np.argsort(-est[k], kind="stable")
        frames.append(pd.DataFrame({
            dim: group, "rank": np.arange(1, names.size + 1), "name": names[order],
            "score": est[k, order], "se": err[k, order], "lower": lower[k, order], "upper": upper[k, order],
            "rank_lower": np.quantile(ranks, alpha, axis=0, method="lower").astype(int)[order],
            "rank_upper": np.quantile(ranks, 1 - alpha, axis=0, method="higher").astype(int)[order],
        }))
    return pd.concat(frames, ignore_index=True)


__all__ = ["category_leaderboards", "group_leaderboards"]
