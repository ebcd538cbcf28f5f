"""Files → comparisons: CSV, Parquet, JSON (records, columns or a count table) and JSON lines.

The format comes from the suffix (``.gz`` compressed CSV / JSON / JSONL files are read too)
or from ``format=``; the records inside go to :mod:`bayesrank.data.records`.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from bayesrank.data.aggregate import (
    DUCKDB_ERRORS,
    connection,
    read_error,
    table_from_csv,
    table_from_frame,
    table_from_json_records,
    table_from_parquet,
    text_error,
)
from bayesrank.data.comparisons import Comparisons
from bayesrank.data.records import from_count_table, from_table
from bayesrank.errors import DataError

#: File formats understood by :func:`read`.
FORMATS = ("csv", "parquet", "json", "jsonl", "counts")
_SUFFIXES = {
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
#: Largest JSON document parsed whole in Python (count tables, column-oriented objects);
#: record files of any size stream through DuckDB instead.
MAX_DOCUMENT_BYTES = 1 << 30


def read_count_table(path: str | Path, *, both_bad_as_ties: bool = False) -> Comparisons:
    """Read a count table JSON file (see :func:`from_count_table`); ``.gz`` is decompressed."""
    path = Path(path)
    table = parse_json(_read_text(path), str(path))
    if not isinstance(table, Mapping):
        raise DataError(f"{path} is not a count table: expected a JSON object with keys "
                        f"'models', 'X', 'Y'.")
    return from_count_table(table, both_bad_as_ties=both_bad_as_ties, source=str(path))


# ---------------------------------------------------------------------- files
def read(
    path: str | Path, format: str | None = None, *, both_bad_as_ties: bool = False, covariates: Sequence[str] = (),
    contrasts: Sequence[str] = (), by: str | None = None, cluster: Sequence[str] = (),
) -> Comparisons:
    """Read comparisons from a CSV, Parquet, JSON or JSON-lines file.

    Files are parsed, never executed. Records stream through DuckDB
    (:mod:`bayesrank.data.aggregate`): memory grows with the cells, not the records.

    Parameters
    ----------
    path : str or Path
        The file; ``.gz`` compressed CSV / JSON / JSONL files are read too.
    format : {"csv", "parquet", "json", "jsonl", "counts"}, optional
        Overrides detection from the suffix (CLI: ``--data-format``). A JSON object with keys
        ``models``, ``X``, ``Y`` is a count table (``"counts"``); a JSON list of records, one
        record per line (JSONL), or an object of equally long columns holds records, as do
        CSV and Parquet tables.
    both_bad_as_ties : bool
        Count "both bad" ties as ties.
    covariates : sequence of str
        Numeric columns of the records to keep as per-cell context covariates.
    contrasts : sequence of str
        Numeric columns of ``model_a``'s value minus ``model_b``'s (style control).
    by : str, optional
        Category column grouping battle or count records (see :func:`from_frame`).
    cluster : sequence of str
        One or two columns naming each record's cluster (user, prompt, judge): kept per cell
        (:mod:`bayesrank.data.clusters`) for intervals that allow for dependent votes.

    Raises
    ------
    DataError
        Missing file, unknown suffix without ``format=``, unparseable file (with the line
        when the parser reports it), or invalid records (:mod:`bayesrank.data.aggregate`).
    """
    path = Path(path)
    _check_file(path)
    fmt = _format(path, format)
    source = str(path)
    if fmt == "counts":
        _no_clusters(cluster, source)
        return read_count_table(path, both_bad_as_ties=both_bad_as_ties)
    kw = dict(both_bad_as_ties=both_bad_as_ties, covariates=covariates, contrasts=contrasts, by=by, source=source,
              cluster=cluster)
    with connection() as con:
        if fmt == "csv":
            return from_table(table_from_csv(con, path, source), **kw)
        if fmt == "parquet":
            return from_table(table_from_parquet(con, path, source), **kw)
        if fmt == "jsonl":
            return from_table(table_from_json_records(con, path, source, "newline_delimited", _locate), **kw)
        layout = _json_layout(path)
        if layout in ("array", "newline_delimited"):
            return from_table(table_from_json_records(con, path, source, layout, _locate), **kw)
        content = parse_json(_read_text(path), source)
        if not isinstance(content, Mapping):
            raise DataError(f"{path}: expected a list of records (JSON objects), got {type(content).__name__}.")
        frame = _json_object_frame(content, path)
        if frame is None:
            _no_clusters(cluster, source)
            return from_count_table(content, both_bad_as_ties=both_bad_as_ties, source=source)
        return from_table(table_from_frame(con, frame, source), **kw)


def _no_clusters(cluster: Sequence[str], source: str) -> None:
    """A count table (pairs × counts) has no record columns, so no cluster of a record."""
    if cluster:
        raise DataError(f"{source} is a count table (pairs and their counts), which has no record columns, so "
                        f"cluster={tuple(cluster)!r} cannot apply; pass the records (one comparison per row, with "
                        "the cluster column).")


def read_frame(path: str | Path, format: str | None = None) -> pd.DataFrame:
    """The records of a CSV, Parquet, JSON or JSON-lines file as a table, with the column types
    DuckDB detects and no validation (for readers of other record layouts, such as
    :mod:`bayesrank.dml`).

    Raises
    ------
    DataError
        As :func:`read`, and for a count table (which has no records).
    """
    path = Path(path)
    _check_file(path)
    fmt = _format(path, format)
    source = str(path)
    layout = "newline_delimited" if fmt == "jsonl" else _json_layout(path) if fmt == "json" else None
    if fmt == "counts" or (fmt == "json" and layout not in ("array", "newline_delimited")):
        content = parse_json(_read_text(path), source)
        frame = _json_object_frame(content, path) if isinstance(content, Mapping) else None
        if frame is None:
            raise DataError(f"{path} is a count table (keys 'models', 'X', 'Y') or not a table at all, "
                            "not a table of records.")
        return frame
    quoted = "'" + str(path).replace("'", "''") + "'"
    reader = {"csv": f"read_csv({quoted})", "parquet": f"read_parquet({quoted})"}.get(
        fmt, f"read_json({quoted}, format='{layout}')")
    with connection() as con:
        try:
            return con.sql(f"SELECT * FROM {reader}").df()
        except DUCKDB_ERRORS as err:
            raise read_error(err, source, {"csv": "CSV", "parquet": "Parquet"}.get(fmt, "JSON")) from None


def _check_file(path: Path) -> None:
    if not path.is_file():
        what = "is a directory, not a file" if path.is_dir() else "does not exist"
        raise DataError(f"data file {path} {what}.")


def _format(path: Path, format: str | None) -> str:
    if format is not None:
        fmt = str(format).lower().lstrip(".")
        if fmt not in FORMATS:
            raise DataError(f"unknown format={format!r} (CLI: --data-format); use one of {', '.join(FORMATS)}.")
        return fmt
    suffixes = [x.lower() for x in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    fmt = _SUFFIXES.get(suffixes[-1] if suffixes else "")
    if fmt is None:
        raise DataError(
            f"cannot tell the format of {path} from its suffix "
            f"'{''.join(path.suffixes) or '(none)'}'; pass format= (CLI: --data-format) one of {', '.join(FORMATS)}."
        )
    return fmt


def _open_text(path: Path):
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig")
    return open(path, encoding="utf-8-sig")


def _read_text(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_DOCUMENT_BYTES:
            raise DataError(f"{path} is larger than {MAX_DOCUMENT_BYTES >> 20} MB for one JSON document; "
                            "write the records as JSON lines (one record per line), CSV or Parquet.")
        with _open_text(path) as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError, EOFError, zlib.error) as err:
        raise text_error(path, err) from None


def _json_layout(path: Path) -> str:
    """"array" (a list of records), "newline_delimited" (one record per line) or "document"
    (one JSON object: a count table or columns), from the start of the file."""
    try:
        with _open_text(path) as fh:
            head = fh.read(1 << 16)
            first = head.lstrip()[:1]
            if first == "[":
                return "array"
            if first != "{":
                return "document"
            fh.seek(0)
            line = fh.readline(1 << 26).strip()
            rest = fh.read(1 << 12).strip()
    except (OSError, UnicodeDecodeError, EOFError, zlib.error) as err:
        raise text_error(path, err) from None
    try:
        json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return "document"  # an object spread over several lines
    return "newline_delimited" if rest else "document"


def _locate(path: Path, fmt: str) -> DataError | None:
    """The first syntax error of a malformed JSON / JSON-lines file, with its line and column
    (Python's parser, line by line for JSON lines so memory stays bounded)."""
    source = str(path)
    if fmt != "newline_delimited":
        try:
            parse_json(_read_text(path), source)
        except DataError as err:
            return err
        return None
    try:
        with _open_text(path) as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    json.loads(line)
                except json.JSONDecodeError as err:
                    return DataError(f"{source} line {lineno} is not valid JSON (column {err.colno}): {err.msg}; "
                                     "JSON-lines files need one complete JSON object per line.")
                except RecursionError:
                    return DataError(f"{source} line {lineno} is nested too deeply to be a comparison record.")
    except (OSError, UnicodeDecodeError, EOFError, zlib.error) as err:
        return text_error(path, err)
    return None


def _no_duplicates(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


class _DuplicateKey(ValueError):
    pass


def parse_json(text: str, source: str):
    """Parse one JSON document strictly: duplicate keys and NaN / Infinity literals are refused,
    deep nesting is reported instead of crashing."""
    def constant(name):
        raise _DuplicateKey(f"\x00{name}")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=constant)
    except _DuplicateKey as err:
        key = err.args[0]
        if key.startswith("\x00"):
            raise DataError(f"{source} holds the non-standard JSON value {key[1:]}; write null or a number.") from None
        raise DataError(f"{source} repeats the key {key!r} in one JSON object; keep one value per key.") from None
    except json.JSONDecodeError as err:
        raise DataError(
            f"{source} is not valid JSON (line {err.lineno}, column {err.colno}): {err.msg}; "
            f"fix the file or pass the right format= (CLI: --data-format)."
        ) from None
    except RecursionError:
        raise DataError(f"{source} is nested too deeply to be comparison data; expected a count table "
                        "or records of names and counts.") from None


def _json_object_frame(content: Mapping, path: Path) -> pd.DataFrame | None:
    """A column-oriented JSON object as a table; None for a count table (keys models, X, Y)."""
    if {"models", "X", "Y"} & set(content):  # a (possibly incomplete) count table
        return None
    if content and all(isinstance(v, list) for v in content.values()):  # column-oriented
        lengths = {k: len(v) for k, v in content.items()}
        if len(set(lengths.values())) > 1:
            raise DataError(f"{path}: the JSON columns differ in length ({lengths}); give every column one "
                            "value per record.")
        return pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in content.items()})
    raise DataError(
        f"{path} holds a JSON object with keys {sorted(content)[:6]}; expected a count table "
        f"(keys 'models', 'X', 'Y'), a list of records, or one record per line (JSONL)."
    )
