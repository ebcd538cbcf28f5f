"""Maximum a posteriori with flat priors — the maximum-likelihood estimate — and its asymptotics.

The log-likelihood and gradient are the PyMC model's own graph compiled on the free
coordinates θ (scores in zero-sum coordinates, unconstrained tie parameters), with the data
as inputs; :func:`~bayesrank.inference.optimize.maximise` drives them to the MLE with the
exact Hessian of :mod:`~bayesrank.inference.information`. The covariance is the inverse
information on θ (observed by default; the framework may ask for the expected one), pushed
to every model variable by the delta method and by draws from the asymptotic normal
(:mod:`~bayesrank.inference.asymptotics`). A framework with a continuous symmetry that its
constraints leave (:meth:`~bayesrank.model.framework.Framework.gauge`: HJA's GL(r + 1)) is
fitted and inverted in the complement of the symmetry's directions at θ̂ — a chart of the
quotient — so the covariance is T (Tᵀ I T)⁻¹ Tᵀ, and every reported quantity, being invariant
under the symmetry, gets the same Wald interval whichever complement is used. The result is
a DataTree of the shape of :mod:`~bayesrank.inference.tree`.

Three interval methods (``intervals=``): ``"wald"`` (the inverse information above),
``"sandwich"`` and ``"bootstrap"`` (:mod:`~bayesrank.inference.intervals`, per comparison).
The default is the framework's: the sandwich where the likelihood is a pseudo-likelihood
(ties counted as halves) or the pairs are reweighted, Wald otherwise. ``intervals="none"``
gives point estimates only: the MLE with every diagnostic (the information's smallest
eigenvalue, existence, convergence), but no covariance, no standard errors and no
``posterior`` group of draws (``estimate.attrs["interval"] = "none"``; the results layer then
makes leaderboards without interval columns and refuses what needs draws, in words). With
``reweight=True`` every pair of items is weighted by the inverse of its number of comparisons
(:mod:`bayesrank.data.weights`, the Chatbot Arena option).
"""

from __future__ import annotations

import time
from functools import cache

import numpy as np
import pandas as pd
import xarray as xr
from scipy.linalg import cho_factor
from threadpoolctl import ThreadpoolController

from bayesrank.data.checks import judge_warnings, statistical_warnings
from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.data import memo
from bayesrank.data.weights import inverse_pair_count, reweighted
from bayesrank.errors import ModelSpecError
from bayesrank.inference import asymptotics, backend
from bayesrank.inference.compiled import compiled
from bayesrank.inference.existence import check_existence
from bayesrank.inference.information import (INFORMATION, CellDerivatives, cholesky_inverse, extreme_eigenvalues,
                                              complete_screened, information, information_operator, inverse_factor)
from bayesrank.inference.intervals import DESCRIPTIONS, bootstrap, comparison_units, sandwich, sandwich_factor
from bayesrank.inference.optimize import SINGULAR, gauge_complement, maximise, moved_starts, runs_from_starts
from bayesrank.inference.tree import assemble, coords_of, variable_dims
from bayesrank.model.framework import INTERVALS, Framework

