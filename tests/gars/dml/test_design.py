"""The A-optimal labelling policy (Frauen et al., §6, Thm 6.2): π minimises Σ a/π under the budget
Σ c π = B with floor ≤ π ≤ 1 for any positive costs — checked against SciPy's constrained minimiser
— and the policy's table and draws are what it says (uniform costs and the budget's spending are
checked in test_estimator.py)."""

import numpy as np
import pytest
from scipy.optimize import minimize

import bayesrank as br
from bayesrank.gars.dml.design import a_optimal, optimal_policy, variance_weights


@pytest.fixture(scope="module")
def weights():
    rng = np.random.default_rng(3)
    a = rng.gamma(1.0, 1.0, size=(3, 4, 4))
    a[:, np.arange(4), np.arange(4)] = 0
    return a


def test_the_policy_minimises_the_variance_under_the_budget(weights):
    K = weights.shape[-1]
    off = np.broadcast_to(~np.eye(K, dtype=bool), weights.shape)
    cost = np.where(np.eye(K, dtype=bool), 1.0, np.arange(1, K * K + 1).reshape(K, K) % 3 + 1.0)
    c = np.broadcast_to(cost, weights.shape)[off]
    a, budget, floor = weights[off], 12.0, 0.02
    pi, lam = a_optimal(weights, budget, cost, floor)
    assert np.all(pi[~off] == 0) and np.all((pi[off] >= floor - 1e-12) & (pi[off] <= 1 + 1e-12))
    assert np.sum(c * pi[off]) == pytest.approx(budget, rel=1e-8)
    np.testing.assert_allclose(pi[off], np.clip(np.sqrt(a / (lam * c)), floor, 1), rtol=1e-8)
    ref = minimize(lambda p: np.sum(a / p), np.full(a.size, budget / c.sum()), jac=lambda p: -a / p ** 2,
                   bounds=[(floor, 1)] * a.size, method="SLSQP", options={"ftol": 1e-14, "maxiter": 500},
                   constraints=[{"type": "eq", "fun": lambda p: c @ p - budget, "jac": lambda p: c}])
    assert np.sum(a / pi[off]) <= ref.fun * (1 + 1e-8)
    np.testing.assert_allclose(pi[off], ref.x, atol=1e-4)


def test_the_table_names_contexts_and_pairs_and_draws_follow_it(weights):
    policy = optimal_policy(weights, 10.0, floor=0.01, items=list("wxyz"), context_ids=["q1", "q2", "q3"])
    table = policy.table
    assert len(table) == 3 * 12 and set(table["item_a"]) == set("wxyz")
    row = table.iloc[0]
    k = ["q1", "q2", "q3"].index(row["context"])
    assert row["weight"] == weights[k, "wxyz".index(row["item_a"]), "wxyz".index(row["item_b"])]
    drawn = [len(policy.sample(random_seed=s)) for s in range(300)]
    assert np.mean(drawn) == pytest.approx(table["pi"].sum(), rel=0.05)
    assert policy.sample(random_seed=4).equals(policy.sample(random_seed=4))


def test_bad_costs_and_floors_are_refused(weights):
    with pytest.raises(br.BayesrankError, match="labelling costs must be positive"):
        a_optimal(weights, 10.0, cost=np.zeros((4, 4)))
    with pytest.raises(br.BayesrankError, match="propensity floor must be in"):
        a_optimal(weights, 10.0, floor=1.5)


def test_borda_weights_put_balanced_pairs_first():
    """Borda: a_jk is the variance of one outcome's credit, largest for an even pair (Neyman)."""
    mu = np.zeros((1, 3, 3, 3))
    mu[0, 0, 1] = mu[0, 1, 0] = [0.45, 0.45, 0.10]      # even
    mu[0, 0, 2] = mu[0, 2, 0] = [0.90, 0.05, 0.05]      # lopsided
    mu[0, 1, 2] = mu[0, 2, 1] = [0.60, 0.30, 0.10]
    a = variance_weights(mu, "borda", "win-loss-tie")
    assert a[0, 0, 1] > a[0, 1, 2] > a[0, 0, 2] > 0
