"""Simulated rounds (fit → plan → vote → refit) with the truth known, and the baselines' rules."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.data.simulate import outcomes
from bayesrank.design.rounds import arena_weights, simulate_rounds


def test_arena_weights_favour_pairs_with_few_votes_and_close_outcomes():
    counts = np.array([[0, 0, 0], [50, 50, 0], [95, 5, 0], [5, 5, 0]], dtype=float)
    w = arena_weights(counts)
    assert w.sum() == pytest.approx(1.0) and np.all(w > 0)
    assert w[0] == w.max()                          # never compared
    assert w[3] > w[1] > w[2]                       # fewer votes; then a closer pair


@pytest.mark.parametrize("policy", ["next-pairs", "uniform", "arena"])
def test_rounds_certify_a_clear_top_and_say_how_many_votes_it_took(policy):
    scores = np.array([1.5, 0.2, 0.0, -0.3, -1.4])
    out = simulate_rounds(br.BradleyTerry(ties="drop"), scores, policy=policy, k=1, warmup=3, budget=100,
                          max_votes=3000, random_seed=3)
    assert list(out.columns) == ["round", "votes", "certified", "wrong", "mean_width"]
    assert out.attrs["truth"] == ["m00"]
    np.testing.assert_array_equal(out["votes"], 100 * np.arange(len(out)))
    assert out["certified"].iloc[-1] and not out["certified"].iloc[:-1].any() and not out["wrong"].any()
    again = simulate_rounds(br.BradleyTerry(ties="drop"), scores, policy=policy, k=1, warmup=3, budget=100,
                            max_votes=3000, random_seed=3)
    assert out.equals(again)


def test_fixed_rounds_with_ties_and_a_bad_policy():
    out = simulate_rounds(br.Davidson(), np.array([0.5, 0.0, -0.5]), eta=0.0, policy="next-pairs", goal="ranks",
                          rounds=2, budget=50, random_seed=0)
    assert len(out) == 3 and out["votes"].iloc[-1] == 100
    with pytest.raises(br.BayesrankError, match="unknown policy 'greedy'"):
        simulate_rounds(br.Davidson(), np.zeros(3), policy="greedy")


def test_a_warm_up_without_an_estimate_is_repeated_for_every_policy():
    scores = np.array([0.5, 0.0, -0.5])
    a, b = np.triu_indices(3, k=1)
    for seed in range(2):
        first = outcomes(scores, a, b, np.ones(3, dtype=int), np.random.default_rng(seed))
        wins = np.zeros(3)
        np.add.at(wins, a, first[:, 0])
        np.add.at(wins, b, first[:, 1])
        undefeated = bool(np.isin(wins, (0, 2)).any())    # 3 models, 1 vote a pair: a cycle or no estimate
        runs = [simulate_rounds(br.BradleyTerry(ties="drop"), scores, policy=policy, k=1, warmup=1, rounds=1,
                                budget=20, random_seed=seed) for policy in ("uniform", "arena")]
        assert {out.attrs["warmup_votes"] for out in runs} == {runs[0].attrs["warmup_votes"]}
        assert (runs[0].attrs["warmup_votes"] > 3) == undefeated and runs[0].attrs["warmup_votes"] % 3 == 0
