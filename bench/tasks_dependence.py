"""Benchmarks of intervals for votes that are not independent (issue 41), each in its own process.

Run by ``bench/run.py`` (protocol: ``bench/common.py``; ``--only tasks_dependence``; ``--quick``:
the MT-Bench widening table). ``python bench/tasks_dependence.py TASK '{"arg": ...}'`` runs one
task and prints one line ``BENCH_JSON {...}``; either way the output of this checkout is also kept
in ``bench/results/dependence.json`` (one entry per task and arguments), and ``python
bench/tasks_dependence.py report`` writes ``bench/results/dependence.md`` from those and the
latest ``bench/results.json``.

Tasks
-----
coverage
    Coverage of the 95% intervals of the population scores over seeded replicates of
    :func:`bayesrank.data.simulate.clustered_battles` (8 items with scores evenly spaced in
    [−1, 1]; every user votes 10 times on each of 3 pairs), for Bradley–Terry (ties dropped;
    the simulation has none) or Davidson (η = −0.5), at a given number of users G, by five
    methods: Wald and the per-comparison sandwich (the comparisons taken as independent), the
    cluster-robust sandwich and the cluster bootstrap by user, and random effects by user
    (MAP, Laplace). Design ``shared``: a user's votes on a pair repeat one verdict with
    probability 0.8 (every vote is marginally the model's with the population scores, the
    estimand of all but random effects, whose scores are conditional on the user). Design
    ``random``: each user's scores deviate by ZeroSumNormal(τ = 0.5) (the random-effects model;
    its population scores s are the truth, the other methods estimate the population-averaged
    scores, closer to 0: ``slope`` measures that). The slow methods (bootstrap, random
    effects) run on the first ``slow_replicates`` replicates. The suite's default runs are short
    (``SHORT``: 30 replicates, 6 of them with the slow methods, 50 bootstrap draws; design
    ``shared`` at 10, 30 and 100 users, ``random`` at 30); more replicates behind the option
    ``bench/run.py --only tasks_dependence --tasks coverage --task-args '{"coverage": {"replicates":
    200, "slow_replicates": 40, "n_boot": 100}}'`` (``FULL``), and other designs or numbers of
    users by running the task alone with those arguments.
widening
    The bundled MT-Bench judge records (20 judges, 80 questions): how much the intervals of
    Bradley–Terry (ties dropped) and Davidson widen when they allow for clusters by judge, by
    question, by both (two-way), by the cluster bootstrap and by random effects, as the
    ratio of each item's standard error to the Wald one.
speed
    Whole processes ``bayesrank fit battles.parquet --model bt --format json`` on a synthetic
    log of 1,670,250 battles by 100,000 users (arena-2024's pairs and outcome frequencies, users
    drawn with Zipf-like weights), with and without ``--cluster user`` (the cluster-robust
    sandwich), interleaved in fresh processes. Target: clustered ≤ 2 × unclustered.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

from common import HERE, RESULTS, newest, task_main

CACHE = HERE / ".cache"
N_BATTLES = 1_670_250
N_USERS = 100_000
#: Must-show target of issue 41: the clustered sandwich's whole process against the unclustered one.
TARGET_SPEED_RATIO = 2.0
SCORES = np.linspace(-1.0, 1.0, 8)
METHODS = ("wald", "sandwich", "cluster sandwich", "cluster bootstrap", "random effects")


# ====================================================================== coverage
def _fit_options(framework, method: str, n_boot: int):
    import bayesrank as br

    if method == "random effects":
        return br.RandomEffects(framework, cluster="user"), {}
    return framework, {"wald": dict(intervals="wald", cluster=()),
                       "sandwich": dict(intervals="sandwich", cluster=()),
                       "cluster sandwich": dict(intervals="sandwich", cluster="user"),
                       "cluster bootstrap": dict(intervals="bootstrap", cluster="user", n_boot=n_boot)}[method]


def task_coverage(framework: str = "bt", design: str = "shared", clusters: int = 30, replicates: int = 200,
                  slow_replicates: int = 40, n_boot: int = 100, seed: int = 0, level: float = 0.95) -> dict:
    import bayesrank as br
    from bayesrank.data.simulate import clustered_battles, item_names

    base = br.BradleyTerry(ties="drop") if framework == "bt" else br.Davidson()
    eta = None if framework == "bt" else -0.5
    truth = SCORES - SCORES.mean()
    dependence = {"shared": dict(share=0.8, spread=0.0), "random": dict(share=0.0, spread=0.5)}[design]
    covered = {m: [] for m in METHODS}
    widths = {m: [] for m in METHODS}
    slopes = {m: [] for m in METHODS}
    seconds = {m: [] for m in METHODS}
    failed = {m: 0 for m in METHODS}
    for rep in range(replicates):
        rng = np.random.default_rng([seed, clusters, rep])
        data = br.load(clustered_battles(SCORES, clusters, rng, eta=eta, **dependence), cluster="user")
        for method in METHODS:
            if method in ("cluster bootstrap", "random effects") and rep >= slow_replicates:
                continue
            model, options = _fit_options(base, method, n_boot)
            t0 = time.perf_counter()
            try:
                fit = br.fit(model, data, random_seed=rep, **options)
                board = fit.leaderboard(level).set_index("name").reindex(item_names(SCORES.size))
            except br.BayesrankError:
                failed[method] += 1
                continue
            seconds[method].append(time.perf_counter() - t0)
            lower, upper, score = (board[c].to_numpy(float) for c in ("lower", "upper", "score"))
            if not (fit.converged and np.all(np.isfinite(lower)) and np.all(np.isfinite(upper))):
                failed[method] += 1
                continue
            covered[method].append((lower <= truth) & (truth <= upper))
            widths[method].append(upper - lower)
            slopes[method].append(float(score @ truth / (truth @ truth)))
    out = {}
    for method in METHODS:
        hits = np.array(covered[method], dtype=float)
        if not hits.size:
            out[method] = {"failed": failed[method]}
            continue
        per_replicate = hits.mean(axis=1)
        out[method] = {"coverage": float(hits.mean()),
                       "mc_se": float(per_replicate.std(ddof=1) / np.sqrt(len(per_replicate)))
                       if len(per_replicate) > 1 else None,
                       "replicates": len(per_replicate), "failed": failed[method],
                       "median_width": float(np.median(widths[method])),
                       "mean_slope": float(np.mean(slopes[method])),
                       "median_seconds": float(np.median(seconds[method]))}
    return {"framework": framework, "design": design, "clusters": clusters, "level": level,
            "votes_per_cluster": 30, "items": int(SCORES.size), "methods": out}


# ====================================================================== MT-Bench
def task_widening() -> dict:
    import bayesrank as br

    data = br.load("mtbench-judges", cluster=("judge_model", "question_id"))
    variants = {
        "Wald": dict(intervals="wald", cluster=()),
        "sandwich (per comparison)": dict(intervals="sandwich", cluster=()),
        "cluster sandwich, by question": dict(intervals="sandwich", cluster="question_id"),
        "cluster sandwich, by judge": dict(intervals="sandwich", cluster="judge_model"),
        "two-way sandwich, judge and question": dict(intervals="sandwich", cluster=("judge_model", "question_id")),
        "cluster bootstrap, by question": dict(intervals="bootstrap", cluster="question_id", n_boot=500),
        "cluster bootstrap, by judge": dict(intervals="bootstrap", cluster="judge_model", n_boot=500),
    }
    out = {}
    for label, base in (("bt", br.BradleyTerry(ties="drop")), ("davidson", br.Davidson())):
        rows = {}
        wald = None
        fits = {name: br.fit(base, data, **options) for name, options in variants.items()}
        for column in ("question_id", "judge_model"):
            fits[f"random effects by {column.split('_')[0]} (Laplace)"] = br.fit(
                br.RandomEffects(base, cluster=column), data)
        for name, fit in fits.items():
            board = fit.leaderboard().set_index("name").sort_index()
            se = board["se"].to_numpy(float)
            wald = se if wald is None else wald
            rows[name] = {"se": dict(zip(board.index, se.tolist())), "ratio_median": float(np.median(se / wald)),
                          "ratio_min": float(np.min(se / wald)), "ratio_max": float(np.max(se / wald)),
                          "top": board["score"].idxmax(), "converged": fit.converged,
                          **({"spread": float(fit.tree["estimate"]["spread"])} if "spread" in fit.tree["estimate"]
                             else {})}
        out[label] = rows
    return {"data": "mtbench-judges: 9,706 verdicts, 6 models, 20 judges, 80 questions", "results": out}


# ====================================================================== speed
def battles_with_users():
    """The synthetic 1.67M-battle log with a ``user`` column (Parquet), made once."""
    path = CACHE / "battles_1p67m_users.parquet"
    if path.exists():
        return path
    import duckdb
    import pandas as pd

    table = json.loads((HERE.parent / "bayesrank" / "data" / "datasets" / "arena-2024.json").read_text())
    models = np.asarray(table["models"], dtype=object)
    X, Y = np.asarray(table["X"], dtype=np.int64), np.asarray(table["Y"], dtype=np.int64)
    rng = np.random.default_rng(41)
    pair = np.repeat(np.arange(len(X)), Y.sum(axis=1))
    outcome = np.concatenate([np.repeat(np.arange(4), y) for y in Y])
    assert pair.size == N_BATTLES
    order = rng.permutation(pair.size)
    pair, outcome = pair[order], outcome[order]
    swap = rng.random(pair.size) < 0.5
    a, b = np.where(swap, X[pair, 1], X[pair, 0]), np.where(swap, X[pair, 0], X[pair, 1])
    outcome = np.where(swap & (outcome < 2), 1 - outcome, outcome)
    weights = 1.0 / np.arange(1, N_USERS + 1) ** 0.6
    user = rng.choice(N_USERS, size=pair.size, p=weights / weights.sum())
    labels = np.array(["model_a", "model_b", "tie", "tie (bothbad)"], dtype=object)
    frame = pd.DataFrame({"model_a": models[a], "model_b": models[b], "winner": labels[outcome],
                          "user": np.char.add("user", user.astype(str)).astype(object)})
    CACHE.mkdir(exist_ok=True)
    con = duckdb.connect()
    con.register("frame", frame)
    con.execute(f"COPY frame TO '{path}' (FORMAT parquet)")
    return path


def _whole_process(args: list[str]) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "bayesrank.cli", "fit", *args], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    out = json.loads(proc.stdout)
    return {"wall_seconds": wall, "fit_seconds": out["diagnostics"]["seconds"], "n_cells": out["n_cells"],
            "cluster": out["cluster"], "interval_method": out["interval_method"],
            "se": {item["name"]: item["se"] for item in out["items"]}, "converged": out["converged"],
            "peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def task_speed(repeats: int = 3) -> dict:
    path = str(battles_with_users())
    common = [path, "--model", "bt", "--intervals", "sandwich", "--format", "json"]
    runs = {"unclustered": [], "clustered": []}
    for _ in range(repeats):
        runs["unclustered"].append(_whole_process(common))
        runs["clustered"].append(_whole_process(common + ["--cluster", "user"]))
    med = {k: statistics.median(r["wall_seconds"] for r in v) for k, v in runs.items()}
    se_u, se_c = runs["unclustered"][-1]["se"], runs["clustered"][-1]["se"]
    ratio_se = np.array([se_c[k] / se_u[k] for k in se_u])
    return {"input": f"synthetic log of {N_BATTLES:,} battles by {N_USERS:,} users (Parquet)", "repeats": repeats,
            "seconds": med, "all_seconds": {k: [r["wall_seconds"] for r in v] for k, v in runs.items()},
            "fit_seconds": {k: statistics.median(r["fit_seconds"] for r in v) for k, v in runs.items()},
            "ratio": med["clustered"] / med["unclustered"], "target": TARGET_SPEED_RATIO,
            "cluster_rows_note": "the clustered fit's likelihood still runs on the 3,460 pair cells",
            "se_ratio_median": float(np.median(ratio_se)), "converged": runs["clustered"][-1]["converged"]}


TASKS = {"coverage": task_coverage, "widening": task_widening, "speed": task_speed}

#: The default coverage runs are short (minutes each on a shared machine); the full ones take
#: ``--task-args '{"coverage": FULL}'`` (``FULL`` below) and any other ``clusters``/``design``.
SHORT = {"replicates": 30, "slow_replicates": 6, "n_boot": 50}
FULL = {"replicates": 200, "slow_replicates": 40, "n_boot": 100}

SUITE = [
    {"task": "widening", "timeout": 3600, "quick": True},
    {"task": "speed", "args": {"repeats": 3}, "timeout": 3600},
    *[{"task": "coverage", "args": {"framework": f, "design": "shared", "clusters": g, **SHORT}, "timeout": 3600}
      for f in ("bt", "davidson") for g in (10, 30, 100)],
    *[{"task": "coverage", "args": {"framework": f, "design": "random", "clusters": 30, **SHORT}, "timeout": 3600}
      for f in ("bt", "davidson")],
]


# ====================================================================== results
def _key(task: str, args: dict) -> str:
    """Saved outputs are kept per task and arguments (coverage runs differ by their arguments)."""
    if task != "coverage":
        return task
    return f"coverage/{args.get('framework', 'bt')}/{args.get('design', 'shared')}/{args.get('clusters', 30)}"


def saved() -> dict:
    path = RESULTS / "dependence.json"
    return json.loads(path.read_text()) if path.exists() else {}


def save(task: str, out: dict) -> None:
    (RESULTS / "dependence.json").write_text(json.dumps({**saved(), _key(task, out.get("args", {})): out},
                                                        indent=1) + "\n")


def report(results: dict) -> list[str]:
    """The tables, from each saved output and this run's newer ones."""
    latest = dict(saved())
    for task in TASKS:
        for out in newest(results, task):
            key = _key(task, out.get("args", {}))
            if out.get("finished", "") >= latest.get(key, {}).get("finished", ""):
                latest[key] = out
    return tables(latest).splitlines()


