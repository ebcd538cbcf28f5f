"""Rank sets with stated coverage: simultaneous confidence (MAP) or credible (NUTS) sets for
every item's rank, and the top-k set.

One-at-a-time rank intervals (``rank_lower``/``rank_upper`` of the leaderboard) cover each
item's rank with the stated probability, but not all ranks at once. Here the statement is
simultaneous: with probability at least ``level``, *every* item's true rank lies in its set.

Method (Klein, Wright & Wieczorek 2020; Al Mohamad et al. 2022): bands for all m(m − 1)/2
score differences that hold simultaneously, |d_ij − d̂_ij| ≤ c·σ_ij for every pair, with c
the ``level`` quantile of max_ij |d_ij − d̂_ij| / σ_ij under the fit's uncertainty — the
asymptotic normal (MAP Wald or sandwich: simulated from the score covariance), the
bootstrap replicates or the posterior draws (NUTS: a simultaneous credible band). Item i
is then surely above j when d̂_ij − c·σ_ij > 0, and its rank set is

    [1 + #{j surely above i},  m − #{j surely below i}].

On the event that every band holds, every true rank is in its set, so the sets cover
simultaneously with probability ≥ ``level``. The top-k set {i : rank set of i starts at ≤ k}
contains the true top k with the same probability.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from bayesrank.results.estimates import check_level, draws, enough_draws, has_intervals, point, stored_covariance

#: Draws from the asymptotic normal for the critical value of Wald and sandwich fits.
N_SIMULATIONS = 4000
#: Entries (draws × pairs) of one block of the max statistic: bounds its memory (8 bytes each)
#: whatever the number of items; 2,000 items have two million pairs.
BLOCK_ENTRIES = 2**22


def _max_statistic(deviations: np.ndarray, sigma: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """max over pairs of |δ_i − δ_j| / σ_ij for each row of score deviations δ, over blocks of
    draws and of pairs (:data:`BLOCK_ENTRIES`)."""
    pairs = max(1, min(len(i), BLOCK_ENTRIES))
    rows = max(1, BLOCK_ENTRIES // pairs)
    out = np.full(len(deviations), -np.inf)
    for start in range(0, len(deviations), rows):
        for first in range(0, len(i), pairs):
            at = slice(first, first + pairs)
            out[start:start + rows] = np.maximum(out[start:start + rows],
                                                 _block_max(deviations[start:start + rows], sigma[at], i[at], j[at]))
    return out


def _block_max(deviations: np.ndarray, sigma: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """One block of :func:`_max_statistic`."""
    return np.max(np.abs(deviations[:, i] - deviations[:, j]) / sigma, axis=1)


def critical_value(tree: xr.DataTree, level: float = 0.95, random_seed: int = 0) -> tuple[float, np.ndarray]:
    """The simultaneous critical value c and the standard errors σ_ij of all differences
    (pairs i < j in the model's item order, ``np.triu_indices``)."""
    s = point(tree, "score")
    m = s.size
    i, j = np.triu_indices(m, k=1)
    C = stored_covariance(tree, "score_cov")
    if C is not None:
        sigma = np.sqrt(np.clip(C[i, i] + C[j, j] - 2 * C[i, j], 1e-300, None))
        w, V = np.linalg.eigh((C + C.T) / 2)
        factor = V * np.sqrt(np.clip(w, 0, None))
        deviations = np.random.default_rng(random_seed).standard_normal((N_SIMULATIONS, m)) @ factor.T
    else:
        x = draws(tree, "score")
        deviations = x - point(tree, "score")[None]
        sigma = np.std(x[:, i] - x[:, j], axis=0, ddof=1)
        sigma = np.where(sigma > 0, sigma, 1e-300)
    return float(np.quantile(_max_statistic(deviations, sigma, i, j), level)), sigma


def rank_sets(tree: xr.DataTree, level: float = 0.95, random_seed: int = 0) -> pd.DataFrame:
    """Simultaneous rank sets of every item, best first.

    Parameters
    ----------
    tree : DataTree
        A fit (MAP with any interval method, or NUTS).
    level : float
        Simultaneous coverage.
    random_seed : int
        Seed of the simulation of the critical value (Wald and sandwich fits).

    Returns
    -------
    DataFrame
        ``name, rank, rank_set_lower, rank_set_upper``; ``attrs``: ``level``,
        ``critical_value`` (c, in standard errors of a difference) and ``method``.
    """
    check_level(level)
    s = point(tree, "score")
    names = np.asarray([str(x) for x in tree["constant_data"]["item"].values], dtype=object)
    m = s.size
    too_few = has_intervals(tree) and stored_covariance(tree, "score_cov") is None and not enough_draws(tree, level)
    if not np.all(np.isfinite(s)) or too_few:
        out = pd.DataFrame({"name": names, "rank": pd.NA, "rank_set_lower": pd.NA, "rank_set_upper": pd.NA})
        out.attrs.update(level=level, critical_value=float("nan"))
        return out
    c, sigma = critical_value(tree, level, random_seed)
    i, j = np.triu_indices(m, k=1)
    d = s[i] - s[j]
    above = d - c * sigma > 0    # i surely above j
    below = d + c * sigma < 0    # j surely above i
    n_above = np.bincount(j[above], minlength=m) + np.bincount(i[below], minlength=m)   # items surely above
    n_below = np.bincount(i[above], minlength=m) + np.bincount(j[below], minlength=m)   # items surely below
    order = np.argsort(-s, kind="stable")
    rank = np.empty(m, dtype=int)
    rank[order] = np.arange(1, m + 1)
    out = pd.DataFrame({"name": names, "rank": rank, "rank_set_lower": 1 + n_above,
                        "rank_set_upper": m - n_below}).iloc[order].reset_index(drop=True)
    out.attrs.update(level=level, critical_value=c)
    return out


def top_set(tree: xr.DataTree, k: int = 1, level: float = 0.95, random_seed: int = 0) -> list[str]:
    """The items that may be among the true top ``k`` at simultaneous ``level``: a set that
    contains the true top k with probability ≥ ``level`` (best first)."""
    table = rank_sets(tree, level, random_seed)
    return [str(n) for n in table.loc[table["rank_set_lower"] <= k, "name"]]


__all__ = ["BLOCK_ENTRIES", "N_SIMULATIONS", "critical_value", "rank_sets", "top_set"]
