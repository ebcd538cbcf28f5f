"""Random effects on the MAP path: τ by the Laplace marginal likelihood, the effects at their
modes, Laplace intervals.

A framework with random effects (:meth:`~bayesrank.model.framework.Framework.random_effects`:
each cluster's deviation u_g ~ ZeroSumNormal(τ), :mod:`bayesrank.model.random_effects`) has a
likelihood ℓ(s, u) in the population scores s (and the base's other parameters) and the effects
u. Given τ, the effects' prior adds −½ Σ_g ‖u_g‖²/τ² = −½ θᵀ P θ / τ², with P = B_uᵀ B_u for the
linear map B_u from the free coordinates θ to the effects' values (their block of the natural
map), so the joint mode of (s, u) is a penalised maximum likelihood found by the engine's own
optimiser (:func:`~bayesrank.inference.optimize.maximise` with ``penalty``).

τ is chosen by maximising the Laplace approximation of the marginal likelihood, u integrated
out around its mode (Bates et al. 2015, "Fitting linear mixed-effects models using lme4", §5;
the approximation of ``glmer(nAGQ = 0)``, with s at the joint mode):

    log p(y | τ) ≈ ℓ(ŝ, û) − ½ ûᵀ P û / τ² − ½ log det(H_uu + P/τ²) + ½ log det(P/τ²),

H_uu being the observed information of ℓ in the effects' coordinates at the mode. Why this and
not a joint maximum over (s, u, τ): the joint density grows without bound as τ → 0 with u = 0,
so only the marginal likelihood gives τ a maximum. Why Laplace and not quadrature: the effects
of all clusters share s, so the integral does not factor into low-dimensional ones, and the
Laplace approximation is exact for a quadratic log-likelihood and good when each cluster holds
many comparisons. The search is SciPy's bounded Brent method on log τ in
[:data:`SPREAD_MIN`, :data:`SPREAD_MAX`], each evaluation warm-started at the previous mode:
deterministic. The standard error of log τ comes from the curvature of that marginal likelihood
(central differences).

The intervals are Laplace's: Cov(θ̂) = (H + P/τ̂²)⁻¹, the inverse Hessian of the penalised
log-likelihood, which integrates over the effects (each cluster's board has its shrinkage
uncertainty) but takes τ̂ as known — with few clusters NUTS (τ's uncertainty included) says
more. A τ̂ at the lower end of the search means the data show no disagreement between the
clusters: the effects are then ≈ 0 and the population board is the pooled one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import cho_factor
from scipy.optimize import minimize_scalar

from bayesrank.data.checks import mle_existence
from bayesrank.errors import ModelSpecError
from bayesrank.inference.information import information
from bayesrank.inference.optimize import Optimum, maximise
from bayesrank.inference.structure import Bound
from bayesrank.model.framework import Framework

#: The range of the search for τ (logit scale): below the lower end the clusters' deviations are
#: negligible next to any score difference the data resolve; beyond the upper end no pooling is left.
SPREAD_MIN, SPREAD_MAX = 1e-3, 10.0
#: Tolerance of the search, in log τ.
SPREAD_TOL = 0.01
#: Step of the central differences of the marginal likelihood in log τ (its standard error).
CURVATURE_STEP = 0.05
#: The most random effects (clusters × (items − 1)) the MAP path takes: it forms their information as a
#: dense matrix (its log-determinant is the Laplace approximation's), whose memory grows with its square.
MAX_EFFECTS = 5000
#: How the covariance of a random-effects MAP fit is described (``estimate.attrs["covariance"]``).
DESCRIPTION = ("Laplace: inverse Hessian of the penalised log-likelihood at the joint mode of the scores and the "
               "clusters' random effects, τ at its maximum marginal likelihood (Laplace), taken as known")


@dataclass(frozen=True)
class Penalty:
    """The random effects' prior in θ: ½ θ_uᵀ ``gram`` θ_u / τ² on the coordinates ``columns``.

    Attributes
    ----------
    name : str
        The effects' variable.
    columns : ndarray of int
        Their coordinates in θ.
    gram : ndarray
        B_uᵀ B_u on those coordinates.
    n_free : int
    fixed : float or None
        τ when the framework fixes it.
    """

    name: str
    columns: np.ndarray
    gram: np.ndarray
    n_free: int
    fixed: float | None

    def precision(self, spread: float) -> np.ndarray:
        """P/τ² as an ``(n_free, n_free)`` matrix (zero outside the effects' coordinates)."""
        out = np.zeros((self.n_free, self.n_free))
        out[np.ix_(self.columns, self.columns)] = self.gram / spread**2
        return out


def check_effects_options(framework: Framework, kind: str, intervals: str | None, reweight: bool, cluster) -> None:
    """Refuse options a random-effects fit cannot honour: its intervals are Laplace's, and the
    dependence it allows for is its own clusters'."""
    if intervals not in (None, "wald", "none"):
        raise ModelSpecError(f"{framework.label} models the dependence within its clusters itself: its MAP intervals "
                             f"are the Laplace ones (intervals='wald', or 'none'), not {intervals!r}.")
    if cluster is not None:
        raise ModelSpecError(f"{framework.label} models the dependence within clusters of {framework.clusters()[0]!r} "
                             "itself; cluster= applies to the sandwich and bootstrap of models without random effects.")
    if kind != "observed" or reweight:
        raise ModelSpecError(f"{framework.label}: the Laplace intervals come from the observed information of the "
                             "unweighted likelihood (information='observed', reweight=False).")


def check_effects_size(framework: Framework, prepared) -> None:
    """Refuse, before any model is built, more random effects than the MAP path takes
    (:data:`MAX_EFFECTS`), saying what to do instead."""
    clusters, items = prepared.n_judges, prepared.n_items
    n = clusters * (items - 1)
    if n > MAX_EFFECTS:
        column = framework.clusters()[0]
        raise ModelSpecError(
            f"{framework.label} has {clusters:,} clusters × {items - 1} free scores = {n:,} random effects; the MAP "
            f"path's Laplace approximation forms their information as a dense matrix and takes at most "
            f"{MAX_EFFECTS:,}. For many clusters use the cluster-robust sandwich (intervals='sandwich', "
            f"cluster={column!r}: one pass over the data), random effects by a coarser column, or method='nuts'.")


def penalty_of(framework: Framework, bound: Bound) -> Penalty | None:
    """The prior of the framework's random effects in θ (:class:`Penalty`), or None without any."""
    effects = framework.random_effects()
    if not effects:
        return None
    (name, fixed), = effects.items()
    nmap = bound.structure.natural
    rows, cols, block = nmap.blocks[nmap.names.index(name)]
    B = block.dense()
    columns = np.arange(bound.n_free)[cols]
    return Penalty(name, columns, B.T @ B, bound.n_free, fixed)


@dataclass
class EffectsFit:
    """What :func:`fit_effects` found.

    Attributes
    ----------
    spread : float
        τ̂ (or the fixed τ).
    log_spread_se : float
        Standard error of log τ̂ from the marginal likelihood's curvature (NaN when τ is fixed
        or τ̂ is at the lower end of the search).
    precision : ndarray
        P/τ̂², added to the observed information for the Laplace covariance.
    diagnostics : dict
    notes : list of str
    """

    spread: float
    log_spread_se: float
    precision: np.ndarray
    diagnostics: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)


