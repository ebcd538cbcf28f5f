"""Pictures of tiers, maps and rankings, and the judge diagnostics of HJA fits
(``plot_judge_*``). Every function returns a ``matplotlib.figure.Figure`` (built without
pyplot, so nothing is shown or kept in global state); save it with ``fig.savefig(path)``.
The data come from :mod:`bayesrank.analysis.tiers` and :mod:`bayesrank.results.hja`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.model.dynamic import CHANGE, JUMP
from bayesrank.output.figures import Figure
from bayesrank.plots.arena import plot_matrix
from bayesrank.results import hja
from bayesrank.results.leaderboard import leaderboard, scores


def _fig(width=8.0, height=6.0, projection=None):
    fig = Figure(figsize=(width, height), layout="constrained")
    ax = fig.add_subplot(projection=projection)
    return fig, ax


def plot_dendrogram(tier_table: pd.DataFrame, color_threshold: float | None = None) -> Figure:
    """Dendrogram of :func:`bayesrank.analysis.tiers.tiers` (paper Fig. C.2), leaves labelled
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
    """Scatter of :func:`bayesrank.analysis.tiers.kernel_pca` or :func:`~bayesrank.analysis.tiers.mds`
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
    (columns of :func:`bayesrank.analysis.tiers.rank_table`)."""
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
    :func:`bayesrank.analysis.tiers.cluster_fits`)."""
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
    """Heat map of one matrix of :func:`bayesrank.results.matches.match_probabilities`: diverging
    colours centred at 0.5, numbers in the cells of a matrix small enough to hold them
    (:func:`bayesrank.plots.arena.plot_matrix`; pass the top of a large one)."""
    return plot_matrix(matrix, label, center=0.5)


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
    """ELPD of compared fits (:func:`bayesrank.evaluation.compare.compare`) with ±1 standard error, and
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


# ---------------------------------------------------------------------- HJA judge diagnostics
def _hja_tree(fit):
    """The DataTree of an HJA fit (a :class:`~bayesrank.results.fit.Fit` or its tree)."""
    return getattr(fit, "tree", fit)


def _forest(ax, names, value, lower, upper, color="C0"):
    y = np.arange(len(names))[::-1]
    ax.errorbar(value, y, xerr=[value - lower, upper - value], fmt="o", color=color, ecolor=color,
                elinewidth=1.2, capsize=2, markersize=4)
    ax.set_yticks(y, names, fontsize=7)
    return y


def plot_judge_consensus(fit, level: float = 0.95) -> Figure:
    """Forest plot of the consensus scores μ_i of an HJA fit with their intervals, best first
    (Wald for MAP, posterior for NUTS)."""
    board = leaderboard(_hja_tree(fit), level)
    fig, ax = _fig(6, max(2.5, 0.28 * len(board) + 1))
    _forest(ax, list(board["name"]), board["score"].to_numpy(), board["lower"].to_numpy(), board["upper"].to_numpy())
    ax.axvline(0, color="0.6", linewidth=0.8)
    ax.set_xlabel(f"consensus score μ ({100 * level:g}% interval)")
    ax.set_title("Consensus")
    return fig


def plot_judge_sensitivity(fit, level: float = 0.95) -> Figure:
    """Forest plot of the judges' signed consensus sensitivities γ_k with intervals, lines at
    γ = 1 (the average judge) and γ = 0 (no response to the consensus); negative γ in red."""
    table = hja.judge_table(_hja_tree(fit), level).sort_values("sensitivity", ascending=False, kind="stable")
    fig, ax = _fig(6.5, max(2.5, 0.28 * len(table) + 1))
    g = table["sensitivity"].to_numpy()
    y = _forest(ax, list(table["name"]), g, table["lower"].to_numpy(), table["upper"].to_numpy())
    ax.scatter(g[g < 0], y[g < 0], color="C3", zorder=3, s=16)
    ax.axvline(1, color="0.5", linestyle="--", linewidth=0.8)
    ax.axvline(0, color="0.3", linewidth=0.8)
    ax.set_xlabel(f"sensitivity γ_k ({100 * level:g}% interval; Σγ = K)")
    ax.set_title("Judge sensitivity to the consensus")
    return fig


