"""GARS and DMLRank benchmarks: the paper's Tables 1 and 2 (their shape), DMLRank on 10⁶ labels,
and GARS of arena-2024 from the Davidson k_tie=1 fit and from the raw counts.

``python bench/tasks_gars.py TASK [options]`` runs one task, prints one line ``BENCH_JSON {...}``
and keeps it in ``bench/results/gars-TASK.json``; ``python bench/tasks_gars.py report`` writes
``bench/results/gars.md`` from those files. Self-contained: nothing else of bench/ is used.

Tasks
-----
``table1``
    NonlinearTie (K = 3, p = 2, π_p = 0.3, λ_π = 0.1, ε_μ = 0.05, π ∈ [0.05, 0.5]), n ∈ {1000, 2000,
    3000} contexts, R runs (new data each run, one draw of the simulator's coefficients):
    debiased (cross-fitted, estimated propensities) against plug-in, for the three scores.
    ``error`` = ‖θ̂ − θ‖₂ (the paper does not define its error); ``coverage`` = share of runs whose
    simultaneous 95% box (Gaussian max) holds every θ_j; mean and 1.96 standard errors over runs.
``table2``
    BTMisspec (K = 3, p = 2, γ = 1): a pilot of 1500 contexts labelled by the simulator's design
    fits μ̂; 1500 new contexts are labelled with budget 2000 by the A-optimal policy of each score
    or at random (π = 2000 / (1500 · 6)); DMLRank with the known policy; ranking MSE
    = mean_j (θ̂_j − θ_j)², × 10², mean and 1.96 standard errors over runs.
``scale``
    DMLRank of the three scores on 10⁶ labelled comparisons (NonlinearTie, K = 6, p = 5, the
    simulator's own design, propensities estimated, 2-fold cross-fitting): seconds and peak RSS.
``arena``
    Borda, BT projection and Rank Centrality of arena-2024 from the Davidson k_tie=1 MAP fit and
    from the raw counts; Spearman correlation of each with the Davidson ranking.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import warnings
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
SCORES = ("borda", "bt", "rank-centrality")


def maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def mean_ci(x) -> list[float]:
    """Mean and the half-width of its 95% interval (1.96 standard errors)."""
    x = np.asarray(x, dtype=float)
    return [float(x.mean()), float(1.96 * x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")]


def covered(estimate, se, critical, truth) -> bool:
    return bool(np.all(np.abs(estimate - truth) <= critical * se))


# ====================================================================== tasks
def task_table1(args) -> dict:
    from bayesrank.dml import dmlrank_scores
    from bayesrank.dml.estimator import max_critical
    from bayesrank.dml.simulate import simulator

    sim = simulator("nonlinear_tie", K=3, p=2, random_seed=args.sim_seed, pi_p=0.3, lam_pi=0.1, eps_mu=0.05,
                    pi_min=0.05, pi_max=0.5)
    truth = sim.truth(SCORES, n_mc=args.n_mc)
    out = {"truth": {s: truth[s].tolist() for s in SCORES}, "runs": args.runs, "folds": args.folds,
           "learners": args.learners, "rows": [], "seconds_per_run": {}}
    for learner in args.learners:
        for n in args.sizes:
            per = {(s, e): {"error": [], "covered": []} for s in SCORES for e in ("plugin", "debiased")}
            t0 = time.perf_counter()
            for r in range(args.runs):
                records = sim.records(n, random_seed=10_000 * n + r)
                results = dmlrank_scores(records, SCORES, features=["x0", "x1"], learner=learner,
                                         n_folds=args.folds, random_seed=r, n_mc=20_000)
                for s, res in results.items():
                    crit = max_critical(res.plugin_cov, 0.95, 20_000, r)
                    for est, value, se, c in (("debiased", res.estimate, res.se, res.critical),
                                              ("plugin", res.plugin, res.plugin_se, crit)):
                        per[(s, est)]["error"].append(float(np.linalg.norm(value - truth[s])))
                        per[(s, est)]["covered"].append(covered(value, se, c, truth[s]))
            for (s, est), v in per.items():
                out["rows"].append({"learner": learner, "score": s, "estimator": est, "n": n,
                                    "error": mean_ci(v["error"]), "coverage": mean_ci(v["covered"])})
            out["seconds_per_run"][f"{learner} n={n}"] = (time.perf_counter() - t0) / args.runs
    return out


def task_table2(args) -> dict:
    from bayesrank.dml import a_optimal, dmlrank, variance_weights
    from bayesrank.dml.nuisance import OutcomeModel
    from bayesrank.dml.records import read_records
    from bayesrank.dml.simulate import simulator

    sim = simulator("bt_misspec", K=3, p=2, random_seed=args.sim_seed, gamma=1.0, pi_p=0.3, lam_pi=0.1)
    truth = sim.truth(SCORES, n_mc=args.n_mc)
    K = sim.K
    j, k = np.nonzero(~np.eye(K, dtype=bool))
    features = [f"x{f}" for f in range(sim.p)]
    uniform = args.budget / (args.pool * len(j))
    mse = {(s, pol): [] for s in SCORES for pol in ("a-optimal", "random")}
    labels = {(s, pol): [] for s in SCORES for pol in ("a-optimal", "random")}
    for r in range(args.runs):
        rng = np.random.default_rng(r)
        pilot = read_records(sim.records(args.pilot, random_seed=rng.integers(2**31)), features=features)
        model = OutcomeModel("hist-gradient-boosting", 3, r).fit(pilot, np.arange(pilot.n_labels))
        X = sim.contexts(args.pool, rng)
        mu = np.zeros((args.pool, K, K, 3))
        mu[:, j, k] = model.predict(_with_contexts(pilot, X), np.repeat(np.arange(args.pool), len(j)),
                                    np.tile(j, args.pool), np.tile(k, args.pool)).reshape(args.pool, len(j), 3)
        for s in SCORES:
            optimal, _ = a_optimal(variance_weights(mu, s, sim.scheme), args.budget, floor=args.floor)
            for pol, pi in (("a-optimal", optimal), ("random", np.full((args.pool, K, K), uniform))):
                records = sim.records(args.pool, random_seed=rng.integers(2**31), X=X, policy=lambda x, pi=pi: pi)
                labels[(s, pol)].append(int(records["winner"].notna().sum()))
                res = dmlrank(records, s, sim.scheme, features=features, propensity="propensity",
                              n_folds=args.folds, random_seed=r, n_mc=1000)
                mse[(s, pol)].append(float(np.mean((res.estimate - truth[s]) ** 2)))
    rows = [{"policy": pol, "score": s, "mse_x100": mean_ci(100 * np.array(mse[(s, pol)])),
             "labels": mean_ci(labels[(s, pol)])} for pol in ("a-optimal", "random") for s in SCORES]
    return {"truth": {s: truth[s].tolist() for s in SCORES}, "runs": args.runs, "budget": args.budget,
            "pilot": args.pilot, "pool": args.pool, "floor": args.floor, "folds": args.folds, "rows": rows}


def _with_contexts(records, X):
    """The pilot's records with other contexts (to predict μ̂ at new contexts)."""
    from dataclasses import replace

    return replace(records, X=X, context_ids=np.arange(len(X)), judge=None)


