"""Files → comparisons: CSV, Parquet, JSON (records, columns or a count table) and JSON lines.

The format comes from the suffix (``.gz`` compressed CSV / JSON / JSONL files are read too)
or from ``format=``; the records inside go to :mod:`bayesrank.data.records`.

**A path is a path.** Every file reaches the readers through :func:`opened`: the user's file
is linked under a plain name in a private folder (or, for standard input ``-``, a named pipe
or a character device such as ``/dev/stdin``, copied there in chunks), so no character of the
user's path — ``[1]``, ``*``, ``?``, ``~``, ``s3://`` — is ever read as a pattern or a
location. Its first bytes say what it is: gzip content is decompressed whatever its name;
another compression (zstd, xz, bzip2, zip, LZ4, 7-Zip), a spreadsheet, a database, UTF-16
text or a saved fit is refused saying what it is; a Parquet file given as another format is
refused saying so.

**Bounded memory.** Records stream through DuckDB; a JSON record may hold at most
:data:`~bayesrank.data.aggregate.MAX_RECORD_BYTES`, and one JSON document parsed in Python (a
count table, an object of columns) at most :data:`MAX_DOCUMENT_BYTES`; lines are read with
a length limit when a file is inspected in Python.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import json
import os
import shutil
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from bayesrank.data.aggregate import (
    DUCKDB_ERRORS,
    MAX_RECORD_BYTES,
    Table,
    connection,
    table_from_csv,
    table_from_frame,
    table_from_json_records,
    table_from_parquet,
    text_error,
)
from bayesrank.data.comparisons import Comparisons
from bayesrank.data.names import column_key
from bayesrank.data.records import from_count_table, from_table
from bayesrank.errors import DataError
from bayesrank.output.atomic import mark_input

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
#: The suffix a format's file gets where the readers see it.
_EXTENSION = {"csv": ".csv", "parquet": ".parquet", "json": ".json", "jsonl": ".jsonl", "counts": ".json"}
#: Largest JSON document parsed whole in Python (count tables, column-oriented objects);
#: record files of any size stream through DuckDB instead.
MAX_DOCUMENT_BYTES = 32 << 20
#: Name of standard input (``-``) in messages.
STDIN = "standard input"
#: First bytes of files that are not comparison text → what they are, and what to do.
_MAGIC = (
    (b"\x28\xb5\x2f\xfd", "a zstd-compressed file", "decompress it (zstd -d) or compress it with gzip (.gz), which "
                                                    "bayesrank reads directly"),
    (b"\xfd7zXZ\x00", "an xz-compressed file", "decompress it (xz -d) or compress it with gzip (.gz), which "
                                               "bayesrank reads directly"),
    (b"\x04\x22\x4d\x18", "an LZ4-compressed file", "decompress it (lz4 -d) or compress it with gzip (.gz)"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "extract the file from it"),
    (b"PK\x03\x04", "a zip archive (or an Excel .xlsx workbook)", "extract the file, or save the sheet as CSV"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an Excel .xls workbook", "save the sheet as CSV"),
    (b"SQLite format 3\x00", "an SQLite database", "export the table as CSV or Parquet"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 / NetCDF file (a saved fit?)", "pass comparison records; a saved fit is read "
                                                                   "with Fit.load (CLI: gars --fit)"),
    (b"%PDF", "a PDF document", "export the comparisons as CSV"),
    (b"\xff\xfe", "UTF-16 text", "save it as UTF-8"),
    (b"\xfe\xff", "UTF-16 text", "save it as UTF-8"),
)
_GZIP, _PARQUET, _BZIP2 = b"\x1f\x8b", b"PAR1", b"BZh"


@dataclass(frozen=True)
class Source:
    """A file as the readers see it.

    Attributes
    ----------
    path : Path
        What the readers open: a link to the user's file (or a copy of a pipe) under a plain
        name whose suffix says the format and the compression.
    name : str
        What messages call it: the path as the user gave it, or "standard input".
    format : str
        One of :data:`FORMATS`.
    """

    path: Path
    name: str
    format: str


@contextlib.contextmanager
def opened(path: str | Path, format: str | None = None) -> Iterator[Source]:
    """The user's file as a :class:`Source` for as long as the context lasts (module docstring).

    Parameters
    ----------
    path : str or Path
        A file, ``"-"`` for standard input, a named pipe or a character device.
    format : str, optional
        One of :data:`FORMATS`; from the suffix when None (a ``.gz`` suffix is skipped).

    Raises
    ------
    DataError
        The path does not exist (or is a dangling link), is a folder, is too long, cannot be
        read, or holds something that is not comparison text (module docstring); the format
        cannot be told.
    """
    stdin = str(path) == "-"
    name = STDIN if stdin else str(path)
    path = Path(path)
    piped = stdin or not stat.S_ISREG(_mode(path))
    fmt = _format(path, format, name, stdin=stdin)
    scratch = Path(tempfile.mkdtemp(prefix="bayesrank-input-"))
    try:
        if piped:  # standard input, a named pipe, /dev/stdin: copied in chunks (a pipe is read once)
            real = scratch / "input"
            try:
                with _pipe(path, stdin) as reader, open(real, "wb") as writer:
                    shutil.copyfileobj(reader, writer, 1 << 20)
            except OSError as err:
                raise DataError(f"cannot read {name}: {err.strerror or err}.") from None
        else:
            real = path.absolute()
        link = scratch / ("data" + _EXTENSION[fmt] + (".gz" if _sniff(real, name, fmt) else ""))
        if piped:
            os.replace(real, link)
        else:
            os.symlink(real, link)
        yield Source(link, name, fmt)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _pipe(path: Path, stdin: bool):
    """The bytes of standard input (left open) or of a pipe-like file."""
    if not stdin:
        return open(path, "rb")
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise DataError(f"{STDIN} cannot be read as bytes here; pass a file instead of '-'.")
    return contextlib.nullcontext(stream)


def _mode(path: Path) -> int:
    """The file's mode; a missing, dangling, unreadable, too long path or a folder raises."""
    try:
        mode = os.stat(path).st_mode
    except OSError as err:
        raise _path_error(path, err, "data file") from None
    if stat.S_ISDIR(mode):
        raise DataError(f"data file {path} is a directory, not a file.")
    if stat.S_ISSOCK(mode):
        raise DataError(f"data file {path} is a socket; pass a file, a named pipe or '-' (standard input).")
    if not os.access(path, os.R_OK):
        raise DataError(f"data file {path} cannot be read (permission denied).")
    return mode


