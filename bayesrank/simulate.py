"""Simulated battle and judge records with a known truth, for recovery and coverage checks.

Written in NumPy from the models' definitions, independently of the package's likelihood
code, so fits of these records test it: Bradley–Terry P(a wins) = σ(d) or Davidson
P(a) : P(b) : P(tie) = e^{d/2} : e^{−d/2} : e^η, with d = s_a − s_b + βᵀz for per-battle
style contrasts z, and optionally per-category scores s_k = μ + τ δ_k (:func:`battles`); for a
panel of judges d = γ_k (s_a − s_b) + δ_k x, x = +1 for the answer shown first
(:func:`judge_panel`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


def item_names(m: int) -> list[str]:
    """``m00``, ``m01``, …: names that sort in index order."""
    return [f"m{k:02d}" for k in range(m)]


def battles(scores, n: int, rng: np.random.Generator, *, beta=None, eta: float | None = None,
            contrast_values=None, categories=None, pairs=None) -> pd.DataFrame:
    """Battle records ``model_a, model_b, winner`` (+ contrast columns ``z0, z1, …``, + ``category``).

    Parameters
    ----------
    scores : array_like
        ``(m,)`` scores, or ``(K, m)`` per category.
    n : int
        Battles; each picks a pair uniformly (or from ``pairs``), and a category uniformly.
    rng : numpy Generator
    beta : array_like, optional
        Style coefficients; contrasts are drawn from ``contrast_values`` (default: standard
        normal draws rounded to 0.5, so identical rows exist and aggregate).
    eta : float, optional
        Davidson tie parameter; None for Bradley–Terry (no ties).
    contrast_values : array_like, optional
        Values each contrast is drawn from, uniformly.
    categories : sequence of str, optional
        Category names for ``(K, m)`` scores (default ``c0, c1, …``).
    pairs : array_like, optional
        ``(p, 2)`` item index pairs to draw from.

    Returns
    -------
    DataFrame
    """
    s = np.atleast_2d(np.asarray(scores, dtype=float))
    n_cat, m = s.shape
    names = np.asarray(item_names(m), dtype=object)
    if pairs is None:
        a = rng.integers(0, m, n)
        b = (a + rng.integers(1, m, n)) % m
    else:
        pairs = np.asarray(pairs)
        pick = pairs[rng.integers(0, len(pairs), n)]
        a, b = pick[:, 0], pick[:, 1]
    k = rng.integers(0, n_cat, n)
    d = s[k, a] - s[k, b]
    frame = {"model_a": names[a], "model_b": names[b]}
    if beta is not None:
        beta = np.atleast_1d(np.asarray(beta, dtype=float))
        if contrast_values is None:
            z = np.round(rng.standard_normal((n, beta.size)) * 2) / 2
        else:
            z = rng.choice(np.asarray(contrast_values, dtype=float), size=(n, beta.size))
        d = d + z @ beta
        frame.update({f"z{j}": z[:, j] for j in range(beta.size)})
    outcome = _outcomes(d, eta, rng)
    frame["winner"] = np.array(["model_a", "model_b", "tie"], dtype=object)[outcome]
    if n_cat > 1 or categories is not None:
        labels = np.asarray(list(categories) if categories is not None else [f"c{j}" for j in range(n_cat)],
                            dtype=object)
        frame["category"] = labels[k]
    return pd.DataFrame(frame)


def _outcomes(d: np.ndarray, eta, rng: np.random.Generator) -> np.ndarray:
    """0 (a wins), 1 (b wins) or 2 (tie) per linear predictor: Bradley–Terry (``eta`` None) or
    Davidson with tie parameter ``eta`` (a scalar or one per row)."""
    if eta is None:
        p = np.column_stack([1 / (1 + np.exp(-d)), 1 / (1 + np.exp(d)), np.zeros_like(d)])
    else:
        w = np.column_stack([np.exp(d / 2), np.exp(-d / 2), np.broadcast_to(np.exp(eta), d.shape)])
        p = w / w.sum(axis=1, keepdims=True)
    u = rng.random(d.size)
    return np.minimum((u[:, None] > np.cumsum(p, axis=1)).sum(axis=1), 2)


@dataclass(frozen=True)
class Panel:
    """Simulated judge records and the truth they were drawn from.

    Attributes
    ----------
    records : DataFrame
        ``question_id, model_a, model_b, judge_model, judge_preferred_model`` (``a`` = model_a,
        the answer shown first; ``b``; ``c`` = tie), the shape of judge data sets.
    scores : ndarray
        ``(m,)`` true item scores (zero-sum), items named by :func:`item_names`.
    gamma, delta : ndarray
        ``(K,)`` true discriminations and position preferences of the judges ``j0, j1, …``.
    eta : float or None
        Davidson tie parameter (None: no ties).
    """

    records: pd.DataFrame
    scores: np.ndarray
    gamma: np.ndarray
    delta: np.ndarray
    eta: float | None

    @property
    def items(self) -> list[str]:
        return item_names(self.scores.size)

    @property
    def judges(self) -> list[str]:
        return [f"j{k}" for k in range(self.gamma.size)]

    def true_ranks(self) -> pd.Series:
        """Rank of every item under the true scores (1 = best)."""
        order = np.argsort(-self.scores, kind="stable")
        ranks = np.empty(order.size, dtype=int)
        ranks[order] = np.arange(1, order.size + 1)
        return pd.Series(ranks, index=pd.Index(self.items, name="name"), name="true_rank")


def judge_panel(scores, n_questions: int, rng: np.random.Generator, *, gamma=None, delta=None,
                eta: float | None = None, order: str = "alphabetical") -> Panel:
    """Records of a panel of judges: every judge judges every pair of items once per question.

    P(a) : P(b) : P(tie) follows Davidson (or Bradley–Terry without ``eta``) with
    d = γ_k (s_a − s_b) + δ_k x, where a is ``model_a`` and x = +1 (``model_a`` is the answer
    shown first). A judge with a large δ_k follows the position.

    Parameters
    ----------
    scores : array_like
        ``(m,)`` item scores (centred to sum to zero).
    n_questions : int
        Questions; each judge judges each pair once per question.
    rng : numpy Generator
    gamma, delta : array_like, optional
        ``(K,)`` discriminations (default ones) and position preferences (default zeros); at
        least one gives the number of judges.
    eta : float, optional
        Davidson tie parameter; None for no ties.
    order : {"alphabetical", "random"}
        Which answer is shown first: always the alphabetically first model of the pair (the
        order of public judge sets whose positions were never swapped), or a fair coin per record.

    Returns
    -------
    Panel
    """
    if order not in ("alphabetical", "random"):
        raise ValueError(f"order must be 'alphabetical' or 'random', got {order!r}.")
    s = np.asarray(scores, dtype=float)
    s = s - s.mean()
    sizes = {np.size(v) for v in (gamma, delta) if v is not None}
    if len(sizes) != 1:
        raise ValueError("give gamma and/or delta, one value per judge (of equal lengths).")
    k = sizes.pop()
    gamma = np.ones(k) if gamma is None else np.asarray(gamma, dtype=float)
    delta = np.zeros(k) if delta is None else np.asarray(delta, dtype=float)
    m = s.size
    i, j = np.triu_indices(m, k=1)
    judge, question, pair = (x.ravel() for x in np.meshgrid(np.arange(k), np.arange(n_questions), np.arange(i.size),
                                                              indexing="ij"))
    a, b = i[pair], j[pair]
    if order == "random":
        swap = rng.random(a.size) < 0.5
        a, b = np.where(swap, b, a), np.where(swap, a, b)
    d = gamma[judge] * (s[a] - s[b]) + delta[judge]
    outcome = _outcomes(d, eta, rng)
    names = np.asarray(item_names(m), dtype=object)
    records = pd.DataFrame({"question_id": question.astype(str), "model_a": names[a], "model_b": names[b],
                            "judge_model": np.array([f"j{x}" for x in range(k)], dtype=object)[judge],
                            "judge_preferred_model": np.array(["a", "b", "c"], dtype=object)[outcome]})
    return Panel(records, s, gamma, delta, eta)
