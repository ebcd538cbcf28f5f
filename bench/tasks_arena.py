"""Benchmarks of what Arena-style leaderboard users expect (issue 12), each in its own process.

Run by ``bench/run.py`` (protocol: ``bench/common.py``; ``--only tasks_arena``, ``--quick``: the
sandwich and fragility checks). ``python bench/tasks_arena.py TASK '{"arg": ...}'`` runs one task
and prints one line ``BENCH_JSON {...}``; either way the output of this checkout is also kept in
``bench/results/arena.json`` (task → output), and ``python bench/tasks_arena.py report`` writes
the table ``bench/results/arena.md`` from those and the latest ``bench/results.json``.

Tasks
-----
sandwich
    Plain BT (ties as halves) on ``arena-2024``: our sandwich intervals against ``arena-rank``'s
    on the same cells in the same run — with its default ridge on the Hessian, and with its own
    Hessian and score covariance at its own ratings combined without the ridge.
bootstrap
    1000 multinomial bootstrap resamples of the comparisons on ``arena-2024``, each refitted
    (``br.fit(..., intervals="bootstrap")``), next to ``arena-rank``'s bootstrap of the same
    size (its process pool started with "spawn": the default "fork" deadlocks under JAX).
style
    Style-control coefficients on simulated battles with known effects (BT and Davidson):
    the 95% intervals' coverage over seeded replicates.
rank-coverage
    Simultaneous 95% rank sets (MAP, sandwich-free Wald and bootstrap) on simulated BT data
    with close scores: the share of replicates in which every true rank is in its set.
fragility
    The top spot and the top-3 set of BT on ``arena-2024``: the fewest votes whose removal
    changes them, confirmed by an independent fit of the data without those votes.
hierarchical
    Per-category scores on simulated categories (two large, four small): the hierarchical
    ``by-category`` model (NUTS) against separate fits per category (NUTS with the same weak
    score prior, and MAP), RMSE to the truth.
"""

from __future__ import annotations

import json
import os
import time

import numpy as np

from common import RESULTS, newest, task_main

#: Must-show targets of issue 12.
TARGET_SANDWICH = 0.01       # relative difference to arena-rank's intervals
TARGET_BOOTSTRAP_SECONDS = 30.0
TARGET_COVERAGE = 0.95


def saved() -> dict:
    """The committed outputs, task → output."""
    path = RESULTS / "arena.json"
    return json.loads(path.read_text()) if path.exists() else {}


def save(task: str, out: dict) -> None:
    (RESULTS / "arena.json").write_text(json.dumps({**saved(), task: out}, indent=1) + "\n")


def arena_rank_dataset(data):
    """``arena-rank``'s PairDataset of the same cells: one row per (pair, outcome) with its count
    (outcome 1 = model_a wins, 0 = model_b wins, 0.5 = tie)."""
    import jax.numpy as jnp
    from arena_rank.utils.data_utils import PairDataset

    pairs, outcomes, counts = [], [], []
    for y, col in ((1.0, data.wins_a), (0.0, data.wins_b), (0.5, data.ties)):
        keep = col > 0
        pairs.append(np.column_stack([data.a[keep], data.b[keep]]))
        outcomes.append(np.full(keep.sum(), y))
        counts.append(col[keep])
    pairs, outcomes, counts = (np.concatenate(x) for x in (pairs, outcomes, counts))
    return PairDataset(competitors=list(data.items), pairs=jnp.asarray(pairs, dtype=jnp.int32),
                       outcomes=jnp.asarray(outcomes), counts=jnp.asarray(counts),
                       weights=jnp.ones(len(counts)), opt_weights=jnp.asarray(counts))


