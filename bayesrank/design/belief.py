"""A fit's uncertainty as a Gaussian, and how new votes would shrink it.

The fit's point (the MLE, or the posterior mean) and covariance of the natural coordinates
(the variables the predictors read) and of the scores are held as one factor G,
Cov(natural, score) = G Gᵀ: from the stored covariance of θ (a MAP fit: G = [B; J_s] L with
L Lᵀ = Cov(θ̂), B the natural map and J_s the scores' Jacobian — B's score rows where the
scores are natural), or else from the fit's draws (posterior draws, bootstrap replicates,
draws from the asymptotic normal).

Votes adding information I (natural coordinates) give, by the Gaussian (Laplace) update
linearised at the point — the large-sample posterior, or the asymptotic covariance of the MLE,
of the data with the votes added —

    Cov' = G (I + Gₙᵀ I Gₙ)⁻¹ Gᵀ,   i.e.   G' = G R⁻ᵀ with R Rᵀ = I + Gₙᵀ I Gₙ

(Woodbury's identity in factor form: G may be rank-deficient — the zero-sum scores, a
symmetry's directions — and Cov(θ̂)⁻¹ is never needed). Where the natural coordinates are
many (more than :data:`NATURAL_MAX`: the leaderbot paper's k_tie = 20 tie factors), only the
scores and the small variables are kept; the others are held at their estimates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cholesky, solve_triangular

from bayesrank.errors import BayesrankError
from bayesrank.inference.asymptotics import covariance_factor, jacobian
from bayesrank.inference.structure import Structure
from bayesrank.results.estimates import NO_INTERVALS, draws, has_intervals, point

#: Natural coordinates kept in full; beyond, only the scores and variables of at most
#: :data:`SMALL_VARIABLE` entries are (the others are held at their estimates).
NATURAL_MAX = 2000
#: See :data:`NATURAL_MAX`.
SMALL_VARIABLE = 64


@dataclass(frozen=True, eq=False)
class Belief:
    """A Gaussian over the kept natural coordinates and the scores (the module docstring).

    Attributes
    ----------
    nat : dict
        Point values of the natural variables.
    score : ndarray
        ``(m,)`` point scores.
    factor : ndarray
        ``(N + 1 + m, r)``: rows of the N kept natural coordinates, one zero row (where the
        coordinates held fixed point), then the m scores.
    index : ndarray of int
        ``(natural size,)``: each natural coordinate's row (N for those held fixed).
    """

    nat: dict
    score: np.ndarray
    factor: np.ndarray
    index: np.ndarray

    @property
    def n_kept(self) -> int:
        """N + 1: the kept natural coordinates and the zero row."""
        return self.factor.shape[0] - self.score.size

    def natural_covariance(self) -> np.ndarray:
        """``(N + 1, N + 1)``."""
        F = self.factor[:self.n_kept]
        return F @ F.T

    def score_covariance(self) -> np.ndarray:
        """``(m, m)``."""
        S = self.factor[self.n_kept:]
        return S @ S.T

    def cross_covariance(self) -> np.ndarray:
        """``(N + 1, m)``: Cov(natural, score)."""
        return self.factor[:self.n_kept] @ self.factor[self.n_kept:].T

    def with_votes(self, rows: np.ndarray, factors: np.ndarray, votes: np.ndarray) -> Belief:
        """The belief after ``votes[j]`` more votes of each candidate j (rows ``(k, L)`` in this
        belief's indexing, factors ``(k, L, P)``): G' = G R⁻ᵀ, or, when the votes' information has
        rank q below a quarter of G's columns, G' = G (I + VVᵀ)^(−½) with V = Gₙᵀ Z (Z Zᵀ the
        information) taken in V's span — O(q) products instead of O(r)."""
        N1 = self.n_kept
        pick = votes > 0
        rows, factors, votes = rows[pick], factors[pick], votes[pick]
        if not votes.size:
            return self
        F = self.factor[:N1]
        live = rows < N1 - 1                                    # the coordinates held fixed learn nothing
        weighted = factors * np.sqrt(votes)[:, None, None] * live[:, :, None]
        k, L, P = weighted.shape
        if k * P * 4 <= F.shape[1]:
            Z = np.zeros((N1, k * P))
            np.add.at(Z, (np.repeat(rows, P, axis=1).reshape(k, L, P),
                          np.broadcast_to(np.arange(k * P).reshape(k, 1, P), (k, L, P))), weighted)
            Qv, Rv = np.linalg.qr(F.T @ Z)
            w, E = np.linalg.eigh(np.eye(Rv.shape[0]) + Rv @ Rv.T)
            shrink = np.eye(w.size) - (E / np.sqrt(w)) @ E.T       # I − (I + Rv Rvᵀ)^(−½)
            factor = self.factor - (self.factor @ Qv) @ shrink @ Qv.T
            return Belief(self.nat, self.score, factor, self.index)
        block = np.einsum("clp,ckp->clk", weighted, weighted)
        flat = (rows[:, :, None] * N1 + rows[:, None, :]).ravel()
        info = np.bincount(flat, block.ravel(), minlength=N1 * N1).reshape(N1, N1)
        M = F.T @ info @ F
        M[np.diag_indices_from(M)] += 1.0
        R = cholesky((M + M.T) / 2, lower=True)
        return Belief(self.nat, self.score, solve_triangular(R, self.factor.T, lower=True).T, self.index)


def belief_of(tree, structure: Structure) -> Belief:
    """The Gaussian of a fit (the module docstring).

    Raises
    ------
    BayesrankError
        A fit without intervals (point estimates only), or without an estimate.
    """
    if not has_intervals(tree):
        raise BayesrankError("choosing the next pairs needs the fit's uncertainty, and " + NO_INTERVALS)
    nmap = structure.natural
    nat = {name: np.asarray(point(tree, name), dtype=float) for name in nmap.names}
    score = np.asarray(point(tree, "score"), dtype=float)
    if not all(np.all(np.isfinite(v)) for v in (score, *nat.values())):
        raise BayesrankError("the fit has no estimate to plan from (its maximum-likelihood estimate does not exist "
                             "or is not identified; see fit.warnings): add comparisons that connect the items, or "
                             "refit with method='nuts'.")
    keep = np.zeros(nmap.size, dtype=bool)
    for name in nmap.names:
        size = int(np.prod(nmap.shapes[name])) if nmap.shapes[name] else 1
        if nmap.size <= NATURAL_MAX or name == "score" or size <= SMALL_VARIABLE:
            keep[nmap.offsets[name]:nmap.offsets[name] + size] = True
    index = np.full(nmap.size, int(keep.sum()), dtype=np.int64)
    index[keep] = np.arange(int(keep.sum()))
    estimate = tree["estimate"]
    cov = estimate["theta_cov"].values if "theta_cov" in estimate else None
    if cov is not None and np.all(np.isfinite(cov)):
        L = covariance_factor(cov)
        F = nmap.push_forward(L)[keep]
        if "score" in nmap.names:
            S = nmap.push_forward(L)[nmap.offsets["score"]:nmap.offsets["score"] + score.size]
        else:
            S = jacobian(structure, estimate["theta"].values, "score") @ L
    else:
        columns = [draws(tree, name).reshape(-1, nat[name].size) for name in nmap.names]
        X = np.concatenate([np.concatenate(columns, axis=1)[:, keep], draws(tree, "score")], axis=1)
        X = X - X.mean(axis=0)
        R = np.linalg.qr(X, mode="r")                              # XᵀX = RᵀR
        G = R.T / np.sqrt(max(len(X) - 1, 1))
        F, S = G[:int(keep.sum())], G[int(keep.sum()):]
    factor = np.concatenate([F, np.zeros((1, F.shape[1])), S])
    return Belief(nat, score, factor, index)


__all__ = ["Belief", "NATURAL_MAX", "SMALL_VARIABLE", "belief_of"]
