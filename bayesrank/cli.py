"""Command line: ``bayesrank fit | update | diff | evaluate | select-rank | report | compare | datasets | demo |
gars | dml | next-pairs | provisional``.

The CLI only parses, calls the public API and renders. Model options are not declared here:
they are the fields of the framework dataclasses (:data:`bayesrank.model.registry.FRAMEWORKS`),
whose metadata give the help text and choices, and whose own validation runs. Whatever the
CLI prints, the API returns too.

``--format json`` prints one JSON object (the stable contract other tools rely on):
``framework, method, n_items, n_comparisons, n_cells, nll, loglik, n_params, converged,
items, diagnostics, warnings`` (plus further fields, such as ``accounting``).

Exit codes, as a Unix tool: 0 success; 2 bad input, usage or output (one line on stderr, a
:class:`~bayesrank.errors.BayesrankError`); 1 an internal error (one line asking to report
it; the traceback only with ``--debug``); 130 interrupted (Ctrl-C), 143 terminated (SIGTERM);
141 when whoever reads the output closed it early (``| head``), silently. Every output file
goes through :mod:`bayesrank.output.atomic`: claimed before the work (a second run writing
the same ``--out`` fails at once), written atomically, never replacing an existing file
without ``--force``, and left untouched by an interrupted run. CSV output escapes cells that a
spreadsheet would run as a formula (:mod:`bayesrank.output.tables`); table output shows
control characters in names as escapes (:mod:`bayesrank.output.text`).
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import shlex
import signal
import sys
import traceback
import typing
import warnings
from pathlib import Path

from bayesrank.errors import BayesrankError, ModelSpecError, OutputError
from bayesrank.output.atomic import (
    forget_signals,
    mark_input,
    note_signal,
    noted_signal,
    release_reserved,
    reserve,
)
from bayesrank.output.tables import FORMULA_START, csv_text  # noqa: F401 (FORMULA_START: the rule's name here too)
from bayesrank.output.text import TerminalStream, one_line
from bayesrank.runtime.signals import ENDINGS

#: Where to report internal errors.
REPORT = "https://github.com/bayesrank/bayesrank/issues"

#: How a framework field is spelled on the command line when not ``--<field-with-dashes>``.
FLAGS = {"threshold": "--tie-threshold"}
#: ``--sampler`` choices: :data:`bayesrank.inference.nuts.SAMPLERS`, spelled out here because
#: ``--help`` must not import the inference layer (PyTensor); a test keeps the two equal.
SAMPLERS = ("nutpie", "pymc", "numpyro", "hmc")
#: Files written by ``--out DIR``.
OUTPUTS = ("fit.nc", "summary.json", "leaderboard.csv")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def error(self, message):
        raise _UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


class _UsageError(Exception):
    pass


def framework_from_text(text: str):
    """The framework of a text spec (:func:`bayesrank.model.registry.framework_from_spec`)."""
    from bayesrank.model.registry import framework_from_spec

    return framework_from_spec(text)


def _frameworks():
    """The frameworks of ``--model`` (a fit over time is ``--time-column`` with one of them)."""
    from bayesrank.model.registry import FRAMEWORKS

    return {name: cls for name, cls in FRAMEWORKS.items() if name != "dynamic"}


def _model_fields() -> dict[str, list]:
    """Every option of every framework: field name → the fields (one per framework having it)."""
    out: dict[str, list] = {}
    for cls in _frameworks().values():
        for f in dataclasses.fields(cls):
            if f.name != "priors":
                out.setdefault(f.name, []).append((cls, f))
    return out


def _flag(name: str) -> str:
    return FLAGS.get(name, "--" + name.replace("_", "-"))


def _add_model_args(p) -> None:
    """``--model`` and one option per framework field, derived from the dataclasses."""
    p.add_argument("--model", required=True, choices=list(_frameworks()),
                   help="the framework: " + "; ".join(f"{n}: {c.__doc__.strip().splitlines()[0]}"
                                                      for n, c in _frameworks().items()))
    for name, owners in _model_fields().items():
        f = owners[0][1]
        if f.metadata.get("cli") is False:  # given by another option (random effects: --cluster)
            continue
        users = ", ".join(cls.name for cls, _ in owners)
        help_text = f"{f.metadata.get('help', name)} [{users}]"
        hint = typing.get_type_hints(owners[0][0])[name]
        if hint is bool:
            p.add_argument(_flag(name), dest=name, action="store_true", default=None, help=help_text)
            continue
        choices = sorted({c for _, g in owners for c in g.metadata.get("choices", ())}) or None
        kind = int if int in typing.get_args(hint) or hint is int else float if float in typing.get_args(hint) else str
        if any("auto" in g.metadata for _, g in owners):  # e.g. --rank R|auto
            kind = _int_or_auto
        p.add_argument(_flag(name), dest=name, type=kind, choices=choices, default=None, help=help_text)


#: Largest whole number an option takes (every count up to it is exact in double precision).
MAX_WHOLE = 2**53


def _whole(least: int):
    """The argparse type of a whole-number option of at least ``least`` (at most
    :data:`MAX_WHOLE`): a value outside is refused as a usage error naming the option, before any
    work, as the API refuses it (:func:`bayesrank.errors.as_count`)."""
    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if not least <= value <= MAX_WHOLE:
            raise argparse.ArgumentTypeError(f"expected a whole number of at least {least}"
                                             f"{'' if value < least else f' and at most {MAX_WHOLE:,}'}, got {text}")
        return value

    return whole


def _int_or_auto(text: str):
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer or 'auto', got {text!r}") from None


def _add_data_args(p) -> None:
    p.add_argument("data", help="a file path (read as named: no patterns), '-' for standard input (with "
                                "--data-format), or a bundled dataset name (see 'bayesrank datasets')")
    p.add_argument("--data-format", default=None,
                   help="override file format detection (csv, parquet, json, jsonl, counts)")
    p.add_argument("--both-bad-ties", action=argparse.BooleanOptionalAction, default=None,
                   help="count 'tie (bothbad)' verdicts as ties, or leave them out (default: the input's convention: "
                        "battle records count them, as Chatbot Arena does; count files and the bundled arena-2024 "
                        "leave them out, as the leaderbot paper does)")
    p.add_argument("--drop-duplicates", action="store_true",
                   help="count records that repeat an earlier record exactly (same id, models, verdict) once; "
                        "they are reported either way")
    p.add_argument("--covariates", default=None,
                   help="comma-separated numeric record columns kept as per-comparison context covariates")
    p.add_argument("--contrasts", default=None,
                   help="comma-separated numeric record columns of model_a's value minus model_b's (length "
                        "difference, markdown counts): style control, adjusted for in every model")
    p.add_argument("--by", default=None, metavar="COLUMN",
                   help="category column (language, task type) grouping the records: per-category "
                        "leaderboards with --model by-category --method nuts")
    p.add_argument("--time-column", default=None, metavar="COLUMN",
                   help="date or timestamp column (ISO 8601 or Unix seconds): ratings over time, scores per "
                        "--period with change points (bt, rao-kupper, davidson)")
    p.add_argument("--period", default="week", choices=("day", "week", "month"),
                   help="calendar period of --time-column (weeks start on Monday)")
    p.add_argument("--cluster", default=None, metavar="COLUMN[,COLUMN]",
                   help="one or two record columns naming each comparison's cluster (user, prompt, judge): MAP "
                        "intervals (sandwich, bootstrap) then allow for dependent votes within clusters (two "
                        "columns: two-way sandwich); --model random-effects has its effects by this column")


#: Each command's one-line help (``bayesrank --help`` lists them without building their options).
HELP = {
    "fit": "fit a model and print its leaderboard",
    "update": "add new records to a saved fit (no full refit; the old log need not exist) and save the new fit",
    "diff": "compare two saved fits: every rank and score change, new models, and why each score moved",
    "evaluate": "goodness of fit (paper Table D.2) or generalisation to held-out pairs (D.3)",
    "report": "fit one or more models and write a self-contained HTML (or Markdown) report",
    "compare": "compare models by leave-one-out cross-validation (NUTS fits)",
    "select-rank": "choose the rank of an HJA model by cross-validation, BIC or PSIS-LOO",
    "datasets": "list the bundled datasets",
    "demo": "Davidson k_tie=1 on arena-2024 by MAP and NUTS",
    "gars": "GARS scores (Borda, BT projection, Rank Centrality) of the raw counts or of a fit",
    "dml": "DMLRank: debiased GARS from human labels, context features and LLM judges "
           "(frequentist, simultaneous confidence intervals)",
    "next-pairs": "which battles next: spread a budget of votes over the pairs that settle a goal fastest",
    "provisional": "the leaderboard's provisional rows and the battles that would settle each",
}


def command_of(argv) -> str:
    """The command named on a command line (its first word that is not an option); "" when
    there is none or it is not a command."""
    word = next((w for w in argv if not w.startswith("-")), "")
    return word if word in HELP else ""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command-line parser: every command's options (default), or only those of
    ``command`` (none for ""; every command is still listed with its help line). The options
    derived from the frameworks import the model layer, so ``bayesrank --help`` and
    ``bayesrank datasets`` stay instant when only their own options are built."""
    parser = _Parser(prog="bayesrank", description="Leaderboards from pairwise comparisons of LLMs.")
    parser.add_argument("--debug", action="store_true", help="show the Python traceback of an internal error")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    parsers = {name: sub.add_parser(name, help=text) for name, text in HELP.items()}
    for name, add in _OPTIONS.items():
        if command is None or command == name:
            add(parsers[name])
    return parser