# ====================================================================== tasks
def task_sandwich():
    import bayesrank as br
    from arena_rank.models.bradley_terry import BradleyTerry as ArenaBT

    data = br.load("arena-2024")
    t0 = time.perf_counter()
    fit = br.fit(br.BradleyTerry(), data, intervals="sandwich")
    ours_seconds = time.perf_counter() - t0
    board = fit.leaderboard().set_index("name").loc[list(data.items)]
    scale = 400 / np.log(10)
    ours = (board["upper"] - board["lower"]).to_numpy() * scale
    ds = arena_rank_dataset(data)
    model = ArenaBT(data.n_items)
    t0 = time.perf_counter()
    res = model.compute_ratings_and_cis(ds, ci_method="sandwich")
    theirs_seconds = time.perf_counter() - t0
    theirs = np.asarray(res["rating_upper"]) - np.asarray(res["rating_lower"])
    H, M = ArenaBT.compute_hessian_and_covariance(model.params["ratings"], ds.pairs, ds.outcomes, ds.counts,
                                                  ds.opt_weights, 0.0, data.n_items)
    Hp = np.linalg.pinv(np.asarray(H))
    theirs_exact = 2 * 1.959963984540054 * np.sqrt(np.diag(Hp @ np.asarray(M) @ Hp)) * scale
    wald = br.fit(br.BradleyTerry(), data, intervals="wald").leaderboard().set_index("name").loc[list(data.items)]
    ratio_default, ratio_exact = ours / theirs, ours / theirs_exact
    s_theirs = np.asarray(res["ratings"]) - np.mean(np.asarray(res["ratings"]))
    return {"task": "sandwich", "ours_seconds": ours_seconds, "arena_rank_seconds": theirs_seconds,
          "ratio_default_median": float(np.median(ratio_default)), "ratio_default_min": float(ratio_default.min()),
          "ratio_default_max": float(ratio_default.max()),
          "share_within_1pct_default": float(np.mean(np.abs(ratio_default - 1) <= TARGET_SANDWICH)),
          "ratio_no_ridge_median": float(np.median(ratio_exact)), "ratio_no_ridge_min": float(ratio_exact.min()),
          "ratio_no_ridge_max": float(ratio_exact.max()),
          "sandwich_over_wald_median": float(np.median((board["upper"] - board["lower"]) /
                                                       (wald["upper"] - wald["lower"]))),
          "max_score_difference_elo": float(np.max(np.abs(board["score"].to_numpy() * scale - s_theirs)))}


def task_bootstrap(n_boot: int = 1000, arena_boot: int = 100):
    import multiprocessing as mp

    import bayesrank as br

    data = br.load("arena-2024")
    br.fit(br.BradleyTerry(), data)  # compile outside the timing (a warm model, as in a session)
    t0 = time.perf_counter()
    fit = br.fit(br.BradleyTerry(), data, intervals="bootstrap", n_boot=n_boot, random_seed=1)
    ours = time.perf_counter() - t0
    boot = fit.diagnostics["bootstrap"]
    sandwich = br.fit(br.BradleyTerry(), data, intervals="sandwich").leaderboard().set_index("name")
    board = fit.leaderboard().set_index("name").loc[sandwich.index]
    out = {"task": "bootstrap", "n_boot": n_boot, "ours_seconds": ours, "ours_bootstrap_seconds": boot["seconds"],
           "n_failed": boot["n_failed"], "newton_iterations_per_refit": boot["newton_iterations"] / n_boot,
           "se_bootstrap_over_sandwich_median": float(np.median(board["se"] / sandwich["se"]))}
    if arena_boot:
        from arena_rank.models.bradley_terry import BradleyTerry as ArenaBT

        mp.set_start_method("spawn", force=True)
        ds = arena_rank_dataset(data)
        model = ArenaBT(data.n_items)
        model.fit(ds)
        t0 = time.perf_counter()
        model.compute_ratings_and_cis(ds, ci_method="bootstrap", num_bootstrap=arena_boot, n_jobs=os.cpu_count())
        out.update(arena_rank_n_boot=arena_boot, arena_rank_seconds=time.perf_counter() - t0,
                   arena_rank_jobs=os.cpu_count())
    return out


