"""Records → cells in DuckDB: typing, validation and aggregation as queries, never a Python loop.

Every way into bayesrank — a CSV / Parquet / JSON / JSON-lines file, a pandas, Polars or
PyArrow table, a DuckDB relation, or the arrays given to
:meth:`~bayesrank.data.comparisons.Comparisons.from_cells` — becomes a DuckDB relation
(:class:`Table`), and one set of rules, written once here as SQL, types, validates and
aggregates it. DuckDB streams files in bounded memory, so the cells grow with pairs × judges
× positions, never with the number of records, and the records are never held in Python.

Typing rules (the same for every source):

* **names** (``model_a``, ``model_b``, ``judge_model`` / ``judge``, ``question_id``) are text
  normalised by the rule of :mod:`bayesrank.data.names` (Unicode NFC, invisible characters
  removed, surrounding white space stripped; the records changed are counted in the notes and
  names written in several ways, or that only look alike, are reported in words); "NA",
  "None" and "null" are names like any other. A name given as a number (JSON, Parquet, a
  numeric column) keeps its exact text: whole numbers of an integer type (any width) or a JSON
  integer literal keep every digit; a floating-point number is written without decimals when
  it is whole (``1`` and ``1.0`` are both ``"1"``), otherwise in the shortest form that reads
  back as the same number *of its own precision* (a float32 ``3.3`` is ``"3.3"``, a float16
  ``0.1`` ``"0.1"``); a decimal keeps its digits without trailing zeros. A floating-point name
  at or beyond 2⁵³ (float32: 2²⁴), where neighbouring whole numbers are the same float, is
  refused: ids stored as floats (a pandas integer column with a missing value) may already
  have been merged; store them as integers or text. NaN in a floating-point name column is a
  missing name. Booleans, lists, objects, infinities, empty names and names containing a NUL
  character are refused.
* **counts** are non-negative whole numbers no larger than 2⁵³ (every such count is exact in
  the likelihood's floating point); booleans, text that is not a number, NaN, infinities and
  complex numbers are refused. Text that spells a number ("3") is read as that number (CSV
  has no other way).
* **covariates** are finite numbers (booleans refused).
* **columns**: two columns, or two keys of one JSON record, whose names differ only by
  letter case or surrounding white space are refused (:func:`bayesrank.data.names.column_key`:
  tools disagree on which one a reader sees), as is a column without a name (a header
  ending in a comma). Category columns (pandas, Arrow dictionaries) are read as their values.
* **duplicates**: records that carry an identifier (a column of :data:`ID_COLUMNS`) and
  repeat an earlier record in every column the reading uses are counted and reported (an
  export that ran twice); ``drop_duplicates=True`` counts each once.
* **record ids**: records with an ``id`` column (:data:`ID_COLUMN`, any shape) carry one id
  each, text by the name rule; it is kept as a 64-bit digest (:func:`record_ids`), so that
  records counted once are recognised when they come again (:func:`bayesrank.data.merge.merge`).
  With ``drop_duplicates=True`` the ids are those of the records counted (a duplicate's id is
  its first record's).

A refused record raises :class:`~bayesrank.errors.DataError` naming the record (0-based, in
the input's order), the column, the value, how many records share the problem and the fix.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import math
import re
import shutil
import tempfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from bayesrank.data import bothbad
from bayesrank.data.clusters import Clusters
from bayesrank.data.names import column_key, name_warnings, normalised_sql, stripped_sql
from bayesrank.errors import DataError, column_names

#: Outcome labels of Chatbot Arena battle records (column ``winner``).
BATTLE_OUTCOMES = ("model_a", "model_b", "tie", "tie (bothbad)")
#: Verdict labels of judge records (column ``judge_preferred_model``); "c" is a tie and
#: "unknown" verdicts are dropped and counted.
JUDGE_VERDICTS = ("a", "b", "c", "unknown")
#: Required and optional columns of each accepted record shape.
SHAPES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "battles": (("model_a", "model_b", "winner"), ()),
    "judgements": (
        ("model_a", "model_b", "judge_model", "judge_preferred_model"),
        ("question_id",),
    ),
    "counts": (
        ("model_a", "model_b", "wins_a", "wins_b"),
        ("ties", "ties_bothbad", "judge", "judge_model", "first"),
    ),
}
#: Column names (:func:`~bayesrank.data.names.column_key`) that say a record stands for several
#: comparisons; battle and judge records count each record once, so such a column is said not read.
COUNT_LIKE = frozenset({"count", "counts", "n", "num", "num_votes", "n_votes", "votes", "weight", "weights",
                        "frequency", "freq", "multiplicity"})
#: Largest count accepted: every whole number up to 2⁵³ is exact in double precision.
MAX_COUNT = 2.0**53
#: Reasons records are left out, as reported in ``Comparisons.dropped``.
DROP_UNKNOWN = "unknown verdict"
DROP_BOTHBAD = bothbad.DROPPED
DROP_DUPLICATE = "duplicate record (drop_duplicates=True / --drop-duplicates)"
#: Longest model or judge name (characters): a longer one is text that landed in a name column.
MAX_NAME_LENGTH = 1000
#: Largest JSON record DuckDB parses (its ``maximum_object_size``).
MAX_RECORD_BYTES = 16 << 20
#: Columns that identify a record (an export of it): with one of them present, a record that
#: repeats an earlier one in every column the reading uses is a duplicate.
ID_COLUMNS = ("id", "record_id", "battle_id", "question_id", "conversation_id", "tstamp")
#: The column holding each record's own id (optional, any shape): the identifier an update checks
#: so that no record is counted twice (:func:`record_ids`). The other :data:`ID_COLUMNS` name
#: an export of a record (a question, a time stamp) without being unique to it.
ID_COLUMN = "id"
#: The text whose digest identifies how ids are digested (:func:`id_digest`).
ID_PROBE = "bayesrank record id"

_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
            "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE")
_JSON_NUMBERS = "('BIGINT', 'UBIGINT', 'DOUBLE')"


#: What DuckDB raises on a file it cannot read: its own errors, and the RuntimeError of its
#: Python binding when a name or text in the file is not UTF-8 and cannot become a str.
DUCKDB_ERRORS = (duckdb.Error, RuntimeError, UnicodeDecodeError)


def _q(name: str) -> str:
    """A column name quoted as an SQL identifier."""
    return '"' + str(name).replace('"', '""') + '"'


def _lit(text: str) -> str:
    """A string as an SQL literal."""
    return "'" + str(text).replace("'", "''") + "'"


# ---------------------------------------------------------------------- tables
@dataclass
class Table:
    """A DuckDB relation of records with what the rules need to know about its columns.

    Attributes
    ----------
    con : duckdb.DuckDBPyConnection
        A private connection (one per read).
    sql : str
        A query whose rows are the records, in the input's order.
    columns : dict
        Column name (as the user wrote it, stripped) → DuckDB type, or ``"JSON"`` for values
        that keep their JSON type (JSON files, pandas object columns).
    source : str
        Where the records come from (for messages).
    """

    con: duckdb.DuckDBPyConnection
    sql: str
    columns: dict[str, str]
    source: str = ""
    kind: str = "table"
    keep: list = field(default_factory=list)
    #: When DuckDB fails on the file: a function finding the precise problem (its line), or None.
    locate: Callable[[], DataError | None] | None = None
    #: The path DuckDB reads (a private link to the user's file), named as ``source`` in messages.
    path: str = ""

    def column(self, name: str) -> str:
        """The SQL of a column of the records (aliased ``r``)."""
        return f"r.{_q(name)}"

    def error(self, err: Exception) -> DataError:
        """A DuckDB error while reading the records, as a one-line :class:`DataError` (the
        line and the problem when :attr:`locate` finds them)."""
        if isinstance(err, duckdb.InterruptException) or "Query interrupted" in str(err):
            return read_error(err, self.source, self.kind)  # (raises KeyboardInterrupt)
        precise = self.locate() if self.locate is not None else None
        if precise is not None:
            return precise
        text = str(err).replace(self.path, self.source) if self.path else str(err)
        return read_error(type(err)(text) if isinstance(err, duckdb.Error) else err, self.source, self.kind)


def read_error(err: Exception, source: str, kind: str) -> DataError:
    """DuckDB's error reading a file or table, told in one line with the line / record it names
    (never the query bayesrank generated). A query interrupted by a signal (Ctrl-C, SIGTERM) is
    not a data error: it is raised again as ``KeyboardInterrupt``."""
    if isinstance(err, duckdb.InterruptException) or "Query interrupted" in str(err):
        raise KeyboardInterrupt() from None
    text = " ".join(str(err).split())
    text = re.sub(r"^[A-Za-z ]*Error: ", "", text)
    for cut in (" Possible fix", " Possible Solution", " * ", " LINE 1:", " file = "):
        text = text.split(cut)[0]
    hint = {"CSV": "fix the file (one record per line, as many fields as the header)",
            "Parquet": "write it again with a Parquet writer (pandas, pyarrow, polars)"}.get(
        kind, "fix the file or pass the right format= (CLI: --data-format)")
    if re.search(r"GZIP|gzip", text):
        return DataError(f"{source} is not a readable gzip file (corrupt or truncated: {text[:120]}); "
                         "compress it again or pass the uncompressed file.")
    if "conversion error" in text:  # the binding could not turn a name or value into a str
        return DataError(f"{source} holds a column name or text that is not valid UTF-8; write the {kind} file "
                         "again with UTF-8 text.")
    if "Invalid unicode" in text or "not utf-8" in text.lower():
        line = re.search(r"Line: (\d+)", text)
        at = f" (line {line.group(1)})" if line else ""
        return DataError(f"{source} is not UTF-8 text{at}; save it as UTF-8.")
    too_long = re.search(r"CSV Error on Line: (\d+).*Maximum line size of (\d+) bytes exceeded\. Actual Size:(\d+)",
                         text)
    if too_long:
        line, limit, size = (int(x) for x in too_long.groups())
        return DataError(f"{source}: line {line} holds {size:,} bytes, more than the {limit:,} a CSV record may hold; "
                         f"no name or count is that long (names have at most {MAX_NAME_LENGTH:,} characters): "
                         "check that the file holds comparison records.")
    if "Parallel CSV Reader" in text:   # DuckDB's reader on a record longer than its buffer (tens of MB)
        return DataError(f"{source} holds a CSV record longer than the reader's buffer (tens of megabytes); no name "
                         f"or count is that long (names have at most {MAX_NAME_LENGTH:,} characters): check that the "
                         "file holds comparison records, one per line.")
    if "maximum_object_size" in text:
        return DataError(f"{source} holds a JSON record larger than {MAX_RECORD_BYTES >> 20} MB; a comparison record "
                         f"is a few names and counts (names have at most {MAX_NAME_LENGTH:,} characters): check that "
                         "the file holds comparison records, one per line.")
    columns = re.search(r"CSV Error on Line: (\d+).*Expected Number of Columns: (\d+) Found: (\d+)", text)
    if columns:
        line, expected, found = columns.groups()
        return DataError(f"{source} is not a readable CSV file: line {line} has {found} fields where the header "
                         f"has {expected}; {hint}.")
    line = re.search(r"CSV Error on Line: (\d+)", text)
    if line:
        detail = text.split("Original Line:")[-1]
        return DataError(f"{source} is not a readable CSV file: line {line.group(1)} is malformed "
                         f"({detail.strip()[:160]}); {hint}.")
    bad_json = re.search(r"Malformed JSON.*?at byte (\d+) in (line|record/value) (\d+): (.*)", text)
    if bad_json:
        byte, unit, number, detail = bad_json.groups()
        unit = "line" if unit == "line" else "record"
        return DataError(f"{source} is not valid JSON ({unit} {number}, byte {byte}): {detail.rstrip('. ')}; {hint}.")
    what = f"{source} is not a readable {kind} file" if kind != "table" else f"cannot read the records{_where(source)}"
    return DataError(f"{what}: {text[:300]}; {hint}.")


@contextlib.contextmanager
def connection() -> Iterator[duckdb.DuckDBPyConnection]:
    """A private in-memory DuckDB connection whose spill files go to a folder removed afterwards."""
    scratch = tempfile.mkdtemp(prefix="bayesrank-duckdb-")
    # no progress bar: DuckDB draws it on stdout, which is the CLI's output
    con = duckdb.connect(config={"temp_directory": scratch})
    with contextlib.suppress(duckdb.Error):  # in Jupyter without ipywidgets there is no bar to switch off
        con.execute("SET enable_progress_bar = false")
    con.execute("SET TimeZone = 'UTC'")  # a timestamp without an offset is UTC, whatever the machine's zone
    try:
        yield con
    finally:
        con.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _check_names(names: Sequence, where: str) -> dict[str, str]:
    """Stripped column names → the original ones. Refused: a column without a name, and two
    columns with one :func:`~bayesrank.data.names.column_key` (the same name once surrounding
    spaces are stripped and letter case is folded)."""
    out: dict[str, str] = {}
    keys: dict[str, str] = {}
    names = [str(n) for n in names]
    for position, name in enumerate(names):
        key = name.strip()
        if not key:
            trailing = position == len(names) - 1
            raise DataError(f"column {position + 1} of {len(names)}{where} has no name"
                            + (" (the header ends with a comma)" if trailing else "")
                            + "; name it, or remove the empty column"
                            + (" (the trailing comma of the header and of every line)." if trailing else "."))
        if key in out:
            raise DataError(
                f"duplicate column {key!r}{where}" + (" (after removing surrounding spaces)" if
                                                      name != key or out[key] != key else "")
                + "; rename or remove one of them."
            )
        folded = column_key(key)
        if folded in keys:
            raise DataError(f"columns {keys[folded]!r} and {key!r}{where} differ only by letter case; tools "
                            "disagree on which of them a reader sees, so rename or remove one of them.")
        out[key], keys[folded] = name, key
    return out


def _where(source: str) -> str:
    return f" in {source}" if source else ""


def table_from_csv(con, path: Path, source: str, locate: Callable[[], DataError | None] | None = None) -> Table:
    """A CSV file (``.gz`` too) as a table of text columns, parsed strictly.

    ``path`` is read as a path (:func:`bayesrank.data.files.opened` makes it one without
    pattern characters); ``locate()``, when given, names the line of a problem DuckDB finds."""
    header = _csv_header(path, source)
    names = _check_names(header, _where(source))
    columns = {key: "VARCHAR" for key in names}
    spec = "{" + ", ".join(f"{_lit(orig)}: 'VARCHAR'" for orig in names.values()) + "}"
    rel_sql = (f"SELECT {', '.join(f'{_q(orig)} AS {_q(key)}' for key, orig in names.items())} FROM read_csv("
               f"{_lit(str(path))}, columns={spec}, auto_detect=false, header=true, delim=',', quote='\"', "
               f"escape='\"', strict_mode=true, null_padding=false)")
    return Table(con, rel_sql, columns, source, kind="CSV", locate=locate, path=str(path))


def _csv_header(path: Path, source: str) -> list[str]:
    try:
        opener = gzip.open if path.suffix.lower() == ".gz" else open
        with opener(path, "rt", encoding="utf-8-sig", newline="") as fh:
            first = fh.readline(1 << 20)
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as err:
        raise text_error(path, err, source) from None
    if not first.strip():
        raise DataError(f"no comparisons in {source}: the file is empty.")
    if "\x00" in first:
        raise DataError(f"{source} is not a text CSV file (its first line holds NUL bytes).")
    if len(first) >= 1 << 20 and not first.endswith(("\n", "\r")):
        raise DataError(f"{source}: the header line is longer than 1 MB; check that the file is a CSV table of "
                        "comparison records.")
    try:
        return next(csv.reader(io.StringIO(first)))
    except csv.Error as err:
        raise DataError(f"{source} is not a readable CSV file: its header line is malformed ({err}).") from None


def text_error(path: Path, err: Exception, source: str | None = None) -> DataError:
    """Why a text file could not be read, in one line (a broken gzip file, bytes that are not
    UTF-8); ``source`` is what messages call the file (default: ``path``)."""
    source = str(path) if source is None else source
    if path.suffix.lower() == ".gz" and not isinstance(err, UnicodeDecodeError):
        return DataError(f"{source} is not a readable gzip file (corrupt or truncated: {err}); compress it again "
                         "or pass the uncompressed file.")
    return DataError(f"cannot read {source} as UTF-8 text: {err}; save it as UTF-8.")


def table_from_parquet(con, path: Path, source: str) -> Table:
    """A Parquet file; columns keep their Parquet types (categories are read as their values)."""
    probe = Table(con, "", {}, source, kind="Parquet", path=str(path))
    try:
        rel = con.sql(f"SELECT * FROM read_parquet({_lit(str(path))})")
        names, types = rel.columns, [str(t) for t in rel.types]
        _check_names(_parquet_names(con, path), _where(source))
    except DUCKDB_ERRORS as err:
        raise probe.error(err) from None
    keys = _check_names(names, _where(source))
    select, columns = _plain_columns({key: (_q(orig), kind) for (key, orig), kind in zip(keys.items(), types)})
    return Table(con, f"SELECT {select} FROM read_parquet({_lit(str(path))})", columns, source, kind="Parquet",
                 path=str(path))


def _parquet_names(con, path: Path) -> list[str]:
    """The top-level column names as the Parquet file writes them (DuckDB's reader renames a name
    that repeats another up to letter case — ``Winner`` beside ``winner`` becomes ``Winner_1`` —,
    which would hide the clash :func:`_check_names` refuses). The file's schema lists its
    elements depth first, each with its number of children; the columns are the root's."""
    rows = con.execute("SELECT name, coalesce(num_children, 0) FROM parquet_schema(?)", [str(path)]).fetchall()
    names, at = [], 1
    while at < len(rows):
        names.append(rows[at][0])
        pending, at = rows[at][1], at + 1
        while pending:  # the column's nested fields
            pending, at = pending - 1 + rows[at][1], at + 1
    return names


