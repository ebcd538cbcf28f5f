"""The HJA paper's own estimator, for cross-checks: the proximal anchored alternating MLE
(Algorithm 1 with ReAnchor, digest ``seed-hja.md`` §3.2–§3.4), and the authors' pseudo-inverse
intervals (§5.4 (a)), for replication.

The package's HJA estimate is the PyMC MAP (:func:`bayesrank.inference.map.fit_map`) on the
factors of :mod:`bayesrank.model.hja`. This module reaches the same maximum a second way, in
the paper's coordinates θ = (γ, μ, U, V):

1. judge block: (γ, U) [with the per-judge δ_k, η_k] maximise ℓ − (τ/2)‖· − ·ᵗ‖² subject to
   1ᵀγ = K, 1ᵀU = 0, in reduced zero-sum coordinates (γ = 1 + Z g, U = Z W, Z an orthonormal
   zero-sum basis, so the proximal term is the same in both coordinates);
2. item block: (μ, V) likewise with 1ᵀμ = 0, Vᵀ1 = 0;
3. ReAnchor: the S-preserving move to Condition 1 — which is the constructive canonical map
   of S (:func:`bayesrank.model.hja.canonical`) once 1ᵀγ = K and 1ᵀU = 0 hold; it fails when
   ‖μ‖² or σ_r is below 1e-8, and then the iteration is redone with τ × 10 (the paper's rule;
   the authors' code raises instead);
4. stop when |ℓᵗ⁺¹ − ℓᵗ| / (1 + |ℓᵗ|) < ``tol``.

Each block is a concave problem solved by the package's one optimiser
(:func:`~bayesrank.inference.optimize.maximise`, L-BFGS-B then Newton) with the exact block
Hessian. The log-likelihood, its gradient and Hessian are the framework's own per-cell kernels
evaluated at the natural values A = [γ, U], B = [μ, V] (d = A_k·(B_a − B_b) = γ_k(μ_a − μ_b) +
U_k(V_a − V_b)ᵀ), so nothing of the likelihood is written here. The start is the framework's
(its judges' empirical logits truncated to rank r + 1) where the paper fits pooled and
judge-wise BTL; the paper's stopping rule (tol 5e-5, at most 40 steps on real data) is looser
than the default here, which is set for cross-checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import ModelSpecError
from bayesrank.inference.compiled import Structure, compiled
from bayesrank.inference.information import CellDerivatives, natural_information
from bayesrank.inference.optimize import maximise
from bayesrank.model.hja import HJA, Canonical, canonical
from bayesrank.model.structures import zero_sum_basis

#: ReAnchor's tolerances δ_μ (on ‖μ‖²) and δ_σ (on σ_r), as in the authors' code.
REANCHOR_TOL = 1e-8
#: Factor by which τ grows when ReAnchor fails.
TAU_GROWTH = 10.0


@dataclass(frozen=True)
class AlternatingResult:
    """The alternating solver's estimate and its path.

    Attributes
    ----------
    estimate : Canonical
        (γ, μ, U, V) satisfying Condition 1.
    extras : dict
        Per-judge ``delta`` / ``eta`` when the framework has them.
    judges, items : tuple of str
        In the order of the prepared data.
    loglik : float
        Log-likelihood at the estimate (the same normalisation as a fit's ``loglik``).
    nll_history : ndarray
        Mean negative log-likelihood per comparison after each iteration (index 0: the start).
    tau_history : ndarray
        τ used at each iteration.
    iterations : int
    converged : bool
        The relative change fell below ``tol`` within ``max_steps``.
    """

    estimate: Canonical
    extras: dict
    judges: tuple
    items: tuple
    loglik: float
    nll_history: np.ndarray
    tau_history: np.ndarray
    iterations: int
    converged: bool


class _Blocks:
    """The likelihood of θ = (γ, μ, U, V[, δ, η]) through the framework's kernels, and the two
    blocks' reduced coordinates."""

    def __init__(self, structure: Structure, cells, counts, rank: int):
        self.structure, self.cells, self.counts, self.rank = structure, cells, counts, rank
        nmap = structure.natural
        self.K, q = nmap.shapes["judge_factor"]
        self.N = nmap.shapes["item_factor"][0]
        self.extras = [name for name in nmap.names if name not in ("judge_factor", "item_factor")]
        ZK, ZN = zero_sum_basis(self.K), zero_sum_basis(self.N)
        # natural rows and the linear map x ↦ natural values of each block (row-major vec)
        self.judge_rows = np.concatenate([_rows(nmap, "judge_factor")] + [_rows(nmap, e) for e in self.extras])
        self.item_rows = _rows(nmap, "item_factor")
        judge_map = np.kron(ZK, np.eye(q))
        extra = sum(int(np.prod(nmap.shapes[e])) for e in self.extras)
        self.judge_map = np.block([[judge_map, np.zeros((judge_map.shape[0], extra))],
                                   [np.zeros((extra, judge_map.shape[1])), np.eye(extra)]])
        self.item_map = np.kron(ZN, np.eye(q))
        self.judge_offset = np.zeros(len(self.judge_rows))
        self.judge_offset[: self.K * q: q] = 1.0  # γ = 1 + Z g
        self.size = nmap.size

    def natural(self, theta: dict) -> dict:
        values = {"judge_factor": np.column_stack([theta["gamma"], theta["U"]]),
                  "item_factor": np.column_stack([theta["mu"], theta["V"]])}
        values.update({e: theta[e] for e in self.extras})
        return values

    def derivatives(self, theta: dict) -> CellDerivatives:
        return CellDerivatives(self.structure, self.natural(theta), self.cells, self.counts)

    def loglik(self, theta: dict) -> float:
        return float(self.derivatives(theta).link["loglik"].sum())

    # ------------------------------------------------------------------ reduced coordinates
    def to_block(self, theta: dict, block: str) -> np.ndarray:
        flat = self._flat(theta)
        if block == "judge":
            return self.judge_map.T @ (flat[self.judge_rows] - self.judge_offset)
        return self.item_map.T @ flat[self.item_rows]

    def from_block(self, theta: dict, block: str, x: np.ndarray) -> dict:
        flat = self._flat(theta)
        if block == "judge":
            flat[self.judge_rows] = self.judge_offset + self.judge_map @ x
        else:
            flat[self.item_rows] = self.item_map @ x
        values = self.structure.natural.unflatten(flat)
        A, B = values["judge_factor"], values["item_factor"]
        out = {"gamma": A[:, 0], "U": A[:, 1:], "mu": B[:, 0], "V": B[:, 1:]}
        out.update({e: values[e] for e in self.extras})
        return out

    def _flat(self, theta: dict) -> np.ndarray:
        nmap, values = self.structure.natural, self.natural(theta)
        flat = np.zeros(self.size)
        for name in nmap.names:
            flat[_rows(nmap, name)] = np.ravel(values[name])
        return flat

    def block_problem(self, theta: dict, block: str, tau: float):
        """(ℓ − proximal term with its gradient, its exact Hessian, start) in reduced coordinates."""
        rows, T = (self.judge_rows, self.judge_map) if block == "judge" else (self.item_rows, self.item_map)
        x0 = self.to_block(theta, block)

        def logp_dlogp(x):
            cd = self.derivatives(self.from_block(theta, block, x))
            step = x - x0
            return (float(cd.link["loglik"].sum()) - 0.5 * tau * step @ step,
                    T.T @ cd.gradient()[rows] - tau * step)

        def hessian(x):
            cd = self.derivatives(self.from_block(theta, block, x))
            info = natural_information(cd, self.counts, "observed")[np.ix_(rows, rows)]
            return -(T.T @ info @ T) - tau * np.eye(T.shape[1])

        return logp_dlogp, hessian, x0


def _rows(nmap, name) -> np.ndarray:
    size = int(np.prod(nmap.shapes[name])) if nmap.shapes[name] else 1
    return nmap.offsets[name] + np.arange(size)


def reanchor(theta: dict, rank: int) -> dict | None:
    """ReAnchor (Alg. C.2): the same S in Condition 1 coordinates, or None when ‖μ‖² or σ_r is
    below :data:`REANCHOR_TOL`."""
    S = theta["gamma"][:, None] * theta["mu"][None, :] + theta["U"] @ theta["V"].T
    can = canonical(S, rank)
    if can.mu @ can.mu < REANCHOR_TOL or (rank and can.singular_values[-1] < REANCHOR_TOL):
        return None
    return {**theta, "gamma": can.gamma, "mu": can.mu, "U": can.U, "V": can.V}


def fit_alternating(framework: HJA, data: Comparisons, *, tau: float = 30.0, tol: float = 1e-13,
                    max_steps: int = 2000, tau_schedule=None) -> AlternatingResult:
    """The paper's proximal anchored alternating MLE (module docstring).

    Parameters
    ----------
    framework : HJA
    data : Comparisons
        Raw comparisons (``framework.prepare`` is applied here).
    tau : float
        Proximal parameter τ (the paper's default on real data: 30).
    tol : float
        Stop when the relative change of the log-likelihood is below this (paper: 5e-5).
    max_steps : int
        Iteration cap (paper: 2000 in simulations, 40 on real data).
    tau_schedule : callable, optional
        t ↦ τ^(t) (default: constant ``tau``); ReAnchor failures multiply it by 10 from then on.

    Returns
    -------
    AlternatingResult
    """
    if not isinstance(framework, HJA):
        raise ModelSpecError(f"the alternating solver fits HJA models, not {framework.label}.")
    if tau <= 0:
        raise ModelSpecError(f"tau must be positive, got {tau}.")
    prepared = framework.prepare(data)
    structure = compiled(framework, prepared, "flat")
    bound = structure.bind(prepared)
    blocks = _Blocks(structure, bound.cells, bound.counts, framework.rank)
    n = prepared.n_comparisons
    start = structure.natural.unflatten(structure.natural(bound.x0))
    S0 = start["judge_factor"] @ start["item_factor"].T
    can = canonical(S0, framework.rank)
    theta = {**{name: np.zeros(structure.natural.shapes[name]) for name in blocks.extras},
             "gamma": can.gamma, "mu": can.mu, "U": can.U, "V": can.V}
    current = blocks.loglik(theta)
    history, taus, boost, converged, t = [-current / n], [], 1.0, False, 0
    for t in range(max_steps):
        tau_t = (tau if tau_schedule is None else float(tau_schedule(t))) * boost
        while True:
            trial = theta
            for block in ("judge", "item"):
                logp_dlogp, hessian, x0 = blocks.block_problem(trial, block, tau_t)
                x, _ = maximise(logp_dlogp, hessian, x0, n)
                trial = blocks.from_block(trial, block, x)
            anchored = reanchor(trial, framework.rank)
            if anchored is not None:
                break
            boost *= TAU_GROWTH
            tau_t *= TAU_GROWTH
        theta, previous, current = anchored, current, blocks.loglik(anchored)
        history.append(-current / n)
        taus.append(tau_t)
        if abs(current - previous) / (1 + abs(previous)) < tol:
            converged = True
            break
    estimate = canonical(theta["gamma"][:, None] * theta["mu"][None, :] + theta["U"] @ theta["V"].T, framework.rank)
    return AlternatingResult(estimate=estimate, extras={e: theta[e] for e in blocks.extras},
                             judges=prepared.judges, items=prepared.items, loglik=current,
                             nll_history=np.array(history), tau_history=np.array(taus), iterations=t + 1,
                             converged=converged)


def pinv_intervals(framework: HJA, data: Comparisons, estimate: Canonical, extras: dict | None = None) -> dict:
    """The authors' covariance (§5.4 (a)): the pseudo-inverse of the plug-in expected information
    in the ambient coordinates (γ, μ, vec U, vec V[, δ, η]) at a canonical estimate, read with
    coordinate gradients. For replication only: it ignores the curvature of Condition 1, which
    makes the variances of μ_i − μ_j and γ_k too small (the S contrasts are right).

    Returns
    -------
    dict
        ``gamma_se`` (K,) and ``score_cov`` (N × N, of μ), judges and items in the prepared order.
    """
    prepared = framework.prepare(data)
    structure = compiled(framework, prepared, "flat")
    bound = structure.bind(prepared)
    blocks = _Blocks(structure, bound.cells, bound.counts, framework.rank)
    theta = {"gamma": estimate.gamma, "mu": estimate.mu, "U": estimate.U, "V": estimate.V,
             **{e: np.asarray((extras or {})[e], float) for e in blocks.extras}}
    cov = np.linalg.pinv(natural_information(blocks.derivatives(theta), bound.counts, "expected"), hermitian=True)
    nmap, q = structure.natural, framework.n_factors
    gamma_rows = nmap.offsets["judge_factor"] + q * np.arange(blocks.K)
    mu_rows = nmap.offsets["item_factor"] + q * np.arange(blocks.N)
    return {"gamma_se": np.sqrt(np.diag(cov)[gamma_rows]), "score_cov": cov[np.ix_(mu_rows, mu_rows)]}


__all__ = ["AlternatingResult", "fit_alternating", "pinv_intervals", "reanchor"]