def _path_error(path: Path, err: OSError, what: str) -> DataError:
    """Why a path cannot be opened, in words (not "does not exist" for what does exist)."""
    if err.errno == errno.ENAMETOOLONG:
        longest = max((len(os.fsencode(p)) for p in path.parts), default=0)
        return DataError(f"{what} path is too long for the file system ({len(os.fsencode(str(path))):,} bytes; its "
                         f"longest name has {longest:,} bytes, most file systems allow 255): use a shorter name.")
    if err.errno == errno.ELOOP:
        return DataError(f"{what} {path} is a loop of symbolic links.")
    if err.errno == errno.ENOTDIR:
        return DataError(f"{what} {path} cannot exist: a part of the path is a file, not a folder.")
    if err.errno == errno.EACCES:
        return DataError(f"{what} {path} cannot be reached (permission denied).")
    if err.errno == errno.ENOENT and path.is_symlink():
        return DataError(f"{what} {path} is a symbolic link to {os.readlink(path)}, which does not exist.")
    if err.errno == errno.ENOENT:
        return DataError(f"{what} {path} does not exist.")
    return DataError(f"cannot read {what} {path}: {err.strerror or err}.")


def _sniff(real: Path, name: str, fmt: str) -> bool:
    """Whether the file is gzip-compressed; refuses what is not comparison text (module docstring)."""
    try:
        with open(real, "rb") as fh:
            head = fh.read(16)
    except OSError as err:
        raise DataError(f"cannot read {name}: {err.strerror or err}.") from None
    if head.startswith(_GZIP):
        if fmt == "parquet":
            raise DataError(f"{name} is gzip-compressed; Parquet files compress inside, so pass the Parquet file "
                            "itself.")
        return True
    if name.lower().endswith(".gz"):
        raise DataError(f"{name} is not a readable gzip file: its name ends in .gz but its first bytes are not gzip's; "
                        "compress it again, or remove .gz from its name if it is plain text.")
    if head.startswith(_PARQUET) and fmt != "parquet":
        raise DataError(f"{name} is a Parquet file (its first bytes say so), not {fmt.upper()}; pass "
                        "format='parquet' (CLI: --data-format parquet) or give it a .parquet suffix.")
    bzip2 = head.startswith(_BZIP2) and head[3:4].isdigit() and head[4:10] == b"1AY&SY"
    for magic, what, fix in _MAGIC + (((_BZIP2, "a bzip2-compressed file", "decompress it (bunzip2) or compress it "
                                                 "with gzip (.gz)"),) if bzip2 else ()):
        if head.startswith(magic) and not (magic == b"PK\x03\x04" and fmt == "parquet"):
            raise DataError(f"{name} is {what} (its first bytes say so), not {fmt.upper()} text; {fix}.")
    return False