def _plain_columns(columns: Mapping[str, tuple[str, str]]) -> tuple[str, dict[str, str]]:
    """(SQL select list, column → type) with category (ENUM) columns read as their text."""
    select, types = [], {}
    for key, (expr, kind) in columns.items():
        if kind.startswith("ENUM"):
            expr, kind = f"CAST({expr} AS VARCHAR)", "VARCHAR"
        select.append(f"{expr} AS {_q(key)}")
        types[key] = kind
    return ", ".join(select), types


def table_from_json_records(con, path: Path, source: str, fmt: str,
                            locate: Callable[[], DataError | None] | None = None) -> Table:
    """JSON records (``fmt="array"``: one JSON list of objects; ``"newline_delimited"``: JSON
    lines), each value keeping its JSON type; non-objects, repeated keys and keys that differ
    only by letter case are refused, naming the record.

    ``locate()``, when given, is asked for a more precise error (the line and column) when
    DuckDB finds the file malformed."""
    reader = (f"(SELECT json FROM read_json_objects({_lit(str(path))}, format={_lit(fmt)}, "
              f"maximum_object_size={MAX_RECORD_BYTES}))")
    kind = "JSON-lines" if fmt == "newline_delimited" else "JSON"
    probe = Table(con, "", {}, source, kind=kind, locate=locate, path=str(path))
    numbered = f"(SELECT row_number() OVER () - 1 AS _record, json FROM {reader})"
    try:
        n, n_bad, n_dup, keys = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE json_type(json) IS DISTINCT FROM 'OBJECT'), "
            "count(*) FILTER (WHERE json_type(json) = 'OBJECT' AND "
            "len(json_keys(json)) <> len(list_distinct(json_keys(json)))), "
            "list_sort(list_distinct(flatten(list(CASE WHEN json_type(json) = 'OBJECT' THEN json_keys(json) END)))) "
            f"FROM {reader}").fetchone()
        if n_bad or n_dup:
            bad = "json_type(json) IS DISTINCT FROM 'OBJECT'" if n_bad else \
                "len(json_keys(json)) <> len(list_distinct(json_keys(json)))"
            row, keys_of = con.execute(f"SELECT _record, CASE WHEN json_type(json) = 'OBJECT' THEN json_keys(json) END "
                                       f"FROM {numbered} WHERE {bad} ORDER BY _record LIMIT 1").fetchone()
    except DUCKDB_ERRORS as err:
        raise probe.error(err) from None
    if n == 0:
        raise DataError(f"no comparisons in {source}: the file holds no records.")
    if n_bad:
        raise DataError(f"record {row} in {source} is not a JSON object ({n_bad} such records); each "
                        "record needs named fields such as model_a, model_b.")
    if n_dup:
        repeated = sorted({k for k in keys_of if keys_of.count(k) > 1})
        raise DataError(f"record {row} in {source} repeats the key(s) {', '.join(map(repr, repeated))} "
                        f"({n_dup} such records); keep one value per key.")
    _case_colliding_keys(con, numbered, keys or [], source)
    names = _check_names(keys or [], _where(source))
    select = ", ".join(f"json -> {_lit('$.' + json.dumps(orig, ensure_ascii=False))} AS {_q(key)}"
                       for key, orig in names.items())
    return Table(con, f"SELECT {select} FROM {reader}", {k: "JSON" for k in names}, source, kind=kind,
                 locate=locate, path=str(path))


