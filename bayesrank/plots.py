"""Pictures of tiers, maps and rankings. Every function returns a ``matplotlib.figure.Figure``
(built without pyplot, so nothing is shown or kept in global state); save it with
``fig.savefig(path)``. The data come from :mod:`bayesrank.tiers`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure


def _fig(width=8.0, height=6.0, projection=None):
    fig = Figure(figsize=(width, height), layout="constrained")
    ax = fig.add_subplot(projection=projection)
    return fig, ax


def plot_dendrogram(tier_table: pd.DataFrame, color_threshold: float | None = None) -> Figure:
    """Dendrogram of :func:`bayesrank.tiers.tiers` (paper Fig. C.2), leaves labelled
    ``rank. name`` and coloured by cluster below ``color_threshold`` (default: the cut that
    gives the table's tiers)."""
    from scipy.cluster.hierarchy import dendrogram

    Z = tier_table.attrs["linkage"]
    labels = [f"{r}. {n}" for r, n in zip(tier_table["rank"], tier_table["name"])]
    if color_threshold is None:
        k = int(tier_table["tier"].max())
        color_threshold = Z[-(k - 1), 2] if k > 1 else Z[-1, 2] + 1
    fig, ax = _fig(8, max(4, 0.16 * len(labels)))
    dendrogram(Z, labels=labels, orientation="left", color_threshold=color_threshold, ax=ax,
               leaf_font_size=7)
    ax.set_xlabel("|z| (complete linkage)" if tier_table.attrs.get("by") == "z"
                  else "|P(a > b) − P(b > a)| (complete linkage)")
    ax.set_title("Performance tiers")
    return fig


def plot_map(coords: pd.DataFrame, top: int | None = 40, dims: tuple[int, int] = (1, 2),
             label: bool = True) -> Figure:
    """Scatter of :func:`bayesrank.tiers.kernel_pca` or :func:`~bayesrank.tiers.mds`
    coordinates of the top competitors; colour and size ∝ score."""
    cols = [c for c in coords.columns if c[:2] in ("pc", "di")]
    x, y = cols[dims[0] - 1], cols[dims[1] - 1]
    data = coords.head(top) if top else coords
    fig, ax = _fig(7, 6)
    s = data["score"].to_numpy()
    size = 20 + 180 * (s - s.min()) / (np.ptp(s) or 1)
    sc = ax.scatter(data[x], data[y], c=s, s=size, cmap="viridis", edgecolor="k", linewidth=0.3)
    if label:
        for _, row in data.iterrows():
            ax.annotate(f"{row['rank']}", (row[x], row[y]), fontsize=7, xytext=(2, 2), textcoords="offset points")
    fig.colorbar(sc, ax=ax, label="score")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    return fig


def plot_bump(ranks: pd.DataFrame, top: int = 20) -> Figure:
    """Bump chart (paper Fig. E.2): ranks of the first fit's ``top`` items across fits
    (columns of :func:`bayesrank.tiers.rank_table`)."""
    data = ranks.head(top)
    fig, ax = _fig(max(6, 1.1 * ranks.shape[1] + 3), max(4, 0.3 * top))
    xs = np.arange(ranks.shape[1])
    for name, row in data.iterrows():
        ax.plot(xs, row.to_numpy(), marker="o", linewidth=1.2, markersize=4)
        ax.annotate(str(name), (xs[-1], row.iloc[-1]), xytext=(4, 0), textcoords="offset points",
                    fontsize=7, va="center")
        ax.annotate(str(name), (xs[0], row.iloc[0]), xytext=(-4, 0), textcoords="offset points",
                    fontsize=7, va="center", ha="right")
    ax.set_xticks(xs, [str(c) for c in ranks.columns], rotation=45, ha="right")
    ax.invert_yaxis()
    ax.set_ylabel("rank")
    ax.set_xlim(-0.5, len(xs) - 0.5)
    return fig


def plot_kendall(tau: pd.DataFrame, order: list | None = None) -> Figure:
    """Heat map of Kendall τ-b between fits (paper Fig. E.3), optionally reordered (e.g. by
    :func:`bayesrank.tiers.cluster_fits`)."""
    if order is not None:
        tau = tau.loc[order, order]
    fig, ax = _fig(0.3 * len(tau) + 3, 0.3 * len(tau) + 2.5)
    im = ax.imshow(tau.to_numpy(), cmap="viridis", vmin=np.nanmin(tau.to_numpy()), vmax=1)
    ax.set_xticks(range(len(tau)), [str(c) for c in tau.columns], rotation=90, fontsize=7)
    ax.set_yticks(range(len(tau)), [str(c) for c in tau.index], fontsize=7)
    fig.colorbar(im, ax=ax, label="Kendall τ-b")
    return fig


# ---------------------------------------------------------------------- leaderboards of a fit
def plot_forest(fit, top: int | None = 30, level: float = 0.95) -> Figure:
    """Scores of the ``top`` items with their intervals (Wald for MAP, posterior for NUTS),
    best at the top."""
    board = fit.leaderboard(level)
    board = board.head(top) if top else board
    fig, ax = _fig(7, max(3, 0.22 * len(board) + 1))
    y = np.arange(len(board))
    ax.errorbar(board["score"], y, xerr=[board["score"] - board["lower"], board["upper"] - board["score"]],
                fmt="o", markersize=3, capsize=2)
    ax.set_yticks(y, [f"{r}. {n}" for r, n in zip(board["rank"], board["name"])], fontsize=7)
    ax.invert_yaxis()
    kind = "Wald" if fit.tree["estimate"].attrs["interval"] == "wald" else "posterior"
    ax.set_xlabel(f"score, {kind} {100 * level:g}% interval")
    ax.set_title(fit.framework.label, fontsize=9)
    return fig


def plot_rank_probabilities(fit, top: int | None = 20) -> Figure:
    """Heat map of P(rank = r) for the ``top`` items (rows, best first) and ranks 1…top."""
    dist = fit.rank_distribution()
    n = min(top or len(dist), len(dist))
    data = dist.iloc[:n, :n]
    fig, ax = _fig(0.28 * n + 3, 0.25 * n + 2)
    im = ax.imshow(data.to_numpy(), cmap="viridis", vmin=0, vmax=1, aspect="auto")
    ax.set_yticks(range(n), list(data.index), fontsize=7)
    ax.set_xticks(range(n), [str(c) for c in data.columns], fontsize=7)
    ax.set_xlabel("rank")
    fig.colorbar(im, ax=ax, label="P(rank)")
    return fig


def plot_match_probabilities(matrix: pd.DataFrame, label: str = "P(row beats column) + ½ P(tie)") -> Figure:
    """Heat map of one matrix of :func:`bayesrank.results.matches.match_probabilities`."""
    n = len(matrix)
    fig, ax = _fig(0.28 * n + 3, 0.25 * n + 2)
    im = ax.imshow(matrix.to_numpy(), cmap="RdBu_r", vmin=0, vmax=1, aspect="auto")
    ax.set_yticks(range(n), list(matrix.index), fontsize=7)
    ax.set_xticks(range(n), list(matrix.columns), fontsize=7, rotation=90)
    fig.colorbar(im, ax=ax, label=label)
    return fig


def plot_observed_predicted(fit) -> Figure:
    """Observed against predicted share of each outcome per cell (points sized by the cell's
    comparisons); the diagonal is perfect calibration."""
    data = fit.model_data
    n = data.totals
    observed = data.counts() / np.where(n > 0, n, 1)[:, None]
    predicted = np.exp(fit.tree["estimate"]["cell_log_probs"].values)
    fig, ax = _fig(5.5, 5)
    size = 4 + 60 * n / n.max()
    for k, (name, colour) in enumerate((("a wins", "C0"), ("b wins", "C1"), ("tie", "C2"))):
        if np.any(observed[:, k] > 0) or np.any(predicted[:, k] > 0):
            ax.scatter(predicted[:, k], observed[:, k], s=size, alpha=0.4, color=colour, label=name, linewidth=0)
    ax.plot([0, 1], [0, 1], color="k", linewidth=0.8)
    ax.set_xlabel("predicted probability")
    ax.set_ylabel("observed share")
    ax.legend(fontsize=8)
    return fig


def plot_compare(table: pd.DataFrame) -> Figure:
    """ELPD of compared fits (:func:`bayesrank.compare.compare`) with ±1 standard error, and
    the difference to the best with its standard error."""
    fig, ax = _fig(6, 0.5 * len(table) + 1.5)
    y = np.arange(len(table))
    ax.errorbar(table["elpd"], y, xerr=table["se"], fmt="o", color="k", label="ELPD ± se")
    best = table["elpd"].iloc[0]
    ax.errorbar(best + table["elpd_diff"].iloc[1:], y[1:] - 0.2, xerr=table["dse"].iloc[1:], fmt="^", color="C1",
                label="difference to the best ± se")
    ax.set_yticks(y, list(table.index), fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("expected log predictive density (leave one cell out)")
    ax.legend(fontsize=8)
    return fig
