"""Benchmarks of ratings over time (issue 39), each in its own process.

Run by ``bench/run.py`` (protocol: ``bench/common.py``; ``--only tasks_time``). ``python
bench/tasks_time.py TASK '{"arg": ...}'`` runs one task and prints one line ``BENCH_JSON {...}``;
either way the output of this checkout is also kept in ``bench/results/time.json`` (task → output),
and ``python bench/tasks_time.py report`` writes ``bench/results/time.md`` from those and the latest
``bench/results.json``.

Every arena here is simulated by :func:`bayesrank.data.simulate.arena_over_time`, which returns the truth:
the true scores of every item in every period and the planted changes.

Tasks
-----
detection
    Replicated arenas with planted changes (random sizes in ±[0.4, 0.8], items entering late): the
    MAP path's change points (probability ≥ 0.5) against the truth — detection rate at the exact
    period and within one period, false alarms per jump without a change and per arena —, the mean
    probability given to true and to null jumps, and the coverage of the trajectories' 95% intervals
    (scores and truth both centred over the items present in each period).
predictive
    One-step-ahead log loss: for each period t from ``start`` on, every method is fitted to the
    battles of periods ≤ t and predicts the battles of period t + 1 between items it has seen; the
    mean log loss per battle over all those predictions. Methods: this fit over time (MAP path), a
    static Bradley–Terry fit refitted every period, TrueSkill Through Time (``trueskillthroughtime``)
    and kickscore (``kickscore``, Constant + Wiener kernel, logit), each peer at a few drift values
    (every one reported; none tuned on the test periods).
speed
    200 items × 52 weekly periods, 2 million battles (Bradley–Terry): the MAP path's first and warm fit
    (wall and CPU seconds), its EP iterations and the half-bandwidth of its Hessian.
nuts
    A small arena under NUTS (nutpie, 4 chains): wall seconds, r̂ and ESS, and its change points next
    to the MAP path's.
"""

from __future__ import annotations

import json
import time

import numpy as np

from common import RESULTS, newest, task_main

#: Must-show target of issue 39: the MAP path of 200 items × 52 weeks, 2M battles, warm.
TARGET_SPEED_SECONDS = 30.0


def saved() -> dict:
    """The committed outputs, task → output."""
    path = RESULTS / "time.json"
    return json.loads(path.read_text()) if path.exists() else {}


def save(task: str, out: dict) -> None:
    (RESULTS / "time.json").write_text(json.dumps({**saved(), task: out}, indent=1) + "\n")


def _arena(items, periods, battles, seed, **kw):
    import bayesrank as br
    from bayesrank.data.simulate import arena_over_time

    sim = arena_over_time(items, periods, battles, np.random.default_rng(seed), **kw)
    return sim, br.load(sim.records, time_column="date", period="week")


def _coverage(fit, sim, level=0.95) -> tuple[int, int]:
    """(covered, total): true scores inside the intervals, both centred over the items present."""
    est = fit.tree["estimate"]
    names = [str(x) for x in est["item"].values]
    order = [names.index(f"m{k:02d}") for k in range(len(names))]
    draws = fit.tree["posterior"]["score"].values.reshape(-1, len(names), len(sim.periods))[:, order]
    covered = total = 0
    alpha = (1 - level) / 2
    for t in range(len(sim.periods)):
        present = ~np.isnan(sim.scores[:, t])
        d = draws[:, present, t]
        d = d - d.mean(axis=1, keepdims=True)
        truth = sim.scores[present, t] - sim.scores[present, t].mean()
        lower, upper = np.quantile(d, [alpha, 1 - alpha], axis=0)
        covered += int(np.sum((truth >= lower) & (truth <= upper)))
        total += int(present.sum())
    return covered, total


def detection(replicates: int = 10, items: int = 30, periods: int = 12, battles=(1500,), seed: int = 0,
              spikes=(0.1, 0.02)) -> dict:
    """:func:`_detection` for each number of battles a week and each spike scale (the default 0.1 first)."""
    return {"runs": [_detection(replicates, items, periods, n, seed, spike) | {"spike": spike}
                     for n in battles for spike in spikes],
            "replicates": replicates, "items": items, "periods": periods}