def _add_fit_args(fit) -> None:
    _add_data_args(fit)
    _add_model_args(fit)
    fit.add_argument("--method", default="map", choices=("map", "nuts"))
    fit.add_argument("--information", default=None, choices=("observed", "expected"),
                     help="MAP intervals from the observed or expected information (default: the model's)")
    fit.add_argument("--intervals", default=None, choices=("wald", "sandwich", "bootstrap", "none"),
                     help="MAP intervals: wald (inverse information), sandwich (robust; default for ties as "
                          "halves, reweighted pairs and --cluster), bootstrap (of the comparisons; of whole "
                          "clusters with --cluster) or none (point estimates only: no se, intervals or rank "
                          "intervals)")
    fit.add_argument("--n-boot", type=_whole(2), default=1000, help="MAP bootstrap: resamples")
    fit.add_argument("--restarts", type=_whole(0), default=None, metavar="K",
                     help="MAP of a log-likelihood that is not concave (Rao-Kupper, Thurstonian --k-cov, judge "
                          "discriminations): K more optimiser runs from starts moved at random (seeded by --seed); "
                          "the highest end at a stationary point is the estimate")
    fit.add_argument("--reweight", action="store_true",
                     help="weight every pair by the inverse of its number of comparisons (Chatbot Arena's option)")
    fit.add_argument("--elo", action="store_true", help="show Elo ratings (1000 + 400 score / ln 10) in the table")
    fit.add_argument("--elo-offset", type=float, default=1000.0, help="Elo rating of the average model (or the anchor)")
    fit.add_argument("--elo-anchor", default=None, metavar="MODEL", help="model whose Elo rating is the offset")
    fit.add_argument("--rank-sets", action="store_true",
                     help="simultaneous rank sets (all ranks covered at once at --level) and the top-k sets")
    fit.add_argument("--fragility", type=_whole(1), default=None, metavar="K",
                     help="MAP: the fewest votes whose removal changes the top K (confirmed by a refit)")
    fit.add_argument("--draws", type=_whole(1), default=1000,
                     help="MAP: draws from the asymptotic normal (rank intervals); NUTS: kept draws per chain")
    fit.add_argument("--tune", type=_whole(0), default=None, help="NUTS: tuning steps per chain (default 1000)")
    fit.add_argument("--chains", type=_whole(1), default=None, help="NUTS: chains (default 4)")
    fit.add_argument("--target-accept", type=float, default=None, help="NUTS: target acceptance rate (default 0.9)")
    fit.add_argument("--seed", type=_whole(0), default=None, help="seed of the draws (MAP default 0)")
    fit.add_argument("--sampler", default=None, choices=SAMPLERS,
                     help="NUTS implementation (default: pymc, PyMC's own sampler, whatever is installed; numpyro "
                          "runs on JAX, CPU or GPU), or hmc: "
                          "quarter-period HMC in the whitened coordinates (JAX; nearly independent draws)")
    _add_progress_arg(fit)
    fit.add_argument("--whiten", action=argparse.BooleanOptionalAction, default=None,
                     help="NUTS: sample in coordinates whitened by the MLE covariance (default; same posterior)")
    fit.add_argument("--geometry-tuned", action=argparse.BooleanOptionalAction, default=None,
                     help="whitened NUTS: step pi/2^d and tree depth d set by the model's size and --target-accept "
                          "(default); --no-geometry-tuned adapts the step size to --target-accept")
    fit.add_argument("--spike", type=float, default=0.1,
                     help="with --time-column: the spike (no change) scale as a fraction of the slab (change) scale")
    fit.add_argument("--level", type=float, default=0.95, help="interval level")
    fit.add_argument("--format", default="table", choices=("table", "json", "csv"))
    fit.add_argument("--top", type=_whole(0), default=20, help="rows of the table format (0: all)")
    fit.add_argument("--out", type=Path, default=None, help=f"directory for {', '.join(OUTPUTS)} (written atomically)")
    fit.add_argument("--force", action="store_true", help="replace outputs that already exist in --out")


def _add_update_args(up) -> None:
    up.add_argument("fit", type=Path, help="a saved fit: fit.nc, or the --out directory of 'bayesrank fit' / 'update'")
    up.add_argument("data", help="the new records (CSV, Parquet, JSON, JSONL), read as the fit's records were")
    up.add_argument("--out", type=Path, required=True,
                    help=f"directory for the updated {', '.join(OUTPUTS)} (written atomically; may be the fit's own "
                         "directory, with --force)")
    up.add_argument("--force", action="store_true", help="replace outputs that already exist in --out")
    up.add_argument("--data-format", default=None, help="override file format detection (csv, parquet, json, jsonl)")
    for flag in ("--both-bad-ties", "--drop-duplicates"):
        up.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                        help="must match the fit's reading (the records are read as the fit's were: the same both-bad "
                             "convention and duplicate rule)")
    for flag in ("--covariates", "--contrasts"):
        up.add_argument(flag, default=None, help="must match the fit's reading (comma-separated columns)")
    up.add_argument("--by", default=None, metavar="COLUMN", help="must match the fit's reading")
    up.add_argument("--tune", type=_whole(0), default=None,
                    help="NUTS fits: warm-up steps per chain (default 100: the chains start from the saved posterior)")
    up.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="show NUTS progress (default: when stderr is a terminal)")
    up.add_argument("--level", type=float, default=0.95, help="interval level")
    up.add_argument("--format", default="table", choices=("table", "json"))
    up.add_argument("--top", type=_whole(0), default=20, help="rows of the table format (0: all)")