def task_style(replicates: int = 40):
    import bayesrank as br
    from bayesrank.data.simulate import battles
    from bayesrank.analysis.style import style_effects

    beta = np.array([0.4, -0.25])
    scores = np.linspace(-1, 1, 8)
    out = {"task": "style", "beta": beta.tolist(), "replicates": replicates}
    for name, fw, eta in (("bt", br.BradleyTerry(), None), ("davidson", br.Davidson(), -0.5)):
        covered, est = [], []
        t0 = time.perf_counter()
        for seed in range(replicates):
            df = battles(scores - scores.mean(), 4000, np.random.default_rng(seed), beta=beta, eta=eta)
            effects = style_effects(br.fit(fw, br.load(df, contrasts=["z0", "z1"])))
            covered.append(((effects["lower"] <= beta) & (beta <= effects["upper"])).to_numpy())
            est.append(effects["estimate"].to_numpy())
        covered, est = np.array(covered), np.array(est)
        out[name] = {"coverage": covered.mean(axis=0).tolist(), "mean_estimate": est.mean(axis=0).tolist(),
                     "seconds": time.perf_counter() - t0}
    return out


def task_rank_coverage(replicates: int = 200):
    import bayesrank as br
    from bayesrank.results.ranksets import rank_sets
    from bayesrank.data.simulate import item_names

    true = np.array([0.0, 0.05, 0.1, 0.2, 0.25, 0.4, 0.45, 0.6, 0.8, 0.85])
    true = true - true.mean()
    truth_rank = dict(zip(item_names(true.size), np.argsort(np.argsort(-true)) + 1))
    m = true.size
    a, b = np.triu_indices(m, k=1)
    p = 1 / (1 + np.exp(-(true[a] - true[b])))
    names = np.asarray(item_names(m), dtype=object)
    out = {"task": "rank-coverage", "replicates": replicates, "items": m}
    for method in ("wald", "bootstrap"):
        hits, top1, widths = [], [], []
        t0 = time.perf_counter()
        for seed in range(replicates):
            rng = np.random.default_rng(seed)
            wins = rng.binomial(300, p)
            data = br.Comparisons.from_cells(names[a], names[b], wins, 300 - wins)
            fit = br.fit(br.BradleyTerry(ties="drop"), data, intervals=method, n_boot=300, random_seed=seed)
            sets = rank_sets(fit.tree).set_index("name")
            r = np.array([truth_rank[n] for n in sets.index])
            hits.append(bool(np.all((sets["rank_set_lower"] <= r) & (r <= sets["rank_set_upper"]))))
            top1.append(names[np.argmax(true)] in set(sets.index[sets["rank_set_lower"] <= 1]))
            widths.append(float(np.mean(sets["rank_set_upper"] - sets["rank_set_lower"] + 1)))
        out[method] = {"coverage_all_ranks": float(np.mean(hits)), "coverage_top1_set": float(np.mean(top1)),
                       "mean_set_size": float(np.mean(widths)), "seconds": time.perf_counter() - t0}
    return out


def task_fragility():
    import bayesrank as br
    from bayesrank.analysis.fragility import fragility, without_votes

    data = br.load("arena-2024")
    fit = br.fit(br.BradleyTerry(), data)
    out = {"task": "fragility"}
    for k in (1, 3):
        t0 = time.perf_counter()
        result = fragility(fit, k=k)
        seconds = time.perf_counter() - t0
        refit = br.fit(br.BradleyTerry(), without_votes(data, result.removed))
        top = list(refit.leaderboard()["name"][:k])
        out[f"top{k}"] = {"n_votes": result.n_votes, "n_votes_estimated": result.n_votes_estimated,
                          "holder": result.holder, "challenger": result.challenger, "seconds": seconds,
                          "top_before": result.top_before, "top_after_independent_refit": top,
                          "confirmed_by_independent_refit": sorted(top) != sorted(result.top_before),
                          "sentence": result.sentence()}
    return out


