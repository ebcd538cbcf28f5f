"""Leaderboards, score differences and rank distributions: pure functions of a fit's DataTree.

Ranks come from the fit's draws (posterior draws for NUTS, draws from the asymptotic normal
of the MLE for MAP), one rank vector per draw: memory grows with draws × items, never with
items².
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import ndtr, ndtri

from bayesrank.errors import BayesrankError
from bayesrank.results.elo import Elo, elo as elo_view
from bayesrank.results.estimates import (
    check_level,
    cluster,
    dependence,
    draws,
    enough_draws,
    has_intervals,
    interval,
    interval_method,
    point,
    se,
    stored_covariance,
    too_few_draws,
)
from bayesrank.results.io import data_of, framework_of
from bayesrank.results.likelihood import predicted_rates
from bayesrank.results.provisional import provisional


def items(tree: xr.DataTree) -> list[str]:
    """The items of the fit, in the model's order."""
    return [str(x) for x in tree["constant_data"]["item"].values]


def scores(tree: xr.DataTree) -> pd.Series:
    """Point scores: the MLE (MAP) or posterior mean (NUTS), indexed by item."""
    return pd.Series(point(tree, "score"), index=pd.Index(items(tree), name="name"), name="score")


def rank_draws(tree: xr.DataTree) -> np.ndarray:
    """``(draws, items)`` ranks, 1 = best, of each draw of the scores (NaN draws: no ranks)."""
    return ranks_of(draws(tree, "score"))


def ranks_of(s: np.ndarray) -> np.ndarray:
    """``(draws, items)`` ranks, 1 = best, of each row of scores. Equal scores share the best rank
    of their tie (competition ranking: 1, 2, 2, 4), so no order is made up between items that the
    scores do not separate."""
    s = np.asarray(s, dtype=float)
    order = np.argsort(-s, axis=1, kind="stable")
    ordered = np.take_along_axis(s, order, axis=1)
    starts = np.ones(ordered.shape, dtype=bool)   # where a new score starts in each sorted row
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    best = np.maximum.accumulate(np.where(starts, np.arange(1, s.shape[1] + 1), 0), axis=1)
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, best, axis=1)
    return ranks


def rank_intervals(ranks: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Equal-tailed ``level`` intervals of each item's rank from ``(draws, items)`` ranks (the
    lower quantile rounded down, the upper one up)."""
    alpha = (1 - level) / 2
    return (np.quantile(ranks, alpha, axis=0, method="lower").astype(int),
            np.quantile(ranks, 1 - alpha, axis=0, method="higher").astype(int))


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
        table's ``attrs["scale_note"]`` says what a point means for the framework, and
        ``attrs["interval_method"]``, ``attrs["cluster"]`` and ``attrs["dependence"]`` how the
        intervals were made and which dependence between comparisons they allow for.

    Returns
    -------
    DataFrame
        ``rank, name, score, se, lower, upper, rank_lower, rank_upper, provisional,
        n_comparisons``, observed rates ``win_rate, tie_rate, loss_rate`` and predicted
        ``pred_win_rate, pred_tie_rate, pred_loss_rate`` (with ties counted as half a win, the
        predicted win rate is that of wins plus half the ties, and no tie rate is predicted:
        :func:`~bayesrank.results.likelihood.predicted_rates`). For NUTS ``se`` is the posterior
        standard deviation. ``provisional`` marks a rank interval wider than
        :func:`~bayesrank.results.provisional.max_span` ranks
        (:func:`bayesrank.provisional_rows` says which battles would settle it). Items without
        an estimate have no rank; a fit with fewer draws than an interval at ``level`` needs
        has no rank intervals and no ``provisional`` flags (NA;
        :func:`~bayesrank.results.estimates.too_few_draws` says why). A fit without intervals
        (``intervals="none"``) has no ``se, lower, upper, rank_lower, rank_upper, provisional``
        columns (nor ``elo_lower, elo_upper``).
    """
    check_level(level)
    if not has_intervals(tree):
        return _finish(tree, pd.DataFrame({"name": items(tree), "score": point(tree, "score")}), level, elo)
    lower, upper = interval(tree, "score", level)
    if identified(tree) and enough_draws(tree, level):
        rank_lower, rank_upper = rank_intervals(rank_draws(tree), level)
        flags = provisional(rank_lower, rank_upper)
    else:  # not identified, or too few draws: no rank intervals
        rank_lower = rank_upper = pd.array([pd.NA] * len(items(tree)), dtype="Int64")
        flags = pd.array([pd.NA] * len(items(tree)), dtype="boolean")
    table = pd.DataFrame({
        "name": items(tree), "score": point(tree, "score"), "se": se(tree, "score"),
        "lower": lower, "upper": upper, "rank_lower": rank_lower, "rank_upper": rank_upper, "provisional": flags,
    })
    return _finish(tree, table, level, elo)


