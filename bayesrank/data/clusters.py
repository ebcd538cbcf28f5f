"""Which cluster each comparison came from: the records' user, prompt, conversation or judge.

Votes are not independent when one user casts many of them, one prompt is judged by many
pairs or one judge model gives thousands of verdicts. Records read with ``cluster=COLUMN``
(:func:`bayesrank.load`; CLI ``--cluster COLUMN``) keep that identity: they are aggregated by
cell × cluster, and :class:`Clusters` holds those rows beside the cells of
:class:`~bayesrank.data.comparisons.Comparisons` — far fewer rows than records (a user's
votes on one pair of one position are one row), and a companion the likelihood never reads
(it sums over the cells). The cluster-robust intervals read it
(:mod:`bayesrank.inference.clustered`), and so do the random effects
(:class:`~bayesrank.model.random_effects.RandomEffects`).

Invariant: the rows of a cell add up to the cell's counts. Every method of
:class:`~bayesrank.data.comparisons.Comparisons` that changes counts (ties as halves, ties
dropped, reweighting, a subset of the cells) changes the rows the same way, and
:meth:`Clusters.agrees_with` checks it where the rows are used.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import xarray as xr

from bayesrank.errors import DataError, column_names

#: Most cluster columns at once: one-way or two-way clustering (Cameron, Gelbach & Miller 2011).
MAX_COLUMNS = 2


def cluster_columns(cluster, what: str = "cluster") -> tuple[str, ...]:
    """``cluster=`` as a tuple of column names: a name, or one or two names.

    Raises
    ------
    DataError
        More than :data:`MAX_COLUMNS` columns, a column named twice, or a name that is not text.
    """
    names = column_names(cluster, what)
    if len(names) > MAX_COLUMNS:
        raise DataError(f"{what}= takes one column (one-way clustering) or two (two-way), got {len(names)}: "
                        f"{', '.join(names)}.")
    return names


@dataclass(frozen=True, eq=False)
class Clusters:
    """The comparisons of each cell by cluster (see the module docstring).

    Attributes
    ----------
    names : tuple of str
        The cluster columns (one, or two for two-way clustering).
    levels : tuple of tuple of str
        Each column's cluster labels, sorted; ``codes`` index them.
    cell : ndarray of int
        ``(n_rows,)`` the cell of each row.
    codes : ndarray of int
        ``(n_rows, len(names))`` the row's cluster in each column.
    counts : ndarray of float
        ``(n_rows, 3)`` a wins, b wins and ties of the row's comparisons, as the cells count
        them.
    """

    names: tuple[str, ...]
    levels: tuple[tuple[str, ...], ...]
    cell: np.ndarray
    codes: np.ndarray
    counts: np.ndarray

    # ------------------------------------------------------------------ sizes
    @property
    def n_rows(self) -> int:
        return int(self.cell.size)

    def n_clusters(self) -> dict[str, int]:
        """Clusters per column (name → count of labels that hold a comparison)."""
        return {name: int(np.count_nonzero(self.per_cluster(name))) for name in self.names}

    def index(self, name: str) -> int:
        """The position of column ``name``.

        Raises
        ------
        DataError
            When the data were not read with that cluster column.
        """
        if name not in self.names:
            raise DataError(f"the data were read with cluster column(s) {', '.join(map(repr, self.names))}, not "
                            f"{name!r}; read them again with cluster={name!r} (CLI: --cluster {name}).")
        return self.names.index(name)

    def per_cluster(self, name: str) -> np.ndarray:
        """Comparisons of each cluster of column ``name``."""
        k = self.index(name)
        return np.bincount(self.codes[:, k], self.counts.sum(axis=1), len(self.levels[k]))

    # ------------------------------------------------------------------ the invariant
    def cell_counts(self, n_cells: int) -> np.ndarray:
        """``(n_cells, 3)``: the rows added up per cell."""
        return np.column_stack([np.bincount(self.cell, self.counts[:, o], n_cells) for o in range(3)])

    def agrees_with(self, counts: np.ndarray) -> bool:
        """Whether the rows add up to ``counts`` ``(n_cells, 3)``, cell by cell."""
        return bool(np.allclose(self.cell_counts(len(counts)), counts, rtol=1e-12, atol=1e-9))

    # ------------------------------------------------------------------ the changes of Comparisons
    def subset(self, selection, n_cells: int) -> Clusters:
        """The rows of the cells ``selection`` (a boolean mask or indices of ``n_cells`` cells),
        renumbered as those cells are."""
        picked = np.arange(n_cells)[np.asarray(selection)]
        position = np.full(n_cells, -1, dtype=np.int64)
        position[picked] = np.arange(picked.size)
        keep = position[self.cell] >= 0
        return replace(self, cell=position[self.cell[keep]], codes=self.codes[keep], counts=self.counts[keep])

    def with_counts(self, counts: np.ndarray) -> Clusters:
        """The same rows with other counts (rows left without a comparison are removed)."""
        counts = np.asarray(counts, dtype=float)
        keep = counts.sum(axis=1) > 0
        return replace(self, cell=self.cell[keep], codes=self.codes[keep], counts=counts[keep])

    def scaled(self, weights: np.ndarray) -> Clusters:
        """Every row's counts times its cell's weight (reweighted cells)."""
        return self.with_counts(self.counts * np.asarray(weights, dtype=float)[self.cell, None])

    def grouped(self, name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The rows added up by (cell, cluster of column ``name``): ``(cell, code, counts)``,
        sorted by cell then cluster (a two-way row set seen by one of its columns)."""
        k = self.index(name)
        n_codes = len(self.levels[k])
        key = self.cell * n_codes + self.codes[:, k]
        unique, inverse = np.unique(key, return_inverse=True)
        counts = np.column_stack([np.bincount(inverse, self.counts[:, o], unique.size) for o in range(3)])
        return unique // n_codes, unique % n_codes, counts

    # ------------------------------------------------------------------ what the rows say
    def check(self, name: str) -> list[str]:
        """What the rows of column ``name`` say about clustering by it, in words.

        Returns
        -------
        list of str
            A sentence when every cluster holds a single comparison (clustering is then the
            per-comparison sandwich: check the column); empty otherwise.

        Raises
        ------
        DataError
            When fewer than two clusters hold a comparison: nothing varies between clusters.
        """
        sizes = self.per_cluster(name)
        sizes = sizes[sizes > 0]
        if sizes.size < 2:
            label = self.levels[self.index(name)][int(np.argmax(self.per_cluster(name)))] if sizes.size else ""
            raise DataError(f"cluster column {name!r} has a single cluster ({label!r}) holding every comparison: "
                            "intervals that allow for dependence within clusters need at least two (and are "
                            "reliable only with many); check the column, or leave cluster= out.")
        if np.all(sizes == 1):
            return [f"every cluster of {name!r} holds a single comparison ({sizes.size:,} clusters), so clustering "
                    "by it changes nothing: the intervals are the per-comparison ones. Check that it is the "
                    "column you meant (a user, prompt or judge identifier)."]
        return []

    # ------------------------------------------------------------------ persistence
    def to_xarray(self) -> dict[str, tuple]:
        """Variables for :meth:`Comparisons.to_xarray`: the rows (dim ``cluster_row``) and each
        column's labels (dim ``cluster_level_<k>``)."""
        out = {"cluster_cell": ("cluster_row", self.cell),
               "cluster_codes": (("cluster_row", "cluster_column"), self.codes),
               "cluster_counts": (("cluster_row", "outcome"), self.counts)}
        for k, level in enumerate(self.levels):
            out[f"cluster_level_{k}"] = (f"cluster_level_{k}", np.asarray(level, dtype=object).astype(str))
        return out

    @classmethod
    def from_xarray(cls, ds: xr.Dataset) -> Clusters | None:
        """The rows stored by :meth:`to_xarray` (None when there are none)."""
        if "cluster_cell" not in ds:
            return None
        names = tuple(str(x) for x in ds["cluster_column"].values)
        levels = tuple(tuple(ds[f"cluster_level_{k}"].values.astype(str).tolist()) for k in range(len(names)))
        return cls(names, levels, ds["cluster_cell"].values.astype(np.int64),
                   ds["cluster_codes"].values.astype(np.int64), ds["cluster_counts"].values.astype(float))

    def to_frame(self) -> pd.DataFrame:
        """The rows as a table: ``cell``, one column of labels per cluster column, the counts."""
        frame = pd.DataFrame({"cell": self.cell})
        for k, name in enumerate(self.names):
            frame[name] = np.asarray(self.levels[k], dtype=object)[self.codes[:, k]]
        for o, col in enumerate(("wins_a", "wins_b", "ties")):
            frame[col] = self.counts[:, o]
        return frame


__all__ = ["MAX_COLUMNS", "Clusters", "cluster_columns"]