def task_scale(args) -> dict:
    from bayesrank.dml import dmlrank_scores, read_records
    from bayesrank.dml.simulate import simulator

    sim = simulator("nonlinear_tie", K=args.items, p=5, random_seed=args.sim_seed, pi_min=0.05, pi_max=0.5)
    per_context = sim.propensity(sim.contexts(20_000, np.random.default_rng(0))).sum(axis=(1, 2)).mean()
    n = int(np.ceil(args.labels / per_context))
    t0 = time.perf_counter()
    frame = sim.records(n, random_seed=1)
    t_sim = time.perf_counter() - t0
    t0 = time.perf_counter()
    records = read_records(frame, features=[f"x{f}" for f in range(5)])
    del frame
    t_read = time.perf_counter() - t0
    t0 = time.perf_counter()
    results = dmlrank_scores(records, SCORES, n_folds=args.folds, random_seed=0)
    t_fit = time.perf_counter() - t0
    truth = sim.truth(SCORES, n_mc=args.n_mc)
    return {"n_contexts": records.n_contexts, "n_labels": records.n_labels, "items": args.items,
            "folds": args.folds, "seconds_simulate": t_sim, "seconds_read": t_read, "seconds_dmlrank": t_fit,
            "errors": {s: float(np.linalg.norm(r.estimate - truth[s])) for s, r in results.items()},
            "max_se": {s: float(r.se.max()) for s, r in results.items()},
            "covered": {s: covered(r.estimate, r.se, r.critical, truth[s]) for s, r in results.items()}}


