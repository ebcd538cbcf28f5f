"""Which battles next: the votes that settle a leaderboard's open questions fastest.

:func:`next_pairs` spreads a budget of votes over candidate comparisons (pairs; for judge fits
also the judge asked) so that the goal's uncertainty (:mod:`bayesrank.design.goals`) is expected
to fall the most. It plans from the fit alone, with no new data: the fit's uncertainty is a
Gaussian over the scores and the variables the predictors read
(:mod:`bayesrank.design.belief`), each candidate vote adds the Fisher information its
outcomes carry — a tie included, where the framework models ties
(:mod:`bayesrank.design.candidates`) — and the Gaussian shrinks with every vote planned.

The budget is spent in :data:`STAGES` stages, each a step of a sequential design. At the start
of a stage the goal is linearised (its sensitivity D to the scores' covariance C). Alone, n votes
of candidate j would lower the goal's uncertainty, to first order, by

    f_j(n) = tr((I + n Q_j)⁻¹ n T_j),   Q_j = U_jᵀ Σ U_j,   T_j = U_jᵀ Σ_{·,s} D Σ_{s,·} U_j

(U_j U_jᵀ the information of one vote, Σ the covariance: Woodbury's identity) — diminishing
returns: the first vote is worth f_j'(0) = tr T_j, the n-th less. Matching its value and
curvature at n = 0, f_j(n) ≈ a_j/n0_j − a_j/(n0_j + n) (exact for one-predictor links), so the
stage is the separable problem min Σ_j a_j / (n0_j + n_j), Σ_j n_j = stage size, whose solution
is the square-root rule shared with DMLRank's A-optimal labelling
(:func:`~bayesrank.design.allocation.square_root_allocation`): n_j = n0_j (√(f_j'(0)/λ) − 1)⁺ —
only candidates whose first vote is worth more than λ get votes, and more the more votes their
question already has. The stage is rounded to whole votes (largest remainders), the Gaussian
updated with its information, and the next stage linearised there: a Fedorov–Wynn sequential
design (Fedorov 1972, *Theory of Optimal Experiments*) taking a stage of votes a step, so that
the votes of a batch spread over pairs instead of all going to the best one.

Each pair's ``value`` is its share of the expected reduction of the goal's uncertainty: each
stage's exact reduction (the goal's uncertainty before and after the stage's update) split
among the stage's candidates in proportion to f_j(n_j). The values therefore add up to
``expected["before"] − expected["after"]``.

A goal of orders whose uncertainty is below :data:`SETTLED` is settled — no vote changes it —
and the rest of the budget follows the ``all-pairs`` design; the result's warnings say so.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import xarray as xr

from bayesrank.design.allocation import largest_remainders, square_root_allocation
from bayesrank.design.belief import Belief, belief_of
from bayesrank.design.candidates import Candidates, candidates
from bayesrank.design.goals import GOALS, Goal, goal_of, scale_identified
from bayesrank.errors import BayesrankError, ModelSpecError, options_checked
from bayesrank.inference.backend import one_thread
from bayesrank.inference.structure import structure_of
from bayesrank.inference.tree import plain
from bayesrank.results.estimates import check_level
from bayesrank.results.fit import Fit
from bayesrank.results.leaderboard import rank_intervals, ranks_of
from bayesrank.results.provisional import max_span

#: Stages of the sequential design a budget is spent in (fewer for a smaller budget: a stage is
#: at least one vote).
STAGES = 16
#: An order goal whose uncertainty is below this is settled: its votes follow the all-pairs design.
SETTLED = 1e-6
#: Draws of the scores' Gaussian for the projected rank intervals of ``expected``.
PROJECTION_DRAWS = 1000
#: Frameworks whose votes are not chosen freely (a vote's category comes with its prompt).
UNSERVED = {"by-category": "a vote's category comes with its prompt, so a plan cannot choose it; fit the pooled "
                           "model (bt, davidson) of the same data and plan from that"}


@dataclass(frozen=True, eq=False)
class NextPairs:
    """The battles to run next, and what they are expected to settle.

    Attributes
    ----------
    pairs : DataFrame
        ``model_a, model_b`` (+ ``judge``: the judge to ask, + ``first``: the model to show
        first, where the fit has them), ``n`` (votes; they add up to the budget) and ``value``
        (the pair's share of the expected reduction of the goal's uncertainty), most votes
        first.
    goal : str
    budget : int
    k : int or None
        The k of ``top-k``.
    model : str or None
        The model of ``model``.
    expected : dict
        ``measure`` (the goal's uncertainty, in words), ``before``, ``after`` and ``reduction``
        of it; ``level``; ``mean_rank_interval_width`` and ``provisional`` (rows wider than
        :func:`~bayesrank.results.provisional.max_span` ranks) ``before`` / ``after``, from
        the Gaussian's draws with the scores at their estimates; ``undecided`` (top-k: models
        whose rank interval holds both k and k + 1) or ``rank_interval`` (model).
    values : DataFrame
        Every candidate (``model_a, model_b`` [``judge``, ``first``]) with ``value``: what one
        more vote of it is worth now, to first order — highest first.
    framework : str
    warnings : list of str
    """

    pairs: pd.DataFrame
    goal: str
    budget: int
    k: int | None
    model: str | None
    expected: dict
    values: pd.DataFrame
    framework: str
    warnings: list = field(default_factory=list)

    def table(self) -> pd.DataFrame:
        """The pairs (:attr:`pairs`): the CSV form."""
        return self.pairs.copy()

    def to_json(self) -> dict:
        """``{"pairs": [{model_a, model_b[, judge, first], n, value}], "goal", "k", "model",
        "budget", "expected", "framework", "warnings"}``."""
        return {"pairs": [{key: (int(v) if key == "n" else float(v) if key == "value" else str(v))
                           for key, v in row.items()} for row in self.pairs.to_dict("records")],
                "goal": self.goal, "k": self.k, "model": self.model, "budget": self.budget,
                "expected": plain(self.expected), "framework": self.framework, "warnings": list(self.warnings)}

    def to_text(self, top: int = 20) -> str:
        """The plan in words and a table of its pairs (the first ``top``; 0: all)."""
        e = self.expected
        what = {"top-k": f"settle the top {self.k}", "model": f"place {self.model}"}.get(self.goal, GOALS[self.goal])
        change = f"{e['before']:.4g} -> {e['after']:.4g}"
        if e["before"] > 0:
            change += f" ({100 * e['reduction'] / e['before']:.1f}% less)"
        width, prov = e["mean_rank_interval_width"], e["provisional"]
        lines = [f"next {self.budget:,} votes to {what} ({self.framework})",
                 f"expected {e['measure']}: {change}",
                 f"mean {100 * e['level']:g}% rank interval width {width['before']:.2f} -> {width['after']:.2f} ranks; "
                 f"provisional rows {prov['before']} -> {prov['after']} (scores held at their estimates)"]
        if "undecided" in e:
            lines.append(f"models whose interval holds ranks {self.k} and {self.k + 1}: "
                         f"{e['undecided']['before']} -> {e['undecided']['after']}")
        if "rank_interval" in e:
            lo, hi = e["rank_interval"]["before"], e["rank_interval"]["after"]
            lines.append(f"{self.model}: rank interval {lo[0]}-{lo[1]} -> {hi[0]}-{hi[1]}")
        shown = self.pairs.head(top) if top else self.pairs
        lines += ["", shown.to_string(index=False, float_format=lambda v: f"{v:.4g}")]
        if top and len(self.pairs) > top:
            lines.append(f"... {len(self.pairs) - top} more pairs (--top 0 shows all)")
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)


@options_checked
def next_pairs(fit, budget: int, goal: str = "ranks", *, k: int | None = None, model: str | None = None,
               judges=None, level: float = 0.95, random_seed: int = 0) -> NextPairs:
    """The battles to run next: ``budget`` votes spread over pairs to settle ``goal`` fastest.

    Parameters
    ----------
    fit : Fit or DataTree
        A fit with intervals (MAP with any interval method, or NUTS).
    budget : int
        Votes to plan (a positive whole number); the plan's ``n`` add up to it exactly.
    goal : {"top-k", "ranks", "model", "all-pairs"}
        ``top-k``: which models are in the top ``k``; ``ranks``: every rank interval;
        ``model``: the place of ``model`` (a new one, say); ``all-pairs``: every score
        difference (the A-optimal design for the scores).
    k : int, optional
        For ``top-k``: 1 ≤ k < number of models.
    model : str, optional
        For ``model``: a model of the fit.
    judges : sequence of str, optional
        Judge fits: the judges that may be asked (default every judge); the plan says which.
    level : float
        Level of the projected rank intervals in ``expected``.
    random_seed : int
        Seed of the draws of those projections (the plan itself draws nothing).

    Returns
    -------
    NextPairs

    Raises
    ------
    BayesrankError
        A budget that is not a positive whole number, an unknown goal, model or judge, a goal's
        missing or unused option, a framework whose votes a plan cannot choose, a fit without
        intervals or without an estimate.

    Examples
    --------
    >>> import bayesrank as br
    >>> fit = br.fit(br.Davidson(k_tie=1), "arena-2024")
    >>> plan = br.next_pairs(fit, 500, goal="top-k", k=10)
    >>> plan.pairs[["model_a", "model_b", "n"]].head(2)
                      model_a             model_b    n
    0         athene-70b-0725  mistral-large-2407  383
    1  gpt-4-turbo-2024-04-09  mistral-large-2407  117
    """
    fit = fit if isinstance(fit, Fit) else Fit(fit) if isinstance(fit, xr.DataTree) else _not_a_fit(fit)
    budget = _check_budget(budget)
    framework, prepared = fit.framework, fit.model_data
    items = list(prepared.items)
    k, index = _check_goal(goal, k, model, items)
    if framework.name in UNSERVED:
        raise ModelSpecError(f"next_pairs cannot plan for a {framework.label} fit: {UNSERVED[framework.name]}.")
    check_level(level)
    if isinstance(random_seed, bool) or not isinstance(random_seed, (int, np.integer)) or random_seed < 0:
        raise BayesrankError(f"random_seed must be a non-negative integer, got {random_seed!r}.")
    asked = _check_judges(judges, prepared)
    with one_thread():
        return _next_pairs(fit, budget, goal, k, model, index, asked, level, random_seed)


def _next_pairs(fit, budget, goal, k, model, index, asked, level, random_seed) -> NextPairs:
    """:func:`next_pairs` after its checks, on one BLAS thread."""
    framework, prepared = fit.framework, fit.model_data
    structure = structure_of(framework, prepared, "flat")
    belief = belief_of(fit.tree, structure)
    cand = candidates(structure, framework, prepared, fit.data, belief.nat, judges=asked)
    target = goal_of(goal, belief.score, belief.score_covariance(), k=k, model=index,
                     up_to_scale=not scale_identified(framework))
    plan = allocate(belief, cand, target, budget)
    expected = {"measure": target.measure, "before": plan.before, "after": plan.after,
                "reduction": plan.before - plan.after, "level": level,
                **_projections(belief, plan.belief, goal, k, index, level, random_seed)}
    pairs = cand.table.assign(n=plan.votes, value=plan.value)[plan.votes > 0]
    pairs = pairs.sort_values(["n", "value"], ascending=False, kind="stable").reset_index(drop=True)
    values = cand.table.assign(value=plan.one_vote).sort_values("value", ascending=False, kind="stable")
    return NextPairs(pairs=pairs, goal=goal, budget=budget, k=k, model=model, expected=expected,
                     values=values.reset_index(drop=True), framework=f"{framework.label} by {fit.method.upper()}",
                     warnings=[*fit.warnings, *plan.notes])


@dataclass
class Plan:
    """What :func:`allocate` decided: votes and values per candidate, the goal's uncertainty
    before and after, the first vote's value of every candidate at the start, the Gaussian
    after the votes and notes in words."""

    votes: np.ndarray
    value: np.ndarray
    one_vote: np.ndarray
    before: float
    after: float
    belief: Belief
    notes: list


def allocate(belief: Belief, cand: Candidates, target: Goal, budget: int, stages: int = STAGES) -> Plan:
    """Spend ``budget`` votes over the candidates in ``stages`` stages (the module docstring)."""
    rows = belief.index[cand.rows]
    n = len(cand.table)
    votes, value = np.zeros(n, dtype=np.int64), np.zeros(n)
    one_vote, notes = None, []
    now = before = target.uncertainty(belief.score_covariance())
    forms = _Forms(belief, cand.factors, rows)
    for size in _stage_sizes(budget, stages):
        Q, T = forms(belief, target.sensitivity(belief.score_covariance()))
        if one_vote is None:
            one_vote = _gain(Q, T, np.ones(n))
        step = None if target.name != "all-pairs" and now < SETTLED else _stage(Q, T, size)
        if step is None:   # nothing left to settle: the rest reduces every score difference's variance
            if not notes:
                notes.append(f"the goal is settled (its uncertainty is {now:.2g}, below {SETTLED:g}): more votes "
                             "do not change it, so they follow the all-pairs design (every score difference's "
                             "variance).")
            m = belief.score.size
            D = m * np.eye(m) - np.ones((m, m))
            Q, T = forms(belief, D if target.projector is None else target.projector @ D @ target.projector)
            step = _stage(Q, T, size)
        belief = belief.with_votes(rows, cand.factors, step)
        later = target.uncertainty(belief.score_covariance())
        share = _gain(Q, T, step)
        if share.sum() > 0:
            value += (now - later) * share / share.sum()
        votes += step
        now = later
    return Plan(votes, value, one_vote, before, now, belief, notes)


def _stage_sizes(budget: int, stages: int) -> list[int]:
    """``budget`` split into at most ``stages`` whole, nearly equal parts (the larger first)."""
    s = min(budget, stages)
    return [budget // s + (1 if q < budget % s else 0) for q in range(s)]


class _Forms:
    """Q_j = U_jᵀ Σ U_j and T_j = U_jᵀ Σ_{·,s} D Σ_{s,·} U_j of every candidate: the flat positions
    of its (rows × rows) block and the outer products of its factor's columns are made once, so a
    stage costs one gather and one product per matrix."""

    def __init__(self, belief: Belief, factors: np.ndarray, rows: np.ndarray):
        n, L, P = factors.shape
        self.P = P
        self.at = (rows[:, :, None] * belief.n_kept + rows[:, None, :]).reshape(n, L * L)
        self.outer = (factors[:, :, None, :, None] * factors[:, None, :, None, :]).reshape(n, L * L, P * P)

    def __call__(self, belief: Belief, D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        X = belief.cross_covariance()
        return self._form(belief.natural_covariance()), self._form(X @ D @ X.T)

    def _form(self, A: np.ndarray) -> np.ndarray:
        return np.einsum("cx,cxy->cy", np.take(A, self.at), self.outer).reshape(-1, self.P, self.P)


def _gain(Q: np.ndarray, T: np.ndarray, n: np.ndarray) -> np.ndarray:
    """f_j(n_j) = tr((I + n_j Q_j)⁻¹ n_j T_j): the first-order reduction of n_j votes of j alone
    (1 × 1 and 2 × 2 inverses in closed form)."""
    P = Q.shape[-1]
    if P == 1:
        return n * T[:, 0, 0] / (1 + n * Q[:, 0, 0])
    if P == 2:
        a, b, d = 1 + n * Q[:, 0, 0], n * Q[:, 0, 1], 1 + n * Q[:, 1, 1]
        return n * (d * T[:, 0, 0] - 2 * b * T[:, 0, 1] + a * T[:, 1, 1]) / (a * d - b * b)
    M = np.eye(P)[None] + n[:, None, None] * Q
    return n * np.einsum("cpp->c", np.linalg.solve(M, T))


def _stage(Q: np.ndarray, T: np.ndarray, size: int) -> np.ndarray | None:
    """Whole votes of one stage: the square-root rule on f_j ≈ a_j/n0_j − a_j/(n0_j + n), rounded
    (the module docstring); None when no candidate's first vote is worth anything."""
    g = np.einsum("cpp->c", T)                          # f'(0)
    h = np.einsum("cpq,cqp->c", Q, T)                   # −f''(0)/2
    useful = (g > 1e-12 * max(g.max(), 0.0)) & (h > 0) if g.size and g.max() > 0 else np.zeros(g.size, bool)
    if not useful.any():
        return None
    n0, g_use = g[useful] / h[useful], g[useful]
    a = g_use * n0**2
    # only candidates whose first vote is worth more than λ get votes: solve among the best first
    # votes, more of them until the next one's is worth no more than λ (then the rest get none)
    order = np.argsort(-g_use, kind="stable")
    top = min(g_use.size, 256)
    while True:
        pick = order[:top]
        total, lam = square_root_allocation(a[pick] / a[pick].max(), size + n0[pick].sum(), floor=n0[pick])
        if top == g_use.size or lam * a[pick].max() >= g_use[order[top]]:
            break
        top = min(g_use.size, 4 * top)
    votes = np.zeros(g_use.size)
    votes[pick] = np.clip(total - n0[pick], 0, None)
    share = np.zeros(g.size)
    share[useful] = votes
    if share.sum() <= 0:    # (rounding of a tiny stage) the best first vote
        share[np.argmax(np.where(useful, g, -np.inf))] = 1.0
    return largest_remainders(share, size)


