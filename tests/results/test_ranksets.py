"""Elo view and simultaneous rank sets, against NumPy written here and the normal distribution."""

import numpy as np
import pytest
from scipy.stats import norm

import bayesrank as br
from bayesrank.data.simulate import item_names
from bayesrank.results.elo import ELO_SCALE, Elo
from bayesrank.results.ranksets import critical_value, rank_sets, top_set


def bt_data(scores, n, seed):
    rng = np.random.default_rng(seed)
    m = len(scores)
    a, b = np.triu_indices(m, k=1)
    wins = rng.binomial(n, 1 / (1 + np.exp(-(scores[a] - scores[b]))))
    names = np.asarray(item_names(m), dtype=object)
    return br.Comparisons.from_cells(names[a], names[b], wins, n - wins)


@pytest.fixture(scope="module")
def fit():
    return br.fit(br.BradleyTerry(ties="drop"), bt_data(np.array([-1.0, -0.4, 0.0, 0.1, 0.5, 1.2]), 200, 1))


def test_elo_is_an_affine_view_of_the_scores(fit):
    board = fit.leaderboard(elo=True)
    np.testing.assert_allclose(board["elo"], 1000 + 400 / np.log(10) * board["score"])
    np.testing.assert_allclose(board["elo_lower"], 1000 + ELO_SCALE * board["lower"])
    np.testing.assert_allclose(board["elo_upper"], 1000 + ELO_SCALE * board["upper"])
    assert "odds 10:1" in board.attrs["scale_note"]
    items = fit.to_json()["items"]
    assert {"elo", "elo_lower", "elo_upper"} <= set(items[0]) and fit.to_json()["elo_scale"]["offset"] == 1000


def test_elo_anchor_gives_intervals_of_differences(fit):
    view = Elo(scale=100.0, offset=1500.0, anchor="m02")
    table = fit.elo(view=view).reindex(fit.items)  # (best first; here in the model's order)
    s = fit.scores()
    C = fit.tree["estimate"]["score_cov"].values
    k = fit.items.index("m02")
    se = np.sqrt(np.diag(C) + C[k, k] - 2 * C[:, k])
    np.testing.assert_allclose(table["elo"], 1500 + 100 * (s - s["m02"]).to_numpy())
    np.testing.assert_allclose(table["elo_upper"] - table["elo"], 100 * norm.ppf(0.975) * se, rtol=1e-10)
    assert table.loc["m02", "elo"] == 1500 and table.loc["m02", "elo_upper"] == pytest.approx(1500)
    with pytest.raises(br.BayesrankError, match="unknown anchor"):
        fit.elo(view=Elo(anchor="nobody"))


def test_scale_notes_differ_by_framework():
    assert br.Davidson().scale_note != br.BradleyTerry().scale_note
    assert "not the Bradley–Terry" in br.Davidson().scale_note
    assert "no fixed Elo meaning" in br.BradleyTerry(k_cov=0).scale_note


def test_two_items_critical_value_is_the_normal_quantile():
    """With one pair the simultaneous band is the ordinary one: c = z_{0.975}."""
    two = br.fit(br.BradleyTerry(ties="drop"), bt_data(np.array([0.0, 0.3]), 500, 2))
    c, sigma = critical_value(two.tree, 0.95)
    assert c == pytest.approx(norm.ppf(0.975), abs=0.05)
    C = two.tree["estimate"]["score_cov"].values
    assert sigma[0] == pytest.approx(np.sqrt(C[0, 0] + C[1, 1] - 2 * C[0, 1]))


def test_rank_sets_follow_their_definition(fit):
    sets = rank_sets(fit.tree, 0.95)
    c = sets.attrs["critical_value"]
    s = fit.scores()
    C = fit.tree["estimate"]["score_cov"].values
    names = fit.items
    for row in sets.itertuples():
        i = names.index(row.name)
        surely = [(s.iloc[j] - s.iloc[i]) / np.sqrt(C[i, i] + C[j, j] - 2 * C[i, j])
                  for j in range(len(names)) if j != i]
        assert row.rank_set_lower == 1 + sum(z > c for z in surely)
        assert row.rank_set_upper == len(names) - sum(z < -c for z in surely)
        assert row.rank_set_lower <= row.rank <= row.rank_set_upper
    # simultaneous sets are at least as wide as the one-at-a-time rank intervals
    board = fit.leaderboard().set_index("name")
    joined = sets.set_index("name").join(board[["rank_lower", "rank_upper"]])
    assert (joined["rank_set_lower"] <= joined["rank_lower"]).all()
    assert (joined["rank_set_upper"] >= joined["rank_upper"]).all()
    assert top_set(fit.tree, 1) == [n for n in sets["name"] if sets.set_index("name").loc[n, "rank_set_lower"] == 1]
    wider = rank_sets(fit.tree, 0.99)
    assert (wider["rank_set_lower"].to_numpy() <= sets["rank_set_lower"].to_numpy()).all()


def test_rank_sets_from_bootstrap_replicates():
    data = bt_data(np.array([-1.0, 0.0, 0.05, 1.0]), 300, 3)
    boot = br.fit(br.BradleyTerry(ties="drop"), data, intervals="bootstrap", n_boot=300, random_seed=1)
    sets = boot.rank_sets().set_index("name")
    assert sets.loc["m03", "rank_set_lower"] == 1 and sets.loc["m00", "rank_set_upper"] == 4
    assert sets.loc["m01", "rank_set_upper"] - sets.loc["m01", "rank_set_lower"] >= 1   # m01 and m02 are close


@pytest.mark.slow
def test_simultaneous_rank_sets_cover_in_a_simulation():
    """200 simulated data sets with close scores: every true rank in its set at least 95% of the time."""
    true = np.array([0.0, 0.05, 0.1, 0.2, 0.25, 0.4, 0.45, 0.6, 0.8, 0.85])
    true -= true.mean()
    hits = []
    for seed in range(200):
        sets = rank_sets(br.fit(br.BradleyTerry(ties="drop"), bt_data(true, 300, seed)).tree).set_index("name")
        ranks = {f"m{k:02d}": r for k, r in enumerate(np.argsort(np.argsort(-true)) + 1)}
        r = np.array([ranks[n] for n in sets.index])
        hits.append(bool(np.all((sets["rank_set_lower"] <= r) & (r <= sets["rank_set_upper"]))))
    assert np.mean(hits) >= 0.95


def test_credible_rank_sets_from_nuts():
    data = bt_data(np.array([-1.0, 0.0, 0.05, 1.0]), 300, 3)
    post = br.fit(br.BradleyTerry(ties="drop"), data, method="nuts", draws=400, tune=400, chains=2, random_seed=1)
    sets = post.rank_sets().set_index("name")
    c, sigma = critical_value(post.tree)
    x = post.tree["posterior"]["score"].values.reshape(-1, 4)
    i, j = np.triu_indices(4, k=1)
    dev = (x - x.mean(axis=0))[:, i] - (x - x.mean(axis=0))[:, j]
    np.testing.assert_allclose(sigma, (x[:, i] - x[:, j]).std(axis=0, ddof=1))
    assert np.mean(np.max(np.abs(dev) / sigma, axis=1) <= c) == pytest.approx(0.95, abs=0.005)
    assert sets.loc["m03", "rank_set_lower"] == 1 and sets.loc["m00", "rank_set_upper"] == 4
    mle = br.fit(br.BradleyTerry(ties="drop"), data).rank_sets().set_index("name")
    assert (sets["rank_set_lower"] == mle.loc[sets.index, "rank_set_lower"]).mean() >= 0.5
