"""The JSON contract of a fit: plain JSON, the headline numbers the fit reports, items best first as
the leaderboard has them, counts as whole numbers, no Elo where it has no meaning and only point
fields without intervals."""

import json

import numpy as np
import pytest

import bayesrank as br
from bayesrank.results.summary import ITEM_FIELDS, whole
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def data():
    return simulate_counts(np.array([-0.5, 0.0, 0.2, 0.6]), 40, np.random.default_rng(12), eta=-0.4)


def test_json_holds_the_fits_numbers_and_its_leaderboard(data):
    fit = br.fit(br.BradleyTerry(ties="drop"), data)
    out = fit.to_json(level=0.9)
    assert json.loads(json.dumps(out)) == out                      # plain JSON, nothing lost on the way
    non_ties = data.wins_a.sum() + data.wins_b.sum()
    assert out["n_comparisons"] == data.n_comparisons and isinstance(out["n_comparisons"], int)
    assert out["n_used"] == non_ties and out["n_items"] == 4 and out["framework"] == "bt"
    assert out["nll"] == pytest.approx(fit.nll) and out["cross_entropy"] == fit.cross_entropies()
    board = fit.leaderboard(level=0.9, elo=True)
    assert [item["name"] for item in out["items"]] == list(board["name"])
    for item, (_, row) in zip(out["items"], board.iterrows()):
        assert set(item) == set(ITEM_FIELDS)
        for key in ("rank", "score", "lower", "upper", "rank_lower", "rank_upper", "elo"):
            assert item[key] == pytest.approx(row[key])
    assert br.framework_from_spec(out["spec"]) == fit.framework


def test_no_elo_for_a_thurstonian_fit_and_no_intervals_without_them(data):
    thurstonian = br.fit(br.Davidson(k_cov=0), data).to_json()
    assert thurstonian["elo_scale"] is None and not any("elo" in key for key in thurstonian["items"][0])
    points = br.fit(br.Davidson(), data, intervals="none").to_json()
    assert set(points["items"][0]) == {"name", "rank", "score", "elo"}


def test_whole_numbers_are_ints():
    assert whole(3.0) == 3 and isinstance(whole(3.0), int)
    assert whole(2.5) == 2.5 and isinstance(whole(np.float64(2.5)), float)
