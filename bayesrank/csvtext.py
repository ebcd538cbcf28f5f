"""Tables as CSV text that a spreadsheet shows instead of running: the one writer of the CLI's
CSV output and the reports' CSV downloads."""

from __future__ import annotations

import io

#: Leading characters that make a spreadsheet treat a CSV cell as a formula (OWASP).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(frame, **kwargs) -> str:
    """A table as CSV text with every text cell that a spreadsheet would run as a formula
    (starting with = + - @, a tab or a carriage return) prefixed with a single quote."""
    def escape(value):
        return "'" + value if isinstance(value, str) and value.startswith(FORMULA_START) else value
    safe = frame.copy()
    for col in safe.columns:
        if safe[col].dtype == object or str(safe[col].dtype) in ("str", "string"):
            safe[col] = safe[col].astype(object).map(escape)
    buffer = io.StringIO()
    safe.to_csv(buffer, index=False, **kwargs)
    return buffer.getvalue()
