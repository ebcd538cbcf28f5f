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
deterministic) is recorded under its own name and dims as a function of z. The chains start
at z = 0, the MAP (each sampler adds its jitter).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytensor.tensor as pt
from pytensor.graph.replace import graph_replace

from bayesrank.data.comparisons import Comparisons
from bayesrank.inference.asymptotics import covariance_factor
from bayesrank.inference.compiled import compiled
from bayesrank.inference.map import fit_map
from bayesrank.lazy import lazy_module
from bayesrank.model.framework import Framework

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
        Lower triangular, L Lᵀ = Cov(θ̂).
    reason : str
        Why the model is sampled in its own coordinates (empty when whitened).
    """

    theta: np.ndarray | None
    factor: np.ndarray | None
    reason: str = ""


def whitening(framework: Framework, data: Comparisons, model) -> Whitening:
    """θ̂ and L from the maximum-likelihood fit of ``data`` (raw cells), when it has a finite,
    positive-definite covariance on every free coordinate of ``model`` (the NUTS model)."""
    if not framework.map_supported:
        return Whitening(None, None, "the model has no maximum-likelihood fit (hierarchical prior)")
    prepared = framework.prepare(data)
    if framework.n_gauge(prepared):
        return Whitening(None, None, "the likelihood has a continuous symmetry: its covariance is singular")
    flat, point = compiled(framework, prepared, "flat"), model.initial_point()
    if [(v.name, point[v.name].shape) for v in model.value_vars] != [(v.name, flat.slices[v.name][1]) for v in flat.value_vars]:
        return Whitening(None, None, "the prior changes the free coordinates")
    tree = fit_map(framework, data, n_draws=1, intervals="wald", information="observed")
    cov = tree["estimate"]["theta_cov"].values
    if not np.all(np.isfinite(cov)):
        return Whitening(None, None, "the maximum-likelihood fit has no covariance (no MLE, or singular information)")
    factor = covariance_factor(cov)
    if not np.all(np.abs(np.diag(factor)) > 0) or np.any(np.triu(factor, 1)):
        return Whitening(None, None, "the covariance of the maximum-likelihood fit is not positive definite")
    return Whitening(tree["estimate"]["theta"].values.astype(float), factor)


def whitened_model(model, white: Whitening):
    """The PyMC ``model`` sampled in z: a flat z with the model's log-density at θ̂ + L z as a
    potential, and every free variable and deterministic of the model as a deterministic of
    the same name and dims."""
    value_vars = list(model.value_vars)
    point = model.initial_point()
    names = [v.name for v in (*model.free_RVs, *model.deterministics)]
    with pm.Model(coords=model.coords) as out:
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
        values = model.replace_rvs_by_values([model[n] for n in names])
        for name, value in zip(names, graph_replace(values, parts, strict=False)):
            pm.Deterministic(name, value, dims=model.named_vars_to_dims.get(name))
    return out
