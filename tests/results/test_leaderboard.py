"""Leaderboards from a fit's draws: ranks, rank intervals, rank probabilities, credible top sets, tie
groups and Wald differences, each against NumPy written here on the same draws and covariance."""

import numpy as np
import pytest
from scipy.stats import norm

import bayesrank as br
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def fit():
    """Five items, two pairs close together, so ranks vary between draws."""
    data = simulate_counts(np.array([-1.0, -0.2, -0.15, 0.5, 0.55]), 60, np.random.default_rng(11), eta=-0.5)
    return br.fit(br.Davidson(), data, random_seed=3)


def score_draws(fit):
    return fit.tree["posterior"]["score"].transpose("chain", "draw", "item").values.reshape(-1, len(fit.items))


def numpy_ranks(s):
    """Rank 1 = highest score in each row, by counting the items above."""
    return 1 + (s[:, None, :] > s[:, :, None]).sum(axis=2)


def test_rank_intervals_and_probabilities_are_those_of_the_draws(fit):
    s = score_draws(fit)
    ranks = numpy_ranks(s)
    n = ranks.shape[0]
    ordered = np.sort(ranks, axis=0)
    board = fit.leaderboard(level=0.9).set_index("name").loc[fit.items]
    np.testing.assert_array_equal(board["rank_lower"], ordered[int(np.floor(0.05 * (n - 1)))])
    np.testing.assert_array_equal(board["rank_upper"], ordered[int(np.ceil(0.95 * (n - 1)))])
    probs = fit.rank_probabilities(ks=(1, 2)).loc[fit.items]
    np.testing.assert_allclose(probs["p_top_1"], (ranks == 1).mean(axis=0))
    np.testing.assert_allclose(probs["p_top_2"], (ranks <= 2).mean(axis=0))
    table = fit.rank_distribution()
    assert list(table.index) == list(fit.scores().sort_values(ascending=False).index)
    for r in range(1, len(fit.items) + 1):
        np.testing.assert_allclose(table.loc[fit.items, r], (ranks == r).mean(axis=0))
    np.testing.assert_allclose(table.sum(axis=1), 1.0)


def test_close_items_share_rank_intervals_and_a_distant_one_does_not(fit):
    board = fit.leaderboard().set_index("name")
    for close in (("m01", "m02"), ("m03", "m04")):
        spans = {(board.loc[n, "rank_lower"], board.loc[n, "rank_upper"]) for n in close}
        assert len(spans) == 1 and np.diff(next(iter(spans))) == 1
    assert (board.loc["m00", "rank_lower"], board.loc["m00", "rank_upper"]) == (5, 5)
    assert (board["rank_lower"] <= board["rank"]).all() and (board["rank"] <= board["rank_upper"]).all()


def test_differences_are_wald_on_the_stored_covariance(fit):
    s = fit.scores().to_numpy()
    C = fit.tree["estimate"]["score_cov"].values
    table = fit.differences(level=0.9)
    assert len(table) == 10
    k = {name: i for i, name in enumerate(fit.items)}
    i = table["item_i"].map(k).to_numpy()
    j = table["item_j"].map(k).to_numpy()
    assert np.all(s[i] >= s[j])  # the better item first
    se = np.sqrt(C[i, i] + C[j, j] - 2 * C[i, j])
    np.testing.assert_allclose(table["difference"], s[i] - s[j])
    np.testing.assert_allclose(table["se"], se)
    np.testing.assert_allclose(table["lower"], s[i] - s[j] - norm.ppf(0.95) * se)
    np.testing.assert_allclose(table["upper"], s[i] - s[j] + norm.ppf(0.95) * se)
    np.testing.assert_allclose(table["p_greater"], norm.cdf((s[i] - s[j]) / se))