def _logdet(matrix: np.ndarray) -> float:
    """log det of a symmetric positive definite matrix (−inf where Cholesky fails)."""
    try:
        c, _ = cho_factor(matrix, check_finite=False)
    except np.linalg.LinAlgError:
        return -np.inf
    return 2.0 * float(np.sum(np.log(np.abs(np.diag(c)))))


def fit_effects(bound: Bound, penalty: Penalty, start: np.ndarray, maxiter: int) -> tuple[Optimum, EffectsFit]:
    """The joint mode at τ̂ (the module docstring), or at the framework's fixed τ.

    Returns
    -------
    Optimum
        The penalised maximum at τ̂ (``loglik``: ℓ without the prior).
    EffectsFit
    """
    cols = penalty.columns
    kept: dict[float, tuple[float, Optimum]] = {}
    state = {"theta": np.asarray(start, dtype=float)}

    def marginal(log_spread: float) -> float:
        if log_spread in kept:
            return kept[log_spread][0]
        spread = float(np.exp(log_spread))
        end = maximise(bound, state["theta"], maxiter=maxiter, penalty=penalty.precision(spread))
        state["theta"] = end.theta
        u = end.theta[cols]
        prior = penalty.gram / spread**2
        H = information(bound, end.theta, "observed")[np.ix_(cols, cols)]
        value = end.loglik - 0.5 * float(u @ prior @ u) - 0.5 * (_logdet(H + prior) - _logdet(prior))
        kept[log_spread] = (value, end)
        return value

    if penalty.fixed is not None:
        x = float(np.log(penalty.fixed))
        marginal(x)
        optimum = kept[x][1]
        return optimum, EffectsFit(penalty.fixed, float("nan"), penalty.precision(penalty.fixed),
                                   {"spread": penalty.fixed, "spread_learnt": False, "evaluations": 1,
                                    "marginal_loglik": kept[x][0]})
    low, high = np.log(SPREAD_MIN), np.log(SPREAD_MAX)
    found = minimize_scalar(lambda x: -marginal(x), bounds=(low, high), method="bounded",
                            options={"xatol": SPREAD_TOL})
    x = min(kept, key=lambda k: -kept[k][0])   # the best evaluation (the search's end is one of them)
    value, optimum = kept[x]
    at_low = x - low < 10 * SPREAD_TOL
    se = float("nan")
    notes = []
    if at_low:
        notes.append(f"the clusters show no disagreement the data can resolve: τ̂ is at the lower end of its search "
                     f"({SPREAD_MIN:g}), so the clusters' effects are ≈ 0 and the population board is the pooled one.")
    else:
        state["theta"] = optimum.theta
        h = CURVATURE_STEP
        curvature = (marginal(x + h) - 2.0 * value + marginal(x - h)) / h**2
        se = float(1.0 / np.sqrt(-curvature)) if curvature < 0 else float("nan")
        if x > high - 10 * SPREAD_TOL:
            notes.append(f"τ̂ reached the upper end of its search ({SPREAD_MAX:g} on the logit scale): the clusters "
                         "share almost nothing, and the population board is poorly defined.")
    spread = float(np.exp(x))
    diagnostics = {"spread": spread, "log_spread_se": se, "spread_learnt": True, "evaluations": len(kept),
                   "marginal_loglik": value, "search_converged": bool(found.success)}
    return optimum, EffectsFit(spread, se, penalty.precision(spread), diagnostics, notes)


