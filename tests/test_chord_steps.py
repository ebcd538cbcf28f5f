"""Chord steps with BFGS corrections (optimize._two_loop, _newton's ``quasi``): the corrected
inverse satisfies the secant equation of its newest pair, and Newton's method with corrected
chord steps reaches the same maximum of a concave log-likelihood as without them."""

import numpy as np
import pytest

from bayesrank.inference import optimize as opt


def test_two_loop_satisfies_the_newest_secant_pair():
    rng = np.random.default_rng(0)
    n = 8
    H0 = np.cov(rng.standard_normal((n, 3 * n)))            # the factored information
    A = np.cov(rng.standard_normal((n, 3 * n))) + np.eye(n)  # the curvature along the path
    pairs = []
    for _ in range(4):
        s = rng.standard_normal(n)
        opt._add_pair(pairs, s, A @ s)
    solve = lambda v: np.linalg.solve(H0, v)  # noqa: E731
    s, y, _ = pairs[-1]
    np.testing.assert_allclose(opt._two_loop(solve, y, pairs), s, rtol=1e-10)
    g = rng.standard_normal(n)
    np.testing.assert_allclose(opt._two_loop(solve, g, []), solve(g))
    opt._add_pair(pairs, s, -A @ s)  # negative curvature: not kept
    assert len(pairs) == 4


@pytest.mark.parametrize("quasi", [False, True])
def test_newton_with_corrected_chords_reaches_the_maximum(monkeypatch, quasi):
    """A concave log-likelihood (a logistic regression on 1,200 coordinates: chord steps from
    CHORD_FROM = 1000 on; dense steps, not conjugate gradients, so a factor for them)."""
    monkeypatch.setattr(opt, "ITERATIVE_FROM", 10**9)
    rng = np.random.default_rng(1)
    n, m = 1200, 3000
    X = rng.standard_normal((m, n)) / np.sqrt(n)
    y = (rng.random(m) < 1 / (1 + np.exp(-X @ rng.standard_normal(n) * 3))).astype(float)

    def logp_dlogp(theta):
        eta = X @ theta
        return float(y @ eta - np.logaddexp(0, eta).sum() - 0.5 * theta @ theta), \
            X.T @ (y - 1 / (1 + np.exp(-eta))) - theta

    def hessian(theta):
        p = 1 / (1 + np.exp(-X @ theta))
        return -(X.T * (p * (1 - p))) @ X - np.eye(n)

    calls = []
    two_loop = opt._two_loop
    monkeypatch.setattr(opt, "_two_loop", lambda *a: calls.append(1) or two_loop(*a))
    theta, it, done, _ = opt._newton(logp_dlogp, hessian, np.zeros(n), m, quasi=quasi)
    assert done
    assert np.max(np.abs(logp_dlogp(theta)[1])) / m < opt.FINAL_TOL
    assert bool(calls) == quasi
