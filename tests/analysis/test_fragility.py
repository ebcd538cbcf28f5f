"""Fragility of the top of the arena-2024 leaderboard, confirmed by an independent refit."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.analysis.fragility import fragility, without_votes


@pytest.fixture(scope="module")
def bt_arena(arena):
    return br.fit(br.BradleyTerry(), arena)


@pytest.mark.parametrize("k", [1, 3])
def test_fragility_confirmed_by_refit(arena, bt_arena, k):
    result = fragility(bt_arena, k=k)
    assert result.confirmed and 0 < result.n_votes < 5000
    assert int(result.removed["votes"].sum()) == result.n_votes
    assert result.top_before == sorted(bt_arena.leaderboard()["name"][:k])
    reduced = without_votes(arena, result.removed)
    assert arena.n_comparisons - reduced.n_comparisons == result.n_votes
    changed = np.flatnonzero(np.any(arena.counts() != reduced.counts(), axis=1))
    pairs = {(arena.items[arena.a[c]], arena.items[arena.b[c]]) for c in changed}
    assert pairs == set(zip(result.removed["model_a"], result.removed["model_b"]))
    refit = br.fit(br.BradleyTerry(), reduced)
    top = sorted(refit.leaderboard()["name"][:k])
    assert top != result.top_before and result.challenger in top and result.holder not in top
    assert f"{result.n_votes:,} of 1,374,996 votes" in result.sentence()
    # a tenth of the votes, the most influential ones, does not change the top
    fewer = result.removed.copy()
    fewer["votes"] = np.floor(fewer["votes"] * 0.1)
    assert sorted(br.fit(br.BradleyTerry(), without_votes(arena, fewer)).leaderboard()["name"][:k]) == result.top_before


def test_fragility_needs_a_map_fit(bt_arena):
    with pytest.raises(br.BayesrankError, match="k must be"):
        fragility(bt_arena, k=0)