#: Convergence threshold on the largest gradient entry of the per-comparison log-likelihood.
GRADIENT_TOL = 1e-6
#: Default iteration cap of L-BFGS-B over all its phases (``fit_map(maxiter=)``).
MAXITER = 20000
#: Beyond this many free coordinates a Wald or sandwich fit on the observed information keeps its
#: covariance as a factor — the triangular inverse of the information's Cholesky factor, F Fᵀ = Cov(θ̂)
#: (the sandwich's from it, :func:`~bayesrank.inference.intervals.sandwich_factor`) — and
#: never forms Cov(θ̂): standard errors are row norms of B F (:func:`asymptotics.linear_variances`),
#: draws are θ̂ + F z, and the estimate group stores neither ``theta_cov`` nor the ``<name>_cov``
#: of :meth:`Framework.covariances` (``attrs["covariance_stored"] = 0``; 10,000 items would
#: store 800 MB each). The results layer then takes contrasts from the asymptotic-normal draws.
DENSE_COVARIANCE_MAX = 1000
#: Runs of a multi-start fit (``restarts``) that end within this many log-likelihood units per comparison
#: of the highest reached the same maximum: one maximum's runs agree to ~1e-16 per comparison (their
#: NLLs to the last digit or two), other maxima of the rank-3 Thurstonian models differ by 1e-8-1e-5.
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
    maxiter: int = MAXITER,
    n_draws: int = 1000,
    random_seed: int | None = 0,
    init: np.ndarray | None = None,
    information: str | None = None,
    intervals: str | None = None,
    n_boot: int = 1000,
    reweight: bool = False,
    restarts: int = 0,
) -> xr.DataTree:
    """Maximum-likelihood fit with Wald, sandwich or bootstrap uncertainty.

    Parameters
    ----------
    framework : Framework
        The model to fit.
    data : Comparisons
        Comparison cells (raw; ``framework.prepare`` is applied here).
    maxiter : int
        Iteration cap of L-BFGS-B over all its phases; hitting it marks the fit as not
        converged.
    n_draws : int
        Draws from the asymptotic normal (rank intervals, probabilities of orderings); with
        ``intervals="bootstrap"`` the draws are the bootstrap replicates instead.
    random_seed : int, optional
        Seed of those draws and of the bootstrap.
    init : ndarray, optional
        Starting θ (default: the model's starting point).
    information : {"observed", "expected"}, optional
        Information matrix inverted for the covariance (default: the framework's
        ``default_information`` — observed for the paired models, the plug-in expected
        information with the empirical design for the judge-aware models, as in their paper).
    intervals : {"wald", "sandwich", "bootstrap", "none"}, optional
        How the uncertainty is computed (module docstring); default: the framework's
        ``default_intervals`` (``"sandwich"`` with ``reweight``). ``"none"``: point estimates
        and diagnostics only — no standard errors, covariances or draws.
    n_boot : int
        Bootstrap replicates.
    reweight : bool
        Weight every pair by the inverse of its comparison count (:mod:`bayesrank.data.weights`).
    restarts : int
        Further runs of the optimiser, each from the start moved at random
        (:func:`~bayesrank.inference.optimize.moved_starts`, seeded by ``random_seed``), for a
        log-likelihood that is not concave (Rao–Kupper's threshold, the Thurstonian covariance, judge
        discriminations: which of its maxima a run reaches depends on its start); the estimate is the
        highest end that reached a stationary point (the highest of all where none did). Ignored for a
        concave log-likelihood (one maximum).

    Returns
    -------
    xarray.DataTree
        See :mod:`bayesrank.inference.tree`; ``attrs["bayesrank_diagnostics"]`` reports
        ``converged``, ``grad_norm``, the optimiser's iterations, the smallest eigenvalue of
        the information, ``mle_exists`` and timings; with restarts run, ``restarts``, ``start_nlls``,
        ``start_grad_norms`` and ``start_boundaries`` (every run's end, the model's own start first; the
        last: the boundaries of the model it sits at, in words) and ``best_start``.
    """
    kind = information or framework.default_information
    if kind not in ("observed", "expected"):
        raise ModelSpecError(f"information must be 'observed' or 'expected', got {kind!r}.")
    if n_draws < 1:
        raise ModelSpecError(f"n_draws must be at least 1, got {n_draws}.")
    if random_seed is not None and (isinstance(random_seed, bool) or not isinstance(random_seed, (int, np.integer))
                                    or random_seed < 0):
        raise ModelSpecError(f"random_seed must be a non-negative integer, got {random_seed!r}.")
    if not framework.map_supported:
        raise ModelSpecError(f"{framework.label} needs its hierarchical prior: fit it with method='nuts'.")
    intervals = intervals or ("sandwich" if reweight else framework.default_intervals)
    if intervals not in INTERVALS:
        raise ModelSpecError(f"intervals must be one of {', '.join(INTERVALS)}, got {intervals!r}.")
    if intervals == "bootstrap" and (isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer))
                                     or n_boot < 2):
        raise ModelSpecError(f"n_boot must be an integer of at least 2, got {n_boot!r}.")
    if isinstance(restarts, bool) or not isinstance(restarts, (int, np.integer)) or restarts < 0:
        raise ModelSpecError(f"restarts must be a non-negative integer, got {restarts!r}.")
    if intervals == "bootstrap" and any(framework.covariances().values()):
        raise ModelSpecError(f"{framework.label}: bootstrap intervals are not available for a model with a "
                             "continuous symmetry (HJA's factors); use intervals='wald' or 'sandwich'.")
    # the dense algebra here (small matrix products, a Hessian inverse) is slower on several
    # BLAS threads, even for the models with thousands of free coordinates: spinning threads
    # compete with each other and with other processes (bench/README.md). Alone on an idle 2-core
    # machine, two threads took the k_tie = 20 paper models 30 and 18 (2,967 coordinates each)
    # 8-11 % less wall time at twice the CPU, on other optimiser paths to the same maxima, and model 17
    # 1 % more (bench/results/grid.md, stop 34)
    with _threads().limit(limits=1):
        return _fit_map(framework, data, maxiter, n_draws, random_seed, init, kind, intervals, n_boot, reweight,
                        restarts)