def _case_colliding_keys(con, numbered: str, keys: Sequence[str], source: str) -> None:
    """Refuse keys of the records that differ only by letter case or surrounding spaces, naming
    the first record holding two of them (or the first record of each spelling)."""
    groups: dict[str, list[str]] = {}
    for key in keys:
        groups.setdefault(column_key(key), []).append(key)
    clash = next((g for g in groups.values() if len(g) > 1), None)
    if clash is None:
        return
    spelled = " and ".join(repr(k) for k in clash)
    found = con.execute(f"SELECT _record FROM {numbered} WHERE json_type(json) = 'OBJECT' AND "
                        f"len(list_intersect(json_keys(json), [{', '.join(map(_lit, clash))}])) > 1 "
                        "ORDER BY _record LIMIT 1").fetchone()
    if found is not None:
        raise DataError(f"record {found[0]} in {source} has the keys {spelled}, which differ only by letter case "
                        "or surrounding spaces: readers disagree on which one counts; keep one of them.")
    first_of = (f"min(_record) FILTER (WHERE list_contains(json_keys(json), {_lit(k)}))" for k in clash)
    firsts = con.execute(f"SELECT {', '.join(first_of)} "
                         f"FROM {numbered} WHERE json_type(json) = 'OBJECT'").fetchone()
    where = ", ".join(f"{k!r} (first in record {r})" for k, r in zip(clash, firsts))
    raise DataError(f"the records in {source} spell one key in several ways: {where}; they differ only by letter "
                    "case or surrounding spaces, so write one spelling in every record.")


def table_from_frame(con, frame, source: str = "") -> Table:
    """Any table-like object: pandas, Polars (eager or lazy), PyArrow, or a DuckDB relation.

    pandas object columns (mixed Python values) keep each value's type as JSON, so the same
    typing rules apply to them as to JSON files; category columns are read as their values;
    a table without columns and complex numbers are refused.
    """
    if isinstance(frame, duckdb.DuckDBPyRelation):
        # a reader streams the records once; record ids and the judges' agreement are a second
        # pass over them, so a relation with those columns is read into one Arrow table
        again = {ID_COLUMN, "question_id"} & {str(c).strip() for c in frame.columns}
        frame = frame.to_arrow_table() if again else frame.to_arrow_reader()
    elif type(frame).__module__.startswith("polars"):
        if hasattr(frame, "collect"):
            frame = frame.collect()
        frame = frame.to_arrow()
    elif not isinstance(frame, pd.DataFrame) and not type(frame).__module__.startswith("pyarrow"):
        raise DataError(f"cannot read records from a {type(frame).__name__}; pass a pandas, Polars or PyArrow "
                        "table, a DuckDB relation, or a file (Dask / Spark: aggregate to counts, then .compute() / "
                        ".toPandas(); see the README).")
    if isinstance(frame, pd.DataFrame):
        if frame.shape[1] == 0:
            raise DataError(f"no comparisons{_where(source)}: the table has no columns; pass records with columns "
                            "such as model_a, model_b, winner.")
        names = _check_names(list(frame.columns), _where(source))
        frame = frame.copy(deep=False)
        frame.columns = list(names)
        for key in names:
            column = frame[key]
            if column.dtype.kind == "c":
                raise DataError(f"column {key!r}{_where(source)} holds complex numbers; names, counts and covariates "
                                "are text or real numbers.")
            if isinstance(column.dtype, pd.CategoricalDtype):
                column = frame[key] = column.astype(object)
            if column.dtype == np.float16:
                frame[key] = _half_as_json(column.to_numpy(), column.index)
            elif column.dtype == object:
                frame[key] = _json_values(column)
        json_cols = {k for k in names if frame[k].dtype == object}
    else:
        import pyarrow as pa

        names = _check_names(list(frame.schema.names), _where(source))
        if not names:
            raise DataError(f"no comparisons{_where(source)}: the table has no columns.")
        if hasattr(frame, "rename_columns"):
            frame = frame.rename_columns(list(names))
        json_cols = {k for k, kind in zip(names, frame.schema.types) if kind == pa.float16()}
        if json_cols:  # (a reader of batches is read whole to replace them)
            frame = frame.read_all() if hasattr(frame, "read_all") else frame
            for k in json_cols:
                i = frame.schema.get_field_index(k)
                values = frame.column(i).to_numpy(zero_copy_only=False)
                frame = frame.set_column(i, k, pa.array(_half_as_json(values), type=pa.string(), from_pandas=True))
    view = f"frame_{len(con.execute('SELECT * FROM duckdb_views()').fetchall())}"
    try:
        con.register(view, frame)
        rel = con.sql(f"SELECT * FROM {view}")
    except DUCKDB_ERRORS as err:
        raise DataError(f"cannot read the records{_where(source)}: a column has a type that is not text or a "
                        f"number ({' '.join(str(err).split())[:160]}); convert it first.") from None
    select, types = _plain_columns({k: ((f"{_q(k)}::JSON", "JSON") if k in json_cols else (_q(k), str(t)))
                                    for k, t in zip(names, rel.types)})
    return Table(con, f"SELECT {select} FROM {view}", types, source, keep=[frame])


def _half_as_json(values: np.ndarray, index=None) -> pd.Series:
    """Half-precision floats as JSON numbers of their own shortest text (``0.1``, not the
    ``0.099975586`` of the float32 DuckDB would widen them to), so that a name keeps its text and a
    count or covariate its value by the rules of JSON records: each value is the Python float its
    shortest text reads as, written by :func:`_json_values` (NaN → null, ±∞ → text)."""
    floats = [float(str(v)) for v in np.asarray(values, dtype=np.float16)]
    return _json_values(pd.Series(floats, index=index, dtype=object))


def _json_values(series: pd.Series) -> pd.Series:
    """Python values as JSON text (None / NaN → JSON null); values JSON cannot express raise."""
    def one(value):
        if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
            return None
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            return json.dumps(str(value))  # "inf": refused as a count, written as text as a name
        try:
            return json.dumps(value)
        except (TypeError, ValueError):  # a value JSON has no type for (a date, an object): its text
            return json.dumps(str(value))
    return series.map(one).astype(object)


# ---------------------------------------------------------------------- value rules
#: A number written as a name: whole numbers without decimals, others in shortest form.
_NUMBER_AS_NAME = ("(CASE WHEN {v} = trunc({v}) AND abs({v}) < 9.2e18 THEN CAST(CAST({v} AS BIGINT) AS VARCHAR) "
                   "ELSE CAST({v} AS VARCHAR) END)")
_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT",
             "UHUGEINT")
#: Floating-point names from this magnitude on are refused: neighbouring whole numbers are one float.
_FLOAT_EXACT = {"FLOAT": 2**24, "DOUBLE": 2**53}


def _is_number_type(kind: str) -> bool:
    return kind in _NUMERIC or kind.startswith("DECIMAL")


