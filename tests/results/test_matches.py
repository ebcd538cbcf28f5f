"""Match probabilities of every ordered pair: Davidson's formula at the MLE, written here,
P(i wins) ∝ exp(d/2), P(j wins) ∝ exp(−d/2), P(tie) ∝ exp(η) with d = s_i − s_j."""

import numpy as np
import pytest

import bayesrank as br
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def fit():
    data = simulate_counts(np.array([-0.7, 0.0, 0.2, 0.8]), 60, np.random.default_rng(8), eta=-0.4)
    return br.fit(br.Davidson(), data)


def test_every_pair_follows_davidsons_formula(fit):
    m = fit.match_probabilities()
    order = list(fit.leaderboard()["name"])
    assert list(m["win"].index) == order and list(m["win"].columns) == order
    s, eta = fit.scores(), float(fit.tree["estimate"]["eta_raw"])
    for i in order:
        for j in order:
            if i == j:
                assert np.isnan(m["win"].loc[i, j]) and np.isnan(m["expected"].loc[i, j])
                continue
            d = s[i] - s[j]
            w = np.array([np.exp(d / 2), np.exp(-d / 2), np.exp(eta)])
            p = w / w.sum()
            got = [m["win"].loc[i, j], m["loss"].loc[i, j], m["tie"].loc[i, j]]
            np.testing.assert_allclose(got, p, rtol=1e-10)
            assert m["expected"].loc[i, j] == pytest.approx(p[0] + p[2] / 2, rel=1e-12)


def test_probabilities_sum_to_one_and_mirror(fit):
    m = fit.match_probabilities()
    total = (m["win"] + m["tie"] + m["loss"]).to_numpy()
    np.testing.assert_allclose(total[~np.eye(4, dtype=bool)], 1.0, rtol=1e-12)
    np.testing.assert_allclose(m["win"].to_numpy(), m["loss"].to_numpy().T, rtol=1e-12)
    np.testing.assert_allclose(m["expected"] + m["expected"].T, np.where(np.eye(4), np.nan, 1.0), rtol=1e-12)


def test_top_keeps_the_best_items(fit):
    m = fit.match_probabilities(top=2)
    assert list(m["tie"].index) == list(fit.leaderboard()["name"][:2]) and m["tie"].shape == (2, 2)
