"""The fast path of a time fit (:class:`~bayesrank.model.dynamic.Dynamic`): expectation propagation for
the jumps' spike-and-slab prior, a Laplace approximation of the likelihood, the slab scale and the
change rate by empirical Bayes.

The model is the spike-and-slab local level of :mod:`bayesrank.model.dynamic`: raw scores r with
jumps j = D r between an item's consecutive periods with battles, each jump from the slab N(0, σ²)
(a change) with probability ρ or from the spike N(0, (κσ)²) (no change). The posterior is
approximated by a Gaussian q(r): each jump's mixture prior is replaced by a Gaussian *site*
exp(−½ τ_k j_k² + ν_k j_k) fitted by expectation propagation (Minka, "Expectation propagation for
approximate Bayesian inference", UAI 2001; for spike-and-slab priors Hernández-Lobato, Hernández-Lobato
& Dupont, "Generalized spike-and-slab priors for Bayesian group feature selection using expectation
propagation", JMLR 2013, §3), and the likelihood, which is not Gaussian, by its Laplace approximation
at the mode. Iterated to a fixed point:

1. **mode and curvature**: r̂ maximises ℓ(r) − ½ Σ_k τ_k (D r)_k² + Σ_k ν_k (D r)_k — Newton's method
   with a backtracking line search (Nocedal & Wright, *Numerical Optimization*, 2006, Alg. 3.1), the
   exact Hessian from the engine's per-cell derivatives (:mod:`bayesrank.inference.information`) plus
   the sites' Dᵀ diag(τ) D; q(r) = N(r̂, H⁻¹) with H that negative Hessian. Ordered by period, H is
   banded but for the global tie threshold, so it is factored in O(n p²)
   (:mod:`bayesrank.inference.banded`), never as a dense matrix;
2. **sites**: for each jump, its marginal N(μ_k, v_k) under q(r) (v_k from Takahashi's band of H⁻¹)
   without its own site is the *cavity* — what the comparisons and the other jumps say about j_k;
   the cavity times the mixture prior is a two-component Gaussian mixture, whose slab weight is
   P(change), q_k, and whose mean and variance the new site matches (damped by :data:`DAMPING`; a site
   whose match would have a negative precision keeps its value, as is usual in EP);
3. **hyperparameters** (empirical Bayes with the hyperpriors of :class:`~bayesrank.model.dynamic.TimePriors`):
   σ and ρ maximise the tilted mixtures' log normalising constants at the current cavities plus the
   hyperpriors' log densities (:func:`hyperparameters`).

Because q_k reads the cavity, a jump's own prior never votes on whether it is a change: a true change
is seen from the comparisons whatever the start, and a spike-shrunk jump does not stay in the spike
because it was put there. The fixed point is reached when no q_k moves by more than :data:`Q_TOL` and
σ, ρ by no more than :data:`HYPER_TOL` relatively. The answers: the posterior mean r̂ and covariance
H⁻¹ (draws from it for intervals and ranks), the jumps' means D r̂ and standard errors, and q_k, the
posterior probability of each change. A fit is a function of its framework, data, options and seed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr
from scipy.optimize import minimize

from bayesrank.data.checks import mle_existence, statistical_warnings
from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.errors import DataError, ModelSpecError
from bayesrank.inference.backend import one_thread
from bayesrank.inference.banded import Arrowhead
from bayesrank.inference.information import CellDerivatives
from bayesrank.inference.structure import Bound, structure_of
from bayesrank.inference.tree import assemble
from bayesrank.model.dynamic import CHANGE, CHANGE_SIZE, JUMP, PATH, Dynamic, Grid, TimePriors
from bayesrank.model.structures import pair_logit_scores

#: The fixed point is reached when no change probability moves by more than this in an iteration …
Q_TOL = 1e-3
#: … and the slab scale and the change rate by no more than this fraction.
HYPER_TOL = 1e-4
#: Newton's method stops when the largest entry of the log-posterior's gradient, per comparison, is
#: below this (as the MAP fit's KKT tolerance).
GRADIENT_TOL = 1e-8
#: Cap on the EP iterations (each: Newton steps to the mode, the factorisation there, the updates).
MAXITER = 500
#: Cap on the Newton steps towards the mode in one EP iteration.
MODE_STEPS = 50
#: Starting slab scale σ and change rate ρ.
START_SLAB, START_RATE = 0.5, 0.05
#: Armijo's sufficient-increase constant of the line search.
ARMIJO = 1e-4
#: Values of log σ and of logit ρ in the grid that starts the hyperparameters' search.
HYPER_GRID = 16
#: Each EP iteration moves the sites this fraction of the way to their new values (damped EP).
DAMPING = 0.8


def fit_time(framework: Dynamic, data: Comparisons, *, draws: int = 1000, random_seed: int | None = 0,
             maxiter: int = MAXITER) -> xr.DataTree:
    """Fit ratings over time by expectation propagation with a Laplace step (the module docstring).

    Parameters
    ----------
    framework : Dynamic
    data : Comparisons
        Comparisons with periods (read with ``time_column=``); ``framework.prepare`` is applied here.
    draws : int
        Draws from q(r), for intervals and ranks.
    random_seed : int, optional
        Seed of the draws.
    maxiter : int
        Cap on the EP iterations; reaching it leaves the fit unconverged (said in words).

    Returns
    -------
    xarray.DataTree
        The shape of :mod:`bayesrank.inference.tree` with ``method="map"``: ``estimate`` holds
        ``score`` (item × period, centred in every period), ``jump``, ``change_probability`` and
        ``change_size`` (item × period: the jump into each period with battles — its mean, the
        probability that it is a change and its mean if it is one —, 0 elsewhere), ``slab`` and ``rate`` and their
        ``_se`` where they have one; ``posterior`` the draws of ``score``.
        ``attrs["bayesrank_diagnostics"]`` reports ``converged``, ``iterations``, ``newton_steps``,
        ``grad_norm``, ``slab``, ``rate``, ``half_bandwidth`` and ``seconds``.

    Raises
    ------
    DataError
        When the pooled comparisons leave an item's level unbounded (a disconnected comparison graph,
        or items that never lose to the rest, such as an item seen in one win only): the levels'
        prior is flat, so the fast path's mode does not exist (:func:`bayesrank.data.checks.mle_existence`);
        the message names the items and suggests ``method="nuts"`` or more comparisons.
    """
    if not isinstance(framework, Dynamic):
        raise ModelSpecError(f"fit_time fits a Dynamic framework, got {type(framework).__name__}.")
    if not isinstance(draws, int | np.integer) or draws < 1:
        raise ModelSpecError(f"fit_time: draws must be a positive integer, got {draws!r}.")
    if random_seed is not None and (not isinstance(random_seed, int | np.integer) or random_seed < 0):
        raise ModelSpecError(f"fit_time: random_seed must be a non-negative integer, got {random_seed!r}.")
    with one_thread():
        return _fit_time(framework, data, int(draws), random_seed, int(maxiter))


@dataclass(frozen=True)
class _Pattern:
    """Where the natural information's entries and the sites' Dᵀ diag(τ) D land in the θ matrix, and
    where its entries go in the banded part's band, the border B and the corner C (:meth:`_Problem.factor`)."""

    keep: np.ndarray
    weight: np.ndarray
    at_nat: np.ndarray
    at_sites: np.ndarray
    site_of: np.ndarray
    site_value: np.ndarray
    size: int
    band: tuple
    border: tuple
    corner: tuple


