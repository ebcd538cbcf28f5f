"""Simulated records with a known truth (bayesrank/data/simulate.py): clustered votes are, vote by vote,
draws of the model with the population scores, and agree within a user as the shared verdicts say."""

import numpy as np
import pandas as pd
import pytest

from bayesrank.data.simulate import clustered_battles


def test_clustered_votes_are_marginally_the_model_and_agree_within_users():
    scores = np.array([-0.8, 0.0, 0.8])
    frame = clustered_battles(scores, 4000, np.random.default_rng(3), pairs_per_cluster=1, votes_per_pair=2,
                              share=0.8, eta=-0.5)
    assert len(frame) == 8000 and frame["user"].nunique() == 4000
    first = np.where(frame["model_a"] < frame["model_b"], frame["model_a"], frame["model_b"])
    won = np.where(frame["winner"] == "tie", "tie",
                   np.where((frame["winner"] == "model_a") == (frame["model_a"] == first), "first", "second"))
    pair = first + "/" + np.where(frame["model_a"] == first, frame["model_b"], frame["model_a"])
    rates = pd.crosstab(pair, won, normalize="index")
    d = scores[0] - scores[2]
    w = np.array([np.exp(d / 2), np.exp(-d / 2), np.exp(-0.5)])
    np.testing.assert_allclose(rates.loc["m00/m02", ["first", "second", "tie"]], w / w.sum(), atol=0.03)
    # two votes of a user agree with probability ρ² + (1 − ρ²) Σ p² (shared, or by chance)
    votes = won.reshape(-1, 2)
    p = rates.to_numpy()
    chance = float(np.mean((p**2).sum(axis=1)))
    assert np.mean(votes[:, 0] == votes[:, 1]) == pytest.approx(0.64 + 0.36 * chance, abs=0.03)


def test_random_scores_deviate_per_user_and_the_draws_are_seeded():
    a = clustered_battles(np.zeros(4), 50, np.random.default_rng(1), share=0.0, spread=0.5)
    b = clustered_battles(np.zeros(4), 50, np.random.default_rng(1), share=0.0, spread=0.5)
    pd.testing.assert_frame_equal(a, b)
    assert set(a["winner"]) == {"model_a", "model_b"}
    with pytest.raises(ValueError, match="pairs_per_cluster"):
        clustered_battles(np.zeros(3), 5, np.random.default_rng(0), pairs_per_cluster=4)
