"""GARS and DMLRank benchmarks: the paper's Tables 1 and 2 (their shape), DMLRank on 10⁶ labels,
and GARS of arena-2024 from the Davidson k_tie=1 fit and from the raw counts.

The bench protocol (``bench/common.py``): ``TASKS`` (one fresh process each), ``SUITE`` (what
``bench/run.py`` runs; ``quick`` marks the cheap configurations) and ``report(results)``.
Alone: ``python bench/tasks_gars.py TASK '{"arg": ...}' [--save]`` prints one line
``BENCH_JSON {...}``; ``--save`` appends it to ``bench/results/gars.json`` (the same
``results[task]["current"]`` layout as run.py), and ``python bench/tasks_gars.py report`` writes
``bench/results/gars.md`` from that file. Repeated outputs of ``table1``/``table2`` (with the same
set-up) are pooled run by run, so Monte-Carlo runs can be added in several processes.

Tasks
-----
``table1``
    NonlinearTie (K = 3, p = 2, π_p = 0.3, λ_π = 0.1, ε_μ = 0.05, π ∈ [0.05, 0.5]), n ∈ {1000, 2000,
    3000} contexts, Monte-Carlo runs (new data each run, one draw of the simulator's coefficients;
    ``max_seconds`` stops starting new runs once the time is spent): debiased (5-fold
    cross-fitting, estimated propensities) against plug-in (same μ̂, naive covariance of F(μ̂(xᵢ))),
    for the three scores. ``error`` = ‖θ̂ − θ‖₂ (the paper does not define its error);
    ``coverage`` = share of runs whose simultaneous 95% box (Gaussian max) holds every θ_j.
``table2``
    BTMisspec (K = 3, p = 2, γ = 1): a pilot of 1500 contexts labelled by the simulator's design
    fits μ̂; 1500 new contexts are labelled with budget 2000 by the A-optimal policy of each score
    or at random (π = 2000 / (1500 · 6)); DMLRank with the known policy; ranking MSE
    = mean_j (θ̂_j − θ_j)². Both policies of a run share the pilot and the contexts, so their
    difference is also reported run by run.
``table2-oracle``
    The ranking MSE the influence function predicts for table2's two policies when μ is known
    (A-optimal from the true μ): the most A-optimal labelling can gain in that set-up.
``scale``
    DMLRank of the three scores on 10⁶ labelled comparisons (NonlinearTie, K = 6, p = 5, the
    simulator's own design, propensities estimated, 2-fold cross-fitting): seconds and peak RSS.
``arena``
    Borda, BT projection and Rank Centrality of arena-2024 from the Davidson k_tie=1 MAP fit and
    from the raw counts; Spearman correlation of each with the Davidson ranking.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from common import maxrss_mib, task_main  # noqa: E402

RESULTS = HERE / "results"
SCORES = ("borda", "bt", "rank-centrality")
TABLE1_SIM = dict(K=3, p=2, pi_p=0.3, lam_pi=0.1, eps_mu=0.05, pi_min=0.05, pi_max=0.5)


def covered(estimate, se, critical, truth) -> bool:
    return bool(np.all(np.abs(estimate - truth) <= critical * se))


def mean_se(x) -> tuple[float, float]:
    """Mean over Monte-Carlo runs and its standard error."""
    x = np.asarray(x, dtype=float)
    return float(x.mean()), (float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan"))


# ====================================================================== tasks
def task_table1(sizes=(1000, 2000, 3000), learners=("spline-logistic", "hist-gradient-boosting"), runs=100,
                max_seconds=None, first_run=0, folds=5, sim_seed=1, n_mc=1_000_000, n_mc_critical=20_000) -> dict:
    from bayesrank.gars.dml import dmlrank_scores
    from bayesrank.gars.dml.estimator import max_critical
    from bayesrank.gars.dml.simulate import simulator

    sim = simulator("nonlinear_tie", random_seed=sim_seed, **TABLE1_SIM)
    truth = sim.truth(SCORES, n_mc=n_mc)
    per = {(lrn, n, s, e): {"error": [], "covered": []}
           for lrn in learners for n in sizes for s in SCORES for e in ("plugin", "debiased")}
    seconds = {(lrn, n): 0.0 for lrn in learners for n in sizes}
    t_start, done = time.perf_counter(), 0
    for r in range(first_run, first_run + runs):
        elapsed = time.perf_counter() - t_start
        if max_seconds is not None and done and elapsed + elapsed / done > max_seconds:
            break
        for learner in learners:
            for n in sizes:
                t0 = time.perf_counter()
                records = sim.records(n, random_seed=10_000 * n + r)
                results = dmlrank_scores(records, SCORES, features=["x0", "x1"], learner=learner,
                                         n_folds=folds, random_seed=r, n_mc=n_mc_critical)
                for s, res in results.items():
                    crit = max_critical(res.plugin_cov, 0.95, n_mc_critical, r)
                    for est, value, se, c in (("debiased", res.estimate, res.se, res.critical),
                                              ("plugin", res.plugin, res.plugin_se, crit)):
                        per[(learner, n, s, est)]["error"].append(float(np.linalg.norm(value - truth[s])))
                        per[(learner, n, s, est)]["covered"].append(covered(value, se, c, truth[s]))
                seconds[(learner, n)] += time.perf_counter() - t0
        done += 1
    setup = {"sim_seed": sim_seed, "folds": folds, "n_mc": n_mc, **TABLE1_SIM}
    return {"setup": setup, "truth": {s: truth[s].tolist() for s in SCORES}, "runs": done,
            "first_run": first_run, "seconds_total": time.perf_counter() - t_start,
            "seconds_per_run": {f"{lrn} n={n}": v / max(done, 1) for (lrn, n), v in seconds.items()},
            "rows": [{"learner": lrn, "n": n, "score": s, "estimator": e, **v} for (lrn, n, s, e), v in per.items()]}


def task_table2(runs=40, max_seconds=None, first_run=0, pilot=1500, pool=1500, budget=2000.0, floor=0.01, folds=3,
                sim_seed=1, n_mc=1_000_000, learner=None) -> dict:
    from dataclasses import replace

    from bayesrank.gars.dml import a_optimal, dmlrank, variance_weights
    from bayesrank.gars.dml.learners import DEFAULT_LEARNER
    from bayesrank.gars.dml.nuisance import OutcomeModel
    from bayesrank.gars.dml.records import read_records
    from bayesrank.gars.dml.simulate import simulator

    sim = simulator("bt_misspec", K=3, p=2, random_seed=sim_seed, gamma=1.0, pi_p=0.3, lam_pi=0.1)
    truth = sim.truth(SCORES, n_mc=n_mc)
    K = sim.K
    j, k = np.nonzero(~np.eye(K, dtype=bool))
    features = [f"x{f}" for f in range(sim.p)]
    uniform = budget / (pool * len(j))
    policies = ("a-optimal", "random")
    learner = learner or DEFAULT_LEARNER
    mse = {(s, pol): [] for s in SCORES for pol in policies}
    predicted = {(s, pol): [] for s in SCORES for pol in policies}
    labels = {(s, pol): [] for s in SCORES for pol in policies}
    t_start, done = time.perf_counter(), 0
    for r in range(first_run, first_run + runs):
        elapsed = time.perf_counter() - t_start
        if max_seconds is not None and done and elapsed + elapsed / done > max_seconds:
            break
        rng = np.random.default_rng(r)
        records = read_records(sim.records(pilot, random_seed=rng.integers(2**31)), features=features)
        model = OutcomeModel(learner, 3, r).fit(records, np.arange(records.n_labels))
        X = sim.contexts(pool, rng)
        at_pool = replace(records, X=X, context_ids=np.arange(pool), judge=None)  # μ̂ at the new contexts
        mu = np.zeros((pool, K, K, 3))
        mu[:, j, k] = model.predict(at_pool, np.repeat(np.arange(pool), len(j)), np.tile(j, pool),
                                    np.tile(k, pool)).reshape(pool, len(j), 3)
        for s in SCORES:
            optimal, _ = a_optimal(variance_weights(mu, s, sim.scheme), budget, floor=floor)
            for pol, pi in (("a-optimal", optimal), ("random", np.full((pool, K, K), uniform))):
                frame = sim.records(pool, random_seed=rng.integers(2**31), X=X, policy=lambda x, pi=pi: pi)
                labels[(s, pol)].append(int(frame["winner"].notna().sum()))
                res = dmlrank(frame, s, sim.scheme, features=features, propensity="propensity",
                              n_folds=folds, random_seed=r, n_mc=1000, learner=learner)
                mse[(s, pol)].append(float(np.mean((res.estimate - truth[s]) ** 2)))
                predicted[(s, pol)].append(float(np.mean(res.se ** 2)))
        done += 1
    setup = {"sim_seed": sim_seed, "pilot": pilot, "pool": pool, "budget": budget, "floor": floor, "folds": folds,
             "n_mc": n_mc, "learner": learner}
    return {"setup": setup, "truth": {s: truth[s].tolist() for s in SCORES}, "runs": done, "first_run": first_run,
            "seconds_total": time.perf_counter() - t_start,
            "rows": [{"policy": pol, "score": s, "mse": mse[(s, pol)], "predicted": predicted[(s, pol)],
                      "labels": labels[(s, pol)]}
                     for pol in policies for s in SCORES]}


def task_table2_oracle(contexts=100_000, pool=1500, budget=2000.0, floor=0.01, sim_seed=1) -> dict:
    """The ranking MSE that the EIF variance predicts for table2's policies when μ is known (the
    A-optimal policy from the true μ instead of a pilot's μ̂): what A-optimal labelling can gain
    there at most, asymptotically. MSE = (tr Var F(μ(X)) + E Σ_jk a_jk(X)/π_jk(X)) / (K · pool)."""
    from bayesrank.gars.dml import a_optimal, variance_weights
    from bayesrank.gars.dml.simulate import simulator
    from bayesrank.gars.scores import functional

    sim = simulator("bt_misspec", K=3, p=2, random_seed=sim_seed, gamma=1.0, pi_p=0.3, lam_pi=0.1)
    mu = sim.mu(sim.contexts(contexts, np.random.default_rng(sim_seed)))
    K = sim.K
    off = ~np.eye(K, dtype=bool)
    per_context = budget / pool
    rows = []
    for s in SCORES:
        a = variance_weights(mu, s, sim.scheme)
        optimal, _ = a_optimal(a, per_context * contexts, floor=floor)
        var_f = float(np.trace(np.atleast_2d(np.cov(functional(mu, s, sim.scheme).T))))
        for pol, pi in (("a-optimal", optimal[:, off]), ("random", per_context / off.sum())):
            correction = float((a[:, off] / pi).sum(axis=1).mean())
            rows.append({"policy": pol, "score": s, "var_f": var_f, "correction": correction,
                         "mse": (var_f + correction) / (K * pool)})
    return {"setup": {"sim_seed": sim_seed, "contexts": contexts, "pool": pool, "budget": budget, "floor": floor},
            "rows": rows}


def task_scale(labels=1_000_000, items=6, folds=2, sim_seed=1, n_mc=1_000_000, learner=None) -> dict:
    from bayesrank.gars.dml import dmlrank_scores, read_records
    from bayesrank.gars.dml.simulate import simulator

    sim = simulator("nonlinear_tie", K=items, p=5, random_seed=sim_seed, pi_min=0.05, pi_max=0.5)
    per_context = sim.propensity(sim.contexts(20_000, np.random.default_rng(0))).sum(axis=(1, 2)).mean()
    n = int(np.ceil(labels / per_context))
    t0 = time.perf_counter()
    frame = sim.records(n, random_seed=1)
    t_sim = time.perf_counter() - t0
    rss_simulated = maxrss_mib()
    t0 = time.perf_counter()
    records = read_records(frame, features=[f"x{f}" for f in range(5)])
    del frame
    t_read = time.perf_counter() - t0
    t0 = time.perf_counter()
    from bayesrank.gars.dml.learners import DEFAULT_LEARNER

    learner = learner or DEFAULT_LEARNER
    results = dmlrank_scores(records, SCORES, n_folds=folds, random_seed=0, learner=learner)
    t_fit = time.perf_counter() - t0
    truth = sim.truth(SCORES, n_mc=n_mc)
    return {"n_contexts": records.n_contexts, "n_labels": records.n_labels, "items": items, "folds": folds,
            "learner": learner,
            "seconds_simulate": t_sim, "seconds_read": t_read, "seconds_dmlrank": t_fit,
            "maxrss_after_simulate_mib": rss_simulated, "maxrss_after_dmlrank_mib": maxrss_mib(),
            "errors": {s: float(np.linalg.norm(r.estimate - truth[s])) for s, r in results.items()},
            "max_se": {s: float(r.se.max()) for s, r in results.items()},
            "covered": {s: covered(r.estimate, r.se, r.critical, truth[s]) for s, r in results.items()}}


def task_arena() -> dict:
    from scipy.stats import spearmanr

    import bayesrank as br
    from bayesrank import gars

    data = br.load("arena-2024")
    pairs = {(min(a, b), max(a, b)) for a, b in zip(np.asarray(data.a), np.asarray(data.b))}
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
            rows.append({"source": source, "score": s, "spearman": float(spearmanr(g.estimate[order], base).statistic),
                         "seconds": seconds, "top5": g.table().head(5)["name"].tolist(),
                         "median_se": float(np.median(g.se)), "complete_graph": g.complete})
    return {"items": data.n_items, "observed_pairs": len(pairs), "fit_seconds": t_fit,
            "davidson_top5": dav.leaderboard().head(5)["name"].tolist(), "rows": rows}


TASKS = {"table1": task_table1, "table2": task_table2, "table2-oracle": task_table2_oracle, "scale": task_scale,
         "arena": task_arena}

SUITE = [
    {"task": "table1", "args": {"sizes": [500], "runs": 2, "n_mc": 200_000}, "timeout": 900, "quick": True},
    {"task": "table1", "args": {"max_seconds": 2400}, "timeout": 3600},
    {"task": "table2", "args": {"runs": 2, "n_mc": 200_000}, "timeout": 900, "quick": True},
    {"task": "table2", "args": {"runs": 40, "max_seconds": 1800}, "timeout": 3600},
    {"task": "table2-oracle", "timeout": 900, "quick": True},
    {"task": "scale", "args": {"labels": 100_000, "n_mc": 200_000}, "timeout": 900, "quick": True},
    {"task": "scale", "timeout": 3600},
    {"task": "arena", "timeout": 1800, "quick": True},
]


# ====================================================================== report
def _ok(outs):
    return [o for o in outs or [] if "error" not in o]


def _pooled(outs):
    """Outputs of one set-up (the last output's), rows pooled run by run."""
    outs = _ok(outs)
    if not outs:
        return None, {}
    last = outs[-1]
    same = [o for o in outs if o["setup"] == last["setup"]]
    pooled: dict = {}
    for o in same:
        for row in o["rows"]:
            ident = tuple(row[f] for f in row if not isinstance(row[f], list))
            slot = pooled.setdefault(ident, {f: v for f, v in row.items() if not isinstance(v, list)})
            for f, v in row.items():
                if isinstance(v, list):
                    slot.setdefault(f, []).extend(v)
    return {**last, "runs": sum(o["runs"] for o in same), "processes": len(same),
            "seconds_total": sum(o["seconds_total"] for o in same)}, pooled


def _ratio_paired(a, b) -> str:
    """Mean ± Monte-Carlo standard error of the run-by-run ratios a / b."""
    m, se = mean_se(np.divide(a, b))
    return f"{m:.3f} ± {se:.3f}"


def _ms(values, digits=3, scale=1.0):
    m, se = mean_se(np.asarray(values, dtype=float) * scale)
    return f"{m:.{digits}f} ± {se:.{digits}f}"


def report(results: dict) -> list[str]:
    lines = ["## GARS and DMLRank", "",
             "Set-ups in the docstring of `bench/tasks_gars.py`. Monte-Carlo figures are mean ± Monte-Carlo "
             "standard error over runs (sd/√runs; for a coverage p̂ that is √(p̂(1−p̂)/runs)).", ""]
    t, rows = _pooled((results.get("table1") or {}).get("current"))
    if t:
        sizes = sorted({r["n"] for r in rows.values()})
        learners = list(dict.fromkeys(r["learner"] for r in rows.values()))
        lines += [f"### Table 1 shape: debiasing (NonlinearTie, {t['runs']} runs per cell in {t['processes']} "
                  f"process(es), {t['seconds_total'] / 60:.0f} min; {t['setup']['folds']}-fold cross-fitting, "
                  "propensities estimated by the same learner)", "",
                  "error = ‖θ̂ − θ‖₂; coverage = share of runs whose simultaneous 95% box (Gaussian max) holds all "
                  f"of θ (truth: {t['setup']['n_mc']:,} contexts). Plug-in: the same μ̂, naive covariance of F(μ̂(xᵢ)).",
                  "", "| learner | GARS | estimator | " + " | ".join(f"n={n} error | n={n} coverage" for n in sizes) + " |",
                  "|---|---|---|" + "---|---|" * len(sizes)]
        for learner in learners:
            for s in SCORES:
                for est in ("plugin", "debiased"):
                    cells = []
                    for n in sizes:
                        row = rows[(learner, n, s, est)]
                        cov = _ms(row["covered"], 2)
                        cells += [_ms(row["error"]), f"**{cov}**" if est == "debiased" else cov]
                    lines.append(f"| {learner} | {s} | {est} | " + " | ".join(cells) + " |")
        low = [f"{lrn} {s} n={n} ({np.mean(rows[(lrn, n, s, 'debiased')]['covered']):.2f})"
               for lrn in learners for s in SCORES for n in sizes
               if np.mean(rows[(lrn, n, s, "debiased")]["covered"]) < 0.90]
        lines += ["", "Debiased coverage below 0.90: " + ("; ".join(low) if low else "none") + "."]
        alt, alt_rows = _pooled((results.get("table1-penalty-held-out") or {}).get("current"))
        if alt:
            lines += ["", f"Tried and not adopted: spline-logistic with its penalty chosen by log-loss on a held-out fifth "
                      f"({alt['runs']} runs): debiased coverage " + "; ".join(
                          f"{s} " + ", ".join(f"n={n} {np.mean(alt_rows[('spline-logistic', n, s, 'debiased')]['covered']):.2f}"
                                             for n in sizes) for s in SCORES) + "."]
        lines += ["", "seconds per run (three scores, latest process): "
                  + ", ".join(f"{k} {v:.1f}" for k, v in t["seconds_per_run"].items()), ""]
    t, rows = _pooled((results.get("table2") or {}).get("current"))
    if t:
        st = t["setup"]
        lines += [f"### Table 2 shape: A-optimal against random labelling (BTMisspec γ = 1, {t['runs']} runs, pilot "
                  f"{st['pilot']}, pool {st['pool']}, budget {st['budget']:g}, floor {st['floor']:g})", "",
                  "ranking MSE × 10² of the debiased estimate; the row random − A-optimal is the difference run by run "
                  "(same pilot and contexts; > 0 means A-optimal is better)", "",
                  "| policy | " + " | ".join(SCORES) + " |", "|---|" + "---|" * len(SCORES)]
        for pol in ("a-optimal", "random"):
            lines.append(f"| {pol} | " + " | ".join(_ms(rows[(pol, s)]["mse"], 4, 100) for s in SCORES) + " |")
        diff = [np.subtract(rows[("random", s)]["mse"], rows[("a-optimal", s)]["mse"]) for s in SCORES]
        lines.append("| random − A-optimal | " + " | ".join(_ms(d, 4, 100) for d in diff) + " |")
        lines.append("| A-optimal / random | " + " | ".join(
            f"{np.mean(rows[('a-optimal', s)]['mse']) / np.mean(rows[('random', s)]['mse']):.3f}" for s in SCORES) + " |")
        have = [s for s in SCORES if rows[("a-optimal", s)].get("predicted")]
        if have:
            n_pred = len(rows[("a-optimal", have[0])]["predicted"])
            lines.append(f"| estimator's own variance, A-optimal / random ({n_pred} runs) | " + " | ".join(
                _ratio_paired(rows[("a-optimal", s)]["predicted"], rows[("random", s)]["predicted"]) if s in have
                else "–" for s in SCORES) + " |")
        oracle = _ok((results.get("table2-oracle") or {}).get("current"))
        if oracle:
            o = {(r["policy"], r["score"]): r for r in oracle[-1]["rows"]}
            lines.append("| asymptotic, true μ: A-optimal / random | " + " | ".join(
                f"{o[('a-optimal', s)]['mse'] / o[('random', s)]['mse']:.3f} ({100 * o[('a-optimal', s)]['mse']:.4f}"
                f" / {100 * o[('random', s)]['mse']:.4f})" for s in SCORES) + " |")
        lines += ["", "The estimator's own variance is mean_j se_j² of each run's debiased estimate (the influence "
                  "function's variance estimate, what A-optimal labelling minimises); its ratio is the mean of the run-by-run "
                  "ratios ± its Monte-Carlo standard error (the realised MSE above is far noisier)."]
        lines += ["", "The last row is `table2-oracle`: the ranking MSE × 10² that the influence function's variance "
                  "predicts with the true μ (A-optimal policy from the true μ, "
                  f"{oracle[-1]['setup']['contexts']:,} contexts) — the most A-optimal labelling can gain here."
                  if oracle else "No `table2-oracle` output.", ""]
        lines += ["labels drawn per run (budget " + f"{st['budget']:g}): " + "; ".join(
            f"{pol} {s} {_ms(rows[(pol, s)]['labels'], 0)}" for pol in ("a-optimal", "random") for s in SCORES), ""]
    scale = _ok((results.get("scale") or {}).get("current"))
    if scale:
        latest = {t.get("learner", "hist-gradient-boosting"): t for t in scale}  # the last output of each learner
        t = scale[-1]
        lines += ["### DMLRank at scale", "",
                  f"About 10⁶ labelled comparisons (NonlinearTie, K = {t['items']}, p = 5), {t['folds']}-fold cross-fitting, "
                  "propensities estimated by the same learner, the three scores; wall time of DMLRank (simulating and "
                  "reading the records not included) and peak RSS of the process. A row measured \"?\" predates the "
                  "timestamps and the 500,000-row cap on the propensity model's rows (it used 2,000,000).", "",
                  "| learner | measured | labels | contexts | DMLRank | peak RSS | after simulating | ‖θ̂ − θ‖₂ (borda, bt, rc) "
                  "| simultaneous box covers θ |", "|---|---|---|---|---|---|---|---|---|"]
        for learner, t in latest.items():
            when = f"{t.get('finished', '?')[:16].replace('T', ' ')}, load {t['load_average'][0]:.1f}" if t.get(
                "load_average") else t.get("finished", "?")[:16].replace("T", " ")
            lines.append(f"| {learner} | {when} | {t['n_labels']:,} | {t['n_contexts']:,} | **{t['seconds_dmlrank']:.0f} s "
                         f"({t['seconds_dmlrank'] / 60:.1f} min)** | **{t['maxrss_mib']:.0f} MiB** | "
                         f"{t['maxrss_after_simulate_mib']:.0f} MiB | "
                         + ", ".join(f"{v:.4f}" for v in t["errors"].values()) + " | "
                         + ", ".join(f"{s} {'yes' if v else 'no'}" for s, v in t["covered"].items()) + " |")
        lines.append("")
    arena = _ok((results.get("arena") or {}).get("current"))
    if arena:
        t = arena[-1]
        total = t["items"] * (t["items"] - 1) // 2
        lines += ["### arena-2024: GARS from the Davidson k_tie=1 fit and from the raw counts", "",
                  f"Spearman correlation with the Davidson k_tie=1 ranking ({t['items']} items). The raw counts cover "
                  f"{t['observed_pairs']} of {total} pairs, so their Borda and Rank Centrality average over the observed "
                  "opponents only (another estimand: who an item met shapes it); the BT projection is the "
                  "least-squares fit on the observed edges.", "",
                  "| source | score | Spearman | seconds | top 3 |", "|---|---|---|---|---|"]
        for r in t["rows"]:
            lines.append(f"| {r['source']} | {r['score']} | {r['spearman']:.4f} | {r['seconds']:.1f} | "
                         f"{', '.join(r['top5'][:3])} |")
        lines += ["", f"Davidson k_tie=1 fit {t['fit_seconds']:.1f} s; top 3: {', '.join(t['davidson_top5'][:3])}", ""]
    return lines


# ====================================================================== alone
def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    store = RESULTS / "gars.json"
    if argv[:1] == ["report"]:
        results = json.loads(store.read_text())["results"]
        text = "\n".join(["# GARS and DMLRank benchmarks", "", *report(results)])
        (RESULTS / "gars.md").write_text(text + "\n")
        print(text)
        return
    save = "--save" in argv
    argv = [a for a in argv if a != "--save"]
    if not save:
        task_main(TASKS, argv)
        return
    import contextlib
    import fcntl
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        task_main(TASKS, argv)
    line = next(x for x in buffer.getvalue().splitlines() if x.startswith("BENCH_JSON "))
    print(line, flush=True)
    out = json.loads(line[len("BENCH_JSON "):])
    out["args"] = json.loads(argv[1]) if len(argv) > 1 else {}
    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / "gars.lock.tmp", "w") as lock:  # tasks run in parallel append to one file
        fcntl.flock(lock, fcntl.LOCK_EX)
        stored = json.loads(store.read_text()) if store.exists() else {"results": {}}
        stored["results"].setdefault(argv[0], {}).setdefault("current", []).append(out)
        store.write_text(json.dumps(stored, indent=1) + "\n")


if __name__ == "__main__":
    main()
