"""The square-root rule (A-optimal allocation) and its rounding to whole votes."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.design.allocation import largest_remainders, square_root_allocation
from bayesrank.gars.dml import a_optimal


def test_unbounded_allocation_is_neyman_closed_form():
    """Without bounds, min Σ a/x s.t. Σ c x = B has x = B √(a/c) / Σ √(a c)."""
    rng = np.random.default_rng(0)
    a, c = rng.gamma(2.0, size=30), rng.uniform(0.5, 2.0, size=30)
    x, lam = square_root_allocation(a, 50.0, cost=c)
    np.testing.assert_allclose(x, 50 * np.sqrt(a / c) / np.sum(np.sqrt(a * c)), rtol=1e-12)
    np.testing.assert_allclose(x, np.sqrt(a / (lam * c)), rtol=1e-12)


def test_bounded_allocation_meets_the_kkt_conditions():
    rng = np.random.default_rng(1)
    a, lo = rng.gamma(1.0, size=200), rng.uniform(0, 0.5, size=200)
    x, lam = square_root_allocation(a, 120.0, floor=lo, cap=1.0)
    assert x.sum() == pytest.approx(120.0, rel=1e-12)
    assert np.all(x >= lo - 1e-12) and np.all(x <= 1 + 1e-12)
    free = (x > lo + 1e-9) & (x < 1 - 1e-9)
    np.testing.assert_allclose(x[free], np.sqrt(a[free] / lam), rtol=1e-10)   # on the line √(a/λ)
    assert np.all(np.sqrt(a[x <= lo + 1e-9] / lam) <= lo[x <= lo + 1e-9] + 1e-9)   # at the floor: the line is below
    assert np.all(np.sqrt(a[x >= 1 - 1e-9] / lam) >= 1 - 1e-9)                      # at the cap: above


def test_allocation_beats_every_other_feasible_split():
    """The rule's objective Σ a/x is no larger than that of random feasible allocations."""
    rng = np.random.default_rng(2)
    a = rng.gamma(2.0, size=8)
    x, _ = square_root_allocation(a, 10.0, floor=0.2)
    best = np.sum(a / x)
    for _ in range(500):
        y = 0.2 + rng.dirichlet(np.ones(8)) * (10.0 - 8 * 0.2)
        assert best <= np.sum(a / y) + 1e-12


def test_dmlrank_policy_is_the_shared_rule():
    """DMLRank's A-optimal labelling calls the same function: its off-diagonal π are the rule's."""
    rng = np.random.default_rng(3)
    a = rng.gamma(2.0, size=(20, 3, 3))
    off = ~np.eye(3, dtype=bool)
    pi, lam = a_optimal(a, budget=30, floor=0.05)
    x, lam2 = square_root_allocation(a[:, off], 30, floor=0.05, cap=1.0)
    np.testing.assert_array_equal(pi[:, off], x)
    assert lam == lam2 and np.all(pi[:, ~off] == 0)


def test_degenerate_and_bad_inputs():
    x, lam = square_root_allocation(np.zeros(4), 2.0)        # every split is optimal: an even one
    np.testing.assert_allclose(x, 0.5)
    x, lam = square_root_allocation(np.ones(3), 10.0, cap=1.0)  # slack budget: everything at its cap
    assert np.all(x == 1.0) and lam == 0.0
    with pytest.raises(br.BayesrankError, match="floors alone cost"):
        square_root_allocation(np.ones(3), 1.0, floor=0.5)
    with pytest.raises(br.BayesrankError, match="non-negative"):
        square_root_allocation(np.array([1.0, -1.0]), 1.0)
    with pytest.raises(br.BayesrankError, match="costs must be positive"):
        square_root_allocation(np.ones(2), 1.0, cost=0.0)


@pytest.mark.parametrize("total", [1, 7, 100, 1001])
def test_largest_remainders_sum_exactly_and_stay_within_one(total):
    rng = np.random.default_rng(total)
    x = rng.gamma(0.5, size=13)
    n = largest_remainders(x, total)
    share = x * total / x.sum()
    assert n.sum() == total and n.dtype.kind == "i"
    assert np.all(n >= np.floor(share) - 1e-9) and np.all(n <= np.ceil(share) + 1e-9)
    np.testing.assert_array_equal(n, largest_remainders(x, total))   # deterministic