def task_arena(args) -> dict:
    from scipy.stats import spearmanr

    import bayesrank as br
    from bayesrank import gars

    data = br.load("arena-2024")
    t0 = time.perf_counter()
    dav = br.fit(br.Davidson(k_tie=1), data)
    t_fit = time.perf_counter() - t0
    base = dav.scores().to_numpy()
    rows = []
    for source in ("davidson-k1", "raw-counts"):
        for s in SCORES:
            t0 = time.perf_counter()
            g = gars.from_fit(dav, s) if source == "davidson-k1" else gars.from_counts(data, s)
            seconds = time.perf_counter() - t0
            order = [list(g.items).index(x) for x in dav.items]
            rho = spearmanr(g.estimate[order], base).statistic
            top = g.table().head(5)["name"].tolist()
            rows.append({"source": source, "score": s, "spearman": float(rho), "seconds": seconds, "top5": top,
                         "median_se": float(np.median(g.se)), "complete_graph": g.complete})
    return {"fit_seconds": t_fit, "davidson_top5": dav.leaderboard().head(5)["name"].tolist(), "rows": rows}


# ====================================================================== report
def _fmt(pair, digits=3, scale=1.0):
    m, h = pair
    return f"{scale * m:.{digits}f} ± {scale * h:.{digits}f}"


def report() -> str:
    lines = ["# GARS and DMLRank benchmarks", "",
             "Made by `python bench/tasks_gars.py TASK` (one fresh process per task) and "
             "`python bench/tasks_gars.py report`; see the module docstring for the set-ups.", ""]
    found = {t: json.loads((RESULTS / f"gars-{t}.json").read_text())
             for t in ("table1", "table2", "scale", "arena") if (RESULTS / f"gars-{t}.json").exists()}
    if "table1" in found:
        t = found["table1"]
        sizes = sorted({row["n"] for row in t["rows"]})
        lines += [f"## Table 1 shape: debiasing (NonlinearTie, {t['runs']} runs per n, {t['folds']}-fold "
                  "cross-fitting, propensities estimated by the same learner)", "",
                  "error = ‖θ̂ − θ‖₂; coverage = share of runs whose simultaneous 95% box holds all of θ "
                  "(mean ± 1.96 se over runs)", "",
                  "| learner | GARS | estimator | " + " | ".join(f"n={n} error | n={n} coverage" for n in sizes) + " |",
                  "|---|---|---|" + "---|---|" * len(sizes)]
        for learner in t["learners"]:
            for s in SCORES:
                for est in ("plugin", "debiased"):
                    cells = []
                    for n in sizes:
                        row = next(r for r in t["rows"] if r["learner"] == learner and r["score"] == s
                                   and r["estimator"] == est and r["n"] == n)
                        cells += [_fmt(row["error"]), _fmt(row["coverage"], 2)]
                    lines.append(f"| {learner} | {s} | {est} | " + " | ".join(cells) + " |")
        lines += ["", "seconds per run (three scores): "
                  + ", ".join(f"{k} {v:.1f}" for k, v in t["seconds_per_run"].items()), ""]
    if "table2" in found:
        t = found["table2"]
        lines += [f"## Table 2 shape: A-optimal against random labelling (BTMisspec γ = 1, {t['runs']} runs, pilot "
                  f"{t['pilot']}, pool {t['pool']}, budget {t['budget']:g})", "",
                  "ranking MSE × 10², mean ± 1.96 se over runs", "",
                  "| policy | borda | bt | rank-centrality |", "|---|---|---|---|"]
        for pol in ("a-optimal", "random"):
            cells = [_fmt(next(r for r in t["rows"] if r["policy"] == pol and r["score"] == s)["mse_x100"])
                     for s in SCORES]
            lines.append(f"| {pol} | " + " | ".join(cells) + " |")
        lines += ["", "labels drawn (mean ± 1.96 se): " + "; ".join(
            f"{r['policy']} {r['score']} {_fmt(r['labels'], 0)}" for r in t["rows"]), ""]
    if "scale" in found:
        t = found["scale"]
        lines += ["## DMLRank at scale", "",
                  f"{t['n_labels']:,} labelled comparisons in {t['n_contexts']:,} contexts, K = {t['items']}, "
                  f"{t['folds']}-fold cross-fitting, propensities estimated, three scores: "
                  f"**{t['seconds_dmlrank']:.0f} s** for DMLRank (reading the table {t['seconds_read']:.0f} s), "
                  f"peak RSS **{t['maxrss_mib']:.0f} MiB**. Errors ‖θ̂ − θ‖₂: "
                  + ", ".join(f"{s} {v:.4f}" for s, v in t["errors"].items())
                  + "; simultaneous box covers θ: " + ", ".join(f"{s} {v}" for s, v in t["covered"].items()) + ".", ""]
    if "arena" in found:
        t = found["arena"]
        lines += ["## arena-2024: GARS from the Davidson k_tie=1 fit and from the raw counts", "",
                  "Spearman correlation with the Davidson k_tie=1 ranking (129 items). The raw counts cover "
                  "3455 of 8256 pairs, so their Borda and Rank Centrality average over the observed opponents only "
                  "(another estimand: who an item met shapes it); the BT projection is the least-squares fit on the "
                  "observed edges, which a BT model shares on any connected graph.", "",
                  "| source | score | Spearman | seconds | top 3 |", "|---|---|---|---|---|"]
        for r in t["rows"]:
            lines.append(f"| {r['source']} | {r['score']} | {r['spearman']:.4f} | {r['seconds']:.1f} | "
                         f"{', '.join(r['top5'][:3])} |")
        lines += ["", f"Davidson k_tie=1 top 3: {', '.join(t['davidson_top5'][:3])}", ""]
    return "\n".join(lines)