class _Problem:
    """The log-posterior of the raw scores given the jumps' prior precisions d (module docstring, step 1)."""

    def __init__(self, framework: Dynamic, prepared: Comparisons):
        self.structure = structure_of(framework, prepared, "flat")
        self.bound: Bound = self.structure.bind(prepared)
        self.grid: Grid = framework.grid(prepared)
        self.n_free = self.structure.n_free
        self.n = self.grid.n_slots - 1   # banded coordinates: the slots after the first (fixed at 0)
        self.B = self.structure.natural.sparse(self.n_free)
        rows = np.arange(self.grid.n_jumps)
        to, frm = self.grid.jump_to - 1, self.grid.jump_from - 1
        keep_to, keep_from = to >= 0, frm >= 0
        self.D = sp.csr_matrix((np.concatenate([np.ones(keep_to.sum()), -np.ones(keep_from.sum())]),
                                (np.concatenate([rows[keep_to], rows[keep_from]]),
                                 np.concatenate([to[keep_to], frm[keep_from]]))),
                               shape=(self.grid.n_jumps, self.n_free))
        self.n_comparisons = float(self.bound.counts.sum())
        self._pattern = None
        self._last = None

    def _assembly(self, nat: sp.csr_matrix) -> tuple:
        """Where the entries of the natural information (its pattern is the fit's) and of the sites'
        Dᵀ diag(τ) D land in the θ matrix Bᵀ H B + Dᵀ diag(τ) D: made once, so that every Hessian costs
        two bincounts instead of sparse products. B reads each natural coordinate from at most one θ
        coordinate here (a score carried from its period with battles, or the tie threshold)."""
        if self._pattern is None:
            B = self.B.tocsr()
            if np.any(np.diff(B.indptr) > 1):
                raise RuntimeError("the time structure's natural map reads a variable from several coordinates")
            target = np.full(B.shape[0], -1, dtype=np.int64)
            weight = np.zeros(B.shape[0])
            has = np.diff(B.indptr) == 1
            target[has], weight[has] = B.indices[B.indptr[:-1][has]], B.data[B.indptr[:-1][has]]
            rows = np.repeat(np.arange(nat.shape[0]), np.diff(nat.indptr))
            r, c = target[rows], target[nat.indices]
            keep = (r >= 0) & (c >= 0)
            # Dᵀ diag(τ) D: jump k adds τ_k at (to, to) and (from, from), −τ_k at (to, from) and (from, to)
            to, frm, k = self.grid.jump_to - 1, self.grid.jump_from - 1, np.arange(self.grid.n_jumps)
            sr, sc, sk, sv = [], [], [], []
            for a, b, sign in ((to, to, 1.0), (frm, frm, 1.0), (to, frm, -1.0), (frm, to, -1.0)):
                both = (a >= 0) & (b >= 0)
                sr.append(a[both]), sc.append(b[both]), sk.append(k[both]), sv.append(np.full(both.sum(), sign))
            sr, sc, sk, sv = (np.concatenate(x) for x in (sr, sc, sk, sv))
            flat = np.concatenate([r[keep] * self.n_free + c[keep], sr * self.n_free + sc]).astype(np.int64)
            unique, inverse = np.unique(flat, return_inverse=True)
            row, col = unique // self.n_free, unique % self.n_free
            n, p = self.n, int(np.max(np.abs(row - col)[(row < self.n) & (col < self.n)], initial=0))
            upper = (row < n) & (col < n) & (row <= col)
            border = (row < n) & (col >= n)
            corner = (row >= n) & (col >= n)
            self.half_bandwidth = p
            n_nat = int(keep.sum())
            self._pattern = _Pattern(keep, weight[rows[keep]] * weight[nat.indices[keep]], inverse[:n_nat],
                                     inverse[n_nat:], sk, sv, unique.size,
                                     (upper, (p + row[upper] - col[upper]) * n + col[upper]),
                                     (border, row[border] * (self.n_free - n) + col[border] - n),
                                     (corner, (row[corner] - n) * (self.n_free - n) + col[corner] - n))
        return self._pattern

    def start(self) -> np.ndarray:
        """Every period at the item's score from the pooled comparisons (Berkson's least squares), the
        first slot's item at 0."""
        data = self.bound.data
        static = pair_logit_scores(data)
        item_of_slot = np.empty(self.grid.n_slots, dtype=np.int64)
        item_of_slot[self.grid.slot[self.grid.active]] = np.nonzero(self.grid.active)[0]
        theta = self.structure.x0.copy()
        theta[:self.n] = static[item_of_slot[1:]] - static[item_of_slot[0]]
        return theta

    def likelihood(self, theta: np.ndarray, hessian: bool = True):
        """ℓ(θ), its gradient and (``hessian``) the observed information in natural coordinates, sparse;
        kept for the last θ (an EP iteration asks for it again at the mode under new sites)."""
        key = np.asarray(theta, dtype=float).tobytes()
        if self._last is None or self._last[0] != key:
            cd = CellDerivatives.at(self.bound, theta)
            self._last = [key, float(cd.link["loglik"].sum()),
                          self.structure.natural.pull_back(cd.gradient(), self.n_free), None]
        if hessian and self._last[3] is None:
            cd = CellDerivatives.at(self.bound, theta)
            self._last[3] = cd.matrix(-cd.link["hess"], -cd.link["grad"], sparse=True)
        return self._last[1], self._last[2], self._last[3] if hessian else None

    def posterior(self, theta: np.ndarray, sites: tuple, hessian: bool = True):
        """ℓ(θ) − ½ Σ τ_k (Dθ)_k² + Σ ν_k (Dθ)_k for ``sites`` = (τ, ν), its gradient and (``hessian``)
        its negative Hessian."""
        tau, nu = sites
        loglik, grad, nat = self.likelihood(theta, hessian)
        jumps = self.D @ theta
        value = loglik - 0.5 * float(tau @ jumps**2) + float(nu @ jumps)
        grad = grad - self.D.T @ (tau * jumps - nu)
        if nat is None:
            return value, grad, None
        pattern = self._assembly(nat)
        data = (np.bincount(pattern.at_nat, nat.data[pattern.keep] * pattern.weight, pattern.size)
                + np.bincount(pattern.at_sites, tau[pattern.site_of] * pattern.site_value, pattern.size))
        return value, grad, data

    def factor(self, data: np.ndarray) -> Arrowhead:
        """The negative Hessian (its entries ``data`` in the fit's pattern, :meth:`posterior`) factored; a
        matrix that is not positive definite (a non-concave link far from its mode) is shifted by a
        multiple of the identity until it is (Nocedal & Wright, Alg. 3.3)."""
        pattern, n, g = self._pattern, self.n, self.n_free - self.n
        band, B, C = np.zeros((self.half_bandwidth + 1, n)), np.zeros((n, g)), np.zeros((g, g))
        for target, (where, at) in ((band, pattern.band), (B, pattern.border), (C, pattern.corner)):
            target.flat[at] = data[where]
        C = C + np.triu(C, 1).T
        shift = 0.0
        while True:
            try:
                return Arrowhead.from_parts(band + shift * (np.arange(band.shape[0]) == band.shape[0] - 1)[:, None],
                                            B, C + shift * np.eye(g))
            except np.linalg.LinAlgError:
                shift = 1e-3 * float(np.mean(np.abs(band[-1]))) if shift == 0.0 else 10.0 * shift

    def mode(self, theta: np.ndarray, sites: tuple) -> tuple[np.ndarray, float, int, Arrowhead]:
        """Newton's method from θ to the mode under ``sites``: ``(θ̂, largest gradient entry per comparison,
        steps taken, the factor of the negative Hessian at θ̂)``."""
        for taken in range(MODE_STEPS + 1):
            value, grad, data = self.posterior(theta, sites)
            factor = self.factor(data)
            size = float(np.max(np.abs(grad), initial=0.0)) / self.n_comparisons
            if size < GRADIENT_TOL or taken == MODE_STEPS:
                return theta, size, taken, factor
            moved = self.step(theta, sites, value, grad, factor)
            if moved is theta:   # the line search found no ascent: as far as floating point goes
                return theta, size, taken, factor
            theta = moved

    def step(self, theta: np.ndarray, sites: tuple, value: float, grad: np.ndarray, factor: Arrowhead) -> np.ndarray:
        """One Newton step from θ with a backtracking line search (Armijo's condition): the direction
        H⁻¹ ∇ from the factor of the negative Hessian at θ."""
        direction = factor.solve(grad)
        slope = float(grad @ direction)
        t = 1.0
        for _ in range(60):
            candidate = theta + t * direction
            new_value, _, _ = self.posterior(candidate, sites, hessian=False)
            if np.isfinite(new_value) and new_value >= value + ARMIJO * t * slope:
                return candidate
            t *= 0.5
        return theta

    def jump_moments(self, theta: np.ndarray, factor: Arrowhead) -> tuple[np.ndarray, np.ndarray]:
        """The jumps' means D θ̂ and variances (D H⁻¹ Dᵀ)_kk."""
        to, frm = self.grid.jump_to - 1, self.grid.jump_from - 1
        var = np.zeros(self.grid.n_jumps)
        for rows, cols, sign in ((to, to, 1.0), (frm, frm, 1.0), (to, frm, -2.0)):
            keep = (rows >= 0) & (cols >= 0)
            var[keep] += sign * factor.covariance_at(rows[keep], cols[keep])
        return self.D @ theta, np.maximum(var, 0.0)