def _add_diff_args(d) -> None:
    d.add_argument("old", type=Path, help="the earlier saved fit (fit.nc or its directory)")
    d.add_argument("new", type=Path, help="the later saved fit (fit.nc or its directory)")
    d.add_argument("--level", type=float, default=0.95, help="interval level of scores, ranks and changes")
    d.add_argument("--no-attribution", dest="attribution", action="store_false",
                   help="leave out the attribution of each change (it refits along the path between the boards)")
    d.add_argument("--format", default="table", choices=("table", "json", "csv"))
    d.add_argument("--top", type=_whole(0), default=30, help="rows of the table format (0: all)")
    d.add_argument("--report", type=Path, default=None,
                   help="also write an HTML (or .md) report of the new fit with a section on what changed")
    d.add_argument("--force", action="store_true", help="replace the report file if it exists")


def _add_evaluate_args(ev) -> None:
    _add_data_args(ev)
    _add_model_args(ev)
    ev.add_argument("--test-fraction", type=float, default=None,
                    help="fraction of the cells held out; the fit is on the rest and the metrics on these (paper: 0.1)")
    ev.add_argument("--seed", type=_whole(0), default=20, help="seed of the split (paper: 20)")
    ev.add_argument("--leaderbot-compat", action="store_true",
                    help="bt: reproduce leaderbot's floored half-ties and kept empty pairs (the paper's BT rows)")
    ev.add_argument("--format", default="table", choices=("table", "json", "csv"))


def _add_models_args(p, name: str) -> None:
    """``report`` and ``compare``: several models of one dataset."""
    _add_data_args(p)
    p.add_argument("--models", nargs="+", required=True, metavar="SPEC",
                   help="models as framework[:option=value,...], e.g. davidson:k_tie=1 rao-kupper bt:ties=drop")
    p.add_argument("--method", default="map" if name == "report" else "nuts", choices=("map", "nuts"))
    p.add_argument("--draws", type=_whole(1), default=1000, help="NUTS: kept draws per chain")
    p.add_argument("--tune", type=_whole(0), default=1000, help="NUTS: tuning steps per chain")
    p.add_argument("--chains", type=_whole(1), default=4, help="NUTS: chains")
    p.add_argument("--seed", type=_whole(0), default=1, help="seed (NUTS draws, MAP asymptotic draws)")
    _add_progress_arg(p)
    p.add_argument("--refit", default="auto", choices=("auto", "cells", "kfold", "none"),
                   help="where PSIS-LOO is unreliable (Pareto k > 0.7): refit those cells, K-fold, or keep PSIS")
    if name == "report":
        p.add_argument("--out", type=Path, required=True, help="report file: .html (self-contained) or .md")
        p.add_argument("--top", type=_whole(0), default=30, help="leaderboard rows per model")
        p.add_argument("--title", default="bayesrank report", help="the report's title")
        p.add_argument("--force", action="store_true", help="replace the report file if it exists")
    else:
        p.add_argument("--format", default="table", choices=("table", "json"))


def _add_select_rank_args(sel) -> None:
    _add_data_args(sel)
    _add_model_args(sel)
    sel.add_argument("--criterion", default="cv", choices=("cv", "bic", "loo"),
                     help="cv: K-fold held-out log-likelihood (the paper's); bic; loo: PSIS-LOO of NUTS fits")
    sel.add_argument("--max-rank", type=_whole(0), default=None, help="largest rank tried (default min(K-1, N-2))")
    sel.add_argument("--folds", type=_whole(2), default=5, help="cv: folds of the record-level split")
    sel.add_argument("--seed", type=_whole(0), default=0, help="cv: seed of the split; loo: seed of the chains")
    sel.add_argument("--draws", type=_whole(1), default=1000, help="loo: NUTS draws per chain")
    sel.add_argument("--tune", type=_whole(0), default=1000, help="loo: NUTS tuning steps per chain")
    sel.add_argument("--chains", type=_whole(1), default=4, help="loo: NUTS chains")
    sel.add_argument("--sampler", default=None, choices=SAMPLERS, help="loo: sampler (as for fit)")
    sel.add_argument("--format", default="table", choices=("table", "json"))
    _add_progress_arg(sel)


def _add_progress_arg(p) -> None:
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bars on standard error for NUTS and the other long steps (default: when stderr "
                        "is a terminal, and never under --format json unless --progress asks)")


def _add_demo_args(demo) -> None:
    demo.add_argument("--out", type=Path, default=Path("demo"), help="directory for the two fits")
    demo.add_argument("--draws", type=_whole(1), default=1000)
    demo.add_argument("--tune", type=_whole(0), default=1000)
    demo.add_argument("--chains", type=_whole(1), default=4)
    demo.add_argument("--seed", type=_whole(0), default=1)
    demo.add_argument("--force", action="store_true", help="replace outputs that already exist in --out")
    _add_progress_arg(demo)


def _add_gars_args(g) -> None:
    from bayesrank.model.scoring import SCHEMES, SCORES

    _add_data_args(g)
    g.add_argument("--score", default="borda", choices=SCORES, help="the GARS functional")
    g.add_argument("--ties", dest="scheme", default="win-loss-tie", choices=list(SCHEMES),
                   help="tie weights: binary drops ties; win-loss-tie gives half a win each; "
                        "win-loss-both-good-both-bad needs raw counts with 'tie (bothbad)' kept apart")
    g.add_argument("--fit", type=Path, default=None,
                   help="a saved fit of DATA (fit.nc of 'bayesrank fit --out'): GARS of its implied probabilities; "
                        "default: the raw counts (saturated model) when every pair was compared, else a Davidson "
                        "k_tie=1 fit (MAP; Bradley-Terry without ties), since raw counts say nothing about pairs "
                        "that never met")
    g.add_argument("--model", default=None, metavar="SPEC",
                   help="fit this model (framework[:option=value,...]) by MAP here and use its probabilities")
    g.add_argument("--counts-only", action="store_true",
                   help="raw counts even when pairs are missing (observed pairs only: another estimand)")
    g.add_argument("--method", default="map", choices=("map", "posterior"),
                   help="raw counts: MLE with delta-method intervals, or the Dirichlet posterior")
    g.add_argument("--by-judge", action="store_true", help="raw counts: one context per judge (F averaged over judges)")
    g.add_argument("--context-weights", default="data", choices=("data", "uniform"),
                   help="fit with judges or covariates: weight of each context (its share of the data, or equal)")
    g.add_argument("--draws", type=_whole(1), default=1000, help="draws for posterior / rank intervals")
    g.add_argument("--seed", type=_whole(0), default=0, help="seed of the draws")
    g.add_argument("--level", type=float, default=0.95, help="interval level")
    g.add_argument("--format", default="table", choices=("table", "json", "csv"))
    g.add_argument("--top", type=_whole(0), default=20, help="rows of the table format (0: all)")
    _add_progress_arg(g)


