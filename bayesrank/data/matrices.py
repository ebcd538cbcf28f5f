"""Pairwise matrices of the raw counts, as Chatbot Arena users read them (FastChat's Elo
notebook): how often each pair met, and how often the row model won.

Both pool judges and positions; the model-implied matrices are in
:mod:`bayesrank.results.matches`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import Comparisons


def _square(data: Comparisons, items: Sequence[str] | None, values_ab, values_ba) -> pd.DataFrame:
    """An items × items table with ``values_ab`` of each cell at (a, b) and ``values_ba`` at (b, a)."""
    names = list(data.items) if items is None else [str(x) for x in items]
    index = {name: k for k, name in enumerate(data.items)}
    pick = np.array([index[name] for name in names], dtype=np.int64)
    m = data.n_items
    full = np.zeros((m, m))
    np.add.at(full, (data.a, data.b), values_ab)
    np.add.at(full, (data.b, data.a), values_ba)
    return pd.DataFrame(full[np.ix_(pick, pick)], index=pd.Index(names, name="name"), columns=names)


def battle_counts(data: Comparisons, items: Sequence[str] | None = None) -> pd.DataFrame:
    """Comparisons between every pair of ``items`` (default all, in the data's order), ties
    included: a symmetric table with zeros on the diagonal and for pairs that never met."""
    n = data.totals
    counts = _square(data, items, n, n)
    return counts.astype(np.int64) if np.all(counts.to_numpy() == np.round(counts.to_numpy())) else counts


def win_fractions(data: Comparisons, items: Sequence[str] | None = None) -> pd.DataFrame:
    """The share of the decisive comparisons of row against column that the row model won
    (ties left out, as FastChat's win-fraction matrix); NaN for pairs without a decisive one and
    on the diagonal. ``W + Wᵀ = 1`` wherever defined."""
    wins = _square(data, items, data.wins_a, data.wins_b)
    decisive = wins + wins.T
    with np.errstate(invalid="ignore", divide="ignore"):
        return wins / decisive.where(decisive > 0)


__all__ = ["battle_counts", "win_fractions"]
