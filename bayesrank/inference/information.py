"""Fisher information of a compiled model on its free coordinates θ.

Two estimates of the information matrix of the free coordinates are available:

``observed``
    J(θ̂) = −∇²ℓ(θ̂), the negative Hessian of the log-likelihood (automatic differentiation).
``expected``
    The plug-in *expected* information with the empirical design (digest
    ``seed-judge-aware-btl.md`` §3.4, the form that reproduces the judge-aware paper's tables):

    .. math::

        \\hat I(θ) = \\sum_c n_c \\sum_{o} p_{co}(θ)\\, ∇_θ \\log p_{co}(θ)\\, ∇_θ \\log p_{co}(θ)^T,

    with ``c`` the cells, ``n_c`` their number of comparisons and ``o`` the outcomes
    (a wins, b wins, tie) of positive probability. For a two-outcome (Bradley–Terry type)
    cell with linear predictor η_c this is ``n_c σ(η_c)(1 − σ(η_c)) ∇η_c ∇η_cᵀ``, i.e. the
    paper's ``Σ_{(i,j,k)∈Ω} n_ijk p̂(1 − p̂) g gᵀ`` (no ``(y − p)∇²η`` term).

Both are matrices on θ; covariances of reported quantities follow by the delta method with
the Jacobian from :meth:`CompiledModel.constrained`.
"""

from __future__ import annotations

import numpy as np
import pytensor
from pytensor.gradient import jacobian

from bayesrank.data.comparisons import Comparisons

INFORMATION = ("expected", "observed")


def _cell_logp_jacobian(compiled):
    """θ ↦ ((n_cells, 3) log-probabilities, (n_cells·3, n_free) Jacobian), compiled once."""
    fn = compiled.__dict__.get("_cell_logp_jac")
    if fn is None:
        (lp,) = compiled._in_theta([compiled.built.log_probs])
        flat = lp.flatten()
        fn = pytensor.function([compiled.theta], [lp, jacobian(flat, compiled.theta, vectorize=True)])
        compiled.__dict__["_cell_logp_jac"] = fn
    return fn


def expected_information(compiled, theta: np.ndarray, data: Comparisons) -> np.ndarray:
    """Plug-in expected Fisher information of the free coordinates (see the module docstring).

    Parameters
    ----------
    compiled : CompiledModel
        The compiled model of ``framework`` on ``data``.
    theta : ndarray
        Free coordinates at which to evaluate (usually the MLE).
    data : Comparisons
        The *prepared* data (after the framework's tie convention), whose cell totals are
        the ``n_c``.

    Returns
    -------
    ndarray
        ``(n_free, n_free)`` symmetric positive semi-definite matrix.
    """
    lp, jac = _cell_logp_jacobian(compiled)(np.asarray(theta, dtype=float))
    n_cells = lp.shape[0]
    jac = jac.reshape(n_cells, lp.shape[1], -1)
    p = np.exp(lp)
    ok = np.isfinite(lp) & (p > 0)
    p = np.where(ok, p, 0.0)
    jac = np.where(ok[..., None], np.nan_to_num(jac), 0.0)
    w = np.asarray(data.totals, dtype=float)[:, None] * p
    info = np.einsum("co,cop,coq->pq", w, jac, jac)
    return 0.5 * (info + info.T)


def observed_information(compiled, theta: np.ndarray) -> np.ndarray:
    """Observed information −∇²ℓ(θ) (exact Hessian by automatic differentiation)."""
    h = -np.asarray(compiled.hessian(np.asarray(theta, dtype=float)))
    return 0.5 * (h + h.T)


def information(compiled, theta: np.ndarray, data: Comparisons, kind: str = "observed") -> np.ndarray:
    """Information matrix of the free coordinates, ``kind`` in :data:`INFORMATION`."""
    if kind == "expected":
        return expected_information(compiled, theta, data)
    if kind == "observed":
        return observed_information(compiled, theta)
    from bayesrank.errors import ModelSpecError

    raise ModelSpecError(f"information must be one of {INFORMATION}, got {kind!r}.")