def _float_name(v: str, kind: str) -> tuple[str, list[tuple[str, str]]]:
    """(SQL of the name of the floating-point value ``v`` of type ``kind``, its checks): the
    shortest text of the value in its own precision, whole numbers without decimals (module
    docstring); NaN is a missing name."""
    limit = _FLOAT_EXACT[kind]
    text = (f"(CASE WHEN isnan({v}) OR isinf({v}) OR abs({v}) >= {limit} THEN NULL "
            f"WHEN {v} = trunc({v}) THEN CAST(CAST({v} AS BIGINT) AS VARCHAR) ELSE CAST({v} AS VARCHAR) END)")
    exponent = {2**24: "2^24", 2**53: "2^53"}[limit]
    return text, [(f"isinf({v})", "is infinite, not a name"),
                  (f"NOT isnan({v}) AND NOT isinf({v}) AND abs({v}) >= {limit}",
                   f"is a floating-point ({kind.lower()}) number beyond {exponent}, where neighbouring whole numbers "
                   "are one float, so ids stored this way may have merged (a pandas integer column with a missing "
                   "value is stored as floats); store the ids as integers or text, not a name")]


def _name(table: Table, name: str) -> tuple[str, str, list[tuple[str, str]], str]:
    """A name column by the rule of the module docstring: (SQL of its normalised text, SQL of
    its raw value for messages, checks [(predicate, problem)], SQL of the text as written,
    before :func:`bayesrank.data.names.normalised_sql`)."""
    col, kind = table.column(name), table.columns[name]
    bad: list[tuple[str, str]] = []
    if kind == "VARCHAR":
        written, raw = col, col
    elif kind in _INTEGERS:
        written = raw = f"CAST({col} AS VARCHAR)"
    elif kind in _FLOAT_EXACT:
        written, bad = _float_name(col, kind)
        raw = f"CAST({col} AS VARCHAR)"
    elif kind.startswith("DECIMAL"):
        written = (f"regexp_replace(regexp_replace(CAST({col} AS VARCHAR), '(\\.\\d*?)0+$', '\\1'), "
                   "'\\.$', '')")
        raw = f"CAST({col} AS VARCHAR)"
    elif kind == "JSON":
        t = f"json_type({col})"
        raw = f"CAST({col} AS VARCHAR)"
        literal = f"regexp_full_match({raw}, '-?[0-9]+')"  # an integer literal beyond 64 bits
        number, rules = _float_name(f"TRY_CAST({col} AS DOUBLE)", "DOUBLE")
        written = (f"(CASE WHEN {t} IN ('VARCHAR', 'BIGINT', 'UBIGINT') THEN {col} ->> '$' "
                   f"WHEN {t} = 'DOUBLE' AND {literal} THEN {raw} WHEN {t} = 'DOUBLE' THEN {number} END)")
        bad = [(f"{t} = 'BOOLEAN'", "is a boolean, not a name"),
               (f"{t} IN ('ARRAY', 'OBJECT')", "is a list or an object, not a name"),
               *[(f"{t} = 'DOUBLE' AND NOT {literal} AND {p}", m) for p, m in rules]]
        text = normalised_sql(written)
        return text, raw, bad + [
            (f"coalesce({t}, 'NULL') NOT IN ('BOOLEAN', 'ARRAY', 'OBJECT') AND coalesce({text}, '') = '' "
             f"AND NOT coalesce({' OR '.join(p for p, _ in bad[2:])}, false)", "is missing or empty"),
            (f"contains({text}, chr(0))", "contains a NUL character")], written
    else:
        what = "a boolean" if kind == "BOOLEAN" else f"of type {kind}"
        return "NULL", f"CAST({col} AS VARCHAR)", [(f"{col} IS NOT NULL", f"is {what}, not a name"),
                                                  (f"{col} IS NULL", "is missing or empty")], "NULL"
    text = normalised_sql(written)
    guard = f" AND NOT coalesce({' OR '.join(p for p, _ in bad)}, false)" if bad else ""
    return text, raw, bad + [(f"coalesce({text}, '') = ''{guard}", "is missing or empty"),
                             (f"contains({text}, chr(0))", "contains a NUL character")], written


def _number(table: Table, name: str) -> tuple[str, str, list[tuple[str, str]]]:
    """A numeric column: (SQL of its DOUBLE value, SQL of its raw text, checks)."""
    col, kind = table.column(name), table.columns[name]
    if kind == "VARCHAR":
        return f"TRY_CAST(trim({col}) AS DOUBLE)", col, [
            (f"trim({col}) <> '' AND TRY_CAST(trim({col}) AS DOUBLE) IS NULL", "is not a number")]
    if _is_number_type(kind):
        return f"CAST({col} AS DOUBLE)", f"CAST({col} AS VARCHAR)", []
    if kind == "JSON":
        t = f"json_type({col})"
        value = (f"(CASE WHEN {t} IN {_JSON_NUMBERS} THEN CAST({col} AS DOUBLE) "
                 f"WHEN {t} = 'VARCHAR' THEN TRY_CAST(trim({col} ->> '$') AS DOUBLE) END)")
        return value, f"CAST({col} AS VARCHAR)", [
            (f"{t} = 'BOOLEAN'", "is a boolean, not a number"),
            (f"{t} NOT IN ('BIGINT', 'UBIGINT', 'DOUBLE', 'NULL', 'BOOLEAN') AND {value} IS NULL", "is not a number")]
    what = "a boolean" if kind == "BOOLEAN" else f"of type {kind}"
    return "NULL", f"CAST({col} AS VARCHAR)", [(f"{col} IS NOT NULL", f"is {what}, not a number")]


def _count(table: Table, name: str) -> tuple[str, str, list[tuple[str, str]]]:
    """A count column: its value, raw text and every check (see the module docstring)."""
    value, raw, checks = _number(table, name)
    typed = " OR ".join(f"coalesce({p}, false)" for p, _ in checks) or "false"
    return value, raw, checks + [
        (f"{value} IS NULL AND NOT ({typed})", "is missing (NaN)"),
        (f"isnan({value})", "is missing (NaN)"),
        (f"isinf({value})", "is infinite"),
        (f"{value} < 0", "is negative"),
        (f"{value} <> trunc({value})", "is not a whole number"),
        (f"{value} > {MAX_COUNT!r}", f"is larger than 2^53 = {MAX_COUNT:.0f}, the largest count held exactly"),
    ]


def _label(table: Table, name: str) -> str:
    """An outcome label or position column as trimmed text (numbers by the name rule)."""
    col, kind = table.column(name), table.columns[name]
    if kind == "VARCHAR":
        return f"trim({col})"
    if kind == "JSON":
        t = f"json_type({col})"
        return (f"(CASE WHEN {t} = 'VARCHAR' THEN trim({col} ->> '$') WHEN {t} IN {_JSON_NUMBERS} THEN "
                f"{_NUMBER_AS_NAME.format(v=f'CAST({col} AS DOUBLE)')} END)")
    if _is_number_type(kind):
        return _NUMBER_AS_NAME.format(v=f"CAST({col} AS DOUBLE)")
    return "NULL"


#: Calendar periods a time column is grouped by (``period=``; CLI ``--period``): DuckDB's
#: ``date_trunc`` units, whose weeks start on Monday (ISO 8601).
PERIODS = ("day", "week", "month")


def _moment(table: Table, name: str) -> tuple[str, str]:
    """A date or timestamp column as a UTC ``TIMESTAMP``: (SQL of its value, NULL where the value is
    neither; SQL of its raw text for messages). Text is read as ISO 8601 (a date, or a date and time
    with an optional UTC offset; without one it is UTC); a number is Unix time in seconds (the arena
    logs' ``tstamp``); date and timestamp columns keep their value."""
    col, kind = table.column(name), table.columns[name]
    raw = f"CAST({col} AS VARCHAR)"

    def text(t):
        return (f"(CASE WHEN TRY_CAST({t} AS DOUBLE) IS NOT NULL THEN to_timestamp(TRY_CAST({t} AS DOUBLE)) "
                f"ELSE TRY_CAST({t} AS TIMESTAMPTZ) END) AT TIME ZONE 'UTC'")

    if kind == "VARCHAR":
        return text(f"trim({col})"), raw
    if _is_number_type(kind):
        return f"to_timestamp(CAST({col} AS DOUBLE)) AT TIME ZONE 'UTC'", raw
    if kind == "JSON":
        t = f"json_type({col})"
        return (f"(CASE WHEN {t} IN {_JSON_NUMBERS} THEN to_timestamp(CAST({col} AS DOUBLE)) AT TIME ZONE 'UTC' "
                f"WHEN {t} = 'VARCHAR' THEN {text(f"trim({col} ->> '$')")} END)"), raw
    if kind.startswith("TIMESTAMP WITH TIME ZONE") or kind == "TIMESTAMPTZ":
        return f"({col} AT TIME ZONE 'UTC')", raw
    if kind.startswith("TIMESTAMP") or kind == "DATE":
        return f"CAST({col} AS TIMESTAMP)", raw
    return "CAST(NULL AS TIMESTAMP)", raw