@cache
def _threads() -> ThreadpoolController:
    """The process's thread pools, inspected once (scanning the loaded libraries on every fit
    took milliseconds)."""
    return ThreadpoolController()


def _fit_map(framework, data, maxiter, n_draws, random_seed, init, kind, intervals, n_boot, reweight, restarts):
    t0, compile0 = time.perf_counter(), backend.compile_seconds()
    # point estimates only (intervals="none"): no covariance, no standard errors, no draws
    uncertainty = intervals != "none"
    # one read-only object per content of the data, and its prepared cells: what is derived from
    # them alone (graph facts, the tree's data groups) is computed for the first fit only
    data = memo.canonical(data)
    prepared = memo.remembered(data, ("prepared", framework.spec_json()), lambda: memo.frozen(framework.prepare(data)))
    if not uncertainty and framework.n_gauge(prepared):
        # its identification checks (Framework.findings) read the asymptotic-normal draws
        raise ModelSpecError(f"{framework.label}: point estimates without intervals are not available for a model "
                             "with a continuous symmetry (HJA's factors); use intervals='wald' or 'sandwich'.")
    weights = inverse_pair_count(prepared) if reweight else None
    if weights is not None:
        prepared = reweighted(prepared, weights)
    notes = statistical_warnings(prepared)
    judge_notes, near_duplicates = judge_warnings(data, getattr(framework, "ties", None) == "davidson")
    notes += judge_notes
    structure = compiled(framework, prepared, prior="flat")
    bound = structure.bind(prepared)
    n = prepared.n_comparisons

    def hessian(theta):
        matrix = information(bound, theta, "observed")
        return np.negative(matrix, out=matrix)  # (in its own memory: one n × n array fewer)

    x0 = bound.x0 if init is None else np.asarray(init, dtype=float)

    def canonical(theta):
        moved = framework.canonical(bound.natural(theta))
        return theta if moved is None else structure.natural.theta_for(moved, theta)

    def symmetry(theta):
        """Tangent directions in θ of the symmetry the constraints leave (Framework.gauge)."""
        return structure.natural.theta_directions(framework.gauge(bound.natural(theta)), theta)

    gauge = symmetry if framework.n_gauge(prepared) else None  # then: work in its complement

    def across_edge(theta):
        """Equivalent points across the edge of the chart (Framework.across_edge)."""
        return [structure.natural.theta_for(moved, theta) for moved in framework.across_edge(bound.natural(theta))]

    def cells_logp_dlogp(theta):
        """Log-likelihood and gradient from the cells' kernels (the link's per-cell log-likelihood
        and derivatives, :class:`CellDerivatives`), kept for θ in ``bound.last_at``: the information
        at a point Newton's line search accepts then costs no second pass over the cells."""
        cd = CellDerivatives.at(bound, theta)
        return float(cd.link["loglik"].sum()), structure.natural.pull_back(cd.gradient(), theta)

    def off_plateau(theta):
        """Points off a plateau where the optimiser may stop (Framework.off_plateau)."""
        return [structure.natural.theta_for(moved, theta) for moved in framework.off_plateau(bound.natural(theta))]

    def parted(theta):
        """Points where coinciding items are parted (Framework.parted)."""
        return [structure.natural.theta_for(moved, theta) for moved in framework.parted(bound.natural(theta))]

    # a concave log-likelihood goes to Newton's method from the start (optimize.py): a few
    # evaluations, each followed by the information at the same point; elsewhere L-BFGS-B's many
    # evaluations are cheaper by the compiled log-density
    logp_dlogp = cells_logp_dlogp if structure.concave else bound.logp_dlogp
    apart = structure.whitened_columns if structure.whitened_columns.any() else None

    def screened(theta):
        """The information with the whitened-by-construction block at its diagonal, and how to
        complete it (optimize.py: the whitenings read no more, and a Newton step needs the rest
        only where the other block is positive definite)."""
        matrix = information(bound, theta, "observed", apart=apart)
        return matrix, lambda: complete_screened(bound, theta, matrix, apart)

    def run(start):
        return maximise(logp_dlogp, hessian, start, n, maxiter,
                        information_diagonal=lambda th: information(bound, th, "observed", diagonal=True),
                        canonical=canonical, gauge=gauge, edge=across_edge, plateau=off_plateau, part=parted,
                        information_product=lambda th: information_operator(bound, th, "observed"),
                        concave=structure.concave, apart=apart, screened=screened if apart is not None else None)

    if restarts and not structure.concave:  # (the draws' generator stays as without restarts)
        moved = moved_starts(x0, restarts, np.random.default_rng(None if random_seed is None else [random_seed, 1]))
        runs = runs_from_starts(run, logp_dlogp, [x0, *moved])
        best_start = _chosen_run(runs, n)
        theta, optimiser = runs[best_start][:2]
        ends = [framework.boundaries(prepared, structure.values(end)) for end, *_ in runs]
        optimiser = {**optimiser, "restarts": restarts, "start_nlls": [-value / n for *_, value, _ in runs],
                     "start_grad_norms": [grad / n for *_, grad in runs], "start_boundaries": ends,
                     "best_start": best_start}
        notes += _restart_notes(runs, best_start, n, ends)
    else:
        theta, optimiser = run(x0)
    chart = gauge_complement(gauge(theta)) if gauge is not None else None

    def reduced(matrix):
        """An information matrix in the identified directions (all of θ without a symmetry)."""
        return matrix if chart is None else chart.T @ matrix @ chart

    observed = reduced(information(bound, theta, "observed"))
    grad_norm = float(np.max(np.abs(logp_dlogp(theta)[1])) / n)
    # many free coordinates: the covariance stays a factor (below), made in the information's own
    # memory (which nothing else needs then): one n × n array at a time
    factored = (structure.n_free > DENSE_COVARIANCE_MAX and kind == "observed"
                and intervals in ("wald", "sandwich") and chart is None)
    # an information with non-finite entries: the estimate sits where a cell's curvature
    # overflows (a tie threshold run out to where its tie probability underflows to zero)
    finite_information = bool(np.all(np.isfinite(observed)))
    if not finite_information:
        eig_min, eig_max, factor = float("nan"), float("nan"), None
        observed = None if factored else observed
    elif factored:
        observed /= n
        eig_min, eig_max, factor = extreme_eigenvalues(observed, overwrite=True)
        observed = None
    else:
        eig_min, eig_max, factor = extreme_eigenvalues(observed / n)
    identified = bool(eig_min > SINGULAR * max(eig_max, 0.0))

    values = structure.values(theta)
    check = check_existence(framework, bound, theta, values, maxiter)
    notes += check.pop("warnings")
    mle_exists = bool(check["mle_exists"])

    cov = np.full((structure.n_free, structure.n_free), np.nan) if not factored else None
    cov_factor = None  # F with F Fᵀ = Cov(θ̂), on the large-model path
    converged = bool(np.isfinite(grad_norm) and grad_norm < GRADIENT_TOL and identified and mle_exists)
    if not finite_information:
        notes.append(
            "the observed information is not finite at the estimate (some cells' curvature overflows: "
            "typically tie thresholds of pairs without ties run out until their tie probability underflows), "
            "so Wald intervals are not available; use method='nuts' (proper priors) or fewer tie factors."
        )
    elif not identified and (np.isnan(eig_min) or eig_min < -SINGULAR * eig_max):
        # a clearly negative eigenvalue, or a large information whose Cholesky factor failed (its
        # eigenvalues then left NaN): not a maximum, whatever the data identify
        how = ("its Cholesky factorisation failed, so its eigenvalues were not computed" if np.isnan(eig_min)
               else f"smallest eigenvalue {eig_min:.2e} per comparison")
        notes.append(
            f"the observed information is not positive definite at the estimate ({how}): the optimiser "
            "stopped at a saddle point or on a flat ridge, not at a strict maximum, so Wald intervals are not "
            "available; use method='nuts' (proper priors) or a simpler model."
        )
    elif not identified:
        if mle_exists:
            notes.append(
                f"the observed information is singular (smallest eigenvalue {eig_min:.2e} per comparison): "
                "some parameters are not identified by these data, so Wald intervals are not available; "
                "use method='nuts' (proper priors) or a simpler model."
            )
    elif mle_exists and uncertainty:  # no MLE: nothing to invert (the information may be singular)
        info = observed if kind == "observed" else reduced(information(bound, theta, kind))
        try:
            if factored:  # the information's Cholesky factor inverted in place: no n × n covariance
                cov_factor = inverse_factor(factor, n)
                if intervals == "sandwich":  # kept a factor too (intervals.sandwich_factor)
                    cov_factor = sandwich_factor(bound, theta, cov_factor,
                                                 comparison_units(framework, data, prepared, weights))
            elif kind == "observed" and factor is not None:  # the Cholesky factor is at hand
                cov = cholesky_inverse(factor) / n
            else:
                cov = cholesky_inverse(cho_factor(info))
            inverse = cov if chart is None else None  # (I⁻¹ itself: the sandwich's bread)
            cov = cov if chart is None or cov is None else chart @ cov @ chart.T
            if intervals == "sandwich" and not factored:
                units = comparison_units(framework, data, prepared, weights)
                cov = sandwich(bound, theta, observed, units, chart, bread=inverse)
        except np.linalg.LinAlgError:
            converged = False
            notes.append(
                f"the {kind} information is singular at the estimate: Wald intervals are not available; "
                "use method='nuts' (proper priors) or a simpler model."
            )
    if grad_norm >= GRADIENT_TOL and mle_exists:
        notes.append(
            f"the optimiser did not converge (largest gradient entry {grad_norm:.2e} per comparison "
            f"after {optimiser['iterations']} quasi-Newton and {optimiser['newton_iterations']} Newton "
            "iterations): the estimate may not be the MLE."
        )

    cell_log_probs = CellDerivatives.at(bound, theta).link["log_probs"]  # the kernels already compiled
    with np.errstate(invalid="ignore"):
        loglik = float(np.where(bound.counts > 0, bound.counts * cell_log_probs, 0.0).sum())
    covariances = framework.covariances()
    rng = np.random.default_rng(random_seed)
    boot = None
    if intervals == "bootstrap" and mle_exists and np.all(np.isfinite(cov)):
        t_boot = time.perf_counter()
        units = comparison_units(framework, data, prepared, weights)
        thetas, boot = bootstrap(bound, theta, observed, units, n_boot, rng, maxiter)
        boot["seconds"] = time.perf_counter() - t_boot
        if boot["n_failed"]:
            notes.append(f"{boot['n_failed']} of {n_boot} bootstrap resamples were left out: their maximum-likelihood "
                         "estimate does not exist or was not reached; the intervals come from the other "
                         f"{n_boot - boot['n_failed']}.")
        cov = np.cov(thetas, rowvar=False).reshape(theta.size, theta.size) if len(thetas) > 1 else cov * np.nan
    if not uncertainty:
        se, cross, sample = {}, {}, {name: np.empty((0, *np.shape(v))) for name, v in values.items()}
    elif cov_factor is not None:
        se, cross = asymptotics.delta_method(structure, theta, cov_factor, {})
        sample = asymptotics.draws(structure, theta, cov_factor, n_draws, rng, upper=intervals == "wald")
    elif mle_exists and cov is not None and np.all(np.isfinite(cov)):
        if boot is not None:
            se, cross, sample = asymptotics.replicates(structure, thetas, tuple(covariances))
            n_draws = len(thetas)
        else:
            factor = asymptotics.covariance_factor(cov)
            se, cross = asymptotics.delta_method(structure, theta, factor, covariances, cov)
            sample = asymptotics.draws(structure, theta, factor, n_draws, rng)
    else:
        se = {name: np.full(np.shape(v), np.nan) for name, v in values.items()}
        cross = {name: np.full(_cov_shape(np.shape(values[name]), blocked), np.nan)
                 for name, blocked in covariances.items()} if not factored else {}
        sample = {name: np.full((n_draws, *np.shape(v)), np.nan) for name, v in values.items()}
    if chart is not None:  # representatives of the symmetry's orbit: a value, but no uncertainty
        for name in asymptotics.moved_by(structure, theta, gauge(theta)):
            se[name] = np.full(np.shape(values[name]), np.nan)
    found = framework.findings(prepared, values, sample) if mle_exists else None
    if found is not None:
        notes += found.warnings
        for name in found.hidden:  # not identified by these data: never reported as a number
            for part in (values, se, sample):
                if name in part:
                    part[name] = np.full(np.shape(part[name]), np.nan)
            if name in cross:
                cross[name] = np.full(np.shape(cross[name]), np.nan)
    if not mle_exists:  # never report an optimiser-path point as an estimate, nor its likelihood
        values = {name: np.full(np.shape(v), np.nan) for name, v in values.items()}
        cell_log_probs = np.full_like(cell_log_probs, np.nan)
        loglik = float("nan")

    dims = {name: variable_dims(structure.model, name, np.shape(v)) for name, v in values.items()}
    used = tuple(sorted({k for d in dims.values() for k in d}))
    estimate_coords, posterior_coords = memo.remembered(
        prepared, ("coordinates", framework.spec_json(), used, n_draws),
        lambda: _coordinates(framework, prepared, used, n_draws))
    estimate = xr.Dataset(
        {
            **{name: (dims[name], np.asarray(v, dtype=float)) for name, v in values.items()},
            **{f"{name}_se": (dims[name], np.asarray(se[name], dtype=float)) for name in values if name in se},
            **{f"{name}_cov": (_cov_dims(dims[name], blocked), cross[name]) for name, blocked in covariances.items()
               if name in cross and not factored},
            "theta": ("free", theta),
            **({"theta_cov": (("free", "free_"), cov)} if not factored and uncertainty else {}),
            "cell_log_probs": (("cell", "outcome"), cell_log_probs),
            "loglik": ((), loglik),
        },
        coords=estimate_coords,
        attrs={"interval": INTERVAL_KIND.get(intervals, "wald"), "interval_method": intervals,
               "point": "mle", "information": kind,
               "covariance": COVARIANCE[kind] if intervals == "wald" else DESCRIPTIONS[intervals],
               "pseudo_likelihood": int(framework.pseudo_likelihood or reweight), "reweighted": int(reweight),
               "covariance_stored": int(not factored and uncertainty)},
    )
    posterior = None if not uncertainty else xr.Dataset(
        {name: (("chain", "draw", *dims[name]), asymptotics.chained(v)) for name, v in sample.items()},
        coords=posterior_coords,
        attrs={"inference": "bootstrap replicates of the MLE" if boot is not None
               else "draws from the asymptotic normal of the MLE"},
    )
    diagnostics = {
        "converged": converged,
        "grad_norm": grad_norm,
        **optimiser,
        "min_information_eigenvalue": eig_min,
        # building and compiling the model, including the first call of every compiled function
        # (numba's JIT, or loading its machine code from the on-disk cache): inference/backend.py
        "compile_seconds": backend.compile_seconds() - compile0,
        "seconds": time.perf_counter() - t0,
        "information": kind,
        "near_duplicates": [list(d) for d in near_duplicates],
        **check,
        **({"edge": edge} if (edge := framework.edge_description(bound.natural(theta), optimiser.get("edge_crossings", 0)))
           else {}),
        **(found.diagnostics if found is not None else {}),
    }
    if boot is not None:
        diagnostics["bootstrap"] = boot
    return assemble(framework=framework, data=data, prepared=prepared, method="map", posterior=posterior,
                    estimate=estimate, n_params=structure.n_free - framework.n_gauge(prepared),
                    diagnostics=diagnostics, warnings=notes)