def _add_dml_args(d) -> None:
    from bayesrank.gars.dml.learners import DEFAULT_LEARNER, LEARNERS
    from bayesrank.model.scoring import SCHEMES, SCORES

    d.add_argument("data", help="table of contexts and labelled comparisons (CSV / Parquet / JSON / JSONL): "
                                "context, features, model_a (shown first), model_b, winner; or a bundled dataset "
                                "name (mtbench-judges: one context per question and judge)")
    d.add_argument("--data-format", default=None, help="override file format detection (csv, parquet, json, jsonl)")
    d.add_argument("--features", default="", help="comma-separated numeric context feature columns")
    d.add_argument("--judge-probs", default="", help="comma-separated columns of an LLM judge's category probabilities")
    d.add_argument("--context", default="context", help="context id column (absent: each row its own context)")
    d.add_argument("--propensity", default=None, help="column of known labelling probabilities (default: estimated)")
    d.add_argument("--score", default="borda", choices=SCORES)
    d.add_argument("--ties", dest="scheme", default="win-loss-tie", choices=list(SCHEMES))
    d.add_argument("--learner", default=DEFAULT_LEARNER, choices=LEARNERS,
                   help=f"nuisance learner for the outcome probabilities and propensities (default {DEFAULT_LEARNER})")
    d.add_argument("--folds", type=_whole(2), default=5, help="cross-fitting folds over contexts")
    d.add_argument("--pi-clip", type=float, default=1e-3, help="lower clip of the labelling propensities")
    d.add_argument("--budget", type=float, default=None,
                   help="also the A-optimal labelling policy for these contexts with this expected number of labels")
    d.add_argument("--floor", type=float, default=0.01, help="smallest labelling probability of the policy")
    d.add_argument("--policy-out", type=Path, default=None,
                   help="write the whole policy table (CSV) here (never the input; an existing file only with --force)")
    d.add_argument("--force", action="store_true", help="replace the --policy-out file if it exists")
    d.add_argument("--level", type=float, default=0.95, help="simultaneous coverage of the intervals")
    d.add_argument("--seed", type=_whole(0), default=0)
    d.add_argument("--format", default="table", choices=("table", "json", "csv"))
    d.add_argument("--top", type=_whole(0), default=20, help="policy rows shown by the table format")


def _add_fit_file_arg(p) -> None:
    p.add_argument("fit", type=Path, help="a saved fit: the --out folder of 'bayesrank fit' or its fit.nc")


def _add_next_pairs_args(p) -> None:
    _add_fit_file_arg(p)
    p.add_argument("--budget", type=_whole(1), required=True, help="votes to plan (their n add up to it)")
    p.add_argument("--goal", default="ranks", choices=("top-k", "ranks", "model", "all-pairs"),
                   help="top-k: which models are in the top K; ranks: every rank interval; model: the place of "
                        "--model; all-pairs: every score difference (A-optimal)")
    p.add_argument("--k", type=_whole(1), default=None, help="top-k: the size of the top")
    p.add_argument("--model", default=None, metavar="NAME", help="model: the model to place")
    p.add_argument("--judges", default=None, help="judge fits: comma-separated judges that may be asked (default all)")
    p.add_argument("--level", type=float, default=0.95, help="level of the projected rank intervals")
    p.add_argument("--seed", type=_whole(0), default=0, help="seed of the projections' draws")
    p.add_argument("--format", default="table", choices=("table", "json", "csv"))
    p.add_argument("--top", type=_whole(0), default=20, help="pairs shown by the table format (0: all)")


def _add_provisional_args(p) -> None:
    _add_fit_file_arg(p)
    p.add_argument("--level", type=float, default=0.95, help="level of the rank intervals")
    p.add_argument("--seed", type=_whole(0), default=0, help="seed of the projections' draws")
    p.add_argument("--format", default="table", choices=("table", "json", "csv"))


def _no_options(p) -> None:
    """``datasets`` takes no options."""


#: Command → the function adding its options (see :func:`build_parser`).
_OPTIONS = {
    "fit": _add_fit_args, "update": _add_update_args, "diff": _add_diff_args, "evaluate": _add_evaluate_args,
    "report": lambda p: _add_models_args(p, "report"), "compare": lambda p: _add_models_args(p, "compare"),
    "select-rank": _add_select_rank_args, "datasets": _no_options,
    "demo": _add_demo_args, "gars": _add_gars_args, "dml": _add_dml_args,
    "next-pairs": _add_next_pairs_args, "provisional": _add_provisional_args,
}


def framework_from_args(args):
    """The framework named by ``--model`` with the options given on the command line.

    Raises
    ------
    BayesrankError
        An option that the chosen framework does not have (or an invalid value, from the
        framework's own validation).
    """
    cls = _frameworks()[args.model]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    own = set(fields)
    given = {name: getattr(args, name) for name in _model_fields()
             if getattr(args, name, None) is not None and name != "cluster"}
    foreign = [name for name in given if name not in own]
    if foreign:
        options = ", ".join(_flag(n) for n in sorted(own - {"priors"}) if fields[n].metadata.get("cli") is not False)
        raise ModelSpecError(f"{', '.join(_flag(n) for n in foreign)} does not apply to {args.model} "
                             f"(its options: {options or 'none'}).")
    for name, f in fields.items():
        if f.metadata.get("spec") and name in given:  # a framework built on another: --base SPEC
            given[name] = framework_from_text(given[name])
        if f.metadata.get("cli") is False:   # the clusters of random effects: --cluster, one column
            columns = _columns(getattr(args, "cluster", None))
            if len(columns) != 1:
                raise ModelSpecError(f"--model {args.model} needs --cluster COLUMN, one column: the clusters "
                                     "whose scores deviate (user, prompt, judge).")
            given[name] = columns[0]
    return cls(**{name: value for name, value in given.items() if value != "auto"})


def _auto_options(args) -> list[str]:
    """Model options given as ``auto`` (chosen from the data, e.g. HJA's ``--rank auto``)."""
    return [name for name in _model_fields() if getattr(args, name, None) == "auto"]


def _check_models(args, least: int) -> None:
    """``--models``: each spec once, and at least ``least`` of them (before any fit)."""
    repeated = sorted({m for m in args.models if args.models.count(m) > 1})
    if repeated:
        raise ModelSpecError(f"--models names {', '.join(map(repr, repeated))} more than once; list each model once.")
    if len(args.models) < least:
        raise ModelSpecError(f"{args.command} needs at least {least} models to compare (--models A B ...); got "
                             f"{len(args.models)}.")


def _fits_of(args, data):
    """The fits of ``--models``; models that will be compared are checked to be comparable first,
    so that an incomparable pair is refused before any sampling."""
    from bayesrank.evaluation.compare import check_comparable
    from bayesrank.results.fit import fit
    from bayesrank.runtime import progress

    frameworks = {spec: framework_from_text(spec) for spec in args.models}
    if args.method == "nuts" and (args.command == "compare" or len(frameworks) > 1):
        check_comparable(frameworks, data)
    fits = {}
    with progress.bar(f"fitting {len(frameworks)} model(s) by {args.method.upper()}", len(frameworks)) as shown:
        for spec, framework in frameworks.items():
            shown.describe(f"fitting {spec} by {args.method.upper()}")
            kwargs = (dict(random_seed=args.seed) if args.method == "map" else
                      dict(draws=args.draws, tune=args.tune, chains=args.chains, random_seed=args.seed))
            fits[spec] = fit(framework, data, method=args.method, **kwargs)
            shown.advance()
    return fits


def _comparison(args, fits):
    from bayesrank.evaluation.compare import compare

    if args.method != "nuts" or len(fits) < 2:
        return None
    return compare(fits, refit=None if args.refit == "none" else args.refit)


def cmd_report(args) -> int:
    """Run ``bayesrank report`` (what it does: :data:`HELP`); return the exit code."""
    from bayesrank.report import Report

    _check_models(args, 1)
    reserve([args.out], args.force)
    fits = _fits_of(args, _load(args))
    report = Report(fits, comparison=_comparison(args, fits), command=_command(args),
                    top=args.top, title=args.title)
    path = report.save(args.out, overwrite=args.force)
    print(f"report written to {path}")
    return 0


def _command(args) -> str:
    """The command line that is running, exactly (shell-quoted)."""
    return shlex.join(["bayesrank", *args.argv])