# ---------------------------------------------------------------------- shapes
def detect_shape(columns: Sequence[str], source: str = "") -> str:
    """The record shape of a table from its columns (see :data:`SHAPES`).

    Raises
    ------
    DataError
        When a shape's marker column is present but a required column is missing, or no shape
        matches: names the columns missing for the closest shape and lists the accepted sets.
    """
    present = set(columns)
    shape = None
    for name, marker in (("battles", "winner"), ("judgements", "judge_preferred_model")):
        if marker in present:
            shape = name
            counts = [c for c in ("wins_a", "wins_b", "ties") if c in present]
            if counts:
                raise DataError(
                    f"the records{_where(source)} have both a {marker!r} column (one comparison per record: {name}) "
                    f"and count column(s) {', '.join(map(repr, counts))} (aggregated counts); it is unclear which "
                    f"to read: remove {marker!r} to read the counts, or remove {', '.join(map(repr, counts))} to read "
                    f"one comparison per record.")
            break
    if shape is None and {"wins_a", "wins_b"} & present:
        shape = "counts"
    if shape is None:
        shape = min(SHAPES, key=lambda k: len(set(SHAPES[k][0]) - present))
    require(columns, shape, source)
    return shape


def require(columns: Sequence[str], shape: str, source: str) -> None:
    """Raise a :class:`DataError` naming the required columns of ``shape`` that are missing."""
    required, _ = SHAPES[shape]
    missing = [c for c in required if c not in set(columns)]
    if missing:
        accepted = "; ".join(
            f"{name}: {', '.join(req)}" + (f" [{', '.join(opt)}]" if opt else "")
            for name, (req, opt) in SHAPES.items()
        )
        raise DataError(
            f"missing column(s) {', '.join(repr(c) for c in missing)}{_where(source)} for {shape} records "
            f"(found: {', '.join(map(str, columns)) or 'none'}). Accepted column sets — "
            f"{accepted}; rename your columns to one of these."
        )


# ---------------------------------------------------------------------- aggregation
@dataclass
class Cells:
    """Records aggregated into cells (names in canonical order: ``model_a < model_b``).

    Attributes
    ----------
    frame : DataFrame
        ``model_a, model_b[, judge][, first][, period][, covariate:<name> …][, contrast:<name> …], wins_a, wins_b, ties,
        ties_bothbad``: one row per cell with at least one used record (pairs × judges ×
        positions, never records).
    records : int
        Records read.
    dropped : dict
        Records left out, by reason.
    notes : dict
        Other reading notes with counts (names normalised, duplicate records).
    agreement : DataFrame or None
        Judge agreement on shared records (judge records with question ids).
    warnings : list of str
        How the records were read, in words (names merged or looking alike, duplicates).
    period_unit : str
        The calendar period of the ``period`` column (``"day"``, ``"week"``, ``"month"``);
        empty without a time column.
    clusters : Clusters or None
        With ``cluster=``: the comparisons of each cell by cluster, the ``cell`` of each row
        numbering the cells as the frame's ``_cell`` column does
        (:meth:`~bayesrank.data.comparisons.Comparisons.from_aggregate` renumbers them).
    ids : ndarray of uint64 or None
        The records' id digests in the input's order (:func:`record_ids`), when the records
        have an ``id`` column.
    reading : dict
        The reading options the cells follow: ``both_bad_as_ties`` (resolved by the records'
        shape, :func:`bayesrank.data.bothbad.as_ties`), ``by`` and ``drop_duplicates``.
    """

    frame: pd.DataFrame
    records: int
    dropped: dict[str, int]
    notes: dict[str, int]
    agreement: pd.DataFrame | None = None
    warnings: list[str] = field(default_factory=list)
    period_unit: str = ""
    clusters: Clusters | None = None
    ids: np.ndarray | None = None
    reading: dict = field(default_factory=dict)


@dataclass
class _Check:
    column: str
    raw: str
    predicate: str
    problem: str


