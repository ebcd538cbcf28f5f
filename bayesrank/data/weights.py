"""Reweighting of comparisons: every pair of items by the inverse of its number of comparisons.

Chatbot Arena samples some pairs far more often than others (new models are matched against
the leaders); a leaderboard fitted to the raw counts answers for that sampling design. The
LMArena ``arena-rank`` package offers to weight each pair by the inverse of its comparison
count (floored at a minimum count), so each well-sampled pair weighs the same: the fit then
answers for a design in which every pair was compared equally often.

The weighted log-likelihood is a pseudo-likelihood (its information is not the variance of
its score), so reweighted MAP fits use the sandwich interval by default.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError

#: ``arena-rank``'s floor of the pair count: pairs with fewer comparisons are weighted as if
#: they had this many, so a handful of comparisons cannot dominate.
MIN_PAIR_COUNT = 50


def inverse_pair_count(data: Comparisons, min_count: float = MIN_PAIR_COUNT) -> np.ndarray:
    """Per-cell weights 1 / max(n_pair, min_count), scaled to one per comparison on average.

    Parameters
    ----------
    data : Comparisons
    min_count : float
        Floor of the pair count (``arena-rank``'s ``min_pair_count``, 50).

    Returns
    -------
    ndarray
        ``(n_cells,)`` weights, the same for every cell of a pair (positions, judges and
        covariate values split a pair into cells), with Σ_c w_c n_c = Σ_c n_c so the total
        number of comparisons and the per-comparison normalisation of the NLL are kept.
    """
    if not min_count > 0:
        raise DataError(f"min_count must be positive, got {min_count}.")
    pair = data.a * data.n_items + data.b
    _, index = np.unique(pair, return_inverse=True)
    totals = data.totals
    per_pair = np.bincount(index, totals)[index]
    w = 1.0 / np.maximum(per_pair, min_count)
    return w * totals.sum() / np.sum(w * totals)


def reweighted(data: Comparisons, weights: np.ndarray) -> Comparisons:
    """The cells with every count multiplied by its cell's weight (fractional counts)."""
    w = np.asarray(weights, dtype=float)
    if w.shape != (data.n_cells,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise DataError(f"weights must be {data.n_cells} finite non-negative numbers, one per cell.")
    return replace(data, wins_a=data.wins_a * w, wins_b=data.wins_b * w, ties=data.ties * w,
                   ties_bothbad=data.ties_bothbad * w,
                   clusters=None if data.clusters is None else data.clusters.scaled(w))


__all__ = ["MIN_PAIR_COUNT", "inverse_pair_count", "reweighted"]
