"""The single entry point from anything a user has to :class:`~bayesrank.data.comparisons.Comparisons`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from importlib import resources
from pathlib import Path

import pandas as pd

from bayesrank.data.bundled import DATASETS, dataset_path
from bayesrank.data.comparisons import Comparisons
from bayesrank.data.files import read
from bayesrank.data.records import from_count_table, from_frame
from bayesrank.errors import DataError


#: Libraries whose tables :func:`load` reads as records (through DuckDB).
TABLE_MODULES = ("pandas", "polars", "pyarrow", "duckdb", "_duckdb")


def load_dataset(name: str, *, both_bad_as_ties: bool = False) -> Comparisons:
    """Load a bundled dataset by name.

    Parameters
    ----------
    name : str
        One of :data:`~bayesrank.data.bundled.DATASETS` (``bayesrank datasets`` lists them).
    both_bad_as_ties : bool
        For arena data: count "tie (bothbad)" as ties. Default ``False`` is the leaderbot
        paper's convention (129 models, 3455 pairs, 1,374,996 comparisons). Judge data have
        no both-bad ties.

    Returns
    -------
    Comparisons
    """
    path = dataset_path(name)
    with resources.as_file(path) as file:
        data = read(file, DATASETS[name].format, both_bad_as_ties=both_bad_as_ties)
    return replace(data, source=name)


def load(
    data, *, format: str | None = None, both_bad_as_ties: bool = False, covariates: Sequence[str] = (),
    contrasts: Sequence[str] = (), by: str | None = None,
) -> Comparisons:
    """Turn anything the API or CLI accepts into :class:`Comparisons`.

    Parameters
    ----------
    data : Comparisons, table, mapping, str or Path
        A :class:`Comparisons` is returned as is; a pandas, Polars or PyArrow table or a
        DuckDB relation goes to :func:`~bayesrank.data.records.from_frame`; a mapping with keys ``models``, ``X``,
        ``Y`` to :func:`~bayesrank.data.records.from_count_table`; a name in
        :data:`~bayesrank.data.bundled.DATASETS` to :func:`load_dataset`; any other string
        or path to :func:`~bayesrank.data.files.read`.
    format : str, optional
        File format for :func:`~bayesrank.data.files.read` (CLI: ``--data-format``).
    both_bad_as_ties : bool
        Count "both bad" ties as ties (ignored for a :class:`Comparisons`).
    covariates : sequence of str
        Numeric record columns to keep as per-cell context covariates.
    contrasts : sequence of str
        Numeric record columns of ``model_a``'s value minus ``model_b``'s: style covariates
        that every framework adjusts for (style control).
    by : str, optional
        A category column (language, task type) grouping battle or count records, for the
        per-category leaderboards of :class:`~bayesrank.model.categories.ByCategory`.

    Returns
    -------
    Comparisons
        ``data`` itself when it is one; otherwise comparisons whose ``reading`` records
        ``both_bad_as_ties`` and ``by``, so that later records are read alike
        (:meth:`bayesrank.Fit.update`).

    Raises
    ------
    DataError
        When ``data`` is neither a bundled dataset nor an existing file, or cannot be read.
    """
    if isinstance(data, Comparisons):
        return data
    out = _loaded(data, format, both_bad_as_ties, covariates, contrasts, by)
    return replace(out, reading={**out.reading, "both_bad_as_ties": bool(both_bad_as_ties), "by": by})


def _loaded(data, format, both_bad_as_ties, covariates, contrasts, by) -> Comparisons:
    if isinstance(data, pd.DataFrame) or type(data).__module__.split(".")[0] in TABLE_MODULES:
        return from_frame(data, both_bad_as_ties=both_bad_as_ties, covariates=covariates, contrasts=contrasts,
                          by=by)
    if isinstance(data, Mapping):
        return from_count_table(data, both_bad_as_ties=both_bad_as_ties)
    if isinstance(data, str | Path):
        if isinstance(data, str) and data in DATASETS:
            asked = [f"{k}={v!r}" for k, v in (("covariates", covariates), ("contrasts", contrasts), ("by", by)) if v]
            if asked:
                raise DataError(f"the bundled dataset {data!r} is aggregated counts without record columns, so "
                                f"{', '.join(asked)} cannot apply; pass a file or table of records instead.")
            return load_dataset(data, both_bad_as_ties=both_bad_as_ties)
        path = Path(data).expanduser()
        if path.exists():
            return read(path, format, both_bad_as_ties=both_bad_as_ties, covariates=covariates, contrasts=contrasts,
                        by=by)
        raise DataError(
            f"'{data}' is neither a bundled dataset ({', '.join(DATASETS)}) nor an existing file; "
            f"check the spelling or the path."
        )
    raise DataError(
        f"cannot load data of type {type(data).__name__}; pass a file path, a bundled dataset "
        f"name, a pandas / Polars / PyArrow table, a DuckDB relation or a Comparisons object."
    )