def _detection(replicates, items, periods, battles, seed, spike) -> dict:
    import bayesrank as br

    rows = []
    for r in range(replicates):
        sim, data = _arena(items, periods, battles, seed + r, change_share=0.3, entering=0.2)
        t0 = time.perf_counter()
        fit = br.fit(br.Dynamic(br.BradleyTerry(), spike=spike), data, draws=400, random_seed=r)
        seconds = time.perf_counter() - t0
        truth = {(c.name, c.period) for c in sim.changes.itertuples()}
        every = fit.changes(0.0)
        found = set(zip(*fit.changes()[["name", "period"]].to_numpy().T)) if len(fit.changes()) else set()
        near = {(n, sim.periods[k]) for n, p in truth for k in range(len(sim.periods))
                if abs(k - sim.periods.index(p)) <= 1}
        is_true = np.array([(n, p) in truth for n, p in zip(every["name"], every["period"])])
        covered, total = _coverage(fit, sim)
        rows.append({"true": len(truth), "hits": len(truth & found),
                     "hits_within_1": sum(any((n, sim.periods[k]) in found for k in range(len(sim.periods))
                                              if abs(k - sim.periods.index(p)) <= 1) for n, p in truth),
                     "false_alarms": len(found - truth), "false_alarms_not_near": len(found - near),
                     "null_jumps": int((~is_true).sum()),
                     "q_true": every["probability"].to_numpy()[is_true].tolist(),
                     "q_null_mean": float(every["probability"].to_numpy()[~is_true].mean()),
                     "covered": covered, "total": total, "seconds": seconds,
                     "converged": bool(fit.converged), "slab": fit.diagnostics["slab"],
                     "rate": fit.diagnostics["rate"]})
    true = sum(r["true"] for r in rows)
    nulls = sum(r["null_jumps"] for r in rows)
    return {"replicates": replicates, "items": items, "periods": periods, "battles_per_period": battles,
            "detection_rate": sum(r["hits"] for r in rows) / true,
            "detection_rate_within_1": sum(r["hits_within_1"] for r in rows) / true,
            "false_alarm_rate": sum(r["false_alarms"] for r in rows) / nulls,
            "false_alarms_per_arena": sum(r["false_alarms"] for r in rows) / replicates,
            "false_alarms_not_near_a_change_per_arena": sum(r["false_alarms_not_near"] for r in rows) / replicates,
            "mean_probability_true": float(np.mean([q for r in rows for q in r["q_true"]])),
            "mean_probability_null": float(np.mean([r["q_null_mean"] for r in rows])),
            "coverage_95": sum(r["covered"] for r in rows) / sum(r["total"] for r in rows),
            "true_changes": true, "null_jumps": nulls, "converged": all(r["converged"] for r in rows),
            "median_seconds": float(np.median([r["seconds"] for r in rows])), "replicate": rows}


def _log_loss(p_win_a: np.ndarray, wins_a: np.ndarray, wins_b: np.ndarray) -> float:
    """Total −log probability of the outcomes (binary battles)."""
    p = np.clip(p_win_a, 1e-12, 1 - 1e-12)
    return float(-(wins_a * np.log(p) + wins_b * np.log1p(-p)).sum())


