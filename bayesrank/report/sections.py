"""Pieces of a report a person reads first: the data in words, each warning once, the whole
leaderboard as a sortable table with its CSV, observed against predicted rates, the judges'
parameters, and how the judges' verdicts split by position.

Every function returns what :mod:`bayesrank.report` lays out (tables as DataFrames with the
column names a reader sees, HTML fragments that need no remote resource).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping

import numpy as np
import pandas as pd

from bayesrank.data import bothbad
from bayesrank.evaluation.goodness import goodness_of_fit
from bayesrank.output.tables import csv_text
from bayesrank.output.text import html_text as _e
from bayesrank.results.fit import Fit
from bayesrank.results.leaderboard import tie_groups
from bayesrank.results.summary import has_elo

#: Makes every ``table.sortable`` sortable by a click on a column's header (numbers by their
#: ``data-v`` value, text alphabetically; a second click reverses). Inline: the report works offline.
SORT_SCRIPT = (
    "<script>document.querySelectorAll('table.sortable').forEach(function(t){"
    "t.querySelectorAll('th').forEach(function(th,k){th.addEventListener('click',function(){"
    "var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),d=th.getAttribute('data-dir')==='asc'?-1:1;"
    "th.setAttribute('data-dir',d>0?'asc':'desc');"
    "rows.sort(function(x,y){var p=x.cells[k],q=y.cells[k],u=parseFloat(p.getAttribute('data-v')),"
    "v=parseFloat(q.getAttribute('data-v'));if(!isNaN(u)&&!isNaN(v)){return (u-v)*d;}"
    "return p.textContent.localeCompare(q.textContent)*d;});"
    "rows.forEach(function(r){b.appendChild(r);});});});});</script>")


def data_rows(summary: dict, both_bad: str | None = None) -> pd.DataFrame:
    """What was fitted to what, in words: ``what, value`` rows from :meth:`Comparisons.summary`
    (no internal names such as cells or ``wins_a``)."""
    acc = summary.get("accounting") or {}
    m = summary["n_items"]
    notes = {k: v for k, v in (acc.get("notes") or {}).items() if k != bothbad.COUNTED}  # said above
    decisive = summary["wins_a"] + summary["wins_b"]
    rows = [("data", summary["source"] or "given in code"), ("models", m),
            ("pairs compared", f"{summary['n_pairs']:,} of {m * (m - 1) // 2:,} possible"),
            ("comparisons used", summary["n_comparisons"]),
            ("decisive (a win for one side)", decisive), ("ties", summary["ties"])]
    if summary.get("ties_bothbad") and both_bad == bothbad.ARENA:
        rows.append(("of which 'both bad' ties", f"{summary['ties_bothbad']:,.0f}, {both_bad}"))
    if "n_judges" in summary:
        rows.append(("judges", summary["n_judges"]))
    if acc.get("records_read"):
        rows.append(("records read", acc["records_read"]))
    rows += [("left out: 'both bad' ties (the leaderbot paper's convention)" if reason == bothbad.DROPPED
              else f"left out: {reason}", n) for reason, n in (acc.get("dropped") or {}).items()]
    rows += [(f"note: {note}", n) for note, n in notes.items()]
    return pd.DataFrame(rows, columns=["what", "value"])


def distinct_warnings(fits: Mapping[str, Fit]) -> list[tuple[str, list[str]]]:
    """Every distinct warning of the fits once, with the fits that gave it, in the order first met."""
    seen: dict[str, list[str]] = {}
    for name, fit in fits.items():
        for text in fit.warnings:
            owners = seen.setdefault(text, [])
            if name not in owners:
                owners.append(name)
    return list(seen.items())


def warning_boxes(fits: Mapping[str, Fit]) -> str:
    """One box per distinct warning, naming the models it concerns (all of them, or which)."""
    boxes = []
    for text, owners in distinct_warnings(fits):
        who = "all models" if len(owners) == len(fits) and len(fits) > 1 else ", ".join(owners)
        boxes.append(f"<div class='warn'>{_e(text)}<div class='who'>{_e(who)}</div></div>")
    return "\n".join(boxes) or "<div class='ok'>No warnings.</div>"


def board(fit: Fit, level: float = 0.95) -> pd.DataFrame:
    """The whole leaderboard with readable columns: rank, model, score and interval, Elo and its
    interval (not for Thurstonian fits), rank interval, group (models the data cannot order),
    comparisons and win rate."""
    full = fit.leaderboard(level, elo=has_elo(fit.tree))
    pct = f"{100 * level:g}%"
    out = pd.DataFrame({"rank": full["rank"], "model": full["name"], "score": full["score"]})
    if "lower" in full:
        out[f"score {pct}"] = [_range(lo, hi, "{:.3f}") for lo, hi in zip(full["lower"], full["upper"])]
    if "elo" in full:
        out["Elo"] = full["elo"].round(0)
        if "elo_lower" in full:
            out[f"Elo {pct}"] = [_range(lo, hi, "{:.0f}") for lo, hi in zip(full["elo_lower"], full["elo_upper"])]
    if "rank_lower" in full:
        out["rank interval"] = [_range(lo, hi, "{}") for lo, hi in zip(full["rank_lower"], full["rank_upper"])]
        out["group"] = full["name"].map(tie_groups(fit.tree, level).set_index("name")["group"]).to_numpy()
    out["comparisons"] = full["n_comparisons"]
    out["win rate"] = full["win_rate"]
    return out


def _range(lo, hi, fmt: str) -> str:
    if pd.isna(lo) or pd.isna(hi):
        return ""
    return f"{fmt.format(lo)} – {fmt.format(hi)}"


def sortable_table(df: pd.DataFrame, digits: int = 3) -> str:
    """``df`` as an HTML table sortable by a click on a column (:data:`SORT_SCRIPT`; numbers sort
    by value), in a scrolling box with its header kept in view; whole numbers with thousands
    separators, other numbers with ``digits`` decimals."""
    df = df.assign(**{c: df[c].map({True: "yes", False: ""}) for c in df.columns if pd.api.types.is_bool_dtype(df[c])})
    text = {c: not pd.api.types.is_numeric_dtype(df[c]) for c in df.columns}  # text columns align left
    head = "".join(f"<th class='{'l' if text[c] else ''}' title='click to sort'>{_e(c)}</th>" for c in df.columns)
    rows = []
    for row in df.itertuples(index=False):
        cells = []
        for value in row:
            number = (isinstance(value, (int, float, np.integer, np.floating))
                      and not isinstance(value, (bool, np.bool_)))
            if number and pd.notna(value):
                cells.append(f"<td data-v='{float(value):.12g}'>{_e(_number(value, digits))}</td>")
            else:
                cells.append(f"<td class='l'>{'' if value is None or value is pd.NA or value != value else _e(value)}"
                             "</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f"<div class='scroll'><table class='sortable'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def _number(value, digits: int) -> str:
    if isinstance(value, (int, np.integer)) or float(value).is_integer() and abs(value) >= 100:
        return f"{int(value):,}"
    return f"{value:.{digits}f}"


def csv_link(df: pd.DataFrame, filename: str, text: str = "download as CSV") -> str:
    """A link that saves ``df`` as a CSV file (a ``data:`` URI: no server, no remote resource;
    cells a spreadsheet would run as formulas are escaped, :func:`bayesrank.output.tables.csv_text`)."""
    payload = base64.b64encode(csv_text(df).encode("utf-8")).decode("ascii")
    return f"<a download='{_e(filename)}' href='data:text/csv;base64,{payload}'>{_e(text)}</a>"


def observed_predicted(fit: Fit, top: int | None = None) -> tuple[pd.DataFrame, dict]:
    """Observed against predicted rates per model, as leaderbot prints them, and the fit's
    goodness of fit over all cells.

    Returns
    -------
    table : DataFrame
        ``rank, model, comparisons`` and the observed and predicted shares of wins, losses and
        ties of each model (in %), best first.
    metrics : dict
        :func:`bayesrank.evaluation.goodness.goodness_of_fit` (RMSE of the counts, KLD and JSD).
    """
    full = fit.leaderboard()
    full = full.head(top) if top else full
    table = pd.DataFrame({"rank": full["rank"], "model": full["name"], "comparisons": full["n_comparisons"]})
    for what in ("win", "loss", "tie"):
        table[f"observed {what} %"] = 100 * full[f"{what}_rate"]
    for what in ("win", "loss", "tie"):
        table[f"predicted {what} %"] = 100 * full[f"pred_{what}_rate"]
    return table, goodness_of_fit(fit)


def judge_parameters(fit: Fit, level: float = 0.95) -> list[tuple[str, pd.DataFrame]]:
    """(caption, table) of the judges' parameters of a judge-aware or HJA fit; empty for others."""
    if "gamma" not in fit.framework.reported():
        return []
    caption = ("judges: signed sensitivity γ to the consensus and leverage ‖(UVᵀ)_k‖" if fit.framework.name == "hja"
               else "judges: discrimination γ (how strongly each judge's verdicts follow the score differences)")
    return [(caption, fit.judges(level))]


def position_tables(fit: Fit) -> list[tuple[str, pd.DataFrame]]:
    """(caption, table) of the data's positions, the same for every fit of them: each judge's
    verdict shares by position, and — when positions were never swapped — what a preference for
    the answer shown first does to each model's score. Empty for data without judges or positions."""
    if fit.data.judges is None and fit.data.first is None:
        return []
    shares = fit.verdict_shares().rename(columns={
        "n": "verdicts", "a": "shown first (a)", "b": "shown second (b)", "a_decisive": "first, of decisive",
        "odds_ratio": "odds vs. median judge", "follows_position": "follows the position", "position": "which"})
    out = [("verdict shares: the answer each judge chose, by the position it was shown in", shares)]
    order = fit.presentation_order()
    if order is not None and order.confounded:
        moved = order.items.rename(columns={"name": "model", "n_comparisons": "comparisons",
                                            "shown_first": "shown first", "shift": "score change per δ"})
        out.append(("positions were never swapped: how a preference δ (logit) for the answer shown first moves "
                    "each model's score", moved))
    return out


__all__ = ["SORT_SCRIPT", "board", "csv_link", "data_rows", "distinct_warnings", "judge_parameters",
           "observed_predicted", "position_tables", "sortable_table", "warning_boxes"]
