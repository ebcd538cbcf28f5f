"""Warm starts change where a fit begins, not where it ends."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.inference.map import fit_map
from bayesrank.inference.optimize import loglik_gradient
from bayesrank.inference.structure import structure_of
from bayesrank.inference.warm import model_start, starting_theta
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def data():
    return simulate_counts(np.linspace(-1, 1, 6), 80, np.random.default_rng(0), eta=-0.5)


def test_values_by_name_give_the_theta_that_has_them(data):
    framework = br.Davidson(k_tie=1)
    prepared = framework.prepare(data)
    bound = structure_of(framework, prepared).bind(prepared)
    theta = bound.x0 + np.random.default_rng(1).normal(0, 0.3, bound.n_free)
    values = bound.natural(theta)
    assert np.allclose(starting_theta(bound, values), theta, atol=1e-10)
    partly = {name: np.where(np.arange(v.size).reshape(v.shape) == 0, np.nan, v) for name, v in values.items()}
    start = bound.natural(starting_theta(bound, partly))
    defaults = bound.natural(bound.x0)
    assert np.allclose(start["tie_factor"].ravel()[0], defaults["tie_factor"].ravel()[0])


def test_a_map_fit_reaches_the_same_estimate_from_another_fits_values(data):
    framework = br.Davidson(k_tie=1)
    cold = fit_map(framework, data)
    elsewhere = fit_map(framework, simulate_counts(np.linspace(1, -1, 6), 50, np.random.default_rng(5), eta=0.5))
    start = {name: elsewhere["estimate"][name].values for name in ("score", "tie_factor")}
    warm = fit_map(framework, data, init=start)
    assert np.allclose(warm["estimate"]["score"].values, cold["estimate"]["score"].values, atol=1e-8)
    assert float(warm["estimate"]["loglik"]) == pytest.approx(float(cold["estimate"]["loglik"]), rel=1e-12)


def test_wrong_shapes_are_refused(data):
    framework = br.Davidson()
    with pytest.raises(br.ModelSpecError, match="init gives score of shape"):
        fit_map(framework, data, init={"score": np.zeros(3)})
    with pytest.raises(br.ModelSpecError, match="free coordinates"):
        fit_map(framework, data, init=np.zeros(2))


def test_a_model_with_a_nested_one_starts_at_its_estimate(data):
    """Σ = D starts where the model without covariance has its MLE, so its fit is never below it."""
    framework = br.RaoKupper(k_tie=1, k_cov=0)
    prepared = framework.prepare(data)
    bound = structure_of(framework, prepared).bind(prepared)
    nested = fit_map(framework.nested(), data)
    start = model_start(bound)
    assert loglik_gradient(bound, start)[0] == pytest.approx(float(nested["estimate"]["loglik"]), rel=1e-12)
    assert np.array_equal(starting_theta(bound, None), start)
    fitted = fit_map(framework, data)
    assert float(fitted["estimate"]["loglik"]) >= float(nested["estimate"]["loglik"])