def _projections(before: Belief, after: Belief, goal: str, k, index, level: float, random_seed: int) -> dict:
    """Rank intervals projected from the Gaussian before and after the votes (the scores held at
    their estimates, the same draws for both)."""
    m = before.score.size
    z = np.random.default_rng(random_seed).standard_normal((PROJECTION_DRAWS, before.factor.shape[1]))
    out = {}
    for when, belief in (("before", before), ("after", after)):
        S = belief.factor[belief.n_kept:]
        lower, upper = rank_intervals(ranks_of(belief.score[None] + z @ S.T), level)
        out[when] = (lower, upper)
    result = {"mean_rank_interval_width": {w: float(np.mean(u - lo)) for w, (lo, u) in out.items()},
              "provisional": {w: int(np.sum(u - lo + 1 > max_span(m))) for w, (lo, u) in out.items()}}
    if goal == "top-k":
        result["undecided"] = {w: int(np.sum((lo <= k) & (u > k))) for w, (lo, u) in out.items()}
    if goal == "model":
        result["rank_interval"] = {w: [int(lo[index]), int(u[index])] for w, (lo, u) in out.items()}
    return result


def _not_a_fit(fit):
    raise BayesrankError(f"next_pairs expects a fit (bayesrank.fit(...) or Fit.load(path)), got {type(fit).__name__}.")


