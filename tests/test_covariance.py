"""Thurstonian covariance (k_cov): exact constraints, invariances, parameter counts, identifiability."""

import numpy as np
import pytensor.tensor as pt
import pytest

import bayesrank as br
from bayesrank.frameworks import framework_from_spec
from bayesrank.inference.compiled import compiled_model
from bayesrank.structures import (
    dispersion_matrix,
    n_covariance,
    thurstonian_dispersion,
    zero_sum_basis,
)
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(7)
    return simulate_counts(np.linspace(-1, 1, 7), 300, rng, eta=-0.5)


_FNS = {}


def _values_at(framework, data, seed):
    """Model variables at a random θ (a plain compiled function: no Jacobian, fast)."""
    import pytensor

    compiled = compiled_model(framework, framework.prepare(data))
    names = [n for n in ("score", "cov_diag", "cov_loading", "tie_factor") if n in compiled.model.named_vars]
    key = id(compiled)
    if key not in _FNS:
        _FNS[key] = pytensor.function([compiled.theta], compiled._in_theta([compiled.model[n] for n in names]))
    theta = np.random.default_rng(seed).normal(scale=0.7, size=compiled.n_free)
    return compiled, theta, dict(zip(names, _FNS[key](theta)))


@pytest.mark.parametrize("k_cov", [0, 1, 3])
def test_constraints_hold_exactly_at_random_points(small, k_cov):
    m = small.n_items
    for seed in range(3):
        _, _, v = _values_at(br.Davidson(k_tie=1, k_cov=k_cov), small, seed)
        d = v["cov_diag"]
        L = v["cov_loading"] if k_cov else np.zeros((m, 0))
        Sigma = np.diag(d) + L @ L.T
        P = np.eye(m) - np.ones((m, m)) / m
        assert abs(v["score"].sum()) < 1e-12                                  # Σμ = 0
        assert np.trace(P @ Sigma @ P) == pytest.approx(1.0, abs=1e-12)      # trace(PΣP) = 1
        np.testing.assert_allclose(L.sum(axis=0), 0.0, atol=1e-12)           # Λᵀ1 = 0
        assert np.all(d >= 0)
        # canonical rotation: in the zero-sum basis the loadings are lower-triangular, positive diagonal
        if k_cov:
            Lb = zero_sum_basis(m).T @ L
            assert np.allclose(np.triu(Lb[:k_cov], 1), 0.0, atol=1e-12)
            assert np.all(np.diag(Lb[:k_cov]) > 0)
        # C = (1/2m) Σ_ab s_ab = trace(PΣP) (paper Prop. C.2)
        assert dispersion_matrix(d, L).sum() / (2 * m) == pytest.approx(1.0, abs=1e-12)


def test_probabilities_invariant_under_rotation_translation_and_scale():
    rng = np.random.default_rng(1)
    m, k = 6, 3
    d = rng.uniform(0.1, 1, m)
    L = rng.normal(size=(m, k))
    Q, _ = np.linalg.qr(rng.normal(size=(k, k)))
    a, b = np.triu_indices(m, 1)

    def s(dd, LL):
        return thurstonian_dispersion(pt.as_tensor(dd), pt.as_tensor(LL), a, b).eval()

    base = s(d, L)
    np.testing.assert_allclose(s(d, L @ Q), base, rtol=1e-12)                 # Λ → ΛQ
    np.testing.assert_allclose(s(d, L + rng.normal(size=(1, k))), base, rtol=1e-12)  # Λ → Λ + 1cᵀ
    mu = rng.normal(size=m)
    z = (mu[a] - mu[b]) / np.sqrt(base)
    t = 2.7                                                                   # (μ, Σ) → (tμ, t²Σ)
    np.testing.assert_allclose((t * mu[a] - t * mu[b]) / np.sqrt(s(t**2 * d, t * L)), z, rtol=1e-12)


def test_model_probabilities_invariant_under_rotation_of_loadings(small):
    fw = br.RaoKupper(k_tie=1, k_cov=2)
    compiled, theta, v = _values_at(fw, small, 4)
    Q, _ = np.linalg.qr(np.random.default_rng(2).normal(size=(2, 2)))
    from bayesrank.links import log_probs

    a, b = small.a, small.b

    def lp(L):
        s = dispersion_matrix(v["cov_diag"], L)[a, b]
        z = (v["score"][a] - v["score"][b]) / np.sqrt(s)
        h = (v["tie_factor"][a] * compiled_phi(small.n_items)[b]).sum(-1) + (
            v["tie_factor"][b] * compiled_phi(small.n_items)[a]).sum(-1)
        return log_probs("rao-kupper", pt.as_tensor(z), pt.as_tensor(h)).eval()

    np.testing.assert_allclose(lp(v["cov_loading"]), compiled.cell_log_probs(theta), rtol=1e-10)
    np.testing.assert_allclose(lp(v["cov_loading"] @ Q), compiled.cell_log_probs(theta), rtol=1e-10)


def compiled_phi(m):
    from bayesrank.structures import dct_iv_basis

    return dct_iv_basis(m, 1)


@pytest.mark.parametrize("framework", [
    br.BradleyTerry(ties="drop", k_cov=2), br.RaoKupper(k_tie=2, k_cov=3), br.Davidson(k_tie=1, tie_intercept=True, k_cov=0),
], ids=lambda f: f.label)
def test_parameter_count_is_the_dimension_of_the_free_coordinates(small, framework):
    compiled = compiled_model(framework, framework.prepare(small))
    assert framework.count_free_parameters(small) == compiled.n_free


def test_parameter_counts_for_the_paper_grid():
    m = 129
    # scores m−1; covariance (m−1)(k+1) − k(k−1)/2; factored ties (m−k)k + k(k+1)/2
    assert n_covariance(m, 0) == 128
    assert n_covariance(m, 3) == 128 * 4 - 3
    arena = br.load("arena-2024")
    assert br.BradleyTerry(k_cov=0).count_free_parameters(arena) == 256                 # paper model 2: 258
    assert br.RaoKupper(k_tie=20, k_cov=3).count_free_parameters(arena) == 128 + 509 + 109 * 20 + 210  # model 18
    assert br.Davidson(k_tie=0, k_cov=3).count_free_parameters(arena) == 128 + 1 + 509  # model 27: 646


def test_spec_round_trip_and_validation():
    for fw in (br.BradleyTerry(ties="drop", k_cov=3), br.RaoKupper(k_tie=2, k_cov=0), br.Davidson(k_cov=None)):
        assert framework_from_spec(fw.spec()) == fw
    old = {"framework": "davidson", "k_tie": 1, "tie_intercept": False, "priors": {"score": 3.0, "tie": 2.0}}
    assert framework_from_spec(old).k_cov is None  # specs saved before k_cov still load
    with pytest.raises(br.ModelSpecError):
        br.Davidson(k_cov=-1)
    with pytest.raises(br.ModelSpecError):
        br.BradleyTerry(k_cov=True)


def test_map_is_identified_and_reported(small):
    fit = br.Davidson(k_tie=0, k_cov=1).fit(small)
    assert fit.diagnostics["grad_norm"] < 1e-6
    assert fit.diagnostics["min_information_eigenvalue"] > 0
    assert abs(fit.scores().sum()) < 1e-10
    names = set(fit.parameters()["parameter"])
    assert {"cov_diag", "cov_loading"} <= names
    # with a covariance the model nests its own Σ = D version: likelihood at least as high
    assert fit.nll <= br.Davidson(k_tie=0, k_cov=0).fit(small).nll + 1e-9
