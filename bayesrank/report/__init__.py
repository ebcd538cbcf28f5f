"""Reports a person wants to read: a self-contained HTML file or Markdown for a pull request.

:class:`Report` is built from one or more fits of the same data (:mod:`bayesrank.report.document`);
the pieces it is made of — the data in words, each warning once, the sortable leaderboard, observed
against predicted rates, the judges' tables — are in :mod:`bayesrank.report.sections`.
"""

from bayesrank.report.document import Report

__all__ = ["Report"]
