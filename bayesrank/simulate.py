"""Simulated battle records with a known truth, for recovery and coverage checks.

Written in NumPy from the models' definitions, independently of the package's likelihood
code, so fits of these records test it: Bradley–Terry P(a wins) = σ(d) or Davidson
P(a) : P(b) : P(tie) = e^{d/2} : e^{−d/2} : e^η, with d = s_a − s_b + βᵀz for per-battle
style contrasts z, and optionally per-category scores s_k = μ + τ δ_k.
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
    if eta is None:
        p = np.column_stack([1 / (1 + np.exp(-d)), 1 / (1 + np.exp(d)), np.zeros(n)])
    else:
        w = np.column_stack([np.exp(d / 2), np.exp(-d / 2), np.full(n, np.exp(eta))])
        p = w / w.sum(axis=1, keepdims=True)
    u = rng.random(n)
    outcome = (u[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    frame["winner"] = np.array(["model_a", "model_b", "tie"], dtype=object)[np.minimum(outcome, 2)]
    if n_cat > 1 or categories is not None:
        labels = np.asarray(list(categories) if categories is not None else [f"c{j}" for j in range(n_cat)],
                            dtype=object)
        frame["category"] = labels[k]
    return pd.DataFrame(frame)


@dataclass(frozen=True)
class TimeArena:
    """A simulated arena over time and its truth (:func:`arena_over_time`).

    Attributes
    ----------
    records : DataFrame
        Battles ``model_a, model_b, winner, date`` (``date``: an ISO 8601 timestamp, UTC).
    scores : ndarray
        ``(items, periods)`` true scores, centred over the items in every period (NaN where an item
        has not entered yet or has left).
    periods : list of str
        Start dates (ISO) of the periods.
    changes : DataFrame
        The planted changes: ``name, period, size`` (``period``: the first period at the new level).
    """

    records: pd.DataFrame
    scores: np.ndarray
    periods: list
    changes: pd.DataFrame


def arena_over_time(m: int, periods: int, battles_per_period: int, rng: np.random.Generator, *,
                    change_share: float = 0.2, change_size: tuple[float, float] = (0.4, 0.8),
                    entering: float = 0.2, spread: float = 1.0, eta: float | None = None,
                    start: str = "2024-01-01", period: str = "week") -> TimeArena:
    """Battles of an arena whose items change at known periods.

    Item i has a score drawn from N(0, ``spread²``); a share ``change_share`` of the items changes once,
    at a period drawn uniformly among its periods after the first, by a size of random sign and magnitude
    uniform in ``change_size``; a share ``entering`` of the items enters at a period drawn uniformly in the
    first half. Each period's battles pick pairs of the items present uniformly, and outcomes by
    Bradley–Terry (or Davidson with tie parameter ``eta``) at that period's scores; each battle's
    timestamp is uniform within its period.

    Returns
    -------
    TimeArena
    """
    names = np.asarray(item_names(m), dtype=object)
    base = rng.normal(0.0, spread, m)
    first = np.zeros(m, dtype=np.int64)
    late = rng.random(m) < entering
    late[:2] = False  # two items present from the start
    first[late] = rng.integers(1, max(periods // 2, 2), late.sum())
    raw = np.repeat(base[:, None], periods, axis=1)
    changed = []
    for i in np.flatnonzero(rng.random(m) < change_share):
        if periods - first[i] < 2:
            continue
        at = int(rng.integers(first[i] + 1, periods))
        size = float(rng.choice([-1.0, 1.0]) * rng.uniform(*change_size))
        raw[i, at:] += size
        changed.append((names[i], at, size))
    present = np.arange(periods)[None, :] >= first[:, None]
    scores = np.where(present, raw, np.nan)
    scores = scores - np.nanmean(scores, axis=0, keepdims=True)
    step = {"day": pd.Timedelta(days=1), "week": pd.Timedelta(weeks=1)}.get(period)
    starts = list(pd.date_range(start, periods=periods + 1, freq="MS") if period == "month"
                  else [pd.Timestamp(start) + step * k for k in range(periods + 1)])
    frames = []
    for t in range(periods):
        here = np.flatnonzero(present[:, t])
        pairs = np.array([(a, b) for a in here for b in here if a < b])
        frame = battles(raw[:, t], battles_per_period, rng, eta=eta, pairs=pairs)
        length = starts[t + 1] - starts[t]
        offset = pd.to_timedelta(rng.random(len(frame)) * length.total_seconds(), unit="s").floor("s")
        frame["date"] = (starts[t] + offset).strftime("%Y-%m-%dT%H:%M:%SZ")
        frames.append(frame)
    iso = [pd.Timestamp(s).strftime("%Y-%m-%d") for s in starts[:periods]]
    changes = pd.DataFrame([(n, iso[t], s) for n, t, s in changed], columns=["name", "period", "size"])
    return TimeArena(pd.concat(frames, ignore_index=True), scores, iso, changes)