def _check_budget(budget) -> int:
    whole = isinstance(budget, (int, np.integer)) and not isinstance(budget, bool)
    if isinstance(budget, (float, np.floating)) and float(budget).is_integer():
        budget, whole = int(budget), True
    if not whole or budget <= 0:
        raise BayesrankError(f"the budget must be a positive whole number of votes, got {budget!r}.")
    return int(budget)


def _check_goal(goal, k, model, items) -> tuple[int | None, int | None]:
    """The goal's k and the model's index, after refusing a goal or option that does not fit."""
    if goal not in GOALS:
        raise BayesrankError(f"unknown goal {goal!r}; use one of {', '.join(GOALS)} "
                             f"({'; '.join(f'{g}: {w}' for g, w in GOALS.items())}).")
    m = len(items)
    if m < 2:
        raise BayesrankError("the fit has fewer than two models: there is no pair to compare.")
    if goal != "top-k" and k is not None:
        raise BayesrankError(f"k is an option of goal='top-k' only, not of goal={goal!r}.")
    if goal != "model" and model is not None:
        raise BayesrankError(f"model is an option of goal='model' only, not of goal={goal!r}.")
    if goal == "top-k":
        if k is None:
            raise BayesrankError(f"goal='top-k' needs k, the size of the top (1 to {m - 1}).")
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k < m:
            raise BayesrankError(f"k must be a whole number from 1 to {m - 1} (the fit has {m} models), got {k!r}.")
        return int(k), None
    if goal == "model":
        if model is None:
            raise BayesrankError("goal='model' needs model, the name of the model to place.")
        if model not in items:
            close = difflib.get_close_matches(str(model), items, n=3)
            raise BayesrankError(f"unknown model {model!r}" + (f"; did you mean {', '.join(map(repr, close))}?" if close
                                                             else f"; the fit has {m} models, e.g. {items[0]!r}.")
                                 + " A model with no battles yet is not in the fit: refit with its first battles "
                                   "(against a few models across the board), then plan.")
        return None, items.index(model)
    return None, None


def _check_judges(judges, prepared) -> list[int] | None:
    """Indices of the judges that may be asked (None: every judge, or a fit without judges)."""
    if judges is None:
        return None
    if prepared.judges is None:
        raise BayesrankError("judges= is for judge fits; this fit has no judges.")
    names = [judges] if isinstance(judges, str) else list(judges)
    unknown = [j for j in names if j not in prepared.judges]
    if unknown or not names:
        raise BayesrankError(f"unknown judge {unknown[0]!r}; the fit's judges: {', '.join(prepared.judges)}."
                             if unknown else "judges= names no judge; give at least one of the fit's judges.")
    return sorted({prepared.judges.index(j) for j in names})


__all__ = ["NextPairs", "PROJECTION_DRAWS", "Plan", "SETTLED", "STAGES", "UNSERVED", "allocate", "next_pairs"]
