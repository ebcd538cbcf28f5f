"""Readers: files, tables and records → :class:`~bayesrank.data.comparisons.Comparisons`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError


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
    """Read a count table JSON file (see :func:`from_count_table`)."""
    path = Path(path)
    try:
        table = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise DataError(f"{path} is not valid JSON (line {err.lineno}): {err.msg}.") from None
    return from_count_table(table, both_bad_as_ties=both_bad_as_ties, source=str(path))
