"""Frequentist check of the Wald intervals: 95% intervals of score differences cover ≈ 95%."""

import numpy as np
import pytest

import bayesrank as br
from tests.conftest import simulate_counts


@pytest.mark.slow
def test_wald_intervals_of_differences_cover_95_percent():
    rng = np.random.default_rng(2024)
    truth = np.array([-1.0, -0.6, -0.3, 0.0, 0.2, 0.5, 0.7, 0.9])
    truth -= truth.mean()
    framework = br.Davidson(k_tie=0)
    hits, total, replicates = 0, 0, 200
    i, j = np.triu_indices(truth.size, k=1)
    for _ in range(replicates):
        data = simulate_counts(truth, 60, rng, eta=-0.5)
        fit = br.fit(framework, data, draws=10)
        assert fit.converged
        s = fit.tree["estimate"]["score"].values
        C = fit.tree["estimate"]["score_cov"].values
        diff = s[i] - s[j]
        se = np.sqrt(C[i, i] + C[j, j] - 2 * C[i, j])
        covered = np.abs(diff - (truth[i] - truth[j])) <= 1.959964 * se
        hits += covered.sum()
        total += covered.size
    coverage = hits / total
    print(f"coverage {coverage:.4f} over {replicates} data sets, {total} intervals")
    assert 0.93 <= coverage <= 0.97


# ---------------------------------------------------------------- the delta method and draws, fast tier
from bayesrank.inference import asymptotics  # noqa: E402
from bayesrank.inference.structure import structure_of  # noqa: E402


@pytest.fixture(scope="module")
def thurstonian():
    """Davidson with a diagonal Thurstonian covariance: its dispersions are not affine in θ."""
    framework = br.Davidson(k_cov=0)
    data = simulate_counts(np.array([-0.8, -0.2, 0.1, 0.4, 0.9]), 80, np.random.default_rng(4), eta=-0.5)
    estimate = br.fit(framework, data).tree["estimate"]
    structure = structure_of(framework, framework.prepare(data), prior="flat")
    return structure, estimate["theta"].values, estimate["theta_cov"].values


def numpy_jacobian(structure, theta, step=1e-6):
    """(all variables × θ) by central differences, one coordinate at a time."""
    columns = []
    for k in range(theta.size):
        e = np.zeros(theta.size)
        e[k] = step
        up, down = structure.value_rows(np.vstack([theta + e, theta - e]))
        columns.append((up - down) / (2 * step))
    return np.column_stack(columns)


def test_covariance_factor_reproduces_definite_and_semidefinite_matrices():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 5))
    for cov in (A @ A.T + np.eye(5), A[:, :3] @ A[:, :3].T):  # full rank; rank 3
        L = asymptotics.covariance_factor(cov)
        np.testing.assert_allclose(L @ L.T, cov, atol=1e-12 * np.abs(cov).max())


@pytest.mark.parametrize("given_cov", [True, False], ids=["with-cov", "factor-only"])
def test_delta_method_is_the_jacobian_sandwich(thurstonian, given_cov):
    """Standard errors of every variable, and the scores' covariance, are J Cov(θ̂) Jᵀ with J by
    central differences here (to the truncation error of the package's steps along the factor)."""
    structure, theta, cov = thurstonian
    J = numpy_jacobian(structure, theta)
    reference = J @ cov @ J.T
    layout = structure.layout()
    assert any(name not in asymptotics.affine_blocks(structure) for name in layout)  # a non-linear variable
    se, cross = asymptotics.delta_method(structure, theta, asymptotics.covariance_factor(cov), None,
                                         cov if given_cov else None)
    for name, (sl, shape) in layout.items():
        np.testing.assert_allclose(se[name], np.sqrt(np.diag(reference)[sl]).reshape(shape), rtol=1e-5, atol=1e-12)
    sl = layout["score"][0]
    np.testing.assert_allclose(cross["score"], reference[sl, sl], rtol=1e-5, atol=1e-12)


def test_draws_have_the_stated_mean_and_covariance(thurstonian):
    """θ̂ + L z through the model's map: the variables affine in θ are exactly normal, centred at
    their value at θ̂ with covariance J Cov(θ̂) Jᵀ (checked to Monte-Carlo error)."""
    structure, theta, cov = thurstonian
    factor = asymptotics.covariance_factor(cov)
    n = 4000
    drawn = asymptotics.draws(structure, theta, factor, n, np.random.default_rng(1))
    again = asymptotics.draws(structure, theta, factor, n, np.random.default_rng(1))
    J = numpy_jacobian(structure, theta)
    layout, values = structure.layout(), structure.values(theta)
    affine = [name for name in layout if name in asymptotics.affine_blocks(structure)]
    assert "score_raw" in affine
    for name in affine:
        x = np.asarray(drawn[name]).reshape(n, -1)
        np.testing.assert_array_equal(x, np.asarray(again[name]).reshape(n, -1))  # the generator decides
        sl = layout[name][0]
        C = J[sl] @ cov @ J[sl].T
        se = np.sqrt(np.diag(C))
        np.testing.assert_allclose(x.mean(axis=0), np.ravel(values[name]), atol=4 * se.max() / np.sqrt(n))
        np.testing.assert_allclose(np.cov(x, rowvar=False), C, atol=0.1 * se.max() ** 2)
