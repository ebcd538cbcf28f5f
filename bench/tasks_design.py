"""Benchmarks of which battles next (issue 40), each in its own process.

Run by ``bench/run.py`` (protocol: ``bench/common.py``; ``--only tasks_design``, ``--quick``: the
speed task). ``python bench/tasks_design.py TASK '{"arg": ...}'`` runs one task and prints one
line ``BENCH_JSON {...}``; the output of this checkout is also kept in
``bench/results/design.json`` (task → output), and ``python bench/tasks_design.py report`` writes
``bench/results/design.md`` from those and the latest ``bench/results.json``.

Tasks
-----
simulation
    Simulated arenas with the truth known (:mod:`bayesrank.design.rounds`): ``models`` models
    with true scores drawn per seed from N(0, ``spread``²), Bradley–Terry (fitted by
    ``BradleyTerry(ties="drop")``) and Davidson with ties (tie parameter ``eta``, fitted by
    ``Davidson()``); every pair voted ``warmup`` times first (repeated until the fit has ranks),
    then rounds of ``budget`` votes —
    fit, choose, vote, refit — under ``next_pairs`` (goal ``top-k``), uniform sampling and the
    Chatbot Arena paper's active sampling. Per seed: the votes after which the true top k is first
    certified (every true top-k model's 95% rank interval inside 1..k and no other model's;
    censored at ``max_votes``), whether any round certified a model wrongly, and the mean
    rank-interval width after ``width_rounds`` rounds (``next_pairs`` with goal ``ranks`` there).
    Seeds can be run in several processes, one after another: a run whose ``first_seed`` is where
    the saved output of the same setup ends is appended to it
    (``python bench/tasks_design.py simulation '{"seeds": 1, "first_seed": 7}'``).
speed
    One round on ``arena-2024`` (129 models): ``next_pairs`` with a budget of 1,000 votes, warm
    (the first call, which compiles the candidates' kernels, apart), for Bradley–Terry (ties as
    halves) and Davidson k_tie = 1, goals ``ranks``, ``top-k`` (k = 10) and ``all-pairs``; and
    ``provisional_rows`` of each fit. The fit itself is timed beside it for scale.
"""

from __future__ import annotations

import json
import statistics
import time

import numpy as np

from common import RESULTS, newest, task_main

#: The issue's target for one round on arena-2024, warm.
TARGET_ROUND_SECONDS = 2.0
#: Policies compared in the simulation: (name in the report, policy, goal).
POLICIES = (("next_pairs", "next-pairs", "top-k"), ("uniform", "uniform", None), ("arena", "arena", None))


def saved() -> dict:
    """The committed outputs, task → output."""
    path = RESULTS / "design.json"
    return json.loads(path.read_text()) if path.exists() else {}


def save(task: str, out: dict) -> None:
    """Keep ``out`` as ``task``'s output; a simulation whose seeds continue the saved one's (same
    setup, ``first_seed`` where the saved seeds end) is appended to it, so that the seeds can be
    run in several processes."""
    before = saved()
    if task == "simulation" and _continues(before.get(task), out):
        out = _append(before[task], out)
    (RESULTS / "design.json").write_text(json.dumps({**before, task: out}, indent=1) + "\n")


def _continues(old: dict | None, new: dict) -> bool:
    if not old or "error" in old or "error" in new:
        return False
    rest = lambda setup: {key: v for key, v in setup.items() if key not in ("seeds", "first_seed")}
    a, b = old["setup"], new["setup"]
    return (rest(a) == rest(b) and a["first_seed"] + a["seeds"] == b["first_seed"]
            and set(old["frameworks"]) == set(new["frameworks"]))


def _append(old: dict, new: dict) -> dict:
    """``old`` and ``new``'s seeds as one output."""
    frameworks = {name: {label: {key: values + new["frameworks"][name][label][key] for key, values in cols.items()}
                         for label, cols in per.items()} for name, per in old["frameworks"].items()}
    setup = {**old["setup"], "seeds": old["setup"]["seeds"] + new["setup"]["seeds"]}
    return {**new, "setup": setup, "frameworks": frameworks, "seconds": old["seconds"] + new["seconds"],
            "args": {**new["args"], "seeds": setup["seeds"], "first_seed": setup["first_seed"]}}


