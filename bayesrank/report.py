"""Reports a person wants to read: one self-contained HTML file (inline CSS and images, works
offline) or Markdown for a pull request, built from one or more fits of the same data.

Contents: what was fitted to what (data summary, dropped records), each fit's leaderboard with
intervals and groups of items the data cannot order, its figures (scores with intervals, rank
probabilities, match probabilities, observed against predicted), the leave-one-out comparison
when there are several NUTS fits, the diagnostics and warnings in words, and the exact command
and library versions that produced it.

>>> import bayesrank as br
>>> from bayesrank.report import Report
>>> fit = br.fit(br.Davidson(k_tie=1), "arena-2024")                 # doctest: +SKIP
>>> Report({"davidson k_tie=1": fit}).save("report.html")            # doctest: +SKIP
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from bayesrank import plots
from bayesrank.errors import BayesrankError, OutputError
from bayesrank.results.fit import Fit
from bayesrank.results.io import check_target, write_files
from bayesrank.results.leaderboard import tie_groups
from bayesrank.results.matches import match_probabilities

#: Leaderboard rows shown per fit.
TOP = 30
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#1d2228;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ccd}h3{font-size:1.05em}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0}
th,td{padding:.2em .55em;border-bottom:1px solid #e3e6ea;text-align:right}
th{background:#f3f5f7}td.l,th.l{text-align:left}
.warn{background:#fff6e0;border-left:4px solid #e0a800;padding:.4em .8em;margin:.5em 0}
.ok{background:#eef8ee;border-left:4px solid #3a9a3a;padding:.4em .8em;margin:.5em 0}
img{max-width:100%;height:auto}figure{margin:1em 0}figcaption{font-size:.85em;color:#555}
code,pre{background:#f3f5f7;font-size:.85em}pre{padding:.6em;overflow-x:auto}
"""


#: Marks the document once loaded with how many of its figures decoded (checked by the tests
#: in a real browser; no network, no effect on the reader).
_LOAD_CHECK = ("<script>window.addEventListener('load',function(){var i=document.images,n=0;"
               "for(var k=0;k<i.length;k++){if(i[k].complete&&i[k].naturalWidth>0){n++;}}"
               "document.documentElement.setAttribute('data-figures',n+'/'+i.length);});</script>")