def _fit_time(framework, data, n_draws, random_seed, maxiter) -> xr.DataTree:
    t0 = time.perf_counter()
    prepared = framework.prepare(data)
    exists, why = mle_existence(prepared)
    if not exists:   # the jumps' prior is proper but the levels' is flat: the same condition as a static fit
        raise DataError(f"fit_time: {' '.join(why)} {' '.join(time_notes(prepared, framework.grid(prepared)))}".strip())
    notes = statistical_warnings(prepared) + time_notes(prepared, framework.grid(prepared))
    problem = _Problem(framework, prepared)
    K, kappa = problem.grid.n_jumps, float(framework.spike)
    theta = problem.start()
    slab, rate = START_SLAB, START_RATE
    sites = (np.full(K, 1.0 / ((1.0 - rate) * (kappa * slab) ** 2 + rate * slab**2)), np.zeros(K))
    q = np.full(K, rate)
    steps, converged, search = 0, False, True
    for iteration in range(1, maxiter + 1):
        theta, grad_max, taken, factor = problem.mode(theta, sites)
        steps += taken
        if K == 0:
            converged = grad_max < GRADIENT_TOL
            break
        mean, var = problem.jump_moments(theta, factor)
        tilted = tilted_moments(mean, var, sites, slab, rate, kappa)
        slab_new, rate_new = hyperparameters(tilted, kappa, slab, rate, search, framework.priors)
        search = False
        moved = (np.max(np.abs(tilted.q - q)), abs(slab_new / slab - 1.0), abs(rate_new / rate - 1.0))
        q, slab, rate = tilted.q, slab_new, rate_new
        if max(moved[0] / Q_TOL, moved[1] / HYPER_TOL, moved[2] / HYPER_TOL) < 1.0 and grad_max < GRADIENT_TOL:
            converged = True
            break
        sites = tuple((1.0 - DAMPING) * old + DAMPING * new for old, new in zip(sites, tilted.sites))
    mean, var = problem.jump_moments(theta, factor) if K else (np.zeros(0), np.zeros(0))
    size = tilted.slab_mean if K else mean
    if not converged:
        notes.append(f"the EP iterations did not reach their fixed point in {maxiter} iterations (largest "
                     f"gradient entry {grad_max:.2e} per comparison): the scores and change probabilities may still "
                     "move; fit again with a larger maxiter or use method='nuts'.")
    rng = np.random.default_rng(random_seed)
    thetas = theta + factor.draws(n_draws, rng)
    diagnostics = {"converged": converged, "iterations": iteration, "newton_steps": steps, "grad_norm": grad_max,
                   "slab": slab, "rate": rate, "spike": kappa, "half_bandwidth": factor.p, "n_jumps": K,
                   "seconds": time.perf_counter() - t0}
    return _tree(framework, data, problem, theta, thetas, (mean, var, size, q), slab, rate, diagnostics, notes)