# ====================================================================== tasks
def task_simulation(seeds: int = 20, first_seed: int = 0, models: int = 10, spread: float = 1.0, k: int = 3,
                    warmup: int = 2, budget: int = 100, max_votes: int = 3000, width_rounds: int = 5,
                    eta: float = -0.5, frameworks=("bt", "davidson")) -> dict:
    import bayesrank as br
    from bayesrank.design.rounds import simulate_rounds

    specs = {"bt": (br.BradleyTerry(ties="drop"), None), "davidson": (br.Davidson(), eta)}
    out = {"setup": {"seeds": seeds, "first_seed": first_seed, "models": models, "spread": spread, "k": k,
                     "warmup": warmup, "budget": budget, "max_votes": max_votes, "width_rounds": width_rounds,
                     "eta": eta}, "frameworks": {}}
    t0 = time.perf_counter()
    for name in frameworks:
        framework, truth_eta = specs[name]
        per = {label: {"votes": [], "certified": [], "wrong": [], "width": []} for label, _, _ in POLICIES}
        per["next_pairs_ranks"] = {"width": [], "wrong": []}
        for seed in range(first_seed, first_seed + seeds):
            scores = np.random.default_rng([seed, 40]).normal(0.0, spread, models)
            scores -= scores.mean()
            common = dict(eta=truth_eta, k=k, warmup=warmup, budget=budget, max_votes=max_votes, random_seed=seed)
            for label, policy, goal in POLICIES:
                rounds = simulate_rounds(framework, scores, policy=policy, goal=goal or "top-k",
                                         min_rounds=0 if policy == "next-pairs" else width_rounds, **common)
                hit = rounds.loc[rounds["certified"], "votes"]
                per[label]["certified"].append(bool(len(hit)))
                per[label]["votes"].append(int(hit.iloc[0]) if len(hit) else None)
                per[label]["wrong"].append(bool(rounds["wrong"].any()))
                at = rounds.loc[rounds["round"] == width_rounds, "mean_width"]
                per[label]["width"].append(float(at.iloc[0]) if len(at) else None)
            ranks = simulate_rounds(framework, scores, policy="next-pairs", goal="ranks", rounds=width_rounds, **common)
            per["next_pairs_ranks"]["width"].append(float(ranks["mean_width"].iloc[-1]))
            per["next_pairs_ranks"]["wrong"].append(bool(ranks["wrong"].any()))
        out["frameworks"][name] = per
    out["seconds"] = time.perf_counter() - t0
    return out