# ---------------------------------------------------------------------- files
def read_count_table(path: str | Path, *, both_bad_as_ties: bool | None = None, format: str = "counts") -> Comparisons:
    """Read a count table JSON file (see :func:`from_count_table`); ``.gz`` is decompressed."""
    with opened(path, format) as src:
        return _count_table(src, both_bad_as_ties)


def _count_table(src: Source, both_bad_as_ties: bool | None) -> Comparisons:
    table = parse_json(_read_text(src), src.name)
    if not isinstance(table, Mapping):
        raise DataError(f"{src.name} is not a count table: expected a JSON object with keys 'models', 'X', 'Y'.")
    return from_count_table(table, both_bad_as_ties=both_bad_as_ties, source=src.name)


def read(
    path: str | Path, format: str | None = None, *, both_bad_as_ties: bool | None = None,
    covariates: Sequence[str] = (), contrasts: Sequence[str] = (), by: str | None = None,
    cluster: Sequence[str] = (), drop_duplicates: bool = False, time_column: str | None = None, period: str = "week",
) -> Comparisons:
    """Read comparisons from a CSV, Parquet, JSON or JSON-lines file.

    Files are parsed, never executed. Records stream through DuckDB
    (:mod:`bayesrank.data.aggregate`): memory grows with the cells, not the records.

    Parameters
    ----------
    path : str or Path
        The file (read as named: no pattern matching; see the module docstring), or ``"-"``
        for standard input (with ``format``). ``.gz`` compressed CSV / JSON / JSONL files are
        read too.
    format : {"csv", "parquet", "json", "jsonl", "counts"}, optional
        Overrides detection from the suffix (CLI: ``--data-format``). A JSON object with keys
        ``models``, ``X``, ``Y`` is a count table (``"counts"``); a JSON list of records, one
        record per line (JSONL), or an object of equally long columns holds records, as do
        CSV and Parquet tables.
    both_bad_as_ties : bool, optional
        Count "both bad" ties as ties; None: the input's convention (battle records yes, counts
        no: :mod:`bayesrank.data.bothbad`).
    covariates : sequence of str
        Numeric columns of the records to keep as per-cell context covariates.
    contrasts : sequence of str
        Numeric columns of ``model_a``'s value minus ``model_b``'s (style control).
    by : str, optional
        Category column grouping battle or count records (see :func:`from_frame`).
    cluster : sequence of str
        One or two columns naming each record's cluster (user, prompt, judge): kept per cell
        (:mod:`bayesrank.data.clusters`) for intervals that allow for dependent votes.
    drop_duplicates : bool
        Count a record that repeats an earlier one exactly once (records with an identifier
        column; :mod:`bayesrank.data.aggregate`). Duplicates are reported either way.
    time_column, period : str
        A date or timestamp column and the calendar period grouping the records by it
        (:func:`~bayesrank.data.records.from_frame`).

    Raises
    ------
    DataError
        Missing file, unknown suffix without ``format=``, unparseable file (with the line
        when the parser reports it), or invalid records (:mod:`bayesrank.data.aggregate`).
    """
    if str(path) != "-":
        mark_input(path)   # the output writer never replaces it (bayesrank.output.atomic)
    with opened(path, format) as src:
        if src.format == "counts":
            _no_clusters(cluster, src.name)
            _no_time_column(src.name, time_column)
            return _count_table(src, both_bad_as_ties)
        kw = dict(both_bad_as_ties=both_bad_as_ties, covariates=covariates, contrasts=contrasts, by=by,
                  source=src.name, cluster=cluster, drop_duplicates=drop_duplicates, time_column=time_column,
                  period=period)
        with connection() as con:
            table = _table(con, src)
            if table is not None:
                return from_table(table, **kw)
            content = parse_json(_read_text(src), src.name)
            if not isinstance(content, Mapping):
                raise DataError(f"{src.name}: expected a list of records (JSON objects), got "
                                f"{type(content).__name__}.")
            frame = _json_object_frame(content, src.name)
            if frame is None:
                _no_clusters(cluster, src.name)
                _no_time_column(src.name, time_column)
                return from_count_table(content, both_bad_as_ties=both_bad_as_ties, source=src.name)
            return from_table(table_from_frame(con, frame, src.name), **kw)


