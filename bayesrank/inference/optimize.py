"""The optimiser of every MAP fit: a trust-region Newton method with the exact Hessian.

The objective is the mean negative log-likelihood per comparison, shifted to vanish at the start, f(θ) = −(ℓ(θ) −
ℓ(θ₀))/n, with its gradient and exact Hessian from the per-cell derivatives of the framework's own predictors and link
(:mod:`bayesrank.inference.information`). SciPy minimises it:

* up to :data:`DENSE_MAX` free coordinates by ``trust-exact`` (the dense Hessian and a nearly
  exact solution of each trust-region subproblem, Moré–Sorensen: it follows negative curvature,
  so on a log-likelihood that is not concave it ends at a local maximum, not at a saddle point);
* beyond, by ``trust-krylov`` (the subproblem solved in a Krylov space from Hessian-vector
  products: no dense n × n matrix for many items).

The shift matters: SciPy judges a trust-region step by the decrease its quadratic model predicts,
computed as f plus that decrease, and near a maximum the decrease is far below the rounding of
f ≈ 1 (a unit of the mean log-likelihood); relative to the start, f is small and keeps it. What a
function value can certify ends where the predicted decrease falls below the rounding of ℓ
itself (about 1e-16 per comparison): SciPy then stops ("a bad approximation"), and the fit's
KKT check decides whether the end is the MLE. A run stops as soon as the largest entry of the
per-comparison gradient is below :data:`GTOL` (SciPy's own test is the 2-norm of the gradient in
its scaled coordinates, which depends on the scaling).

The coordinates are scaled by √|diag H(θ₀)| at the start, rounded to a power of two
(coordinates without curvature there are left as they are), because a trust region is a ball:
the scaling lets it stretch along the flat directions of items with few comparisons. Powers of
two make the scaling exact in floating point, so θ and its scaled image map to each other bit
for bit and every quantity computed at a point is computed once.

A framework whose constraints leave a continuous symmetry (:meth:`Framework.gauge
<bayesrank.model.framework.Framework.gauge>`: HJA's GL(r + 1) acting on its factors) has a
log-likelihood that is constant along the symmetry's orbits, and a Hessian that is singular
along their tangents. The optimiser then sees the *gauge-fixed* Hessian, H + s·Q Qᵀ with Q an
orthonormal basis of those tangents at θ and s the Hessian's mean diagonal: the gradient has no
component along the orbit, so a step has none either, and the subproblem stays well posed.

A Gaussian prior on some coordinates — random effects u ~ Normal(0, τ²) given τ
(:mod:`bayesrank.inference.laplace`) — enters as a fixed precision P in θ: the method then
maximises the penalised log-likelihood ℓ(θ) − ½ θᵀPθ, with gradient ∇ℓ − Pθ and Hessian
−(I + P), exact as before.

Nothing here depends on what was optimised before: the same problem from the same start gives
the same path in any process. A log-likelihood that is not concave may have several maxima, and
which one a run reaches depends on its start (:func:`moved_starts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import OptimizeResult, minimize

from bayesrank.inference.information import CellDerivatives, information, information_operator
from bayesrank.inference.structure import Bound

#: Up to this many free coordinates the trust-region subproblem is solved with the dense Hessian
#: (``trust-exact``); beyond, in a Krylov space (``trust-krylov``).
DENSE_MAX = 4000
#: A run stops at the first point whose largest gradient entry of ℓ/n (per comparison) is below this:
#: two orders below the fit's KKT tolerance, where a Newton step from a point at that tolerance lands.
GTOL = 1e-10
#: Default cap on the trust-region iterations of one run.
MAXITER = 1000
#: How a run that reached :data:`GTOL` says so.
STATIONARY = f"stationary: the largest gradient entry is below {GTOL:g} per comparison"
#: How a run whose trust region shrank to nothing says so.
COLLAPSED = ("the trust region shrank to nothing: no step changed ℓ by more than its rounding (the start is "
             "within that of the maximum)")
#: Coordinates whose curvature per comparison at the start is below this are not scaled.
FLAT = 1e-8


@dataclass(frozen=True)
class Optimum:
    """Where one run of the optimiser ended.

    Attributes
    ----------
    theta : ndarray
        The end point.
    loglik : float
        ℓ(θ) there.
    n : float
        The comparisons behind ℓ (what "per comparison" divides by).
    grad_max : float
        Largest entry of the gradient of ℓ/n there (per comparison; of the penalised
        log-likelihood when :func:`maximise` was given a penalty).
    iterations : int
        Trust-region iterations.
    method : str
        The SciPy method (``"trust-exact"`` or ``"trust-krylov"``).
    message : str
        SciPy's reason for stopping.
    """

    theta: np.ndarray
    loglik: float
    n: float
    grad_max: float
    iterations: int
    method: str
    message: str = field(default="")


def loglik_gradient(bound: Bound, theta: np.ndarray) -> tuple[float, np.ndarray]:
    """ℓ(θ) and ∇ℓ(θ) from the per-cell derivatives (one pass over the cells)."""
    cd = CellDerivatives.at(bound, theta)
    return float(cd.link["loglik"].sum()), bound.structure.natural.pull_back(cd.gradient(), bound.n_free)


def maximise(bound: Bound, start: np.ndarray, *, gauge=None, maxiter: int = MAXITER,
             penalty: np.ndarray | None = None) -> Optimum:
    """The maximum-likelihood estimate of the bound model, by a trust-region Newton method (the
    module docstring).

    Parameters
    ----------
    bound : Bound
        The model with its prepared cells.
    start : ndarray
        Starting θ.
    gauge : callable, optional
        θ ↦ ``(n_free, g)`` tangent directions of the symmetry's orbit at θ (the framework's
        :meth:`~bayesrank.model.framework.Framework.gauge` in θ), or None without one.
    maxiter : int
        Cap on the trust-region iterations.
    penalty : ndarray, optional
        ``(n_free, n_free)`` precision P of a Gaussian prior centred at 0 (the module
        docstring): ℓ(θ) − ½ θᵀPθ is maximised instead of ℓ.

    Returns
    -------
    Optimum
        ``loglik`` is ℓ(θ) without the penalty; ``grad_max`` that of the penalised objective.
    """
    n = float(bound.counts.sum())
    start = np.asarray(start, dtype=float)
    dense = bound.n_free <= DENSE_MAX
    P = None if penalty is None else np.asarray(penalty, dtype=float)
    diag = np.abs(information(bound, start, "observed", diagonal=True)) / n
    if P is not None:
        diag = diag + np.diag(P) / n
    scale = np.where(diag > FLAT, np.exp2(np.round(0.5 * np.log2(np.where(diag > FLAT, diag, 1.0)))), 1.0)

    def penalised(theta):
        """ℓ(θ) − ½ θᵀPθ and its gradient."""
        value, grad = loglik_gradient(bound, theta)
        if P is None:
            return value, grad
        pulled = P @ theta
        return value - 0.5 * float(theta @ pulled), grad - pulled

    origin = penalised(start)[0]  # the objective where f = 0

    def objective(y):
        value, grad = penalised(y / scale)
        return -(value - origin) / n, -grad / (n * scale)

    def tangents(theta):
        """An orthonormal basis of the symmetry's tangents at θ, in the scaled coordinates."""
        return None if gauge is None else np.linalg.qr(gauge(theta) * scale[:, None])[0]

    def hessian(y):
        """The Hessian of f in the scaled coordinates, gauge-fixed (the module docstring)."""
        theta = y / scale
        H = information(bound, theta, "observed")
        H = (H if P is None else H + P) / (n * np.outer(scale, scale))
        Q = tangents(theta)
        return H if Q is None else H + float(np.mean(np.abs(np.diag(H)))) * (Q @ Q.T)

    operators = {}  # the operator at the last θ: trust-krylov asks for many products there

    def hessian_product(y, p):
        theta = y / scale
        key = theta.tobytes()
        if key not in operators:
            operators.clear()
            operators[key] = (information_operator(bound, theta, "observed"), tangents(theta))
        product, Q = operators[key]
        out = product(p / scale)
        out = (out if P is None else out + P @ (p / scale)) / (n * scale)
        return out if Q is None else out + Q @ (Q.T @ p)

    reached = {"x": start * scale, "nit": 0}  # the last accepted point, for a run SciPy cannot finish

    def stationary(intermediate_result):
        """Stop at the first point whose per-comparison gradient (of the penalised objective, with a
        penalty) is below GTOL (computed there already)."""
        reached["x"], reached["nit"] = intermediate_result.x, reached["nit"] + 1
        if np.max(np.abs(penalised(intermediate_result.x / scale)[1]), initial=0.0) < GTOL * n:
            raise StopIteration

    options = {"gtol": 0.0, "maxiter": int(maxiter)}
    kwargs = {"hess": hessian} if dense else {"hessp": hessian_product}
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        try:
            result = minimize(objective, start * scale, jac=True, method="trust-exact" if dense else "trust-krylov",
                              callback=stationary, options=options, **kwargs)
        except ValueError:
            # every step was refused until the trust region had no radius left (SciPy's exact
            # subproblem then meets a non-finite shift): from a start within the rounding of ℓ
            # of the maximum (a warm start) no step can be certified by f; the run ends at the
            # last accepted point, and the fit's KKT check decides whether it is the MLE
            result = OptimizeResult(x=reached["x"], nit=reached["nit"], status=2, message=COLLAPSED)
    theta = result.x / scale
    value, grad = loglik_gradient(bound, theta)
    if P is not None:
        grad = grad - P @ theta
    return Optimum(theta=theta, loglik=value, n=n, grad_max=float(np.max(np.abs(grad), initial=0.0)) / n,
                   iterations=int(result.nit), method="trust-exact" if dense else "trust-krylov",
                   message=STATIONARY if result.status == 99 or "StopIteration" in str(result.message)
                   else str(result.message))


def moved_starts(start: np.ndarray, count: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``count`` starts moved at random from ``start``: each coordinate by a normal step of
    scale max(|θ₀|, 1) / 2, so that every coordinate moves on its own scale and coordinates at
    zero move too."""
    step = 0.5 * np.maximum(np.abs(start), 1.0)
    return [start + step * rng.standard_normal(start.size) for _ in range(count)]


__all__ = ["DENSE_MAX", "MAXITER", "Optimum", "loglik_gradient", "maximise", "moved_starts"]
