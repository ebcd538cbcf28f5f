"""Fragility of the top of the arena-2024 leaderboard, confirmed by an independent refit."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.fragility import fragility


def without_votes(data, removed):
    """The comparisons with the named votes taken out, built from scratch through the public API."""
    frame = data.to_frame()
    column = {"win_a": "wins_a", "win_b": "wins_b", "tie": "ties"}
    index = {(a, b): i for i, (a, b) in enumerate(zip(frame["model_a"], frame["model_b"]))}
    for row in removed.itertuples():
        frame.loc[index[(row.model_a, row.model_b)], column[row.outcome]] -= row.votes
    assert (frame[["wins_a", "wins_b", "ties"]] >= 0).all().all()
    return br.load(frame[["model_a", "model_b", "wins_a", "wins_b", "ties", "ties_bothbad"]])


@pytest.fixture(scope="module")
def bt_arena(arena):
    return br.fit(br.BradleyTerry(), arena)


@pytest.mark.parametrize("k", [1, 3])
def test_fragility_confirmed_by_refit(arena, bt_arena, k):
    result = fragility(bt_arena, k=k)
    assert result.confirmed and 0 < result.n_votes < 5000
    assert int(result.removed["votes"].sum()) == result.n_votes
    assert result.top_before == sorted(bt_arena.leaderboard()["name"][:k])
    refit = br.fit(br.BradleyTerry(), without_votes(arena, result.removed))
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