def aggregate(
    table: Table,
    shape: str | None = None,
    *,
    both_bad_as_ties: bool | None = None,
    covariates: Sequence[str] = (),
    contrasts: Sequence[str] = (),
    by: str | None = None,
    time_column: str | None = None,
    period: str = "week",
    cluster: Sequence[str] = (),
    what: str = "record",
    drop_duplicates: bool = False,
) -> Cells:
    """Validate the records of ``table`` and aggregate them into cells in one DuckDB pass.

    The checks are counted in the same GROUP BY that aggregates; only when one fails is the
    table read again, to find the first refused record.

    Parameters
    ----------
    table : Table
    shape : {"battles", "judgements", "counts"}, optional
        Detected from the columns when None.
    both_bad_as_ties : bool, optional
        Count "both bad" ties as ties; None: the convention of the records' shape (battles yes,
        counts no: :mod:`bayesrank.data.bothbad`).
    covariates : sequence of str
        Numeric columns kept as per-cell context covariates.
    contrasts : sequence of str
        Numeric columns of ``model_a``'s value minus ``model_b``'s (style control): kept per
        cell like covariates, with the sign changed where a record is re-oriented.
    by : str, optional
        A category column (language, task type) grouping battle or count records; it takes
        the place of the judge (``judge`` of counts). Judge records are grouped by judge.
    time_column : str, optional
        A date or timestamp column (:func:`_moment`); the records are grouped into calendar
        periods by it, and each cell carries the start of its period (column ``period``, an
        ISO date). Every record needs one: a value that is neither is refused, naming it.
    period : {"day", "week", "month"}
        The calendar period of ``time_column`` (weeks start on Monday, ISO 8601).
    cluster : sequence of str
        Columns naming the cluster of each record (user, prompt, conversation, judge): the
        records are aggregated by cell × cluster, the clusters kept as ``cluster:<name>``
        columns (:mod:`bayesrank.data.clusters`). A record without its cluster is refused.
    what : str
        What a record is called in messages ("record", "row", "pair").
    drop_duplicates : bool
        Count a record that repeats an earlier one (module docstring) once; otherwise
        duplicates are counted as given and reported.

    Raises
    ------
    DataError
        The first refused record (see the module docstring), or no usable record.
    """
    source, where = table.source, _where(table.source)
    columns = list(table.columns)
    shape = shape or detect_shape(columns, source)
    require(columns, shape, source)
    both_bad_as_ties = bothbad.as_ties(shape, both_bad_as_ties)
    covariates = _column_list(covariates, "covariate", table, where)
    contrasts = _column_list(contrasts, "contrast", table, where)
    both = sorted(set(covariates) & set(contrasts))
    if both:
        raise DataError(f"column(s) {', '.join(map(repr, both))} given as both covariates and contrasts; pass each "
                        "column once.")
    if time_column is not None:
        if period not in PERIODS:
            raise DataError(f"period={period!r} is not a calendar period; use one of {', '.join(PERIODS)}.")
        if time_column not in table.columns:
            raise DataError(f"time column {time_column!r} not found{where} (columns: {', '.join(columns)}).")
    if by is not None:
        if shape == "judgements":
            raise DataError(f"by={by!r}: judge records are grouped by their judge already; "
                            "group battle or count records by a category instead.")
        if by not in table.columns:
            raise DataError(f"category column {by!r} (by=) not found{where} (columns: {', '.join(columns)}).")
    cluster = list(cluster)
    missing = [c for c in cluster if c not in table.columns]
    if missing:
        raise DataError(f"cluster column(s) {', '.join(repr(c) for c in missing)} (cluster=) not found{where} "
                        f"(columns: {', '.join(columns)}).")

    checks: list[_Check] = []
    value: dict[str, str] = {}
    written: dict[str, str] = {}
    for key, column in (("name_a", "model_a"), ("name_b", "model_b")):
        value[key], raw, rules, written[key] = _name(table, column)
        checks += [_Check(column, raw, p, m) for p, m in rules]
    judges = {"judgements": ("judge_model",), "counts": ("judge", "judge_model")}.get(shape, ())
    judge_column = by or next((c for c in judges if c in table.columns), None)   # (by: checked above)
    if judge_column:
        value["judge"], raw, rules, written["judge"] = _name(table, judge_column)
        checks += [_Check(judge_column, raw, p, m) for p, m in rules]
    for key, column in (("name_a", "model_a"), ("name_b", "model_b"), ("judge", judge_column)):
        if key in value:
            checks.append(_Check(column, value[key], f"length({value[key]}) > {MAX_NAME_LENGTH}", "long"))
    checks.append(_Check("model_a", value["name_a"], f"{value['name_a']} = {value['name_b']}", "self"))

    skip = None
    if shape == "counts":
        for col in ("wins_a", "wins_b", "ties", "ties_bothbad"):
            if col in table.columns:
                value[col], raw, rules = _count(table, col)
                checks += [_Check(col, raw, p, m) for p, m in rules]
            else:
                value[col] = "0.0"
        if "first" in table.columns:
            text = f"lower({_label(table, 'first')})"
            value["first"] = f"(CASE {text} WHEN 'a' THEN 0 WHEN '0' THEN 0 WHEN 'b' THEN 1 WHEN '1' THEN 1 END)"
            checks.append(_Check("first", f"CAST({table.column('first')} AS VARCHAR)",
                                 f"{value['first']} IS NULL", "first"))
    else:
        label_col = "winner" if shape == "battles" else "judge_preferred_model"
        allowed = BATTLE_OUTCOMES if shape == "battles" else JUDGE_VERDICTS
        label = _label(table, label_col)
        checks.insert(0, _Check(label_col, f"CAST({table.column(label_col)} AS VARCHAR)",
                                f"{label} IS NULL OR {label} NOT IN ({', '.join(map(_lit, allowed))})", "label"))
        for col, outcome in zip(("wins_a", "wins_b", "ties", "ties_bothbad"), allowed):
            value[col] = f"CAST({label} = {_lit(outcome)} AS DOUBLE)"
        if shape == "judgements":
            value["ties_bothbad"] = "0.0"
            skip = f"coalesce({label} = 'unknown', false)"
        value["first"] = "0"  # model_a is the answer shown first
    if time_column is not None:
        moment, raw = _moment(table, time_column)
        value["period"] = f"strftime(date_trunc({_lit(period)}, {moment}), '%Y-%m-%d')"
        checks.append(_Check(time_column, raw, f"{value['period']} IS NULL", "time"))
    extra = {}  # column key of the cell table -> its SQL name in the query
    for kind, names in (("covariate", covariates), ("contrast", contrasts)):
        for k, name in enumerate(names):
            number, raw, rules = _number(table, name)
            extra[f"{kind}:{name}"] = f"_{kind}{k}"
            value[f"_{kind}{k}"] = number
            checks += [_Check(name, raw, p, kind) for p, _ in rules]   # (said as a covariate, not a count)
            checks.append(_Check(name, raw, f"{number} IS NULL OR NOT isfinite({number})", kind))

    guard = f"NOT {skip} AND " if skip else ""
    # Raw logs repeat the same few values: group the raw records first (DuckDB's own GROUP BY
    # speed), then type, check and orient each distinct group once, weighted by its size. Count
    # rows carry their own counts, so they are checked row by row. With an identifier column,
    # the groups are the distinct records, so a group of more than one is a duplicate.
    ids = [c for c in ID_COLUMNS if c in table.columns] if shape != "counts" else []
    if shape == "counts":
        source_sql, weight = table.sql, "1"
    else:
        used = [c for c in table.columns if c in ("model_a", "model_b", "winner", "judge_preferred_model")
                or c == judge_column or c == time_column or c in covariates or c in contrasts or c in ids
                or (ids and c in cluster)]
        source_sql = (f"SELECT {', '.join(table.column(c) for c in used)}, count(*) AS _n FROM ({table.sql}) r "
                      "GROUP BY ALL")
        weight = "1" if drop_duplicates and ids else "_n"
    inner = [f"{expr} AS {_q(key)}" for key, expr in value.items()]
    inner += [f"{expr} AS {_q('_written_' + key)}" for key, expr in written.items()]
    inner += [f"{guard}coalesce({c.predicate}, false) AS _check{k}" for k, c in enumerate(checks)]
    inner.append("coalesce(" + " OR ".join(f"{w} <> {stripped_sql(w)}" for w in written.values()) + ", false) "
                 "AS _spaces")
    inner.append("coalesce(" + " OR ".join(f"{stripped_sql(written[k])} <> {value[k]}" for k in written)
                 + ", false) AS _unicode")
    inner.append(f"{skip} AS _skip" if skip else "false AS _skip")
    inner.append(f"{weight} AS _w")
    inner.append("_n - 1 AS _dup" if ids else "0 AS _dup")
    flip = "name_a > name_b"
    keys = ["a", "b"] + (["judge"] if judge_column else []) + (["first"] if "first" in value else []) \
        + (["period"] if time_column is not None else []) \
        + list(extra.values())
    oriented = [f"CASE WHEN {flip} THEN name_b ELSE name_a END AS a",
                f"CASE WHEN {flip} THEN name_a ELSE name_b END AS b"]
    spelled = [f"CASE WHEN {flip} THEN _written_name_b ELSE _written_name_a END AS _written_a",
               f"CASE WHEN {flip} THEN _written_name_a ELSE _written_name_b END AS _written_b"]
    if judge_column:
        oriented.append("judge")
        spelled.append("_written_judge")
    if "first" in value:
        oriented.append(f"CASE WHEN {flip} THEN 1 - first ELSE first END AS first")
    if time_column is not None:
        oriented.append("period")
    oriented += [q for key, q in extra.items() if key.startswith("covariate:")]
    oriented += [f"CASE WHEN {flip} THEN -{q} ELSE {q} END AS {q}" for key, q in extra.items()
                 if key.startswith("contrast:")]
    oriented += [f"CASE WHEN {flip} THEN wins_b ELSE wins_a END AS wins_a",
                 f"CASE WHEN {flip} THEN wins_a ELSE wins_b END AS wins_b",
                 ("ties + ties_bothbad" if both_bad_as_ties else "ties") + " AS ties", "ties_bothbad", "_skip"]
    outer = oriented + spelled + ["_spaces", "_unicode", "_w", "_dup", *[f"_check{k}" for k in range(len(checks))]]
    sums = [f"sum({c} * _w) FILTER (WHERE NOT _skip) AS {c}" for c in ("wins_a", "wins_b", "ties", "ties_bothbad")]
    tallies = ["sum(_w) AS records", "coalesce(sum(_w) FILTER (WHERE NOT _skip), 0) AS used",
               "coalesce(sum(_w) FILTER (WHERE _spaces), 0) AS spaces",
               "coalesce(sum(_w) FILTER (WHERE _unicode AND NOT _spaces), 0) AS unicode",
               "coalesce(sum(_dup), 0) AS duplicates",
               "coalesce(sum(_dup) FILTER (WHERE NOT _skip), 0) AS duplicates_used",
               "list(DISTINCT _written_a) AS _spelled_a", "list(DISTINCT _written_b) AS _spelled_b",
               *(["list(DISTINCT _written_judge) AS _spelled_judge"] if judge_column else []),
               *[f"coalesce(sum(_w) FILTER (WHERE _check{k}), 0) AS _check{k}" for k in range(len(checks))]]
    query = (f"SELECT {', '.join(keys)}, {', '.join(sums + tallies)} FROM (SELECT {', '.join(outer)} FROM "
             f"(SELECT {', '.join(inner)} FROM ({source_sql}) r)) GROUP BY ALL")
    try:
        frame = table.con.execute(query).df()
    except DUCKDB_ERRORS as err:
        raise table.error(err) from None
    failures = [int(frame[f"_check{k}"].sum()) for k in range(len(checks))]
    for check, n, k in zip(checks, failures, range(len(checks))):
        if n:
            _raise_first(table, check, n, guard, shape, what)
    n_records = int(frame["records"].sum())
    if n_records == 0:
        raise DataError(f"no comparisons{where}: the data are empty; pass at least one {what}.")
    dropped: dict[str, int] = {}
    notes: dict[str, int] = {}
    n_used = int(frame["used"].sum())
    n_duplicates = int(frame["duplicates"].sum())
    if drop_duplicates and n_duplicates:
        n_records += n_duplicates  # the groups were counted once each
        dropped[DROP_DUPLICATE] = int(frame["duplicates_used"].sum())
    if skip is not None and n_used < n_records - (n_duplicates if drop_duplicates else 0):
        if n_used == 0:
            raise DataError(f"no usable verdicts{where}: all {n_records} records are 'unknown'.")
        dropped[DROP_UNKNOWN] = n_records - n_used - (n_duplicates if drop_duplicates else 0)
    if int(frame["spaces"].sum()):
        notes[NOTE_SPACES] = int(frame["spaces"].sum())
    if int(frame["unicode"].sum()):
        notes[NOTE_UNICODE] = int(frame["unicode"].sum())
    warnings = _spelling_warnings(frame, judge_column is not None)
    unread = [c for c in table.columns if column_key(c) in COUNT_LIKE and shape != "counts"
              and c not in (*covariates, *contrasts, *cluster, by, time_column)]
    if unread:
        warnings.append(f"column(s) {', '.join(map(repr, unread))}{where} not read: each record counts as one "
                        "comparison. If a column holds the comparisons a row stands for, give the data as a count "
                        "table (model_a, model_b, wins_a, wins_b, ties) or repeat the rows; if it means something "
                        "else, leave it out or rename it to say so.")
    if n_duplicates:
        notes[NOTE_DUPLICATES] = n_duplicates
        warnings.append(_duplicates_sentence(n_duplicates, n_records, ids, drop_duplicates))
    clusters = None
    if cluster:  # the comparisons of each cell by cluster, beside the cells (the cells' number: _cell)
        frame["_cell"] = np.arange(len(frame))
        read = [c for c in table.columns if any(table.column(c) in expr for expr in value.values())]
        # with duplicates counted once, each distinct record once, as the cells count them
        records = (f"SELECT DISTINCT {', '.join(table.column(c) for c in used)} FROM ({table.sql}) r"
                   if drop_duplicates and ids else table.sql)
        clusters = _cluster_rows(table, shape, frame, keys, oriented, value, skip or "false", read, cluster, guard,
                                 what, records)
    frame = frame[frame["used"] > 0]
    frame = frame[keys + ["wins_a", "wins_b", "ties", "ties_bothbad", *(["_cell"] if cluster else [])]].rename(
        columns={"a": "model_a", "b": "model_b", **{q: key for key, q in extra.items()}})
    keys = list(frame.columns[: len(keys)])
    for col in ("wins_a", "wins_b", "ties", "ties_bothbad"):
        frame[col] = frame[col].astype(float).fillna(0.0)
    total = float(frame[["wins_a", "wins_b", "ties", "ties_bothbad"]].to_numpy().sum())
    if total >= MAX_COUNT:
        raise DataError(f"the counts{where} add up to {total:.4g} comparisons, more than 2^53 - 1; "
                        "totals that large cannot be represented exactly.")
    if frame["ties_bothbad"].sum():  # the convention followed, in the accounting
        if both_bad_as_ties:
            notes[bothbad.COUNTED] = int(frame["ties_bothbad"].sum())
        else:
            dropped[DROP_BOTHBAD] = int(frame["ties_bothbad"].sum())
    agreement = None
    if shape == "judgements" and "question_id" in table.columns:
        agreement = _agreement(table, value, skip)
    frame = frame.sort_values(keys, kind="stable").reset_index(drop=True)
    record = None
    if ID_COLUMN in table.columns:  # a duplicate (same record again) is counted once when dropped
        record = record_ids(table, shape, what, distinct=used if drop_duplicates and ids else None)
        # an id seen before, beyond the exact repeats (duplicates): the same id with other content
        conflicting = record.size - np.unique(record).size - (0 if drop_duplicates else n_duplicates)
        if conflicting > 0:
            warnings.append(f"{conflicting:,} {what}(s) repeat the '{ID_COLUMN}' of an earlier {what} with other "
                            "content (another pair, verdict or column read): ids that are not unique, or an export "
                            f"that changed; each such {what} is counted — check the '{ID_COLUMN}' column.")
    reading = {"both_bad_as_ties": both_bad_as_ties, "by": by, "drop_duplicates": bool(drop_duplicates)}
    return Cells(frame, n_records, dropped, notes, agreement, warnings,
                 period_unit=period if time_column is not None else "", clusters=clusters, ids=record,
                 reading=reading)


