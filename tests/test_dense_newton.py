"""Newton's steps on a non-concave log-likelihood within reach of the dense preconditioner
(optimize.maximise_in_chart): solved by Cholesky on the dense information, never by conjugate
gradients on the information operator (on an indefinite information those run ITERATIVE_MAX
products and fail; the whitened phases need the dense information anyway)."""

import numpy as np
import pytest

from bayesrank.inference import optimize as opt

N = 1200  # beyond ITERATIVE_FROM, within DENSE_PRECONDITIONER_MAX


def _double_well():
    """ℓ(θ) = −Σ (θᵢ² − 1)² / 4 + a weak coupling: maxima near θᵢ = ±1, not concave near 0."""
    rng = np.random.default_rng(0)
    C = rng.standard_normal((N, N)) / N
    C = 0.01 * (C + C.T)

    def logp_dlogp(theta):
        return float(-np.sum((theta**2 - 1) ** 2) / 4 + theta @ C @ theta / 2), -(theta**2 - 1) * theta + C @ theta

    def hessian(theta):
        return C - np.diag(3 * theta**2 - 1)

    return logp_dlogp, hessian, 0.5 + 0.1 * rng.random(N)


@pytest.mark.parametrize("dense_max, operator_used", [(opt.DENSE_PRECONDITIONER_MAX, False), (N - 1, True)])
def test_non_concave_newton_by_cholesky(monkeypatch, dense_max, operator_used):
    monkeypatch.setattr(opt, "DENSE_PRECONDITIONER_MAX", dense_max)
    logp_dlogp, hessian, x0 = _double_well()
    calls = []

    def product(theta):
        calls.append(1)
        information = -hessian(theta)
        return (lambda v: information @ v), np.diag(information)

    theta, info = opt.maximise_in_chart(logp_dlogp, hessian, x0, N, information_product=product)
    assert np.max(np.abs(logp_dlogp(theta)[1])) / N < opt.FINAL_TOL
    assert np.all(np.linalg.eigvalsh(hessian(theta)) < 0)  # a strict maximum
    assert info["newton_iterations"] > 0
    assert bool(calls) == operator_used


@pytest.mark.parametrize("scale, single_from", [(1.0, 10), (1e40, 10), (1.0, 1000)])  # (1e40: beyond single)
def test_whitening_rounds_the_information(monkeypatch, scale, single_from):
    """Tᵀ (I / n) T has eigenvalues ±1 where |I / n|'s are above the floor (1e-5 of the largest)."""
    monkeypatch.setattr(opt, "SINGLE_PRECISION_FROM", single_from)
    rng = np.random.default_rng(2)
    Q, _ = np.linalg.qr(rng.standard_normal((50, 50)))
    w = np.concatenate([-np.geomspace(1e-4, 1e-1, 10), np.geomspace(1e-3, 1.0, 40)]) * scale
    information = (Q * w) @ Q.T * 7.0
    T, T_inv = opt._whitening(information, 7.0)
    assert T.dtype == np.float64
    assert (T_inv is None) == (scale == 1.0 and single_from == 10)  # (single precision: no exact inverse)
    if T_inv is not None:
        np.testing.assert_allclose(T_inv @ T, np.eye(50), atol=1e-10)
    rounded = np.linalg.eigvalsh(T.T @ (information / 7.0) @ T)
    np.testing.assert_allclose(np.abs(rounded), 1.0, rtol=1e-3)
    assert np.sum(rounded < 0) == 10