@dataclass(frozen=True)
class Tilted:
    """The EP update of every jump's site (:func:`tilted_moments`).

    Attributes
    ----------
    q : ndarray
        P(change): the slab's weight in the jump's tilted mixture.
    sites : tuple of ndarray
        The new sites (τ, ν); a site whose new precision would be negative keeps its value.
    cavity : tuple of ndarray
        The cavities' means and variances (variance ∞ where the site is as informative as the
        marginal: no cavity).
    slab_mean : ndarray
        E(j | change): the mean of the slab component of the tilted mixture (the size of a change, if
        it is one).
    """

    q: np.ndarray
    sites: tuple
    cavity: tuple
    slab_mean: np.ndarray


def tilted_moments(mean: np.ndarray, var: np.ndarray, sites: tuple, slab: float, rate: float,
                   kappa: float) -> Tilted:
    """One EP update (the module docstring, step 2): the cavity of each jump from its marginal N(mean, var)
    under q(r) and its site (τ, ν); the cavity times (1 − ρ) N(0, (κσ)²) + ρ N(0, σ²); that mixture's
    slab weight, its moments, and the site that matches them."""
    tau, nu = sites
    precision = 1.0 / var - tau
    usable = precision > 0
    v_c = np.where(usable, 1.0 / np.where(usable, precision, 1.0), np.inf)
    m_c = np.where(usable, (mean / var - nu) * np.where(np.isfinite(v_c), v_c, 0.0), 0.0)
    moments = []
    for prior_var in ((kappa * slab) ** 2, slab**2):
        total = v_c + prior_var
        log_z = -0.5 * (np.log(2 * np.pi * total) + m_c**2 / total)
        shrink = prior_var / total
        moments.append((log_z, m_c * shrink, v_c * shrink))
    (z0, mu0, w0), (z1, mu1, w1) = moments
    q = 1.0 / (1.0 + np.exp(np.clip(z0 - z1 + np.log1p(-rate) - np.log(rate), -700.0, 700.0)))
    q = np.where(usable, q, rate)
    mu = q * mu1 + (1.0 - q) * mu0
    second0, second1 = w0 + mu0**2, w1 + mu1**2
    v_t = q * second1 + (1.0 - q) * second0 - mu**2
    new_tau = 1.0 / v_t - precision
    keep = ~usable | ~(new_tau > 0) | ~np.isfinite(new_tau)
    new_nu = mu / v_t - (mean / var - nu)
    return Tilted(q, (np.where(keep, tau, new_tau), np.where(keep, nu, new_nu)), (m_c, v_c),
                  np.where(usable, mu1, mean))


