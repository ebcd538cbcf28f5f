"""What a batch of votes is for: each goal's uncertainty, and its sensitivity to the scores'
covariance.

``all-pairs``
    The A-optimal design for the scores: the uncertainty is Σ_{i<j} Var(s_i − s_j), linear in
    the scores' covariance C (m·tr C for zero-sum scores), so a vote's value is exactly the
    variance it removes.
``ranks``, ``top-k``, ``model``
    The uncertainty of the orders of a set of pairs: every pair (``ranks``), the pairs with one
    item in the current top k and one outside (``top-k``: only they decide who is in), or the
    pairs with one model (``model``: its place). For one pair, with d = s_i − s_j now
    N(d̂, σ₀²), q = P(d > 0) and after the votes a variance σ² ≤ σ₀², the order uncertainty
    q(1 − q) is expected to become, over the votes' outcomes (the pre-posterior: the future
    posterior mean is N(d̂, σ₀² − σ²)),

        E[q'(1 − q')] = q(1 − q) − Var(q') = 2 T(a, √((1 − ρ)/(1 + ρ))),

    a = d̂/σ₀, ρ = 1 − σ²/σ₀², with Owen's T function (Owen 1956, "Tables for computing
    bivariate normal probabilities"; Φ₂(a, a; ρ) = Φ(a) − 2T(a, √((1 − ρ)/(1 + ρ)))). It is
    q(1 − q) now and 0 once σ = 0, and a pair already certain (|a| large) has nothing left to
    gain. Summed over the goal's pairs it is half the expected number of those pairs that two
    draws of the scores order differently. Its derivative in σ², φ₂(a, a; ρ)/σ₀² (the bivariate
    normal density), weights each pair's difference variance in the goal's sensitivity matrix.

A goal's sensitivity D (m × m) is Σ_pairs w_ij (e_i − e_j)(e_i − e_j)ᵀ, so that a small change δC
of the scores' covariance changes the uncertainty by tr(D δC): the local linear criterion that
:func:`bayesrank.design.next_pairs.next_pairs` allocates votes by.

Where the link does not fix the scores' scale — a rescaling of the scores is undone by the judges'
discriminations (d = γ_k (s_a − s_b)), HJA's sensitivities or a Thurstonian covariance, and a
normalisation (Σ log γ = 0, trace(PΣP) = 1, …) picks one scale — the uncertainty of that scale is
an artefact of the normalisation: no order and no ratio of score differences depends on it, yet a
Gaussian would read it as uncertainty of every difference (and a noisy judge, whose γ sets the
scale under Σ log γ = 0, as the most useful one to ask). For those frameworks every goal measures
the scores' covariance with the direction of the scores themselves removed, C ↦ PCP with
P = I − ŝŝᵀ/ŝᵀŝ (:func:`scale_identified`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import owens_t

#: The goals of :func:`bayesrank.next_pairs` and what each settles.
GOALS = {
    "top-k": "which models are in the top k",
    "ranks": "every rank interval",
    "model": "one model's place",
    "all-pairs": "every score difference (A-optimal)",
}
#: ρ is kept below 1 by this much (σ → 0 makes the density of the order uncertainty infinite).
RHO_MAX = 1 - 1e-12


@dataclass(frozen=True)
class Goal:
    """A goal's pairs and its uncertainty (the module docstring).

    Attributes
    ----------
    name : str
    i, j : ndarray of int
        The pairs whose orders it settles (empty for ``all-pairs``).
    d : ndarray
        Point differences s_i − s_j of those pairs.
    sigma0 : ndarray
        Their standard deviations now (the reference of ρ).
    measure : str
        What :meth:`uncertainty` is, in words.
    """

    name: str
    i: np.ndarray
    j: np.ndarray
    d: np.ndarray
    sigma0: np.ndarray
    measure: str
    projector: np.ndarray | None = None

    def uncertainty(self, C: np.ndarray) -> float:
        """The goal's expected uncertainty once the scores' covariance is C."""
        C = self._projected(C)
        if self.name == "all-pairs":
            m = C.shape[0]
            return float(m * np.trace(C) - C.sum())
        a, rho = self._standardised(C)
        return float(2 * owens_t(a, np.sqrt((1 - rho) / (1 + rho))).sum())

    def sensitivity(self, C: np.ndarray) -> np.ndarray:
        """D with tr(D δC) the first-order change of :meth:`uncertainty` (``(m, m)``)."""
        m = C.shape[0]
        if self.name == "all-pairs":
            D = m * np.eye(m) - np.ones((m, m))
        else:
            a, rho = self._standardised(self._projected(C))
            w = np.exp(-a**2 / (1 + rho)) / (2 * np.pi * np.sqrt(1 - rho**2) * self.sigma0**2)
            D = np.zeros((m, m))
            np.add.at(D, (self.i, self.j), -w)
            D += D.T
            D[np.diag_indices(m)] = -D.sum(axis=1)
        return D if self.projector is None else self.projector @ D @ self.projector

    def _projected(self, C: np.ndarray) -> np.ndarray:
        return C if self.projector is None else self.projector @ C @ self.projector

    def _standardised(self, C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """a = d̂/σ₀ and ρ = 1 − σ²/σ₀² of the goal's pairs under the (projected) covariance C."""
        var = np.clip(C[self.i, self.i] + C[self.j, self.j] - 2 * C[self.i, self.j], 0, None)
        rho = np.clip(1 - var / self.sigma0**2, 0, RHO_MAX)
        return self.d / self.sigma0, rho


