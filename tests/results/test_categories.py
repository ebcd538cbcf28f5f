"""Per-category leaderboards of a ByCategory fit: each category best first, with its scores'
posterior mean, sd, equal-tailed interval and rank interval, all from the draws (NumPy here)."""

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from tests.conftest import simulate_battles, simulate_counts


def test_a_fit_without_categories_says_which_framework_has_them():
    fit = br.fit(br.BradleyTerry(), simulate_counts(np.array([0.0, 0.5, 1.0]), 30, np.random.default_rng(0)))
    with pytest.raises(br.BayesrankError, match="fit the 'by-category' framework to records read with by=COLUMN"):
        fit.categories()


@pytest.mark.slow
def test_category_leaderboards_are_those_of_the_category_draws():
    rng = np.random.default_rng(0)
    first = simulate_battles([-0.5, 0.0, 0.5, 1.0], 300, rng).assign(category="c0")
    second = simulate_battles([1.0, 0.5, 0.0, -0.5], 300, rng).assign(category="c1")
    data = br.load(pd.concat([first, second], ignore_index=True), by="category")
    fit = br.fit(br.ByCategory(), data, method="nuts", draws=200, tune=200, chains=2, random_seed=0)
    boards = fit.categories(level=0.9)
    x = fit.tree["posterior"]["category_score"].transpose("chain", "draw", "category", "item").values
    x = x.reshape(-1, *x.shape[2:])
    items = list(fit.items)
    for k, category in enumerate(["c0", "c1"]):
        board = boards[boards["category"] == category].set_index("name")
        s = x[:, k]
        mean = s.mean(axis=0)
        assert list(board.index) == [items[i] for i in np.argsort(-mean)] and list(board["rank"]) == [1, 2, 3, 4]
        ranks = 1 + (s[:, None, :] > s[:, :, None]).sum(axis=2)
        n = len(s)
        for i, name in enumerate(items):
            row = board.loc[name]
            assert row["score"] == pytest.approx(mean[i]) and row["se"] == pytest.approx(s[:, i].std(ddof=1), rel=1e-6)
            assert row["lower"] == pytest.approx(np.quantile(s[:, i], 0.05))
            assert row["upper"] == pytest.approx(np.quantile(s[:, i], 0.95))
            ordered = np.sort(ranks[:, i])
            assert (row["rank_lower"], row["rank_upper"]) == (ordered[int(np.floor(0.05 * (n - 1)))],
                                                              ordered[int(np.ceil(0.95 * (n - 1)))])
    # the two categories were simulated in opposite orders
    assert boards[boards["category"] == "c0"]["name"].iloc[0] == "m3"
    assert boards[boards["category"] == "c1"]["name"].iloc[0] == "m0"