def hyperparameters(tilted: Tilted, kappa: float, slab: float, rate: float, search: bool = True,
                    priors: TimePriors | None = None) -> tuple[float, float]:
    """The slab scale σ and the change rate ρ that maximise Σ_k log Z_k, the log normalising constants of
    the jumps' tilted mixtures at their current cavities N(m_k, v_k) (the part of EP's approximate
    marginal likelihood that moves with them there),
    Z_k = (1 − ρ) N(m_k; 0, v_k + (κσ)²) + ρ N(m_k; 0, v_k + σ²), plus the log densities of the
    hyperpriors ``priors`` (:class:`~bayesrank.model.dynamic.TimePriors`: LogNormal on σ, Beta on ρ — the
    NUTS model's, in the coordinates searched, log σ and ρ), so that few or weakly measured jumps do not
    carry the slab down to the spike. ρ is kept within [1/(10K), ½] for K
    jumps (at ½ the spike and the slab swap roles), σ within [10⁻³, 10³]. The objective has a local
    maximum at σ → 0, where both components are the cavities themselves, so with ``search`` (the first
    iteration) the search starts from the best point of a grid (:data:`HYPER_GRID` values of log σ and of
    logit ρ, and the current values); L-BFGS-B on (log σ, logit ρ) refines it, or the current values."""
    m, v = tilted.cavity
    usable = np.isfinite(v)
    m, v = m[usable], v[usable]
    if m.size == 0:
        return slab, rate
    low = 1.0 / (10 * tilted.q.size)

    def negatives(log_sigma, logit_rho):
        """−Σ_k log Z_k at each of the points (arrays of one shape)."""
        sigma, rho = np.exp(log_sigma)[..., None], 1.0 / (1.0 + np.exp(-logit_rho))[..., None]
        parts = []
        for weight, prior_var in ((1.0 - rho, (kappa * sigma) ** 2), (rho, sigma**2)):
            total = v + prior_var
            parts.append(np.log(weight) - 0.5 * (np.log(2 * np.pi * total) + m**2 / total))
        out = -np.sum(np.logaddexp(*parts), axis=-1)
        if priors is not None:
            sigma, rho = sigma[..., 0], rho[..., 0]
            out = out - ((priors.rate_a - 1.0) * np.log(rho) + (priors.rate_b - 1.0) * np.log1p(-rho)
                         - (np.log(sigma) - np.log(priors.slab)) ** 2 / (2.0 * priors.slab_sd**2))
        return out

    def logit(r):
        return np.log(r) - np.log1p(-r)

    start = np.array([np.log(slab), logit(rate)])
    if search:
        a, b = np.meshgrid(np.linspace(np.log(1e-2), np.log(10.0), HYPER_GRID),
                           np.linspace(logit(low), 0.0, HYPER_GRID))
        a, b = np.append(a.ravel(), start[0]), np.append(b.ravel(), start[1])
        best = int(np.argmin(negatives(a, b)))
        start = np.array([a[best], b[best]])
    found = minimize(lambda x: float(negatives(np.asarray(x[0]), np.asarray(x[1]))), start, method="L-BFGS-B",
                     bounds=[(np.log(1e-3), np.log(1e3)), (logit(low), 0.0)])
    return float(np.exp(found.x[0])), float(1.0 / (1.0 + np.exp(-found.x[1])))


