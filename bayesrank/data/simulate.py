"""Simulated battle and judge records with a known truth, for recovery and coverage checks.

Written in NumPy from the models' definitions, independently of the package's likelihood
code, so fits of these records test it: Bradley–Terry P(a wins) = σ(d) or Davidson
P(a) : P(b) : P(tie) = e^{d/2} : e^{−d/2} : e^η, with d = s_a − s_b + βᵀz for per-battle
style contrasts z, and optionally per-category scores s_k = μ + τ δ_k (:func:`battles`); for a
panel of judges d = γ_k (s_a − s_b) + δ_k x, x = +1 for the answer shown first
(:func:`judge_panel`). :func:`clustered_battles` makes votes that are not independent:
clusters (users) whose votes share verdicts, or whose scores deviate from the population's.
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

def outcome_probabilities(d, eta: float | None = None) -> np.ndarray:
    """``(n, 3)`` P(a wins), P(b wins), P(tie) per linear predictor: Bradley–Terry (``eta`` None, no
    ties) or Davidson with tie parameter ``eta`` (a scalar or one per row)."""
    d = np.asarray(d, dtype=float)
    if eta is None:
        return np.column_stack([1 / (1 + np.exp(-d)), 1 / (1 + np.exp(d)), np.zeros_like(d)])
    w = np.column_stack([np.exp(d / 2), np.exp(-d / 2), np.broadcast_to(np.exp(eta), d.shape)])
    return w / w.sum(axis=1, keepdims=True)


def _draw(p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One outcome (0: a wins, 1: b wins, 2: tie) per row of probabilities."""
    return np.minimum((rng.random(len(p))[:, None] > np.cumsum(p, axis=1)).sum(axis=1), 2)


def _outcomes(d: np.ndarray, eta, rng: np.random.Generator) -> np.ndarray:
    """0 (a wins), 1 (b wins) or 2 (tie) per linear predictor (:func:`outcome_probabilities`)."""
    return _draw(outcome_probabilities(d, eta), rng)


def clustered_battles(scores, n_clusters: int, rng: np.random.Generator, *, pairs_per_cluster: int = 3,
                      votes_per_pair: int = 10, share: float = 0.8, spread: float = 0.0, eta: float | None = None,
                      cluster: str = "user") -> pd.DataFrame:
    """Battle records in clusters of dependent votes, with known population scores.

    Each cluster (a user) picks ``pairs_per_cluster`` distinct pairs at random and casts
    ``votes_per_pair`` votes on each. Two kinds of dependence, alone or together:

    * **shared verdicts** (``share`` = ρ): per (user, pair) one verdict is drawn from the
      model; each of the user's votes on the pair is that verdict with probability ρ, else a
      fresh draw. Every vote is then marginally a draw of the model with the population
      scores (the estimand of every interval method is ``scores``), and two votes of a user on
      a pair agree more often than independent votes would;
    * **random scores** (``spread`` = τ): the user's scores are s + u, u the projection of
      i.i.d. Normal(0, τ²) draws onto the zero-sum vectors (ZeroSumNormal(τ), the random-effects
      model's prior). The population scores are s, the conditional estimand of
      :class:`~bayesrank.model.random_effects.RandomEffects`; a model without random effects
      estimates the population-averaged scores, which are smaller in magnitude.

    Parameters
    ----------
    scores : array_like
        ``(m,)`` population scores.
    n_clusters : int
    rng : numpy Generator
    pairs_per_cluster, votes_per_pair : int
    share : float
        ρ in [0, 1].
    spread : float
        τ ≥ 0.
    eta : float, optional
        Davidson tie parameter; None for Bradley–Terry (no ties).
    cluster : str
        Name of the cluster column (labels ``u0000``, ``u0001``, …).

    Returns
    -------
    DataFrame
        ``model_a, model_b, winner, <cluster>``, one row per vote.
    """
    s = np.asarray(scores, dtype=float)
    m = s.size
    pa, pb = np.triu_indices(m, k=1)
    if not 1 <= pairs_per_cluster <= pa.size:
        raise ValueError(f"pairs_per_cluster must be in 1..{pa.size}, got {pairs_per_cluster}.")
    if not 0 <= share <= 1 or spread < 0:
        raise ValueError(f"share must be in [0, 1] and spread non-negative, got {share}, {spread}.")
    picks = np.argsort(rng.random((n_clusters, pa.size)), axis=1)[:, :pairs_per_cluster]   # (G, k) distinct pairs
    z = rng.standard_normal((n_clusters, m)) * spread
    u = z - z.mean(axis=1, keepdims=True)
    g = np.repeat(np.arange(n_clusters), pairs_per_cluster)
    pair = picks.ravel()
    d = (s[pa[pair]] + u[g, pa[pair]]) - (s[pb[pair]] + u[g, pb[pair]])
    p = outcome_probabilities(d, eta)
    shared = _draw(p, rng)
    votes = np.repeat(np.arange(pair.size), votes_per_pair)
    fresh = _draw(p[votes], rng)
    outcome = np.where(rng.random(votes.size) < share, shared[votes], fresh)
    swap = rng.random(votes.size) < 0.5      # the side each vote shows first
    a, b = np.where(swap, pb[pair[votes]], pa[pair[votes]]), np.where(swap, pa[pair[votes]], pb[pair[votes]])
    outcome = np.where(swap & (outcome < 2), 1 - outcome, outcome)
    names = np.asarray(item_names(m), dtype=object)
    labels = np.array([f"u{k:04d}" for k in range(n_clusters)], dtype=object)
    return pd.DataFrame({"model_a": names[a], "model_b": names[b],
                         "winner": np.array(["model_a", "model_b", "tie"], dtype=object)[outcome],
                         cluster: labels[g[votes]]})


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


__all__ = [
    "Panel", "TimeArena", "arena_over_time", "battles", "clustered_battles", "item_names", "judge_panel",
    "outcome_probabilities", "outcomes"
]