def task_hierarchical(seed: int = 0, draws: int = 500):
    import bayesrank as br
    from bayesrank.data.simulate import battles

    rng = np.random.default_rng(seed)
    m, tau = 8, 0.35
    mu = np.linspace(-1.2, 1.2, m)
    sizes = {"c0": 3000, "c1": 3000, "c2": 120, "c3": 120, "c4": 120, "c5": 120}
    truth = {c: mu + tau * rng.standard_normal(m) for c in sizes}
    truth = {c: s - s.mean() for c, s in truth.items()}
    import pandas as pd

    frames = [battles(truth[c], n, rng, categories=[c]) for c, n in sizes.items()]
    df = pd.concat(frames, ignore_index=True)
    kw = dict(method="nuts", draws=draws, tune=draws, chains=2, random_seed=seed)
    t0 = time.perf_counter()
    pooled = br.fit(br.ByCategory(), br.load(df, by="category"), **kw)
    hier_seconds = time.perf_counter() - t0
    boards = pooled.categories()
    out = {"task": "hierarchical", "sizes": sizes, "tau": tau, "hierarchical_seconds": hier_seconds,
           "hierarchical_converged": pooled.converged, "spread": float(pooled.tree["estimate"]["spread"].values),
           "per_category": {}}
    for c in sizes:
        want = pd.Series(truth[c], index=[f"m{k:02d}" for k in range(m)])
        hier = boards[boards["category"] == c].set_index("name")["score"]
        sub = br.load(df[df["category"] == c])
        sep_nuts = br.fit(br.BradleyTerry(), sub, **kw).scores()
        sep_map = br.fit(br.BradleyTerry(), sub)
        row = {"n": sizes[c], "rmse_hierarchical": rmse(hier, want), "rmse_separate_nuts": rmse(sep_nuts, want)}
        if sep_map.diagnostics.get("mle_exists", True):
            row["rmse_separate_map"] = rmse(sep_map.scores(), want)
        out["per_category"][c] = row
    small = [c for c, n in sizes.items() if n < 1000]
    out["small_mean_rmse"] = {k: float(np.mean([out["per_category"][c][k] for c in small]))
                              for k in ("rmse_hierarchical", "rmse_separate_nuts")}
    return out


def rmse(got, want) -> float:
    got = got.reindex(want.index)
    return float(np.sqrt(np.mean((got - got.mean() - want) ** 2)))


# ====================================================================== protocol
TASKS = {"sandwich": task_sandwich, "bootstrap": task_bootstrap, "style": task_style,
         "rank-coverage": task_rank_coverage, "fragility": task_fragility, "hierarchical": task_hierarchical}

#: ``--quick``: the sandwich against arena-rank and the fragility check (a minute or two each).
SUITE = [
    {"task": "sandwich", "timeout": 1800, "quick": True},
    {"task": "bootstrap", "args": {"n_boot": 1000, "arena_boot": 100}, "timeout": 7200},
    {"task": "style", "args": {"replicates": 40}, "timeout": 3600},
    {"task": "rank-coverage", "args": {"replicates": 200}, "timeout": 7200},
    {"task": "fragility", "timeout": 1800, "quick": True},
    {"task": "hierarchical", "args": {"seed": 0, "draws": 500}, "timeout": 7200},
]


def report(results: dict) -> list[str]:
    """The table, from each task's newest output (this run's, else the committed one)."""
    stored = saved()
    latest = {}
    for task in TASKS:
        runs = newest(results, task, saved=stored.get(task))
        if runs:
            latest[task] = runs[-1]
        elif "error" in stored.get(task, {}):
            latest[task] = stored[task]
    return table(latest).splitlines()


