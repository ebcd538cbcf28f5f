"""The single entry point from anything a user has to :class:`~bayesrank.data.comparisons.Comparisons`."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path

import pandas as pd

from bayesrank.data.bundled import DATASETS, dataset_path
from bayesrank.data.clusters import cluster_columns
from bayesrank.data.comparisons import Comparisons
from bayesrank.data.files import read
from bayesrank.data.records import from_count_table, from_frame
from bayesrank.errors import DataError, options_checked

#: Libraries whose tables :func:`load` reads as records (through DuckDB).
TABLE_MODULES = ("pandas", "polars", "pyarrow", "duckdb", "_duckdb")


@options_checked
def load_dataset(name: str, *, both_bad_as_ties: bool | None = None, cluster: Sequence[str] | str = ()) -> Comparisons:
    """Load a bundled dataset by name.

    Parameters
    ----------
    name : str
        One of :data:`~bayesrank.data.bundled.DATASETS` (``bayesrank datasets`` lists them).
    both_bad_as_ties : bool, optional
        For arena data: count "tie (bothbad)" as ties. Default None: the dataset's own option
        (:attr:`~bayesrank.data.bundled.BundledDataset.both_bad_as_ties`; ``arena-2024`` keeps the
        leaderbot paper's convention: 129 models, 3455 pairs, 1,374,996 comparisons). Judge data
        have no both-bad ties.
    cluster : str or sequence of str
        For a dataset of records (``mtbench-judges``): one or two record columns naming each
        comparison's cluster (``judge_model``, ``question_id``), kept per cell
        (:mod:`bayesrank.data.clusters`).

    Returns
    -------
    Comparisons
    """
    path = dataset_path(name)
    with resources.as_file(path) as file:
        data = read(file, DATASETS[name].format,
                    both_bad_as_ties=DATASETS[name].both_bad_as_ties if both_bad_as_ties is None else both_bad_as_ties,
                    cluster=cluster_columns(cluster))
    return replace(data, source=name)


@options_checked
def load(
    data, *, format: str | None = None, both_bad_as_ties: bool | None = None, covariates: Sequence[str] = (),
    contrasts: Sequence[str] = (), by: str | None = None, cluster: Sequence[str] | str = (),
    drop_duplicates: bool = False, time_column: str | None = None, period: str = "week",
) -> Comparisons:
    """Turn anything the API or CLI accepts into :class:`Comparisons`.

    Parameters
    ----------
    data : Comparisons, table, mapping, str or Path
        A :class:`Comparisons` is returned as is; a pandas, Polars or PyArrow table or a
        DuckDB relation goes to :func:`~bayesrank.data.records.from_frame`; a mapping with keys ``models``, ``X``,
        ``Y`` to :func:`~bayesrank.data.records.from_count_table` (any other mapping is a table's
        columns: column name → values, as ``pandas.DataFrame`` takes them); a string or path to
        :func:`~bayesrank.data.files.read` when a file of that name exists (or it is ``"-"``,
        standard input), otherwise a name in :data:`~bayesrank.data.bundled.DATASETS` to
        :func:`load_dataset`. A local file with the name of a bundled dataset is read, and
        the comparisons' warnings say so (rename it to read the bundled dataset).
    format : str, optional
        File format for :func:`~bayesrank.data.files.read` (CLI: ``--data-format``).
    both_bad_as_ties : bool, optional
        Count "both bad" ties as ties (ignored for a :class:`Comparisons`); None (default): the
        convention of the input — battle records (raw Arena logs) count them as ties, count
        records and count tables leave them out, a bundled dataset follows its own option
        (:mod:`bayesrank.data.bothbad`).
    covariates : sequence of str
        Numeric record columns to keep as per-cell context covariates.
    contrasts : sequence of str
        Numeric record columns of ``model_a``'s value minus ``model_b``'s: style covariates
        that every framework adjusts for (style control).
    by : str, optional
        A category column (language, task type) grouping battle or count records, for the
        per-category leaderboards of :class:`~bayesrank.model.categories.ByCategory`.
    cluster : str or sequence of str
        One or two record columns naming each comparison's cluster (user, prompt,
        conversation, judge): the cells keep it (:mod:`bayesrank.data.clusters`), so MAP
        intervals allow for votes that are not independent (``intervals="sandwich"`` or
        ``"bootstrap"``) and :class:`~bayesrank.model.random_effects.RandomEffects` can model
        them. A :class:`Comparisons` already read must carry these columns.
    drop_duplicates : bool
        Count records that repeat an earlier record exactly once (records with an identifier
        column; :mod:`bayesrank.data.aggregate`); reported either way (CLI: ``--drop-duplicates``).
    time_column : str, optional
        A date or timestamp column of the records (ISO 8601 text, Unix seconds, or a date type):
        the records are grouped into calendar periods, for ratings over time
        (:class:`~bayesrank.model.dynamic.Dynamic`).
    period : {"day", "week", "month"}
        The calendar period of ``time_column`` (weeks start on Monday, ISO 8601).

    Returns
    -------
    Comparisons
        ``data`` itself when it is one; otherwise comparisons whose ``reading`` records
        ``both_bad_as_ties`` (as resolved for the input), ``by`` and ``drop_duplicates``, so
        that later records are read alike (:meth:`bayesrank.Fit.update`).

    Raises
    ------
    DataError
        When ``data`` is neither a bundled dataset nor an existing file, or cannot be read.
    """
    cluster = cluster_columns(cluster)
    if isinstance(data, Comparisons):
        for name in cluster:
            if data.clusters is None:
                raise DataError(f"these comparisons carry no cluster column, so cluster={name!r} cannot apply; read "
                                f"the records again with cluster={name!r} (CLI: --cluster {name}).")
            data.clusters.index(name)
        return data
    return _loaded(data, format, both_bad_as_ties, covariates, contrasts, by, cluster, drop_duplicates, time_column,
                   period)


def _loaded(data, format, both_bad_as_ties, covariates, contrasts, by, cluster, drop_duplicates, time_column,
            period) -> Comparisons:
    records = dict(both_bad_as_ties=both_bad_as_ties, covariates=covariates, contrasts=contrasts, by=by,
                   cluster=cluster, drop_duplicates=drop_duplicates, time_column=time_column, period=period)
    if isinstance(data, pd.DataFrame) or type(data).__module__.split(".")[0] in TABLE_MODULES:
        return from_frame(data, **records)
    if isinstance(data, Mapping) and not {"models", "X", "Y"} & {str(k).strip() for k in data}:
        try:  # columns by name, as a table holds them
            frame = pd.DataFrame({k: list(v) if isinstance(v, Iterable) and not isinstance(v, str) else [v]
                                  for k, v in data.items()})
        except ValueError as err:
            raise DataError(f"a mapping of columns holds one list of values per column, all of one length, as a "
                            f"table does ({err}); a count table has the keys 'models', 'X', 'Y'.") from None
        return from_frame(frame, **records)
    if isinstance(data, Mapping):
        if cluster:
            raise DataError(f"a count table (models, X, Y) has no record columns, so cluster={cluster!r} cannot "
                            "apply; pass the records (one comparison per row, with the cluster column).")
        if time_column is not None:
            raise DataError(f"a count table has no record columns, so time_column={time_column!r} cannot apply; "
                            "pass the records with their dates instead.")
        return from_count_table(data, both_bad_as_ties=both_bad_as_ties)
    if isinstance(data, str | Path):
        path = _local(data)
        bundled = isinstance(data, str) and data in DATASETS
        if path is not None:
            if bundled and format is None and not Path(data).suffix:
                raise DataError(f"'{data}' is a file here and the name of a bundled dataset, and the file's format "
                                "cannot be told from its name, so neither is read: pass format= (CLI: "
                                "--data-format) to read the file, or move the file to read the bundled dataset.")
            out = read(path, format, **records)
            if bundled:
                out = replace(out, warnings=(*out.warnings, f"read the local file {str(path)!r}, not the bundled "
                                             f"dataset of the same name; rename or move the file to read the "
                                             "bundled dataset"))
            return out
        if bundled:
            counts = DATASETS[data].format == "counts"
            asked = [f"{k}={v!r}" for k, v in (("covariates", covariates), ("contrasts", contrasts), ("by", by),
                                               ("time_column", time_column), ("cluster", cluster if counts else ()))
                     if v]
            if asked:
                raise DataError(f"the bundled dataset {data!r} is aggregated counts without record columns, so "
                                f"{', '.join(asked)} cannot apply; pass a file or table of records instead.")
            return load_dataset(data, both_bad_as_ties=both_bad_as_ties, cluster=cluster)
        raise DataError(
            f"'{data}' is neither a bundled dataset ({', '.join(DATASETS)}) nor an existing file; "
            f"check the spelling or the path."
        )
    raise DataError(
        f"cannot load data of type {type(data).__name__}; pass a file path, a bundled dataset "
        f"name, a pandas / Polars / PyArrow table, a DuckDB relation or a Comparisons object."
    )


def _local(data: str | Path) -> Path | str | None:
    """The file ``data`` names when there is something at that path (also a dangling link,
    or a path the system refuses as too long, for :func:`read` to explain), ``"-"`` for
    standard input, else None. ``~`` is expanded only when no file has the literal name."""
    if str(data) == "-":
        return "-"
    if not str(data).strip():   # (Path("") is the current folder)
        raise DataError(f"the data name is empty ({str(data)!r}); pass a file, '-' for standard input, or a "
                        "bundled dataset name (see 'bayesrank datasets').")
    try:
        expanded = Path(data).expanduser()
    except RuntimeError:  # "~user" of no user
        expanded = Path(data)
    for path in (Path(data), expanded):
        try:
            if os.path.lexists(path):
                return path
            os.stat(path)
        except FileNotFoundError:
            continue
        except OSError:  # too long, a part is a file, no permission: read() says which
            return path
    return None


__all__ = ["TABLE_MODULES", "load", "load_dataset"]
