"""The saturated model: one outcome distribution per compared pair, optionally per context.

It has no score structure, so it is not a :class:`~bayesrank.model.framework.Framework`
(whose predictors are functions of per-item and per-judge variables): every observed pair
(and context) gets its own probability vector over the outcome categories,

    μ_p ~ Dirichlet(α · 1_C),    counts_p ~ Multinomial(N_p, μ_p),

built by :func:`saturated_model` as a PyMC model. The posterior is conjugate, Dirichlet(α + counts_p), and with α = 1
the MAP is the maximum-likelihood estimate, the cell frequencies, with the multinomial covariance (Diag(μ) − μμᵀ)/N_p
(:func:`multinomial_covariance`). Pushed through a GARS functional by the delta method this is DMLRank without
covariates (Frauen et al., "Nonparametric LLM Evaluation from Preference Data", eqs. 11–12); :mod:`bayesrank.gars` does
that. The tests check the closed forms against the PyMC model's own gradient and Hessian.

Pairs are *ordered* by display order (the first-shown item first) when the data record
positions and every pair was shown both ways; otherwise display order cannot be told apart
from the pair, and a pair (a, b) with a < b stands for both orders (μ_ba is μ_ab with the two
wins swapped).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import FIRST_A, Comparisons
from bayesrank.errors import DataError
from bayesrank.runtime.lazy import lazy_module

pm = lazy_module("pymc")

#: Outcome categories, in the order of the last axis of the counts (three or four of them).
CATEGORIES = ("win_first", "win_second", "tie", "both_bad")


@dataclass(frozen=True, eq=False)
class PairCounts:
    """Outcome counts per (context, pair).

    Attributes
    ----------
    items : tuple of str
    contexts : tuple of str
        ``("all",)``, or the judges when counted per judge.
    first, second : ndarray of int
        Item indices of each pair: shown first and second (``ordered``), or the lower and
        higher index (unordered).
    context : ndarray of int
        Context of each pair.
    counts : ndarray
        ``(n_pairs, C)`` counts over :data:`CATEGORIES` ``[:C]``.
    ordered : bool
        Whether pairs are display-ordered (see the module docstring).
    notes : tuple of str
        What was pooled and why, in words.
    """

    items: tuple[str, ...]
    contexts: tuple[str, ...]
    first: np.ndarray
    second: np.ndarray
    context: np.ndarray
    counts: np.ndarray
    ordered: bool
    notes: tuple[str, ...] = ()

    @property
    def totals(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    @property
    def n_categories(self) -> int:
        return self.counts.shape[1]

    def frequencies(self) -> np.ndarray:
        """The MLE (= MAP under the flat Dirichlet(1) prior): ``(n_pairs, C)``."""
        return self.counts / self.totals[:, None]

    def context_weights(self) -> np.ndarray:
        """Each context's share of the comparisons (the empirical distribution of contexts)."""
        total = np.bincount(self.context, weights=self.totals, minlength=len(self.contexts))
        return total / total.sum()


def pair_counts(data: Comparisons, n_categories: int = 3, by_judge: bool = False) -> PairCounts:
    """Counts per pair (and judge) of ``data``.

    Parameters
    ----------
    data : Comparisons
    n_categories : {3, 4}
        3: wins and ties; 4: also "both bad" ties as their own category (read the data without
        ``both_bad_as_ties``, or they are counted twice).
    by_judge : bool
        One context per judge (the data must have judges).
    """
    if n_categories not in (3, 4):
        raise ValueError(f"n_categories must be 3 or 4, got {n_categories}.")
    if by_judge and data.judge is None:
        raise DataError(f"{data.source or 'the data'} has no judges; count per judge only for judge records.")
    columns = (data.wins_a, data.wins_b, data.ties, data.ties_bothbad)[:n_categories]
    counts = np.column_stack(columns)
    context = data.judge if by_judge else np.zeros(data.n_cells, dtype=np.int64)
    contexts = tuple(data.judges) if by_judge else ("all",)
    notes = []
    frame = pd.DataFrame({"context": context, "a": data.a, "b": data.b})
    ordered = data.first is not None
    if ordered:
        frame["first_a"] = data.first == FIRST_A
        orders = frame.groupby(["context", "a", "b"])["first_a"].nunique()
        if (orders < 2).any():
            ordered = False
            notes.append(f"display positions are recorded but {int((orders < 2).sum())} of {len(orders)} pairs were "
                         "shown in one order only, so display order is pooled (each pair stands for both orders).")
    if ordered:
        swap = ~frame["first_a"].to_numpy()
        first, second = np.where(swap, data.b, data.a), np.where(swap, data.a, data.b)
        counts = counts.copy()
        counts[swap, 0], counts[swap, 1] = columns[1][swap], columns[0][swap]
    else:
        first, second = data.a, data.b
    keys = pd.DataFrame({"context": context, "first": first, "second": second})
    table = pd.concat([keys, pd.DataFrame(counts)], axis=1).groupby(["context", "first", "second"], sort=True).sum()
    table = table[table.sum(axis=1) > 0]
    index = table.index.to_frame(index=False)
    return PairCounts(items=tuple(data.items), contexts=contexts, first=index["first"].to_numpy(np.int64),
                      second=index["second"].to_numpy(np.int64), context=index["context"].to_numpy(np.int64),
                      counts=table.to_numpy(float), ordered=ordered, notes=tuple(notes))


def saturated_model(counts: PairCounts, alpha: float = 1.0) -> pm.Model:
    """The saturated Dirichlet–multinomial model of ``counts`` as a PyMC model.

    ``mu`` (dims ``pair, category``) ~ Dirichlet(α), ``counts`` ~ Multinomial(N, mu)
    observed. With α = 1 the prior is flat on each simplex and the MAP is the MLE.
    """
    if not alpha > 0:
        raise ValueError(f"alpha must be positive, got {alpha}.")
    C = counts.n_categories
    coords = {"pair": np.arange(len(counts.counts)), "category": list(CATEGORIES[:C])}
    with pm.Model(coords=coords) as model:
        observed = pm.Data("pair_counts", counts.counts, dims=("pair", "category"))
        mu = pm.Dirichlet("mu", a=np.full(C, float(alpha)), dims=("pair", "category"))
        pm.Multinomial("counts", n=observed.sum(axis=1), p=mu, observed=observed, dims=("pair", "category"))
    return model


def posterior_concentration(counts: PairCounts, alpha: float = 1.0) -> np.ndarray:
    """Parameters of the conjugate posterior Dirichlet(α + counts), ``(n_pairs, C)``."""
    return counts.counts + alpha


def multinomial_covariance(mu: np.ndarray) -> np.ndarray:
    """Covariance of one categorical outcome with probabilities ``mu``: Diag(μ) − μμᵀ,
    ``(..., C, C)`` for ``mu`` of shape ``(..., C)``."""
    mu = np.asarray(mu, dtype=float)
    return mu[..., :, None] * np.eye(mu.shape[-1]) - mu[..., :, None] * mu[..., None, :]


__all__ = [
    "CATEGORIES", "PairCounts", "multinomial_covariance", "pair_counts", "posterior_concentration", "saturated_model"
]