def cmd_compare(args) -> int:
    """Run ``bayesrank compare`` (what it does: :data:`HELP`); return the exit code."""
    from bayesrank.inference.tree import plain

    if args.method != "nuts":
        raise BayesrankError("compare needs NUTS fits: leave-one-out reweights posterior draws (use --method nuts).")
    _check_models(args, 2)
    fits = _fits_of(args, _load(args))
    table = _comparison(args, fits)
    if args.format == "json":
        rows = [{"name": name, **row} for name, row in table.to_dict("index").items()]
        print(json.dumps(plain({"models": rows, "warnings": table.attrs["warnings"]})))
    else:
        print(table.to_string(float_format=lambda v: f"{v:.2f}"))
        for w in table.attrs["warnings"]:
            print(f"note: {w}")
    return 0


def _columns(text) -> tuple[str, ...]:
    """Comma-separated column names (``--covariates a,b``) as a tuple; empty for no text."""
    return tuple(c.strip() for c in text.split(",") if c.strip()) if text else ()


def _load(args):
    from bayesrank.data.load import load

    return load(args.data, format=args.data_format, both_bad_as_ties=args.both_bad_ties,
                covariates=_columns(args.covariates), contrasts=_columns(args.contrasts), by=args.by,
                drop_duplicates=args.drop_duplicates, cluster=_columns(getattr(args, "cluster", None)),
                time_column=getattr(args, "time_column", None),
                period=getattr(args, "period", "week"))


#: ``fit`` options a fit over time (``--time-column``) does not take, and why.
NOT_OVER_TIME = {"information": "its MAP path is not a maximum-likelihood fit", "intervals": "its intervals are "
                 "quantiles of its draws", "reweight": "it weights every comparison alike", "restarts": "its MAP "
                 "path has one fixed point from one start", "elo": "its scores are per period",
                 "rank_sets": "its ranks are per period", "fragility": "it is computed for static fits",
                 "cluster": "its intervals come from its own posterior approximation, not a sandwich"}


#: ``fit`` options of NUTS alone, with their defaults: given with ``--method map``, they are refused.
NUTS_ONLY = {"tune": 1000, "chains": 4, "target_accept": 0.9, "sampler": None, "whiten": True,
             "geometry_tuned": True}


def _nuts_options(args) -> dict:
    """The NUTS-only options of ``fit`` (:data:`NUTS_ONLY`), each as given or its default; with
    ``--method map`` any given is refused (MAP would silently do without it)."""
    given = [name for name in NUTS_ONLY if getattr(args, name, None) is not None]
    if args.method == "map" and given:
        raise BayesrankError(f"{', '.join(_flag(n) for n in given)} {'applies' if len(given) == 1 else 'apply'} to "
                             f"--method nuts only; drop {'it' if len(given) == 1 else 'them'}, or sample with "
                             "--method nuts.")
    return {name: default if getattr(args, name, None) is None else getattr(args, name)
            for name, default in NUTS_ONLY.items()}


def _time_kwargs(args) -> dict:
    """The options of a fit over time, after refusing those that do not apply (:data:`NOT_OVER_TIME`)."""
    for name, why in NOT_OVER_TIME.items():
        if getattr(args, name, None) not in (None, False):
            raise BayesrankError(f"{_flag(name)} does not apply with --time-column: {why}.")
    nuts = _nuts_options(args)
    if args.method == "map":
        return dict(method="map", draws=args.draws, random_seed=0 if args.seed is None else args.seed)
    return dict(method="nuts", draws=args.draws, tune=nuts["tune"], chains=nuts["chains"], random_seed=args.seed,
                sampler=nuts["sampler"], target_accept=nuts["target_accept"], progressbar=args.progress,
                whiten=False, geometry_tuned=False)


def _fit_kwargs(args) -> dict:
    if getattr(args, "time_column", None) is not None:
        return _time_kwargs(args)
    nuts = _nuts_options(args)
    if args.method == "map":
        return dict(method="map", information=args.information, draws=args.draws,
                    random_seed=0 if args.seed is None else args.seed, intervals=args.intervals,
                    n_boot=args.n_boot, reweight=args.reweight, restarts=args.restarts or 0)
    for flag, value, why in (("--intervals", args.intervals, "NUTS intervals are posterior quantiles"),
                             ("--reweight", args.reweight or None, "NUTS intervals are posterior quantiles"),
                             ("--restarts", args.restarts, "NUTS runs its own chains from their own starts: --chains")):
        if value is not None:
            raise BayesrankError(f"{flag} applies to --method map ({why}).")
    return dict(method="nuts", draws=args.draws, random_seed=args.seed, progressbar=args.progress, **nuts)


def _check_shown(args) -> None:
    """Refuse a ``--level`` no table can show (``--top`` is a whole number by its type)."""
    if not 0 < args.level < 1:
        raise ModelSpecError(f"--level must be in (0, 1), got {args.level}.")


def cmd_fit(args) -> int:
    """Run ``bayesrank fit`` (what it does: :data:`HELP`); return the exit code."""
    from bayesrank.analysis.fragility import fragility
    from bayesrank.analysis.style import style_control
    from bayesrank.results.elo import Elo
    from bayesrank.results.fit import fit

    _check_shown(args)
    if args.out is not None:
        check_out(args.out, args.force)
    framework = framework_from_args(args)
    if args.time_column is not None:
        from bayesrank.model.dynamic import Dynamic

        if args.model not in ("bt", "rao-kupper", "davidson"):
            raise BayesrankError(f"--time-column applies to --model bt, rao-kupper or davidson, not {args.model}.")
        framework = Dynamic(framework, spike=args.spike)
    data = _load(args)
    selection = None
    if _auto_options(args):
        framework, selection = _select(args, framework, data)
    kwargs = _fit_kwargs(args)
    styled = style_control(framework, data, level=args.level, **kwargs) if data.contrast_names else None
    result = styled.adjusted if styled is not None else fit(framework, data, **kwargs)
    view = Elo(offset=args.elo_offset, anchor=args.elo_anchor)
    extra = {}
    if styled is not None:
        extra["style"] = styled.to_json(args.level)["style"]
    if args.rank_sets:
        sets = result.rank_sets(args.level)
        extra["rank_sets"] = {"level": args.level, "critical_value": sets.attrs["critical_value"],
                              "items": sets.to_dict("records"),
                              "top_sets": {str(k): [str(n) for n in sets.loc[sets["rank_set_lower"] <= k, "name"]]
                                           for k in (1, 3, 5, 10) if k < len(sets)}}
    if args.fragility is not None:
        extra["fragility"] = fragility(result, k=args.fragility).to_dict()
    if result.framework.name == "by-category":
        extra["categories"] = result.categories(args.level).to_dict("records")
    if result.framework.random_effects() and result.interval_method != "none":
        extra["random_effects"] = result.random_effects(args.level).to_json()
    if selection is not None:
        extra["rank_selection"] = selection.to_json()
    if args.out is not None:
        write_outputs(result, args.out, args.level, args.force, view)
    if args.format == "json":
        from bayesrank.inference.tree import plain

        print(json.dumps(plain({**result.to_json(args.level, view), **extra})))
    elif args.format == "table" and args.time_column is not None:
        print(result.to_text(args.top, args.level))
    elif args.format == "csv":
        from bayesrank.results.summary import has_elo

        sys.stdout.write(csv_text(result.leaderboard(args.level, view if args.elo and has_elo(result.tree) else False)))
    else:
        if selection is not None:
            print(render_selection(selection) + "\n")
        print(result.to_text(args.top, args.level, view if args.elo else None, extra,
                             styled.leaderboard if styled is not None else None))
    return 0