def _cluster_order(X: np.ndarray) -> np.ndarray:
    """Leaf order of average-linkage clustering of the rows of X (optimal leaf ordering)."""
    from scipy.cluster.hierarchy import leaves_list, linkage, optimal_leaf_ordering
    from scipy.spatial.distance import pdist

    if len(X) < 3:
        return np.arange(len(X))
    d = pdist(X)
    return leaves_list(optimal_leaf_ordering(linkage(d, "average"), d))


def plot_judge_disagreement(fit, cluster: bool = True) -> Figure:
    """Heat map of the disagreement UVᵀ (judges × items), diverging colours with symmetric
    limits; rows and columns ordered by hierarchical clustering (``cluster=True``) or by the
    consensus (items) and the fit's order (judges). Red: the judge scores the item above its
    share of the consensus."""
    D = hja.disagreement_matrix(_hja_tree(fit))
    if cluster:
        D = D.iloc[_cluster_order(D.to_numpy()), _cluster_order(D.to_numpy().T)]
    else:
        D = D[scores(_hja_tree(fit)).sort_values(ascending=False).index]
    fig, ax = _fig(0.45 * D.shape[1] + 4, 0.28 * D.shape[0] + 2)
    lim = float(np.nanmax(np.abs(D.to_numpy()))) or 1.0
    im = ax.imshow(D.to_numpy(), cmap="coolwarm", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_xticks(range(D.shape[1]), list(D.columns), rotation=90, fontsize=7)
    ax.set_yticks(range(D.shape[0]), list(D.index), fontsize=7)
    fig.colorbar(im, ax=ax, label="UVᵀ (logit scale)")
    ax.set_title("Judge disagreement beyond the consensus")
    return fig


def plot_judge_profiles(fit, exclude=(), highlight: bool = True) -> Figure:
    """Each judge's own scores Ŝ_k = γ_k μ + (UVᵀ)_k across the items ordered by the consensus
    (paper Fig. 3b), with the consensus in black; leverage outliers are drawn in colour and
    named (``exclude``: judges left out, e.g. the outlier itself)."""
    tree = _hja_tree(fit)
    S = hja.judge_scores(tree)
    order = scores(tree).sort_values(ascending=False).index
    S = S.drop(index=[j for j in exclude if j in S.index])[order]
    outliers = set(hja.leverage_outliers(tree)["outliers"]) if highlight else set()
    fig, ax = _fig(0.5 * S.shape[1] + 4, 5)
    x = np.arange(S.shape[1])
    for name, row in S.iterrows():
        special = name in outliers
        ax.plot(x, row.to_numpy(), color=None if special else "0.7", linewidth=1.8 if special else 0.8,
                label=name if special else None, zorder=3 if special else 1)
    ax.plot(x, scores(tree)[order].to_numpy(), color="k", linewidth=2.2, label="consensus μ")
    ax.set_xticks(x, list(order), rotation=90, fontsize=7)
    ax.set_ylabel("judge score S_ki")
    ax.legend(fontsize=7)
    ax.set_title("Judge score profiles")
    return fig


def plot_judge_leverage(fit) -> Figure:
    """Leverage h_k = ‖(UVᵀ)_k‖ against sensitivity γ_k (paper Fig. F6); leverage outliers are
    named on the plot and in the title."""
    tree = _hja_tree(fit)
    table = hja.judge_table(tree)
    found = hja.leverage_outliers(tree)
    fig, ax = _fig(6.5, 5)
    ax.scatter(table["sensitivity"], table["leverage"], color="C0", s=22)
    for _, row in table.iterrows():
        if row["name"] in found["outliers"] or row["name"] == found["highest"]:
            ax.scatter([row["sensitivity"]], [row["leverage"]], color="C3", s=30)
            right = row["sensitivity"] > table["sensitivity"].median()
            ax.annotate(row["name"], (row["sensitivity"], row["leverage"]), fontsize=7, xytext=(-4 if right else 4, 2),
                        textcoords="offset points", ha="right" if right else "left")
    ax.axvline(0, color="0.3", linewidth=0.8)
    ax.axvline(1, color="0.5", linestyle="--", linewidth=0.8)
    ax.set_xlabel("sensitivity γ_k")
    ax.set_ylabel("leverage h_k = ‖(UVᵀ)_k‖")
    ax.set_title("outliers: " + (", ".join(found["outliers"]) or "none"), fontsize=8)
    return fig


def plot_trajectories(fit, names=None, top: int = 8, level: float = 0.95) -> Figure:
    """Scores over time with their intervals as bands (a fit over time,
    :func:`bayesrank.results.trajectories.trajectories`), and a marker at each change point of
    probability ≥ 0.5 (filled: ≥ 0.9). Default items: the ``top`` of the last period's leaderboard."""
    paths = fit.trajectories(level)
    names = list(fit.leaderboard(level)["name"].head(top)) if names is None else list(names)
    dates = pd.to_datetime(pd.Index(fit.periods))
    found = fit.changes()
    ends = list(dates[1:]) + [dates[-1] + (dates[-1] - dates[-2] if len(dates) > 1 else pd.Timedelta(days=7))]
    end_of = dict(zip(fit.periods, ends))
    fig, ax = _fig(9, 5)
    for k, name in enumerate(names):
        path = paths[paths["name"] == name]
        x = list(pd.to_datetime(path["period"])) + [end_of[path["period"].iloc[-1]]]   # the last period drawn whole
        extended = {col: np.append(path[col].to_numpy(), path[col].iloc[-1]) for col in ("score", "lower", "upper")}
        color = f"C{k % 10}"
        ax.step(x, extended["score"], where="post", color=color, linewidth=1.4, label=name)
        ax.fill_between(x, extended["lower"], extended["upper"], step="post", color=color, alpha=0.15, linewidth=0)
        for _, row in found[found["name"] == name].iterrows():
            at = pd.to_datetime(row["period"])
            y = float(path.loc[path["period"] == row["period"], "score"].iloc[0])
            ax.plot([at], [y], marker="o", markersize=6, color=color,
                    markerfacecolor=color if row["probability"] >= 0.9 else "white")
    ax.set_xlim(dates.min(), ends[-1])
    ax.set_ylabel(f"score (centred every period), {level:.0%} bands")
    ax.legend(fontsize=7, ncol=2, loc="best")
    ax.set_title("Ratings over time (circles: change points, filled at probability ≥ 0.9)")
    return fig


def plot_change_strip(fit, top: int | None = 40) -> Figure:
    """The change-point strip of a fit over time: items (rows, by the last period's leaderboard) ×
    periods, each cell coloured by the posterior probability of a change there, red for a drop and blue
    for a rise (grey: the item has no battles or no jump then)."""
    est = fit.tree["estimate"]
    names = list(fit.leaderboard()["name"])
    names = names[:top] if top else names
    index = [list(est["item"].values).index(n) for n in names]
    probability = est[CHANGE].values[index]
    sign = np.sign(est[JUMP].values[index])
    fig, ax = _fig(max(6, 0.18 * probability.shape[1] + 3), max(3, 0.2 * len(names) + 1))
    shown = np.ma.masked_where(probability == 0, sign * probability)
    image = ax.imshow(shown, aspect="auto", cmap="RdBu", vmin=-1, vmax=1, interpolation="nearest")
    ax.set_facecolor("#eeeeee")
    ax.set_yticks(np.arange(len(names)), names, fontsize=7)
    periods = fit.periods
    step = max(1, len(periods) // 12)
    ax.set_xticks(np.arange(0, len(periods), step), periods[::step], rotation=45, ha="right", fontsize=7)
    fig.colorbar(image, ax=ax, label="P(change) × sign of the jump")
    ax.set_title("Change points")
    return fig


__all__ = [
    "plot_bump", "plot_change_strip", "plot_compare", "plot_dendrogram", "plot_forest", "plot_judge_consensus",
    "plot_judge_disagreement", "plot_judge_leverage", "plot_judge_profiles", "plot_judge_sensitivity", "plot_kendall",
    "plot_map", "plot_match_probabilities", "plot_observed_predicted", "plot_rank_probabilities", "plot_trajectories"
]
