"""NUTS in whitened coordinates: the same log-density, the same variables, the same posterior."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.evaluation.compare import loo
from bayesrank.inference.whiten import WHITE, whitened_model, whitening
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(3)
    return simulate_counts(np.array([-0.6, -0.1, 0.2, 0.5]), 300, rng, eta=-0.4)


def test_whitened_log_density_is_the_models_at_theta_hat_plus_L_z(small):
    framework = br.Davidson(k_tie=1)
    prepared = framework.prepare(small)
    model, _ = framework.build(prepared, prior="weak")
    white = whitening(framework, small, model)
    assert white.theta is not None, white.reason
    # L Lᵀ is the inverse observed information at the MLE, where the gradient vanishes
    hessian = _numeric_hessian(framework, prepared, white.theta)
    np.testing.assert_allclose(white.factor @ white.factor.T @ hessian, -np.eye(white.theta.size), atol=1e-4)
    sampled = whitened_model(model, white)
    logp_white = sampled.compile_logp()
    logp_model = model.compile_logp()
    rng = np.random.default_rng(0)
    for _ in range(3):
        z = rng.normal(size=white.theta.size)
        theta = white.theta + white.factor @ z
        point, start = {}, 0
        for v in model.value_vars:
            shape = model.initial_point()[v.name].shape
            size = int(np.prod(shape))
            point[v.name] = theta[start:start + size].reshape(shape)
            start += size
        assert logp_white({WHITE: z}) == pytest.approx(logp_model(point), rel=1e-10)


def _numeric_hessian(framework, prepared, theta, h=1e-5):
    """Central differences of the flat-prior log-likelihood's gradient, from PyMC's own dlogp
    (a reference independent of bayesrank's information matrices)."""
    flat, _ = framework.build(prepared, prior="flat")
    dlogp = flat.compile_dlogp(jacobian=False)
    point = flat.initial_point()

    def grad(th):
        out, start = dict(point), 0
        for v in flat.value_vars:
            size = int(np.prod(point[v.name].shape))
            out[v.name] = th[start:start + size].reshape(point[v.name].shape)
            start += size
        return dlogp(out)

    eye = np.eye(theta.size)
    H = np.array([(grad(theta + h * e) - grad(theta - h * e)) / (2 * h) for e in eye])
    return (H + H.T) / 2


def test_whitened_fit_has_the_same_variables_and_posterior(small):
    kw = dict(method="nuts", draws=1000, tune=500, chains=2, random_seed=2, progressbar=False)
    white = br.fit(br.Davidson(k_tie=0), small, **kw)
    plain = br.fit(br.Davidson(k_tie=0), small, whiten=False, **kw)
    assert white.diagnostics["whitened"] and not plain.diagnostics["whitened"]
    post_w, post_p = white.tree["posterior"], plain.tree["posterior"]
    assert set(post_w.data_vars) == set(post_p.data_vars)
    for name in post_p.data_vars:
        assert post_w[name].dims == post_p[name].dims
    assert WHITE not in post_w
    # posterior means within 4 Monte Carlo standard errors of each other, sds within 10 %
    a, b = white.leaderboard().set_index("name"), plain.leaderboard().set_index("name")
    mcse = np.hypot(a["se"], b["se"]) / np.sqrt(min(white.diagnostics["min_ess_bulk"],
                                                    plain.diagnostics["min_ess_bulk"]))
    assert (np.abs(a["score"] - b["score"].loc[a.index]) < 4 * mcse.loc[a.index] + 1e-12).all()
    assert (a["se"] / b["se"].loc[a.index]).between(0.9, 1.1).all()
    assert white.converged, (white.diagnostics, white.warnings)
    res = loo(white, refit=None)  # the log-likelihood group is the original model's
    assert res.elpd_i.size == small.n_cells and np.isfinite(res.elpd)