def time_notes(data: Comparisons, grid: Grid) -> list[str]:
    """What the periods of the data warn of, in words: calendar periods without battles between the
    first and the last (not in the grid: a change across them is dated to the next period with
    battles), and items seen in one comparison only (their score in that period rests on it)."""
    notes = []
    gaps = _missing_periods(data.periods, data.period_unit)
    if gaps:
        shown = ", ".join(gaps[:5]) + (f" and {len(gaps) - 5} more" if len(gaps) > 5 else "")
        notes.append(f"no battles in the {data.period_unit}s starting {shown}: they are not periods of the fit, so "
                     "scores carry across them and a change there is dated to the next period with battles.")
    items = data.item_totals()
    single = items.index[items["n_comparisons"] <= 1].tolist()
    if single:
        shown = ", ".join(single[:5]) + (f" and {len(single) - 5} more" if len(single) > 5 else "")
        notes.append(f"{shown} {'was' if len(single) == 1 else 'were'} seen in one comparison only: "
                     f"{'its score rests' if len(single) == 1 else 'their scores rest'} on it (wide intervals, no "
                     "change can be seen); collect more battles or leave them out.")
    return notes


def _missing_periods(periods: tuple[str, ...], unit: str) -> list[str]:
    """Calendar periods between the first and the last of ``periods`` that are not among them."""
    if len(periods) < 2 or unit not in ("day", "week", "month"):
        return []
    freq = {"day": "D", "week": "W-MON", "month": "MS"}[unit]
    every = pd.date_range(periods[0], periods[-1], freq=freq).strftime("%Y-%m-%d")
    return sorted(set(every) - set(periods))