def _finish(tree: xr.DataTree, table: pd.DataFrame, level: float, elo: bool | Elo) -> pd.DataFrame:
    """The leaderboard's Elo ratings, observed and predicted rates, order and ranks."""
    if elo is not False:
        ratings = elo_view(tree, level, elo if isinstance(elo, Elo) else None)
        table = table.join(ratings.drop(columns="rank"), on="name")
    observed = data_of(tree).item_totals().reindex(items(tree))
    n = observed["n_comparisons"].to_numpy()
    table["n_comparisons"] = n.astype(np.int64) if np.all(n == np.round(n)) else n  # counts are whole numbers
    with np.errstate(invalid="ignore", divide="ignore"):
        for col, what in (("win_rate", "wins"), ("tie_rate", "ties"), ("loss_rate", "losses")):
            table[col] = observed[what].to_numpy() / n
    table = table.join(predicted_rates(tree).reset_index(drop=True))
    table = table.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
    rank = pd.array(ranks_of(table["score"].to_numpy(dtype=float)[None])[0], dtype="Int64")
    rank[table["score"].isna().to_numpy()] = pd.NA
    table.insert(0, "rank", rank)
    table.attrs["scale_note"] = framework_of(tree).scale_note
    table.attrs["interval_method"] = interval_method(tree)
    table.attrs["cluster"] = list(cluster(tree))
    table.attrs["dependence"] = dependence(tree)
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
    cov = stored_covariance(tree, "score_cov")
    return pairwise_contrasts(items(tree), point(tree, "score"), cov,
                              None if cov is not None else draws(tree, "score"), level)


def pairwise_contrasts(names, value: np.ndarray, cov: np.ndarray | None, sample: np.ndarray | None,
                       level: float = 0.95) -> pd.DataFrame:
    """x_i − x_j for every pair i < j of a vector x, in decreasing order of x.

    Parameters
    ----------
    names : sequence of str
    value : ndarray
        Point values of x (the MLE or posterior mean).
    cov : ndarray, optional
        Covariance of x̂ (Wald: the delta method); otherwise ``sample``.
    sample : ndarray, optional
        ``(draws, len(x))`` draws of x (equal-tailed intervals).
    level : float

    Returns
    -------
    DataFrame
        ``item_i, item_j, difference, se, lower, upper, p_greater`` (P(x_i > x_j): asymptotic
        normal, or the share of draws).
    """
    order = np.argsort(-np.asarray(value, dtype=float), kind="stable")
    i, j = np.triu_indices(len(order), k=1)
    i, j = order[i], order[j]
    alpha = (1 - level) / 2
    if cov is not None:
        diff = value[i] - value[j]
        err = np.sqrt(np.clip(cov[i, i] + cov[j, j] - 2 * cov[i, j], 0, None))
        z = ndtri(1 - alpha)
        lower, upper = diff - z * err, diff + z * err
        with np.errstate(invalid="ignore", divide="ignore"):
            p = ndtr(diff / err)
    else:
        dd = sample[:, i] - sample[:, j]
        # the point values' difference: the posterior mean's for NUTS draws, the MLE's for
        # bootstrap replicates (whose mean is not the estimate)
        diff, err = value[i] - value[j], dd.std(axis=0, ddof=1)
        lower, upper = np.quantile(dd, alpha, axis=0), np.quantile(dd, 1 - alpha, axis=0)
        p = (dd > 0).mean(axis=0)
    arr = np.asarray(names, dtype=object)
    return pd.DataFrame({"item_i": arr[i], "item_j": arr[j], "difference": diff, "se": err,
                         "lower": lower, "upper": upper, "p_greater": p})


