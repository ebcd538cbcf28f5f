"""Maximum a posteriori with flat priors — the maximum-likelihood estimate — and its uncertainty.

:func:`fit_map` is a short flow:

1. **prepare** the cells (the framework's data conventions; ``reweight``) and say what the data
   warn of;
2. **optimise**: a trust-region Newton method with the exact Hessian
   (:func:`~bayesrank.inference.optimize.maximise`) from the model's start, and from ``restarts``
   moved starts where the log-likelihood is not concave;
3. **assess** the end point (:func:`assess`): converged by the KKT conditions (the gradient
   vanishes and the information is positive definite on the identified directions), the MLE
   exists (:mod:`~bayesrank.inference.existence`), what the data do not identify, and where a
   run stopped short (a boundary of the model), each in words;
4. **uncertainty**, one strategy per interval method (:func:`covariance`): ``"wald"`` (the
   inverse observed information, or the expected one where the framework asks for it),
   ``"sandwich"`` and ``"bootstrap"`` (per comparison, :mod:`~bayesrank.inference.intervals`;
   with ``cluster=`` per cluster of comparisons, :mod:`~bayesrank.inference.clustered`),
   ``"none"`` (point estimates and every diagnostic, no covariance or draws) — pushed to every
   model variable by the delta method and by draws (:mod:`~bayesrank.inference.asymptotics`);
5. **assemble** the DataTree (:mod:`~bayesrank.inference.tree`).

A framework with a continuous symmetry that its constraints leave
(:meth:`~bayesrank.model.framework.Framework.gauge`: HJA's GL(r + 1)) is optimised without
steps along the symmetry and inverted in the complement of its directions at θ̂ — a chart of
the quotient — so the covariance is T (Tᵀ I T)⁻¹ Tᵀ, and every reported quantity, being
invariant under the symmetry, gets the same interval whichever complement is used.

The default interval method is the framework's: the sandwich where the likelihood is a
pseudo-likelihood (ties counted as halves) or the pairs are reweighted, or where the data carry
clusters of dependent comparisons; Wald otherwise.

A fit is a function of its framework, data, options and seed (and the installed libraries):
nothing here reads what an earlier fit did, a cache's state or the environment, and the linear
algebra runs on one BLAS thread (:mod:`bayesrank.inference.backend`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import xarray as xr
from scipy.linalg import cho_factor

from bayesrank.data.checks import judge_warnings, statistical_warnings
from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.data.weights import inverse_pair_count, reweighted
from bayesrank.errors import ModelSpecError, as_count
from bayesrank.inference import asymptotics
from bayesrank.inference.backend import one_thread
from bayesrank.inference.clustered import (
    cluster_bootstrap,
    cluster_names,
    cluster_notes,
    clustered_sandwich,
    clustered_sandwich_factor,
    describe,
    prepared_clusters,
)
from bayesrank.inference.existence import check_existence
from bayesrank.inference.information import (
    SINGULAR,
    CellDerivatives,
    cholesky_inverse,
    extreme_eigenvalues,
    information as information_matrix,
    inverse_factor,
)
from bayesrank.inference.intervals import (
    DESCRIPTIONS,
    bootstrap,
    comparison_meat,
    comparison_units,
    sandwich,
    sandwich_factor,
)
from bayesrank.inference.laplace import (
    DESCRIPTION as LAPLACE,
    check_effects_options,
    check_effects_size,
    existence as penalised_existence,
    fit_effects,
    penalty_of,
    spread_values,
)
from bayesrank.inference.optimize import MAXITER, Optimum, maximise, moved_starts
from bayesrank.inference.structure import Bound, structure_of
from bayesrank.inference.tree import assemble, coords_of, variable_dims
from bayesrank.inference.warm import starting_theta
from bayesrank.model.framework import INTERVALS, Framework
from bayesrank.model.links import TIE_LINKS

#: The KKT tolerance: an end point is stationary when the largest entry of the gradient of the
#: log-likelihood per comparison is below this.
GRADIENT_TOL = 1e-8
#: Beyond this many free coordinates a Wald or sandwich fit on the observed information keeps its
#: covariance as a factor — the triangular inverse of the information's Cholesky factor, F Fᵀ = Cov(θ̂)
#: (the sandwich's from it: :func:`~bayesrank.inference.intervals.sandwich_factor`) — and
#: never forms Cov(θ̂): standard errors are row norms of B F, draws are θ̂ + F z, and the estimate
#: group stores neither ``theta_cov`` nor the ``<name>_cov`` of :meth:`Framework.covariances`
#: (``attrs["covariance_stored"] = 0``). The results layer then takes contrasts from the draws.
DENSE_COVARIANCE_MAX = 1000
#: Runs of a multi-start fit (``restarts``) whose ends are within this many log-likelihood units per
#: comparison of each other reached the same maximum.
RESTART_AGREEMENT = 1e-10
#: How each interval method makes an interval (``estimate.attrs["interval"]``; Wald otherwise).
INTERVAL_KIND = {"bootstrap": "quantile", "none": "none"}
#: How each information matrix is described in the fit.
COVARIANCE = {
    "observed": "inverse observed information (exact Hessian)",
    "expected": "inverse plug-in expected information with the empirical design",
}


def fit_map(
    framework: Framework,
    data: Comparisons,
    *,
    intervals: str | None = None,
    information: str | None = None,
    draws: int = 1000,
    n_boot: int = 1000,
    reweight: bool = False,
    restarts: int = 0,
    random_seed: int | None = 0,
    maxiter: int = MAXITER,
    init: np.ndarray | Mapping[str, np.ndarray] | None = None,
    cluster: str | tuple[str, ...] | None = None,
) -> xr.DataTree:
    """Maximum-likelihood fit with Wald, sandwich or bootstrap uncertainty (the module docstring).

    Parameters
    ----------
    framework : Framework
        The model to fit.
    data : Comparisons
        Comparison cells (raw; ``framework.prepare`` is applied here).
    intervals : {"wald", "sandwich", "bootstrap", "none"}, optional
        How the uncertainty is computed; default: the framework's ``default_intervals``
        (``"sandwich"`` with ``reweight`` or clusters).
    information : {"observed", "expected"}, optional
        Information matrix inverted for Wald intervals (default: the framework's
        ``default_information`` — observed for the paired models, the plug-in expected
        information with the empirical design for the judge-aware models, as in their paper).
    draws : int
        Draws from the asymptotic normal (rank intervals, probabilities of orderings); with
        ``intervals="bootstrap"`` the draws are the bootstrap replicates instead.
    n_boot : int
        Bootstrap replicates.
    reweight : bool
        Weight every pair by the inverse of its comparison count (:mod:`bayesrank.data.weights`).
    restarts : int
        Further runs of the optimiser from starts moved at random (seeded by ``random_seed``), for
        a log-likelihood that is not concave (Rao–Kupper's threshold, the Thurstonian covariance,
        judge discriminations), whose maxima a run reaches depending on its start; the estimate is
        chosen by :func:`chosen_run`. Ignored for a concave log-likelihood (one maximum).
    random_seed : int, optional
        Seed of the draws, the bootstrap and the moved starts.
    maxiter : int
        Cap on the trust-region iterations of each run; reaching it leaves the fit unconverged.
    init : ndarray or mapping, optional
        Starting θ, or starting values of the natural variables by name, NaN where the model's
        own start applies (:func:`~bayesrank.inference.warm.starting_theta`: an update starts
        from the fit it updates). Default: the model's start. The start changes the optimiser's
        path, and where the log-likelihood is not concave it may change which maximum is reached.
    cluster : str or tuple of str, optional
        The cluster column(s) whose comparisons are dependent (user, prompt, judge: one, or two
        for two-way clustering), among those the data were read with (``load(...,
        cluster=...)``): ``"sandwich"`` and ``"bootstrap"`` then take clusters as the
        independent units (:mod:`~bayesrank.inference.clustered`). Default: every cluster
        column the data carry; ``()`` treats the comparisons as independent.

    Returns
    -------
    xarray.DataTree
        See :mod:`bayesrank.inference.tree`; ``attrs["bayesrank_diagnostics"]`` reports
        ``converged``, ``grad_norm``, ``iterations``, ``optimiser`` (the method and its message),
        the smallest eigenvalue of the information, ``mle_exists`` and ``seconds``; with restarts,
        ``restarts``, ``start_nlls``, ``start_grad_norms``, ``start_boundaries`` (every run's end,
        the model's own start first) and ``best_start``.
    """
    kind = information or framework.default_information
    if framework.random_effects():
        check_effects_options(framework, kind, intervals, reweight, cluster)
        names = ()
    else:
        names = cluster_names(data, cluster)
    intervals = intervals or ("sandwich" if reweight or names else framework.default_intervals)
    _check_options(framework, kind, intervals, draws, n_boot, restarts, random_seed, maxiter)
    if intervals == "bootstrap" and len(names) > 1:
        raise ModelSpecError("the cluster bootstrap resamples the clusters of one column, not two "
                             f"({', '.join(names)}): pass cluster={names[0]!r}, or intervals='sandwich' for two-way "
                             "clustering.")
    with one_thread():
        return _fit_map(framework, data, kind, intervals, draws, n_boot, reweight, restarts, random_seed,
                        maxiter, init, names)


def _check_options(framework, kind, intervals, n_draws, n_boot, restarts, random_seed, maxiter) -> None:
    """Refuse options no fit can honour, in words that name the option."""
    def count(value, least):
        return as_count(value, least) is not None

    if kind not in ("observed", "expected"):
        raise ModelSpecError(f"information must be 'observed' or 'expected', got {kind!r}.")
    if intervals not in INTERVALS:
        raise ModelSpecError(f"intervals must be one of {', '.join(INTERVALS)}, got {intervals!r}.")
    if not count(n_draws, 1):
        raise ModelSpecError(f"draws must be an integer of at least 1, got {n_draws!r}.")
    if intervals == "bootstrap" and not count(n_boot, 2):
        raise ModelSpecError(f"n_boot must be an integer of at least 2, got {n_boot!r}.")
    if not count(restarts, 0):
        raise ModelSpecError(f"restarts must be a non-negative integer, got {restarts!r}.")
    if not count(maxiter, 1):
        raise ModelSpecError(f"maxiter must be a positive integer, got {maxiter!r}.")
    if random_seed is not None and not count(random_seed, 0):
        raise ModelSpecError(f"random_seed must be a non-negative integer, got {random_seed!r}.")
    if not framework.map_supported:
        raise ModelSpecError(f"{framework.label} needs its hierarchical prior: fit it with method='nuts'.")
    symmetric = any(framework.covariances().values())
    if intervals == "bootstrap" and symmetric:
        raise ModelSpecError(f"{framework.label}: bootstrap intervals are not available for a model with a "
                             "continuous symmetry (HJA's factors); use intervals='wald' or 'sandwich'.")


def _fit_map(framework, data, kind, intervals, n_draws, n_boot, reweight, restarts, random_seed, maxiter, init,
             names):
    t0 = time.perf_counter()
    prepared = framework.prepare(data)
    if framework.random_effects():
        check_effects_size(framework, prepared)
    if intervals == "none" and framework.n_gauge(prepared):
        # its identification checks (Framework.findings) read the asymptotic-normal draws
        raise ModelSpecError(f"{framework.label}: point estimates without intervals are not available for a model "
                             "with a continuous symmetry (HJA's factors); use intervals='wald' or 'sandwich'.")
    weights = inverse_pair_count(prepared) if reweight else None
    if weights is not None:
        prepared = reweighted(prepared, weights)
    notes = statistical_warnings(prepared)
    judge_notes, near_duplicates = judge_warnings(data, getattr(framework, "ties", None) in TIE_LINKS)
    notes += judge_notes
    clusters = prepared_clusters(framework.label, prepared, names) if intervals in ("sandwich", "bootstrap") else None
    notes += cluster_notes(clusters, names, intervals)
    bound = structure_of(framework, prepared).bind(prepared)
    gauge = _gauge(framework, bound)

    penalty = penalty_of(framework, bound)
    if penalty is None:
        runs = optimise(framework, bound, init, restarts, random_seed, maxiter, gauge)
        best, effects = chosen_run(runs), None
    else:  # random effects: τ by the Laplace marginal likelihood, the joint mode at τ̂
        optimum, effects = fit_effects(bound, penalty, bound.x0 if init is None else init, maxiter)
        runs, best = [optimum], 0
        notes += effects.notes
    optimum = runs[best]
    found = assess(framework, bound, optimum, gauge, kind, intervals, maxiter, effects)
    notes += found.notes + restart_notes(framework, bound, runs, best)
    rng = np.random.default_rng(random_seed)
    spread = covariance(framework, data, bound, found, kind, intervals, weights, n_draws, n_boot, rng, maxiter,
                        clusters, names)
    notes += spread.notes
    found.diagnostics.update(spread.diagnostics)
    if spread.singular:  # the information inverted for the intervals: the parameters are not identified by it
        found.diagnostics["converged"] = False
    allowed = names if clusters is not None else ()   # the dependence the intervals allow for
    if effects is not None:
        _add_spread(found, spread, effects, intervals, rng)
        intervals, allowed = ("laplace" if intervals == "wald" else intervals), framework.clusters()
    if len(runs) > 1:
        n = prepared.n_comparisons
        found.diagnostics.update(
            restarts=restarts, start_nlls=[-run.loglik / n for run in runs],
            start_grad_norms=[run.grad_max for run in runs], best_start=best,
            start_boundaries=[framework.boundaries(prepared, bound.structure.values(run.theta)) for run in runs])
    found.diagnostics["seconds"] = time.perf_counter() - t0
    found.diagnostics["near_duplicates"] = [list(d) for d in near_duplicates]
    return _tree(framework, data, bound, found, spread, kind, intervals, reweight, notes, allowed)


def _add_spread(found: Assessment, spread: Spread, effects, intervals: str, rng: np.random.Generator) -> None:
    """The random effects' τ̂ in the fit, as the variable ``spread`` (:func:`spread_values`), with
    the search's diagnostics; the Laplace description of the covariance."""
    value, se, draws = spread_values(effects, spread.n_draws, rng)
    found.values["spread"] = np.asarray(value)
    found.diagnostics["random_effects"] = effects.diagnostics
    if intervals != "none":
        spread.se["spread"] = np.asarray(se)
        spread.sample["spread"] = draws
        spread.description = LAPLACE


def _gauge(framework: Framework, bound: Bound):
    """θ ↦ the tangent directions in θ of the symmetry the constraints leave (Framework.gauge), or
    None without one."""
    if not framework.n_gauge(bound.data):
        return None
    natural = bound.structure.natural
    return lambda theta: natural.theta_directions(framework.gauge(bound.natural(theta)), bound.n_free)


def optimise(framework: Framework, bound: Bound, init, restarts: int, random_seed, maxiter: int, gauge
             ) -> list[Optimum]:
    """The runs of the optimiser: from ``init`` (:func:`~bayesrank.inference.warm.starting_theta`)
    or the model's start, then — for a log-likelihood that is not concave — from ``restarts``
    starts moved at random (:func:`moved_starts`, seeded by ``random_seed``)."""
    start = starting_theta(bound, init)
    starts = [start]
    if restarts and not bound.structure.concave:
        starts += moved_starts(start, restarts, np.random.default_rng(None if random_seed is None
                                                                      else [random_seed, 1]))
    return [maximise(bound, s, gauge=gauge, maxiter=maxiter) for s in starts]


def chosen_run(runs: list[Optimum]) -> int:
    """The run that gives the estimate: among the runs that reached a stationary point (largest
    gradient entry below :data:`GRADIENT_TOL` per comparison; among all runs where none did), the
    first whose log-likelihood is within :data:`RESTART_AGREEMENT` per comparison of the highest —
    so a tie between runs that reached one maximum goes to the earliest, the model's own start
    first, whatever the rounding of their last digits."""
    n = runs[0].n
    stationary = [k for k, run in enumerate(runs) if run.grad_max < GRADIENT_TOL] or list(range(len(runs)))
    top = max(runs[k].loglik for k in stationary)
    return next(k for k in stationary if (top - runs[k].loglik) / n <= RESTART_AGREEMENT)


def restart_notes(framework: Framework, bound: Bound, runs: list[Optimum], best: int) -> list[str]:
    """What the runs of a multi-start fit say, in words: nothing where every run reached the
    estimate's maximum; else how many ended lower, and any that ended higher short of a stationary
    point, with the boundaries of the model where those stopped."""
    if len(runs) < 2:
        return []
    n = bound.data.n_comparisons
    top = runs[best].loglik
    lower = [run for run in runs if (top - run.loglik) / n > RESTART_AGREEMENT]
    higher = [run for run in runs if (run.loglik - top) / n > RESTART_AGREEMENT]
    if not lower and not higher:
        return []
    source = "the model's own start" if best == 0 else f"moved start {best}"
    said = [f"the log-likelihood is not concave and where the optimiser ends depends on its start ({len(runs)} runs:"
            f" the model's own start and {len(runs) - 1} moved at random; diagnostics['start_nlls']); the "
            f"estimate is the end of the run from {source}."]
    if lower:
        gap = top - min(run.loglik for run in lower)
        said.append(f"{len(lower)} of them ended at lower maxima, by up to {gap:.3g} in log-likelihood: more restarts "
                    "may find a higher one.")
    if higher:
        gap = max(run.loglik for run in higher) - top
        where = sorted({phrase for run in higher
                        for phrase in framework.boundaries(bound.data, bound.structure.values(run.theta))})
        said.append(f"{len(higher)} ended higher, by up to {gap:.3g}, but short of a stationary point"
                    + (f", at a boundary of the model ({'; '.join(where)}), where the likelihood's supremum is "
                       "approached but not attained" if where else "") + ".")
    return [" ".join(said)]


@dataclass
class Assessment:
    """What :func:`assess` found at the estimate.

    Attributes
    ----------
    theta : ndarray
    values : dict
        Every model variable at θ̂.
    observed : ndarray or None
        The observed information (in the gauge complement), None when not finite.
    factor : tuple or None
        Its Cholesky factor (``cho_factor`` form), when positive definite.
    chart : ndarray or None
        The gauge complement's basis ``(n_free, d)``, or None without a symmetry.
    mle_exists, identified, converged : bool
    notes : list of str
    diagnostics : dict
    """

    theta: np.ndarray
    values: dict
    observed: np.ndarray | None
    factor: tuple | None
    chart: np.ndarray | None
    mle_exists: bool
    identified: bool
    converged: bool
    notes: list = field(default_factory=list)
    diagnostics: dict = field(default_factory=dict)


def assess(framework: Framework, bound: Bound, optimum: Optimum, gauge, kind: str, intervals: str,
           maxiter: int, effects=None) -> Assessment:
    """Whether the end point is the MLE, in words: the KKT conditions (gradient below
    :data:`GRADIENT_TOL` per comparison; the observed information positive definite, its
    smallest eigenvalue above :data:`~bayesrank.inference.information.SINGULAR` of its largest,
    in the complement of a symmetry's directions), existence (:func:`check_existence`) and the
    boundaries of the model where a run stopped short. With random effects (``effects``:
    :class:`~bayesrank.inference.laplace.EffectsFit`) the information is the penalised one
    (their prior's precision added) and existence is the population scores'
    (:func:`bayesrank.inference.laplace.existence`)."""
    theta, n = optimum.theta, bound.data.n_comparisons
    chart = gauge_complement(gauge(theta)) if gauge is not None else None
    observed = information_matrix(bound, theta, "observed")
    if effects is not None:
        observed = observed + effects.precision
    if chart is not None:
        observed = chart.T @ observed @ chart
    finite = bool(np.all(np.isfinite(observed)))
    large = (observed.shape[0] > DENSE_COVARIANCE_MAX and kind == "observed" and intervals in ("wald", "sandwich")
             and chart is None)
    if not finite:
        eig_min, eig_max, factor, observed = float("nan"), float("nan"), None, None
    else:
        observed /= n
        eig_min, eig_max, factor = extreme_eigenvalues(observed, overwrite=large)
        observed = None if large else observed * n
    identified = bool(eig_min > SINGULAR * max(eig_max, 0.0))
    values = bound.structure.values(theta)
    check = check_existence(framework, bound, theta, values, maxiter) if effects is None else penalised_existence(bound)
    notes = check.pop("warnings")
    mle_exists = bool(check["mle_exists"])
    stationary = optimum.grad_max < GRADIENT_TOL
    if not finite:
        notes.append("the observed information is not finite at the estimate (some cells' curvature overflows: "
                     "typically tie thresholds of pairs without ties run out until their tie probability "
                     "underflows), so Wald intervals are not available; use method='nuts' (proper priors) or fewer "
                     "tie factors.")
    elif not identified and (np.isnan(eig_min) or eig_min < -SINGULAR * eig_max):
        how = ("its Cholesky factorisation failed, so its eigenvalues were not computed" if np.isnan(eig_min)
               else f"smallest eigenvalue {eig_min:.2e} per comparison")
        notes.append(f"the observed information is not positive definite at the estimate ({how}): the optimiser "
                     "stopped at a saddle point or on a flat ridge, not at a strict maximum, so Wald intervals are not "
                     "available; use restarts=K, method='nuts' (proper priors) or a simpler model.")
    elif not identified and mle_exists:
        notes.append(f"the observed information is singular (smallest eigenvalue {eig_min:.2e} per comparison): "
                     "some parameters are not identified by these data, so Wald intervals are not available; use "
                     "method='nuts' (proper priors) or a simpler model.")
    if not stationary and mle_exists:
        where = framework.boundaries(bound.data, values)
        notes.append(f"the optimiser did not converge (largest gradient entry {optimum.grad_max:.2e} per comparison "
                     f"after {optimum.iterations} trust-region iterations: {optimum.message.rstrip('.')})"
                     + (f", at a boundary of the model ({'; '.join(where)})" if where else "")
                     + ": the estimate may not be the MLE; fit again with restarts=K or use method='nuts'.")
    diagnostics = {
        "converged": bool(stationary and identified and mle_exists),
        "grad_norm": optimum.grad_max,
        "iterations": optimum.iterations,
        "optimiser": {"method": optimum.method, "message": optimum.message},
        "min_information_eigenvalue": eig_min,
        "information": kind,
        **check,
    }
    return Assessment(theta=theta, values=values, observed=observed, factor=factor, chart=chart,
                      mle_exists=mle_exists, identified=identified, converged=diagnostics["converged"],
                      notes=notes, diagnostics=diagnostics)


def gauge_complement(directions: np.ndarray | None) -> np.ndarray | None:
    """An orthonormal basis ``(n, n − g)`` of the complement of the span of ``directions`` ``(n, g)``
    (the tangent space of a symmetry's orbit), or None without a symmetry."""
    if directions is None or directions.shape[1] == 0:
        return None
    U, s, _ = np.linalg.svd(directions, full_matrices=True)
    g = int(np.sum(s > 1e-10 * max(s[0], 1e-300)))
    return U[:, g:]


@dataclass
class Spread:
    """The uncertainty of a MAP fit (:func:`covariance`).

    Attributes
    ----------
    cov : ndarray or None
        Cov(θ̂) ``(n_free, n_free)``; None on the factor path or without intervals.
    se, cross, sample : dict
        Standard errors, covariances of the :meth:`Framework.covariances` variables, and draws.
    n_draws : int
    singular : bool
        The information inverted for the intervals was singular.
    notes : list of str
    diagnostics : dict
    description : str
        How the covariance was computed, when the interval method's description needs the
        fit's own numbers (clusters); empty otherwise.
    """

    cov: np.ndarray | None
    se: dict
    cross: dict
    sample: dict
    n_draws: int
    singular: bool = False
    notes: list = field(default_factory=list)
    diagnostics: dict = field(default_factory=dict)
    description: str = ""


def covariance(framework: Framework, data: Comparisons, bound: Bound, found: Assessment, kind: str,
               intervals: str, weights, n_draws: int, n_boot: int, rng: np.random.Generator,
               maxiter: int, clusters=None, names: tuple[str, ...] = ()) -> Spread:
    """Cov(θ̂) by the interval method (the module docstring), pushed to every model variable: standard
    errors, the covariances a framework keeps for contrasts, and draws. Nothing where the MLE does not
    exist or the information is singular (NaN), nothing at all with ``intervals="none"``. With
    ``clusters`` (the prepared cells' :class:`~bayesrank.data.clusters.Clusters`) and their columns
    ``names``, the sandwich and the bootstrap take clusters as the units
    (:mod:`~bayesrank.inference.clustered`)."""
    structure, theta, n = bound.structure, found.theta, bound.data.n_comparisons
    values, chart = found.values, found.chart
    covariances = framework.covariances()
    if intervals == "none":
        return Spread(None, {}, {}, {name: np.empty((0, *np.shape(v))) for name, v in values.items()}, n_draws)
    notes, diagnostics, singular = [], {}, False
    cov = factor = None
    if found.mle_exists and found.identified and found.factor is not None:
        try:
            if found.observed is None:  # the large-model path: the factor of the information inverted in place
                factor = inverse_factor(found.factor, n)
                if intervals == "sandwich" and clusters is not None:  # a factor too, with the clusters' meat
                    factor, more, info = clustered_sandwich_factor(bound, theta, factor, clusters, names)
                    notes += more
                    diagnostics["clusters"] = info
                elif intervals == "sandwich":  # a factor too: no n × n covariance
                    units = comparison_units(framework, data, bound.data, weights)
                    factor = sandwich_factor(bound, theta, factor, units)
            else:
                if kind == "observed":
                    cov = cholesky_inverse(found.factor) / n
                else:
                    expected = information_matrix(bound, theta, "expected")
                    cov = cholesky_inverse(cho_factor(expected if chart is None else chart.T @ expected @ chart))
                bread = cov
                cov = cov if chart is None else chart @ cov @ chart.T
                if intervals == "sandwich" and clusters is not None:
                    cov, more, info = clustered_sandwich(bound, theta, found.observed, clusters, names, chart, bread)
                    notes += more
                    diagnostics["clusters"] = info
                elif intervals == "sandwich":
                    units = comparison_units(framework, data, bound.data, weights)
                    cov = sandwich(comparison_meat(bound, theta, units), found.observed, chart, bread=bread)
        except np.linalg.LinAlgError:
            cov, singular = None, True
            notes.append(f"the {kind} information is singular at the estimate: Wald intervals are not available; "
                         "use method='nuts' (proper priors) or a simpler model.")
    thetas = None
    if intervals == "bootstrap" and cov is not None:
        t_boot = time.perf_counter()
        if clusters is not None:
            thetas, boot = cluster_bootstrap(bound, theta, clusters, names[0], n_boot, rng, maxiter)
            diagnostics["clusters"] = {"n_clusters": boot.pop("n_clusters")}
        else:
            units = comparison_units(framework, data, bound.data, weights)
            thetas, boot = bootstrap(bound, theta, units, n_boot, rng, maxiter)
        boot["seconds"] = time.perf_counter() - t_boot
        diagnostics["bootstrap"] = boot
        if boot["n_failed"]:
            notes.append(f"{boot['n_failed']} of {n_boot} bootstrap resamples were left out: their maximum-likelihood "
                         "estimate does not exist or was not reached; the intervals come from the other "
                         f"{n_boot - boot['n_failed']}.")
        cov = np.cov(thetas, rowvar=False).reshape(theta.size, theta.size) if len(thetas) > 1 else cov * np.nan
    if factor is not None:
        se, cross = asymptotics.delta_method(structure, theta, factor, {})
        sample = asymptotics.draws(structure, theta, factor, n_draws, rng, upper=intervals == "wald")
    elif cov is not None and np.all(np.isfinite(cov)):
        if thetas is not None:
            se, cross, sample = asymptotics.replicates(structure, thetas, tuple(covariances))
            n_draws = len(thetas)
        else:
            root = asymptotics.covariance_factor(cov)
            se, cross = asymptotics.delta_method(structure, theta, root, covariances, cov)
            sample = asymptotics.draws(structure, theta, root, n_draws, rng)
    else:
        cov = np.full((theta.size, theta.size), np.nan)
        se = {name: np.full(np.shape(v), np.nan) for name, v in values.items()}
        cross = {name: np.full(_cov_shape(np.shape(values[name]), blocked), np.nan)
                 for name, blocked in covariances.items()}
        sample = {name: np.full((n_draws, *np.shape(v)), np.nan) for name, v in values.items()}
    if intervals == "sandwich" and np.size(se.get("score", [])) and np.all(se["score"] == 0):
        # the meat, not the data, is empty: every comparison's score vanishes at the estimate
        notes.append("the sandwich gives the scores no uncertainty (standard errors 0): every comparison's score "
                     "is 0 at the estimate (all of them ties, counted as half a win for each side), and the sandwich "
                     "rests on their spread; use intervals='wald', or a framework that models ties (Davidson, "
                     "Rao-Kupper).")
    described = describe(intervals, names, diagnostics["clusters"]["n_clusters"]) if "clusters" in diagnostics else ""
    return Spread(cov, se, cross, sample, n_draws, singular, notes, diagnostics, described)


def _tree(framework, data, bound: Bound, found: Assessment, spread: Spread, kind, intervals, reweight, notes,
          names: tuple[str, ...] = ()) -> xr.DataTree:
    """The DataTree of a MAP fit (:mod:`bayesrank.inference.tree`), with what the framework leaves
    unidentified reported as NaN, never as numbers."""
    structure, prepared, theta = bound.structure, bound.data, found.theta
    values, se, cross, sample = dict(found.values), dict(spread.se), dict(spread.cross), dict(spread.sample)
    uncertainty = intervals != "none"
    if found.chart is not None and uncertainty:  # representatives of the symmetry's orbit: a value, no uncertainty
        for name in asymptotics.moved_by(structure, theta, _gauge(framework, bound)(theta)):
            se[name] = np.full(np.shape(values[name]), np.nan)
    findings = framework.findings(prepared, values, sample) if found.mle_exists else None
    diagnostics = dict(found.diagnostics)
    if findings is not None:
        notes = notes + findings.warnings
        diagnostics.update(findings.diagnostics)
        for name in findings.hidden:  # not identified by these data: never reported as a number
            for part in (values, se, sample, cross):
                if name in part:
                    part[name] = np.full(np.shape(part[name]), np.nan)
    cell_log_probs = CellDerivatives.at(bound, theta).link["log_probs"]
    with np.errstate(invalid="ignore"):
        loglik = float(np.where(bound.counts > 0, bound.counts * cell_log_probs, 0.0).sum())
    if not found.mle_exists:  # never report an optimiser-path point as an estimate, nor its likelihood
        values = {name: np.full(np.shape(v), np.nan) for name, v in values.items()}
        cell_log_probs = np.full_like(cell_log_probs, np.nan)
        loglik = float("nan")
    stored = uncertainty and spread.cov is not None
    dims = {name: variable_dims(structure.model, name, np.shape(v)) for name, v in values.items()}
    coords = {k: pd.Index(v) if isinstance(v, list) else v for k, v in coords_of(framework, prepared).items()}
    named = {k: v for k, v in coords.items() if k in {d for ds in dims.values() for d in ds}}
    estimate = xr.Dataset(
        {
            **{name: (dims[name], np.asarray(v, dtype=float)) for name, v in values.items()},
            **{f"{name}_se": (dims[name], np.asarray(se[name], dtype=float)) for name in values if name in se},
            **{f"{name}_cov": (_cov_dims(dims[name], blocked), cross[name])
               for name, blocked in framework.covariances().items() if name in cross and stored},
            "theta": ("free", theta),
            **({"theta_cov": (("free", "free_"), spread.cov)} if stored else {}),
            "cell_log_probs": (("cell", "outcome"), cell_log_probs),
            "loglik": ((), loglik),
        },
        coords={**named, **({"item": coords["item"]} if "item" in coords else {}),
                "item_": pd.Index(list(prepared.items)), "outcome": pd.Index(list(OUTCOMES)),
                "cell": np.arange(prepared.n_cells)},
        attrs={"interval": INTERVAL_KIND.get(intervals, "wald"), "interval_method": intervals, "point": "mle",
               "information": kind, "cluster": json.dumps(list(names)),
               "covariance": spread.description or (COVARIANCE[kind] if intervals == "wald" else
                                                    DESCRIPTIONS[intervals]),
               "pseudo_likelihood": int(framework.pseudo_likelihood or reweight), "reweighted": int(reweight),
               "covariance_stored": int(stored)},
    )
    posterior = None if not uncertainty else xr.Dataset(
        {name: (("chain", "draw", *dims[name]), asymptotics.chained(v)) for name, v in sample.items()},
        coords={"chain": [0], "draw": np.arange(spread.n_draws), **named},
        attrs={"inference": "bootstrap replicates of the MLE" if "bootstrap" in diagnostics
               else "draws from the asymptotic normal of the MLE"},
    )
    return assemble(framework=framework, data=data, prepared=prepared, method="map", posterior=posterior,
                    estimate=estimate, n_params=structure.n_free - framework.n_gauge(prepared),
                    diagnostics=diagnostics, warnings=notes)


def _cov_shape(shape: tuple, blocked: bool) -> tuple:
    """Shape of a stored covariance (:meth:`~bayesrank.model.framework.Framework.covariances`)."""
    return (*shape[:1], shape[-1], shape[-1]) if blocked else (int(np.prod(shape)),) * 2


def _cov_dims(dims: tuple, blocked: bool) -> tuple:
    """Dims of a stored covariance: ``(item, item_)``, or ``(judge, item, item_)`` per block."""
    return (*dims[:1], dims[-1], f"{dims[-1]}_") if blocked else (dims[0], f"{dims[0]}_")


__all__ = ["COVARIANCE", "DENSE_COVARIANCE_MAX", "GRADIENT_TOL", "chosen_run", "fit_map", "gauge_complement"]
