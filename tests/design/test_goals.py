"""Goals' uncertainties: the pre-posterior order uncertainty and the A-optimal criterion."""

import numpy as np
import pytest
from scipy.stats import norm

from bayesrank.design.goals import goal_of


def _covariance(m, rng):
    X = rng.standard_normal((m, 3 * m))
    C = X @ X.T / (3 * m) * 0.05
    P = np.eye(m) - 1 / m                       # zero-sum scores
    return P @ C @ P


def test_order_uncertainty_now_is_the_sum_of_bernoulli_variances():
    rng = np.random.default_rng(0)
    m = 6
    s, C = rng.normal(0, 0.3, m), _covariance(m, rng)
    goal = goal_of("ranks", s, C)
    i, j = np.triu_indices(m, 1)
    q = norm.cdf((s[i] - s[j]) / np.sqrt(C[i, i] + C[j, j] - 2 * C[i, j]))
    assert goal.uncertainty(C) == pytest.approx(np.sum(q * (1 - q)), rel=1e-10)
    assert goal.uncertainty(C * 1e-14) < 1e-4 * goal.uncertainty(C)      # no variance left: settled


def test_order_uncertainty_after_votes_matches_a_preposterior_simulation():
    """E[q'(1 − q')] over the future posterior mean μ' ~ N(d, σ₀² − σ²), by Monte Carlo."""
    rng = np.random.default_rng(1)
    d, var0, var1 = 0.12, 0.04, 0.01
    s, C0 = np.array([d, 0.0]), np.array([[var0, 0.0], [0.0, 0.0]])
    goal = goal_of("ranks", s, C0)
    mu = rng.normal(d, np.sqrt(var0 - var1), 2_000_000)
    q = norm.cdf(mu / np.sqrt(var1))
    assert goal.uncertainty(np.array([[var1, 0.0], [0.0, 0.0]])) == pytest.approx(np.mean(q * (1 - q)), rel=2e-3)


@pytest.mark.parametrize("name,kw", [("ranks", {}), ("top-k", {"k": 2}), ("model", {"model": 3}), ("all-pairs", {})])
def test_sensitivity_is_the_derivative_of_the_uncertainty(name, kw):
    rng = np.random.default_rng(2)
    m = 7
    s, C0 = rng.normal(0, 0.2, m), _covariance(m, rng)
    goal = goal_of(name, s, C0, **kw)
    C = 0.7 * C0                                  # after some votes
    dC = -0.01 * _covariance(m, rng)
    h = 1e-4
    numeric = (goal.uncertainty(C + h * dC) - goal.uncertainty(C - h * dC)) / (2 * h)
    assert np.sum(goal.sensitivity(C) * dC) == pytest.approx(numeric, rel=1e-5)


def test_all_pairs_is_the_sum_of_difference_variances_and_goals_pick_their_pairs():
    rng = np.random.default_rng(3)
    m = 5
    s, C = np.array([2.0, 1.0, 0.5, 0.0, -1.0]), _covariance(m, rng)
    i, j = np.triu_indices(m, 1)
    assert goal_of("all-pairs", s, C).uncertainty(C) == pytest.approx(np.sum(C[i, i] + C[j, j] - 2 * C[i, j]))
    top = goal_of("top-k", s, C, k=2)
    assert {(a, b) for a, b in zip(top.i, top.j)} == {(a, b) for a in (0, 1) for b in (2, 3, 4)}
    model = goal_of("model", s, C, model=3)
    assert set(model.i) == {3} and set(model.j) == {0, 1, 2, 4}
