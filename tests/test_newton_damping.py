"""Newton's method on a likelihood with a near-flat, correlated direction whose full step
overshoots into a region where the gradient overflows (the k_tie = 20 tie thresholds of pairs
without ties): backtracking alone finds no gain, Levenberg–Marquardt damping does.

The reference is a two-coordinate quadratic written here, ℓ = −u² − 1e-10 (v − 10⁶)² with
u = (x + y)/√2, v = (x − y)/√2, whose gradient is NaN once |x| or |y| exceeds 10³.
"""

import numpy as np

from bayesrank.inference import optimize


def toy():
    def logp_dlogp(theta):
        x, y = theta
        u, v = (x + y) / np.sqrt(2), (x - y) / np.sqrt(2)
        lp = -u**2 - 1e-10 * (v - 1e6) ** 2
        du, dv = -2 * u, -2e-10 * (v - 1e6)
        grad = np.array([du + dv, du - dv]) / np.sqrt(2)
        if max(abs(x), abs(y)) > 1e3:
            grad = np.full(2, np.nan)
        return lp, grad

    def hessian(theta):
        a, b = -1.0 - 1e-10, -1.0 + 1e-10
        return np.array([[a, b], [b, a]])

    return logp_dlogp, hessian


def test_damped_newton_moves_where_backtracking_stalls(monkeypatch):
    logp_dlogp, hessian = toy()
    start = np.zeros(2)
    lp0 = logp_dlogp(start)[0]
    monkeypatch.setattr(optimize, "DAMPING", (0.0,))
    theta, _, _, _ = optimize._newton(logp_dlogp, hessian, start, 1.0, max_iter=1)
    assert np.array_equal(theta, start)  # every backtracked full step lands where the gradient overflows
    monkeypatch.undo()
    theta, _, _, _ = optimize._newton(logp_dlogp, hessian, start, 1.0, max_iter=3)
    assert np.all(np.isfinite(logp_dlogp(theta)[1]))
    assert logp_dlogp(theta)[0] > lp0
    assert (theta[0] - theta[1]) / np.sqrt(2) > 0  # along v, towards its maximum at 10⁶


def test_a_chord_step_finishes_newton_when_the_last_step_predicts_it(monkeypatch):
    """Bradley–Terry on arena-2024: two informations, then one step with the second's factor
    (its predicted landing ~1e-15 per comparison) instead of a third information; the estimate
    and its standard errors are those of three full Newton steps to 1e-9."""
    import bayesrank as br

    data, fw = br.load("arena-2024"), br.BradleyTerry()
    chord = br.fit(fw, data)
    assert chord.converged and chord.diagnostics["newton_iterations"] == 2
    assert chord.diagnostics["grad_norm"] < optimize.FINAL_TOL
    monkeypatch.setattr(optimize, "CHORD_FINISH", np.inf)  # never predicted to finish
    full = br.fit(fw, data)
    assert full.converged and full.diagnostics["newton_iterations"] == 3
    np.testing.assert_allclose(chord.scores(), full.scores(), rtol=0, atol=1e-9)
    np.testing.assert_allclose(chord.tree["estimate"]["score_se"], full.tree["estimate"]["score_se"], rtol=1e-9)