def _tree(framework, data, problem: _Problem, theta, thetas, jumps, slab, rate, diagnostics, notes):
    """The DataTree of a time fit (the shape of :mod:`bayesrank.inference.tree`); ``jumps``: the jumps'
    means, variances, sizes if changes, and change probabilities."""
    mean, var, if_change, q = jumps
    structure, grid, prepared = problem.structure, problem.grid, problem.bound.data
    m, T = grid.active.shape
    nmap = structure.natural
    offset, size = nmap.offsets[PATH], m * T

    def centred(thetas_):
        path = (nmap.constant[offset:offset + size][:, None] + problem.B[offset:offset + size] @ thetas_.T)
        path = path.T.reshape(-1, m, T)
        return path - path.mean(axis=1, keepdims=True)

    score = centred(theta[None])[0]
    score_draws = centred(thetas)
    on_grid = np.zeros((m, T))
    jump, jump_se, change, change_size = on_grid.copy(), on_grid.copy(), on_grid.copy(), on_grid.copy()
    jump[grid.jump_item, grid.jump_period] = mean
    change_size[grid.jump_item, grid.jump_period] = if_change
    jump_se[grid.jump_item, grid.jump_period] = np.sqrt(var)
    change[grid.jump_item, grid.jump_period] = q
    cell_log_probs = CellDerivatives.at(problem.bound, theta).link["log_probs"]
    with np.errstate(invalid="ignore"):
        loglik = float(np.where(problem.bound.counts > 0, problem.bound.counts * cell_log_probs, 0.0).sum())
    coords = {"item": pd.Index(list(prepared.items)), "period": pd.Index(list(prepared.periods)),
              "outcome": pd.Index(list(OUTCOMES)), "cell": np.arange(prepared.n_cells)}
    dims = ("item", "period")
    variables = {"score": (dims, score), "score_se": (dims, score_draws.std(axis=0, ddof=1)),
                 JUMP: (dims, jump), f"{JUMP}_se": (dims, jump_se), CHANGE: (dims, change),
                 CHANGE_SIZE: (dims, change_size),
                 "slab": ((), slab), "rate": ((), rate), "theta": ("free", theta),
                 "cell_log_probs": (("cell", "outcome"), cell_log_probs), "loglik": ((), loglik)}
    posterior_vars = {"score": (("chain", "draw", *dims), score_draws[None])}
    if "eta_raw" in nmap.names:
        at = nmap.offsets["eta_raw"]
        eta = nmap.constant[at] + (problem.B[at] @ np.vstack([theta, thetas]).T).ravel()
        variables.update(eta_raw=((), eta[0]), eta_raw_se=((), float(np.std(eta[1:], ddof=1))))
        posterior_vars["eta_raw"] = (("chain", "draw"), eta[None, 1:])
    estimate = xr.Dataset(variables, coords={k: v for k, v in coords.items()},
                          attrs={"interval": "quantile", "interval_method": "laplace", "point": "posterior mode",
                                 "covariance": "expectation propagation with a Laplace step (banded Hessian)",
                                 "pseudo_likelihood": int(framework.pseudo_likelihood), "reweighted": 0,
                                 "covariance_stored": 0, "information": "observed"})
    posterior = xr.Dataset(posterior_vars, coords={"chain": [0], "draw": np.arange(len(thetas)),
                                                   "item": coords["item"], "period": coords["period"]},
                           attrs={"inference": "draws from the Gaussian approximation q(r) (EP with a Laplace step)"})
    return assemble(framework=framework, data=data, prepared=prepared, method="map", posterior=posterior,
                    estimate=estimate, n_params=problem.n_free + 2, diagnostics=diagnostics, warnings=notes)


__all__ = ["GRADIENT_TOL", "MAXITER", "Tilted", "fit_time", "tilted_moments", "time_notes"]
