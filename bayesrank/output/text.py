r"""Names made safe for where they are shown: a terminal, one line of an error, Markdown, HTML.

A model name is text someone else wrote. Written raw, an escape sequence (``\x1b[2J``)
clears or rewrites the terminal, a line break splits a one-line error, ``<script>`` or
``![](http://...)`` runs or loads something where Markdown is rendered. Each function below
shows such characters as visible text instead; the data, the JSON outputs and saved fits keep
the names exactly.
"""

from __future__ import annotations

import html
import io
import re

#: Characters shown as escapes in terminal text: C0 controls but the line break, DEL, C1
#: controls, and the bidirectional overrides and isolates that reorder what follows them.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_OR_BREAK = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
#: Characters with a meaning inside a Markdown line (emphasis, code, links and images, table
#: cells, strike-through, math), escaped with a backslash; ``<`` and ``>`` are HTML-escaped.
_MARKDOWN = re.compile(r"([\\`*_\[\]|~$])")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text: str) -> str:
    r"""``text`` with control characters (but line breaks) and direction overrides shown as
    escapes (``\x1b``), so printing it cannot move the cursor, change colours or reorder
    the line."""
    return _CONTROL.sub(_escape, str(text))


def one_line(text: str) -> str:
    """:func:`terminal`, with line breaks shown as escapes too (an error message is one line)."""
    return _CONTROL_OR_BREAK.sub(_escape, str(text))


def html_text(text) -> str:
    """``text`` as literal HTML text or attribute value: HTML escaped, and control characters
    shown as escapes (:func:`terminal`), so the page's source is safe to print too."""
    return html.escape(terminal(str(text)), quote=True)


def markdown(text: str) -> str:
    """``text`` as literal Markdown inside a line (a heading's text, a table cell, a quote):
    HTML escaped (``&lt;script&gt;``), Markdown punctuation backslash-escaped (no links,
    images, emphasis, code, math or table cells from a name), control characters escaped and
    line breaks shown as escapes."""
    return _MARKDOWN.sub(r"\\\1", html.escape(one_line(text), quote=True))


class TerminalStream(io.TextIOBase):
    """A text stream that writes :func:`terminal` of what it is given to another stream (the
    CLI's table output)."""

    def __init__(self, raw):
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(terminal(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def fileno(self) -> int:
        return self.raw.fileno()

    def isatty(self) -> bool:
        return self.raw.isatty()

    @property
    def encoding(self):
        return getattr(self.raw, "encoding", "utf-8")


__all__ = ["TerminalStream", "html_text", "markdown", "one_line", "terminal"]