def predictive(items: int = 10, periods: int = 8, battles: int = 200, start: int = 4, seed: int = 7,
               ttt_gammas=(0.01, 0.05, 0.2), wiener_vars=(0.001, 0.01, 0.05)) -> dict:
    import bayesrank as br
    import kickscore as ks
    import trueskillthroughtime as ttt
    from scipy.special import expit
    from scipy.stats import norm

    sim, _ = _arena(items, periods, battles, seed, change_share=0.3, entering=0.2)
    # a battle's period: the last period starting on or before its date
    starts = np.array(sim.periods, dtype="datetime64[D]")
    rec = sim.records.assign(period=np.searchsorted(
        starts, sim.records["date"].str[:10].to_numpy().astype("datetime64[D]"), side="right") - 1)
    win_a = (rec["winner"] == "model_a").to_numpy()
    totals = {name: 0.0 for name in ["dynamic", "static"] + [f"ttt gamma={g}" for g in ttt_gammas]
              + [f"kickscore wiener={v}" for v in wiener_vars]}
    seconds = {name: 0.0 for name in totals}
    n_test = 0
    for t in range(start, periods - 1):
        train, test = rec[rec["period"] <= t], rec[rec["period"] == t + 1]
        seen = set(train["model_a"]) | set(train["model_b"])
        test = test[test["model_a"].isin(seen) & test["model_b"].isin(seen)]
        pairs = test.assign(w=win_a[test.index]).groupby(["model_a", "model_b"])["w"].agg(["sum", "count"]).reset_index()
        wins_a, wins_b = pairs["sum"].to_numpy(float), (pairs["count"] - pairs["sum"]).to_numpy(float)
        n_test += int(pairs["count"].sum())
        data = br.load(train[["model_a", "model_b", "winner", "date"]], time_column="date")
        t0 = time.perf_counter()
        fit = br.fit(br.Dynamic(br.BradleyTerry()), data, draws=400)
        p = fit.predict_next(pairs["model_a"].to_numpy(), pairs["model_b"].to_numpy())["p_win_a"].to_numpy()
        seconds["dynamic"] += time.perf_counter() - t0
        totals["dynamic"] += _log_loss(p, wins_a, wins_b)
        t0 = time.perf_counter()
        static = br.fit(br.BradleyTerry(), br.load(train[["model_a", "model_b", "winner"]]), intervals="none")
        s = static.scores()
        p = expit(s[pairs["model_a"]].to_numpy() - s[pairs["model_b"]].to_numpy())
        seconds["static"] += time.perf_counter() - t0
        totals["static"] += _log_loss(p, wins_a, wins_b)
        games = [[[a], [b]] for a, b in zip(train["model_a"], train["model_b"])]
        results = [[1, 0] if w else [0, 1] for w in win_a[train.index]]
        for gamma in ttt_gammas:
            t0 = time.perf_counter()
            history = ttt.History(games, results=results, times=train["period"].tolist(), mu=0.0, sigma=2.0,
                                  beta=1.0, gamma=gamma)
            history.convergence(iterations=30, verbose=False)
            last = {name: curve[-1][1] for name, curve in history.learning_curves().items()}
            mu = {n: g.mu for n, g in last.items()}
            var = {n: g.sigma**2 + gamma**2 for n, g in last.items()}   # one more period of drift
            d = np.array([mu[a] - mu[b] for a, b in zip(pairs["model_a"], pairs["model_b"])])
            v = np.array([var[a] + var[b] + 2.0 for a, b in zip(pairs["model_a"], pairs["model_b"])])
            p = norm.cdf(d / np.sqrt(v))
            seconds[f"ttt gamma={gamma}"] += time.perf_counter() - t0
            totals[f"ttt gamma={gamma}"] += _log_loss(p, wins_a, wins_b)
        for wiener in wiener_vars:
            t0 = time.perf_counter()
            model = ks.BinaryModel(obs_type="logit")
            for name in sorted(seen):
                model.add_item(name, kernel=ks.kernel.Constant(var=1.0) + ks.kernel.Wiener(var=wiener, t0=-1.0))
            for a, b, w, k in zip(train["model_a"], train["model_b"], win_a[train.index], train["period"]):
                model.observe(winners=[a if w else b], losers=[b if w else a], t=float(k))
            model.fit()
            p = np.array([model.probabilities([a], [b], t=float(t + 1))[0]
                          for a, b in zip(pairs["model_a"], pairs["model_b"])])
            seconds[f"kickscore wiener={wiener}"] += time.perf_counter() - t0
            totals[f"kickscore wiener={wiener}"] += _log_loss(p, wins_a, wins_b)
    return {"items": items, "periods": periods, "battles_per_period": battles, "start": start,
            "test_battles": n_test, "log_loss": {k: v / n_test for k, v in totals.items()}, "seconds": seconds,
            "planted_changes": len(sim.changes)}


