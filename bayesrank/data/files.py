"""Files → comparisons: CSV, Parquet, JSON (records, columns or a count table) and JSON lines.

The format comes from the suffix (``.gz`` compressed CSV / JSON / JSONL files are read too)
or from ``format=``; the records inside go to :mod:`bayesrank.data.records`.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from bayesrank.data.comparisons import Comparisons
from bayesrank.data.records import from_count_table, from_frame
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
#: Columns read as text from CSV files (so a model called "1.0" stays a name).
_NAME_COLUMNS = (
    "model_a", "model_b", "judge_model", "judge", "question_id", "winner",
    "judge_preferred_model", "first",
)


def read_count_table(path: str | Path, *, both_bad_as_ties: bool = False) -> Comparisons:
    """Read a count table JSON file (see :func:`from_count_table`); ``.gz`` is decompressed."""
    path = Path(path)
    table = _parse_json(_read_text(path), path)
    if not isinstance(table, Mapping):
        raise DataError(f"{path} is not a count table: expected a JSON object with keys "
                        f"'models', 'X', 'Y'.")
    return from_count_table(table, both_bad_as_ties=both_bad_as_ties, source=str(path))


# ---------------------------------------------------------------------- files
def read(
    path: str | Path, format: str | None = None, *, both_bad_as_ties: bool = False, covariates: Sequence[str] = (),
    contrasts: Sequence[str] = (), by: str | None = None,
) -> Comparisons:
    """Read comparisons from a CSV, Parquet, JSON or JSON-lines file.

    Parameters
    ----------
    path : str or Path
        The file; ``.gz`` compressed CSV / JSON / JSONL files are read too.
    format : {"csv", "parquet", "json", "jsonl", "counts"}, optional
        Overrides detection from the suffix. A JSON object with keys ``models``, ``X``,
        ``Y`` is a count table (``"counts"``); a JSON list of records, or one record per
        line (JSONL), is passed to :func:`from_frame`, as are CSV and Parquet tables.
    both_bad_as_ties : bool
        Count "both bad" ties as ties.
    covariates : sequence of str
        Numeric columns of the records to keep as per-cell context covariates.
    contrasts : sequence of str
        Numeric columns of ``model_a``'s value minus ``model_b``'s (style control).
    by : str, optional
        Category column grouping battle or count records (see :func:`from_frame`).

    Raises
    ------
    DataError
        Missing file, unknown suffix without ``format=``, unparseable file (with the line
        when the parser reports it), or invalid records (see :func:`from_frame`).
    """
    path = Path(path)
    if not path.is_file():
        what = "is a directory, not a file" if path.is_dir() else "does not exist"
        raise DataError(f"data file {path} {what}.")
    fmt = _format(path, format)
    if fmt == "counts":
        return read_count_table(path, both_bad_as_ties=both_bad_as_ties)
    if fmt == "json":
        content = _parse_json(_read_text(path), path, lines_ok=True)
        if isinstance(content, Mapping):
            df = _json_object_frame(content, path)
            if df is None:
                return from_count_table(content, both_bad_as_ties=both_bad_as_ties, source=str(path))
        else:
            df = _records_frame(content, path)
    else:
        df = {"csv": _read_csv, "parquet": _read_parquet, "jsonl": _read_jsonl}[fmt](path)
    return from_frame(df, both_bad_as_ties=both_bad_as_ties, covariates=covariates, contrasts=contrasts, by=by,
                      source=str(path))


def _format(path: Path, format: str | None) -> str:
    if format is not None:
        fmt = str(format).lower().lstrip(".")
        if fmt not in FORMATS:
            raise DataError(f"unknown format={format!r}; use one of {', '.join(FORMATS)}.")
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


def _read_text(path: Path) -> str:
    try:
        if path.suffix.lower() == ".gz":
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                return fh.read()
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, EOFError) as err:
        raise DataError(f"cannot read {path} as UTF-8 text: {err}.") from None


def _parse_json(text: str, path: Path, *, lines_ok: bool = False):
    """Parse a JSON document; with ``lines_ok`` a JSON-lines document is accepted too."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        if lines_ok and err.msg == "Extra data":
            return _parse_jsonl(text, path)
        raise DataError(
            f"{path} is not valid JSON (line {err.lineno}, column {err.colno}): {err.msg}; "
            f"fix the file or pass the right format= (CLI: --data-format)."
        ) from None


def _parse_jsonl(text: str, path: Path) -> list:
    records = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise DataError(
                f"{path} line {lineno} is not valid JSON (column {err.colno}): {err.msg}; "
                f"JSON-lines files need one complete JSON object per line."
            ) from None
    return records


def _read_jsonl(path: Path) -> pd.DataFrame:
    return _records_frame(_parse_jsonl(_read_text(path), path), path)


def _records_frame(records, path: Path) -> pd.DataFrame:
    if not isinstance(records, list):
        raise DataError(f"{path}: expected a list of records (JSON objects), got "
                        f"{type(records).__name__}.")
    if not records:
        raise DataError(f"no comparisons in {path}: the file holds no records.")
    bad = [i for i, r in enumerate(records) if not isinstance(r, Mapping)]
    if bad:
        raise DataError(f"record {bad[0]} in {path} is not a JSON object ({len(bad)} such "
                        f"records); each record needs named fields such as model_a, model_b.")
    return pd.DataFrame.from_records(records)


def _json_object_frame(content: Mapping, path: Path) -> pd.DataFrame | None:
    """A column-oriented JSON object as a table; None for a count table (keys models, X, Y)."""
    if {"models", "X", "Y"} & set(content):  # a (possibly incomplete) count table
        return None
    if content and all(isinstance(v, list) for v in content.values()):  # column-oriented
        try:
            return pd.DataFrame(dict(content))
        except ValueError as err:
            raise DataError(f"{path}: the JSON columns differ in length ({err}).") from None
    raise DataError(
        f"{path} holds a JSON object with keys {sorted(content)[:6]}; expected a count table "
        f"(keys 'models', 'X', 'Y'), a list of records, or one record per line (JSONL)."
    )


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, dtype={c: str for c in _NAME_COLUMNS}, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise DataError(f"no comparisons in {path}: the file is empty.") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as err:
        raise DataError(f"{path} is not a readable CSV file: {err}".rstrip() + ".") from None


def _read_parquet(path: Path) -> pd.DataFrame:
    try:
        return pd.read_parquet(path)
    except ImportError:
        raise DataError("reading Parquet needs pyarrow: pip install bayesrank[parquet].") from None
    except Exception as err:  # pyarrow raises its own error types
        raise DataError(f"{path} is not a readable Parquet file: {err}.") from None
