"""Command line: ``bayesrank fit | evaluate | datasets | demo``.

``bayesrank fit DATA --model {bt,rao-kupper,davidson,judge-aware,btl} [--ties half|drop|davidson]
[--position-bias] [--information observed|expected] [--k-tie K] [--tie-intercept] [--method map|nuts] [--draws N --tune N --chains N --seed S]
[--k-cov K] [--format table|json|csv] [--out DIR]``

``bayesrank evaluate DATA --model ... [--ties ...] [--k-tie K] [--k-cov K] [--split 0.9 --seed 20]
[--format table|json|csv]`` prints the leaderbot paper's goodness-of-fit metrics on the
training data (no ``--split``: NLL, cross-entropies, weighted count RMSEs, KLD, JSD, AIC, BIC)
or, with ``--split F``, fits on a random fraction F of the cells and prints the same metrics
on the held-out cells (``--split 0.9 --seed 20`` is the paper's 3109 / 346 arena split).

``--format json`` prints one JSON object (the stable contract other tools rely on):
``framework, method, n_items, n_comparisons, n_cells, nll, loglik, n_params, converged,
items, diagnostics, warnings`` (plus further fields). Exit code 0 on success, 2 with one
line on stderr for bad input or usage.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from bayesrank.errors import BayesrankError

MODELS = ("bt", "rao-kupper", "davidson", "judge-aware", "btl")


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def error(self, message):
        raise _UsageError(f"{self.prog}: {message} (see '{self.prog} --help')")


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="bayesrank", description="Leaderboards from pairwise comparisons of LLMs.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    fit = sub.add_parser("fit", help="fit a model and print its leaderboard")
    fit.add_argument("data", help="bundled dataset name (see 'bayesrank datasets') or a file path")
    fit.add_argument("--model", required=True, choices=MODELS)
    fit.add_argument("--ties", default=None,
                     help="tie handling: half (default) or drop for bt; half, drop or davidson for judge-aware / btl")
    fit.add_argument("--position-bias", action="store_true",
                     help="judge-aware / btl: per-judge intercept for the answer shown first")
    fit.add_argument("--information", default=None, choices=("observed", "expected"),
                     help="MAP intervals from the observed or expected information (default: the model's)")
    fit.add_argument("--k-tie", type=int, default=0, help="rank of the factored tie threshold (0: one global threshold)")
    fit.add_argument("--tie-intercept", action="store_true", help="add a global intercept to the factored ties (nested model)")
    fit.add_argument("--tie-threshold", default=None, choices=("softplus", "abs"),
                     help="rao-kupper: eta = softplus(h) (default) or the paper's |h| floored at 0.01 (replication)")
    fit.add_argument("--k-cov", type=int, default=None,
                     help="bt / rao-kupper / davidson: Thurstonian covariance, 0 for diagonal, K for diagonal + rank K")
    fit.add_argument("--both-bad-ties", action="store_true", help="count 'tie (bothbad)' verdicts as ties")
    fit.add_argument("--data-format", default=None, help="override file format detection (csv, parquet, json, jsonl, counts)")
    _add_inference_args(fit)
    fit.add_argument("--format", default="table", choices=("table", "json", "csv"))
    fit.add_argument("--top", type=int, default=20, help="rows of the table format (0: all)")
    fit.add_argument("--out", type=Path, default=None, help="directory for fit.nc, summary.json and leaderboard.csv")

    ev = sub.add_parser("evaluate", help="goodness of fit (paper Table D.2) or generalisation to held-out pairs (D.3)")
    ev.add_argument("data", help="bundled dataset name (see 'bayesrank datasets') or a file path")
    ev.add_argument("--model", required=True, choices=MODELS)
    ev.add_argument("--ties", default=None, help="tie handling (as for 'fit')")
    ev.add_argument("--position-bias", action="store_true", help="judge-aware / btl: position intercept")
    ev.add_argument("--k-tie", type=int, default=0, help="rank of the factored tie threshold")
    ev.add_argument("--tie-intercept", action="store_true", help="global intercept for the factored ties")
    ev.add_argument("--tie-threshold", default=None, choices=("softplus", "abs"),
                    help="rao-kupper: softplus (default) or the paper's |h| floored at 0.01")
    ev.add_argument("--k-cov", type=int, default=None, help="Thurstonian covariance rank (0: diagonal)")
    ev.add_argument("--both-bad-ties", action="store_true", help="count 'tie (bothbad)' verdicts as ties")
    ev.add_argument("--data-format", default=None, help="override file format detection")
    ev.add_argument("--split", type=float, default=None,
                    help="fraction of the cells to train on; the metrics are then on the rest (paper: 0.9)")
    ev.add_argument("--seed", type=int, default=20, help="seed of the split (paper: 20)")
    ev.add_argument("--leaderbot-compat", action="store_true",
                    help="bt: reproduce leaderbot's floored half-ties and kept empty pairs (the paper's BT rows)")
    ev.add_argument("--format", default="table", choices=("table", "json", "csv"))
    ev.set_defaults(information=None)

    sub.add_parser("datasets", help="list the bundled datasets")

    demo = sub.add_parser("demo", help="Davidson k_tie=1 on arena-2024 by MAP and NUTS")
    demo.add_argument("--out", type=Path, default=Path("models/arena-2024"))
    demo.add_argument("--draws", type=int, default=1000)
    demo.add_argument("--tune", type=int, default=1000)
    demo.add_argument("--chains", type=int, default=4)
    demo.add_argument("--seed", type=int, default=1)
    return parser


def _add_inference_args(p):
    p.add_argument("--method", default="map", choices=("map", "nuts"))
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--chains", type=int, default=4)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--sampler", default=None, choices=("nutpie", "pymc", "numpyro"),
                   help="NUTS implementation (default nutpie; numpyro runs on JAX, CPU or GPU)")


def framework_from_args(args):
    """The framework named by ``--model`` and its options."""
    from bayesrank.frameworks import BTL, BradleyTerry, Davidson, JudgeAware, RaoKupper

    # judge-aware branch: the judge-aware BTL and its pooled baseline
    k_cov = getattr(args, "k_cov", None)
    if args.model in ("judge-aware", "btl"):
        if k_cov is not None:
            raise BayesrankError(f"--k-cov applies to bt, rao-kupper and davidson, not {args.model}.")
        if args.k_tie or args.tie_intercept:
            raise BayesrankError(f"--k-tie and --tie-intercept apply to rao-kupper and davidson, not {args.model}.")
        cls = JudgeAware if args.model == "judge-aware" else BTL
        return cls(ties=args.ties or "half", position_bias=args.position_bias)
    if args.position_bias:
        raise BayesrankError("--position-bias applies to judge-aware and btl only.")
    if args.model == "bt":
        if args.k_tie or args.tie_intercept:
            raise BayesrankError("--k-tie and --tie-intercept apply to rao-kupper and davidson, not bt.")
        return BradleyTerry(ties=args.ties or "half", k_cov=k_cov)
    if args.ties not in (None, "half"):
        raise BayesrankError(f"--ties {args.ties} applies to bt only; {args.model} models ties itself.")
    threshold = getattr(args, "tie_threshold", None)
    if args.model == "rao-kupper":
        return RaoKupper(k_tie=args.k_tie, tie_intercept=args.tie_intercept, k_cov=k_cov,
                         threshold=threshold or "softplus")
    if threshold is not None:
        raise BayesrankError("--tie-threshold applies to rao-kupper only.")
    return Davidson(k_tie=args.k_tie, tie_intercept=args.tie_intercept, k_cov=k_cov)


def _fit(args, framework, data):
    if args.method == "map":
        kwargs = {"information": args.information} if args.information else {}
        return framework.fit(data, method="map", **kwargs)
    return framework.fit(data, method="nuts", draws=args.draws, tune=args.tune,
                         chains=args.chains, random_seed=args.seed, sampler=args.sampler)


def cmd_fit(args) -> int:
    from bayesrank.data import load

    data = load(args.data, format=args.data_format, both_bad_as_ties=args.both_bad_ties)
    framework = framework_from_args(args)
    fit = _fit(args, framework, data)
    if args.model in ("judge-aware", "btl"):  # judge-aware branch: near-duplicate judges need raw records
        _add_duplicate_judge_warnings(fit, args.data)
    if args.out is not None:
        write_outputs(fit, args.out)
    if args.format == "json":
        print(json.dumps(fit.to_json()))
    elif args.format == "csv":
        fit.leaderboard().to_csv(sys.stdout, index=False)
    else:
        print(render_table(fit, args.top))
    return 0


def cmd_evaluate(args) -> int:
    from bayesrank.data import load
    from bayesrank.evaluate import goodness_of_fit, information_criteria
    from bayesrank.results import _plain

    data = load(args.data, format=args.data_format, both_bad_as_ties=args.both_bad_ties)
    framework = framework_from_args(args)
    if args.split is None:
        kind = "goodness_of_fit"
        fit = framework.fit(data, method="map")
        metrics = {**goodness_of_fit(fit, leaderbot_compat=args.leaderbot_compat), **information_criteria(fit)}
    else:
        if not 0 < args.split < 1:
            raise BayesrankError(f"--split must be a fraction in (0, 1), got {args.split}.")
        kind = "generalization"
        train, test = data.split(1 - args.split, seed=args.seed)
        fit = framework.fit(train, method="map")
        metrics = {**goodness_of_fit(fit, test, leaderbot_compat=args.leaderbot_compat), "train_nll": fit.nll,
                   "n_train_cells": train.n_cells, "n_test_cells": test.n_cells}
    out = _plain({"framework": framework.name, "spec": framework.spec(), "label": framework.label,
                  "method": fit.method, "evaluation": kind, "split": args.split, "seed": args.seed,
                  "n_params": fit.n_params, "converged": fit.converged, "nll": fit.nll,
                  "metrics": metrics, "warnings": fit.warnings})
    if args.format == "json":
        print(json.dumps(out))
    elif args.format == "csv":
        import pandas as pd

        row = {"model": framework.label, "evaluation": kind, "converged": fit.converged, **metrics}
        pd.DataFrame([row]).to_csv(sys.stdout, index=False)
    else:
        where = ("training data" if kind == "goodness_of_fit" else
                 f"{metrics['n_test_cells']} held-out cells (trained on {metrics['n_train_cells']}, seed {args.seed})")
        lines = [f"{framework.label} by MAP, {fit.n_params} free parameters, "
                 f"{'converged' if fit.converged else 'NOT CONVERGED'}; metrics on the {where}",
                 "RMSE in counts per cell (weighted by n_ij/n); KLD and JSD x 100 (mean over cells)", ""]
        for k, v in metrics.items():
            lines.append(f"  {k:<14} {v:.6g}" if isinstance(v, float) else f"  {k:<14} {v}")
        lines += [f"warning: {w}" for w in fit.warnings]
        print("\n".join(lines))
    return 0


def _add_duplicate_judge_warnings(fit, source) -> None:
    """Warn about judges agreeing on ≥ 98% of shared records (needs records with question ids)."""
    import pandas as pd

    from bayesrank.frameworks.judge_aware import judge_diagnostics

    from bayesrank.data.bundled import DATASETS, dataset_path

    path = Path(str(source))
    if str(source) in DATASETS:  # bundled judge records (gzip'd JSON)
        path = Path(str(dataset_path(str(source))))
    suffixes = "".join(path.suffixes[-2:]) if path.suffix == ".gz" else path.suffix
    if not path.is_file() or suffixes not in (".json", ".jsonl", ".json.gz", ".jsonl.gz"):
        return
    try:
        records = pd.read_json(path, lines=".jsonl" in suffixes)
    except ValueError:
        return
    needed = {"question_id", "model_a", "model_b", "judge_model", "judge_preferred_model"}
    if not needed <= set(records.columns):
        return
    from bayesrank.frameworks.judge_aware import BTL

    out = judge_diagnostics(BTL(), fit.data, records=records)  # BTL: only the duplicate check runs
    fit.warnings.extend(out["warnings"])
    fit.diagnostics["near_duplicates"] = [list(d) for d in out["near_duplicates"]]


def write_outputs(fit, out: Path, stem: str = "fit") -> None:
    """Write ``{stem}.nc`` (the whole fit), ``{stem}-summary.json`` and ``{stem}-leaderboard.csv``."""
    out.mkdir(parents=True, exist_ok=True)
    fit.save(out / f"{stem}.nc")
    (out / f"{stem}-summary.json").write_text(json.dumps(fit.to_json(), indent=1) + "\n")
    fit.leaderboard().to_csv(out / f"{stem}-leaderboard.csv", index=False, float_format="%.6g")


def render_table(fit, top: int = 20) -> str:
    """Human-readable leaderboard with the fit's headline numbers and warnings."""
    board = fit.leaderboard()
    if top:
        board = board.head(top)
    ce = fit.cross_entropies()
    kind = "Wald 95% interval" if fit.method == "map" else "95% posterior interval"
    lines = [
        f"{fit.framework.label} by {fit.method.upper()} on {fit.data!r}",
        f"nll {fit.nll:.5f} (win {ce['win']:.4f} + loss {ce['loss']:.4f} + tie {ce['tie']:.4f}), "
        f"{fit.n_params} free parameters, {'converged' if fit.converged else 'NOT CONVERGED'}",
        ("score = Thurstonian mean μ (scale: trace(PΣP) = 1)" if getattr(fit.framework, "k_cov", None) is not None
         else "score = logit scale") + f", se and {kind}; rank interval from the "
        + ("asymptotic normal" if fit.method == "map" else "posterior"),
        "",
    ]
    cols = ["rank", "name", "score", "se", "lower", "upper", "rank_lower", "rank_upper", "n_comparisons",
            "win_rate", "pred_win_rate", "tie_rate", "pred_tie_rate"]
    lines.append(board[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    for w in fit.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def cmd_datasets(args) -> int:
    from bayesrank.data import DATASETS, load_dataset

    for name, ds in DATASETS.items():
        s = load_dataset(name).summary()
        judges = f", {s['n_judges']} judges" if "n_judges" in s else ""
        print(f"{name}: {s['n_items']} items{judges}, {s['n_cells']} cells, "
              f"{s['n_comparisons']:,.0f} comparisons — {ds.description}")
        print(f"    provenance: {ds.provenance} Licence: {ds.licence}")
    return 0


def cmd_demo(args) -> int:
    from bayesrank.data import load_dataset
    from bayesrank.frameworks import Davidson

    data = load_dataset("arena-2024")
    model = Davidson(k_tie=1)
    for method in ("map", "nuts"):
        kwargs = {} if method == "map" else dict(draws=args.draws, tune=args.tune, chains=args.chains,
                                                 random_seed=args.seed)
        fit = model.fit(data, method=method, **kwargs)
        print(render_table(fit, 20))
        print()
        write_outputs(fit, args.out, stem=f"davidson-k1-{method}")
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
    except FileNotFoundError as err:
        print(f"bayesrank: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
