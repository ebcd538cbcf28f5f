"""Records → :class:`~bayesrank.data.comparisons.Comparisons`: battle, judge and count tables.

Three record shapes are understood, told apart by their columns (see :func:`from_frame`):

* **battles** (Chatbot Arena): ``model_a, model_b, winner``;
* **judgements** (LLM judges): ``model_a, model_b, judge_model, judge_preferred_model``
  (``question_id`` optional);
* **counts** (already aggregated): ``model_a, model_b, wins_a, wins_b`` plus optional
  ``ties, ties_bothbad, judge, first``.

Any of them can carry numeric *context covariates* (``covariates=[column, ...]``): values
that describe the comparison, not one side of it (a question's length, say); and numeric
*contrasts* (``contrasts=[column, ...]``, style control): ``model_a``'s value minus
``model_b``'s (a length difference, a difference of markdown counts), which change sign when
a record is re-oriented. Battle and count records can be grouped by a category column
(``by=column``: language, task type), which then plays the role of the judge. The records
may be a pandas, Polars or PyArrow table or a DuckDB relation; they are typed, validated and
aggregated in DuckDB by :mod:`bayesrank.data.aggregate` (the same rules for every source).
Files are turned into tables by :mod:`bayesrank.data.files`; :func:`bayesrank.data.load` is
the single entry point of the API and the CLI.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from bayesrank.data.aggregate import (
    BATTLE_OUTCOMES,
    JUDGE_VERDICTS,
    SHAPES,
    Table,
    aggregate,
    connection,
    detect_shape,
    names_as_text,
    table_from_frame,
)
from bayesrank.data.clusters import cluster_columns
from bayesrank.data.comparisons import Comparisons
from bayesrank.data.names import spelled
from bayesrank.errors import DataError

__all__ = ["BATTLE_OUTCOMES", "JUDGE_VERDICTS", "SHAPES", "from_battles", "from_count_table", "from_counts",
           "from_frame", "from_judgements", "from_table"]


# ---------------------------------------------------------------------- records
def from_table(table: Table, shape: str | None = None, *, both_bad_as_ties: bool | None = None,
               covariates: Sequence[str] = (), contrasts: Sequence[str] = (), by: str | None = None,
               source: str = "", cluster: Sequence[str] | str = (), drop_duplicates: bool = False,
               time_column: str | None = None, period: str = "week") -> Comparisons:
    """Aggregate a :class:`~bayesrank.data.aggregate.Table` of records into comparisons
    (the shape is detected from the columns when not given; ``cluster``: one or two columns
    naming each record's cluster, kept per cell, :mod:`bayesrank.data.clusters`)."""
    shape = shape or detect_shape(list(table.columns), table.source)
    cells = aggregate(table, shape, both_bad_as_ties=both_bad_as_ties, covariates=covariates, contrasts=contrasts,
                      by=by, cluster=cluster_columns(cluster), time_column=time_column, period=period,
                      what="row" if shape == "counts" else "record",
                      drop_duplicates=drop_duplicates)
    return Comparisons.from_aggregate(cells, source=source)


def _read(frame, shape, both_bad_as_ties, covariates, source, contrasts=(), by=None, cluster=(),
          drop_duplicates=False, time_column=None, period="week") -> Comparisons:
    with connection() as con:
        table = table_from_frame(con, frame, source)
        return from_table(table, shape, both_bad_as_ties=both_bad_as_ties, covariates=covariates,
                          contrasts=contrasts, by=by, source=source, cluster=cluster, drop_duplicates=drop_duplicates,
                          time_column=time_column, period=period)


def from_battles(df, *, both_bad_as_ties: bool | None = None, covariates: Sequence[str] = (),
                 contrasts: Sequence[str] = (),
                 by: str | None = None, source: str = "", cluster: Sequence[str] | str = ()) -> Comparisons:
    """Read Chatbot Arena battle records.

    Parameters
    ----------
    df : pandas / Polars / PyArrow table or DuckDB relation
        One battle per row with columns ``model_a``, ``model_b`` and ``winner`` in
        :data:`BATTLE_OUTCOMES` (other columns are ignored). ``model_a`` is the model shown
        first, so every record gets ``first = 0``.
    both_bad_as_ties : bool, optional
        Count "tie (bothbad)" as ties (default None: yes, the Arena convention of raw logs;
        :mod:`bayesrank.data.bothbad`).
    covariates : sequence of str
        Numeric columns to keep as per-cell context covariates.
    contrasts : sequence of str
        Numeric columns of ``model_a``'s value minus ``model_b``'s (style control).
    by : str, optional
        A category column (language, task type) that groups the records like a judge.
    source : str
        Provenance for messages.
    cluster : str or sequence of str
        One or two columns naming each record's cluster (user, prompt, conversation, judge):
        the cells keep it (:mod:`bayesrank.data.clusters`) for intervals that allow for
        dependent votes and for random effects; a record without one is refused.

    Returns
    -------
    Comparisons
        Cells per (pair, position[, category][, covariate and contrast values]).

    Raises
    ------
    DataError
        Missing columns, unknown ``winner`` labels, or any refused record (naming the 0-based
        record; :mod:`bayesrank.data.aggregate`).
    """
    return _read(df, "battles", both_bad_as_ties, covariates, source, contrasts, by, cluster)


def from_judgements(df, *, covariates: Sequence[str] = (), contrasts: Sequence[str] = (), source: str = "",
                    cluster: Sequence[str] | str = ()) -> Comparisons:
    """Read LLM-judge records (MT-Bench style).

    Parameters
    ----------
    df : pandas / Polars / PyArrow table or DuckDB relation
        One verdict per row with columns ``model_a``, ``model_b``, ``judge_model`` and
        ``judge_preferred_model`` in :data:`JUDGE_VERDICTS` (``a``, ``b``, ``c`` = tie,
        ``unknown``). ``model_a`` is the answer shown first, so ``first = 0``. With a
        ``question_id`` column, the agreement of every pair of judges on shared records is
        computed too (``Comparisons.agreement``), whatever the file format.
    covariates : sequence of str
        Numeric columns to keep as per-cell context covariates.
    contrasts : sequence of str
        Numeric columns of ``model_a``'s value minus ``model_b``'s (style control).
    source : str
        Provenance for messages.
    cluster : str or sequence of str
        One or two columns naming each record's cluster (user, prompt, conversation, judge):
        the cells keep it (:mod:`bayesrank.data.clusters`) for intervals that allow for
        dependent votes and for random effects; a record without one is refused.

    Returns
    -------
    Comparisons
        Cells per (pair, judge, position[, covariate values]); ``unknown`` verdicts are left
        out and counted in ``dropped["unknown verdict"]``.

    Raises
    ------
    DataError
        Missing columns, unknown verdict labels, or any refused record (naming the 0-based
        record in the input).
    """
    return _read(df, "judgements", False, covariates, source, contrasts, cluster=cluster)


def from_counts(df, *, both_bad_as_ties: bool | None = None, covariates: Sequence[str] = (),
                contrasts: Sequence[str] = (),
                by: str | None = None, source: str = "", cluster: Sequence[str] | str = ()) -> Comparisons:
    """Read an aggregated count table in long form (e.g. :meth:`Comparisons.to_frame`).

    Parameters
    ----------
    df : pandas / Polars / PyArrow table or DuckDB relation
        Columns ``model_a``, ``model_b``, ``wins_a``, ``wins_b`` and optionally ``ties``,
        ``ties_bothbad``, ``judge`` and ``first`` (``a``/``b`` or 0/1: which was shown
        first). Duplicate rows are summed; ``(b, a)`` rows are flipped onto ``(a, b)``.
    both_bad_as_ties : bool, optional
        Count ``ties_bothbad`` as ties (default None: no, :mod:`bayesrank.data.bothbad`).
    covariates : sequence of str
        Numeric columns to keep as per-cell context covariates.
    contrasts : sequence of str
        Numeric columns of ``model_a``'s value minus ``model_b``'s (style control).
    by : str, optional
        A category column used as the grouping (instead of ``judge``).
    source : str
        Provenance for messages.
    cluster : str or sequence of str
        One or two columns naming each record's cluster (user, prompt, conversation, judge):
        the cells keep it (:mod:`bayesrank.data.clusters`) for intervals that allow for
        dependent votes and for random effects; a record without one is refused.
    """
    return _read(df, "counts", both_bad_as_ties, covariates, source, contrasts, by, cluster)


def from_frame(df, *, both_bad_as_ties: bool | None = None, covariates: Sequence[str] = (),
               contrasts: Sequence[str] = (),
               by: str | None = None, source: str = "", cluster: Sequence[str] | str = (),
               drop_duplicates: bool = False, time_column: str | None = None, period: str = "week") -> Comparisons:
    """Read a table of battle records, judge records or aggregated counts.

    The shape is detected from the columns: ``winner`` → battles, ``judge_preferred_model``
    → judgements, ``wins_a``/``wins_b`` → counts (see :data:`SHAPES`). Column names are
    stripped of surrounding spaces; two columns with the same name are refused.

    Parameters
    ----------
    df : pandas / Polars (eager or lazy) / PyArrow table or DuckDB relation
        The records. Dask and Spark frames: aggregate them to the counts shape in their own
        engine first (README, "Data").
    both_bad_as_ties : bool, optional
        Count "both bad" ties as ties; None: battles yes, counts no (:mod:`bayesrank.data.bothbad`).
    covariates : sequence of str
        Numeric columns to keep as per-cell context covariates.
    contrasts : sequence of str
        Numeric columns of ``model_a``'s value minus ``model_b``'s (style control).
    by : str, optional
        Category column grouping battle or count records (judge records are grouped by judge).
    source : str
        Provenance for messages.
    cluster : str or sequence of str
        One or two columns naming each record's cluster (user, prompt, conversation, judge):
        the cells keep it (:mod:`bayesrank.data.clusters`) for intervals that allow for
        dependent votes and for random effects; a record without one is refused.
    drop_duplicates : bool
        Count a record that repeats an earlier one exactly (records with an identifier column,
        :data:`~bayesrank.data.aggregate.ID_COLUMNS`) once; duplicates are reported either way.
    time_column : str, optional
        A date or timestamp column grouping the records into calendar periods
        (:func:`~bayesrank.data.aggregate.aggregate`): ISO 8601 text, Unix seconds, or a date type.
    period : {"day", "week", "month"}
        The calendar period (weeks start on Monday).

    Raises
    ------
    DataError
        When no shape matches: names the columns missing for the closest shape and lists the
        accepted column sets; or the first refused record.
    """
    return _read(df, None, both_bad_as_ties, covariates, source, contrasts, by, cluster, drop_duplicates, time_column,
                 period)


# ---------------------------------------------------------------------- count tables
def from_count_table(table: Mapping, *, both_bad_as_ties: bool | None = None, source: str = "") -> Comparisons:
    """Read a leaderbot-style count table.

    Parameters
    ----------
    table : mapping
        Keys ``models`` (a list of distinct names), ``X`` (``(n, 2)`` 0-based index pairs)
        and ``Y`` (``(n, 3)`` wins of the first, wins of the second, ties; or ``(n, 4)`` with
        "both bad" ties last; or ``(n, 2)`` without ties). Every entry is checked: names by the
        rule of :mod:`bayesrank.data.aggregate`, indices whole numbers in range (not
        booleans), counts by the count rules (the pair is named in messages).
    both_bad_as_ties : bool, optional
        Count "both bad" ties as ties (default None: no, the leaderbot paper's convention of
        this format; :mod:`bayesrank.data.bothbad`).
    source : str
        Provenance for messages.
    """
    where = f" in {source}" if source else ""
    missing = [k for k in ("models", "X", "Y") if k not in table]
    if missing:
        raise DataError(f"count table{where} lacks key(s) {missing}; expected 'models', 'X', 'Y'.")
    models, X, Y = table["models"], table["X"], table["Y"]
    if not isinstance(models, list) or not models:
        raise DataError(f"count table{where}: 'models' must be a non-empty list of names, got "
                        f"{type(models).__name__}.")
    names = names_as_text(models, "models", source, what="model")
    seen: dict[str, int] = {}
    for k, name in enumerate(names):
        if name in seen:
            spellings = "" if models[seen[name]] == models[k] else (
                f", written {spelled(str(models[seen[name]]))} and {spelled(str(models[k]))}: one name by the "
                "reading rule of names (bayesrank.data.names)")
            raise DataError(f"count table{where}: 'models' names {name!r} twice (positions {seen[name]} and {k}"
                            f"{spellings}); "
                            "each model must appear once, or its pairs would be merged silently.")
        seen[name] = k
    if not isinstance(X, list) or not isinstance(Y, list):
        raise DataError(f"count table{where}: 'X' and 'Y' must be lists (of index pairs and of counts).")
    if len(X) != len(Y):
        raise DataError(f"count table{where}: 'X' has {len(X)} pairs but 'Y' has {len(Y)} rows; one row of counts "
                        "per pair.")
    if not X:
        raise DataError(f"no comparisons{where}: the count table has no pairs.")
    index = np.zeros((len(X), 2), dtype=np.int64)
    for row, pair in enumerate(X):
        if not isinstance(pair, list) or len(pair) != 2:
            raise DataError(f"pair {row}{where}: 'X' entry {pair!r} is not a pair [i, j] of positions in 'models'.")
        for col, value in enumerate(pair):
            whole = isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)
                                               and value == int(value))
            if isinstance(value, bool) or not whole or not 0 <= value < len(names):
                raise DataError(
                    f"pair {row}{where}: index {value!r} in 'X' is not a valid position in 'models' "
                    f"(whole numbers 0..{len(names) - 1}, not booleans)."
                )
            index[row, col] = int(value)
    width = {len(y) if isinstance(y, list) else -1 for y in Y}
    if len(width) != 1 or not width <= {2, 3, 4}:
        bad = next(r for r, y in enumerate(Y)
                   if not isinstance(y, list) or len(y) != len(Y[0]) or len(y) not in (2, 3, 4))
        raise DataError(
            f"pair {bad}{where}: 'Y' row {Y[bad]!r} does not match the others; every row needs the same 2-4 counts "
            "(wins of i, wins of j[, ties[, both-bad ties]])."
        )
    k = width.pop()
    cols = [[y[c] for y in Y] for c in range(k)] + [None] * (4 - k)
    arr = np.asarray(names, dtype=object)
    return Comparisons.from_cells(arr[index[:, 0]], arr[index[:, 1]], *cols, both_bad_as_ties=both_bad_as_ties,
                                  source=source, what="pair")