def cmd_update(args) -> int:
    """Run ``bayesrank update`` (what it does: :data:`HELP`); return the exit code."""
    _check_shown(args)
    check_out(args.out, args.force)
    saved = saved_fit(args.fit)
    running = {}
    if args.tune is not None:
        if saved.method != "nuts":
            raise ModelSpecError("--tune applies to fits made with --method nuts; this fit is a MAP fit.")
        running["tune"] = args.tune
    if args.progress is not None and saved.method == "nuts":
        running["progressbar"] = args.progress
    result = saved.update(args.data, format=args.data_format, both_bad_as_ties=args.both_bad_ties,
                          covariates=_columns(args.covariates) if args.covariates is not None else None,
                          contrasts=_columns(args.contrasts) if args.contrasts is not None else None, by=args.by,
                          drop_duplicates=args.drop_duplicates, **running)
    write_outputs(result, args.out, args.level, args.force)
    done = result.diagnostics["update"]
    if args.format == "json":
        from bayesrank.inference.tree import plain

        print(json.dumps(plain({**result.to_json(args.level), "update": done, "lineage": result.lineage})))
        return 0
    new = ", ".join(done["new_models"]) or "none"
    seconds = done["seconds"]
    print(result.to_text(args.top, args.level))
    print(f"\nupdated with {done['comparisons']:,.0f} comparisons from {args.data} (new models: {new}); "
          f"{len(result.lineage)} sets of records in all; read {seconds['read']:.2f} s, merged "
          f"{seconds['merge']:.2f} s, fitted {seconds['fit']:.2f} s; written to {args.out}/")
    return 0


def cmd_diff(args) -> int:
    """Run ``bayesrank diff`` (what it does: :data:`HELP`); return the exit code."""
    from bayesrank.analysis.changes import diff

    _check_shown(args)
    if args.report is not None:
        from bayesrank.results.io import check_target

        check_target(args.report, args.force)
    old, new = saved_fit(args.old), saved_fit(args.new)
    changes = diff(old, new, level=args.level, attribution=args.attribution)
    if args.report is not None:
        from bayesrank.report import Report

        Report({f"{new.framework.label}": new}, command=_command(args), changes=changes,
               title="bayesrank: what changed on the board").save(args.report, overwrite=args.force)
    if args.format == "json":
        print(json.dumps(changes.to_json()))
    elif args.format == "csv":
        sys.stdout.write(csv_text(changes.to_frame()))
    else:
        print(changes.to_text(args.top))
    return 0


def _select(args, framework, data):
    """``--rank auto``: the rank chosen by the field's criterion (cross-validation), then the
    framework with it (:func:`bayesrank.evaluation.selection.select_rank`)."""
    from bayesrank.evaluation.selection import select_rank

    auto = _auto_options(args)
    if args.model != "hja" or auto != ["rank"]:
        raise BayesrankError(f"'auto' applies to --rank of the hja model only, not to {', '.join(map(_flag, auto))}.")
    criterion = {f.name: f for f in dataclasses.fields(framework)}["rank"].metadata["auto"]
    selection = select_rank(framework, data, criterion)
    return dataclasses.replace(framework, rank=selection.rank), selection


def cmd_select_rank(args) -> int:
    """Run ``bayesrank select-rank`` (what it does: :data:`HELP`); return the exit code."""
    from bayesrank.evaluation.selection import select_rank

    if args.model != "hja":
        raise BayesrankError(f"select-rank chooses the rank of the hja model; --model {args.model} has none.")
    framework = framework_from_args(args)
    nuts = {"draws": args.draws, "tune": args.tune, "chains": args.chains, "random_seed": args.seed,
            "sampler": args.sampler}
    selection = select_rank(framework, _load(args), args.criterion, max_rank=args.max_rank, folds=args.folds,
                            random_seed=args.seed, nuts=nuts)
    print(json.dumps(selection.to_json()) if args.format == "json" else render_selection(selection))
    return 0


def render_selection(selection) -> str:
    """The rank-selection table with the chosen rank."""
    what = {"cv": "mean held-out NLL per comparison; lower is better", "bic": "BIC; lower is better",
            "loo": "elpd_loo; higher is better"}[selection.criterion]
    lines = [f"rank chosen by {selection.criterion}: {selection.rank}   ({what})", ""]
    lines.append(selection.criteria.to_string(index=False, float_format=lambda v: f"{v:.5g}"))
    lines += [f"warning: {w}" for w in selection.warnings]
    return "\n".join(lines)


def cmd_evaluate(args) -> int:
    """Run ``bayesrank evaluate`` (what it does: :data:`HELP`); return the exit code."""
    from bayesrank.evaluation.goodness import generalization, goodness_of_fit, information_criteria
    from bayesrank.inference.tree import plain
    from bayesrank.results.fit import fit

    data = _load(args)
    framework = framework_from_args(args)
    if _auto_options(args):
        raise BayesrankError("evaluate needs a fixed rank; choose it first with 'bayesrank select-rank'.")
    if args.test_fraction is None:
        kind = "goodness_of_fit"
        result = fit(framework, data)
        metrics = {**goodness_of_fit(result, leaderbot_compat=args.leaderbot_compat), **information_criteria(result)}
    else:
        kind = "generalization"
        result, metrics = generalization(framework, data, test_fraction=args.test_fraction, random_seed=args.seed,
                                         leaderbot_compat=args.leaderbot_compat)
    out = plain({"framework": framework.name, "spec": framework.spec(), "label": framework.label,
                 "method": result.method, "evaluation": kind, "test_fraction": args.test_fraction,
                 "random_seed": args.seed,
                 "n_params": result.n_params, "converged": result.converged, "nll": result.nll,
                 "mle_exists": result.diagnostics.get("mle_exists", True), "metrics": metrics,
                 "warnings": result.warnings})
    if args.format == "json":
        print(json.dumps(out))
    elif args.format == "csv":
        import pandas as pd

        row = {"model": framework.label, "evaluation": kind, "converged": result.converged, **metrics}
        sys.stdout.write(csv_text(pd.DataFrame([row])))
    else:
        where = ("training data" if kind == "goodness_of_fit" else
                 f"{metrics['n_test_cells']} held-out cells (trained on {metrics['n_train_cells']}, seed {args.seed})")
        lines = [f"{framework.label} by MAP, {result.n_params} free parameters, "
                 f"{result.convergence}; metrics on the {where}",
                 "RMSE in counts per cell (weighted by n_ij/n); KLD and JSD x 100 (mean over cells)", ""]
        for k, v in metrics.items():
            lines.append(f"  {k:<14} {v:.6g}" if isinstance(v, float) else f"  {k:<14} {v}")
        lines += [f"warning: {w}" for w in result.warnings]
        print("\n".join(lines))
    return 0


def check_out(out: Path, force: bool) -> None:
    """Claim ``--out`` for this run before any work is done (:func:`bayesrank.output.atomic.reserve`):
    refused when it is a file, holds outputs (without ``--force``), is being written by another
    run, or cannot be made (a dangling link, a file on its path, no permission)."""
    try:
        is_file = out.exists() and not out.is_dir()
    except OSError:
        is_file = False  # reserve() says why the path is unusable
    if is_file:
        raise OutputError(f"--out {out} is a file, not a directory; choose a directory for {', '.join(OUTPUTS)}.")
    try:
        reserve([out / name for name in OUTPUTS], force)
    except OutputError as err:
        if "already exist" in str(err):
            existing = [name for name in OUTPUTS if os.path.lexists(out / name)]
            raise OutputError(f"{out} already holds {', '.join(existing)}; pass --force to replace them, or choose "
                              "another --out.") from None
        raise


