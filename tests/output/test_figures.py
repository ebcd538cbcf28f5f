"""Figures (bayesrank/output/figures.py): names with dollar signs are drawn as written."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from bayesrank import plots
from bayesrank.cli import main
from bayesrank.output.figures import Figure

#: Names Matplotlib would read as TeX math (some of them not valid TeX).
DOLLARS = st.sampled_from(["$x$", "$\\frac{$", "a$b$c", "$$", "$\\x$", "price $5 and $6", "$^$", "$_{$"])


@settings(max_examples=30, deadline=None)
@given(st.lists(DOLLARS, min_size=2, max_size=5, unique=True))
def test_dollar_names_draw(names):
    matrix = pd.DataFrame(np.full((len(names), len(names)), 0.5), index=names, columns=names)
    fig = plots.plot_match_probabilities(matrix)
    fig.savefig(io.BytesIO(), format="png")
    assert isinstance(fig, Figure)
    shown = {t.get_text() for t in fig.axes[0].get_yticklabels()}
    assert shown == set(names)


def test_plain_matplotlib_would_fail():
    """What the Figure guards against (so the test above can fail)."""
    from matplotlib.figure import Figure as Plain

    fig = Plain()
    fig.add_subplot().set_title("$\\frac{$")
    with pytest.raises(ValueError):
        fig.savefig(io.BytesIO(), format="png")


def test_a_report_of_dollar_names(tmp_path, capsys):
    path = tmp_path / "r.csv"
    rows = [("$\\x$", "a$b$c", "model_a"), ("a$b$c", "$^$", "tie"), ("$^$", "$\\x$", "model_b"),
            ("$\\x$", "a$b$c", "tie")]
    pd.DataFrame(rows, columns=["model_a", "model_b", "winner"]).to_csv(path, index=False)
    assert main(["report", str(path), "--models", "davidson", "--out", str(tmp_path / "r.html")]) == 0, \
        capsys.readouterr().err
    assert "$\\x$" in (tmp_path / "r.html").read_text()