def _table(con, src: Source) -> Table | None:
    """The records of a file as a table; None for a JSON document (a count table or an object
    of columns), which is parsed in Python."""
    if src.format == "csv":
        return table_from_csv(con, src.path, src.name, lambda: _locate_csv(src))
    if src.format == "parquet":
        return table_from_parquet(con, src.path, src.name)
    layout = "newline_delimited" if src.format == "jsonl" else _json_layout(src)
    if layout == "document":
        return None
    return table_from_json_records(con, src.path, src.name, layout, lambda: _locate_json(src, layout))


def _no_time_column(name: str, time_column: str | None) -> None:
    """Refuse a time column for a count table, which has no records to date."""
    if time_column is not None:
        raise DataError(f"{name} is a count table without record columns, so time_column={time_column!r} "
                        "cannot apply; pass the records with their dates instead.")


def _no_clusters(cluster: Sequence[str], source: str) -> None:
    """A count table (pairs × counts) has no record columns, so no cluster of a record."""
    if cluster:
        raise DataError(f"{source} is a count table (pairs and their counts), which has no record columns, so "
                        f"cluster={tuple(cluster)!r} cannot apply; pass the records (one comparison per row, with "
                        "the cluster column).")


def read_frame(path: str | Path, format: str | None = None) -> pd.DataFrame:
    """The records of a CSV, Parquet, JSON or JSON-lines file as a table, with no validation
    of their values (for readers of other record layouts, such as :mod:`bayesrank.gars.dml`).

    The file is opened and its columns checked by the same rules as :func:`read`'s (no
    patterns, duplicate or case-colliding columns and keys refused); CSV values are text,
    JSON values their JSON text (numbers written as numbers, strings unquoted), Parquet
    values keep their types.

    Raises
    ------
    DataError
        As :func:`read`, and for a count table (which has no records).
    """
    with opened(path, format) as src, connection() as con:
        table = _table(con, src) if src.format != "counts" else None
        if table is None:
            content = parse_json(_read_text(src), src.name)
            frame = _json_object_frame(content, src.name) if isinstance(content, Mapping) else None
            if frame is None:
                raise DataError(f"{src.name} is a count table (keys 'models', 'X', 'Y') or not a table at all, "
                                "not a table of records.")
            return frame
        select = ", ".join(
            (f"CASE WHEN json_type({table.column(c)}) = 'NULL' THEN NULL ELSE {table.column(c)} ->> '$' END"
             if kind == "JSON" else table.column(c)) + f" AS \"{c.replace(chr(34), chr(34) * 2)}\""
            for c, kind in table.columns.items())
        try:
            return con.execute(f"SELECT {select} FROM ({table.sql}) r").df()
        except DUCKDB_ERRORS as err:
            raise table.error(err) from None