def speed(items: int = 200, periods: int = 52, battles: int = 2_000_000, seed: int = 1) -> dict:
    import bayesrank as br

    t0 = time.perf_counter()
    sim, data = _arena(items, periods, battles // periods, seed, entering=0.0)
    prepare = time.perf_counter() - t0
    out = {"items": items, "periods": periods, "battles": int(data.n_comparisons), "cells": data.n_cells,
           "simulate_and_read_seconds": prepare}
    for run in ("first", "warm"):
        wall, cpu = time.perf_counter(), time.process_time()
        fit = br.fit(br.Dynamic(br.BradleyTerry()), data, random_seed=0)
        out[run] = {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                    "iterations": fit.diagnostics["iterations"], "converged": bool(fit.converged),
                    "half_bandwidth": fit.diagnostics["half_bandwidth"], "n_jumps": fit.diagnostics["n_jumps"]}
    truth = {(c.name, c.period) for c in sim.changes.itertuples()}
    found = set(zip(fit.changes()["name"], fit.changes()["period"]))
    out.update(true_changes=len(truth), hits=len(truth & found), false_alarms=len(found - truth))
    return out


def nuts(items: int = 12, periods: int = 8, battles: int = 1000, seed: int = 3, draws: int = 1000,
         chains: int = 4) -> dict:
    import bayesrank as br

    sim, data = _arena(items, periods, battles, seed, change_share=0.3, entering=0.0)
    t0 = time.perf_counter()
    post = br.fit(br.Dynamic(br.BradleyTerry()), data, method="nuts", draws=draws, tune=draws, chains=chains,
                  random_seed=1, sampler="nutpie", whiten=False, geometry_tuned=False, progressbar=False)
    wall = time.perf_counter() - t0
    t0 = time.perf_counter()
    fast = br.fit(br.Dynamic(br.BradleyTerry()), data)
    fast_wall = time.perf_counter() - t0
    a, b = post.trajectories(), fast.trajectories()
    truth = {(c.name, c.period) for c in sim.changes.itertuples()}
    return {"items": items, "periods": periods, "battles_per_period": battles, "draws": draws, "chains": chains,
            "wall": wall, "max_rhat": post.diagnostics.get("max_rhat"),
            "min_ess_bulk": post.diagnostics.get("min_ess_bulk"), "divergences": post.diagnostics.get("divergences"),
            "map_wall": fast_wall, "true_changes": sorted(truth),
            "nuts_changes": post.changes()[["name", "period", "probability"]].to_dict("records"),
            "map_changes": fast.changes()[["name", "period", "probability"]].to_dict("records"),
            "max_score_difference": float(np.abs(a["score"] - b["score"]).max()),
            "mean_interval_width": {"nuts": float((a["upper"] - a["lower"]).mean()),
                                    "map": float((b["upper"] - b["lower"]).mean())}}


TASKS = {"detection": detection, "predictive": predictive, "speed": speed, "nuts": nuts}

SUITE = [
    {"task": "detection", "args": {}, "repeats": 1, "variants": ["current"], "timeout": 7200, "quick": False},
    {"task": "predictive", "args": {}, "repeats": 1, "variants": ["current"], "timeout": 7200, "quick": False},
    {"task": "speed", "args": {}, "repeats": 1, "variants": ["current"], "timeout": 7200, "quick": False},
    {"task": "nuts", "args": {}, "repeats": 1, "variants": ["current"], "timeout": 7200, "quick": False},
]


def report(results: dict) -> list[str]:
    """The Markdown section: one table per task, from the newest outputs."""
    stored = saved()
    r = {task: (newest(results, task, saved=stored.get(task)) or [{}])[-1] for task in TASKS}
    lines = ["## Ratings over time (issue 39)", "",
             "Simulated arenas with planted changes (`bayesrank.data.simulate.arena_over_time`); each row's load "
             "average when it finished is in `time.json`.", ""]
    for d in r["detection"].get("runs", []):
        lines += [f"### Change points and coverage: spike {d['spike']}, {d['replicates']} arenas of {d['items']} "
                  f"items × {d['periods']} weeks, {d['battles_per_period']} battles a week", "",
                  "| measure | value |", "|---|---|",
                  f"| detection rate (probability ≥ 0.5, exact period) | {d['detection_rate']:.3f} "
                  f"({d['true_changes']} planted changes) |",
                  f"| detection rate within one period | {d['detection_rate_within_1']:.3f} |",
                  f"| false-alarm rate per jump without a change | {d['false_alarm_rate']:.4f} "
                  f"({d['null_jumps']} such jumps) |",
                  f"| false alarms per arena (not within a period of a change) | {d['false_alarms_per_arena']:.2f} "
                  f"({d['false_alarms_not_near_a_change_per_arena']:.2f}) |",
                  f"| mean P(change), planted / null jumps | {d['mean_probability_true']:.3f} / "
                  f"{d['mean_probability_null']:.4f} |",
                  f"| coverage of the trajectories' 95% intervals | {d['coverage_95']:.3f} |",
                  f"| every fit converged; median seconds per fit | {d['converged']}; {d['median_seconds']:.1f} |", ""]
    p = r["predictive"]
    if "log_loss" in p:
        best = min(p["log_loss"].values())
        lines += [f"### One-step-ahead log loss: {p['items']} items × {p['periods']} weeks, {p['battles_per_period']} "
                  f"battles a week, refitted every week from week {p['start'] + 1}; {p['test_battles']} predicted "
                  "battles", "", "| method | mean log loss per battle | ratio to the best | seconds (all refits) |",
                  "|---|---|---|---|"]
        for name, value in sorted(p["log_loss"].items(), key=lambda kv: kv[1]):
            lines.append(f"| {name} | {value:.4f} | {value / best:.4f} | {p['seconds'][name]:.1f} |")
        lines.append("")
    s = r["speed"]
    if "warm" in s:
        lines += [f"### Speed: {s['items']} items × {s['periods']} weeks, {s['battles']:,} battles ({s['cells']:,} "
                  "cells)", "", "| fit | wall s | CPU s | EP iterations | converged |", "|---|---|---|---|---|"]
        for run in ("first", "warm"):
            x = s[run]
            lines.append(f"| {run} | {x['wall']:.1f} | {x['cpu']:.1f} | {x['iterations']} | {x['converged']} |")
        lines += ["", f"Target: warm ≤ {TARGET_SPEED_SECONDS:.0f} s. Half-bandwidth of the Hessian "
                  f"{s['warm']['half_bandwidth']}, {s['warm']['n_jumps']} jumps; {s['hits']} of {s['true_changes']} "
                  f"planted changes found, {s['false_alarms']} false alarms. One-thread BLAS; the machine's "
                  f"load average when the task finished was {s.get('load_average', [float('nan')])[0]:.1f} on "
                  "its cores, so wall time over CPU time is the share of the machine the fit got.", ""]
    n = r["nuts"]
    if "wall" in n:
        lines += [f"### NUTS: {n['items']} items × {n['periods']} weeks, {n['chains']} chains × {n['draws']} draws "
                  "(nutpie, compilation included)", "", "| measure | value |", "|---|---|",
                  f"| wall seconds (MAP path on the same data) | {n['wall']:.1f} ({n['map_wall']:.1f}) |",
                  f"| max r̂, min bulk ESS, divergences | {n['max_rhat']:.3f}, {n['min_ess_bulk']:.0f}, "
                  f"{n['divergences']} |",
                  f"| largest difference of the trajectories' points, NUTS − MAP | {n['max_score_difference']:.3f} |",
                  f"| mean 95% interval width, NUTS / MAP | {n['mean_interval_width']['nuts']:.3f} / "
                  f"{n['mean_interval_width']['map']:.3f} |",
                  f"| planted changes | {n['true_changes']} |",
                  f"| NUTS changes | {[(c['name'], c['period'], round(c['probability'], 3)) for c in n['nuts_changes']]} |",
                  f"| MAP changes | {[(c['name'], c['period'], round(c['probability'], 3)) for c in n['map_changes']]} |",
                  ""]
    errors = [f"| {task}: error | {x['error'][-300:]!r} |" for task, x in r.items() if "error" in x]
    return lines + errors


if __name__ == "__main__":
    task_main(TASKS, save=save, report=lambda results: report(results), report_file=RESULTS / "time.md")
