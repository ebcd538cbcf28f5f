"""The one data object every model consumes: aggregated comparison cells.

A *cell* is a unique combination of (item a, item b, judge, position) with counts of
a-wins, b-wins and ties ("both bad" ties are kept in their own column). Likelihoods are
always evaluated on these counts, never per record, which keeps a 1.4M-battle arena at
3455 cells.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import xarray as xr
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from bayesrank.data.aggregate import Cells, cells_from_arrays, id_digest
from bayesrank.data.clusters import Clusters
from bayesrank.errors import DataError

#: Column order of :meth:`Comparisons.counts`.
OUTCOMES = ("win_a", "win_b", "tie")

#: Values of ``Comparisons.first``: which item of the cell was shown first.
FIRST_A, FIRST_B = 0, 1


@dataclass(frozen=True, eq=False)
class Comparisons:
    """Aggregated pairwise comparisons.

    Build one with :meth:`from_cells` (which validates and aggregates) or with the readers
    in :mod:`bayesrank.data.readers`; the dataclass constructor trusts its input.

    Attributes
    ----------
    items : tuple of str
        Names of the compared items (LLMs); indices in ``a`` / ``b`` refer to this tuple.
    a, b : ndarray of int
        Item indices of each cell; ``a != b``.
    wins_a, wins_b, ties, ties_bothbad : ndarray of float
        Counts per cell. ``ties`` are the ties used by the models; ``ties_bothbad`` are the
        "tie (bothbad)" verdicts, kept for the record and counted in ``ties`` only when the
        data were read with ``both_bad_as_ties=True``.
    judges : tuple of str or None
        Judge names when the data carry a judge per record.
    judge : ndarray of int or None
        Judge index of each cell.
    first : ndarray of int or None
        Which item was shown first (``FIRST_A`` = 0 or ``FIRST_B`` = 1) when known.
    covariates : ndarray of float or None
        ``(n_cells, p)`` per-cell context covariates (for example a standardised question
        length), the same whichever item is called "a"; records with different covariate
        values stay in different cells.
    covariate_names : tuple of str
        Names of the covariate columns.
    contrasts : ndarray of float or None
        ``(n_cells, q)`` per-cell *contrasts* (style covariates: a's length minus b's, a
        difference of markdown counts): they change sign when the cell is re-oriented, and
        enter the linear predictor of every framework with a coefficient (style control).
    contrast_names : tuple of str
        Names of the contrast columns.
    period : ndarray of int or None
        Calendar period of each cell (an index into ``periods``) when the records carry a time
        column; records of different periods stay in different cells.
    periods : tuple of str
        Start dates of the periods (ISO 8601, ascending): those with at least one comparison.
    period_unit : str
        ``"day"``, ``"week"`` (starting on Monday) or ``"month"``; empty without periods.
    agreement : DataFrame or None
        For judge records with question ids: the share of identical verdicts of each pair of
        judges on the records they share (columns ``judge_1, judge_2, shared, agreement``;
        :mod:`bayesrank.data.aggregate`).
    dropped : dict
        Comparisons left out while reading, by reason (e.g. ``{"unknown verdict": 12}``).
    source : str
        Where the data came from (a path or a bundled dataset name).
    n_records : int
        Records (rows) read; 0 when unknown (comparisons built in code).
    notes : dict
        Other reading notes with counts (empty cells removed, items left without comparisons,
        names normalised, duplicate records).
    warnings : tuple of str
        How the records were read, in words: names that several spellings became, names that
        only look alike, duplicate records, a local file read instead of a bundled dataset
        (:mod:`bayesrank.data.aggregate`, :mod:`bayesrank.data.names`). Every fit repeats them
        in its warnings.
    clusters : Clusters or None
        For records read with ``cluster=COLUMN``: the comparisons of each cell by cluster
        (user, prompt, judge; :mod:`bayesrank.data.clusters`), which the likelihood never
        reads and the cluster-robust intervals and random effects do.
    record_ids : ndarray of uint64 or None
        The digests of the records' ids (records with an ``id`` column;
        :func:`~bayesrank.data.aggregate.record_ids`), so that an update can refuse records
        already counted (:func:`~bayesrank.data.merge.merge`); None without ids, and for a
        subset of the cells (its records are no longer known).
    reading : dict
        How these cells were read from records: the options (``both_bad_as_ties`` as resolved
        for the records' shape, ``by``, ``drop_duplicates``;
        :class:`~bayesrank.data.aggregate.Cells`), so that later records are read alike, and
        with record ids how they were digested (``id_digest``,
        :func:`~bayesrank.data.aggregate.id_digest`); empty for comparisons constructed from
        arrays directly.
    """

    items: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    wins_a: np.ndarray
    wins_b: np.ndarray
    ties: np.ndarray
    ties_bothbad: np.ndarray
    judges: tuple[str, ...] | None = None
    judge: np.ndarray | None = None
    first: np.ndarray | None = None
    covariates: np.ndarray | None = None
    covariate_names: tuple[str, ...] = ()
    contrasts: np.ndarray | None = None
    contrast_names: tuple[str, ...] = ()
    period: np.ndarray | None = None
    periods: tuple[str, ...] = ()
    period_unit: str = ""
    agreement: pd.DataFrame | None = None
    dropped: Mapping[str, int] = field(default_factory=dict)
    source: str = ""
    n_records: int = 0
    notes: Mapping[str, int] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    clusters: Clusters | None = None
    record_ids: np.ndarray | None = None
    reading: Mapping[str, object] = field(default_factory=dict)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_cells(
        cls,
        item_a: Sequence,
        item_b: Sequence,
        wins_a: Sequence,
        wins_b: Sequence,
        ties: Sequence | None = None,
        ties_bothbad: Sequence | None = None,
        *,
        judge: Sequence | None = None,
        first: Sequence | None = None,
        covariates: Mapping[str, Sequence] | None = None,
        contrasts: Mapping[str, Sequence] | None = None,
        items: Sequence[str] | None = None,
        both_bad_as_ties: bool | None = None,
        dropped: Mapping[str, int] | None = None,
        source: str = "",
        what: str = "row",
    ) -> Comparisons:
        """Validate per-row counts, canonicalise and aggregate them into cells.

        The rows go through the same typing and validation rules as records read from a file
        (:mod:`bayesrank.data.aggregate`).

        Parameters
        ----------
        item_a, item_b : sequence of str
            Item names per row (numbers are written as text by the documented rule).
        wins_a, wins_b, ties, ties_bothbad : sequence of numbers
            Counts per row (``ties`` / ``ties_bothbad`` default to zero).
        judge : sequence of str, optional
            Judge name per row.
        first : sequence of {0, 1}, optional
            Which item of the row was shown first (0: ``item_a``, 1: ``item_b``).
        covariates : mapping of str to sequence of float, optional
            Context covariates per row (name → values); they do not change sign when a row
            is flipped onto the canonical orientation.
        contrasts : mapping of str to sequence of float, optional
            Style covariates per row, as ``item_a``'s value minus ``item_b``'s (name →
            values); they change sign when a row is flipped onto the canonical orientation.
            Rows with identical (pair, judge, position, covariates, contrasts) are aggregated.
        items : sequence of str, optional
            Item order to use (default: sorted names).
        both_bad_as_ties : bool, optional
            Count "both bad" ties as ties (default None: these are counts, whose both-bad ties
            are left out, the leaderbot paper's convention: :mod:`bayesrank.data.bothbad`).
        dropped : dict, optional
            Comparisons already left out by the caller, carried into the summary.
        source : str
            Provenance shown in summaries and errors.
        what : str
            How a row is called in error messages ("record", "row", "pair").

        Raises
        ------
        DataError
            Missing names, self-comparisons, NaN / negative / non-integer / boolean / too
            large counts, or no data.
        """
        columns = {"model_a": item_a, "model_b": item_b, "wins_a": wins_a, "wins_b": wins_b, "ties": ties,
                   "ties_bothbad": ties_bothbad, "judge": judge, "first": first}
        clash = [c for c in [*(covariates or {}), *(contrasts or {})] if c in columns]
        if clash:
            raise DataError(f"covariate or contrast name(s) {clash} clash with the count columns; rename them.")
        both = set(covariates or {}) & set(contrasts or {})
        if both:
            raise DataError(f"{sorted(both)} given as both covariates and contrasts; pass each column once.")
        extra = {**(covariates or {}), **(contrasts or {})}
        lengths = {k: len(v) for k, v in {**columns, **extra}.items() if v is not None}
        if len(set(lengths.values())) > 1:
            raise DataError(f"the per-row arrays differ in length ({lengths}); pass one value per row in each.")
        cells = cells_from_arrays({**columns, **extra}, both_bad_as_ties=both_bad_as_ties,
                                  covariates=list(covariates or ()), contrasts=list(contrasts or ()),
                                  source=source, what=what)
        return cls.from_aggregate(cells, items=items, dropped=dropped, source=source, what=what)

    @classmethod
    def from_aggregate(cls, cells: Cells, *, items: Sequence[str] | None = None,
                       dropped: Mapping[str, int] | None = None, source: str = "", what: str = "row") -> Comparisons:
        """Comparisons from records aggregated by :func:`bayesrank.data.aggregate.aggregate`:
        item and judge indices, canonical orientation (lower index is "a"), empty cells removed."""
        frame = cells.frame
        where = f" in {source}" if source else ""
        names_a = frame["model_a"].to_numpy(dtype=object)
        names_b = frame["model_b"].to_numpy(dtype=object)
        present_names = sorted(set(names_a) | set(names_b))
        if items is None:
            items = present_names
        items = tuple(str(x) for x in items)
        index = {name: k for k, name in enumerate(items)}
        unknown = [x for x in present_names if x not in index]
        if unknown:
            raise DataError(f"items {unknown[:5]}{where} are not in the given item list.")
        ia = np.array([index[x] for x in names_a], dtype=np.int64)
        ib = np.array([index[x] for x in names_b], dtype=np.int64)
        flip = ia > ib
        keys = {"a": np.where(flip, ib, ia), "b": np.where(flip, ia, ib)}
        judges = None
        if "judge" in frame:
            judges = tuple(sorted(set(frame["judge"])))
            jindex = {name: k for k, name in enumerate(judges)}
            keys["judge"] = np.array([jindex[x] for x in frame["judge"]], dtype=np.int64)
        if "first" in frame:
            f = frame["first"].to_numpy(dtype=np.int64)
            keys["first"] = np.where(flip, 1 - f, f)
        periods = ()
        if "period" in frame:
            periods = tuple(sorted(set(frame["period"])))
            keys["period"] = np.searchsorted(np.asarray(periods, dtype=object), frame["period"].to_numpy(dtype=object))
        names = tuple(c.removeprefix("covariate:") for c in frame.columns if c.startswith("covariate:"))
        for name in names:
            keys[f"covariate:{name}"] = frame[f"covariate:{name}"].to_numpy(dtype=float)
        contrast_names = tuple(c.removeprefix("contrast:") for c in frame.columns if c.startswith("contrast:"))
        for name in contrast_names:  # a's value minus b's: the sign follows the orientation
            keys[f"contrast:{name}"] = np.where(flip, -1.0, 1.0) * frame[f"contrast:{name}"].to_numpy(dtype=float)
        wa, wb = frame["wins_a"].to_numpy(float), frame["wins_b"].to_numpy(float)
        cols = {"wins_a": np.where(flip, wb, wa), "wins_b": np.where(flip, wa, wb),
                "ties": frame["ties"].to_numpy(float), "ties_bothbad": frame["ties_bothbad"].to_numpy(float)}
        table = pd.DataFrame({**keys, **cols}).groupby(list(keys), sort=True, as_index=False).sum()
        used = table[["wins_a", "wins_b", "ties"]].sum(axis=1) > 0
        notes = dict(cells.notes)
        n_empty = int((~used).sum())
        if n_empty:
            notes["cells with no win, loss or tie (only both-bad ties)"] = n_empty
        table = table[used]
        if table.empty:
            raise DataError(f"no wins, losses or ties{where}: every {what} has zero counts.")
        clusters = None if cells.clusters is None else _renumbered(cells.clusters, frame, keys, flip, used.to_numpy())
        present = np.union1d(table["a"], table["b"])
        if present.size < len(items):
            notes["items with no comparison left"] = int(len(items) - present.size)
            remap = -np.ones(len(items), dtype=np.int64)
            remap[present] = np.arange(present.size)
            table = table.assign(a=remap[table["a"]], b=remap[table["b"]])
            items = tuple(items[k] for k in present)
        out = cls._from_cell_table(table.reset_index(drop=True), items, judges, names,
                                   {**dict(dropped or {}), **cells.dropped}, source,
                                   contrast_names)
        if periods:
            out = replace(out, periods=periods, period_unit=cells.period_unit)
        return replace(out, agreement=cells.agreement, n_records=cells.records, notes=notes,
                       warnings=tuple(cells.warnings), clusters=clusters, record_ids=cells.ids,
                       reading={**cells.reading, **({} if cells.ids is None else {"id_digest": id_digest()})})

    @classmethod
    def _from_cell_table(cls, cells: pd.DataFrame, items, judges, covariate_names, dropped, source,
                         contrast_names=()) -> Comparisons:
        """Build from an aggregated cell DataFrame (columns a, b, counts, optional judge/first
        and ``covariate:<name>``)."""
        covariates = None
        if covariate_names:
            covariates = cells[[f"covariate:{c}" for c in covariate_names]].to_numpy(float)
        contrasts = None
        if contrast_names:
            contrasts = cells[[f"contrast:{c}" for c in contrast_names]].to_numpy(float)
        return cls(
            items=tuple(items),
            a=cells["a"].to_numpy(np.int64),
            b=cells["b"].to_numpy(np.int64),
            wins_a=cells["wins_a"].to_numpy(float),
            wins_b=cells["wins_b"].to_numpy(float),
            ties=cells["ties"].to_numpy(float),
            ties_bothbad=cells["ties_bothbad"].to_numpy(float),
            judges=judges,
            judge=cells["judge"].to_numpy(np.int64) if "judge" in cells else None,
            first=cells["first"].to_numpy(np.int64) if "first" in cells else None,
            period=cells["period"].to_numpy(np.int64) if "period" in cells else None,
            covariates=covariates,
            covariate_names=tuple(covariate_names),
            contrasts=contrasts,
            contrast_names=tuple(contrast_names),
            dropped=dropped,
            source=source,
        )

    # ------------------------------------------------------------------ sizes
    @property
    def n_items(self) -> int:
        """Number of compared items."""
        return len(self.items)

    @property
    def n_cells(self) -> int:
        """Number of aggregated cells."""
        return int(self.a.size)

    @property
    def n_judges(self) -> int:
        """Number of judges (0 when the data have no judge column)."""
        return 0 if self.judges is None else len(self.judges)

    @property
    def totals(self) -> np.ndarray:
        """Comparisons per cell (wins + losses + ties; both-bad excluded)."""
        return self.wins_a + self.wins_b + self.ties

    @property
    def n_comparisons(self) -> float:
        """Total number of comparisons the models see."""
        return float(self.totals.sum())

    def counts(self) -> np.ndarray:
        """Counts as an ``(n_cells, 3)`` array with columns :data:`bayesrank.data.comparisons.OUTCOMES`."""
        return np.column_stack([self.wins_a, self.wins_b, self.ties])

    # ------------------------------------------------------------------ views
    def subset(self, mask: np.ndarray) -> Comparisons:
        """Cells selected by a boolean mask or index array (items and judges kept)."""
        sel = np.asarray(mask)
        return replace(
            self,
            a=self.a[sel],
            b=self.b[sel],
            wins_a=self.wins_a[sel],
            wins_b=self.wins_b[sel],
            ties=self.ties[sel],
            ties_bothbad=self.ties_bothbad[sel],
            judge=None if self.judge is None else self.judge[sel],
            first=None if self.first is None else self.first[sel],
            period=None if self.period is None else self.period[sel],
            covariates=None if self.covariates is None else self.covariates[sel],
            contrasts=None if self.contrasts is None else self.contrasts[sel],
            clusters=None if self.clusters is None else self.clusters.subset(sel, self.n_cells),
            record_ids=None,
        )

    def without_ties(self) -> Comparisons:
        """The same cells with ties set to zero (cells left empty are removed).

        Raises
        ------
        DataError
            When every comparison is a tie.
        """
        out = replace(self, ties=np.zeros_like(self.ties), clusters=None if self.clusters is None else
                      self.clusters.with_counts(self.clusters.counts * [1.0, 1.0, 0.0]))
        out = out.subset(out.totals > 0)
        if out.n_cells == 0:
            raise DataError("every comparison is a tie: nothing is left once ties are dropped.")
        return out

    def without_judges(self, names) -> Comparisons:
        """The data without the comparisons of the named judges (judge list re-indexed).

        Parameters
        ----------
        names : str or iterable of str
            Judges to remove, spelled as in :attr:`judges`.

        Raises
        ------
        DataError
            A name that is not a judge of the data (the valid judges are listed: a misspelt
            judge would otherwise be kept silently), judges asked for on data without judges,
            or no comparison left.
        """
        names = [names] if isinstance(names, str) else [str(n) for n in names]
        if not names:
            return self
        if self.judges is None:
            raise DataError(f"the data have no judges, so judges {names} cannot be removed; read records with a "
                            "judge column to have judges.")
        unknown = [n for n in names if n not in self.judges]
        if unknown:
            verb = "is not a judge" if len(unknown) == 1 else "are not judges"
            raise DataError(f"{', '.join(map(repr, unknown))} {verb}"
                            f" of the data; the judges are {', '.join(map(repr, self.judges))}.")
        drop = {self.judges.index(n) for n in names}
        keep = [k for k in range(self.n_judges) if k not in drop]
        remap = -np.ones(self.n_judges, dtype=np.int64)
        remap[keep] = np.arange(len(keep))
        sub = self.subset(np.isin(self.judge, keep))
        if sub.n_cells == 0:
            raise DataError("no comparisons are left after removing the judges.")
        return replace(sub, judges=tuple(self.judges[k] for k in keep), judge=remap[sub.judge])

    def cells_digest(self) -> str:
        """A digest of what a model sees: the item and judge names, every cell's indices,
        position, covariates, contrasts and counts — not where the data came from or how they
        were read. Two comparisons with one digest give one fit; a saved fit checked against
        new data compares digests (``bayesrank gars --fit``)."""
        h = hashlib.sha256()
        h.update(json.dumps([list(self.items), list(self.judges or []), list(self.covariate_names),
                             list(self.contrast_names)]).encode())
        for name in ("a", "b", "judge", "first"):
            value = getattr(self, name)
            h.update(name.encode() + (b"-" if value is None else np.asarray(value, dtype=np.int64).tobytes()))
        for name in ("wins_a", "wins_b", "ties", "ties_bothbad", "covariates", "contrasts"):
            value = getattr(self, name)
            h.update(name.encode() + (b"-" if value is None else np.asarray(value, dtype=np.float64).tobytes()))
        return h.hexdigest()

    def ties_as_halves(self) -> Comparisons:
        """The same cells with each tie counted as half a win for both sides (the Chatbot Arena
        convention: a pseudo-likelihood for models without a tie outcome)."""
        half = self.ties / 2
        clusters = self.clusters
        if clusters is not None:
            w, l, t = clusters.counts.T
            clusters = clusters.with_counts(np.column_stack([w + t / 2, l + t / 2, 0 * t]))
        return replace(self, wins_a=self.wins_a + half, wins_b=self.wins_b + half, ties=0 * half, clusters=clusters)

    def split(self, test_fraction: float = 0.1, random_seed: int = 0) -> tuple[Comparisons, Comparisons]:
        """Random split of the cells into a training and a test set.

        The leaderbot paper's protocol (``lb.data.split``): shuffle the cell indices with
        NumPy's legacy generator seeded by ``random_seed`` and keep the first
        ``int(n * (1 - test_fraction))`` for training, so ``random_seed=20`` reproduces the paper's
        3109 / 346 split of the arena pairs.

        Raises
        ------
        DataError
            A fraction outside (0, 1), or one that leaves no cell to train on.
        """
        if not 0 < test_fraction < 1:
            raise DataError(f"test_fraction must be in (0, 1), got {test_fraction}.")
        order = np.random.RandomState(random_seed).permutation(self.n_cells)
        n_train = int(self.n_cells * (1 - test_fraction))
        if n_train == 0:   # (a fraction above 0 always leaves a cell to test on)
            raise DataError(f"test_fraction={test_fraction:g} of {self.n_cells} cells leaves no cell to train on; "
                            f"choose a fraction of at most {1 - 1 / self.n_cells:.3g} here.")
        return self.subset(np.sort(order[:n_train])), self.subset(np.sort(order[n_train:]))

    def to_frame(self) -> pd.DataFrame:
        """Tidy table of the cells with item (and judge) names."""
        names = np.asarray(self.items, dtype=object)
        frame = pd.DataFrame({"model_a": names[self.a], "model_b": names[self.b]})
        if self.judge is not None:
            frame["judge"] = np.asarray(self.judges, dtype=object)[self.judge]
        if self.first is not None:
            frame["first"] = np.where(self.first == FIRST_A, "a", "b")
        if self.period is not None:
            frame["period"] = np.asarray(self.periods, dtype=object)[self.period]
        for k, name in enumerate(self.covariate_names):
            frame[name] = self.covariates[:, k]
        for k, name in enumerate(self.contrast_names):
            frame[name] = self.contrasts[:, k]
        frame["wins_a"] = self.wins_a
        frame["wins_b"] = self.wins_b
        frame["ties"] = self.ties
        frame["ties_bothbad"] = self.ties_bothbad
        return frame

    def to_xarray(self) -> xr.Dataset:
        """The comparisons as an xarray Dataset (saved with every fit; :meth:`from_xarray`)."""
        cells = {"a": self.a, "b": self.b}
        if self.judge is not None:
            cells["judge"] = self.judge
        if self.first is not None:
            cells["first"] = self.first
        if self.period is not None:
            cells["period"] = self.period
        ds = xr.Dataset(
            {**{k: ("data_cell", v) for k, v in cells.items()},
             "counts": (("data_cell", "outcome"), self.counts()),
             "ties_bothbad": ("data_cell", self.ties_bothbad)},
            coords={"outcome": list(OUTCOMES), "item": list(self.items)},
            attrs={"dropped": json.dumps(dict(self.dropped)), "source": self.source,
                   "n_records": int(self.n_records), "notes": json.dumps(dict(self.notes)),
                   "warnings": json.dumps(list(self.warnings)),
                   "reading": json.dumps(dict(self.reading), sort_keys=True)},
        )
        if self.record_ids is not None:
            ds["record_id"] = ("record", np.asarray(self.record_ids, dtype=np.uint64))
        if self.covariates is not None:
            ds["covariates"] = (("data_cell", "covariate"), self.covariates)
            ds = ds.assign_coords(covariate=list(self.covariate_names))
        if self.contrasts is not None:
            ds["contrasts"] = (("data_cell", "contrast"), self.contrasts)
            ds = ds.assign_coords(contrast=list(self.contrast_names))
        if self.judges is not None:
            ds = ds.assign_coords(judge_name=list(self.judges))
        if self.period is not None:
            ds = ds.assign_coords(period_start=list(self.periods))
            ds.attrs["period_unit"] = self.period_unit
        if self.agreement is not None:
            for col in self.agreement.columns:
                ds[f"agreement_{col}"] = ("judge_pair", self.agreement[col].to_numpy())
        if self.clusters is not None:
            ds = ds.assign(self.clusters.to_xarray()).assign_coords(cluster_column=list(self.clusters.names))
        return ds

    @classmethod
    def from_xarray(cls, ds: xr.Dataset) -> Comparisons:
        """Rebuild comparisons from :meth:`to_xarray` output, exactly."""
        counts = ds["counts"].values
        agreement = None
        if "agreement_judge_1" in ds:
            agreement = pd.DataFrame({col: ds[f"agreement_{col}"].values
                                      for col in ("judge_1", "judge_2", "shared", "agreement")})
            agreement["judge_1"] = agreement["judge_1"].astype(str)
            agreement["judge_2"] = agreement["judge_2"].astype(str)
        return cls(
            items=tuple(str(x) for x in ds["item"].values),
            a=ds["a"].values.astype(np.int64),
            b=ds["b"].values.astype(np.int64),
            wins_a=counts[:, 0], wins_b=counts[:, 1], ties=counts[:, 2],
            ties_bothbad=ds["ties_bothbad"].values,
            judges=tuple(str(x) for x in ds["judge_name"].values) if "judge_name" in ds.coords else None,
            judge=ds["judge"].values.astype(np.int64) if "judge" in ds else None,
            first=ds["first"].values.astype(np.int64) if "first" in ds else None,
            period=ds["period"].values.astype(np.int64) if "period" in ds else None,
            periods=tuple(str(x) for x in ds["period_start"].values) if "period_start" in ds.coords else (),
            period_unit=str(ds.attrs.get("period_unit", "")),
            covariates=ds["covariates"].values.astype(float) if "covariates" in ds else None,
            covariate_names=tuple(str(x) for x in ds["covariate"].values) if "covariate" in ds.coords else (),
            contrasts=ds["contrasts"].values.astype(float) if "contrasts" in ds else None,
            contrast_names=tuple(str(x) for x in ds["contrast"].values) if "contrast" in ds.coords else (),
            agreement=agreement,
            dropped=json.loads(ds.attrs.get("dropped", "{}")),
            source=ds.attrs.get("source", ""),
            n_records=int(ds.attrs.get("n_records", 0)),
            notes=json.loads(ds.attrs.get("notes", "{}")),
            record_ids=ds["record_id"].values.astype(np.uint64) if "record_id" in ds else None,
            reading=json.loads(ds.attrs.get("reading", "{}")),
            warnings=tuple(json.loads(ds.attrs.get("warnings", "[]"))),
            clusters=Clusters.from_xarray(ds),
        )

    # ------------------------------------------------------------------ per item
    def item_totals(self) -> pd.DataFrame:
        """Per item: comparisons, wins, losses and ties."""
        m = self.n_items
        wins = np.bincount(self.a, self.wins_a, m) + np.bincount(self.b, self.wins_b, m)
        losses = np.bincount(self.a, self.wins_b, m) + np.bincount(self.b, self.wins_a, m)
        ties = np.bincount(self.a, self.ties, m) + np.bincount(self.b, self.ties, m)
        return pd.DataFrame(
            {"n_comparisons": wins + losses + ties, "wins": wins, "losses": losses, "ties": ties},
            index=pd.Index(self.items, name="name"),
        )

    def components(self) -> list[list[str]]:
        """Connected components of the comparison graph, largest first."""
        m = self.n_items
        adj = coo_matrix((np.ones(self.n_cells), (self.a, self.b)), shape=(m, m))
        n, labels = connected_components(adj, directed=False)
        groups = [[self.items[k] for k in np.flatnonzero(labels == c)] for c in range(n)]
        return sorted(groups, key=len, reverse=True)

    def summary(self) -> dict:
        """Sizes and reading notes, as shown by ``bayesrank datasets`` and fit reports."""
        out = {
            "source": self.source,
            "n_items": self.n_items,
            "n_cells": self.n_cells,
            "n_pairs": int(np.unique(self.a * self.n_items + self.b).size),
            "n_comparisons": self.n_comparisons,
            "wins_a": float(self.wins_a.sum()),
            "wins_b": float(self.wins_b.sum()),
            "ties": float(self.ties.sum()),
            "ties_bothbad": float(self.ties_bothbad.sum()),
        }
        if self.judges is not None:
            out["n_judges"] = self.n_judges
        if self.covariate_names:
            out["covariates"] = list(self.covariate_names)
        if self.contrast_names:
            out["contrasts"] = list(self.contrast_names)
        if self.period is not None:
            out["periods"] = {"unit": self.period_unit, "n_periods": len(self.periods), "first": self.periods[0],
                              "last": self.periods[-1]}
        if self.clusters is not None:
            out["clusters"] = self.clusters.n_clusters()
        out["accounting"] = self.accounting()
        return out

    def accounting(self) -> dict:
        """What was read, what was left out and why, and what the models see.

        Returns
        -------
        dict
            ``records_read`` (records or rows in the input; None when the comparisons were
            built in code), ``comparisons_read``, ``dropped`` (reason → comparisons left out:
            unknown verdicts, both-bad ties not counted as ties), ``comparisons_used`` and
            ``notes`` (reason → count: empty cells, items left without comparisons, names
            stripped of surrounding whitespace).
        """
        dropped = {str(k): int(v) for k, v in self.dropped.items()}
        used = int(self.n_comparisons)
        return {"records_read": int(self.n_records) or None, "comparisons_read": used + sum(dropped.values()),
                "dropped": dropped, "comparisons_used": used, "notes": {str(k): int(v) for k, v in self.notes.items()}}

    def __repr__(self) -> str:
        judges = f", {self.n_judges} judges" if self.judges is not None else ""
        if self.clusters is not None:
            judges += "".join(f", {g:,} clusters of {name!r}" for name, g in self.clusters.n_clusters().items())
        return (
            f"Comparisons({self.n_items} items{judges}, {self.n_cells} cells, "
            f"{self.n_comparisons:,.0f} comparisons{', ' + self.source if self.source else ''})"
        )




def _renumbered(clusters: Clusters, frame: pd.DataFrame, keys: dict, flip: np.ndarray, used: np.ndarray) -> Clusters:
    """The cluster rows of :meth:`Comparisons.from_aggregate`'s cells: each row's cell number
    (``frame["_cell"]``, the aggregation's) as the index of its cell, the counts of a re-oriented
    cell swapped as the cell's are, rows of cells left out (no win, loss or tie) dropped, rows of
    one cell and cluster added up (the aggregation gives one row per record), sorted by cell and
    cluster; every column checked (:meth:`Clusters.check`)."""
    order = pd.DataFrame(keys).groupby(list(keys), sort=True).ngroup().to_numpy(np.int64)  # frame row -> cell
    sql = frame["_cell"].to_numpy(np.int64)
    final = np.where(used[order], (np.cumsum(used) - 1)[order], -1)   # frame row -> index of its cell, or -1
    cell_of, flipped = np.full(sql.max() + 1, -1, dtype=np.int64), np.zeros(sql.max() + 1, dtype=bool)
    cell_of[sql], flipped[sql] = final, flip
    cell = cell_of[clusters.cell]
    keep = np.flatnonzero(cell >= 0)
    keep = keep[_by_cell_and_cluster(cell[keep], clusters.codes[keep], [len(level) for level in clusters.levels])]
    cell, codes, counts = cell[keep], clusters.codes[keep], clusters.counts[keep]
    swap = flipped[clusters.cell[keep]]
    counts[swap] = counts[swap][:, [1, 0, 2]]
    first = np.flatnonzero(np.concatenate([[True], (cell[1:] != cell[:-1]) | (codes[1:] != codes[:-1]).any(axis=1)]))
    if first.size < cell.size:
        cell, codes, counts = cell[first], codes[first], np.add.reduceat(counts, first, axis=0)
    out = replace(clusters, cell=cell, codes=codes, counts=counts)
    for name in out.names:
        out.check(name)
    return out


def _by_cell_and_cluster(cell: np.ndarray, codes: np.ndarray, sizes: list[int]) -> np.ndarray:
    """The order of rows by cell, then cluster code(s) (rows that share both are added up after).
    Sorted as one integer key (mixed radix) when it fits in 63 bits, which is several times
    faster than a sort on several keys; else by :func:`numpy.lexsort`."""
    if (int(cell.max(initial=0)) + 1) * int(np.prod(sizes, dtype=object)) < 2**62:
        key = cell.astype(np.int64)
        for k, size in enumerate(sizes):
            key = key * size + codes[:, k]
        return np.argsort(key)
    return np.lexsort((*codes.T[::-1], cell))


__all__ = ["Comparisons", "OUTCOMES"]
