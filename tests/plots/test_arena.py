"""Heat maps readable at a glance and the Elo chart with intervals."""

import numpy as np
import pandas as pd
import pytest

from bayesrank.plots.arena import ANNOTATED_MAX, plot_elo, plot_matrix


def _probabilities(n, rng):
    p = rng.uniform(0.4, 0.6, (n, n))
    p = np.triu(p, 1) + np.tril(1 - p.T, -1)
    np.fill_diagonal(p, np.nan)
    names = [f"m{k}" for k in range(n)]
    return pd.DataFrame(p, index=names, columns=names)


def test_a_small_matrix_carries_its_numbers_and_centres_its_colours_at_one_half():
    matrix = _probabilities(6, np.random.default_rng(0))
    fig = plot_matrix(matrix, "P", center=0.5)
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == 30 and f"{matrix.iloc[0, 1]:.2f}" in texts   # every off-diagonal cell, none on it
    norm = ax.images[0].norm
    reach = np.nanmax(np.abs(matrix.to_numpy() - 0.5))           # as far as the table goes, both ways
    assert norm.vcenter == 0.5 and norm.vmax == pytest.approx(0.5 + reach) and norm.vmin == pytest.approx(0.5 - reach)
    big = plot_matrix(_probabilities(ANNOTATED_MAX + 1, np.random.default_rng(1)), "P", center=0.5)
    assert len(big.axes[0].texts) == 0


def test_elo_chart_has_a_point_and_an_interval_per_model():
    ratings = pd.DataFrame({"rank": [1, 2, 3], "elo": [1100.0, 1000.0, 900.0], "elo_lower": [1080.0, 990.0, 850.0],
                            "elo_upper": [1120.0, 1010.0, 950.0]}, index=pd.Index(["a", "b", "c"], name="name"))
    ax = plot_elo(ratings).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    (bars,) = ax.containers
    np.testing.assert_allclose(bars.lines[0].get_ydata(), ratings["elo"])
    assert "95% interval" in ax.get_ylabel()