def write_outputs(result, out: Path, level: float = 0.95, force: bool = False, elo=None) -> list[Path]:
    """Write :data:`OUTPUTS` into the directory ``out`` as one atomic step: the whole fit
    (NetCDF), its JSON summary and its leaderboard (CSV, formula-like cells escaped).

    Returns the files replaced (only with ``force``); says so on stderr."""
    from bayesrank.results.io import write_files, write_netcdf

    summary = json.dumps(result.to_json(level, elo), indent=1) + "\n"
    board = csv_text(result.leaderboard(level), float_format="%.6g")
    writers = {
        out / "fit.nc": lambda p: write_netcdf(result.tree, p),
        out / "summary.json": lambda p: p.write_text(summary, encoding="utf-8"),
        out / "leaderboard.csv": lambda p: p.write_text(board, encoding="utf-8"),
    }
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} is a file, not a directory; choose a directory for {', '.join(OUTPUTS)}.")
    replaced = write_files(writers, overwrite=force)
    if replaced:
        print(f"bayesrank: replaced {', '.join(str(p) for p in replaced)}", file=sys.stderr)
    return replaced


def cmd_datasets(args) -> int:
    """Run ``bayesrank datasets`` (what it does: :data:`HELP`); return the exit code."""
    from bayesrank.data.bundled import DATASETS
    from bayesrank.data.load import load_dataset

    for name, ds in DATASETS.items():
        s = load_dataset(name).summary()
        judges = f", {s['n_judges']} judges" if "n_judges" in s else ""
        print(f"{name}: {s['n_items']} items{judges}, {s['n_cells']} cells, "
              f"{s['n_comparisons']:,.0f} comparisons — {ds.description}")
        print(f"    provenance: {ds.provenance} Licence: {ds.licence}")
    return 0


def cmd_demo(args) -> int:
    """Run ``bayesrank demo`` (what it does: :data:`HELP`); return the exit code."""
    from bayesrank.data.load import load_dataset
    from bayesrank.model.paired import Davidson
    from bayesrank.report import Report
    from bayesrank.results.fit import fit

    for method in ("map", "nuts"):
        check_out(args.out / f"davidson-k1-{method}", args.force)
    reserve([args.out / "report.html"], args.force)
    data = load_dataset("arena-2024")
    model = Davidson(k_tie=1)
    fits = {}
    for method in ("map", "nuts"):
        kwargs = {} if method == "map" else dict(draws=args.draws, tune=args.tune, chains=args.chains,
                                                 random_seed=args.seed)
        fits[f"Davidson k_tie=1, {method.upper()}"] = result = fit(model, data, method=method, **kwargs)
        print(result.to_text(20))
        print()
        write_outputs(result, args.out / f"davidson-k1-{method}", force=args.force)
    report = Report(fits, title="arena-2024: Davidson with factored ties, MLE and posterior",
                    command=_command(args))
    report.save(args.out / "report.html", overwrite=args.force)
    print(f"fits, summaries and report.html written to {args.out}/")
    return 0


def cmd_gars(args) -> int:
    """Run ``bayesrank gars`` (what it does: :data:`HELP`); return the exit code."""
    from bayesrank import gars
    from bayesrank.model.scoring import scheme_of
    from bayesrank.results.fit import Fit

    if args.both_bad_ties is None and scheme_of(args.scheme).n_categories == 4:
        args.both_bad_ties = False  # both-bad ties are a category of their own in this scheme
    data = _load(args)
    if args.fit is not None and (args.model or args.counts_only):
        raise BayesrankError("--fit, --model and --counts-only each name the source of the GARS; pass one of them.")
    if args.fit is None:
        result = gars.from_data(data, args.score, args.scheme, method=args.method, by_judge=args.by_judge,
                                framework=framework_from_text(args.model) if args.model else None,
                                counts_only=args.counts_only, draws=args.draws, random_seed=args.seed)
    else:
        fitted = Fit.load(args.fit)
        if fitted.data.cells_digest() != data.cells_digest():
            options = sorted((set(fitted.data.reading) | set(data.reading)) - {"id_digest"})
            differ = [f"{name}={fitted.data.reading.get(name)!r} for the fit, {data.reading.get(name)!r} here"
                      for name in options if fitted.data.reading.get(name) != data.reading.get(name)]
            why = (f"; its records were read with other options ({'; '.join(differ)}): read {args.data} as the fit "
                   "did" if differ else "")
            raise BayesrankError(f"--fit {args.fit} was fitted to other data ({fitted.data!r}) than {args.data} "
                                 f"({data!r}): its ranking is not {args.data}'s{why}; fit {args.data} first "
                                 "('bayesrank fit DATA ... --out DIR') or pass the data it was fitted to.")
        result = gars.from_fit(fitted, args.score, args.scheme, context_weights=args.context_weights,
                               draws=args.draws, random_seed=args.seed)
    table = result.table(args.level)
    if args.format == "json":
        print(json.dumps(result.to_json(args.level)))
    elif args.format == "csv":
        sys.stdout.write(csv_text(table))
    else:
        kind = "Wald (delta method)" if result.interval == "wald" else "posterior"
        lines = [f"GARS {args.score} ({args.scheme}) of the {result.source}: {len(result.items)} items, "
                 f"{result.n_contexts} context(s); {100 * args.level:g}% {kind} intervals, rank intervals from draws",
                 ""]
        lines.append((table.head(args.top) if args.top else table).to_string(
            index=False, float_format=lambda v: f"{v:.4f}"))
        lines += [f"warning: {w}" for w in result.warnings]
        print("\n".join(lines))
    return 0


def _check_policy_out(args) -> None:
    """``--policy-out``: claimed (existing only with --force) before the work; never the input records
    (:func:`~bayesrank.output.atomic.mark_input`)."""
    if args.budget is None:
        raise ModelSpecError("--policy-out writes the labelling policy, which needs --budget.")
    reserve([args.policy_out], args.force)   # (never the input records: main marked them)