def test_top_set_is_the_smallest_set_holding_the_top_k_often_enough(fit):
    ranks = numpy_ranks(score_draws(fit))
    for k in (1, 2):
        chosen = fit.top_set(k, level=0.9)
        inside = np.isin(np.asarray(fit.items), chosen)
        in_top = ranks <= k
        assert np.mean(~np.any(in_top & ~inside, axis=1)) >= 0.9
        # dropping its least likely member breaks the promise
        p = in_top.mean(axis=0)
        weakest = min(chosen, key=lambda n: p[fit.items.index(n)])
        inside[fit.items.index(weakest)] = False
        assert np.mean(~np.any(in_top & ~inside, axis=1)) < 0.9
    assert set(fit.top_set(2)) >= {"m03", "m04"}


def test_tie_groups_follow_their_definition(fit):
    s = score_draws(fit)
    groups = fit.tie_groups(level=0.95)
    assert list(groups["name"]) == list(fit.leaderboard()["name"])
    leader, expected = None, []
    for name in groups["name"]:
        i = fit.items.index(name)
        if leader is None or np.mean(s[:, leader] > s[:, i]) >= 0.95:
            leader = i
            expected.append(len(set(expected)) + 1)
        else:
            expected.append(expected[-1])
    assert list(groups["group"]) == expected
    assert groups.set_index("name").loc["m04", "group"] == groups.set_index("name").loc["m03", "group"]


def test_observed_rates_and_order(fit):
    data = fit.data
    board = fit.leaderboard().set_index("name")
    for k, name in enumerate(data.items):
        as_a, as_b = data.a == k, data.b == k
        n = data.totals[as_a].sum() + data.totals[as_b].sum()
        wins = data.wins_a[as_a].sum() + data.wins_b[as_b].sum()
        ties = data.ties[as_a].sum() + data.ties[as_b].sum()
        assert board.loc[name, "n_comparisons"] == n
        assert board.loc[name, "win_rate"] == pytest.approx(wins / n)
        assert board.loc[name, "tie_rate"] == pytest.approx(ties / n)
        assert board.loc[name, "loss_rate"] == pytest.approx(1 - (wins + ties) / n)
    assert board["score"].is_monotonic_decreasing and list(board["rank"]) == [1, 2, 3, 4, 5]
    np.testing.assert_allclose(board["pred_win_rate"] + board["pred_tie_rate"] + board["pred_loss_rate"], 1.0)


def test_a_level_outside_zero_one_is_refused(fit):
    with pytest.raises(br.BayesrankError, match="level"):
        fit.leaderboard(level=95)


def test_equal_scores_share_the_best_rank_of_their_tie():
    """Competition ranking (1, 2, 2, 4): no order is made up between items the scores do not
    separate, in a draw or in the point estimate."""
    from bayesrank.results.leaderboard import ranks_of

    s = np.array([[0.3, 1.0, 0.3, -2.0], [0.0, 0.0, 0.0, 0.0], [4.0, 3.0, 2.0, 1.0]])
    np.testing.assert_array_equal(ranks_of(s), [[2, 1, 2, 4], [1, 1, 1, 1], [1, 2, 3, 4]])


def test_every_comparison_a_tie_ranks_no_model_above_another_and_says_why_the_sandwich_is_zero():
    """Three models whose every comparison is a tie, ties counted as halves (the sandwich by
    default): equal scores, so every model is ranked first, and the fit says that the sandwich's
    standard errors of 0 come from scores that vanish, not from certainty."""
    data = br.Comparisons.from_cells(["a", "b", "c"], ["b", "c", "a"], [0, 0, 0], [0, 0, 0], ties=[2, 2, 2])
    fit = br.fit(br.BradleyTerry(), data)
    board = fit.leaderboard()
    assert board["rank"].tolist() == [1, 1, 1]
    assert board["rank_lower"].tolist() == [1, 1, 1] and board["rank_upper"].tolist() == [1, 1, 1]
    assert any(w.startswith("the sandwich gives the scores no uncertainty") for w in fit.warnings)
    assert not any("no uncertainty" in w for w in br.fit(br.BradleyTerry(), data, intervals="wald").warnings)
