"""The figures Chatbot Arena users look for (FastChat's Elo notebook): pairwise heat maps with
their numbers in the cells, and Elo ratings with intervals. Every function returns a
:class:`bayesrank.output.figures.Figure` (a ``matplotlib.figure.Figure`` that draws names as
written) built without pyplot, as :mod:`bayesrank.plots` does.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm

from bayesrank.output.figures import Figure

#: Largest matrix whose cells carry their numbers (beyond, the text would not fit the cells).
ANNOTATED_MAX = 20


def _fig(width: float, height: float):
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def plot_matrix(matrix: pd.DataFrame, label: str, *, center: float | None = None, fmt: str = "{:.2f}",
                cmap: str | None = None, title: str | None = None) -> Figure:
    """Heat map of an items × items table, rows and columns in the table's order.

    Parameters
    ----------
    matrix : DataFrame
        Square; NaN cells (the diagonal, pairs that never met) are left blank.
    label : str
        What a cell is (the colour bar's label).
    center : float, optional
        A diverging colour map centred there (0.5 for probabilities: white is even, red the row
        model ahead, blue behind), its range the largest distance from the centre in the table,
        so that near-even tables are not washed out; None: a sequential map from 0.
    fmt : str
        How a cell's number is written; cells carry numbers up to :data:`ANNOTATED_MAX` rows (pass
        the top of a larger table).
    cmap : str, optional
        Colour map (default ``RdBu_r`` with a centre, ``Blues`` without).
    title : str, optional
    """
    values = matrix.to_numpy(dtype=float)
    n, k = values.shape
    finite = values[np.isfinite(values)]
    fig, ax = _fig(0.42 * k + 3.2, 0.36 * n + 2.2)
    if center is not None:
        reach = float(np.max(np.abs(finite - center))) if finite.size else 0.0
        reach = reach if reach > 0 else 0.5
        norm = TwoSlopeNorm(vcenter=center, vmin=center - reach, vmax=center + reach)
        im = ax.imshow(values, cmap=cmap or "RdBu_r", norm=norm, aspect="auto")
    else:
        im = ax.imshow(values, cmap=cmap or "Blues", vmin=0, vmax=float(finite.max()) if finite.size else 1,
                       aspect="auto")
    ax.set_xticks(range(k), [str(c) for c in matrix.columns], rotation=90, fontsize=7)
    ax.set_yticks(range(n), [str(r) for r in matrix.index], fontsize=7)
    if max(n, k) <= ANNOTATED_MAX:
        for i in range(n):
            for j in range(k):
                if np.isfinite(values[i, j]):
                    rgba = im.cmap(im.norm(values[i, j]))
                    dark = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2] < 0.5
                    ax.text(j, i, fmt.format(values[i, j]), ha="center", va="center", fontsize=6.5,
                            color="white" if dark else "black")
    fig.colorbar(im, ax=ax, label=label, shrink=0.8)
    if title:
        ax.set_title(title, fontsize=9)
    return fig


def plot_elo(ratings: pd.DataFrame, title: str = "", level: float = 0.95) -> Figure:
    """Elo ratings best first with their intervals (FastChat's bootstrap Elo chart).

    Parameters
    ----------
    ratings : DataFrame
        :func:`bayesrank.results.elo.elo` (indexed by name, best first), or its top rows.
    title : str
    level : float
        The intervals' level, for the axis label.
    """
    fig, ax = _fig(max(6.0, 0.2 * len(ratings) + 2.5), 4.2)
    x = np.arange(len(ratings))
    elo = ratings["elo"].to_numpy()
    if {"elo_lower", "elo_upper"} <= set(ratings):
        err = [elo - ratings["elo_lower"].to_numpy(), ratings["elo_upper"].to_numpy() - elo]
        ax.errorbar(x, elo, yerr=err, fmt="o", markersize=3.5, capsize=2, linewidth=1, color="C0")
        ax.set_ylabel(f"Elo rating, {100 * level:g}% interval")
    else:
        ax.plot(x, elo, "o", markersize=3.5, color="C0")
        ax.set_ylabel("Elo rating")
    ax.set_xticks(x, [str(n) for n in ratings.index], rotation=90, fontsize=7)
    ax.grid(axis="y", linewidth=0.4, alpha=0.6)
    if title:
        ax.set_title(title, fontsize=9)
    return fig


__all__ = ["ANNOTATED_MAX", "plot_elo", "plot_matrix"]
