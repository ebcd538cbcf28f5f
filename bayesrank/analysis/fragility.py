"""Fragility of the top of a leaderboard: how many votes its top spot (or top-k set) rests on.

The smallest number of comparisons whose removal changes the top 1 (or the set of the top k)
is found the way Broderick, Giordano & Meager (2020) find the "approximate maximum influence
perturbation": by the influence function of the MLE. Removing one comparison u moves the
estimate by about −I⁻¹ s_u (I the observed information, s_u the comparison's score), so it
moves the margin s_i − s_j between a top item i and a challenger j by about −cᵀ I⁻¹ s_u with
c = ∇_θ(s_i − s_j). Taking the comparisons that lower a margin most, one by one, gives the
fewest removals that close it to first order; the challenger needing the fewest wins.

Then the claim is checked: the named comparisons are removed and the model refitted (the same
compiled model, warm-started at θ̂). If the top has not changed — the first-order estimate is
optimistic when many votes go — the influence is recomputed at the refitted point and more
comparisons are removed, until a refit confirms the change. The reported ``n_votes`` is
therefore a confirmed upper bound on the minimum; ``n_votes_estimated`` is the first-order
figure. Comparisons are the units the data hold (a vote; a tie counted as half a win for each
side is removed whole).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.data.weights import inverse_pair_count
from bayesrank.errors import BayesrankError, options_checked
from bayesrank.inference.asymptotics import jacobian
from bayesrank.inference.information import Units, information, unit_effects
from bayesrank.inference.intervals import comparison_units
from bayesrank.inference.optimize import maximise
from bayesrank.inference.structure import structure_of
from bayesrank.results.fit import Fit
from bayesrank.results.io import data_of, framework_of, method_of, model_data_of

#: Challengers considered: the items just below the top k.
CANDIDATES = 10
#: Rounds of "remove, refit, recompute" before giving up.
MAX_ROUNDS = 20


@dataclass
class Fragility:
    """How many comparisons the top ``k`` of a leaderboard rests on.

    Attributes
    ----------
    k : int
    n_votes : int or None
        Comparisons whose removal changed the top k in a refit (None: not confirmed).
    n_votes_estimated : int
        The first-order (influence-function) number.
    holder, challenger : str
        The top-k item that drops out and the item that enters.
    top_before, top_after : list of str
        The top k of the fit and of the refit without the removed comparisons.
    removed : DataFrame
        The removed comparisons: their cell (``model_a, model_b`` and any judge, position,
        covariate and contrast columns of :meth:`Comparisons.to_frame`), ``outcome`` and ``votes``.
    n_comparisons : float
        Comparisons of the fit.
    rounds : int
        Refits made.
    """

    k: int
    n_votes: int | None
    n_votes_estimated: int
    holder: str
    challenger: str
    top_before: list
    top_after: list
    removed: pd.DataFrame = field(repr=False)
    n_comparisons: float
    rounds: int

    @property
    def confirmed(self) -> bool:
        return self.n_votes is not None

    def sentence(self) -> str:
        """The figure in words, e.g. "the top spot rests on 412 of 1,374,996 votes: …"."""
        what = "the top spot" if self.k == 1 else f"the top-{self.k} set"
        if not self.confirmed:
            return (f"{what} did not change after removing {int(self.removed['votes'].sum())} votes in "
                    f"{self.rounds} refits (first-order estimate: {self.n_votes_estimated} votes).")
        return (f"{what} rests on {self.n_votes:,} of {self.n_comparisons:,.0f} votes: removing them puts "
                f"{self.challenger} ahead of {self.holder} (confirmed by a refit; first-order estimate "
                f"{self.n_votes_estimated:,}).")

    def to_dict(self) -> dict:
        return {"k": self.k, "n_votes": self.n_votes, "n_votes_estimated": self.n_votes_estimated,
                "holder": self.holder, "challenger": self.challenger, "top_before": self.top_before,
                "top_after": self.top_after, "n_comparisons": self.n_comparisons, "rounds": self.rounds,
                "confirmed": self.confirmed, "sentence": self.sentence(),
                "removed": self.removed.to_dict("records")}


def without_votes(data: Comparisons, removed: pd.DataFrame) -> Comparisons:
    """The comparisons with the votes of a :class:`Fragility` (its ``removed``) taken out: the same
    cells, fewer counts (a refit of these data checks the figure).

    Raises
    ------
    BayesrankError
        When a removed vote is not in the data.
    """
    frame = data.to_frame().reset_index(drop=True)
    keys = [c for c in removed.columns if c not in ("outcome", "votes")]
    counts = {o: np.array(getattr(data, c), dtype=float) for o, c in zip(OUTCOMES, ("wins_a", "wins_b", "ties"))}
    lookup = {tuple(row): i for i, row in enumerate(frame[keys].itertuples(index=False, name=None))}
    for row in removed.itertuples(index=False):
        cell = lookup.get(tuple(getattr(row, k) for k in keys))
        if cell is None or counts[row.outcome][cell] < row.votes:
            raise BayesrankError(f"the data have no {row.votes:g} '{row.outcome}' votes in the cell {row[:len(keys)]}.")
        counts[row.outcome][cell] -= row.votes
    return replace(data, wins_a=counts["win_a"], wins_b=counts["win_b"], ties=counts["tie"])


@options_checked
def fragility(fit: Fit, k: int = 1, candidates: int = CANDIDATES, max_rounds: int = MAX_ROUNDS) -> Fragility:
    """The fewest comparisons whose removal changes the top ``k`` (module docstring).

    Parameters
    ----------
    fit : Fit
        A MAP fit.
    k : int
        1 for the top spot, k for the top-k set.
    candidates : int
        Challengers considered (the items ranked k + 1 … k + candidates).
    max_rounds : int
        Refits before giving up.

    Returns
    -------
    Fragility
    """
    tree = fit.tree if isinstance(fit, Fit) else fit
    if method_of(tree) != "map":
        raise BayesrankError("fragility needs a MAP fit (the influence function of the MLE).")
    framework, data, prepared = framework_of(tree), data_of(tree), model_data_of(tree)
    if not 1 <= k < prepared.n_items:
        raise BayesrankError(f"k must be between 1 and {prepared.n_items - 1}, got {k}.")
    reweighted = bool(tree["estimate"].attrs.get("reweighted", 0))
    weights = inverse_pair_count(framework.prepare(data)) if reweighted else None
    units = comparison_units(framework, data, prepared, weights)
    structure = structure_of(framework, prepared, "flat")
    names = list(prepared.items)
    theta = np.asarray(tree["estimate"]["theta"].values, dtype=float)
    if not np.all(np.isfinite(theta)) or np.isnan(tree["estimate"]["score"].values).any():
        raise BayesrankError("the fit has no estimate (its MLE does not exist): nothing to perturb.")
    removed = np.zeros_like(units.counts)
    top_before = _top(structure.values(theta)["score"], k)
    estimated, holder, challenger = None, None, None
    for rounds in range(max_rounds + 1):
        now = Units(units.counts - removed, units.pseudo)
        counts = now.cell_counts()
        bound = structure.bind(replace(prepared, wins_a=counts[:, 0], wins_b=counts[:, 1], ties=counts[:, 2]))
        info = information(bound, theta, "observed")
        if rounds:
            theta = maximise(bound, theta).theta
            info = information(bound, theta, "observed")
        s = structure.values(theta)["score"]
        if rounds and _top(s, k) != top_before:
            return _result(k, int(removed.sum()), estimated, holder, challenger, top_before, _top(s, k), removed,
                           prepared, units.n, rounds, names)
        if rounds == max_rounds:
            break
        extra, pair = _cheapest(bound, theta, info, now, s, k, candidates, structure)
        if estimated is None:
            estimated, holder, challenger = int(extra.sum()), names[pair[0]], names[pair[1]]
        removed = removed + extra
    return _result(k, None, estimated, holder, challenger, top_before, _top(s, k), removed, prepared, units.n,
                   max_rounds, names)


def _top(scores: np.ndarray, k: int) -> list[int]:
    return sorted(np.argsort(-np.asarray(scores), kind="stable")[:k].tolist())


def _cheapest(bound, theta, info, units: Units, s, k, candidates, structure):
    """The comparisons to remove (``(n_cells, K)`` counts) that close the easiest margin
    between a top-k item and a challenger, to first order, and that pair (holder, challenger)."""
    order = np.argsort(-s, kind="stable")
    holders, challengers = order[:k], order[k:k + candidates]
    pairs = [(i, j) for i in holders for j in challengers]
    J = jacobian(structure, theta, "score")
    C = np.array([J[i] - J[j] for i, j in pairs])
    V = np.linalg.solve(info, C.T)
    # removing one comparison of kind (c, k) changes the margin by −cᵀ I⁻¹ s_ck
    effects = -unit_effects(bound, theta, units, V)
    best = None
    for r, (i, j) in enumerate(pairs):
        votes = _greedy(effects[:, :, r], units.counts, s[i] - s[j])
        if votes is not None and (best is None or votes.sum() < best[0].sum()):
            best = (votes, (i, j))
    if best is None:
        raise BayesrankError("no set of comparisons closes a top-k margin to first order.")
    return best


def _greedy(effect: np.ndarray, available: np.ndarray, margin: float) -> np.ndarray | None:
    """Fewest comparisons (most negative effect first) whose summed effect closes ``margin``."""
    flat_e, flat_n = effect.ravel(), available.ravel()
    usable = np.flatnonzero((flat_e < 0) & (flat_n > 0))
    order = usable[np.argsort(flat_e[usable], kind="stable")]
    cum = np.cumsum(flat_e[order] * flat_n[order])
    enough = np.flatnonzero(cum <= -margin)
    if enough.size == 0:
        return None
    last = enough[0]
    out = np.zeros_like(flat_n)
    out[order[:last]] = flat_n[order[:last]]
    before = cum[last - 1] if last else 0.0
    out[order[last]] = min(flat_n[order[last]], np.ceil((-margin - before) / flat_e[order[last]] + 1e-9))
    return out.reshape(available.shape)


def _result(k, n_votes, estimated, holder, challenger, top_before, top_after, removed, prepared, n, rounds, names):
    cells, kinds = np.nonzero(removed)
    keys = prepared.to_frame().drop(columns=["wins_a", "wins_b", "ties", "ties_bothbad"]).iloc[cells]
    table = keys.reset_index(drop=True).assign(outcome=[OUTCOMES[q] for q in kinds], votes=removed[cells, kinds])
    table = table.sort_values("votes", ascending=False, kind="stable").reset_index(drop=True)
    out_, in_ = set(top_before) - set(top_after), set(top_after) - set(top_before)
    if out_ and in_:  # the pair that actually swapped in the refit
        holder, challenger = names[min(out_)], names[min(in_)]
    return Fragility(k=k, n_votes=n_votes, n_votes_estimated=estimated, holder=holder, challenger=challenger,
                     top_before=[names[i] for i in top_before], top_after=[names[i] for i in top_after],
                     removed=table, n_comparisons=n, rounds=rounds)


__all__ = ["CANDIDATES", "Fragility", "MAX_ROUNDS", "fragility", "without_votes"]
