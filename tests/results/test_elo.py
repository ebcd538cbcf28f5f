"""Elo views of a fit as Arena users read them: best first with ranks, and none where Elo has no
meaning (Thurstonian fits)."""


import numpy as np
import pytest

import bayesrank as br
from bayesrank.cli import main
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def data():
    return simulate_counts(np.array([-0.6, 0.4, -0.1, 0.9, 0.2]), 150, np.random.default_rng(4), eta=-0.5)


def test_elo_comes_back_best_first_with_ranks(data):
    fit = br.fit(br.Davidson(), data)
    table = fit.elo()
    assert list(table.columns) == ["rank", "elo", "elo_lower", "elo_upper"]
    assert table["elo"].is_monotonic_decreasing and list(table["rank"]) == [1, 2, 3, 4, 5]
    assert list(table.index) == list(fit.leaderboard()["name"])


def test_thurstonian_json_has_no_elo_and_counts_are_integers(data, capsys):
    thurstonian = br.fit(br.Davidson(k_cov=0), data).to_json()
    assert thurstonian["elo_scale"] is None
    assert not any(key.startswith("elo") for item in thurstonian["items"] for key in item)
    assert "no fixed Elo meaning" in thurstonian["scale_note"]
    plain = br.fit(br.Davidson(), data).to_json()
    assert {"elo", "elo_lower", "elo_upper"} <= set(plain["items"][0]) and plain["elo_scale"]["offset"] == 1000
    assert isinstance(plain["n_comparisons"], int) and plain["n_comparisons"] == 10 * 150
    assert main(["fit", "mtbench-judges", "--model", "btl", "--top", "3"]) == 0
    board = capsys.readouterr().out.split("\n\n")[1]
    assert " 3207 " in board and "3207.000" not in board                 # n_comparisons as an integer