#: Notes (``Comparisons.notes``) of the reading rules.
NOTE_SPACES = "records with names stripped of surrounding whitespace"
NOTE_UNICODE = "records with names in another Unicode form or holding invisible characters (normalised)"
NOTE_DUPLICATES = "records repeating an earlier record (duplicates)"


def _column_list(names, kind: str, table: Table, where: str) -> list[str]:
    """Covariate or contrast column names, each once and present in the table."""
    names = list(column_names(names, f"{kind}s"))
    missing = [c for c in names if c not in table.columns]
    if missing:
        raise DataError(f"{kind} column(s) {', '.join(repr(c) for c in missing)} not found{where} "
                        f"(columns: {', '.join(table.columns)}).")
    return names


def _spelling_warnings(frame: pd.DataFrame, judges: bool) -> list[str]:
    """Names that several spellings became, and names that look alike (:mod:`bayesrank.data.names`)."""
    out = []
    for what, pairs in (("model name", (("a", "_spelled_a"), ("b", "_spelled_b"))),
                        ("judge name", (("judge", "_spelled_judge"),) if judges else ())):
        spellings: dict[str, set[str]] = {}
        for name_col, spelled_col in pairs:
            for name, written in zip(frame[name_col], frame[spelled_col]):
                spellings.setdefault(name, set()).update(w for w in written if w is not None)
        out += name_warnings(spellings, what)
    return out


def _duplicates_sentence(n: int, records: int, ids: Sequence[str], dropped: bool) -> str:
    same = ", ".join(ids)
    if dropped:
        return (f"{n:,} of {records:,} records repeat an earlier record in every column read (identifier {same}): "
                "probably exported twice; each was counted once (drop_duplicates=True)")
    return (f"{n:,} of {records:,} records repeat an earlier record in every column read (identifier {same}): "
            "probably exported twice, and counted as often as they appear; pass drop_duplicates=True "
            "(CLI: --drop-duplicates) to count each once")


def _cluster_rows(table: Table, shape: str, frame: pd.DataFrame, keys: list[str], oriented: list[str],
                  value: dict[str, str], skip: str, read: list[str], cluster: Sequence[str], guard: str, what: str,
                  records: str) -> Clusters:
    """The comparisons of each cell by cluster (:class:`~bayesrank.data.clusters.Clusters`), one
    row per record counted.

    Every distinct combination of the columns the cells are made of (``read``) is typed and
    oriented once, by the cells' own expressions (``value``, ``oriented``), and matched to its cell
    of ``frame`` (whose query has checked every one of those values); every distinct value of a
    cluster column is likewise typed, checked and numbered once, in the order of its name. The
    records are joined to both, so a log of many users is typed as its few distinct pairs and
    outcomes and its distinct users are, and come back as integer arrays — a cell number, each
    column's cluster code, the counts —, never as a frame of names. The rows are not added up
    by cell × cluster here: a log's records rarely repeat a user's pair, and
    :meth:`Comparisons.from_aggregate` sorts the rows by cell and cluster anyway, which is where
    it adds them up. A record without its cluster (outside the skipped verdicts, ``guard``) is
    refused like any bad value. ``records`` is the query of the records counted: the table, or
    its distinct records when duplicates are counted once (as the cells count them)."""
    con = table.con
    raw = [table.column(c) for c in read]
    named, checks, flags = [], [], []
    for k, name in enumerate(cluster):  # each distinct value once: its name, checks and number
        text, shown, rules, _ = _name(table, name)
        bad = [f"coalesce({p}, false) AS _bad{j}" for j, (p, _) in enumerate(rules)]
        named.append(f"CREATE OR REPLACE TEMP TABLE _cluster_names{k} AS SELECT {table.column(name)} AS _raw, "
                     f"{text} AS level, dense_rank() OVER (ORDER BY {text}) - 1 AS _number, {', '.join(bad)} "
                     f"FROM (SELECT DISTINCT {table.column(name)} FROM ({records}) r) r")
        for j, (p, m) in enumerate(rules):
            checks.append(_Check(name, shown, p, "cluster" if m == "is missing or empty" else m))
            flags.append(f"n{k}._bad{j} AS _check{len(flags)}")
    # each distinct combination of the cells' columns, typed and oriented once
    distinct = (f"SELECT {', '.join(f'_raw{k}' for k in range(len(raw)))}, {', '.join(oriented)} FROM (SELECT "
                f"{', '.join(f'r.{_q(c)} AS _raw{k}' for k, c in enumerate(read))}, "
                f"{', '.join(f'{expr} AS {_q(key)}' for key, expr in value.items())}, {skip} AS _skip "
                f"FROM (SELECT DISTINCT {', '.join(raw)} FROM ({table.sql}) r) r)")
    bare = [k.strip('"') for k in keys]
    cells = frame.loc[frame["used"] > 0, [*bare, "_cell"]]
    view = f"cells_{len(con.execute('SELECT * FROM duckdb_views()').fetchall())}"
    same = " AND ".join(f"{c} IS NOT DISTINCT FROM m._raw{k}" for k, c in enumerate(raw))
    match = " AND ".join(f"m.{k} = c.{k}" for k in keys)
    numbers = ", ".join(f"n{k}._number AS _number{k}" for k in range(len(cluster)))
    joins = " ".join(f"JOIN _cluster_names{k} n{k} ON {table.column(name)} IS NOT DISTINCT FROM n{k}._raw"
                     for k, name in enumerate(cluster))
    try:
        con.register(view, cells)
        for query in named:
            con.execute(query)
        # the counted records (skipped verdicts are not) joined to their cell (-1: a cell left
        # out) and to their clusters' numbers
        rows = con.execute(
            f"SELECT coalesce(m._cell, -1) AS _cell, {numbers}, m.wins_a, m.wins_b, m.ties, {', '.join(flags)} "
            f"FROM ({records}) r JOIN (SELECT m.*, c._cell FROM ({distinct}) m LEFT JOIN {view} c ON {match}) m "
            f"ON {same} {joins} WHERE NOT m._skip").fetchnumpy()
        for k, check in enumerate(checks):
            n = int(np.count_nonzero(rows[f"_check{k}"]))
            if n:
                _raise_first(table, check, n, guard, shape, what)
        counts = np.column_stack([np.asarray(rows[c], dtype=float) for c in ("wins_a", "wins_b", "ties")])
        used = np.flatnonzero((rows["_cell"] >= 0) & (counts.sum(axis=1) > 0))
        levels, codes = [], []
        for k in range(len(cluster)):  # each column's clusters that hold a comparison, numbered from 0
            number = np.asarray(rows[f"_number{k}"], dtype=np.int64)[used]
            names = dict(con.execute(f"SELECT DISTINCT _number, level FROM _cluster_names{k}").fetchall())
            present = np.bincount(number, minlength=len(names)) > 0
            levels.append(tuple(str(names[j]) for j in np.flatnonzero(present)))
            codes.append((np.cumsum(present) - 1)[number])
    except DUCKDB_ERRORS as err:
        raise table.error(err) from None
    finally:
        for k in range(len(cluster)):
            con.execute(f"DROP TABLE IF EXISTS _cluster_names{k}")
        con.unregister(view)
    return Clusters(tuple(cluster), tuple(levels), np.asarray(rows["_cell"], dtype=np.int64)[used],
                    np.column_stack(codes), counts[used])


