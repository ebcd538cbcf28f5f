"""The one CSV writer: every CSV bayesrank writes (leaderboards, GARS and DML tables, the DML
labelling policy) is made by :func:`csv_text`, which defuses spreadsheet formulas.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or a carriage
return before one) as a formula, so a model named ``=HYPERLINK(...)`` would run when the file
is opened. Every text cell and header starting with one of :data:`FORMULA_START` is written
with a leading single quote (the OWASP advice), which spreadsheets show as text. Numbers are
written as numbers (a negative score stays ``-0.5``). The JSON outputs and saved fits keep
names exactly as read.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING

from bayesrank.output.atomic import write_text

if TYPE_CHECKING:  # (the CLI imports this module; `bayesrank --help` does not import pandas)
    import pandas as pd

#: Leading characters that make a spreadsheet treat a CSV cell as a formula (OWASP).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def defused(value):
    """A cell value as written to CSV: text starting like a formula gets a leading quote."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_START) else value


def csv_text(frame: pd.DataFrame, **kwargs) -> str:
    """A table as CSV text, formula-like text cells and headers defused (module docstring).

    Parameters
    ----------
    frame : DataFrame
    **kwargs
        Passed to :meth:`pandas.DataFrame.to_csv` (``float_format``, ...); the index is
        never written. When a text cell holds a carriage return, which CSV writers leave
        unquoted (a reader would take it for the end of a line), every text cell is quoted.
    """
    safe = frame.copy()
    safe.columns = [defused(str(c)) for c in safe.columns]
    carriage_return = any("\r" in c for c in safe.columns)
    for k in range(safe.shape[1]):
        column = safe.iloc[:, k]
        if column.dtype == object or str(column.dtype) in ("str", "string", "category"):
            column = column.astype(object).map(defused)
            safe.isetitem(k, column)
            carriage_return = carriage_return or any(isinstance(v, str) and "\r" in v for v in column)
    if carriage_return:  # left unquoted by CSV writers, a lone CR reads as a line end: quote the text
        kwargs.setdefault("quoting", csv.QUOTE_NONNUMERIC)
    buffer = io.StringIO()
    safe.to_csv(buffer, index=False, **kwargs)
    return buffer.getvalue()


def write_csv(frame: pd.DataFrame, path: str | Path, overwrite: bool = False, **kwargs) -> list[Path]:
    """Write :func:`csv_text` of ``frame`` to ``path`` through the atomic writer
    (:func:`bayesrank.output.atomic.write_files`); returns the replaced files."""
    return write_text(path, csv_text(frame, **kwargs), overwrite)


__all__ = ["FORMULA_START", "csv_text", "defused", "write_csv"]