def tables(r: dict) -> str:
    lines = ["## Votes that are not independent (issue 41): bench/tasks_dependence.py", ""]
    coverage = sorted((k for k in r if k.startswith("coverage/") and "methods" in r[k]),
                      key=lambda k: (r[k]["design"], r[k]["framework"], r[k]["clusters"]))
    if coverage:
        lines += ["### Coverage of 95% intervals of the population scores", "",
                  "Simulated users (`bayesrank.data.simulate.clustered_battles`: 8 items, 30 votes per user, 10 on each "
                  "of 3 pairs). `shared`: a user's votes on a pair repeat one verdict with probability 0.8; "
                  "`random`: each user's scores deviate by ZeroSumNormal(0.5). Coverage is over items × replicates "
                  "(± Monte Carlo standard error over replicates); width is the median interval width; slope is "
                  "the mean of ŝ·s/‖s‖² (1: unbiased scale). Random effects estimate scores conditional on a "
                  "user, on a wider scale than the population-averaged ones when a user's votes agree: in design "
                  "`shared` (not their model) their slope exceeds 1 and their coverage of the population scores "
                  "is not the target; design `random` is their model. The bootstrap and random effects ran on "
                  "the first n replicates only (short default run; more with the task's arguments).", "",
                  "| design | model | users | " + " | ".join(METHODS) + " |",
                  "|---|---|---|" + "---|" * len(METHODS)]
        for k in coverage:
            x = r[k]
            cells = []
            for method in METHODS:
                m = x["methods"].get(method, {})
                if "coverage" not in m:
                    cells.append(f"failed ({m.get('failed', 0)})" if m else "")
                    continue
                se = f" ± {m['mc_se']:.3f}" if m.get("mc_se") is not None else ""
                fails = f", {m['failed']} failed" if m["failed"] else ""
                cells.append(f"{m['coverage']:.3f}{se} (width {m['median_width']:.2f}, slope {m['mean_slope']:.2f}, "
                             f"n = {m['replicates']}{fails})")
            lines.append(f"| {x['design']} | {x['framework']} | {x['clusters']} | " + " | ".join(cells) + " |")
        lines.append("")
    w = r.get("widening", {})
    if "results" in w:
        lines += ["### How much the intervals widen on MT-Bench judge records", "", w["data"] + "; standard error "
                  "of each model's score divided by the Wald one (median over the 6 models, range).", "",
                  "| intervals | Bradley–Terry (ties dropped) | Davidson |", "|---|---|---|"]
        names = list(w["results"]["bt"])
        for name in names:
            cells = []
            for model in ("bt", "davidson"):
                x = w["results"][model].get(name)
                spread = f", τ̂ = {x['spread']:.2f}" if x and "spread" in x else ""
                cells.append(f"{x['ratio_median']:.2f} ({x['ratio_min']:.2f}–{x['ratio_max']:.2f}){spread}"
                             if x else "")
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines.append("")
    s = r.get("speed", {})
    if "ratio" in s:
        lines += ["### Speed: clustered sandwich on 1.67M battles by 100,000 users", "",
                  f"{s['input']}; whole processes `bayesrank fit … --model bt --intervals sandwich --format json`, "
                  f"median of {s['repeats']} interleaved runs.", "",
                  "| run | whole process | fit (inside) |", "|---|---|---|",
                  f"| unclustered | {s['seconds']['unclustered']:.2f} s | {s['fit_seconds']['unclustered']:.2f} s |",
                  f"| `--cluster user` | {s['seconds']['clustered']:.2f} s | {s['fit_seconds']['clustered']:.2f} s |",
                  f"| ratio (target ≤ {s['target']:g}) | **{s['ratio']:.2f}** | |",
                  "", f"Median ratio of the clustered standard errors to the unclustered ones: "
                  f"{s['se_ratio_median']:.2f} (users' votes are drawn independently here: the test is of speed)."]
    errors = [f"- {k}: error {x['error'][-300:]!r}" for k, x in r.items() if "error" in x]
    return "\n".join(lines + errors) + "\n"


if __name__ == "__main__":
    task_main(TASKS, save=save, report=report, report_file=RESULTS / "dependence.md")
