"""Provisional rows and the battles that would settle them.

A leaderboard row is provisional when its rank interval spans more ranks than
:func:`~bayesrank.results.provisional.max_span` allows (the ``provisional`` column of
:func:`~bayesrank.results.leaderboard.leaderboard`). For each such model, :func:`provisional_rows`
plans its own battles with the ``model`` goal of :func:`~bayesrank.design.next_pairs.next_pairs`
— votes of that model against the others, spread by the square-root rule — in doubling
batches (:data:`FIRST_BATCH`, then as many again, …), and projects its rank interval after each
batch (draws of the updated Gaussian, the scores held at their estimates) until the interval is
narrow enough; the last doubling is then halved :data:`REFINEMENTS` times. ``battles`` is the
smallest batch found to settle the row, ``opponents`` whom the plan pits it against. A row whose
neighbours are estimated almost equal may need more votes than :data:`MAX_BATTLES` (or any
number: two models of equal strength are never ordered): its ``battles`` is then missing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.design.belief import Belief, belief_of
from bayesrank.design.candidates import Candidates, candidates
from bayesrank.design.goals import goal_of, scale_identified
from bayesrank.design.next_pairs import PROJECTION_DRAWS, allocate
from bayesrank.errors import BayesrankError, options_checked
from bayesrank.inference.backend import one_thread
from bayesrank.inference.structure import structure_of
from bayesrank.results.estimates import NO_INTERVALS, check_level, enough_draws, has_intervals, too_few_draws
from bayesrank.results.fit import Fit
from bayesrank.results.leaderboard import rank_intervals
from bayesrank.results.provisional import max_span

#: Votes of the first batch planned for a provisional model.
FIRST_BATCH = 16
#: The most votes planned for one model before its row is called unsettled by any batch tried.
MAX_BATTLES = 100_000
#: Halvings of the last doubling (the answer is then within 1/2⁴ of that batch).
REFINEMENTS = 4
#: Opponents named per row (those given the most votes).
OPPONENTS = 3


@options_checked
def provisional_rows(fit, level: float = 0.95, *, max_battles: int = MAX_BATTLES, random_seed: int = 0
                     ) -> pd.DataFrame:
    """The provisional rows of a fit's leaderboard and the battles that would settle each.

    Parameters
    ----------
    fit : Fit
        A fit with intervals.
    level : float
        Level of the rank intervals.
    max_battles : int
        The most votes planned for one model.
    random_seed : int
        Seed of the draws that project rank intervals.

    Returns
    -------
    DataFrame
        One row per provisional model, best first: ``rank, name, rank_lower, rank_upper,
        n_comparisons``, ``battles`` (votes after which its projected interval spans at most
        ``max_span`` ranks; missing beyond ``max_battles``), ``opponents`` (``"name (votes), …"``,
        the opponents given most of them) and ``projected_lower, projected_upper`` (the
        interval after them). ``attrs["max_span"]`` holds the threshold.

    Raises
    ------
    BayesrankError
        For a fit without intervals, or with fewer draws than rank intervals at ``level`` need
        (:func:`~bayesrank.results.estimates.too_few_draws`).
    """
    fit = fit if isinstance(fit, Fit) else Fit(fit)
    check_level(level)
    if not has_intervals(fit.tree):
        raise BayesrankError("provisional rows need rank intervals, and " + NO_INTERVALS)
    if not enough_draws(fit.tree, level):
        raise BayesrankError(f"no provisional rows: {too_few_draws(fit.tree, level)}.")
    board = fit.leaderboard(level)
    columns = ["rank", "name", "rank_lower", "rank_upper", "n_comparisons", "battles", "opponents",
               "projected_lower", "projected_upper"]
    flagged = board[board["provisional"].fillna(False).astype(bool)]
    m = len(board)
    out = pd.DataFrame(flagged[["rank", "name", "rank_lower", "rank_upper", "n_comparisons"]]).reset_index(drop=True)
    out.attrs["max_span"] = max_span(m)
    if flagged.empty:
        return out.reindex(columns=columns)
    framework, prepared = fit.framework, fit.model_data
    with one_thread():
        structure = structure_of(framework, prepared, "flat")
        belief = belief_of(fit.tree, structure)
        cand = candidates(structure, framework, prepared, fit.data, belief.nat)
        z = np.random.default_rng(random_seed).standard_normal((PROJECTION_DRAWS, belief.factor.shape[1]))
        items = list(prepared.items)
        up_to_scale = not scale_identified(framework)
        rows = [_settle(belief, cand, items.index(name), level, z, max_battles, up_to_scale) for name in out["name"]]
    for key in ("battles", "opponents", "projected_lower", "projected_upper"):
        out[key] = [row[key] for row in rows]
    out["battles"] = out["battles"].astype("Int64")
    return out[columns]


def _settle(belief: Belief, cand: Candidates, index: int, level: float, z: np.ndarray, max_battles: int,
            up_to_scale: bool) -> dict:
    """The smallest doubling batch (refined by halving) of ``index``'s own battles that narrows its
    projected rank interval to :func:`max_span` ranks."""
    m = belief.score.size
    mine = (cand.a == index) | (cand.b == index)
    own = cand.subset(mine)
    target = goal_of("model", belief.score, belief.score_covariance(), model=index, up_to_scale=up_to_scale)

    def extend(start: Belief, votes: int):
        plan = allocate(start, own, target, votes, stages=1)
        return plan.belief, plan.votes

    def interval(b: Belief) -> tuple[int, int]:
        drawn = b.score[None] + z @ b.factor[b.n_kept:].T
        rank = 1 + (drawn > drawn[:, [index]]).sum(axis=1)     # its rank in each draw
        lower, upper = rank_intervals(rank[:, None], level)
        return int(lower[0]), int(upper[0])

    done, votes, state = 0, np.zeros(len(own.table), dtype=np.int64), belief
    batch, found = FIRST_BATCH, None
    while done < max_battles:
        batch = min(batch, max_battles - done)
        after, step = extend(state, batch)
        span = interval(after)
        if span[1] - span[0] + 1 <= max_span(m):
            found = (done + batch, votes + step, span)
            break
        done, votes, state = done + batch, votes + step, after
        batch = done
    if found is None:
        return {"battles": None, "opponents": "", "projected_lower": None, "projected_upper": None}
    low, high = done, found[0]    # the last batch settles; fewer of its votes may too
    for _ in range(REFINEMENTS):
        if high - low <= 1:
            break
        mid = (low + high) // 2
        after, step = extend(state, mid - done)
        span = interval(after)
        if span[1] - span[0] + 1 <= max_span(m):
            high, found = mid, (mid, votes + step, span)
        else:
            low = mid
    battles, planned, span = found
    return {"battles": battles, "opponents": _opponents(own, planned, index),
            "projected_lower": span[0], "projected_upper": span[1]}


def _opponents(own: Candidates, votes: np.ndarray, index: int) -> str:
    """``"name (votes), …"`` of the opponents with the most planned votes (judges' votes summed)."""
    names = np.where(own.a == index, own.table["model_b"], own.table["model_a"])
    per = pd.Series(votes, index=names).groupby(level=0, sort=False).sum()
    per = per[per > 0].sort_values(ascending=False, kind="stable").head(OPPONENTS)
    return ", ".join(f"{name} ({int(n)})" for name, n in per.items())


__all__ = ["FIRST_BATCH", "MAX_BATTLES", "OPPONENTS", "REFINEMENTS", "provisional_rows"]