def cmd_dml(args) -> int:
    """Run ``bayesrank dml`` (what it does: :data:`HELP`); return the exit code."""
    from bayesrank.gars.dml import dmlrank, read_records
    from bayesrank.model.scoring import scheme_of
    from bayesrank.output.tables import write_csv

    if args.policy_out is not None:
        _check_policy_out(args)
    records = read_records(args.data, features=_columns(args.features), judge_probs=_columns(args.judge_probs),
                           context=args.context, propensity=args.propensity,
                           n_categories=scheme_of(args.scheme).n_categories, format=args.data_format)
    result = dmlrank(records, args.score, args.scheme, learner=args.learner, n_folds=args.folds,
                     pi_clip=args.pi_clip, level=args.level, budget=args.budget, floor=args.floor,
                     random_seed=args.seed)
    if args.policy_out is not None and result.policy is not None:
        write_csv(result.policy.table, args.policy_out, overwrite=args.force)
    if args.format == "json":
        print(json.dumps(result.to_json()))
        return 0
    table = result.table()
    if args.format == "csv":
        sys.stdout.write(csv_text(table))
        return 0
    d = result.diagnostics
    lines = [f"DMLRank {args.score} ({args.scheme}): {result.n_contexts} contexts, {result.n_labels} labels, "
             f"{d['n_folds']}-fold cross-fitting ({d['learner']}), propensities {d['propensity']}",
             f"frequentist: simultaneous {100 * args.level:g}% confidence intervals (Gaussian max c = "
             f"{result.critical:.3f}; Bonferroni {result.critical_bonferroni:.3f}); plugin = naive plug-in", ""]
    lines.append(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    if result.policy is not None:
        p = result.policy
        head = p.table.head(args.top) if args.top else p.table
        lines += ["", f"label these pairs next (A-optimal, expected {p.expected_cost:g} labels for a budget of "
                      f"{p.budget:g}, floor {p.floor:g}): label each with probability pi", "",
                  head.to_string(index=False, float_format=lambda v: f"{v:.4f}")]
    lines += [f"warning: {w}" for w in result.warnings]
    print("\n".join(lines))
    return 0


def saved_fit(path: Path):
    """The fit saved at ``path``: a ``--out`` folder of ``bayesrank fit`` (its ``fit.nc``) or the file."""
    from bayesrank.results.fit import Fit

    return Fit.load(path)


def cmd_next_pairs(args) -> int:
    """Run ``bayesrank next-pairs`` (what it does: :data:`HELP`); return the exit code."""
    from bayesrank.design.next_pairs import next_pairs

    fitted = saved_fit(args.fit)
    plan = next_pairs(fitted, args.budget, args.goal, k=args.k, model=args.model,
                      judges=list(_columns(args.judges)) if args.judges is not None else None,
                      level=args.level, random_seed=args.seed)
    if args.format == "json":
        print(json.dumps(plan.to_json()))
    elif args.format == "csv":
        sys.stdout.write(csv_text(plan.table(), float_format="%.6g"))
    else:
        print(plan.to_text(args.top))
    return 0


def cmd_provisional(args) -> int:
    """Run ``bayesrank provisional`` (what it does: :data:`HELP`); return the exit code."""
    from bayesrank.design.settle import provisional_rows
    from bayesrank.inference.tree import plain

    rows = provisional_rows(saved_fit(args.fit), args.level, random_seed=args.seed)
    span = rows.attrs["max_span"]
    if args.format == "json":
        print(json.dumps(plain({"max_span": span, "level": args.level, "rows": rows.to_dict("records")})))
    elif args.format == "csv":
        sys.stdout.write(csv_text(rows))
    elif rows.empty:
        print(f"no provisional rows: every {100 * args.level:g}% rank interval spans at most {span} ranks")
    else:
        print(f"provisional rows: {len(rows)}, their {100 * args.level:g}% rank interval wider than {span} ranks; "
              "battles: "
              f"votes of the model (against the opponents named) after which its interval is projected to span at "
              f"most {span} ranks, the scores held at their estimates\n")
        print(rows.to_string(index=False))
    return 0


COMMANDS = {"fit": cmd_fit, "update": cmd_update, "diff": cmd_diff, "evaluate": cmd_evaluate,
            "select-rank": cmd_select_rank, "report": cmd_report, "compare": cmd_compare, "datasets": cmd_datasets,
            "demo": cmd_demo,
            "gars": cmd_gars, "dml": cmd_dml, "next-pairs": cmd_next_pairs, "provisional": cmd_provisional}


class _Terminated(BaseException):
    """SIGTERM arrived: unwind (releasing claims, removing temporary files), then exit 143."""


def _terminate(signum, frame):
    note_signal(signum)
    raise _Terminated()


def _interrupt(signum, frame):
    note_signal(signum)
    raise KeyboardInterrupt()


def main(argv=None) -> int:
    """Run the command line; returns the exit code (see the module docstring)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    forget_signals()
    previous = {signum: _install(signum, handler) for signum, handler in ((signal.SIGTERM, _terminate),
                                                                         (signal.SIGINT, _interrupt))}
    stdout, unraisable = sys.stdout, sys.unraisablehook
    sys.unraisablehook = _signal_quiet(unraisable)
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        args = build_parser(command_of(argv)).parse_args(argv)
        args.argv = argv
        if isinstance(getattr(args, "data", None), str) and args.data != "-":
            mark_input(args.data)  # never an output of this run, even with --force: refused when claimed
        if getattr(args, "format", "table") == "table" or _is_terminal(stdout):
            sys.stdout = TerminalStream(stdout)  # text for people: names cannot drive the terminal
        with warnings.catch_warnings(), _progress_setting(args):
            warnings.simplefilter("ignore")
            code = COMMANDS[args.command](args)
        sys.stdout.flush()
        if noted_signal() is not None:  # a library swallowed the signal: the run still ends as it asked
            code, word = ENDINGS[noted_signal()]
            print(f"bayesrank: {word}", file=sys.stderr)
        return code
    except (BayesrankError, _UsageError) as err:
        if noted_signal() is not None:  # the error of work a signal stopped: the signal is the news
            code, word = ENDINGS[noted_signal()]
            print(f"bayesrank: {word}", file=sys.stderr)
            return code
        text = one_line(err)
        print(f"bayesrank: error: {text}" if isinstance(err, BayesrankError) else text, file=sys.stderr)
        return 2
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except (KeyboardInterrupt, _Terminated):  # (a library may turn one into the other)
        code, word = ENDINGS[noted_signal() or signal.SIGINT]
        print(f"bayesrank: {word}", file=sys.stderr)
        return code
    except MemoryError:
        print("bayesrank: error: out of memory: ask for less (fewer --draws, --chains, --n-boot or items), or run "
              "on a machine with more memory.", file=sys.stderr)
        return 2
    except Exception as err:  # an internal error: one line, the traceback on request
        if debug:
            traceback.print_exc()
        line = one_line(" ".join(str(err).split())[:200])
        print(f"bayesrank: internal error: {type(err).__name__}: {line} — please report it with the command line at "
              f"{REPORT}" + ("" if debug else " (rerun with --debug for the traceback)"), file=sys.stderr)
        return 1
    finally:
        sys.stdout, sys.unraisablehook = stdout, unraisable
        release_reserved()
        for signum, handler in previous.items():
            _install(signum, handler)


def _is_terminal(stream) -> bool:
    """Whether ``stream`` is a terminal (a CSV or JSON printed there is read by a person too;
    piped or redirected, it stays byte for byte the data's)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _signal_quiet(hook):
    """``hook`` except for the exception of a signal the CLI handles when Python could not raise it
    (a signal arriving in a finaliser or a weak-reference callback): Python would print it as
    "Exception ignored" with a traceback, while the run ends as the signal asked all the same
    (:func:`main` checks :func:`~bayesrank.output.atomic.noted_signal` after the command)."""
    def quiet(unraisable):
        if isinstance(unraisable.exc_value, (KeyboardInterrupt, _Terminated)) and noted_signal() is not None:
            return
        hook(unraisable)
    return quiet


def _install(signum, handler):
    """Set a signal handler where Python allows it (the main thread); the previous one."""
    try:
        return signal.signal(signum, handler)
    except (ValueError, TypeError):
        return None


def _progress_setting(args):
    """Progress bars as ``--progress`` / ``--no-progress`` say; without either, off under
    ``--format json`` (a pipeline) and otherwise when stderr is a terminal
    (:mod:`bayesrank.runtime.progress`)."""
    from bayesrank.runtime import progress

    show = getattr(args, "progress", None)
    if show is None and getattr(args, "format", None) == "json":
        show = False
    return progress.showing(show)


def _silence_stdout() -> None:
    """After the reader of stdout went away: send what is still buffered nowhere, so Python's
    exit does not complain about the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "COMMANDS", "FLAGS", "HELP", "NOT_OVER_TIME", "OUTPUTS", "REPORT", "SAMPLERS",
    "build_parser", "check_out", "cmd_compare", "cmd_datasets", "cmd_demo", "cmd_diff", "cmd_dml",
    "cmd_evaluate", "cmd_fit", "cmd_gars", "cmd_next_pairs", "cmd_provisional", "cmd_report", "cmd_select_rank",
    "cmd_update", "command_of", "framework_from_args", "main", "render_selection",
    "saved_fit", "write_outputs"
]
