"""Simulated rounds of an arena with the truth known: fit → choose the next pairs → vote → refit.

A simulated arena has true scores (and a true Davidson tie parameter, or none for
Bradley–Terry); votes are drawn from the model's own outcome probabilities
(:func:`bayesrank.data.simulate.outcomes`, NumPy, independent of the package's likelihood). Every
round spends the same budget of votes under one of the :data:`POLICIES`:

``next-pairs``
    :func:`bayesrank.next_pairs` with a goal (``top-k`` to certify the top k, ``ranks`` to
    narrow every rank interval);
``uniform``
    each vote a pair drawn uniformly at random;
``arena``
    the active sampling rule of the Chatbot Arena paper (Chiang et al., "Chatbot Arena: an open
    platform for evaluating LLMs by human preference", ICML 2024): each vote a pair drawn with
    probability ∝ √(v_a/n_a) − √(v_a/(n_a + 1)), the shrinkage of the standard error of the
    pair's win rate that one more vote brings, with n_a its votes so far and v_a = p̂(1 − p̂) the
    variance of one vote's outcome (ties as halves; p̂ smoothed by half a vote each way, so a
    pair never compared has v = ¼ and n = 1).

After each round the model is refitted (MAP) and the round's row records the votes so far,
whether the true top k is *certified* — every true top-k model's rank interval inside 1..k and
no other model's (none wrongly) — whether some model is certified wrongly (a model outside the
true top k with its rank interval inside 1..k, or one inside it with its interval beyond k), and
the mean rank-interval width (rank_upper − rank_lower).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import Comparisons
from bayesrank.data.simulate import item_names, outcomes
from bayesrank.design.next_pairs import next_pairs
from bayesrank.errors import BayesrankError
from bayesrank.model.framework import Framework
from bayesrank.results.fit import fit as fit_model

#: The policies :func:`simulate_rounds` compares.
POLICIES = ("next-pairs", "uniform", "arena")
#: Warm-ups (of ``warmup`` votes of every pair) at most before the fit must have ranks.
WARMUP_REPEATS = 10


def arena_weights(counts: np.ndarray) -> np.ndarray:
    """The Chatbot Arena active sampling probabilities of each pair (the module docstring) from
    its ``(pairs, 3)`` counts so far (a wins, b wins, ties)."""
    n = counts.sum(axis=1)
    p = (counts[:, 0] + counts[:, 2] / 2 + 0.5) / (n + 1)
    v, n = p * (1 - p), np.maximum(n, 1)
    w = np.sqrt(v / n) - np.sqrt(v / (n + 1))
    return w / w.sum()


def simulate_rounds(framework: Framework, scores, *, eta: float | None = None, policy: str = "next-pairs",
                    goal: str = "top-k", k: int = 3, warmup: int = 2, budget: int = 200, max_votes: int = 20_000,
                    rounds: int | None = None, min_rounds: int = 0, level: float = 0.95,
                    random_seed: int = 0) -> pd.DataFrame:
    """Rounds of fit → plan → vote → refit in a simulated arena (the module docstring).

    Parameters
    ----------
    framework : Framework
        The model fitted each round (e.g. ``BradleyTerry(ties="drop")`` for Bradley–Terry truth,
        ``Davidson()`` for Davidson truth).
    scores : array_like
        ``(m,)`` true scores.
    eta : float, optional
        True Davidson tie parameter (None: Bradley–Terry, no ties).
    policy : {"next-pairs", "uniform", "arena"}
    goal : str
        The goal of ``next-pairs``.
    k : int
        The top k whose certification is recorded (and the goal's k for ``top-k``).
    warmup : int
        Votes of every pair before the first fit, repeated until that fit has ranks (the same
        for every policy; ``attrs["warmup_votes"]`` says how many).
    budget : int
        Votes per round.
    max_votes : int
        Votes after the warm-up at which the simulation stops.
    rounds : int, optional
        Stop after this many rounds instead of at the first certification.
    min_rounds : int
        Go on for at least this many rounds after a certification (to compare widths at a
        fixed number of votes).
    level : float
        Rank intervals' level.
    random_seed : int
        Seed of the votes (and the sampling policies' draws).

    Returns
    -------
    DataFrame
        One row per fit (the warm-up's first): ``round, votes`` (after the warm-up),
        ``certified, wrong, mean_width``; ``attrs["truth"]`` the true top k.
    """
    if policy not in POLICIES:
        raise BayesrankError(f"unknown policy {policy!r}; use one of {', '.join(POLICIES)}.")
    s = np.asarray(scores, dtype=float)
    m = s.size
    names = np.asarray(item_names(m), dtype=object)
    a, b = np.triu_indices(m, k=1)
    rng = np.random.default_rng(random_seed)
    counts, fitted, board = _warm_up(framework, s, names, a, b, warmup, rng, eta, level)
    truth = set(names[np.argsort(-s, kind="stable")[:k]])
    rows, votes, r = [], 0, 0
    while True:
        if r > 0:
            fitted = fit_model(framework, Comparisons.from_cells(names[a], names[b], *counts.T))
            board = fitted.leaderboard(level)
        inside = set(board.loc[board["rank_upper"] <= k, "name"])
        outside = set(board.loc[board["rank_lower"] > k, "name"])
        rows.append({"round": r, "votes": votes, "certified": inside == truth,
                     "wrong": bool(inside - truth) or bool(outside & truth),
                     "mean_width": float((board["rank_upper"] - board["rank_lower"]).mean())})
        certified = any(row["certified"] for row in rows)
        done = certified and r >= min_rounds if rounds is None else r >= rounds
        if done or votes >= max_votes:
            break
        n = _allocation(policy, fitted, counts, names, a, b, budget, goal, k, rng)
        counts = counts + outcomes(s, a, b, n, rng, eta=eta)
        votes, r = votes + budget, r + 1
    out = pd.DataFrame(rows)
    out.attrs["truth"] = sorted(truth)
    out.attrs["warmup_votes"] = int(counts.sum() - votes)
    return out


def _warm_up(framework, s, names, a, b, warmup, rng, eta, level):
    """Every pair voted ``warmup`` times, again until the fit has ranks (a model that won, or lost,
    every vote has no maximum-likelihood estimate; more votes never take it away): the counts,
    the fit and its leaderboard. The draws come first from ``rng``, so every policy shares them."""
    counts = np.zeros((a.size, 3), dtype=np.int64)
    for _ in range(WARMUP_REPEATS):
        counts = counts + outcomes(s, a, b, np.full(a.size, warmup), rng, eta=eta)
        fitted = fit_model(framework, Comparisons.from_cells(names[a], names[b], *counts.T))
        board = fitted.leaderboard(level)
        if board["rank_lower"].notna().all():
            return counts, fitted, board
    raise BayesrankError(f"after {WARMUP_REPEATS * warmup} votes of every pair the fit still has no ranks; "
                         "simulate closer scores or a larger warm-up.")


def _allocation(policy, fitted, counts, names, a, b, budget, goal, k, rng) -> np.ndarray:
    """Votes of each pair (i < j) this round."""
    if policy == "uniform":
        return rng.multinomial(budget, np.full(a.size, 1 / a.size))
    if policy == "arena":
        return rng.multinomial(budget, arena_weights(counts))
    plan = next_pairs(fitted, budget, goal, **({"k": k} if goal == "top-k" else {}))
    index = {(x, y): q for q, (x, y) in enumerate(zip(names[a], names[b]))}
    n = np.zeros(a.size, dtype=np.int64)
    for x, y, votes in zip(plan.pairs["model_a"], plan.pairs["model_b"], plan.pairs["n"]):
        n[index[(x, y) if (x, y) in index else (y, x)]] += votes
    return n


__all__ = ["POLICIES", "WARMUP_REPEATS", "arena_weights", "simulate_rounds"]
