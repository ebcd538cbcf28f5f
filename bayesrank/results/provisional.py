"""Provisional rows of a leaderboard: models whose place the votes do not pin down yet.

A row is *provisional* when its rank interval (``rank_lower``–``rank_upper``, 95% by default)
spans more ranks than :func:`max_span` allows: more than max(3, ⌈5% of the models⌉) — on a
board of 129 models (``arena-2024``) more than 7 ranks, on one of 20 more than 3. A new model
with a few hundred votes is typically provisional; a model that sits in a group the data cannot
order is too, until votes separate it from enough of its neighbours.
:func:`bayesrank.provisional_rows` says how many more battles, and against whom, would settle
each provisional row.
"""

from __future__ import annotations

import math

import numpy as np

#: The fewest ranks a rank interval may span before its row is provisional, whatever the board's size.
MIN_SPAN = 3
#: The share of the board a rank interval may span before its row is provisional.
SPAN_SHARE = 0.05


def max_span(n_items: int) -> int:
    """The widest rank interval, in ranks (``rank_upper − rank_lower + 1``), of a settled row on a
    board of ``n_items`` models: max(:data:`MIN_SPAN`, ⌈:data:`SPAN_SHARE` · n_items⌉)."""
    return max(MIN_SPAN, math.ceil(SPAN_SHARE * n_items))


def provisional(rank_lower, rank_upper) -> np.ndarray:
    """Whether each row's rank interval spans more than :func:`max_span` ranks (the board's size
    is the number of rows)."""
    lower, upper = np.asarray(rank_lower), np.asarray(rank_upper)
    return (upper - lower + 1) > max_span(lower.size)


__all__ = ["MIN_SPAN", "SPAN_SHARE", "max_span", "provisional"]
