"""Readers: files, tables and records → :class:`~bayesrank.data.comparisons.Comparisons`.

Three record shapes are understood, told apart by their columns (see :func:`from_frame`):

* **battles** (Chatbot Arena): ``model_a, model_b, winner``;
* **judgements** (LLM judges): ``model_a, model_b, judge_model, judge_preferred_model``
  (``question_id`` optional);
* **counts** (already aggregated): ``model_a, model_b, wins_a, wins_b`` plus optional
  ``ties, ties_bothbad, judge, first``.

:func:`load` is the single entry point used by the API and the CLI.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import FIRST_A, FIRST_B, Comparisons
from bayesrank.errors import DataError

#: Outcome labels of Chatbot Arena battle records (column ``winner``).
BATTLE_OUTCOMES = ("model_a", "model_b", "tie", "tie (bothbad)")
#: Verdict labels of judge records (column ``judge_preferred_model``); "c" is a tie and
#: "unknown" verdicts are dropped and counted in ``Comparisons.dropped``.
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
        ("ties", "ties_bothbad", "judge", "first"),
    ),
}
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


# ---------------------------------------------------------------------- records
def from_battles(
    df: pd.DataFrame, *, both_bad_as_ties: bool = False, source: str = ""
) -> Comparisons:
    """Read Chatbot Arena battle records.

    Parameters
    ----------
    df : DataFrame
        One battle per row with columns ``model_a``, ``model_b`` and ``winner`` in
        :data:`BATTLE_OUTCOMES` (other columns are ignored). ``model_a`` is the model shown
        first, so every record gets ``first = 0``.
    both_bad_as_ties : bool
        Count "tie (bothbad)" as ties (default ``False``, the leaderbot paper's convention).
    source : str
        Provenance for messages.

    Returns
    -------
    Comparisons
        Cells per (pair, position).

    Raises
    ------
    DataError
        Missing columns, unknown ``winner`` labels, or any error of
        :meth:`Comparisons.from_cells` (naming the 0-based record).
    """
    _require(df, "battles", source)
    onehot = _outcomes(df["winner"], BATTLE_OUTCOMES, "winner", source)
    return Comparisons.from_cells(
        df["model_a"].to_numpy(object),
        df["model_b"].to_numpy(object),
        *onehot.T,
        first=np.full(len(df), FIRST_A),
        both_bad_as_ties=both_bad_as_ties,
        source=source,
        what="record",
    )


def from_judgements(df: pd.DataFrame, *, source: str = "") -> Comparisons:
    """Read LLM-judge records (MT-Bench style).

    Parameters
    ----------
    df : DataFrame
        One verdict per row with columns ``model_a``, ``model_b``, ``judge_model`` and
        ``judge_preferred_model`` in :data:`JUDGE_VERDICTS` (``a``, ``b``, ``c`` = tie,
        ``unknown``). ``model_a`` is the answer shown first, so ``first = 0``.
    source : str
        Provenance for messages.

    Returns
    -------
    Comparisons
        Cells per (pair, judge, position); ``unknown`` verdicts are left out and counted in
        ``dropped["unknown verdict"]``.

    Raises
    ------
    DataError
        Missing columns, unknown verdict labels, or any error of
        :meth:`Comparisons.from_cells` (naming the 0-based record in the input).
    """
    _require(df, "judgements", source)
    onehot = _outcomes(df["judge_preferred_model"], JUDGE_VERDICTS, "judge_preferred_model", source)
    keep = onehot[:, 3] == 0
    n_unknown = int((~keep).sum())
    if not keep.any():
        where = f" in {source}" if source else ""
        raise DataError(f"no usable verdicts{where}: all {len(df)} records are 'unknown'.")
    return Comparisons.from_cells(
        df["model_a"].to_numpy(object)[keep],
        df["model_b"].to_numpy(object)[keep],
        onehot[keep, 0],
        onehot[keep, 1],
        onehot[keep, 2],
        judge=df["judge_model"].to_numpy(object)[keep],
        first=np.full(int(keep.sum()), FIRST_A),
        dropped={"unknown verdict": n_unknown} if n_unknown else None,
        source=source,
        what="record",
        rows=np.flatnonzero(keep),
    )


def from_counts(
    df: pd.DataFrame, *, both_bad_as_ties: bool = False, source: str = ""
) -> Comparisons:
    """Read an aggregated count table in long form (e.g. :meth:`Comparisons.to_frame`).

    Parameters
    ----------
    df : DataFrame
        Columns ``model_a``, ``model_b``, ``wins_a``, ``wins_b`` and optionally ``ties``,
        ``ties_bothbad``, ``judge`` and ``first`` (``a``/``b`` or 0/1: which was shown
        first). Duplicate rows are summed; ``(b, a)`` rows are flipped onto ``(a, b)``.
    both_bad_as_ties : bool
        Count ``ties_bothbad`` as ties.
    source : str
        Provenance for messages.
    """
    _require(df, "counts", source)
    first = None
    if "first" in df.columns:
        first = _positions(df["first"], source)
    return Comparisons.from_cells(
        df["model_a"].to_numpy(object),
        df["model_b"].to_numpy(object),
        df["wins_a"].to_numpy(),
        df["wins_b"].to_numpy(),
        df["ties"].to_numpy() if "ties" in df.columns else None,
        df["ties_bothbad"].to_numpy() if "ties_bothbad" in df.columns else None,
        judge=df["judge"].to_numpy(object) if "judge" in df.columns else None,
        first=first,
        both_bad_as_ties=both_bad_as_ties,
        source=source,
        what="row",
    )


def from_frame(
    df: pd.DataFrame, *, both_bad_as_ties: bool = False, source: str = ""
) -> Comparisons:
    """Read a DataFrame of battle records, judge records or aggregated counts.

    The shape is detected from the columns: ``winner`` → :func:`from_battles`,
    ``judge_preferred_model`` → :func:`from_judgements`, ``wins_a``/``wins_b`` →
    :func:`from_counts` (see :data:`SHAPES`).

    Parameters
    ----------
    df : DataFrame
        The records; column names are stripped of surrounding spaces.
    both_bad_as_ties : bool
        Count "both bad" ties as ties (battles and counts).
    source : str
        Provenance for messages.

    Raises
    ------
    DataError
        When no shape matches: names the columns missing for the closest shape and lists the
        accepted column sets.
    """
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"expected a pandas DataFrame, got {type(df).__name__}.")
    df = df.rename(columns=lambda c: str(c).strip())
    shape = _detect_shape(df, source)
    if shape == "judgements":
        return from_judgements(df, source=source)
    reader = from_battles if shape == "battles" else from_counts
    return reader(df, both_bad_as_ties=both_bad_as_ties, source=source)


def _detect_shape(df: pd.DataFrame, source: str) -> str:
    columns = set(df.columns)
    for shape, marker in (("battles", "winner"), ("judgements", "judge_preferred_model")):
        if marker in columns:
            return shape
    if {"wins_a", "wins_b"} & columns:
        return "counts"
    closest = min(SHAPES, key=lambda k: len(set(SHAPES[k][0]) - columns))
    _require(df, closest, source)  # raises: a marker column is missing
    return closest  # pragma: no cover


def _require(df: pd.DataFrame, shape: str, source: str) -> None:
    required, _ = SHAPES[shape]
    missing = [c for c in required if c not in df.columns]
    if missing:
        where = f" in {source}" if source else ""
        accepted = "; ".join(
            f"{name}: {', '.join(req)}" + (f" [{', '.join(opt)}]" if opt else "")
            for name, (req, opt) in SHAPES.items()
        )
        raise DataError(
            f"missing column(s) {', '.join(repr(c) for c in missing)}{where} for {shape} records "
            f"(found: {', '.join(map(str, df.columns)) or 'none'}). Accepted column sets — "
            f"{accepted}; rename your columns to one of these."
        )


def _outcomes(labels: pd.Series, allowed: tuple[str, ...], column: str, source: str) -> np.ndarray:
    """One-hot ``(n, len(allowed))`` array of outcome labels; unknown labels raise."""
    text = labels.astype("string").str.strip()
    codes = pd.Categorical(text, categories=list(allowed)).codes
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        i = int(bad[0])
        where = f" in {source}" if source else ""
        raise DataError(
            f"record {i}{where}: column '{column}' has unknown outcome {labels.iloc[i]!r} "
            f"({bad.size} such records); allowed: {', '.join(repr(x) for x in allowed)}."
        )
    out = np.zeros((len(labels), len(allowed)))
    out[np.arange(len(labels)), codes] = 1.0
    return out


def _positions(values: pd.Series, source: str) -> np.ndarray:
    """Column ``first`` as 0 / 1 (accepts ``a``/``b`` or 0/1)."""
    mapping = {"a": FIRST_A, "b": FIRST_B, "0": FIRST_A, "1": FIRST_B}
    text = values.astype("string").str.strip().str.lower()
    codes = text.map(mapping)
    bad = np.flatnonzero(codes.isna().to_numpy())
    if bad.size:
        i = int(bad[0])
        where = f" in {source}" if source else ""
        raise DataError(
            f"row {i}{where}: column 'first' is {values.iloc[i]!r}; use 'a' or 0 (model_a shown "
            f"first) or 'b' or 1 (model_b shown first)."
        )
    return codes.to_numpy(dtype=np.int64)


# ---------------------------------------------------------------------- count tables
def from_count_table(
    table: Mapping, *, both_bad_as_ties: bool = False, source: str = ""
) -> Comparisons:
    """Read a leaderbot-style count table.

    Parameters
    ----------
    table : mapping
        Keys ``models`` (names), ``X`` (``(n, 2)`` 0-based index pairs) and ``Y`` (``(n, 3)``
        wins of the first, wins of the second, ties; or ``(n, 4)`` with "both bad" ties last).
    both_bad_as_ties : bool
        Count "both bad" ties as ties (default ``False``, the leaderbot paper's convention).
    source : str
        Provenance for messages.
    """
    where = f" in {source}" if source else ""
    missing = [k for k in ("models", "X", "Y") if k not in table]
    if missing:
        raise DataError(f"count table{where} lacks key(s) {missing}; expected 'models', 'X', 'Y'.")
    models = [str(m) for m in table["models"]]
    X = np.asarray(table["X"])
    Y = np.asarray(table["Y"], dtype=float)
    if X.ndim != 2 or X.shape[1] != 2:
        raise DataError(f"count table{where}: 'X' must be a list of [i, j] index pairs.")
    if Y.ndim != 2 or Y.shape[0] != X.shape[0] or Y.shape[1] not in (2, 3, 4):
        raise DataError(
            f"count table{where}: 'Y' must have one row per 'X' row with 2-4 counts "
            f"(wins of i, wins of j, ties, both-bad ties); got shape {Y.shape}."
        )
    bad = (X < 0) | (X >= len(models)) | (X != np.round(X))
    if bad.any():
        row = int(np.flatnonzero(bad.any(axis=1))[0])
        raise DataError(
            f"pair {row}{where}: index {X[row].tolist()} is not a valid position in 'models' "
            f"(0..{len(models) - 1})."
        )
    names = np.asarray(models, dtype=object)
    X = X.astype(np.int64)
    cols = [Y[:, k] if Y.shape[1] > k else np.zeros(len(Y)) for k in range(4)]
    return Comparisons.from_cells(
        names[X[:, 0]],
        names[X[:, 1]],
        *cols,
        items=sorted(models),
        both_bad_as_ties=both_bad_as_ties,
        source=source,
        what="pair",
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
    path: str | Path, format: str | None = None, *, both_bad_as_ties: bool = False
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
            return _from_json_object(content, path, both_bad_as_ties)
        df = _records_frame(content, path)
    else:
        df = {"csv": _read_csv, "parquet": _read_parquet, "jsonl": _read_jsonl}[fmt](path)
    return from_frame(df, both_bad_as_ties=both_bad_as_ties, source=str(path))


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
            f"'{''.join(path.suffixes) or '(none)'}'; pass format= one of {', '.join(FORMATS)}."
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
            f"fix the file or pass the right format=."
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


def _from_json_object(content: Mapping, path: Path, both_bad_as_ties: bool) -> Comparisons:
    if {"models", "X", "Y"} & set(content):  # a (possibly incomplete) count table
        return from_count_table(content, both_bad_as_ties=both_bad_as_ties, source=str(path))
    if content and all(isinstance(v, list) for v in content.values()):  # column-oriented
        try:
            df = pd.DataFrame(dict(content))
        except ValueError as err:
            raise DataError(f"{path}: the JSON columns differ in length ({err}).") from None
        return from_frame(df, both_bad_as_ties=both_bad_as_ties, source=str(path))
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


# ---------------------------------------------------------------------- entry point
def load(
    data, *, format: str | None = None, both_bad_as_ties: bool = False
) -> Comparisons:
    """Turn anything the API or CLI accepts into :class:`Comparisons`.

    Parameters
    ----------
    data : Comparisons, DataFrame, mapping, str or Path
        A :class:`Comparisons` is returned as is; a DataFrame goes to :func:`from_frame`; a
        mapping with keys ``models``, ``X``, ``Y`` to :func:`from_count_table`; a name in
        :data:`~bayesrank.data.bundled.DATASETS` to :func:`load_dataset`; any other string
        or path to :func:`read`.
    format : str, optional
        File format for :func:`read`.
    both_bad_as_ties : bool
        Count "both bad" ties as ties (ignored for a :class:`Comparisons`).

    Raises
    ------
    DataError
        When ``data`` is neither a bundled dataset nor an existing file, or cannot be read.
    """
    from bayesrank.data.bundled import DATASETS, load_dataset

    if isinstance(data, Comparisons):
        return data
    if isinstance(data, pd.DataFrame):
        return from_frame(data, both_bad_as_ties=both_bad_as_ties)
    if isinstance(data, Mapping):
        return from_count_table(data, both_bad_as_ties=both_bad_as_ties)
    if isinstance(data, str | Path):
        if isinstance(data, str) and data in DATASETS:
            return load_dataset(data, both_bad_as_ties=both_bad_as_ties)
        path = Path(data).expanduser()
        if path.exists():
            return read(path, format, both_bad_as_ties=both_bad_as_ties)
        raise DataError(
            f"'{data}' is neither a bundled dataset ({', '.join(DATASETS)}) nor an existing file; "
            f"check the spelling or the path."
        )
    raise DataError(
        f"cannot load data of type {type(data).__name__}; pass a file path, a bundled dataset "
        f"name, a pandas DataFrame or a Comparisons object."
    )
