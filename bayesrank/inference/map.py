"""Maximum a posteriori with flat priors — the maximum-likelihood estimate — and its asymptotics.

The log-likelihood and gradient are compiled by PyTensor on the free coordinates θ (scores
in zero-sum coordinates, unconstrained tie parameters) and driven by SciPy's L-BFGS-B to a
tight tolerance, in coordinates scaled by the square root of the information's diagonal at
the start (items with 1k and 130k comparisons differ 10× in curvature; the scaling cuts the
iterations of Davidson k_tie=1 on the arena from ~800 to ~90), then polished by one Newton
step with the exact Hessian. The covariance is
the inverse observed information on θ, mapped to every model variable by the delta method
(the map θ ↦ scores is linear, so score intervals are exactly Wald intervals).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from bayesrank.data.checks import statistical_warnings
from bayesrank.data.comparisons import Comparisons
from bayesrank.frameworks.base import Framework
from bayesrank.inference.compiled import compiled_model

#: Convergence threshold on the largest gradient entry of the per-comparison log-likelihood.
GRADIENT_TOL = 1e-6


def fit_map(
    framework: Framework,
    data: Comparisons,
    *,
    maxiter: int = 20000,
    n_draws: int = 4000,
    random_seed: int | None = 0,
    init: np.ndarray | None = None,
    information: str | None = None,
):
    """Maximum-likelihood fit with asymptotic (Wald) uncertainty.

    Parameters
    ----------
    framework : Framework
        The model to fit.
    data : Comparisons
        Comparison cells (raw; ``framework.prepare`` is applied here).
    maxiter : int
        Iteration cap of L-BFGS-B; hitting it marks the fit as not converged.
    n_draws : int
        Draws from the asymptotic normal of the scores used for rank intervals.
    random_seed : int, optional
        Seed of those draws.
    init : ndarray, optional
        Starting θ (default: the model's initial point, all zeros).
    information : {"observed", "expected"}, optional
        Information matrix inverted for the covariance (default: the framework's
        ``default_information`` — observed for the paired models, the plug-in expected
        information with the empirical design for the judge-aware models, as in their paper).

    Returns
    -------
    Fit
        With ``method="map"``; ``fit.converged`` and ``fit.diagnostics["grad_norm"]`` report
        the optimiser's state.
    """
    # small dense algebra (L-BFGS, Hessian inverse) is slower on several BLAS threads; above 1000
    # free coordinates too: Davidson k_tie=20 (2518 free) via the CLI took 97 s wall with the
    # default BLAS threads vs 21 s with one on a shared 2-core machine (the gradient's small
    # matrix products dominate, and spinning BLAS threads compete with other processes)
    with threadpool_limits(1):
        return _fit_map(framework, data, maxiter=maxiter, n_draws=n_draws, random_seed=random_seed, init=init,
                        information_kind=information)


def _fit_map(framework, data, *, maxiter, n_draws, random_seed, init, information_kind=None):
    from bayesrank.results import Fit

    prepared = framework.prepare(data)
    notes = statistical_warnings(prepared)
    t0 = time.perf_counter()
    compiled = compiled_model(framework, prepared, prior="flat")
    t_compile = time.perf_counter() - t0
    n = prepared.n_comparisons

    scale = compiled.preconditioner(n)

    def objective(y):
        lp, grad = compiled.logp_dlogp(y / scale)
        return -lp / n, -grad / (n * scale)

    x0 = compiled.x0 if init is None else np.asarray(init, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        result = minimize(
            objective,
            x0 * scale,
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": maxiter, "maxcor": 30, "gtol": 1e-10, "ftol": 1e-15},
        )
    result.x = result.x / scale
    theta = result.x
    hessian = compiled.hessian(theta)  # of the total log-likelihood
    information = -hessian
    theta, grad = _newton_polish(compiled, theta, information, n)
    grad_norm = float(np.max(np.abs(grad)) / n)

    eig_min = float(np.linalg.eigvalsh(information / n)[0])
    identified = eig_min > 1e-10
    # the framework's existence checks (Ford's condition; judge-aware degeneracy) come first:
    # when the MLE does not exist, the optimiser's point is not an estimate
    check = framework.check_mle(data, prepared, compiled, theta)
    notes.extend(check.pop("warnings", []))
    mle_exists = bool(check.get("mle_exists", True))
    converged = bool(np.isfinite(grad_norm) and grad_norm < GRADIENT_TOL and identified and mle_exists)
    kind = information_kind or framework.default_information
    cov_theta = np.full_like(information, np.nan)
    if not identified:
        if mle_exists:
            notes.append(
                f"the observed information is singular (smallest eigenvalue {eig_min:.2e} per comparison): "
                "some parameters are not identified by these data, so Wald intervals are not available; "
                "use method='nuts' (proper priors) or a simpler model."
            )
    elif mle_exists:  # no MLE: nothing to invert (and the information may be singular there)
        # kind != "observed": e.g. the plug-in expected information of the judge-aware paper
        info = information if kind == "observed" else framework.information(compiled, theta, prepared, kind)
        try:
            cov_theta = np.linalg.inv(info)
        except np.linalg.LinAlgError:
            converged = False
            notes.append(
                f"the {kind} information is singular at the estimate: Wald intervals are not available; "
                "use method='nuts' (proper priors) or a simpler model."
            )
    if grad_norm >= GRADIENT_TOL and mle_exists:
        notes.append(
            f"the optimiser did not converge (largest gradient entry {grad_norm:.2e} per comparison "
            f"after {result.nit} iterations): the estimate may not be the MLE."
        )
    values, jac, layout = compiled.constrained(theta)
    if not mle_exists:  # never report an optimiser-path point as an estimate
        values = {k: np.full_like(np.asarray(v, dtype=float), np.nan) for k, v in values.items()}
        cov_theta = np.full_like(cov_theta, np.nan)
    fit_time = time.perf_counter() - t0
    diagnostics = {
        "converged": converged,
        "grad_norm": grad_norm,
        "iterations": int(result.nit),
        "function_evaluations": int(result.nfev),
        "min_information_eigenvalue": eig_min,
        "compile_seconds": t_compile,
        "seconds": fit_time,
        "information": kind,
        **check,
    }
    return Fit.from_map(
        framework,
        data,
        prepared,
        theta=theta,
        cov_theta=cov_theta,
        values=values,
        jacobian=jac,
        layout=layout,
        compiled=compiled,
        diagnostics=diagnostics,
        warnings=notes,
        n_draws=n_draws,
        random_seed=random_seed,
    )


def _newton_polish(compiled, theta, information, n):
    """One Newton step from the L-BFGS-B solution, kept only when it improves the likelihood."""
    lp, grad = compiled.logp_dlogp(theta)
    try:
        step = np.linalg.solve(information, grad)
    except np.linalg.LinAlgError:
        return theta, grad
    candidate = theta + step
    lp_new, grad_new = compiled.logp_dlogp(candidate)
    if np.isfinite(lp_new) and lp_new >= lp - 1e-9 * n and np.max(np.abs(grad_new)) < np.max(np.abs(grad)):
        return candidate, grad_new
    return theta, grad
