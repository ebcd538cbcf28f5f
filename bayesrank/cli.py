"""Command line: ``bayesrank fit | evaluate | datasets | demo``.

The CLI only parses, calls the public API and renders. Model options are not declared here:
they are the fields of the framework dataclasses (:data:`bayesrank.model.registry.FRAMEWORKS`),
whose metadata give the help text and choices, and whose own validation runs. Whatever the
CLI prints, the API returns too.

``--format json`` prints one JSON object (the stable contract other tools rely on):
``framework, method, n_items, n_comparisons, n_cells, nll, loglik, n_params, converged,
items, diagnostics, warnings`` (plus further fields). Exit code 0 on success, 2 with one
line on stderr for bad input or usage.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import typing
import warnings
from pathlib import Path

from bayesrank.errors import BayesrankError

#: How a framework field is spelled on the command line when not ``--<field-with-dashes>``.
FLAGS = {"threshold": "--tie-threshold"}
#: Files written by ``--out DIR``.
OUTPUTS = ("fit.nc", "summary.json", "leaderboard.csv")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def error(self, message):
        raise _UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


class _UsageError(Exception):
    pass


def _frameworks():
    from bayesrank.model.registry import FRAMEWORKS

    return FRAMEWORKS


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
        users = ", ".join(cls.name for cls, _ in owners)
        help_text = f"{f.metadata.get('help', name)} [{users}]"
        hint = typing.get_type_hints(owners[0][0])[name]
        if hint is bool:
            p.add_argument(_flag(name), dest=name, action="store_true", default=None, help=help_text)
            continue
        choices = sorted({c for _, g in owners for c in g.metadata.get("choices", ())}) or None
        kind = int if int in typing.get_args(hint) or hint is int else str
        p.add_argument(_flag(name), dest=name, type=kind, choices=choices, default=None, help=help_text)


def _add_data_args(p) -> None:
    p.add_argument("data", help="bundled dataset name (see 'bayesrank datasets') or a file path")
    p.add_argument("--data-format", default=None, help="override file format detection (csv, parquet, json, jsonl, counts)")
    p.add_argument("--both-bad-ties", action="store_true", help="count 'tie (bothbad)' verdicts as ties")
    p.add_argument("--covariates", default=None,
                   help="comma-separated numeric record columns kept as per-comparison context covariates")
    p.add_argument("--contrasts", default=None,
                   help="comma-separated numeric record columns of model_a's value minus model_b's (length "
                        "difference, markdown counts): style control, adjusted for in every model")
    p.add_argument("--by", default=None, metavar="COLUMN",
                   help="category column (language, task type) grouping the records: per-category "
                        "leaderboards with --model by-category --method nuts")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="bayesrank", description="Leaderboards from pairwise comparisons of LLMs.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    fit = sub.add_parser("fit", help="fit a model and print its leaderboard")
    _add_data_args(fit)
    _add_model_args(fit)
    fit.add_argument("--method", default="map", choices=("map", "nuts"))
    fit.add_argument("--information", default=None, choices=("observed", "expected"),
                     help="MAP intervals from the observed or expected information (default: the model's)")
    fit.add_argument("--n-draws", type=int, default=1000, help="MAP: draws from the asymptotic normal (rank intervals)")
    fit.add_argument("--intervals", default=None, choices=("wald", "sandwich", "bootstrap"),
                     help="MAP intervals: wald (inverse information), sandwich (robust; default for ties as "
                          "halves and reweighted pairs) or bootstrap (of the comparisons)")
    fit.add_argument("--n-boot", type=int, default=1000, help="MAP bootstrap: resamples")
    fit.add_argument("--reweight", action="store_true",
                     help="weight every pair by the inverse of its number of comparisons (Chatbot Arena's option)")
    fit.add_argument("--elo", action="store_true", help="show Elo ratings (1000 + 400 score / ln 10) in the table")
    fit.add_argument("--elo-offset", type=float, default=1000.0, help="Elo rating of the average model (or the anchor)")
    fit.add_argument("--elo-anchor", default=None, metavar="MODEL", help="model whose Elo rating is the offset")
    fit.add_argument("--rank-sets", action="store_true",
                     help="simultaneous rank sets (all ranks covered at once at --level) and the top-k sets")
    fit.add_argument("--fragility", type=int, default=None, metavar="K",
                     help="MAP: the fewest votes whose removal changes the top K (confirmed by a refit)")
    fit.add_argument("--draws", type=int, default=1000, help="NUTS: kept draws per chain")
    fit.add_argument("--tune", type=int, default=1000, help="NUTS: tuning steps per chain")
    fit.add_argument("--chains", type=int, default=4, help="NUTS: chains")
    fit.add_argument("--target-accept", type=float, default=0.9, help="NUTS: target acceptance rate")
    fit.add_argument("--seed", type=int, default=None, help="seed of the draws (MAP default 0)")
    fit.add_argument("--sampler", default=None, choices=("nutpie", "pymc", "numpyro"),
                     help="NUTS implementation (default nutpie; numpyro runs on JAX, CPU or GPU)")
    fit.add_argument("--level", type=float, default=0.95, help="interval level")
    fit.add_argument("--format", default="table", choices=("table", "json", "csv"))
    fit.add_argument("--top", type=int, default=20, help="rows of the table format (0: all)")
    fit.add_argument("--out", type=Path, default=None, help=f"directory for {', '.join(OUTPUTS)}")

    ev = sub.add_parser("evaluate", help="goodness of fit (paper Table D.2) or generalisation to held-out pairs (D.3)")
    _add_data_args(ev)
    _add_model_args(ev)
    ev.add_argument("--split", type=float, default=None,
                    help="fraction of the cells to train on; the metrics are then on the rest (paper: 0.9)")
    ev.add_argument("--seed", type=int, default=20, help="seed of the split (paper: 20)")
    ev.add_argument("--leaderbot-compat", action="store_true",
                    help="bt: reproduce leaderbot's floored half-ties and kept empty pairs (the paper's BT rows)")
    ev.add_argument("--format", default="table", choices=("table", "json", "csv"))

    sub.add_parser("datasets", help="list the bundled datasets")

    demo = sub.add_parser("demo", help="Davidson k_tie=1 on arena-2024 by MAP and NUTS")
    demo.add_argument("--out", type=Path, default=Path("demo"), help="directory for the two fits")
    demo.add_argument("--draws", type=int, default=1000)
    demo.add_argument("--tune", type=int, default=1000)
    demo.add_argument("--chains", type=int, default=4)
    demo.add_argument("--seed", type=int, default=1)
    return parser


def framework_from_args(args):
    """The framework named by ``--model`` with the options given on the command line.

    Raises
    ------
    BayesrankError
        An option that the chosen framework does not have (or an invalid value, from the
        framework's own validation).
    """
    cls = _frameworks()[args.model]
    own = {f.name for f in dataclasses.fields(cls)}
    given = {name: getattr(args, name) for name in _model_fields() if getattr(args, name, None) is not None}
    foreign = [name for name in given if name not in own]
    if foreign:
        options = ", ".join(_flag(n) for n in sorted(own - {"priors"})) or "none"
        raise BayesrankError(f"{', '.join(_flag(n) for n in foreign)} does not apply to {args.model} "
                             f"(its options: {options}).")
    return cls(**given)


def _columns(text):
    return [c.strip() for c in text.split(",") if c.strip()] if text else ()


def _load(args):
    from bayesrank.data.load import load

    return load(args.data, format=args.data_format, both_bad_as_ties=args.both_bad_ties,
                covariates=_columns(args.covariates), contrasts=_columns(args.contrasts), by=args.by)


def _fit_kwargs(args) -> dict:
    if args.method == "map":
        return dict(method="map", information=args.information, n_draws=args.n_draws,
                    random_seed=0 if args.seed is None else args.seed, intervals=args.intervals,
                    n_boot=args.n_boot, reweight=args.reweight)
    for flag, value in (("--intervals", args.intervals), ("--reweight", args.reweight or None)):
        if value is not None:
            raise BayesrankError(f"{flag} applies to --method map (NUTS intervals are posterior quantiles).")
    return dict(method="nuts", draws=args.draws, tune=args.tune, chains=args.chains, random_seed=args.seed,
                sampler=args.sampler, target_accept=args.target_accept)


def cmd_fit(args) -> int:
    from bayesrank.fragility import fragility
    from bayesrank.results.elo import Elo
    from bayesrank.results.fit import fit
    from bayesrank.style import style_control

    if args.top < 0:
        raise BayesrankError(f"--top must be 0 (all rows) or a positive number, got {args.top}.")
    framework = framework_from_args(args)
    data = _load(args)
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
    if args.out is not None:
        write_outputs(result, args.out, args.level, view)
    if args.format == "json":
        from bayesrank.inference.tree import plain

        print(json.dumps(plain({**result.to_json(args.level, view), **extra})))
    elif args.format == "csv":
        result.leaderboard(args.level, view if args.elo else False).to_csv(sys.stdout, index=False)
    else:
        print(render_table(result, args.top, args.level, view if args.elo else None, extra,
                           styled.leaderboard if styled is not None else None))
    return 0


def cmd_evaluate(args) -> int:
    from bayesrank.evaluate import goodness_of_fit, information_criteria
    from bayesrank.inference.tree import plain
    from bayesrank.results.fit import fit

    data = _load(args)
    framework = framework_from_args(args)
    if args.split is None:
        kind = "goodness_of_fit"
        result = fit(framework, data)
        metrics = {**goodness_of_fit(result, leaderbot_compat=args.leaderbot_compat), **information_criteria(result)}
    else:
        if not 0 < args.split < 1:
            raise BayesrankError(f"--split must be a fraction in (0, 1), got {args.split}.")
        kind = "generalization"
        train, test = data.split(1 - args.split, seed=args.seed)
        result = fit(framework, train)
        metrics = {**goodness_of_fit(result, test, leaderbot_compat=args.leaderbot_compat), "train_nll": result.nll,
                   "n_train_cells": train.n_cells, "n_test_cells": test.n_cells}
    if not result.diagnostics.get("mle_exists", True):
        metrics = {k: (float("nan") if isinstance(v, float) else v) for k, v in metrics.items()}
    out = plain({"framework": framework.name, "spec": framework.spec(), "label": framework.label,
                 "method": result.method, "evaluation": kind, "split": args.split, "seed": args.seed,
                 "n_params": result.n_params, "converged": result.converged, "nll": result.nll,
                 "mle_exists": result.diagnostics.get("mle_exists", True), "metrics": metrics,
                 "warnings": result.warnings})
    if args.format == "json":
        print(json.dumps(out))
    elif args.format == "csv":
        import pandas as pd

        row = {"model": framework.label, "evaluation": kind, "converged": result.converged, **metrics}
        pd.DataFrame([row]).to_csv(sys.stdout, index=False)
    else:
        where = ("training data" if kind == "goodness_of_fit" else
                 f"{metrics['n_test_cells']} held-out cells (trained on {metrics['n_train_cells']}, seed {args.seed})")
        lines = [f"{framework.label} by MAP, {result.n_params} free parameters, "
                 f"{'converged' if result.converged else 'NOT CONVERGED'}; metrics on the {where}",
                 "RMSE in counts per cell (weighted by n_ij/n); KLD and JSD x 100 (mean over cells)", ""]
        for k, v in metrics.items():
            lines.append(f"  {k:<14} {v:.6g}" if isinstance(v, float) else f"  {k:<14} {v}")
        lines += [f"warning: {w}" for w in result.warnings]
        print("\n".join(lines))
    return 0


def write_outputs(result, out: Path, level: float = 0.95, elo=None) -> None:
    """Write :data:`OUTPUTS` into the directory ``out``: the whole fit (NetCDF), its JSON
    summary and its leaderboard (CSV)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        result.save(out / "fit.nc")
        (out / "summary.json").write_text(json.dumps(result.to_json(level, elo), indent=1) + "\n")
        result.leaderboard(level).to_csv(out / "leaderboard.csv", index=False, float_format="%.6g")
    except OSError as err:
        raise BayesrankError(f"cannot write to {out}: {err.strerror or err}; choose a writable directory.") from None


#: How each interval method is named in the table's header.
INTERVAL_NAMES = {"wald": "Wald", "sandwich": "sandwich (robust)", "bootstrap": "bootstrap percentile",
                  "posterior": "posterior"}


def render_table(result, top: int = 20, level: float = 0.95, elo=None, extra=None, styled=None) -> str:
    """Human-readable leaderboard with the fit's headline numbers and warnings (and, when given,
    Elo ratings, rank sets, fragility, style effects and per-category boards)."""
    extra = extra or {}
    board = result.leaderboard(level, elo if elo is not None else False)
    if styled is not None:
        board = board.join(styled.set_index("name")[["rank_unadjusted", "rank_change"]], on="name")
    if "rank_sets" in extra:
        sets = {row["name"]: row for row in extra["rank_sets"]["items"]}
        board["rank_set"] = [f"{sets[n]['rank_set_lower']}-{sets[n]['rank_set_upper']}" for n in board["name"]]
    if top:
        board = board.head(top)
    ce = result.cross_entropies()
    pct = f"{100 * level:g}%"
    kind = f"{INTERVAL_NAMES[result.interval_method]} {pct} interval"
    thurstonian = getattr(result.framework, "k_cov", None) is not None
    lines = [
        f"{result.framework.label} by {result.method.upper()} on {result.data!r}",
        f"nll {result.nll:.5f} (win {ce['win']:.4f} + loss {ce['loss']:.4f} + tie {ce['tie']:.4f}), "
        f"{result.n_params} free parameters, {'converged' if result.converged else 'NOT CONVERGED'}",
        ("score = Thurstonian mean μ (scale: trace(PΣP) = 1)" if thurstonian else "score = logit scale")
        + f", se and {kind}; rank interval from the "
        + {"bootstrap": "bootstrap replicates", "posterior": "posterior"}.get(result.interval_method,
                                                                             "asymptotic normal"),
        "",
    ]
    if elo is not None:
        anchor = f", {elo.anchor} = {elo.offset:g}" if elo.anchor else f", average model = {elo.offset:g}"
        lines.insert(-1, f"Elo = {elo.scale:.1f} x score{anchor}; {result.framework.scale_note}")
    cols = ["rank", "name", "score", "se", "lower", "upper", *(["elo", "elo_lower", "elo_upper"] if elo else []),
            "rank_lower", "rank_upper", *(["rank_set"] if "rank_set" in board else []),
            *(["rank_unadjusted", "rank_change"] if styled is not None else []), "n_comparisons",
            "win_rate", "pred_win_rate", "tie_rate", "pred_tie_rate"]
    lines.append(board[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if "rank_sets" in extra:
        rs = extra["rank_sets"]
        lines.append(f"\nrank_set: simultaneous {pct} rank sets (every rank covered at once; critical value "
                     f"{rs['critical_value']:.2f} se)")
        lines += [f"top-{k} set at {pct}: {', '.join(names)}" for k, names in rs["top_sets"].items()]
    if "fragility" in extra:
        lines.append("\n" + extra["fragility"]["sentence"])
    if "style" in extra:
        lines.append("\nstyle effects (logit per unit of each contrast; rank_change > 0: up once style is "
                     "accounted for):")
        for e in extra["style"]["effects"]:
            who = f" [{e['judge']}]" if "judge" in e else ""
            lines.append(f"  {e['contrast']}{who}: {e['estimate']:.4f} (se {e['se']:.4f}, "
                         f"{pct} {e['lower']:.4f} to {e['upper']:.4f})")
    if "categories" in extra:
        import pandas as pd

        cats = pd.DataFrame(extra["categories"])
        for category, group in cats.groupby("category", sort=False):
            lines.append(f"\ncategory {category} (partially pooled):")
            shown = group.head(top) if top else group
            lines.append(shown.drop(columns="category").to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def cmd_datasets(args) -> int:
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
    from bayesrank.data.load import load_dataset
    from bayesrank.model.paired import Davidson
    from bayesrank.results.fit import fit

    data = load_dataset("arena-2024")
    model = Davidson(k_tie=1)
    for method in ("map", "nuts"):
        kwargs = {} if method == "map" else dict(draws=args.draws, tune=args.tune, chains=args.chains,
                                                 random_seed=args.seed)
        result = fit(model, data, method=method, **kwargs)
        print(render_table(result, 20))
        print()
        write_outputs(result, args.out / f"davidson-k1-{method}")
    print(f"fits and summaries written to {args.out}/")
    return 0


COMMANDS = {"fit": cmd_fit, "evaluate": cmd_evaluate, "datasets": cmd_datasets, "demo": cmd_demo}


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return COMMANDS[args.command](args)
    except (BayesrankError, _UsageError) as err:
        print(f"bayesrank: error: {err}" if isinstance(err, BayesrankError) else str(err), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
