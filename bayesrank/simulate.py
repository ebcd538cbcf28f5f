"""Simulated battle records with a known truth, for recovery and coverage checks.

Written in NumPy from the models' definitions, independently of the package's likelihood
code, so fits of these records test it: Bradley–Terry P(a wins) = σ(d) or Davidson
P(a) : P(b) : P(tie) = e^{d/2} : e^{−d/2} : e^η, with d = s_a − s_b + βᵀz for per-battle
style contrasts z, and optionally per-category scores s_k = μ + τ δ_k.
"""

from __future__ import annotations

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
    p = outcome_probabilities(d, eta)
    u = rng.random(n)
    outcome = (u[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    frame["winner"] = np.array(["model_a", "model_b", "tie"], dtype=object)[np.minimum(outcome, 2)]
    if n_cat > 1 or categories is not None:
        labels = np.asarray(list(categories) if categories is not None else [f"c{j}" for j in range(n_cat)],
                            dtype=object)
        frame["category"] = labels[k]
    return pd.DataFrame(frame)


def outcomes(scores, a, b, n, rng: np.random.Generator, *, eta: float | None = None) -> np.ndarray:
    """``(len(a), 3)`` counts of a wins, b wins and ties of ``n[j]`` battles of each pair
    (``a[j]``, ``b[j]``): Bradley–Terry (``eta`` None, no ties) or Davidson, as in :func:`battles`.

    Parameters
    ----------
    scores : array_like
        ``(m,)`` true scores.
    a, b : array_like of int
        Item indices of each pair.
    n : array_like of int
        Battles of each pair.
    rng : numpy Generator
    eta : float, optional
        Davidson tie parameter.
    """
    s = np.asarray(scores, dtype=float)
    p = outcome_probabilities(s[np.asarray(a)] - s[np.asarray(b)], eta)
    return np.array([rng.multinomial(int(k), pi) for k, pi in zip(n, p)], dtype=float).reshape(-1, 3)


def outcome_probabilities(d, eta: float | None = None) -> np.ndarray:
    """``(n, 3)`` P(a wins), P(b wins), P(tie) of score differences ``d``: Bradley–Terry σ(d)
    (``eta`` None) or Davidson e^{d/2} : e^{−d/2} : e^η."""
    d = np.asarray(d, dtype=float)
    if eta is None:
        return np.column_stack([1 / (1 + np.exp(-d)), 1 / (1 + np.exp(d)), np.zeros_like(d)])
    w = np.column_stack([np.exp(d / 2), np.exp(-d / 2), np.full_like(d, np.exp(eta))])
    return w / w.sum(axis=1, keepdims=True)