def task_speed(budget: int = 1000, repeats: int = 5) -> dict:
    import warnings

    import bayesrank as br
    from bayesrank.design.settle import provisional_rows

    warnings.simplefilter("ignore")
    data = br.load("arena-2024")
    out = {"budget": budget, "repeats": repeats, "models": {}}
    for name, framework in (("bt", br.BradleyTerry()), ("davidson_k1", br.Davidson(k_tie=1))):
        br.fit(framework, data)
        t0 = time.perf_counter()
        fit = br.fit(framework, data)
        fit_seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        br.next_pairs(fit, budget, "ranks")
        first = time.perf_counter() - t0
        goals = {}
        for goal, kw in (("ranks", {}), ("top-k", {"k": 10}), ("all-pairs", {})):
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                plan = br.next_pairs(fit, budget, goal, **kw)
                times.append(time.perf_counter() - t0)
            goals[goal] = {"median": statistics.median(times), "max": max(times), "pairs": len(plan.pairs),
                           "reduction_share": plan.expected["reduction"] / plan.expected["before"]}
        t0 = time.perf_counter()
        rows = provisional_rows(fit)
        out["models"][name] = {"warm_fit_seconds": fit_seconds, "first_call_seconds": first, "goals": goals,
                               "provisional_rows": len(rows), "provisional_seconds": time.perf_counter() - t0,
                               "candidates": 129 * 128 // 2}
    return out


TASKS = {"simulation": task_simulation, "speed": task_speed}

#: ``--quick``: the speed task (a minute or two).
SUITE = [
    {"task": "speed", "timeout": 1800, "quick": True},
    {"task": "simulation", "args": {"seeds": 20}, "timeout": 14400},
]


# ====================================================================== report
def report(results: dict) -> list[str]:
    """The tables, from each task's newest output (this run's, else the committed one)."""
    stored = saved()
    runs = {task: newest(results, task, saved=stored.get(task)) for task in TASKS}
    return table({task: found[-1] for task, found in runs.items() if found}).splitlines()


def _median(values):
    """Median of the certification votes, a censored one counted as the cap (so the median is a
    lower bound when more than half are censored)."""
    return statistics.median(values)


def table(r: dict) -> str:
    lines = ["## Which battles next (issue 40): bench/tasks_design.py", ""]
    sp = r.get("speed", {})
    if "models" in sp:
        lines += [f"### One round on arena-2024 (129 models, {129 * 128 // 2:,} pairs), budget {sp['budget']:,} votes",
                  "", "Warm `next_pairs` (median of repeats; the first call of a process compiles the candidates' "
                  "kernels); target ≤ 2 s.", "",
                  "| model | goal | seconds (median / max) | pairs chosen | expected reduction of the goal's "
                  "uncertainty | target |", "|---|---|---|---|---|---|"]
        for name, m in sp["models"].items():
            for goal, g in m["goals"].items():
                ok = "met" if g["median"] <= TARGET_ROUND_SECONDS else "**missed**"
                lines.append(f"| {name} | {goal} | {g['median']:.2f} / {g['max']:.2f} | {g['pairs']} | "
                             f"{100 * g['reduction_share']:.1f}% | {ok} |")
        lines += ["", "| model | warm fit | first next_pairs call | provisional_rows (rows) |", "|---|---|---|---|"]
        for name, m in sp["models"].items():
            lines.append(f"| {name} | {m['warm_fit_seconds']:.2f} s | {m['first_call_seconds']:.2f} s | "
                         f"{m['provisional_seconds']:.1f} s ({m['provisional_rows']}) |")
        lines.append("")
    sim = r.get("simulation", {})
    if "frameworks" in sim:
        s = sim["setup"]
        lines += [f"### Simulated arenas: votes to certify the true top {s['k']}", "",
                  f"{s['models']} models, true scores N(0, {s['spread']}²) drawn per seed, {s['seeds']} seeds; every pair "
                  f"voted {s['warmup']} times first (again until the MLE exists; the same votes for every policy), "
                  f"then rounds of {s['budget']} votes (fit → choose → vote → refit, "
                  f"MAP, 95% rank intervals). Certified: every true top-{s['k']} model's rank interval inside "
                  f"1..{s['k']} and no other model's. Votes counted after the warm-up, censored at "
                  f"{s['max_votes']:,} (a censored run counts as {s['max_votes']:,} in the median and in the savings, "
                  "which a censored uniform or arena run therefore understates). Davidson truth: "
                  f"tie parameter η = {s['eta']} (about {100 * np.exp(s['eta']) / (2 + np.exp(s['eta'])):.0f}% ties "
                  "between equal models). `arena`: the Chatbot Arena paper's active sampling rule.", "",
                  "| truth / fit | policy | median votes to certify | mean | certified | runs with a wrong "
                  "certification | votes saved against uniform / arena (median of per-seed ratios) |",
                  "|---|---|---|---|---|---|---|"]
        for name, per in sim["frameworks"].items():
            capped = {label: [v if v is not None else s["max_votes"] for v in per[label]["votes"]]
                      for label, _, _ in POLICIES}
            for label, _, _ in POLICIES:
                votes = capped[label]
                saved_line = ""
                if label == "next_pairs":
                    ratios = [[a / b for a, b in zip(votes, capped[other]) if b > 0] for other in ("uniform", "arena")]
                    saved_line = " / ".join(f"{100 * (1 - statistics.median(x)):.0f}%" for x in ratios)
                lines.append(f"| {name} | {label} | {_median(votes):,.0f} | {statistics.mean(votes):,.0f} | "
                             f"{sum(per[label]['certified'])}/{len(votes)} | {sum(per[label]['wrong'])} | "
                             f"{saved_line} |")
        lines += ["", f"### Mean rank-interval width after {s['width_rounds']} rounds "
                      f"({s['width_rounds'] * s['budget']:,} votes after the warm-up)", "",
                  "| truth / fit | next_pairs (goal ranks) | next_pairs (goal top-k) | uniform | arena |",
                  "|---|---|---|---|---|"]
        for name, per in sim["frameworks"].items():
            def mean_width(xs):
                xs = [x for x in xs if x is not None]
                return f"{statistics.mean(xs):.2f} (n = {len(xs)})" if xs else "n/a"
            lines.append(f"| {name} | {mean_width(per['next_pairs_ranks']['width'])} | "
                         f"{mean_width(per['next_pairs']['width'])} | {mean_width(per['uniform']['width'])} | "
                         f"{mean_width(per['arena']['width'])} |")
        lines += ["", "next_pairs with goal top-k stops at its first certification, so its width after "
                      f"{s['width_rounds']} rounds exists only for the seeds it took that long; the other columns "
                      "cover every seed.", f"Simulation time: {sim['seconds'] / 60:.0f} min.", ""]
    errors = [f"| {task}: error | {x['error'][-300:]!r} |" for task, x in r.items() if "error" in x]
    return "\n".join(lines + errors) + "\n"


if __name__ == "__main__":
    task_main(TASKS, save=save, report=report, report_file=RESULTS / "design.md")
