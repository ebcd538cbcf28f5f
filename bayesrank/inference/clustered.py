"""Intervals for comparisons that are not independent: the cluster-robust sandwich and the
cluster bootstrap.

Votes come in clusters — one user casts many, one prompt is judged by many pairs, one judge
model gives thousands of verdicts — and the comparisons of a cluster are correlated. The
likelihood is unchanged (it still sums over the cells), and so is its maximum; only the
variance of the estimate is larger than the per-comparison intervals say. Records read with
``cluster=COLUMN`` keep, beside the cells, the comparisons of each cell by cluster
(:class:`~bayesrank.data.clusters.Clusters`), and the two interval methods of a MAP fit take
whole clusters as the independent units:

``sandwich`` with clusters (Liang & Zeger 1986; Cameron & Miller 2015, §II–III)
    Cov(θ̂) = I⁻¹ M I⁻¹ with the meat M = c Σ_g S_g S_gᵀ, where S_g = Σ_{comparisons of g} s is
    the score summed within cluster g — per row of the clusters, the row's likelihood counts
    times the score of each outcome, ∇_θ log P_o (ties counted as halves, reweighted cells
    scaled, as the likelihood counts them). The small-sample factor is CR1's c = G/(G − 1)
    for G clusters (the factor of Stata's ``vce(cluster)`` for maximum-likelihood
    estimators; no (N − 1)/(N − K), which belongs to least squares). With one comparison per
    cluster it is the per-comparison sandwich times N/(N − 1).
``sandwich`` with two cluster columns (Cameron, Gelbach & Miller 2011, §2.3)
    M = c₁ M₁ + c₂ M₂ − c₁₂ M₁₂: the meats clustered by each column and by their
    intersection, each with its own G/(G − 1). The difference need not be positive
    semi-definite; the covariance's negative eigenvalues are then set to zero (their §2.3)
    and the fit says so.
``bootstrap`` with clusters (the pairs cluster bootstrap; Cameron, Gelbach & Miller 2008)
    Each replicate draws G clusters with replacement (a cluster drawn k times counts k
    times), and is refitted by the same compiled model and optimiser, warm-started at θ̂
    (:func:`~bayesrank.inference.intervals.refits`). One column only.

Both rest on many clusters: with few, the sandwich is too narrow (Cameron & Miller 2015,
§VI) — a fit with few clusters says so — and random effects
(:class:`~bayesrank.model.random_effects.RandomEffects`) model the dependence instead.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigvalsh

from bayesrank.data.clusters import Clusters, cluster_columns
from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError, ModelSpecError
from bayesrank.inference.information import CellDerivatives
from bayesrank.inference.intervals import refits, sandwich, sandwich_factor
from bayesrank.inference.structure import Bound

#: Below this many clusters a fit warns that cluster-robust intervals are too narrow.
FEW_CLUSTERS = 30
#: A two-way meat's eigenvalue below −NEGATIVE × its largest is negative (not rounding of a zero).
NEGATIVE = 1e-12


def cluster_names(data: Comparisons, cluster) -> tuple[str, ...]:
    """The cluster columns a fit allows for: ``cluster`` (checked against the data's), or every
    column the data were read with when it is None.

    Raises
    ------
    DataError
        A column the data were not read with (the message says how to read it).
    """
    if cluster is None:
        return () if data.clusters is None else data.clusters.names
    names = cluster_columns(cluster)
    for name in names:
        if data.clusters is None:
            raise DataError(f"these comparisons carry no cluster column, so cluster={name!r} cannot apply; read the "
                            f"records with cluster={name!r} (bayesrank.load(..., cluster={name!r}); CLI: --cluster "
                            f"{name}).")
        data.clusters.index(name)
    return names


def prepared_clusters(label: str, prepared: Comparisons, names: tuple[str, ...]) -> Clusters | None:
    """The clusters of the prepared cells (the framework's tie convention and the weights applied
    to the rows as to the cells); None without cluster columns.

    Raises
    ------
    ModelSpecError
        When the prepared cells no longer carry clusters that add up to their counts (counts
        changed after the records were read, or a framework whose preparation builds new
        cells): clustered intervals are then not available.
    """
    if not names:
        return None
    clusters = prepared.clusters
    if clusters is None or not clusters.agrees_with(prepared.counts()):
        raise ModelSpecError(f"the cells no longer add up to their clusters' comparisons (counts changed after the "
                             f"records were read, or {label} builds new cells): intervals by cluster "
                             f"({', '.join(names)}) are not available; read the records again with cluster=, or fit "
                             "with cluster=().")
    for name in names:
        clusters.index(name)
    return clusters


def cluster_notes(clusters: Clusters | None, names: tuple[str, ...], intervals: str) -> list[str]:
    """What the clusters say about a fit's intervals, in words: Wald intervals that ignore the
    data's clusters; for intervals by cluster, a column whose every cluster holds one comparison,
    and too few clusters (:data:`FEW_CLUSTERS`).

    Raises
    ------
    DataError
        A column with a single cluster (:meth:`Clusters.check`).
    """
    if clusters is None:
        return [] if not names or intervals != "wald" else [
            f"Wald intervals treat the comparisons as independent: the data's clusters ({', '.join(map(repr, names))})"
            " are not allowed for, so they may be too narrow; use intervals='sandwich' or 'bootstrap' with cluster=."]
    notes = []
    for name in names:
        notes += clusters.check(name)
        g = clusters.n_clusters()[name]
        if g < FEW_CLUSTERS:
            notes.append(f"only {g} clusters of {name!r}: intervals that treat clusters as the independent units "
                         f"rest on many clusters and come out too narrow with few (fewer than about {FEW_CLUSTERS}); "
                         "read them as lower bounds, or model the dependence with RandomEffects(..., "
                         f"cluster={name!r}).")
    return notes


def cluster_scores(bound: Bound, theta: np.ndarray, cell: np.ndarray, group: np.ndarray, counts: np.ndarray,
                   n_groups: int) -> sp.csr_matrix:
    """S_g = Σ_{rows of g} Σ_o y_ro ∇ log P_{c_r o} in natural coordinates: the scores summed within
    each group, ``(n_groups, natural size)`` (sparse: a group touches the items it compared).

    Parameters
    ----------
    bound : Bound
    theta : ndarray
    cell, group : ndarray of int
        ``(n_rows,)``: the prepared cell and the group of every row.
    counts : ndarray
        ``(n_rows, 3)`` the rows' likelihood counts.
    n_groups : int
    """
    cd = CellDerivatives.at(bound, theta)
    _, D = bound.structure.kernels["link"].outcome_gradients(cd.values)   # (cells, outcome, predictor)
    D = np.where(np.isfinite(D), D, 0.0)   # an outcome of probability 0 has no score, and no count either
    # the rows by group (the matrix is built in CSR order directly); an unstable sort, which is
    # several times faster, orders equal groups the same way in every run, and a group's entries
    # are summed after sorting them by column
    order = np.argsort(group)
    cell, counts = cell[order], counts[order]
    g = np.einsum("ro,rop->rp", counts, D[cell])                            # (rows, predictor)
    columns = np.concatenate([cd.rows[name][cell] for name in cd.names], axis=1)
    values = np.concatenate([cd.jac[name][cell] * g[:, q, None] for q, name in enumerate(cd.names)], axis=1)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(group, minlength=n_groups))]) * columns.shape[1]
    scores = sp.csr_matrix((values.ravel(), columns.ravel(), indptr), shape=(n_groups, bound.structure.natural.size))
    scores.sum_duplicates()   # a group's rows touch its few items many times: Sᵀ S then costs Σ_g (items of g)²
    return scores


def groups_of(clusters: Clusters, names: tuple[str, ...]) -> tuple[np.ndarray, int, int]:
    """Every row's group — its cluster in ``names``, or the intersection of two clusters numbered
    over those that occur —, the number of group labels, and G, the groups that hold a row."""
    if len(names) == 1:
        k = clusters.index(names[0])
        group, size = clusters.codes[:, k], len(clusters.levels[k])
        return group, size, int(np.count_nonzero(np.bincount(group, minlength=size)))
    key = np.zeros(clusters.n_rows, dtype=np.int64)
    for name in names:
        k = clusters.index(name)
        key = key * len(clusters.levels[k]) + clusters.codes[:, k]
    used, group = np.unique(key, return_inverse=True)
    return group.astype(np.int64), int(used.size), int(used.size)


def cluster_meat(bound: Bound, theta: np.ndarray, clusters: Clusters, names: tuple[str, ...]
                 ) -> tuple[np.ndarray, dict]:
    """The cluster-robust meat on θ (the module docstring): c Σ_g S_g S_gᵀ for one column;
    c₁ M₁ + c₂ M₂ − c₁₂ M₁₂ for two; c = G/(G − 1).

    Returns
    -------
    meat : ndarray
        ``(n_free, n_free)``.
    info : dict
        ``n_clusters``: G per column (and ``"∩"`` for the intersection of two).
    """
    nmap, n_free = bound.structure.natural, bound.n_free
    parts = [((name,), 1.0) for name in names]
    if len(names) == 2:
        parts.append((names, -1.0))
    meat = np.zeros((n_free, n_free))
    info = {}
    for columns, sign in parts:
        group, size, g = groups_of(clusters, columns)
        scores = cluster_scores(bound, theta, clusters.cell, group, clusters.counts, size)
        meat += sign * g / (g - 1) * nmap.pull_back_matrix((scores.T @ scores).tocsr(), n_free)
        info[" ∩ ".join(columns)] = g
    return 0.5 * (meat + meat.T), {"n_clusters": info}


def clustered_sandwich(bound: Bound, theta: np.ndarray, observed: np.ndarray, clusters: Clusters,
                       names: tuple[str, ...], chart: np.ndarray | None = None, bread: np.ndarray | None = None
                       ) -> tuple[np.ndarray, list[str], dict]:
    """Cov(θ̂) = I⁻¹ M I⁻¹ with the cluster-robust meat (:func:`cluster_meat`); arguments as
    :func:`~bayesrank.inference.intervals.sandwich`.

    Returns
    -------
    cov : ndarray
    notes : list of str
        Said when a two-way covariance had negative eigenvalues set to zero.
    info : dict
        As :func:`cluster_meat`, and ``clipped_eigenvalues`` (two-way).
    """
    meat, info = cluster_meat(bound, theta, clusters, names)
    cov = sandwich(meat, observed, chart, bread)
    notes = []
    if len(names) == 2:
        w, V = np.linalg.eigh(cov)
        negative = w < 0
        info["clipped_eigenvalues"] = int(negative.sum())
        if negative.any():
            cov = (V * np.maximum(w, 0.0)) @ V.T
            notes.append(f"the two-way cluster-robust covariance (M_{names[0]} + M_{names[1]} − M_both) had "
                         f"{int(negative.sum())} negative eigenvalue(s), set to zero (Cameron, Gelbach & Miller 2011, "
                         "§2.3): the intervals along those directions rest on the clipped matrix.")
    return cov, notes, info


def clustered_sandwich_factor(bound: Bound, theta: np.ndarray, wald: np.ndarray, clusters: Clusters,
                              names: tuple[str, ...]) -> tuple[np.ndarray, list[str], dict]:
    """F with F Fᵀ = I⁻¹ M I⁻¹ for the cluster-robust meat (:func:`cluster_meat`), on the large-model
    path where no n × n covariance is formed (:func:`~bayesrank.inference.intervals.sandwich_factor`;
    ``wald`` is its U with U Uᵀ = I⁻¹). A meat that is not positive definite is factored through its
    eigen-decomposition with negative eigenvalues set to zero: for two columns, where the meat
    M₁ + M₂ − M₁₂ itself can be indefinite, the fit says so (eigenvalues below −:data:`NEGATIVE`
    of the largest; a semi-definite meat, of fewer clusters than parameters, is not clipped).

    Returns
    -------
    factor : ndarray
    notes : list of str
    info : dict
        As :func:`cluster_meat`.
    """
    computed = {"calls": 0}

    def meat():
        computed["calls"] += 1
        value, computed["info"] = cluster_meat(bound, theta, clusters, names)
        if computed["calls"] > 1 and len(names) == 2:  # its Cholesky factorisation failed: negative eigenvalues?
            w = eigvalsh(value)
            computed["clipped"] = int(np.sum(w < -NEGATIVE * max(w[-1], 0.0)))
        return value

    factor = sandwich_factor(bound, theta, wald, meat=meat)
    notes = []
    if len(names) == 2:
        clipped = computed["info"]["clipped_eigenvalues"] = computed.get("clipped", 0)
        if clipped:
            notes.append(f"the two-way cluster-robust meat (M_{names[0]} + M_{names[1]} − M_both) had {clipped} "
                         "negative eigenvalue(s), set to zero (Cameron, Gelbach & Miller 2011, §2.3): the intervals "
                         "along those directions rest on the clipped matrix.")
    return factor, notes, computed["info"]


def cluster_bootstrap(bound: Bound, theta: np.ndarray, clusters: Clusters, name: str, n_boot: int,
                      rng: np.random.Generator, maxiter: int) -> tuple[np.ndarray, dict]:
    """θ̂ of ``n_boot`` resamples of whole clusters of column ``name`` (the module docstring).

    Returns
    -------
    thetas : ndarray
        ``(n_kept, n_free)``.
    info : dict
        As :func:`~bayesrank.inference.intervals.refits`, and ``n_clusters``.
    """
    cell, code, counts = clusters.grouped(name)
    used, group = np.unique(code, return_inverse=True)
    n_cells = bound.data.n_cells
    uniform = np.full(used.size, 1.0 / used.size)

    def resamples():
        for _ in range(n_boot):
            weight = rng.multinomial(used.size, uniform)[group]
            yield np.column_stack([np.bincount(cell, weight * counts[:, o], n_cells) for o in range(3)])

    thetas, info = refits(bound, theta, resamples(), n_boot, maxiter)
    return thetas, {**info, "n_clusters": {name: int(used.size)}}


def describe(intervals: str, names: tuple[str, ...], n_clusters: dict) -> str:
    """How a clustered interval method is described in a fit (``estimate.attrs["covariance"]``)."""
    counted = ", ".join(f"{n_clusters.get(name, 0):,} clusters of {name!r}" for name in names)
    if intervals == "bootstrap":
        return (f"cluster bootstrap: whole clusters resampled with replacement ({counted}), each replicate "
                "refitted from the MLE (percentile intervals)")
    if len(names) == 1:
        return (f"cluster-robust sandwich I⁻¹ M I⁻¹: the scores summed within each cluster ({counted}) before "
                "their outer products, times G/(G − 1) (CR1)")
    return (f"two-way cluster-robust sandwich I⁻¹ M I⁻¹ (Cameron, Gelbach & Miller 2011): M = M_{names[0]} + "
            f"M_{names[1]} − M_both, each times its G/(G − 1) ({counted}, "
            f"{n_clusters.get(' ∩ '.join(names), 0):,} intersections)")


__all__ = ["FEW_CLUSTERS", "NEGATIVE", "cluster_bootstrap", "cluster_meat", "cluster_names", "cluster_notes",
           "cluster_scores",
           "clustered_sandwich", "clustered_sandwich_factor", "describe", "groups_of", "prepared_clusters"]