def _format(path: Path, format: str | None, name: str, stdin: bool = False) -> str:
    if format is not None:
        fmt = str(format).lower().lstrip(".")
        if fmt not in FORMATS:
            raise DataError(f"unknown format={format!r} (CLI: --data-format); use one of {', '.join(FORMATS)}.")
        return fmt
    if stdin:
        raise DataError(f"{STDIN} ('-') has no suffix to tell its format from; pass format= (CLI: --data-format) "
                        f"one of {', '.join(FORMATS)}.")
    suffixes = [x.lower() for x in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    fmt = _SUFFIXES.get(suffixes[-1] if suffixes else "")
    if fmt is None:
        raise DataError(
            f"cannot tell the format of {name} from its suffix "
            f"'{''.join(path.suffixes) or '(none)'}'; pass format= (CLI: --data-format) one of {', '.join(FORMATS)}."
        )
    return fmt


def _open_text(path: Path):
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig", newline="")
    return open(path, encoding="utf-8-sig", newline="")


def _read_text(src: Source) -> str:
    """The whole file as text, refused beyond :data:`MAX_DOCUMENT_BYTES` (decompressed)."""
    try:
        with _open_text(src.path) as fh:
            text = fh.read(MAX_DOCUMENT_BYTES + 1)
    except (OSError, UnicodeDecodeError, EOFError, zlib.error) as err:
        raise text_error(src.path, err, src.name) from None
    if len(text) > MAX_DOCUMENT_BYTES:
        raise DataError(f"{src.name} is larger than {MAX_DOCUMENT_BYTES >> 20} MB for one JSON document (a count "
                        "table or an object of columns); write the records as JSON lines (one record per line), "
                        "CSV or Parquet, which are read in bounded memory.")
    return text


def _json_layout(src: Source) -> str:
    """"array" (a list of records), "newline_delimited" (one record per line) or "document"
    (one JSON object: a count table or columns), from the start of the file."""
    try:
        with _open_text(src.path) as fh:
            head = fh.read(1 << 16)
            first = head.lstrip()[:1]
            if first == "[":
                return "array"
            if first != "{":
                return "document"
            fh.seek(0)
            line = fh.readline(MAX_RECORD_BYTES + 1).strip()
            rest = fh.read(1 << 12).strip()
    except (OSError, UnicodeDecodeError, EOFError, zlib.error) as err:
        raise text_error(src.path, err, src.name) from None
    if len(line) > MAX_RECORD_BYTES:
        return "document"  # too long for one record: a document, or nothing bayesrank reads
    try:
        json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return "document"  # an object spread over several lines
    return "newline_delimited" if rest else "document"


def _lines(fh, limit: int):
    """(line number, line) of a text file, each line read with at most ``limit`` characters
    (a longer line is returned cut, ending without a line break)."""
    number = 0
    while True:
        line = fh.readline(limit)
        if not line:
            return
        number += 1
        yield number, line
        while len(line) == limit and not line.endswith(("\n", "\r")):  # skip the rest of a long line
            line = fh.readline(limit)


def _locate_json(src: Source, fmt: str) -> DataError | None:
    """The first syntax error of a malformed JSON / JSON-lines file, with its line and column
    (Python's parser, line by line for JSON lines so memory stays bounded)."""
    if fmt != "newline_delimited":
        try:
            parse_json(_read_text(src), src.name)
        except DataError as err:
            return err
        return None
    try:
        with _open_text(src.path) as fh:
            for lineno, line in _lines(fh, MAX_RECORD_BYTES + 1):
                if len(line) > MAX_RECORD_BYTES:
                    return DataError(f"{src.name} line {lineno} holds more than {MAX_RECORD_BYTES >> 20} MB; a "
                                     "comparison record is a few names and counts: check that the file holds "
                                     "comparison records, one per line.")
                if not line.strip():
                    continue
                try:
                    json.loads(line)
                except json.JSONDecodeError as err:
                    return DataError(f"{src.name} line {lineno} is not valid JSON (column {err.colno}): {err.msg}; "
                                     "JSON-lines files need one complete JSON object per line.")
                except RecursionError:
                    return DataError(f"{src.name} line {lineno} is nested too deeply to be a comparison record.")
    except (OSError, UnicodeDecodeError, EOFError, zlib.error) as err:
        return text_error(src.path, err, src.name)
    return None


def _locate_csv(src: Source) -> DataError | None:
    """What DuckDB found wrong in a CSV file, when it is a line ending: the first line that
    ends differently from the header (mixed line endings), named."""
    names = {"\r\n": "CRLF (\\r\\n)", "\n": "LF (\\n)", "\r": "CR (\\r)"}
    try:
        with _open_text(src.path) as fh:
            expected = None
            for lineno, line in _lines(fh, 1 << 20):
                ending = next((e for e in ("\r\n", "\n", "\r") if line.endswith(e)), None)
                if ending is None or (line.count('"') % 2):  # a cut long line, or a quoted line break
                    return None
                if expected is None:
                    expected = ending
                elif ending != expected:
                    return DataError(f"{src.name} mixes line endings: line 1 ends with {names[expected]} but line "
                                     f"{lineno} with {names[ending]}; save the file with one kind of line ending.")
    except (OSError, UnicodeDecodeError, EOFError, zlib.error):
        return None
    return None


def _no_duplicates(pairs):
    out, keys = {}, {}
    for key, value in pairs:
        folded = column_key(key)
        if folded in keys:
            raise _DuplicateKey(key if keys[folded] == key else f"{keys[folded]!r} and {key!r}")
        out[key], keys[folded] = value, key
    return out


class _DuplicateKey(ValueError):
    pass


def parse_json(text: str, source: str):
    """Parse one JSON document strictly: duplicate keys (also keys that differ only by letter
    case or surrounding spaces) and NaN / Infinity literals are refused, deep nesting is
    reported instead of crashing."""
    def constant(name):
        raise _DuplicateKey(f"\x00{name}")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=constant)
    except _DuplicateKey as err:
        key = err.args[0]
        if key.startswith("\x00"):
            raise DataError(f"{source} holds the non-standard JSON value {key[1:]}; write null or a number.") from None
        if key.startswith("'"):
            raise DataError(f"{source} has the keys {key} in one JSON object, which differ only by letter case; "
                            "keep one of them.") from None
        raise DataError(f"{source} repeats the key {key!r} in one JSON object; keep one value per key.") from None
    except json.JSONDecodeError as err:
        raise DataError(
            f"{source} is not valid JSON (line {err.lineno}, column {err.colno}): {err.msg}; "
            f"fix the file or pass the right format= (CLI: --data-format)."
        ) from None
    except RecursionError:
        raise DataError(f"{source} is nested too deeply to be comparison data; expected a count table "
                        "or records of names and counts.") from None


def _json_object_frame(content: Mapping, source: str) -> pd.DataFrame | None:
    """A column-oriented JSON object as a table; None for a count table (keys models, X, Y)."""
    if {"models", "X", "Y"} & set(content):  # a (possibly incomplete) count table
        return None
    if content and all(isinstance(v, list) for v in content.values()):  # column-oriented
        lengths = {k: len(v) for k, v in content.items()}
        if len(set(lengths.values())) > 1:
            raise DataError(f"{source}: the JSON columns differ in length ({lengths}); give every column one "
                            "value per record.")
        return pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in content.items()})
    raise DataError(
        f"{source} holds a JSON object with keys {sorted(content)[:6]}; expected a count table "
        f"(keys 'models', 'X', 'Y'), a list of records, or one record per line (JSONL)."
    )


__all__ = [
    "FORMATS", "MAX_DOCUMENT_BYTES", "STDIN", "Source", "opened", "parse_json", "read", "read_count_table",
    "read_frame"
]
