"""The comparisons a next vote could be, and the Fisher information one vote of each adds.

A candidate is a pair of items (a, b) — and for judge fits the judge asked, and for fits with a
position effect which item is shown first. One comparison of a candidate cell c adds to the
information of the variables its predictors read (the natural coordinates, nat = c + Bθ)

    I_c = s_c · J_cᵀ W_c J_c,     W_c = Σ_o P_co ∇_p log P_co ∇_p log P_coᵀ,

with J_c the Jacobian of the cell's predictors p = (d[, h]) in its local natural values and W_c
the link's Fisher information per comparison (:func:`~bayesrank.inference.information.fisher_weights`,
the weight of the expected information): every outcome the link scores is an outcome — with a
tie model (Rao–Kupper, Davidson) a tie informs the scores and the tie threshold, it is not a
lost vote. s_c is the number of likelihood counts one vote is expected to add under the
framework's outcome map (:meth:`~bayesrank.model.framework.Framework.outcome_map`):

* 1 for a tie model, and for Bradley–Terry with ties as halves (a tie adds ½ + ½);
* for Bradley–Terry with ties dropped, the share of decisive votes: a tie is lost there;
* times the share of votes that are not "both bad" verdicts, which the data layer leaves out
  (both read from the fit's data, per judge for judge fits).

Each I_c is kept as a factor U_c (local rows × P, I_c = U_c U_cᵀ), P ≤ 2 columns: every
candidate touches a handful of natural coordinates, so its effect on a covariance is a small
gather, never a product with the whole matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import FIRST_A, Comparisons
from bayesrank.inference.information import CellDerivatives, fisher_weights
from bayesrank.inference.structure import Structure


@dataclass(frozen=True, eq=False)
class Candidates:
    """Candidate comparisons and the information one vote of each adds.

    Attributes
    ----------
    table : DataFrame
        ``model_a, model_b`` (+ ``judge``, + ``first``: the item shown first, for fits with a
        position effect), one row per candidate.
    a, b : ndarray of int
        Item indices.
    rows : ndarray of int
        ``(n, L)`` natural coordinates each candidate's predictors read.
    factors : ndarray
        ``(n, L, P)`` U with U Uᵀ = the information of one vote in those coordinates.
    probs : ndarray
        ``(n, 3)`` predicted P(a wins), P(b wins), P(tie) at the fit's point.
    per_vote : ndarray
        ``(n,)`` s_c, the likelihood counts one vote is expected to add (the module docstring).
    """

    table: pd.DataFrame
    a: np.ndarray
    b: np.ndarray
    rows: np.ndarray
    factors: np.ndarray
    probs: np.ndarray
    per_vote: np.ndarray

    def subset(self, keep: np.ndarray) -> Candidates:
        """The candidates selected by a boolean mask."""
        return Candidates(self.table[keep].reset_index(drop=True), self.a[keep], self.b[keep], self.rows[keep],
                          self.factors[keep], self.probs[keep], self.per_vote[keep])


def candidate_cells(prepared: Comparisons, ordered: bool, judges: list[int] | None) -> tuple[dict, pd.DataFrame]:
    """Per-cell arrays (fit's indexing) and names of every candidate: each pair of items (both
    orders when ``ordered``, item a shown first), for each judge in ``judges`` (judge fits);
    covariates and contrasts at 0 (a standardised covariate's mean; answers alike in style)."""
    m = prepared.n_items
    i, j = np.nonzero(~np.eye(m, dtype=bool)) if ordered else np.triu_indices(m, k=1)
    n_pairs = i.size
    judge = None
    if prepared.judges is not None:
        judge = np.repeat(np.asarray(judges, dtype=np.int64), n_pairs)
        i, j = np.tile(i, len(judges)), np.tile(j, len(judges))
    n = i.size
    cells = {"item_a": i.astype(np.int64), "item_b": j.astype(np.int64)}
    names = np.asarray(prepared.items, dtype=object)
    table = pd.DataFrame({"model_a": names[i], "model_b": names[j]})
    if judge is not None:
        cells["judge_index"] = judge
        table["judge"] = np.asarray(prepared.judges, dtype=object)[judge]
    if prepared.first is not None:
        cells["first"] = np.full(n, FIRST_A, dtype=np.int64)
        if ordered:
            table["first"] = table["model_a"]
    if prepared.covariates is not None:
        cells["covariates"] = np.zeros((n, prepared.covariates.shape[1]))
    if prepared.contrasts is not None:
        cells["contrasts"] = np.zeros((n, prepared.contrasts.shape[1]))
    return cells, table


def vote_shares(framework, given: Comparisons, judges: tuple[str, ...] | None) -> tuple[np.ndarray, np.ndarray]:
    """Per judge (one entry without judges): the share of votes that are ties among those the
    models see, and the share that the likelihood sees at all (not "both bad")."""
    k = 1 if judges is None else len(judges)
    if judges is None or given.judge is None:
        index = np.zeros(given.n_cells, dtype=np.int64)
    else:
        lookup = {name: q for q, name in enumerate(judges)}
        index = np.array([lookup[name] for name in np.asarray(given.judges, dtype=object)[given.judge]],
                         dtype=np.int64)
    seen = np.bincount(index, given.totals, minlength=k)
    ties = np.bincount(index, given.ties, minlength=k)
    bothbad = np.bincount(index, given.ties_bothbad, minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        tie_share = np.where(seen > 0, ties / seen, 0.0)
        kept = np.where(seen + bothbad > 0, seen / (seen + bothbad), 1.0)
    return tie_share, kept


def candidates(structure: Structure, framework, prepared: Comparisons, given: Comparisons, nat: dict, *,
               judges: list[int] | None = None) -> Candidates:
    """Every candidate comparison of a fit and the information one vote of each adds (the
    module docstring), at the natural values ``nat``.

    Parameters
    ----------
    structure : Structure
        The framework's structure for data shaped like ``prepared``.
    framework : Framework
    prepared : Comparisons
        The cells the fit's likelihood saw.
    given : Comparisons
        The comparisons as given to the fit (their tie and "both bad" shares).
    nat : dict
        Point values of the natural variables.
    judges : list of int, optional
        Judges to consider (indices; default every judge of a judge fit).
    """
    ordered = bool(getattr(framework, "position_bias", False)) and prepared.first is not None
    if prepared.judges is not None and judges is None:
        judges = list(range(len(prepared.judges)))
    cells, table = candidate_cells(prepared, ordered, judges)
    cd = CellDerivatives(structure, nat, cells)
    n = len(table)
    W = fisher_weights(cd, np.ones(n))                                   # (n, P, P)
    probs = np.exp(cd.link["log_probs"])
    # the rows every predictor reads, side by side, and the (P, L) Jacobian with each predictor's block
    rows = np.concatenate([cd.rows[name] for name in cd.names], axis=1)
    P, L = len(cd.names), rows.shape[1]
    J = np.zeros((n, P, L))
    at = 0
    for q, name in enumerate(cd.names):
        width = cd.rows[name].shape[1]
        J[:, q, at:at + width] = cd.jac[name]
        at += width
    # one vote's expected likelihood counts, s_c
    tie_share, kept = vote_shares(framework, given, prepared.judges)
    judge = cells.get("judge_index", np.zeros(n, dtype=np.int64))
    Y = framework.outcome_map()
    if framework.link == "bt":   # no tie probability in the model: the data's share of ties
        tau = tie_share[judge]
        raw = np.column_stack([(1 - tau) * probs[:, 0], (1 - tau) * probs[:, 1], tau])
    else:
        raw = probs
    per_vote = kept[judge] * (raw @ Y.sum(axis=1))
    # U = Jᵀ W^½ √s: W's symmetric square root per candidate
    w, V = np.linalg.eigh(W)
    root = V * np.sqrt(np.clip(w, 0, None))[:, None, :]                 # (n, P, P): root rootᵀ = W
    factors = np.einsum("cpl,cpk->clk", J, root) * np.sqrt(per_vote)[:, None, None]
    return Candidates(table=table, a=cells["item_a"], b=cells["item_b"], rows=rows, factors=factors,
                      probs=probs, per_vote=per_vote)


__all__ = ["Candidates", "candidate_cells", "candidates", "vote_shares"]
