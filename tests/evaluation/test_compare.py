"""PSIS-LOO per cell and the comparison of NUTS fits; NUTS with a Thurstonian covariance."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.evaluation.compare import compare, loo
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(21)
    return simulate_counts(np.array([-0.6, -0.1, 0.2, 0.5]), 300, rng, eta=-0.4)


@pytest.fixture(scope="module")
def posts(small):
    kw = dict(method="nuts", draws=300, tune=300, chains=2, random_seed=3)
    return {"davidson": br.fit(br.Davidson(k_tie=0), small, **kw),
            "rao-kupper": br.fit(br.RaoKupper(k_tie=0), small, **kw)}


def test_loo_per_cell_and_compare(small, posts):
    res = loo(posts["davidson"], refit=None)
    assert res.elpd_i.size == res.pareto_k.size == small.n_cells
    assert res.elpd < 0 and np.isfinite(res.se)
    # ELPD of a cell ≤ its log-likelihood averaged over the posterior predictive (log of the mean)
    ll = posts["davidson"].tree["log_likelihood"]["outcomes"].values.reshape(-1, small.n_cells)
    lpd = np.log(np.exp(ll - ll.max(axis=0)).mean(axis=0)) + ll.max(axis=0)
    assert res.elpd <= lpd.sum()
    table = compare(posts, refit=None)
    assert set(table.index) == {"davidson", "rao-kupper"}


@pytest.mark.slow   # four NUTS fits with a Thurstonian covariance: minutes; the default tier's LOO tests run NUTS
def test_nuts_with_covariance_keeps_constraints(small):
    post = br.fit(br.BradleyTerry(ties="half", k_cov=1), small, method="nuts", draws=200, tune=300, chains=2,
                  random_seed=4)
    m = small.n_items
    d = post.tree["posterior"]["cov_diag"].values.reshape(-1, m)
    L = post.tree["posterior"]["cov_loading"].values.reshape(-1, m, 1)
    trace = (1 - 1 / m) * d.sum(axis=1) + (L**2).sum(axis=(1, 2)) - (L.sum(axis=1) ** 2).sum(axis=1) / m
    np.testing.assert_allclose(trace, 1.0, atol=1e-10)
    np.testing.assert_allclose(L.sum(axis=1), 0.0, atol=1e-10)
    s = post.tree["posterior"]["score"].values.reshape(-1, m)
    np.testing.assert_allclose(s.sum(axis=1), 0.0, atol=1e-10)


def test_stacking_weights_follow_large_elpd_differences_without_underflow():
    from bayesrank.evaluation.compare import stacking_weights

    rng = np.random.default_rng(0)
    base = -500 + rng.normal(0, 50, size=(400, 1))        # cells of thousands of comparisons
    better = base + rng.normal(2.0, 1.0, size=(400, 1))   # better in almost every cell
    w = stacking_weights(np.column_stack([base, better]))
    assert w[1] > 0.95 and np.isclose(w.sum(), 1)
    shifted = stacking_weights(np.column_stack([base, better]) + rng.normal(0, 100, size=(400, 1)))
    assert np.allclose(w, shifted, atol=1e-6)               # a constant per cell changes nothing
    half = np.where(np.arange(400)[:, None] < 200, [0.0, -3.0], [-3.0, 0.0]) - 700
    assert np.allclose(stacking_weights(half), [0.5, 0.5], atol=1e-3)  # complementary fits: both kept


def test_stacking_weights_maximise_the_stacking_objective():
    from scipy.optimize import minimize

    from bayesrank.evaluation.compare import stacking_weights

    rng = np.random.default_rng(1)
    e = -1.0 + rng.normal(0, 0.3, size=(300, 3)) + np.array([0.0, 0.05, -0.1])
    ours = stacking_weights(e)
    objective = lambda w: np.log(np.exp(e) @ w).sum()  # noqa: E731
    assert objective(ours) >= objective(np.full(3, 1 / 3)) - 1e-9
    for k in range(3):  # no vertex does better than the optimum
        assert objective(ours) >= objective(np.eye(3)[k]) - 1e-9
    slsqp = minimize(lambda w: -objective(w), np.full(3, 1 / 3), method="SLSQP", bounds=[(0, 1)] * 3,
                     constraints={"type": "eq", "fun": lambda w: w.sum() - 1}).x  # the textbook solver
    assert objective(ours) >= objective(slsqp) - 1e-5 and np.allclose(ours, slsqp, atol=2e-3)  # 0 is a limit