def existence(bound: Bound) -> dict:
    """Whether the population scores have a penalised maximum: the effects' prior bounds every
    cluster's deviation, so only the population-level condition remains — Ford's on the graph of
    all the cells (:func:`~bayesrank.data.checks.mle_existence`; the cluster does not enter it)."""
    exists, warnings = mle_existence(bound.data)
    return {"mle_exists": exists, "warnings": warnings, "existence_check": "graph"}


def spread_values(effects: EffectsFit, n_draws: int, rng: np.random.Generator) -> tuple[float, float, np.ndarray]:
    """τ̂, its delta-method standard error τ̂ · se(log τ̂), and draws τ̂ · exp(se · z) (log-normal),
    for the fit's ``spread``; where the standard error is not known (τ fixed, or τ̂ at the end of
    its search) it is NaN and the draws are τ̂."""
    se = effects.log_spread_se
    z = rng.standard_normal(n_draws)
    draws = effects.spread * np.exp(se * z) if np.isfinite(se) else np.full(n_draws, effects.spread)
    return effects.spread, effects.spread * se, draws


__all__ = ["DESCRIPTION", "MAX_EFFECTS", "SPREAD_MAX", "SPREAD_MIN", "EffectsFit", "Penalty", "check_effects_options",
           "check_effects_size", "existence", "fit_effects", "penalty_of", "spread_values"]
