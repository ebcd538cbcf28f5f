"""The A-optimal labelling policy: which pairs to send to human raters next, under a budget.

Labelling ordered pair (j, k) in context x with probability π_jk(x), independently, adds
E[Σ_jk a_jk(X)/π_jk(X)] to the trace of DMLRank's covariance, with
a_jk(x) = tr(J_jk V_jk J_jkᵀ): J_jk the Jacobian of the GARS functional at μ(x) and
V_jk = Diag(μ_jk) − μ_jkμ_jkᵀ the outcome's covariance. Minimising it under the budget
Σ_i Σ_jk c_jk π_jk(x_i) ≤ B with a floor π ≥ π_lo gives (Thm 6.2)

    π*_jk(x) = clip(√(a_jk(x) / (λ c_jk)), π_lo, 1),

with λ found by bisection so that the budget binds (Frauen et al., "Nonparametric LLM Evaluation
from Preference Data", §6 and App. G): the square-root rule of :mod:`bayesrank.design.allocation`,
which :func:`bayesrank.next_pairs` shares. For the
Borda score this is Neyman allocation (balanced pairs first); for the BT projection lopsided
pairs, whose log-odds are noisy, come first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.design.allocation import square_root_allocation
from bayesrank.errors import BayesrankError
from bayesrank.gars.scores import jacobian
from bayesrank.model.saturated import multinomial_covariance


def variance_weights(mu: np.ndarray, score: str, scheme) -> np.ndarray:
    """a_jk(x) = tr(J_jk V_jk J_jkᵀ) of each context and ordered pair, ``(n, K, K)``."""
    J = jacobian(mu, score, scheme)  # (n, d, K, K, C)
    V = multinomial_covariance(mu)  # (n, K, K, C, C)
    return np.einsum("ndjkc,njkce,ndjke->njk", J, V, J)


def a_optimal(a: np.ndarray, budget: float, cost=1.0, floor: float = 0.0) -> tuple[np.ndarray, float]:
    """π* of :func:`optimal_policy` as an ``(n, K, K)`` array (zero diagonal) and λ: the square-root
    rule (:func:`bayesrank.design.allocation.square_root_allocation`) on the ordered pairs of every
    context, with floor π_lo and cap 1."""
    a = np.asarray(a, dtype=float)
    K = a.shape[-1]
    off = np.broadcast_to(~np.eye(K, dtype=bool), a.shape)
    c = np.broadcast_to(np.asarray(cost, dtype=float), (K, K))
    if np.any(c[~np.eye(K, dtype=bool)] <= 0):
        raise BayesrankError("labelling costs must be positive.")
    if not 0 <= floor <= 1:
        raise BayesrankError(f"the propensity floor must be in [0, 1], got {floor}.")
    cells = np.broadcast_to(c, a.shape)[off]
    if floor * cells.sum() > budget:
        raise BayesrankError(f"a budget of {budget:g} cannot label every pair with probability {floor:g} "
                             f"(that costs {floor * cells.sum():g}); raise the budget or lower the floor.")
    pi = np.zeros(a.shape)
    pi[off], lam = square_root_allocation(np.clip(a[off], 0, None), budget, cells, floor, 1.0)
    return pi, lam


@dataclass(frozen=True, eq=False)
class Policy:
    """An A-optimal labelling policy.

    Attributes
    ----------
    table : DataFrame
        ``context, item_a, item_b, pi, weight[, labelled]``, one row per context and ordered
        pair (``item_a`` shown first), highest π first: label each pair with probability
        ``pi``; ``weight`` is a_jk(x).
    lam, budget, expected_cost, floor : float
    """

    table: pd.DataFrame
    lam: float
    budget: float
    expected_cost: float
    floor: float

    def sample(self, random_seed=None) -> pd.DataFrame:
        """Draw the pairs to label now (each independently with its π), highest π first."""
        rng = np.random.default_rng(random_seed)
        return self.table[rng.random(len(self.table)) < self.table["pi"].to_numpy()].reset_index(drop=True)


def optimal_policy(a: np.ndarray, budget: float, *, cost=1.0, floor: float = 0.0, items=None, context_ids=None,
                   labelled: np.ndarray | None = None) -> Policy:
    """The A-optimal policy for the weights ``a`` (:func:`variance_weights`) under ``budget``.

    Parameters
    ----------
    a : ndarray
        ``(n, K, K)`` a_jk(x) of the contexts to label.
    budget : float
        Expected total cost of the labels over these contexts (labels, when every cost is 1).
    cost : float or ndarray
        c_jk, scalar or ``(K, K)``.
    floor : float
        π_lo: every pair keeps at least this probability (positivity for the estimator).
    items, context_ids : sequences, optional
        Names for the table.
    labelled : ndarray of bool, optional
        ``(n, K, K)``: pairs already labelled, flagged in the table.
    """
    pi, lam = a_optimal(a, budget, cost, floor)
    n, K = pi.shape[0], pi.shape[-1]
    j, k = np.nonzero(~np.eye(K, dtype=bool))
    items = np.asarray(items if items is not None else [str(x) for x in range(K)], dtype=object)
    ids = np.asarray(context_ids if context_ids is not None else np.arange(n))
    table = pd.DataFrame({"context": np.repeat(ids, len(j)), "item_a": np.tile(items[j], n),
                          "item_b": np.tile(items[k], n), "pi": pi[:, j, k].ravel(),
                          "weight": np.asarray(a)[:, j, k].ravel()})
    if labelled is not None:
        table["labelled"] = labelled[:, j, k].ravel()
    table = table.sort_values("pi", ascending=False, kind="stable").reset_index(drop=True)
    c = np.broadcast_to(np.asarray(cost, dtype=float), (K, K))
    return Policy(table, float(lam), float(budget), float((pi * c).sum()), float(floor))


__all__ = ["Policy", "a_optimal", "optimal_policy", "variance_weights"]