def _chosen_run(runs: list[tuple], n: float) -> int:
    """The run of a multi-start fit that gives the estimate (``runs``: :func:`runs_from_starts`'s): the
    highest end among the runs that reached a stationary point (largest gradient entry below
    :data:`GRADIENT_TOL` per comparison; among all runs where none did), and of the runs within
    :data:`RESTART_AGREEMENT` of it (the same maximum) the first — the model's own start where it got there."""
    stationary = [k for k, (*_, grad) in enumerate(runs) if grad / n < GRADIENT_TOL] or list(range(len(runs)))
    top = max(runs[k][2] for k in stationary)
    return next(k for k in stationary if (top - runs[k][2]) / n <= RESTART_AGREEMENT)


def _restart_notes(runs: list[tuple], best: int, n: float, boundaries: list[list[str]] | None = None
                   ) -> list[str]:
    """What the runs of a multi-start fit say, in words: nothing where every run reached the estimate's
    maximum (within :data:`RESTART_AGREEMENT`); else how many ended lower, by how much and how many of
    those short of a stationary point, and any that ended higher short of one (:func:`_chosen_run` keeps
    the stationary), with the boundaries of the model those stopped at (``boundaries``: each run's
    :meth:`~bayesrank.model.framework.Framework.boundaries` at its end)."""
    top = runs[best][2]
    lower = [(value, grad) for *_, value, grad in runs if (top - value) / n > RESTART_AGREEMENT]
    higher = [k for k, (*_, value, _) in enumerate(runs) if (value - top) / n > RESTART_AGREEMENT]
    if not lower and not higher:
        return []
    start = "the model's own start" if best == 0 else f"moved start {best}"
    said = [f"the log-likelihood is not concave and where the optimiser ends depends on its start ({len(runs)} runs: "
            f"the model's own start and {len(runs) - 1} moved at random; diagnostics['start_nlls'], "
            f"['start_grad_norms']); the estimate is the end of the run from {start}."]
    if lower:
        gap = top - min(value for value, _ in lower)
        short = sum(grad / n >= GRADIENT_TOL for _, grad in lower)
        said.append(f"{_runs(len(lower))} ended lower, by up to {gap:.3g} in log-likelihood ({gap / n:.2e} per "
                    f"comparison), {short} of them short of a stationary point; more restarts may find a higher "
                    "maximum.")
    if higher:
        gap = max(runs[k][2] for k in higher) - top
        at = [boundaries[k] for k in higher if boundaries[k]] if boundaries is not None else []
        named = list(dict.fromkeys(phrase for phrases in at for phrase in phrases))  # (in order, once each)
        said.append(f"{_runs(len(higher))} ended higher, by up to {gap:.3g} in log-likelihood, but short of a "
                    "stationary point" + (f", {len(at)} of them at a boundary of the model ({'; '.join(named)}; "
                                          "diagnostics['start_boundaries'])" if at else "") + ":")
        if len(at) == len(higher):
            said.append("as far as these runs show, the likelihood's supremum lies on that boundary, where it is "
                        "approached but not attained (the information singular there), and the estimate is "
                        + ("on a boundary too (the other warnings) but" if boundaries[best] else
                           "a maximum inside the model,") + " not its highest point.")
        else:
            said.append("the estimate is not the likelihood's highest point — a higher maximum" +
                        (", or the supremum on that boundary," if at else " or a supremum on a boundary of the model")
                        + " lies where those runs were heading.")
    return [" ".join(said)]


