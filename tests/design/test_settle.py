"""Provisional rows: the battles, and the opponents, that would settle a new model's place."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.data.simulate import outcomes
from tests.conftest import newcomer

SCORES = np.linspace(0.6, -0.6, 9)


@pytest.fixture(scope="module")
def newcomer_fit():
    return br.fit(br.BradleyTerry(ties="drop"), newcomer(SCORES, 200, 3, "m04", np.random.default_rng(0)))


def test_a_new_model_is_provisional_and_its_battles_settle_it(newcomer_fit):
    rows = br.provisional_rows(newcomer_fit)
    assert rows["name"].tolist() == ["m04"] and rows.attrs["max_span"] == 3
    row = rows.iloc[0]
    assert 0 < row["battles"] <= 5000
    assert row["projected_upper"] - row["projected_lower"] + 1 <= 3 < row["rank_upper"] - row["rank_lower"] + 1
    opponents = [part.split(" (")[0] for part in row["opponents"].split(", ")]
    scores = newcomer_fit.scores()
    nearest = (scores.drop("m04") - scores["m04"]).abs().sort_values().index[:4]
    assert set(opponents) <= set(nearest)          # its neighbours on the board as estimated, not the far end
    # the battles, played against the truth and refitted, narrow its rank interval
    plan = br.next_pairs(newcomer_fit, int(row["battles"]), "model", model="m04")
    names = list(newcomer_fit.items)
    a = [names.index(x) for x in plan.pairs["model_a"]]
    b = [names.index(x) for x in plan.pairs["model_b"]]
    c = outcomes(SCORES, a, b, plan.pairs["n"].to_numpy(), np.random.default_rng(1))
    more = br.Comparisons.from_cells(
        np.concatenate([np.array(names)[newcomer_fit.data.a], plan.pairs["model_a"]]),
        np.concatenate([np.array(names)[newcomer_fit.data.b], plan.pairs["model_b"]]),
        np.concatenate([newcomer_fit.data.wins_a, c[:, 0]]), np.concatenate([newcomer_fit.data.wins_b, c[:, 1]]))
    board = br.fit(br.BradleyTerry(ties="drop"), more).leaderboard().set_index("name")
    assert board.loc["m04", "rank_upper"] - board.loc["m04", "rank_lower"] < row["rank_upper"] - row["rank_lower"]


def test_no_provisional_rows_and_bad_fits():
    settled = br.fit(br.BradleyTerry(ties="drop"), newcomer(SCORES, 200, 200, "m04", np.random.default_rng(2)))
    rows = br.provisional_rows(settled)
    assert rows.empty and "battles" in rows and "opponents" in rows
    points = br.fit(br.BradleyTerry(ties="drop"), settled.data, intervals="none")
    with pytest.raises(br.BayesrankError, match="provisional rows need rank intervals"):
        br.provisional_rows(points)
    few = br.fit(br.BradleyTerry(ties="drop"), settled.data, draws=50)
    assert few.leaderboard()["provisional"].isna().all()  # no rank intervals, so no flags
    with pytest.raises(br.BayesrankError, match="no provisional rows: rank intervals at 95% are not reported"):
        br.provisional_rows(few)
