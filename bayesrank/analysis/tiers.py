"""Performance tiers, maps of competitors and agreement between rankings (paper §4.2, App. C, E).

Everything here returns data (NumPy / pandas); the pictures are in :mod:`bayesrank.plots`.

* :func:`z_matrix` — the paper's dissimilarity Z = [z_ab], z_ab = (μ_a − μ_b)/√s_ab for
  Thurstonian fits (``k_cov`` set), x_a − x_b otherwise. It mixes score gaps and covariance.
* :func:`tiers` — complete-linkage clustering with optimal leaf ordering on |Z| of the top
  competitors (paper Fig. C.2: ``linkage(squareform(Z), "complete", optimal_ordering=True)``),
  cut into tiers.
* :func:`order_distance` — for posterior (NUTS) or asymptotic (MAP) draws, the dissimilarity
  |P(s_a > s_b) − P(s_b > s_a)|: 0 when the data cannot order a and b, 1 when they are ordered
  with certainty; :func:`tiers` with ``by="order"`` clusters on it, giving tiers of
  competitors whose ranks are not distinguishable.
* :func:`kernel_pca` (paper Fig. 2: RBF kernel exp(−γ z²), γ = 1e-4) and :func:`mds`
  (classical / Torgerson MDS on |Z|, paper Fig. C.1) by eigen-decompositions.
* :func:`rank_table` and :func:`kendall_tau` (Kendall τ-b, ``scipy.stats.kendalltau``) across fits.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, leaves_list, linkage, optimal_leaf_ordering
from scipy.spatial.distance import squareform
from scipy.stats import kendalltau

from bayesrank.errors import options_checked
from bayesrank.inference.structure import structure_of
from bayesrank.results.estimates import draws, point

#: Draws compared at once in :func:`order_distance` (bounds memory at chunk × items²).
ORDER_CHUNK = 100


# ------------------------------------------------------------------------------ dissimilarities
def z_matrix(fit) -> pd.DataFrame:
    """Signed Z = [z_ab], the model's linear predictor of every pair (a, b), items in fit order:
    z_ab = (μ_a − μ_b)/√s_ab for Thurstonian fits (``k_cov`` set), x_a − x_b for the others.

    Computed by the framework's own predictor at the MLE (MAP) or at the posterior means of
    its variables (NUTS). For judge-aware fits, the consensus score differences.
    """
    names = fit.items
    m = len(names)
    a, b = (x.ravel() for x in np.meshgrid(np.arange(m), np.arange(m), indexing="ij"))
    if fit.model_data.judges is not None:
        s = fit.scores().to_numpy()
        z = s[a] - s[b]
    else:
        structure = structure_of(fit.framework, fit.model_data, "flat")
        nat = {v: point(fit.tree, v) for v in structure.natural.names}
        cells = {"item_a": a, "item_b": b}
        if fit.model_data.first is not None:
            cells["first"] = np.zeros_like(a)
        z = structure.predictor_values(nat, cells)["d"]
    z = z.reshape(m, m)
    np.fill_diagonal(z, 0.0)
    return pd.DataFrame(z, index=names, columns=names)


def order_distance(fit) -> pd.DataFrame:
    """|P(s_a > s_b) − P(s_b > s_a)| from the fit's draws (posterior for NUTS, asymptotic
    normal for MAP)."""
    s = draws(fit.tree, "score")
    m = s.shape[1]
    greater = np.zeros((m, m))
    for start in range(0, len(s), ORDER_CHUNK):
        block = s[start:start + ORDER_CHUNK]
        greater += (block[:, :, None] > block[:, None, :]).sum(axis=0)
    p = greater / len(s)
    dist = np.abs(p - p.T)
    np.fill_diagonal(dist, 0.0)
    return pd.DataFrame(dist, index=fit.items, columns=fit.items)


# ------------------------------------------------------------------------------ tiers
def _top(fit, top):
    order = fit.scores().sort_values(ascending=False, kind="stable")
    return list(order.index[: top or len(order)]), order


@options_checked
def tiers(fit, top: int | None = 100, n_tiers: int | None = 5, by: str = "z", method: str = "complete",
          threshold: float | None = None) -> pd.DataFrame:
    """Hierarchical clustering of the top competitors into performance tiers.

    Parameters
    ----------
    fit : Fit
    top : int, optional
        Cluster the best ``top`` competitors by score (paper: 100); None for all.
    n_tiers : int, optional
        Cut the tree into this many clusters (``fcluster(maxclust=...)``); ignored when
        ``threshold`` is given.
    by : {"z", "order"}
        Dissimilarity: ``|Z|`` (:func:`~bayesrank.analysis.tiers.z_matrix`, the paper's) or
        :func:`~bayesrank.analysis.tiers.order_distance`.
    method : str
        Linkage (paper: ``"complete"``), always with optimal leaf ordering.
    threshold : float, optional
        Cut at this height instead (``fcluster(criterion="distance")``).

    Returns
    -------
    DataFrame
        ``rank, name, score, leaf, tier`` (rank order); tiers are numbered 1, 2, … from the
        best competitor's tier. ``df.attrs["linkage"]`` holds the linkage matrix (rows in the
        order of ``rank``) for :func:`bayesrank.plots.plot_dendrogram`.
    """
    names, order = _top(fit, top)
    full = z_matrix(fit).abs() if by == "z" else order_distance(fit)
    dist = full.loc[names, names].to_numpy()
    dist = (dist + dist.T) / 2
    np.fill_diagonal(dist, 0.0)
    condensed = squareform(dist, checks=False)
    Z = linkage(condensed, method=method, optimal_ordering=True)
    Z = optimal_leaf_ordering(Z, condensed)
    if threshold is not None:
        labels = fcluster(Z, threshold, criterion="distance")
    elif n_tiers is not None:
        labels = fcluster(Z, n_tiers, criterion="maxclust")
    else:
        labels = np.ones(len(names), dtype=int)
    # renumber tiers by the best rank they contain
    first = {}
    for lab in labels:
        first.setdefault(lab, len(first) + 1)
    leaf = np.empty(len(names), dtype=int)
    leaf[leaves_list(Z)] = np.arange(len(names))
    out = pd.DataFrame({"rank": np.arange(1, len(names) + 1), "name": names,
                        "score": order.loc[names].to_numpy(), "leaf": leaf,
                        "tier": [first[lab] for lab in labels]})
    out.attrs["linkage"] = Z
    out.attrs["by"] = by
    return out


# ------------------------------------------------------------------------------ maps
def kernel_pca(fit, n_components: int = 3, gamma: float = 1e-4) -> pd.DataFrame:
    """Kernel PCA of the competitors with the RBF kernel exp(−γ z_ab²) on all items.

    Equivalent to scikit-learn's ``KernelPCA(kernel="precomputed")``: the kernel is
    double-centred and coordinates are eigenvectors × √eigenvalue (signs are arbitrary).

    Returns
    -------
    DataFrame
        ``name, score, rank, pc1, …`` (rank order).
    """
    Zm = z_matrix(fit).to_numpy()
    K = np.exp(-gamma * Zm**2)
    return _embed(fit, _centre(K), n_components, "pc")


def mds(fit, n_components: int = 2) -> pd.DataFrame:
    """Classical (Torgerson) multidimensional scaling of |Z|: B = −½ J D² J, top eigenpairs.

    Returns
    -------
    DataFrame
        ``name, score, rank, dim1, …`` (rank order).
    """
    D2 = z_matrix(fit).to_numpy() ** 2
    return _embed(fit, -0.5 * _centre(D2), n_components, "dim")


def _centre(K):
    m = K.shape[0]
    J = np.eye(m) - np.ones((m, m)) / m
    return J @ K @ J


def _embed(fit, B, k, prefix):
    w, v = np.linalg.eigh((B + B.T) / 2)
    idx = np.argsort(w)[::-1][:k]
    coords = v[:, idx] * np.sqrt(np.clip(w[idx], 0, None))
    # deterministic signs: the best competitor has a non-negative coordinate
    best = int(np.argmax(fit.scores().to_numpy()))
    coords *= np.where(coords[best] < 0, -1.0, 1.0)
    out = pd.DataFrame(coords, columns=[f"{prefix}{i + 1}" for i in range(coords.shape[1])])
    out.insert(0, "score", fit.scores().to_numpy())
    out.insert(0, "name", fit.items)
    out = out.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
    out.insert(2, "rank", np.arange(1, len(out) + 1))
    out.attrs["eigenvalues"] = w[idx]
    return out


# ------------------------------------------------------------------------------ across fits
def _scores_of(x) -> pd.Series:
    if isinstance(x, pd.Series):
        return x
    if isinstance(x, Mapping):
        return pd.Series(x, dtype=float)
    return x.scores()  # a Fit


def rank_table(fits: Mapping) -> pd.DataFrame:
    """Ranks (1 = best) of every item under each named fit (or score vector), items × fits,
    ordered by the first fit's ranking; items missing from a fit get NaN."""
    cols = {name: _scores_of(f).rank(ascending=False, method="min") for name, f in fits.items()}
    table = pd.DataFrame(cols)
    first = next(iter(cols))
    return table.sort_values(first, kind="stable")