def _runs(count: int) -> str:
    """``"1 run"``, ``"3 runs"``."""
    return f"{count} run" + "s" * (count != 1)


def _coordinates(framework: Framework, prepared: Comparisons, used: tuple[str, ...], n_draws: int
                 ) -> tuple[xr.Coordinates, xr.Coordinates]:
    """The coordinates of the ``estimate`` and ``posterior`` groups, with their indexes: made once
    per prepared data (:mod:`bayesrank.data.memo`; a Dataset copies the coordinate variables it is
    given, and pandas indexes are immutable), where building them from lists took xarray about
    half of each group's construction. ``used``: the dims the model variables have."""
    coords = {k: pd.Index(v) if isinstance(v, list) else v for k, v in coords_of(framework, prepared).items()}
    named = {k: v for k, v in coords.items() if k in used}
    estimate = xr.Coordinates({**named, **({"item": coords["item"]} if "item" in coords else {}),
                               "item_": pd.Index(list(prepared.items)), "outcome": pd.Index(list(OUTCOMES)),
                               "cell": np.arange(prepared.n_cells)})
    posterior = xr.Coordinates({"chain": [0], "draw": np.arange(n_draws), **named})
    return estimate, posterior


def _cov_shape(shape: tuple, blocked: bool) -> tuple:
    """Shape of a stored covariance (:meth:`~bayesrank.model.framework.Framework.covariances`)."""
    return (*shape[:1], shape[-1], shape[-1]) if blocked else (int(np.prod(shape)),) * 2


def _cov_dims(dims: tuple, blocked: bool) -> tuple:
    """Dims of a stored covariance: ``(item, item_)``, or ``(judge, item, item_)`` per block."""
    return (*dims[:1], dims[-1], f"{dims[-1]}_") if blocked else (dims[0], f"{dims[0]}_")


__all__ = ["COVARIANCE", "DENSE_COVARIANCE_MAX", "GRADIENT_TOL", "INFORMATION", "fit_map"]
