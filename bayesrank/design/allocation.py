"""The A-optimal allocation of a budget over separate estimates (the square-root rule), and its
rounding to whole votes.

Spending x_j units on estimate j — votes on a pair, a pair's labelling probability — whose
variance then contributes a_j / x_j to the trace of the covariance being minimised, at cost
c_j a unit, the allocation that minimises Σ_j a_j / x_j subject to Σ_j c_j x_j = B and
floor_j ≤ x_j ≤ cap_j is, by the Karush–Kuhn–Tucker conditions of this separable convex
problem,

    x_j = clip(√(a_j / (λ c_j)), floor_j, cap_j),

with the multiplier λ > 0 set so that the budget binds (the spending is piecewise linear in
1/√λ: a binary search over its breaks, then one line solved): Neyman's allocation
for stratified sampling (Cochran, *Sampling Techniques*, 3rd ed., §5.5), and Theorem 6.2 of
the DMLRank paper (Frauen et al.) for labelling probabilities.

Two policies call :func:`square_root_allocation`, so the rule exists once:

* DMLRank's labelling policy (:mod:`bayesrank.gars.dml.design`): x = π_jk(x) ∈ [π_lo, 1];
* the stages of :func:`bayesrank.design.next_pairs.next_pairs`: x_j = n0_j + n_j, the votes a
  pair j effectively has plus the new ones, with floor n0_j, where the goal's uncertainty is
  locally a_j / (n0_j + n_j).
"""

from __future__ import annotations

import numpy as np

from bayesrank.errors import BayesrankError


def square_root_allocation(a, budget: float, cost=1.0, floor=0.0, cap=np.inf) -> tuple[np.ndarray, float]:
    """x = clip(√(a / (λ c)), floor, cap) with Σ c x = ``budget`` (the module docstring).

    Parameters
    ----------
    a : array_like
        Variance weights a_j ≥ 0 (any shape).
    budget : float
    cost, floor, cap : float or array_like
        c_j > 0, and the bounds of x_j, broadcast to ``a``'s shape.

    Returns
    -------
    x : ndarray
        The allocation, ``a``'s shape. When the caps cost no more than the budget, x = cap and
        λ = 0 (the budget is slack). When every weight between the bounds is 0, any split is
        optimal: what the floors leave is spread in proportion to the room below the caps (or
        evenly, without caps).
    lam : float

    Raises
    ------
    BayesrankError
        Negative weights, non-positive costs, floors above caps, or floors that alone cost
        more than the budget.
    """
    a = np.asarray(a, dtype=float)
    c, lo, hi = (np.broadcast_to(np.asarray(v, dtype=float), a.shape) for v in (cost, floor, cap))
    if np.any(a < 0) or not np.all(np.isfinite(a)):
        raise BayesrankError("variance weights must be finite and non-negative.")
    if np.any(c <= 0):
        raise BayesrankError("costs must be positive.")
    if np.any(lo < 0) or np.any(lo > hi):
        raise BayesrankError("every floor must be non-negative and at most its cap.")
    if (c * lo).sum() > budget * (1 + 1e-12):
        raise BayesrankError(f"the floors alone cost {(c * lo).sum():g}, more than the budget of {budget:g}.")
    if (c * hi).sum() <= budget:
        return hi.copy(), 0.0
    free = (a > 0) & (hi > lo)
    most = np.where(free, hi, lo)
    if (c * most).sum() <= budget:  # the weighted entries at their caps; the rest, indifferent, take what is left
        room = np.where(np.isfinite(hi), hi - lo, 1.0) * (~free & (hi > lo))
        return most + room * (budget - (c * most).sum()) / (c * room).sum(), 0.0

    # x(μ) = clip(μ r, floor, cap) with μ = 1/√λ, r = √(a/c): the spending is piecewise linear and
    # non-decreasing in μ, with breaks where an entry leaves its floor or reaches its cap; find the
    # piece where it crosses the budget (binary search over the breaks), then solve that line
    r = np.sqrt(np.where(free, a / c, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        breaks = np.unique(np.concatenate([(lo / r)[free], (hi / r)[free]]))
    breaks = breaks[np.isfinite(breaks)]

    def spent(mu):
        return (c * np.clip(mu * r, lo, hi)).sum()

    if spent(breaks[-1]) <= budget:     # beyond the last break: every entry on the line or at its cap
        inside = 2 * breaks[-1] + 1.0
    else:                                # spent(breaks[0]) = Σ c·floor ≤ budget < spent(breaks[-1])
        first, last = 0, breaks.size - 1
        while last - first > 1:
            mid = (first + last) // 2
            if spent(breaks[mid]) <= budget:
                first = mid
            else:
                last = mid
        inside = 0.5 * (breaks[first] + breaks[last])
    on_line = free & (inside * r > lo) & (inside * r < hi)
    held = np.where(inside * r >= hi, hi, lo)
    mu = (budget - (c * held)[~on_line].sum()) / (c * r)[on_line].sum()
    return np.clip(mu * r, lo, hi), 1.0 / mu**2


def largest_remainders(x, total: int) -> np.ndarray:
    """Whole numbers n with Σ n = ``total`` and each n_j the floor or the ceiling of x_j (x
    rescaled to sum to ``total`` first): Hamilton's largest-remainder rounding, the larger
    remainders rounded up, ties to the larger x_j and then to the earlier entry.

    Parameters
    ----------
    x : array_like
        Non-negative shares, 1-D, not all zero.
    total : int
    """
    x = np.asarray(x, dtype=float)
    x = x * (total / x.sum())
    n = np.floor(x + 1e-9).astype(np.int64)   # (x_j = 2.9999999999 is 3 rescaled by rounding)
    n = np.minimum(n, np.ceil(x).astype(np.int64))
    left = int(total - n.sum())
    if left > 0:
        order = np.lexsort((np.arange(x.size), -x, -(x - n)))
        n[order[:left]] += 1
    elif left < 0:   # (only by the tolerance above) the smallest remainders give one back
        order = np.lexsort((np.arange(x.size), x, x - n))
        n[order[:-left]] -= 1
    return n


__all__ = ["largest_remainders", "square_root_allocation"]