def kendall_tau(fits: Mapping) -> pd.DataFrame:
    """Kendall τ-b between the score vectors of named fits (``Fit``, Series or dict name→score),
    on the items they share. The agreement probability of a random pair is (τ + 1)/2."""
    scores = {name: _scores_of(f) for name, f in fits.items()}
    names = list(scores)
    out = np.ones((len(names), len(names)))
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            b = names[j]
            common = scores[a].index.intersection(scores[b].index)
            tau = kendalltau(scores[a].loc[common], scores[b].loc[common], variant="b").statistic
            out[i, j] = out[j, i] = tau
    return pd.DataFrame(out, index=names, columns=names)


def cluster_fits(tau: pd.DataFrame, method: str = "average") -> list:
    """Order of the fits by hierarchical clustering of 1 − τ with optimal leaf ordering
    (paper Fig. E.3)."""
    d = 1 - tau.to_numpy()
    d = (d + d.T) / 2
    np.fill_diagonal(d, 0.0)
    condensed = squareform(np.clip(d, 0, None), checks=False)
    Z = optimal_leaf_ordering(linkage(condensed, method=method), condensed)
    return [tau.index[i] for i in leaves_list(Z)]


__all__ = [
    "ORDER_CHUNK", "cluster_fits", "kendall_tau", "kernel_pca", "mds", "order_distance", "rank_table", "tiers",
    "z_matrix"
]
