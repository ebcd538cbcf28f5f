"""Leaderboards, score differences and rank distributions: pure functions of a fit's DataTree.

Ranks come from the fit's draws (posterior draws for NUTS, draws from the asymptotic normal
of the MLE for MAP), one rank vector per draw: memory grows with draws × items, never with
items².
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from scipy.stats import norm

from bayesrank.results.elo import Elo, elo as elo_view
from bayesrank.results.estimates import check_level, draws, interval, interval_kind, point, point_kind, se
from bayesrank.results.io import data_of, framework_of
from bayesrank.results.likelihood import predicted_rates


def items(tree: xr.DataTree) -> list[str]:
    """The items of the fit, in the model's order."""
    return [str(x) for x in tree["constant_data"]["item"].values]


def scores(tree: xr.DataTree) -> pd.Series:
    """Point scores: the MLE (MAP) or posterior mean (NUTS), indexed by item."""
    return pd.Series(point(tree, "score"), index=pd.Index(items(tree), name="name"), name="score")


def rank_draws(tree: xr.DataTree) -> np.ndarray:
    """``(draws, items)`` ranks, 1 = best, of each draw of the scores (NaN draws: no ranks)."""
    s = draws(tree, "score")
    order = np.argsort(-s, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, s.shape[1] + 1)[None, :], axis=1)
    return ranks


def identified(tree: xr.DataTree) -> bool:
    """Whether the fit has (finite) draws of the scores to rank."""
    return bool(np.all(np.isfinite(draws(tree, "score"))))


def rank_distribution(tree: xr.DataTree) -> pd.DataFrame:
    """P(rank = r) of every item (rows, best first) and rank (columns)."""
    ranks = rank_draws(tree)
    n_draws, m = ranks.shape
    item = np.broadcast_to(np.arange(m), ranks.shape)
    probs = np.bincount((item * m + ranks - 1).ravel(), minlength=m * m).reshape(m, m) / n_draws
    table = pd.DataFrame(probs, index=pd.Index(items(tree), name="name"), columns=pd.RangeIndex(1, m + 1, name="rank"))
    return table.loc[scores(tree).sort_values(ascending=False, kind="stable").index]


def leaderboard(tree: xr.DataTree, level: float = 0.95, elo: bool | Elo = False) -> pd.DataFrame:
    """The tidy leaderboard, best first.

    Parameters
    ----------
    tree : DataTree
        A fit.
    level : float
        Interval level: Wald intervals (MAP) or equal-tailed posterior intervals (NUTS) for
        scores; rank intervals from the draws.
    elo : bool or Elo
        Add ``elo``, ``elo_lower``, ``elo_upper``: 1000 + 400 · score / ln 10 (the Chatbot
        Arena convention) and its interval, or the scale, offset and anchor of an
        :class:`~bayesrank.results.elo.Elo` (:func:`~bayesrank.results.elo.elo`). The
        table's ``attrs["scale_note"]`` says what a point means for the framework.

    Returns
    -------
    DataFrame
        ``rank, name, score, se, lower, upper, rank_lower, rank_upper, n_comparisons``,
        observed rates ``win_rate, tie_rate, loss_rate`` and predicted
        ``pred_win_rate, pred_tie_rate, pred_loss_rate``. For NUTS ``se`` is the posterior
        standard deviation. Items without an estimate have no rank.
    """
    check_level(level)
    alpha = (1 - level) / 2
    lower, upper = interval(tree, "score", level)
    if identified(tree):
        ranks = rank_draws(tree)
        rank_lower = np.quantile(ranks, alpha, axis=0, method="lower").astype(int)
        rank_upper = np.quantile(ranks, 1 - alpha, axis=0, method="higher").astype(int)
    else:  # not identified: no rank intervals
        rank_lower = rank_upper = pd.array([pd.NA] * len(items(tree)), dtype="Int64")
    table = pd.DataFrame({
        "name": items(tree), "score": point(tree, "score"), "se": se(tree, "score"),
        "lower": lower, "upper": upper, "rank_lower": rank_lower, "rank_upper": rank_upper,
    })
    if elo is not False:
        ratings = elo_view(tree, level, elo if isinstance(elo, Elo) else None)
        table = table.join(ratings, on="name")
    observed = data_of(tree).item_totals().reindex(items(tree))
    n = observed["n_comparisons"].to_numpy()
    table["n_comparisons"] = n
    with np.errstate(invalid="ignore", divide="ignore"):
        for col, what in (("win_rate", "wins"), ("tie_rate", "ties"), ("loss_rate", "losses")):
            table[col] = observed[what].to_numpy() / n
    table = table.join(predicted_rates(tree).reset_index(drop=True))
    table = table.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
    rank = pd.array(np.arange(1, len(table) + 1), dtype="Int64")
    rank[table["score"].isna().to_numpy()] = pd.NA
    table.insert(0, "rank", rank)
    table.attrs["scale_note"] = framework_of(tree).scale_note
    return table


def differences(tree: xr.DataTree, level: float = 0.95) -> pd.DataFrame:
    """Score differences s_i − s_j for every pair i < j (in leaderboard order).

    Returns
    -------
    DataFrame
        ``item_i, item_j, difference, se, lower, upper, p_greater``: ``p_greater`` is
        P(s_i > s_j) (asymptotic normal for MAP, posterior for NUTS); the interval is Wald
        (MAP) or equal-tailed (NUTS).
    """
    check_level(level)
    names = items(tree)
    order = scores(tree).sort_values(ascending=False, kind="stable").index
    idx = np.array([names.index(x) for x in order])
    i, j = np.triu_indices(len(idx), k=1)
    i, j = idx[i], idx[j]
    alpha = (1 - level) / 2
    if interval_kind(tree) == "wald":
        s = point(tree, "score")
        C = tree["estimate"]["score_cov"].values
        diff = s[i] - s[j]
        err = np.sqrt(np.clip(C[i, i] + C[j, j] - 2 * C[i, j], 0, None))
        z = norm.ppf(1 - alpha)
        lower, upper = diff - z * err, diff + z * err
        with np.errstate(invalid="ignore", divide="ignore"):
            p = norm.cdf(diff / err)
    else:
        dd = draws(tree, "score")
        dd = dd[:, i] - dd[:, j]
        diff, err = dd.mean(axis=0), dd.std(axis=0, ddof=1)
        if point_kind(tree) == "mle":  # bootstrap replicates around the MLE
            s = point(tree, "score")
            diff = s[i] - s[j]
        lower, upper = np.quantile(dd, alpha, axis=0), np.quantile(dd, 1 - alpha, axis=0)
        p = (dd > 0).mean(axis=0)
    arr = np.asarray(names, dtype=object)
    return pd.DataFrame({"item_i": arr[i], "item_j": arr[j], "difference": diff, "se": err,
                         "lower": lower, "upper": upper, "p_greater": p})