#: Frameworks whose link fixes the scores' scale (without a Thurstonian covariance).
SCALED_BY_THE_LINK = ("bt", "rao-kupper", "davidson", "btl")


def scale_identified(framework) -> bool:
    """Whether the link alone fixes the scores' scale (the module docstring): Bradley–Terry,
    Rao–Kupper and Davidson without a Thurstonian covariance, and the pooled BTL (γ ≡ 1)."""
    return framework.name in SCALED_BY_THE_LINK and getattr(framework, "k_cov", None) is None


def goal_of(name: str, score: np.ndarray, C: np.ndarray, *, k: int | None = None, model: int | None = None,
            up_to_scale: bool = False) -> Goal:
    """The goal ``name`` at point scores ``score`` with covariance ``C`` (the module docstring);
    with ``up_to_scale``, of the scores up to a common positive scale. Pairs already known exactly
    (σ₀ = 0) have no uncertainty and are left out."""
    m = score.size
    norm = float(score @ score)
    projector = np.eye(m) - np.outer(score, score) / norm if up_to_scale and norm > 0 else None
    if projector is not None:
        C = projector @ C @ projector
    order = np.argsort(-score, kind="stable")
    if name == "all-pairs":
        i = j = np.zeros(0, dtype=np.int64)
        measure = "sum over every pair of models of the variance of their score difference"
    elif name == "ranks":
        i, j = np.triu_indices(m, k=1)
        measure = "order uncertainty of every pair of models: Σ P(i above j)·P(j above i)"
    elif name == "top-k":
        top, rest = order[:k], order[k:]
        i, j = np.repeat(top, rest.size), np.tile(rest, top.size)
        measure = f"order uncertainty of every pair of one current top-{k} model and one other"
    else:
        others = np.delete(np.arange(m), model)
        i, j = np.full(others.size, model), others
        measure = "order uncertainty of the model against every other: Σ P(above)·P(below)"
    var = np.clip(C[i, i] + C[j, j] - 2 * C[i, j], 0, None)
    keep = var > 0
    i, j = i[keep].astype(np.int64), j[keep].astype(np.int64)
    return Goal(name, i, j, score[i] - score[j], np.sqrt(var[keep]), measure, projector)


__all__ = ["GOALS", "Goal", "RHO_MAX", "SCALED_BY_THE_LINK", "goal_of", "scale_identified"]