def record_ids(table: Table, shape: str = "battles", what: str = "record",
               distinct: Sequence[str] | None = None) -> np.ndarray:
    """The digest of every record's ``id``, in the input's order.

    The id is text by the name rule (``1``, ``1.0`` and ``"1"`` are one id); its digest is DuckDB's
    64-bit ``hash`` of that text (one pass at the speed of reading: a cryptographic digest would
    take several times longer than the reading itself). 64 bits keep a billion ids apart with
    probability above 0.97. DuckDB does not promise the same ``hash`` in every version, so the
    digest of a fixed text (:func:`id_digest`) is kept with the ids, and ids digested differently
    are never compared (:func:`bayesrank.data.merge.check_compatible` says so).

    Parameters
    ----------
    table : Table
    shape, what : str
        The records' shape and what a record is called in messages.
    distinct : sequence of str, optional
        The columns that make a record (those :func:`aggregate` reads): a record equal to an
        earlier one in all of them is a duplicate and leaves no id of its own (the records of
        ``drop_duplicates=True``, each counted once).

    Raises
    ------
    DataError
        A record without an id (missing, empty, a boolean, a list), naming the first.
    """
    text, raw, rules, _ = _name(table, ID_COLUMN)
    checks = [_Check(ID_COLUMN, raw, predicate, problem) for predicate, problem in rules]
    flags = ", ".join(f"coalesce({c.predicate}, false) AS _check{k}" for k, c in enumerate(checks))
    first = "true"
    if distinct:
        first = (f"row_number() OVER (PARTITION BY {', '.join(table.column(c) for c in distinct)} "
                 "ORDER BY _record) = 1")
    numbered = f"SELECT *, row_number() OVER () AS _record FROM ({table.sql}) r"
    try:
        out = table.con.execute(f"SELECT hash({text}) AS id, {first} AS _first, {flags} FROM ({numbered}) r "
                                "ORDER BY _record").fetchnumpy()
    except DUCKDB_ERRORS as err:
        raise table.error(err) from None
    for k, check in enumerate(checks):
        n = int(np.sum(out[f"_check{k}"]))
        if n:
            _raise_first(table, check, n, "", shape, what)
    return np.asarray(out["id"], dtype=np.uint64)[np.asarray(out["_first"], dtype=bool)]


def id_digest() -> str:
    """How :func:`record_ids` digests ids here: DuckDB's version and its ``hash`` of a fixed text
    (two sets of ids are comparable when this is the same for both)."""
    with connection() as con:
        probe = con.execute(f"SELECT hash({_lit(ID_PROBE)})").fetchone()[0]
    return f"duckdb hash {int(probe)}"


def _raise_first(table: Table, check: _Check, n: int, guard: str, shape: str, what: str) -> None:
    """Read the table again for the first record failing ``check`` and raise its message."""
    try:
        row, raw = table.con.execute(
            f"SELECT _record, _raw FROM (SELECT row_number() OVER () - 1 AS _record, {check.raw} AS _raw, "
            f"{guard}coalesce({check.predicate}, false) AS _bad FROM ({table.sql}) r) WHERE _bad "
            "ORDER BY _record LIMIT 1").fetchone()
    except DUCKDB_ERRORS as err:
        raise table.error(err) from None
    raise DataError(_message(check, raw, int(row), n, shape, _where(table.source), what))


def _shown(value) -> str:
    if value is None:
        return "missing"
    text = str(value)
    if text.startswith('"') and text.endswith('"') and len(text) > 1:  # a JSON string
        with contextlib.suppress(ValueError):
            return repr(json.loads(text))
    if len(text) > 40:
        text = text[:37] + "..."
    try:
        float(text)
    except ValueError:
        return repr(text)
    return text  # a number, as written


def _message(check: _Check, value, row: int, n: int, shape: str, where: str, what: str) -> str:
    head, column, problem = f"{what} {row}{where}", check.column, check.problem
    if problem == "self":
        return f"{head} compares {_shown(value)} with itself ({n} such {what}s); remove self-comparisons."
    if problem == "label":
        allowed = BATTLE_OUTCOMES if shape == "battles" else JUDGE_VERDICTS
        return (f"{head}: column '{column}' has unknown outcome {_shown(value)} ({n} such {what}s); "
                f"allowed: {', '.join(repr(x) for x in allowed)}.")
    if problem == "first":
        return (f"{head}: column 'first' is {_shown(value)}; use 'a' or 0 (model_a shown first) or 'b' or 1 "
                "(model_b shown first).")
    if problem == "time":
        return (f"{head}: time column '{column}' = {_shown(value)} is not a date or timestamp ({n} such {what}s); "
                "write ISO 8601 dates or timestamps (2024-03-05, 2024-03-05T14:30:00Z) or Unix seconds, or "
                f"remove the {what}.")
    if problem == "cluster":
        return (f"{head}: cluster column '{column}' is missing or empty ({n} such {what}s); every {what} needs "
                f"its cluster (user, prompt, judge) — fill it in, or remove those {what}s yourself: none is "
                "left out silently.")
    if problem in ("covariate", "contrast"):
        return (f"{head}: {problem} '{column}' = {_shown(value)} is not a finite number ({n} such {what}s); a "
                f"{problem} is a number for every {what}: correct or fill it in, or leave the column out.")
    if problem == "long":
        return (f"{head}: column '{column}' holds a name of {len(str(value)):,} characters ({n} such {what}s), longer "
                f"than the {MAX_NAME_LENGTH:,} a model or judge name may have: check that the column holds names "
                "(not answers or prompts).")
    if problem == "is missing or empty":
        return (f"{head}: column '{column}' is missing or empty ({n} such {what}s); fill in the name or "
                f"remove the {what}.")
    if "name" in problem or "NUL" in problem:
        return (f"{head}: column '{column}' = {_shown(value)} {problem} ({n} such {what}s); names must be "
                "text (numbers are written as text), without NUL characters.")
    return (f"{head}: count '{column}' = {_shown(value)} {problem} ({n} such {what}s); counts must be "
            "non-negative whole numbers.")


def _agreement(table: Table, value: dict, skip: str | None) -> pd.DataFrame:
    """Share of identical verdicts of each pair of judges on the records (question, unordered
    pair) they share; a judge's repeated verdict on one record counts once (the first)."""
    qid = _name(table, "question_id")[0]
    label = _label(table, "judge_preferred_model")
    keep = f"WHERE NOT {skip}" if skip else ""
    sql = f"""
    WITH v AS (
        SELECT row_number() OVER () AS rec, {qid} AS q, {value['name_a']} AS na, {value['name_b']} AS nb,
               {value['judge']} AS judge, {label} AS verdict FROM ({table.sql}) r {keep}),
    o AS (
        SELECT rec, q, least(na, nb) AS lo, greatest(na, nb) AS hi, judge,
               (CASE verdict WHEN 'a' THEN 1 WHEN 'b' THEN -1 ELSE 0 END)
               * (CASE WHEN na > nb THEN -1 ELSE 1 END) AS v
        FROM v),
    f AS (SELECT q, lo, hi, judge, arg_min(v, rec) AS v FROM o GROUP BY ALL)
    SELECT x.judge AS judge_1, y.judge AS judge_2, count(*) AS shared,
           avg(CAST(x.v = y.v AS DOUBLE)) AS agreement
    FROM f x JOIN f y ON x.q = y.q AND x.lo = y.lo AND x.hi = y.hi AND x.judge < y.judge
    GROUP BY ALL ORDER BY ALL"""
    try:
        out = table.con.execute(sql).df()
    except DUCKDB_ERRORS as err:
        raise table.error(err) from None
    out["shared"] = out["shared"].astype(np.int64)
    out["agreement"] = out["agreement"].astype(float)
    for col in ("judge_1", "judge_2"):
        out[col] = out[col].astype(object)
    return out.reset_index(drop=True)


def cells_from_arrays(columns: Mapping[str, Sequence], *, shape: str = "counts", both_bad_as_ties: bool | None = None,
                      covariates: Sequence[str] = (), contrasts: Sequence[str] = (), source: str = "",
                      what: str = "row") -> Cells:
    """Aggregate per-row arrays (a mapping column → values) by the same rules."""
    frame = pd.DataFrame({k: (v if isinstance(v, (np.ndarray, pd.Series)) else list(v))
                          for k, v in columns.items() if v is not None})
    with connection() as con:
        table = table_from_frame(con, frame, source)
        return aggregate(table, shape, both_bad_as_ties=both_bad_as_ties, covariates=covariates,
                         contrasts=contrasts, what=what)


def names_as_text(values: Sequence, column: str, source: str = "", what: str = "entry") -> list[str]:
    """Names as text by the documented rule (see the module docstring), refusing what it refuses."""
    values = values.reset_index(drop=True) if isinstance(values, pd.Series) else list(values)  # a Series keeps its type
    with connection() as con:
        table = table_from_frame(con, pd.DataFrame({column: values}), source)
        text, raw, checks, _ = _name(table, column)
        for pred, problem in checks:
            n = con.execute(f"SELECT count(*) FROM ({table.sql}) r WHERE coalesce({pred}, false)").fetchone()[0]
            if n:
                _raise_first(table, _Check(column, raw, pred, problem), int(n), "", "counts", what)
        return [row[0] for row in con.execute(f"SELECT {text} FROM ({table.sql}) r").fetchall()]


__all__ = [
    "BATTLE_OUTCOMES", "Cells", "DROP_BOTHBAD", "DROP_DUPLICATE", "DROP_UNKNOWN", "DUCKDB_ERRORS", "ID_COLUMN",
    "ID_COLUMNS", "ID_PROBE", "JUDGE_VERDICTS", "MAX_COUNT", "MAX_NAME_LENGTH", "MAX_RECORD_BYTES", "NOTE_DUPLICATES",
    "NOTE_SPACES", "NOTE_UNICODE", "PERIODS", "SHAPES", "Table", "aggregate", "cells_from_arrays", "connection",
    "detect_shape", "id_digest", "names_as_text", "read_error", "record_ids", "require", "table_from_csv",
    "table_from_frame", "table_from_json_records", "table_from_parquet", "text_error"
]