def table(r: dict) -> str:
    lines = ["## Arena-style leaderboards (issue 12): bench/tasks_arena.py", "",
             "| what | measured | target |", "|---|---|---|"]
    s = r.get("sandwich", {})
    if "ratio_no_ridge_max" in s:
        lines += [
            f"| sandwich width / arena-rank's, arena-2024 BT (arena-rank defaults) | median {s['ratio_default_median']:.4f}, "
            f"range {s['ratio_default_min']:.4f}–{s['ratio_default_max']:.4f}, {100 * s['share_within_1pct_default']:.0f}% "
            f"of models within 1% | within 1% |",
            f"| … against arena-rank's own H and M at its ratings, without its ridge 1e-5·N on H | "
            f"range {s['ratio_no_ridge_min']:.5f}–{s['ratio_no_ridge_max']:.5f} | within 1% |",
            f"| sandwich / Wald width (median) | {s['sandwich_over_wald_median']:.3f} | (issue: 0.85–0.92) |",
            f"| score difference to arena-rank | {s['max_score_difference_elo']:.3f} Elo | |",
            f"| time in a fresh process: ours (compile + fit + sandwich) / arena-rank (fit + sandwich) | {s['ours_seconds']:.2f} s / "
            f"{s['arena_rank_seconds']:.2f} s | |"]
    b = r.get("bootstrap", {})
    if "ours_seconds" in b:
        theirs = (f"{b['arena_rank_seconds']:.0f} s ({b['arena_rank_n_boot']} resamples, {b['arena_rank_jobs']} "
                  "spawned workers)") if "arena_rank_seconds" in b else "not run"
        lines += [f"| bootstrap, {b['n_boot']} resamples of arena-2024, ours (warm) | {b['ours_seconds']:.1f} s "
                  f"({b['newton_iterations_per_refit']:.1f} Newton steps per refit, {b['n_failed']} failed) | "
                  f"< {TARGET_BOOTSTRAP_SECONDS:.0f} s |",
                  f"| bootstrap, arena-rank | {theirs} | |",
                  f"| bootstrap se / sandwich se (median) | {b['se_bootstrap_over_sandwich_median']:.3f} | ≈ 1 |"]
    st = r.get("style", {})
    for name in ("bt", "davidson"):
        if name in st:
            cov = ", ".join(f"{c:.2f}" for c in st[name]["coverage"])
            mean = ", ".join(f"{c:.3f}" for c in st[name]["mean_estimate"])
            lines.append(f"| style β = {st['beta']} recovered, {name}: 95% coverage over {st['replicates']} "
                         f"replicates | {cov} (mean β̂ {mean}) | ≈ 0.95 |")
    rc = r.get("rank-coverage", {})
    for method in ("wald", "bootstrap"):
        if method in rc:
            x = rc[method]
            lines.append(f"| simultaneous 95% rank sets, {method}, {rc['items']} items, {rc['replicates']} replicates | "
                         f"all ranks covered {x['coverage_all_ranks']:.3f}, top-1 set {x['coverage_top1_set']:.3f}, "
                         f"mean set size {x['mean_set_size']:.2f} | ≥ {TARGET_COVERAGE} |")
    fr = r.get("fragility", {})
    for k in ("top1", "top3"):
        if k in fr:
            x = fr[k]
            lines.append(f"| fragility {k}, arena-2024 BT | {x['n_votes']} votes (first order {x['n_votes_estimated']}): "
                         f"{x['challenger']} over {x['holder']}; independent refit confirms: "
                         f"{x['confirmed_by_independent_refit']} | confirmed |")
    h = r.get("hierarchical", {})
    if "per_category" in h:
        for c, x in h["per_category"].items():
            sep_map = f", separate MAP {x['rmse_separate_map']:.3f}" if "rmse_separate_map" in x else ", no MLE"
            lines.append(f"| per-category RMSE, {c} (n = {x['n']}) | hierarchical {x['rmse_hierarchical']:.3f}, "
                         f"separate NUTS {x['rmse_separate_nuts']:.3f}{sep_map} | hierarchical lower (small) |")
        sm = h["small_mean_rmse"]
        lines.append(f"| mean RMSE, small categories | hierarchical {sm['rmse_hierarchical']:.3f}, separate NUTS "
                     f"{sm['rmse_separate_nuts']:.3f} | hierarchical lower |")
    errors = [f"| {task}: error | {x['error'][-300:]!r} | |" for task, x in r.items() if "error" in x]
    return "\n".join(lines + errors) + "\n"


if __name__ == "__main__":
    task_main(TASKS, save=save, report=report, report_file=RESULTS / "arena.md")
