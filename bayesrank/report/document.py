"""Reports a person wants to read: one self-contained HTML file (inline CSS, images and a small
script, works offline) or Markdown for a pull request, built from one or more fits of the same data.

Contents, in reading order: who leads and whether the top is separated (one sentence per fit, from
the simultaneous rank sets), what was fitted to what (the data in words), every distinct warning
once with the models it concerns, who met whom (battle counts and observed win fractions of the
top models, FastChat's matrices); then per fit the state of the fit, the whole leaderboard as a
sortable table with a CSV download, its figures (Elo ratings with intervals, scores with
intervals, rank probabilities, match probabilities with their numbers, observed against
predicted) and observed against predicted rates per model as leaderbot prints them, and for judge
data the judges (their parameters, verdict shares and what a fixed presentation order does to each
model); the leave-one-out comparison when there are several NUTS fits; and the exact command and
library versions that produced it.

>>> import bayesrank as br
>>> from bayesrank.report import Report
>>> import tempfile
>>> from pathlib import Path
>>> fit = br.fit(br.Davidson(k_tie=1), "arena-2024")
>>> with tempfile.TemporaryDirectory() as folder:
...     path = Report({"davidson k_tie=1": fit}).save(Path(folder) / "report.html")
...     print(path.name, path.stat().st_size > 0)
report.html True
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from bayesrank.data.bothbad import convention
from bayesrank.data.matrices import battle_counts, win_fractions
from bayesrank.errors import BayesrankError
from bayesrank.output.text import html_text as _e, markdown as md, terminal
from bayesrank.plots import arena as arena_plots, rankings as plots
from bayesrank.report import sections as report_parts
from bayesrank.results.estimates import dependence
from bayesrank.results.fit import Fit
from bayesrank.results.headline import headline
from bayesrank.results.io import check_target, write_files
from bayesrank.results.matches import match_probabilities
from bayesrank.results.summary import has_elo
from bayesrank.results.text import sampler_in_words
from bayesrank.results.trajectories import is_time_fit
from bayesrank.runtime import progress

#: Rows of the figures and of the Markdown leaderboard per fit (the HTML table holds every model).
TOP = 30
#: Models in the pairwise matrices (numbers in every cell: :data:`bayesrank.plots.arena.ANNOTATED_MAX`).
TOP_MATRIX = 15
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#1d2228;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ccd}h3{font-size:1.05em}
table{border-collapse:collapse;font-size:.85em;margin:.6em 0}
th,td{padding:.2em .55em;border-bottom:1px solid #e3e6ea;text-align:right}
th{background:#f3f5f7}td.l,th.l{text-align:left}
table.sortable th{cursor:pointer;position:sticky;top:0}div.scroll{max-height:34em;overflow:auto;margin:.6em 0}
p.lead{font-size:1.1em;background:#eef3fb;border-left:4px solid #3a6fb0;padding:.5em .8em}
.warn{background:#fff6e0;border-left:4px solid #e0a800;padding:.4em .8em;margin:.5em 0}
.who{font-size:.85em;color:#6b5a1e;margin-top:.2em}
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
        :func:`bayesrank.evaluation.compare.compare` of the fits.
    command : str
        The command that produced the report (shown verbatim).
    title : str
    top : int
        Leaderboard rows per fit.
    changes : BoardDiff, optional
        What changed since an earlier board (:func:`bayesrank.analysis.changes.diff`): a section with the
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
        """Per fit, its figures (matplotlib Figures), made once; ``"data"``: the matrices of the raw
        counts of the first fit's top models; ``"comparison"``: the leave-one-out comparison."""
        if not self._figures:
            first = next(iter(self.fits.values()))
            top = list(first.leaderboard()["name"].head(TOP_MATRIX))
            counts = battle_counts(first.data, top)
            self._figures["data"] = {
                "comparisons of each pair": arena_plots.plot_matrix(
                    counts.where(counts > 0), "comparisons", fmt="{:,.0f}",
                    title=f"comparisons between the top {len(top)} models (all judges and positions)"),
                "observed win fractions (ties left out)": arena_plots.plot_matrix(
                    win_fractions(first.data, top), "share of decisive comparisons won by the row", center=0.5,
                    title="observed: share of the row model's decisive comparisons against the column it won")}
            for name, fit in progress.track(self.fits.items(), "report: figures", len(self.fits)):
                if is_time_fit(fit.tree):
                    self._figures[name] = {"trajectories": plots.plot_trajectories(fit),
                                           "change points": plots.plot_change_strip(fit, top=self.top)}
                    continue
                figs = {}
                if has_elo(fit.tree):  # the scores on the Elo scale, with their intervals
                    figs["Elo ratings"] = arena_plots.plot_elo(fit.elo().head(self.top), title=fit.framework.label)
                else:
                    figs["scores"] = plots.plot_forest(fit, top=self.top)
                figs["rank probabilities"] = plots.plot_rank_probabilities(fit, top=min(self.top, 20))
                figs["match probabilities"] = plots.plot_match_probabilities(
                    match_probabilities(fit.tree, top=TOP_MATRIX)["expected"])
                figs["observed against predicted"] = plots.plot_observed_predicted(fit)
                self._figures[name] = figs
            if self.comparison is not None:
                self._figures["comparison"] = {"comparison": plots.plot_compare(self.comparison)}
        return self._figures

    def _data_summary(self) -> pd.DataFrame:
        first = next(iter(self.fits.values()))
        return report_parts.data_rows(first.data.summary(), convention(first.data.dropped, first.data.notes))

    def _time_board(self, fit: Fit) -> pd.DataFrame:
        """A fit over time's leaderboard as of its last period, with the periods each item was seen."""
        board = fit.leaderboard().head(self.top)
        return board[["rank", "name", "score", "lower", "upper", "rank_lower", "rank_upper", "first_period",
                      "last_period"]]

    def _sections(self):
        """(name, fit, kind of intervals, state in words) per fit, in order."""
        for name, fit in self.fits.items():
            kind = ("95% intervals of the fit over time (the leaderboard as of its last period)"
                    if is_time_fit(fit.tree) else
                    f"{fit.interval_method.capitalize()} 95% intervals (MLE, {dependence(fit.tree)})"
                    if fit.method == "map"
                    else f"95% posterior intervals (NUTS, sampler {fit.diagnostics.get('sampler')}, "
                         f"{fit.diagnostics.get('chains')} chains × {fit.diagnostics.get('draws')} draws)")
            state = _state_in_words(fit)
            yield name, fit, kind, state

    def _time_html(self, name: str, fit: Fit, kind: str, state: str, figures: dict) -> list[str]:
        """The HTML section of a fit over time: its leaderboard as of the last period, its change
        points and its pictures."""
        out = [f"<p>{_e(kind)}. NLL {fit.nll:.5f} per comparison, {fit.n_params} free parameters.</p>",
               f"<div class='{'ok' if fit.converged else 'warn'}'>{_e(state)}</div>",
               "<h3>Leaderboard as of the last period</h3>" + report_parts.sortable_table(self._time_board(fit)),
               "<h3>Change points (posterior probability ≥ 0.5)</h3>" + report_parts.sortable_table(fit.changes())]
        return out + [_figure_html(f"{name}: {caption}", fig) for caption, fig in figures.items()]

    def _headlines(self) -> list[tuple[str, str]]:
        return [(name, headline(fit.tree)) for name, fit in self.fits.items()]

    # ------------------------------------------------------------------ HTML
    def html(self) -> str:
        """The report as one self-contained HTML document."""
        out = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_e(self.title)}</title>"
               f"<style>{_CSS}</style></head><body>", f"<h1>{_e(self.title)}</h1>"]
        many = len(self.fits) > 1
        out += [f"<p class='lead'>{_e(f'{name}: ' if many else '')}{_e(text)}</p>" for name, text in self._headlines()]
        figures = self.figures()
        out.append("<h2>Data</h2>" + _table_html(self._data_summary()))
        out.append("<h2>Warnings</h2>" + report_parts.warning_boxes(self.fits))
        out.append("<h2>Who met whom</h2><p>The raw counts of the leading models (of the first fit), as Chatbot "
                   "Arena's notebooks show them: how many comparisons each pair had, and the share of the decisive "
                   "ones the row model won (ties left out). Blank: the pair never met.</p>")
        out += [_figure_html(caption, fig) for caption, fig in figures["data"].items()]
        first = next(iter(self.fits.values()))
        positions = report_parts.position_tables(first)
        if positions:
            out.append("<h2>Judges and positions</h2><p>Which answer each judge chose by the position it was shown "
                       "in (a: shown first); <em>follows the position</em> marks a judge far beyond the others "
                       "(the rule: <code>bayesrank.data.positions</code>).</p>")
            out += [f"<h3>{_e(_capital(caption))}</h3>" + report_parts.sortable_table(frame)
                    for caption, frame in positions]
        for name, fit, kind, state in self._sections():
            out.append(f"<h2>{_e(name)}: {_e(fit.framework.label)}</h2>")
            out.append(f"<p class='lead'>{_e(headline(fit.tree))}</p>")
            if is_time_fit(fit.tree):
                out += self._time_html(name, fit, kind, state, figures[name])
                continue
            elo_note = ("<em>Elo</em>: 1000 + 400·score/ln 10, a view of the same fit "
                        f"({_e(fit.framework.scale_note)})."
                        if has_elo(fit.tree) else f"No Elo ratings: {_e(fit.framework.scale_note)}.")
            out.append(f"<p>{_e(kind)}. NLL {fit.nll:.5f} per comparison, {fit.n_params} free parameters. "
                       "<em>group</em>: models the data cannot order at 95% (each group starts where a model falls "
                       f"below the group's leader with probability ≥ 0.95). {elo_note}</p>")
            out.append(f"<div class='{'ok' if fit.converged else 'warn'}'>{_e(state)}</div>")
            shown = dict(figures[name])
            if "Elo ratings" in shown:  # the picture first, then the table
                out.append(_figure_html(f"{name}: Elo ratings of the top {min(self.top, len(fit.items))}",
                                        shown.pop("Elo ratings")))
            table = report_parts.board(fit)
            out.append(f"<h3>Leaderboard: all {len(table)} models</h3><p>Click a column's name to sort by it; "
                       + report_parts.csv_link(fit.leaderboard(elo=has_elo(fit.tree)), f"{_slug(name)}-leaderboard.csv")
                       + ".</p>" + report_parts.sortable_table(table))
            out += [_figure_html(f"{name}: {caption}", fig) for caption, fig in shown.items()]
            rates, metrics = report_parts.observed_predicted(fit, self.top)
            out.append("<h3>Observed against predicted</h3><p>Each model's share of wins, losses and ties in the data "
                       "and as the fit predicts them for the same comparisons (%). Over all cells (leaderbot's "
                       f"metrics): RMSE of the counts {metrics['rmse_all']:.3g}, KL divergence ×100 "
                       f"{metrics['kld']:.3g}, Jensen–Shannon divergence ×100 {metrics['jsd']:.3g}.</p>"
                       + report_parts.sortable_table(rates, digits=1))
            for caption, frame in report_parts.judge_parameters(fit):
                out.append(f"<h3>{_e(_capital(caption))}</h3>" + report_parts.sortable_table(frame))
        if self.comparison is not None:
            out.append("<h2>Leave-one-out comparison</h2><p>Expected log predictive density of leaving one "
                       "cell out (one pair × judge × position with all its comparisons); weights are stacking "
                       "weights.</p>")
            out.append(_table_html(self.comparison.reset_index()))
            out += [f"<p>{_e(w)}</p>" for w in self.comparison.attrs.get("warnings", [])]
            out.append(_figure_html("comparison", figures["comparison"]["comparison"]))
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
        out.append(report_parts.SORT_SCRIPT)
        out.append(_LOAD_CHECK)
        out.append("</body></html>")
        return "\n".join(out)

    # ------------------------------------------------------------------ Markdown
    def markdown(self, image_dir: Path | None = None) -> str:
        """The report as Markdown (for a pull request); figures are written as PNG files into
        ``image_dir`` and linked when it is given, relative to the folder that holds
        ``image_dir`` (where the Markdown file goes, as :meth:`save` writes it). Every name and sentence is escaped
        (:func:`bayesrank.output.text.markdown`): no HTML, link or image comes from the data."""
        text, figures = self._markdown(image_dir)
        if figures:
            image_dir.mkdir(parents=True, exist_ok=True)
            write_files({path: _png_writer(fig) for path, fig in figures.items()}, overwrite=True)
        return text

    def _markdown(self, image_dir: Path | None) -> tuple[str, dict[Path, object]]:
        """The Markdown text and the figures it links (path → figure)."""
        out = [f"# {md(self.title)}", ""]
        many = len(self.fits) > 1
        out += [f"**{md(name)}:** {md(text)}" if many else f"**{md(text)}**" for name, text in self._headlines()] + [""]
        out += ["## Data", "", _table_md(self._data_summary()), "", "## Warnings", ""]
        out += [f"* {md(text)} ({'all models' if len(owners) == len(self.fits) and many else md(', '.join(owners))})"
                for text, owners in report_parts.distinct_warnings(self.fits)] or ["No warnings."]
        out.append("")
        figures = self.figures() if image_dir is not None else {}
        files = {}
        if image_dir is not None:
            out += ["## Who met whom", ""] + self._images(image_dir, "data", figures["data"], files) + [""]
        positions = report_parts.position_tables(next(iter(self.fits.values())))
        if positions:
            out += ["## Judges and positions", ""]
            for caption, frame in positions:
                out += [f"{_capital(caption)}:", "", _table_md(frame), ""]
        for name, fit, kind, state in self._sections():
            out += [f"## {md(name)}: {md(fit.framework.label)}", "", f"**{md(headline(fit.tree))}**", "",
                    f"{md(kind)}. NLL {fit.nll:.5f} per comparison, {fit.n_params} free parameters.", "",
                    f"> {md(state)}", ""]
            if is_time_fit(fit.tree):   # the leaderboard as of its last period, and its change points
                out += [_table_md(self._time_board(fit)), "", "Change points (posterior probability ≥ 0.5):", "",
                        _table_md(fit.changes()), ""]
                if image_dir is not None:
                    out += self._images(image_dir, name, figures[name], files) + [""]
                continue
            out += [_table_md(report_parts.board(fit).head(self.top)), ""]
            rates, _ = report_parts.observed_predicted(fit, self.top)
            out += ["Observed against predicted (% of each model's comparisons):", "", _table_md(rates), ""]
            for caption, frame in report_parts.judge_parameters(fit):
                out += [f"{_capital(caption)}:", "", _table_md(frame), ""]
            if image_dir is not None:
                out += self._images(image_dir, name, figures[name], files) + [""]
        if self.comparison is not None:
            out += ["## Leave-one-out comparison", "", _table_md(self.comparison.reset_index()), ""]
            out += [f"* {md(w)}" for w in self.comparison.attrs.get("warnings", [])] + [""]
        if self.changes is not None:
            out += ["## What changed since the previous board", ""] + [md(line) for line in self.changes.describe()]
            out += ["", _table_md(self.changes.shown(self.top)), ""] + [f"> {md(n)}" for n in self.changes.notes] + [""]
        if self.command:
            out += ["## How this report was made", "", "```", terminal(self.command).replace("`", "'"), "```", ""]
        return "\n".join(out), files

    @staticmethod
    def _images(image_dir: Path, name: str, figures: dict, files: dict) -> list[str]:
        """The Markdown links of ``figures``, each added to ``files`` (path → figure) under
        ``image_dir`` for the one writer to write."""
        links = []
        for caption, fig in figures.items():
            path = image_dir / f"{_slug(name)}-{_slug(caption)}.png"
            files[path] = fig
            # relative to the Markdown file, which sits beside image_dir (save: <stem>-figures/)
            links.append(f"![{md(name)}: {md(caption)}]({quote(image_dir.name)}/{quote(path.name)})")
        return links

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the HTML (``.html``) or Markdown (``.md``, figures beside it in
        ``<stem>-figures/``) report as one atomic step through the output writer
        (:func:`bayesrank.output.atomic.write_files`); an existing file is replaced only with
        ``overwrite`` (CLI: ``--force``).

        Raises
        ------
        OutputError
            The file exists (without ``overwrite``), is a folder, is being written by another
            run, or cannot be written.
        """
        path = Path(path)
        check_target(path, overwrite)
        if path.suffix.lower() == ".md":
            text, figures = self._markdown(path.parent / f"{path.stem}-figures")
            writers = {p: _png_writer(fig) for p, fig in figures.items()}
        else:
            text, writers = self.html(), {}
        writers[path] = lambda p: p.write_text(text, encoding="utf-8")
        write_files(writers, overwrite=overwrite)
        return path


def _png_writer(fig):
    return lambda p: fig.savefig(p, dpi=110, format="png")


def _state_in_words(fit: Fit) -> str:
    d = fit.diagnostics
    if fit.method == "map":
        if not d.get("mle_exists", True):
            return "The maximum-likelihood estimate does not exist: no estimates are reported (see the warnings)."
        if fit.converged:
            return (f"Converged: largest gradient entry {d['grad_norm']:.1e} per comparison after "
                    f"{d['iterations']} trust-region iterations, and the information positive definite.")
        return "Not converged: read the warnings before using these numbers."
    text = sampler_in_words(d) + "."
    return ("The sampler converged: " if fit.converged else "The sampler did NOT converge: ") + text


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _figure_html(caption: str, fig) -> str:
    return (f"<figure><img alt='{_e(caption)}' src='data:image/png;base64,{_png(fig)}'>"
            f"<figcaption>{_e(caption)}</figcaption></figure>")


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
    text = {c: not pd.api.types.is_numeric_dtype(df[c]) for c in df.columns}  # text columns align left
    head = "".join(f"<th class='{'l' if text[c] else ''}'>{_e(str(c))}</th>" for c in df.columns)
    rows = "".join("<tr>" + "".join(f"<td class='{'l' if text[c] else ''}'>{_e(_fmt(v))}</td>"
                                    for c, v in zip(df.columns, row)) + "</tr>" for row in df.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def _table_md(df: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(md(c) for c in df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(md(_fmt(v)) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


__all__ = ["Report", "TOP", "TOP_MATRIX"]
