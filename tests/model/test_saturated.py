"""The saturated model: counts per pair (display-ordered only when every pair was shown both ways),
its conjugate posterior Dirichlet(α + counts) — checked against the PyMC model's own log density
and SciPy's Dirichlet — and the multinomial covariance of one outcome."""

import numpy as np
import pytensor.tensor as pt
import pytest
from scipy.stats import dirichlet

import bayesrank as br
from bayesrank.model.saturated import multinomial_covariance, pair_counts, posterior_concentration, saturated_model


def cells(both_ways=True):
    """x–y shown both ways; x–z shown both ways, or (``both_ways=False``) always x first."""
    return br.Comparisons.from_cells(
        ["x", "y", "x", "x", "z"], ["y", "x", "z", "z", "x"], [3, 1, 4, 2, 5], [2, 6, 1, 2, 0], [1, 0, 2, 0, 3],
        first=[0, 0, 0, 0, 0 if both_ways else 1])


def test_pairs_are_display_ordered_when_every_pair_was_shown_both_ways():
    counts = pair_counts(cells())
    assert counts.ordered and counts.notes == ()
    got = {(counts.items[f], counts.items[s]): tuple(c) for f, s, c in zip(counts.first, counts.second, counts.counts)}
    # row "y vs x, y shown first, y wins 1, x wins 6" counts as first-shown y winning once
    assert got == {("x", "y"): (3, 2, 1), ("y", "x"): (1, 6, 0), ("x", "z"): (6, 3, 2), ("z", "x"): (5, 0, 3)}


def test_pairs_shown_one_way_pool_the_order_and_say_so():
    counts = pair_counts(cells(both_ways=False))
    assert not counts.ordered and "shown in one order only" in counts.notes[0]
    got = {(counts.items[f], counts.items[s]): tuple(c) for f, s, c in zip(counts.first, counts.second, counts.counts)}
    assert got == {("x", "y"): (9, 3, 1), ("x", "z"): (6, 8, 5)}
    np.testing.assert_allclose(counts.frequencies().sum(axis=1), 1.0)


def test_per_judge_counts_need_judges():
    with pytest.raises(br.DataError, match="has no judges"):
        pair_counts(cells(), by_judge=True)
    with pytest.raises(ValueError, match="n_categories must be 3 or 4"):
        pair_counts(cells(), n_categories=5)


@pytest.mark.parametrize("alpha", [1.0, 2.5])
def test_posterior_is_the_conjugate_dirichlet_of_the_pymc_model(alpha):
    counts = pair_counts(cells(both_ways=False))
    concentration = posterior_concentration(counts, alpha)
    np.testing.assert_array_equal(concentration, counts.counts + alpha)
    model = saturated_model(counts, alpha)
    value = model.rvs_to_values[model["mu"]]
    transform = model.rvs_to_transforms[model["mu"]]
    logp = model.compile_logp(jacobian=False)
    rng = np.random.default_rng(0)
    points = [rng.dirichlet(np.ones(3), size=len(counts.counts)) for _ in range(3)]

    def pymc(mu):
        return logp({value.name: transform.forward(pt.as_tensor(mu)).eval()})

    def scipy(mu):
        return sum(dirichlet.logpdf(m, c) for m, c in zip(mu, concentration))

    # the same density up to a constant: differences between points agree
    for mu in points[1:]:
        assert pymc(mu) - pymc(points[0]) == pytest.approx(scipy(mu) - scipy(points[0]), rel=1e-8)


def test_multinomial_covariance_is_that_of_one_categorical_outcome():
    mu = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]])
    for row, got in zip(mu, multinomial_covariance(mu)):
        outcomes = np.eye(3)
        mean = row @ outcomes
        want = sum(p * np.outer(e - mean, e - mean) for p, e in zip(row, outcomes))
        np.testing.assert_allclose(got, want, atol=1e-15)
        np.testing.assert_allclose(got.sum(axis=1), 0.0, atol=1e-15)
