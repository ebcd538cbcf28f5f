"""Thurstonian covariance (k_cov): exact constraints, invariances, parameter counts, identifiability."""

import numpy as np
import pytensor.tensor as pt
import pytest

import bayesrank as br
from bayesrank.inference.structure import structure_of
from bayesrank.model.links import log_probs
from bayesrank.model.registry import framework_from_spec
from bayesrank.model.structures import dct_iv_basis, n_covariance, zero_sum_basis
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(7)
    return simulate_counts(np.linspace(-1, 1, 7), 300, rng, eta=-0.5)


def dispersion(d, L):
    """s_ab = d_a + d_b + ‖λ_a − λ_b‖² for every pair (paper eq. 13), written here in NumPy."""
    S = d[:, None] + d[None, :]
    if L is not None:
        S = S + ((L[:, None, :] - L[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(S, 0.0)
    return S


def _values_at(framework, data, seed):
    """Model variables and θ at a random point of the free coordinates."""
    prepared = framework.prepare(data)
    structure = structure_of(framework, prepared)
    theta = np.random.default_rng(seed).normal(scale=0.7, size=structure.n_free)
    return structure.bind(prepared), theta, structure.values(theta)


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
        # the rotation fixed: in the zero-sum basis the loadings are lower-triangular
        if k_cov:
            Lb = zero_sum_basis(m).T @ L
            assert np.allclose(np.triu(Lb[:k_cov], 1), 0.0, atol=1e-12)
        # C = (1/2m) Σ_ab s_ab = trace(PΣP) (paper Prop. C.2)
        assert dispersion(d, L).sum() / (2 * m) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("framework", [br.RaoKupper(k_tie=1, k_cov=2), br.Davidson(k_tie=0, k_cov=0)],
                         ids=lambda f: f.label)
def test_model_probabilities_are_the_papers_in_the_reported_parameters(small, framework):
    """The likelihood in raw coordinates equals the paper's z_ab = (μ_a − μ_b)/√s_ab in the
    reported (normalised) μ, d, Λ — and is unchanged by a rotation of Λ, a translation of its
    rows and the scale (μ, Σ) → (tμ, t²Σ)."""
    bound, theta, v = _values_at(framework, small, 4)
    a, b = small.a, small.b
    L = v.get("cov_loading")
    if "tie_factor" in v:
        phi = dct_iv_basis(small.n_items, framework.k_tie)
        h = (v["tie_factor"][a] * phi[b]).sum(-1) + (v["tie_factor"][b] * phi[a]).sum(-1)
    else:
        h = np.full(a.size, float(v["eta_raw"]))

    def lp(mu, d, loading):
        z = (mu[a] - mu[b]) / np.sqrt(dispersion(d, loading)[a, b])
        return log_probs(framework.link, pt.as_tensor(z), pt.as_tensor(h)).eval()

    model = bound.log_probs(theta)
    np.testing.assert_allclose(lp(v["score"], v["cov_diag"], L), model, rtol=1e-10)
    if L is not None:
        rng = np.random.default_rng(2)
        Q, _ = np.linalg.qr(rng.normal(size=(L.shape[1],) * 2))
        np.testing.assert_allclose(lp(v["score"], v["cov_diag"], L @ Q), model, rtol=1e-10)
        np.testing.assert_allclose(lp(v["score"], v["cov_diag"], L + rng.normal(size=(1, L.shape[1]))), model,
                                   rtol=1e-10)
    t = 2.7
    np.testing.assert_allclose(lp(t * v["score"], t**2 * v["cov_diag"], None if L is None else t * L), model,
                               rtol=1e-10)


@pytest.mark.parametrize("framework,count", [
    (br.BradleyTerry(ties="drop", k_cov=2), 6 + n_covariance(7, 2)),
    (br.RaoKupper(k_tie=2, k_cov=3), 6 + n_covariance(7, 3) + (7 - 2) * 2 + 3),
    (br.Davidson(k_tie=1, tie_intercept=True, k_cov=0), 6 + 6 + (7 - 1) * 1 + 1 + 1),
], ids=lambda x: getattr(x, "label", str(x)))
def test_parameter_count_is_the_dimension_of_the_free_coordinates(small, framework, count):
    """m − 1 scores, (m − 1)(k + 1) − k(k − 1)/2 covariance, (m − k)k + k(k + 1)/2 factored ties."""
    assert structure_of(framework, framework.prepare(small)).n_free == count


def test_parameter_counts_for_the_paper_grid(arena):
    m = 129
    assert n_covariance(m, 0) == 128
    assert n_covariance(m, 3) == 128 * 4 - 3

    def n_free(framework):
        return structure_of(framework, framework.prepare(arena)).n_free

    assert n_free(br.BradleyTerry(k_cov=0)) == 256                                   # paper model 2: 258
    # model 18: the arena's compared pairs leave at least 22 of the 109·20 + 210 tie coordinates
    # exactly flat (rank 2368 of the map to their thresholds); those, and the ones below float64
    # resolution, are removed (tests/model/test_structures.py checks the rule on a small graph)
    rk = br.RaoKupper(k_tie=20, k_cov=3)
    kept = rk.tie_basis(rk.prepare(arena))[0].shape[1]
    assert 100 > 109 * 20 + 210 - kept >= 22
    assert n_free(rk) == 128 + 509 + kept
    assert n_free(br.RaoKupper(k_tie=10, k_cov=3)) == 128 + 509 + 119 * 10 + 55      # model 17: nothing pinned
    assert n_free(br.Davidson(k_tie=0, k_cov=3)) == 128 + 1 + 509                     # model 27: 646


def test_spec_round_trip_and_validation():
    for fw in (br.BradleyTerry(ties="drop", k_cov=3), br.RaoKupper(k_tie=2, k_cov=0), br.Davidson(k_cov=None)):
        assert framework_from_spec(fw.spec()) == fw
    old = {"framework": "davidson", "k_tie": 1, "tie_intercept": False, "priors": {"score": 3.0, "tie": 2.0}}
    assert framework_from_spec(old).k_cov is None  # specs saved before k_cov still load
    with pytest.raises(br.ModelSpecError):
        br.Davidson(k_cov=-1)
    with pytest.raises(br.ModelSpecError):
        br.BradleyTerry(k_cov=True)
    with pytest.raises(br.ModelSpecError, match="unknown framework"):
        framework_from_spec({"framework": "elo"})


def test_map_is_identified_and_reported(small):
    fit = br.fit(br.Davidson(k_tie=0, k_cov=1), small)
    assert fit.diagnostics["grad_norm"] < 1e-6
    assert fit.diagnostics["min_information_eigenvalue"] > 0
    assert abs(fit.scores().sum()) < 1e-10
    names = set(fit.parameters()["parameter"])
    assert {"cov_diag", "cov_loading"} <= names
    # with a covariance the model nests its own Σ = D version: likelihood at least as high
    assert fit.nll <= br.fit(br.Davidson(k_tie=0, k_cov=0), small).nll + 1e-9


@pytest.mark.parametrize("framework", [br.BradleyTerry(ties="drop", k_cov=0), br.RaoKupper(k_tie=1, k_cov=0),
                                       br.Davidson(k_cov=0)], ids=lambda f: f.label)
def test_sigma_d_contains_the_model_without_covariance(small, framework):
    """At :meth:`from_nested` of any point of the model without covariance, Σ = D gives every cell
    the same probabilities: the nested model's estimate is a point of this one, no lower."""
    nested = framework.nested()
    assert nested.k_cov is None
    inner, theta, _ = _values_at(nested, small, 3)
    prepared = framework.prepare(small)
    bound = structure_of(framework, prepared).bind(prepared)
    placed = bound.structure.natural.theta_for(framework.from_nested(inner.natural(theta)), bound.x0)
    assert np.allclose(bound.log_probs(placed), inner.log_probs(theta), rtol=1e-12, atol=1e-12)


def test_only_sigma_d_states_a_nested_model():
    assert br.Davidson().nested() is None
    assert br.Davidson(k_cov=2).nested() is None
    assert br.Davidson(k_cov=0).nested() == br.Davidson()


def test_the_loading_chart_has_no_edge(small):
    """A loading column's diagonal entry L_jj is a free real coordinate: negating a whole column of L
    (its diagonal and off-diagonal coordinates) is the same ΛΛᵀ and likelihood, and at L_jj = 0 the
    gradient along L_jj is that of the likelihood, not zeroed by the chart."""
    from bayesrank.inference.optimize import loglik_gradient
    from bayesrank.model.structures import loading_free_entries

    framework = br.RaoKupper(k_tie=1, k_cov=2)
    bound, theta, _ = _values_at(framework, small, 5)
    diag, off = bound.structure.slices["cov_load_diag"][0], bound.structure.slices["cov_load_off"][0]
    _, (_, columns) = loading_free_entries(small.n_items, 2)
    mirrored = theta.copy()
    mirrored[diag.start] *= -1
    mirrored[off.start + np.flatnonzero(columns == 0)] *= -1
    assert loglik_gradient(bound, mirrored)[0] == pytest.approx(loglik_gradient(bound, theta)[0], rel=1e-12)
    at_zero = theta.copy()
    at_zero[diag.start] = 0.0
    assert abs(loglik_gradient(bound, at_zero)[1][diag.start]) > 1e-6
