"""The NUTS model in coordinates whitened by the maximum-likelihood fit.

The posteriors of the paired and judge-aware models on real data are close to normal, with a
covariance the MAP fit already knows: the inverse observed information on the free
coordinates θ (:mod:`bayesrank.inference.map`). Sampling θ directly leaves NUTS a badly
scaled, correlated target (zero-sum scores and factored tie thresholds: dozens of leapfrog
steps per draw). With θ = θ̂ + L z, L Lᵀ = Cov(θ̂), the sampler sees z, whose posterior is
close to a standard normal, and a diagonal mass matrix fits it.

This is a change of coordinates only: the model's own log-density (priors and likelihood,
with the Jacobians of its transforms) is evaluated at θ̂ + L z, whose Jacobian |L| is a
constant; the posterior is the same distribution, and every model variable (free and
deterministic) is recorded under its own name and dims, computed from the draws of z after
sampling. The chains start at z = 0, the MLE (each sampler adds its jitter).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytensor.tensor as pt
import xarray as xr
from pytensor.graph.replace import graph_replace
from scipy.linalg import cholesky, solve_triangular

from bayesrank.data.comparisons import Comparisons
from bayesrank.inference.backend import one_thread
from bayesrank.inference.existence import check_existence
from bayesrank.inference.information import information
from bayesrank.inference.optimize import MAXITER, maximise
from bayesrank.inference.structure import structure_of
from bayesrank.inference.tree import coords_of, variable_dims
from bayesrank.inference.warm import starting_theta
from bayesrank.model.framework import Framework
from bayesrank.runtime.lazy import lazy_module

pm = lazy_module("pymc")

#: Name of the whitened coordinates z in the sampled model (dropped from the posterior).
WHITE = "whitened_theta"


@dataclass(frozen=True)
class Whitening:
    """θ = θ̂ + L z: the MAP θ̂ on the free coordinates and a factor L of its covariance, or the
    reason there is none.

    Attributes
    ----------
    theta : ndarray or None
    factor : ndarray or None
        L with L Lᵀ = Cov(θ̂) = I⁻¹ (the inverse observed information): L = U⁻¹ for the
        Cholesky factor I = UᵀU (upper triangular).
    reason : str
        Why the model is sampled in its own coordinates (empty when whitened).
    iterations : int
        Trust-region iterations of the maximum-likelihood fit.
    """

    theta: np.ndarray | None
    factor: np.ndarray | None
    reason: str = ""
    iterations: int = 0


def whitening(framework: Framework, data: Comparisons, model, init=None) -> Whitening:
    """θ̂ and L from the maximum-likelihood estimate of ``data`` (raw cells) — the MAP fit's
    optimiser, exact Hessian and existence check, without its intervals — when the MLE exists,
    its observed information is positive definite, and the flat-prior model and ``model`` (the
    NUTS model) map every θ to the same variables: then θ = θ̂ + L z is a change of the NUTS
    model's own coordinates. Any full-rank L gives the same posterior, but NUTS's geometry-tuned
    step assumes the posterior in z is close to a standard normal. ``init``: where the
    maximum-likelihood fit starts (:func:`~bayesrank.inference.warm.starting_theta`)."""
    if not framework.map_supported:
        return Whitening(None, None, "the model has no maximum-likelihood fit (hierarchical prior)")
    prepared = framework.prepare(data)
    if framework.n_gauge(prepared):
        return Whitening(None, None, "the likelihood has a continuous symmetry: its covariance is singular")
    flat, weak, point = structure_of(framework, prepared, "flat"), structure_of(framework, prepared, "weak"), \
        model.initial_point()
    shapes = [(v.name, point[v.name].shape) for v in model.value_vars]
    if shapes != [(v.name, flat.slices[v.name][1]) for v in flat.value_vars]:
        return Whitening(None, None, "the prior changes the free coordinates")
    bound = flat.bind(prepared)
    with one_thread():  # as the MAP fit (inference/backend.py)
        optimum = maximise(bound, starting_theta(bound, init))
        theta = optimum.theta
        if not _same_chart(flat, weak, theta):
            return Whitening(None, None, "the prior's model maps the free coordinates to other variables")
        try:
            upper = cholesky(information(bound, theta, "observed"), lower=False)
        except np.linalg.LinAlgError:
            return Whitening(None, None, "the observed information is singular at the maximum-likelihood estimate")
        if not (np.all(np.isfinite(theta)) and np.all(np.isfinite(upper))):
            return Whitening(None, None, "the maximum-likelihood fit did not reach a finite estimate")
        # where the MLE does not exist the optimiser stops far out along a direction of rising
        # likelihood, whose information is nearly zero but may still factor: L is huge there and
        # the posterior in z is nothing like a standard normal (a fixed geometry-tuned step then
        # fails outright, an adapted one only slowly)
        if not check_existence(framework, bound, theta, flat.values(theta), MAXITER)["mle_exists"]:
            return Whitening(None, None, "the maximum-likelihood estimate does not exist")
        factor = solve_triangular(upper, np.eye(theta.size), lower=False)
    return Whitening(theta, factor, iterations=optimum.iterations)


def _same_chart(flat, weak, theta: np.ndarray) -> bool:
    """Whether the flat-prior and the weak-prior structures give every model variable the same value
    at θ̂ and at a point moved from it: the whitening's θ̂ and L, found on the first, are then
    coordinates of the second."""
    if flat.layout() != weak.layout():
        return False
    moved = theta + 0.1 * np.sign(np.sin(np.arange(theta.size) + 1.0))
    points = np.vstack([theta, moved])
    return bool(np.allclose(flat.value_rows(points), weak.value_rows(points), rtol=1e-10, atol=1e-12))


def whitened_model(model, white: Whitening):
    """The PyMC ``model`` sampled in z: a flat z with the model's log-density at θ̂ + L z as its
    only term. Nothing else is computed per draw: :func:`posterior_of` maps the draws of z to
    every model variable afterwards, all draws at once."""
    value_vars = list(model.value_vars)
    point = model.initial_point()
    with pm.Model() as out:
        # θ̂ and L as data: the compiled graph is the same for every fit of this shape
        theta_hat = pm.Data("whitening_mode", white.theta)
        factor = pm.Data("whitening_factor", white.factor)
        z = pm.Flat(WHITE, shape=white.theta.size)
        theta = theta_hat + pt.dot(factor, z)
        parts, start = {}, 0
        for v in value_vars:
            shape = point[v.name].shape
            size = int(np.prod(shape))
            parts[v] = theta[start:start + size].reshape(shape).astype(v.dtype)
            start += size
        pm.Potential("log_density", graph_replace(model.logp(), parts, strict=False))
    return out


def posterior_of(draws: xr.Dataset, white: Whitening, framework: Framework, prepared: Comparisons,
                 model) -> xr.Dataset:
    """The posterior of every variable of ``model`` (free and deterministic, with its own name
    and dims) from the draws of z: θ = θ̂ + L z pushed through the model's map θ ↦ variables
    (:meth:`~bayesrank.inference.structure.Structure.value_rows` of the NUTS model's structure)."""
    z = draws[WHITE].values
    chains, n_draws = z.shape[:2]
    thetas = white.theta + z.reshape(chains * n_draws, -1) @ white.factor.T
    structure = structure_of(framework, prepared, "weak")
    rows = structure.value_rows(thetas)
    coords = coords_of(framework, prepared)
    out = {}
    for v in (*model.free_RVs, *model.deterministics):
        sl, shape = structure.layout()[v.name]
        dims = variable_dims(model, v.name, shape)
        out[v.name] = xr.DataArray(rows[:, sl].reshape(chains, n_draws, *shape), dims=("chain", "draw", *dims),
                                   coords={d: coords[d] for d in dims if d in coords})
    return xr.Dataset(out, coords={"chain": draws["chain"], "draw": draws["draw"]}, attrs=draws.attrs)


__all__ = ["WHITE", "Whitening", "posterior_of", "whitened_model", "whitening"]