TASKS = {"table1": task_table1, "table2": task_table2, "scale": task_scale, "arena": task_arena}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("task", choices=[*TASKS, "report"])
    p.add_argument("--runs", type=int, default=None, help="table1: 100, table2: 40")
    p.add_argument("--sizes", default="1000,2000,3000", help="table1: numbers of contexts")
    p.add_argument("--learners", default="hist-gradient-boosting,spline-logistic", help="table1: outcome learners")
    p.add_argument("--folds", type=int, default=None, help="cross-fitting folds (table1: 5, table2: 3, scale: 2)")
    p.add_argument("--sim-seed", type=int, default=1, help="draw of the simulator's coefficients")
    p.add_argument("--n-mc", type=int, default=1_000_000, help="contexts of the Monte-Carlo truth")
    p.add_argument("--pilot", type=int, default=1500)
    p.add_argument("--pool", type=int, default=1500)
    p.add_argument("--budget", type=float, default=2000)
    p.add_argument("--floor", type=float, default=0.01)
    p.add_argument("--labels", type=int, default=1_000_000, help="scale: labelled comparisons")
    p.add_argument("--items", type=int, default=6, help="scale: K")
    p.add_argument("--no-save", action="store_true", help="do not write bench/results/gars-TASK.json")
    args = p.parse_args(argv)
    if args.task == "report":
        (RESULTS / "gars.md").write_text(report())
        print(report())
        return
    args.sizes = [int(x) for x in args.sizes.split(",")]
    args.learners = [x for x in args.learners.split(",") if x]
    args.runs = args.runs or {"table1": 100, "table2": 40}.get(args.task, 1)
    args.folds = args.folds or {"scale": 2, "table2": 3}.get(args.task, 5)
    warnings.simplefilter("ignore")
    t0 = time.perf_counter()
    out = TASKS[args.task](args)
    out.update(task=args.task, seconds=time.perf_counter() - t0, maxrss_mib=maxrss_mib())
    line = json.dumps(out, default=lambda o: o.tolist() if isinstance(o, np.ndarray) else str(o))
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / f"gars-{args.task}.json").write_text(line + "\n")
    print("BENCH_JSON " + line)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    main()
