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
(``by=column``: language, task type), which then plays the role of the judge. Files are
turned into tables by :mod:`bayesrank.data.files`; :func:`bayesrank.data.load` is the single
entry point of the API and the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import FIRST_A, FIRST_B, Comparisons
from bayesrank.data.judges import agreement_table
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


# ---------------------------------------------------------------------- records
def from_battles(
    df: pd.DataFrame, *, both_bad_as_ties: bool = False, covariates: Sequence[str] = (),
    contrasts: Sequence[str] = (), by: str | None = None, source: str = ""
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
    covariates : sequence of str
        Numeric columns to keep as per-cell context covariates.
    contrasts : sequence of str
        Numeric columns of ``model_a``'s value minus ``model_b``'s (style control).
    by : str, optional
        A category column (language, task type) that groups the records like a judge.
    source : str
        Provenance for messages.

    Returns
    -------
    Comparisons
        Cells per (pair, position[, category][, covariate and contrast values]).

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
        judge=_category(df, by, source),
        covariates=_covariates(df, covariates, source),
        contrasts=_covariates(df, contrasts, source, "contrast"),
        both_bad_as_ties=both_bad_as_ties,
        source=source,
        what="record",
    )


def from_judgements(df: pd.DataFrame, *, covariates: Sequence[str] = (), contrasts: Sequence[str] = (),
                    source: str = "") -> Comparisons:
    """Read LLM-judge records (MT-Bench style).

    Parameters
    ----------
    df : DataFrame
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

    Returns
    -------
    Comparisons
        Cells per (pair, judge, position[, covariate values]); ``unknown`` verdicts are left
        out and counted in ``dropped["unknown verdict"]``.

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
    used = df[keep]
    cov = _covariates(used, covariates, source)
    data = Comparisons.from_cells(
        used["model_a"].to_numpy(object),
        used["model_b"].to_numpy(object),
        onehot[keep, 0],
        onehot[keep, 1],
        onehot[keep, 2],
        judge=used["judge_model"].to_numpy(object),
        first=np.full(int(keep.sum()), FIRST_A),
        covariates=cov,
        contrasts=_covariates(used, contrasts, source, "contrast"),
        dropped={"unknown verdict": n_unknown} if n_unknown else None,
        source=source,
        what="record",
        rows=np.flatnonzero(keep),
    )
    if "question_id" not in df.columns:
        return data
    verdict = onehot[keep, 0] - onehot[keep, 1]  # +1: model_a preferred, -1: model_b, 0: tie
    table = agreement_table(used["question_id"], used["model_a"], used["model_b"], used["judge_model"], verdict)
    return replace(data, agreement=table)


def from_counts(
    df: pd.DataFrame, *, both_bad_as_ties: bool = False, covariates: Sequence[str] = (),
    contrasts: Sequence[str] = (), by: str | None = None, source: str = ""
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
    covariates : sequence of str
        Numeric columns to keep as per-cell context covariates.
    contrasts : sequence of str
        Numeric columns of ``model_a``'s value minus ``model_b``'s (style control).
    by : str, optional
        A category column used as the grouping (instead of ``judge``).
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
        judge=_category(df, by, source) if by else (df["judge"].to_numpy(object) if "judge" in df.columns else None),
        first=first,
        covariates=_covariates(df, covariates, source),
        contrasts=_covariates(df, contrasts, source, "contrast"),
        both_bad_as_ties=both_bad_as_ties,
        source=source,
        what="row",
    )


def from_frame(
    df: pd.DataFrame, *, both_bad_as_ties: bool = False, covariates: Sequence[str] = (),
    contrasts: Sequence[str] = (), by: str | None = None, source: str = ""
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
    covariates : sequence of str
        Numeric columns to keep as per-cell context covariates.
    contrasts : sequence of str
        Numeric columns of ``model_a``'s value minus ``model_b``'s (style control).
    by : str, optional
        Category column grouping battle or count records (judge records are grouped by judge).
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
        if by:
            raise DataError(f"by={by!r}: judge records are grouped by their judge already; "
                            "group battle or count records by a category instead.")
        return from_judgements(df, covariates=covariates, contrasts=contrasts, source=source)
    reader = from_battles if shape == "battles" else from_counts
    return reader(df, both_bad_as_ties=both_bad_as_ties, covariates=covariates, contrasts=contrasts, by=by,
                  source=source)


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


def _covariates(df: pd.DataFrame, columns: Sequence[str], source: str, kind: str = "covariate") -> dict | None:
    """The named covariate (or contrast) columns of a record table (checked to exist)."""
    if isinstance(columns, str):
        columns = [columns]
    missing = [c for c in columns if c not in df.columns]
    if missing:
        where = f" in {source}" if source else ""
        raise DataError(
            f"{kind} column(s) {', '.join(repr(c) for c in missing)} not found{where} "
            f"(columns: {', '.join(map(str, df.columns))})."
        )
    return {c: df[c].to_numpy() for c in columns} or None


def _category(df: pd.DataFrame, column: str | None, source: str):
    """The category column grouping the records (``by=``), or None."""
    if column is None:
        return None
    if column not in df.columns:
        where = f" in {source}" if source else ""
        raise DataError(f"category column {column!r} (by=) not found{where} "
                        f"(columns: {', '.join(map(str, df.columns))}).")
    return df[column].to_numpy(object)


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