@dataclass
class Report:
    """A report of named fits of the same comparisons.

    Parameters
    ----------
    fits : mapping of str to Fit
    comparison : DataFrame, optional
        :func:`bayesrank.compare.compare` of the fits.
    command : str
        The command that produced the report (shown verbatim).
    title : str
    top : int
        Leaderboard rows per fit.
    changes : BoardDiff, optional
        What changed since an earlier board (:func:`bayesrank.changes.diff`): a section with the
        models whose rank moved and why.
    """

    fits: Mapping[str, Fit]
    comparison: pd.DataFrame | None = None
    command: str = ""
    title: str = "bayesrank report"
    top: int = TOP
    changes: object | None = None
    _figures: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self):
        if not self.fits:
            raise BayesrankError("a report needs at least one fit.")

    # ------------------------------------------------------------------ content
    def figures(self) -> dict[str, dict[str, object]]:
        """Per fit, its figures (matplotlib Figures), made once."""
        if not self._figures:
            for name, fit in self.fits.items():
                figs = {"scores": plots.plot_forest(fit, top=self.top),
                        "rank probabilities": plots.plot_rank_probabilities(fit, top=min(self.top, 20)),
                        "match probabilities": plots.plot_match_probabilities(
                            match_probabilities(fit.tree, top=min(self.top, 20))["expected"]),
                        "observed against predicted": plots.plot_observed_predicted(fit)}
                self._figures[name] = figs
            if self.comparison is not None:
                self._figures["comparison"] = {"comparison": plots.plot_compare(self.comparison)}
        return self._figures

    def _data_summary(self) -> dict:
        first = next(iter(self.fits.values()))
        return first.data.summary()

    def _board(self, fit: Fit) -> pd.DataFrame:
        board = fit.leaderboard(elo=True).head(self.top)
        groups = tie_groups(fit.tree).set_index("name")["group"]
        board = board.assign(group=board["name"].map(groups))
        return board[["rank", "name", "score", "lower", "upper", "elo", "rank_lower", "rank_upper", "group",
                      "n_comparisons"]]

    def _sections(self):
        """(heading, sentences, tables, figures) per fit, in order."""
        for name, fit in self.fits.items():
            kind = (f"{fit.interval_method.capitalize()} 95% intervals (MLE)" if fit.method == "map"
                    else f"95% posterior intervals (NUTS, {fit.diagnostics.get('chains')} chains × "
                         f"{fit.diagnostics.get('draws')} draws)")
            state = _state_in_words(fit)
            yield name, fit, kind, state

    # ------------------------------------------------------------------ HTML
    def html(self) -> str:
        """The report as one self-contained HTML document."""
        s = self._data_summary()
        out = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(self.title)}</title>"
               f"<style>{_CSS}</style></head><body>", f"<h1>{_e(self.title)}</h1>"]
        out.append("<h2>Data</h2>" + _table_html(_flat_summary(s)))
        figures = self.figures()
        for name, fit, kind, state in self._sections():
            out.append(f"<h2>{_e(name)}: {_e(fit.framework.label)}</h2>")
            out.append(f"<p>{_e(kind)}. NLL {fit.nll:.5f} per comparison, {fit.n_params} free parameters. "
                       "<em>group</em>: items the data cannot order at 95% (each group starts where an item "
                       "falls below the group's leader with probability ≥ 0.95). <em>elo</em>: 1000 + "
                       f"400·score/ln 10, a view of the same fit ({_e(fit.framework.scale_note)}).</p>")
            out.append(f"<div class='{'ok' if fit.converged else 'warn'}'>{_e(state)}</div>")
            out += [f"<div class='warn'>{_e(w)}</div>" for w in fit.warnings]
            out.append(_table_html(self._board(fit)))
            for caption, fig in figures[name].items():
                out.append(f"<figure><img alt='{_e(caption)}' src='data:image/png;base64,{_png(fig)}'>"
                           f"<figcaption>{_e(name)}: {_e(caption)}</figcaption></figure>")
        if self.comparison is not None:
            out.append("<h2>Leave-one-out comparison</h2><p>Expected log predictive density of leaving one "
                       "cell out (one pair × judge × position with all its comparisons); weights are stacking "
                       "weights.</p>")
            out.append(_table_html(self.comparison.reset_index()))
            out += [f"<p>{_e(w)}</p>" for w in self.comparison.attrs.get("warnings", [])]
            fig = figures["comparison"]["comparison"]
            out.append(f"<figure><img alt='comparison' src='data:image/png;base64,{_png(fig)}'></figure>")
        if self.changes is not None:
            out.append("<h2>What changed since the previous board</h2>")
            out += [f"<p>{_e(line)}</p>" for line in self.changes.describe()]
            out.append(_table_html(self.changes.shown(self.top)))
            out += [f"<div class='warn'>{_e(n)}</div>" for n in self.changes.notes]
        out.append("<h2>How this report was made</h2>")
        if self.command:
            out.append(f"<pre>{_e(self.command)}</pre>")
        versions = json.loads(next(iter(self.fits.values())).tree.attrs["bayesrank_versions"])
        out.append("<p>" + ", ".join(f"{_e(k)} {_e(v)}" for k, v in versions.items()) + "</p>")
        out.append(_LOAD_CHECK)
        out.append("</body></html>")
        return "\n".join(out)

    # ------------------------------------------------------------------ Markdown
    def markdown(self, image_dir: Path | None = None) -> str:
        """The report as Markdown (for a pull request); figures are written as PNG files into
        ``image_dir`` and linked when it is given."""
        s = self._data_summary()
        out = [f"# {self.title}", "", "## Data", "", _table_md(_flat_summary(s)), ""]
        figures = self.figures() if image_dir is not None else {}
        for name, fit, kind, state in self._sections():
            out += [f"## {name}: {fit.framework.label}", "",
                    f"{kind}. NLL {fit.nll:.5f} per comparison, {fit.n_params} free parameters.", "",
                    f"> {state}", ""]
            out += [f"> warning: {w}" for w in fit.warnings] + [""]
            out += [_table_md(self._board(fit)), ""]
            if image_dir is not None:
                image_dir.mkdir(parents=True, exist_ok=True)
                for caption, fig in figures[name].items():
                    path = image_dir / f"{_slug(name)}-{_slug(caption)}.png"
                    fig.savefig(path, dpi=110)
                    out.append(f"![{name}: {caption}]({path.name if path.parent == image_dir else path})")
                out.append("")
        if self.comparison is not None:
            out += ["## Leave-one-out comparison", "", _table_md(self.comparison.reset_index()), ""]
            out += [f"* {w}" for w in self.comparison.attrs.get("warnings", [])] + [""]
        if self.changes is not None:
            out += ["## What changed since the previous board", ""] + self.changes.describe() + [""]
            out += [_table_md(self.changes.shown(self.top)), ""] + [f"> {n}" for n in self.changes.notes] + [""]
        if self.command:
            out += ["## How this report was made", "", "```", self.command, "```", ""]
        return "\n".join(out)

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the HTML (``.html``) or Markdown (``.md``, figures beside it) report as one
        atomic step; an existing file is replaced only with ``overwrite`` (CLI: ``--force``).

        Raises
        ------
        OutputError
            The file exists (without ``overwrite``), is a folder, or cannot be written.
        """
        path = Path(path)
        check_target(path, overwrite)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise OutputError(f"cannot write {path}: {err.strerror or err}; choose a writable place.") from None
        text = self.markdown(path.parent / f"{path.stem}-figures") if path.suffix.lower() == ".md" else self.html()
        write_files({path: lambda p: p.write_text(text, encoding="utf-8")}, overwrite=overwrite)
        return path


def _state_in_words(fit: Fit) -> str:
    d = fit.diagnostics
    if fit.method == "map":
        if not d.get("mle_exists", True):
            return "The maximum-likelihood estimate does not exist: no estimates are reported (see the warnings)."
        if fit.converged:
            return (f"Converged: largest gradient entry {d['grad_norm']:.1e} per comparison after "
                    f"{d['iterations']} trust-region iterations, and the information positive definite.")
        return "Not converged: read the warnings before using these numbers."
    text = (f"r̂ at most {d['max_rhat']:.3f}, bulk ESS at least {d['min_ess_bulk']:.0f}, tail ESS at least "
            f"{d['min_ess_tail']:.0f}, {d['divergences']} divergent transitions.")
    return ("The sampler converged: " if fit.converged else "The sampler did NOT converge: ") + text


def _flat_summary(s: dict) -> pd.DataFrame:
    """The data summary as rows ``what, value``: sizes, then what was read, left out and why."""
    acc = s.get("accounting") or {}
    rows = {k: v for k, v in s.items() if k not in ("dropped", "accounting")}
    rows.update({"records read": acc.get("records_read"), "comparisons read": acc.get("comparisons_read"),
                 "comparisons used": acc.get("comparisons_used")})
    rows.update({f"left out: {reason}": n for reason, n in (acc.get("dropped") or s.get("dropped") or {}).items()})
    rows.update({f"note: {note}": n for note, n in (acc.get("notes") or {}).items()})
    return pd.DataFrame([(k, v) for k, v in rows.items() if v is not None], columns=["what", "value"])


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=96)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _fmt(v) -> str:
    if isinstance(v, float):
        if pd.isna(v):
            return ""
        return f"{v:,.0f}" if v == round(v) and abs(v) >= 1000 else f"{v:.4g}"
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 1000:
        return f"{v:,}"
    return "" if v is pd.NA or v is None else str(v)


def _table_html(df: pd.DataFrame) -> str:
    head = "".join(f"<th class='{'l' if df[c].dtype == object else ''}'>{_e(str(c))}</th>" for c in df.columns)
    rows = "".join("<tr>" + "".join(f"<td class='{'l' if df[c].dtype == object else ''}'>{_e(_fmt(v))}</td>"
                                    for c, v in zip(df.columns, row)) + "</tr>" for row in df.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _table_md(df: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(str(c) for c in df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(_fmt(v).replace("|", "\\|") for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")
