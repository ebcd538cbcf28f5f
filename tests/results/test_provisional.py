"""Provisional rows: the documented threshold and the leaderboard's column."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.results.provisional import max_span, provisional
from tests.conftest import newcomer


@pytest.mark.parametrize("m,span", [(2, 3), (20, 3), (60, 3), (61, 4), (129, 7), (1000, 50)])
def test_max_span_is_three_ranks_or_five_percent_of_the_board(m, span):
    assert max_span(m) == span


def test_rows_wider_than_the_span_are_provisional():
    lower = np.array([1, 1, 2, 5] + [6] * 16)
    upper = np.array([2, 3, 6, 8] + [9] * 16)         # spans 2, 3, 5, 4, ... on a board of 20 (max 3)
    np.testing.assert_array_equal(provisional(lower, upper)[:4], [False, False, True, True])


def test_the_leaderboard_marks_a_model_with_few_votes():
    """Eight models with 200 votes per pair, and one newcomer with 3 votes against each: only the
    newcomer's rank interval is wide, and only its row is provisional."""
    both = newcomer(np.linspace(0.6, -0.6, 9), 200, 3, "m04", np.random.default_rng(0))
    board = br.fit(br.BradleyTerry(ties="drop"), both).leaderboard()
    assert board["provisional"].dtype == bool
    span = board["rank_upper"] - board["rank_lower"] + 1
    np.testing.assert_array_equal(board["provisional"], span > max_span(len(board)))
    assert board.loc[board["provisional"], "name"].tolist() == ["m04"]
    points = br.fit(br.BradleyTerry(ties="drop"), both, intervals="none").leaderboard()
    assert "provisional" not in points
