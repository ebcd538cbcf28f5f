"""Ranking and judge pictures: each returns a Figure whose artists carry exactly the numbers of the
table it draws (one error bar, row or point per item or judge, labelled as documented)."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.model.papers import hja_comparisons, hja_truth
from bayesrank.output.figures import Figure
from bayesrank.plots import rankings
from bayesrank.results import hja
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def fit():
    data = simulate_counts(np.array([-0.9, -0.2, 0.0, 0.4, 0.8, 1.1]), 40, np.random.default_rng(2), eta=-0.5)
    return br.fit(br.Davidson(), data)


@pytest.fixture(scope="module")
def judged():
    """A rank-1 HJA fit of a simulated panel of 5 judges on 6 items."""
    truth = hja_truth(n_items=6, n_judges=5, rank=1, heterogeneity=1.0, random_seed=3)
    return br.fit(br.HJA(rank=1), hja_comparisons(truth["S"], 3000, random_seed=3))


def test_forest_draws_each_items_interval_best_first(fit):
    fig = rankings.plot_forest(fit, top=4, level=0.9)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    board = fit.leaderboard(0.9).head(4)
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"{r}. {n}" for r, n in zip(board["rank"], board["name"])]
    points = ax.lines[0]
    np.testing.assert_allclose(np.asarray(points.get_xdata(), dtype=float), board["score"])
    bars = ax.collections[0]
    ends = np.array([segment[:, 0] for segment in bars.get_segments()])
    np.testing.assert_allclose(ends, board[["lower", "upper"]].to_numpy())
    assert ax.get_xlabel() == "score, Wald 90% interval"


def test_rank_probabilities_image_is_the_rank_distribution(fit):
    fig = rankings.plot_rank_probabilities(fit, top=4)
    ax = fig.axes[0]
    (image,) = ax.images
    dist = fit.rank_distribution()
    np.testing.assert_allclose(image.get_array(), dist.iloc[:4, :4].to_numpy())
    assert [t.get_text() for t in ax.get_yticklabels()] == list(dist.index[:4])


def test_observed_against_predicted_per_outcome(fit):
    ax = rankings.plot_observed_predicted(fit).axes[0]
    data = fit.model_data
    predicted = np.exp(fit.tree["estimate"]["cell_log_probs"].values)
    observed = data.counts() / data.totals[:, None]
    assert len(ax.collections) == 3
    for k, points in enumerate(ax.collections):
        np.testing.assert_allclose(points.get_offsets(), np.column_stack([predicted[:, k], observed[:, k]]))


def test_judge_pictures_draw_one_mark_per_judge(judged):
    table = hja.judge_table(judged.tree)
    judges = set(table["name"])
    ax = rankings.plot_judge_sensitivity(judged).axes[0]
    assert {t.get_text() for t in ax.get_yticklabels()} == judges
    ax = rankings.plot_judge_leverage(judged).axes[0]
    np.testing.assert_allclose(ax.collections[0].get_offsets(), table[["sensitivity", "leverage"]].to_numpy())
    ax = rankings.plot_judge_disagreement(judged, cluster=False).axes[0]
    D = hja.disagreement_matrix(judged.tree)
    order = judged.scores().sort_values(ascending=False).index
    np.testing.assert_allclose(ax.images[0].get_array(), D[order].to_numpy())
    ax = rankings.plot_judge_profiles(judged).axes[0]
    assert len(ax.lines) == len(judges) + 1                      # every judge and the consensus
    np.testing.assert_allclose(ax.lines[-1].get_ydata(), judged.scores()[order].to_numpy())
    ax = rankings.plot_judge_consensus(judged).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(judged.leaderboard()["name"])
    assert np.all(np.diff(ax.get_yticks()) < 0)                  # best at the top