def rank_probabilities(tree: xr.DataTree, ks=(1, 3, 5, 10)) -> pd.DataFrame:
    """P(rank ≤ k) of every item for each k, best first (from the fit's draws).

    Returns
    -------
    DataFrame
        Index ``name``; one column ``p_top_<k>`` per k.
    """
    ranks = rank_draws(tree)
    table = pd.DataFrame({f"p_top_{k}": (ranks <= k).mean(axis=0) for k in ks},
                         index=pd.Index(items(tree), name="name"))
    return table.loc[scores(tree).sort_values(ascending=False, kind="stable").index]


def top_set(tree: xr.DataTree, k: int = 1, level: float = 0.95) -> list[str]:
    """A credible top-k set: the smallest set, built in order of P(rank ≤ k), that contains
    every one of the top k items in at least ``level`` of the draws.

    For MAP fits the draws are those of the asymptotic normal, so the set is a confidence
    statement of the same level under the normal approximation.
    """
    check_level(level)
    if has_intervals(tree) and not enough_draws(tree, level):
        raise BayesrankError(f"no top-{k} set: {too_few_draws(tree, level)}.")
    ranks = rank_draws(tree)
    inside = ranks <= k                                   # (draws, items): item in that draw's top k
    order = np.argsort(-inside.mean(axis=0), kind="stable")
    names = items(tree)
    chosen = np.zeros(inside.shape[1], dtype=bool)
    for i in order:
        chosen[i] = True
        if np.mean(~np.any(inside & ~chosen, axis=1)) >= level:
            break
    return [names[i] for i in order if chosen[i]]


def tie_groups(tree: xr.DataTree, level: float = 0.95) -> pd.DataFrame:
    """Groups of items that the data cannot order at the stated level, best first.

    Walking down the leaderboard, an item starts a new group when it is ordered below the
    current group's leader with probability at least ``level`` (P(s_leader > s_item), from
    the asymptotic normal for MAP and from the posterior for NUTS); otherwise it is tied with
    the group.

    Returns
    -------
    DataFrame
        ``rank, name, group`` (groups numbered 1, 2, … from the top; NA when the fit has
        fewer draws than ``level`` needs).
    """
    check_level(level)
    order = scores(tree).sort_values(ascending=False, kind="stable").index
    names = items(tree)
    idx = [names.index(x) for x in order]
    if has_intervals(tree) and not enough_draws(tree, level):
        return pd.DataFrame({"rank": np.arange(1, len(idx) + 1), "name": list(order),
                             "group": pd.array([pd.NA] * len(idx), dtype="Int64")})
    s = draws(tree, "score")
    groups, leader, group = [], None, 0
    for i in idx:
        if leader is None or np.mean(s[:, leader] > s[:, i]) >= level:
            leader, group = i, group + 1
        groups.append(group)
    return pd.DataFrame({"rank": np.arange(1, len(idx) + 1), "name": list(order), "group": groups})


__all__ = [
    "differences", "identified", "items", "leaderboard", "pairwise_contrasts", "rank_distribution", "rank_draws",
    "rank_intervals", "rank_probabilities", "ranks_of", "scores", "tie_groups", "top_set"
]
