"""Benchmark tasks of updates (issue 44): ``Fit.update`` against a batch refit of every record.

Run by ``bench/run.py`` (protocol: ``bench/common.py``; ``--only tasks_updates``). ``python
bench/tasks_updates.py TASK '{"repeats": 3}'`` runs one task and prints one line ``BENCH_JSON
{...}``; the output of this checkout is also kept in ``bench/results/updates.json`` and ``python
bench/tasks_updates.py report`` writes ``bench/results/updates.md`` from it.

Inputs (generated into ``bench/.cache/updates/``, untracked)
-----------------------------------------------------------
No raw Chatbot Arena log ships with bayesrank (the bundled arena-2024 data are pair counts), so
the logs are **synthetic**, made from the arena-2024 counts as ``tasks_data.py`` makes its log:

* **the old log**: 1,670,250 battle records — every comparison of arena-2024 counting both-bad
  ties, one record per comparison, each pair's own wins, losses, ties and both-bad ties — in a
  seeded random order, each record's sides swapped with probability ½ (its winner label with
  them), with ids ``b0000000``, ``b0000001``, …;
* **the new records**: 20,000 more, drawn from the same pair × outcome frequencies (ids going on);
* **style** (``bt_style``): two contrasts per record, ``len_diff`` (a's minus b's answer length
  in units of a standard deviation, on a grid of ¼) and ``md_diff`` (a difference of markdown
  counts, −3…3), drawn around +0.25 (length) and +0.2 (markdown) standard deviations towards the
  winner, so that style "explains" part of each outcome as in the arena;
* **judges** (``judge_aware``): each record judged by one of 20 judges (``judge-01`` …
  ``judge-20``, at random): the judge gives the arena outcome (a both-bad tie as a tie ``c``)
  except, with its own probability q_k from 0 to 0.5, a verdict drawn at random from a, b, c —
  judges of different discrimination.

Tasks
-----
``update``  one process, warm: a fit of the old log is saved and the old log removed; then,
            in turn, the update from the saved file (``Fit.load`` + ``Fit.update`` of the new
            records), the update of that fit already in memory (``Fit.update``: a service that keeps
            yesterday's board) and the batch refit (``bayesrank.load`` of every record +
            ``bayesrank.fit``), after one call of each (the first compiles what the merged cells
            need, for all three); medians of the repeats,
            with each step's time, the optimiser's iterations, and the NLL and score differences
            between the two. ``kind``: ``davidson`` (Davidson k_tie=1), ``bt_style`` (Bradley–Terry
            with the two contrasts: style control), ``judge_aware`` (JudgeAware).
``nuts``    the same for NUTS (Davidson k_tie=1, 2 chains × 1000 draws): the batch refit with
            1000 warm-up steps against the update (100 warm-up steps, chains started from the
            saved posterior), and a cold fit with 100 warm-up steps as a control.
``year``    365 daily updates (the starting fit: a random 60% of the old log's battles between
            models there from the start; the rest spread over 365 days, with 12 models entering
            during the year: their battles only from their day on):
            each day ``Fit.update`` of the day's file on yesterday's fit (a service that keeps its
            board), against a batch refit of every record so far (DuckDB reading every day's file +
            ``bayesrank.fit``). Every ``refit_every`` days and on the last, the refit is timed and
            the updated fit is saved and loaded again (the chain goes on from the file: a daily job
            that keeps its board on disk); those times, which grow with the log, are interpolated
            over every day and summed. Totals: updates in memory against refits; updates with the
            file round trip against refits that save their fit. The final update is compared with
            the final refit.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import HERE, RESULTS, newest, task_main

CACHE = HERE / ".cache" / "updates"
N_NEW = 20_000
JUDGES = 20
DAYS = 365
ENTERING = 12
START_SHARE = 0.6


# ---------------------------------------------------------------------- inputs
def _arena():
    import numpy as np

    table = json.loads((HERE.parent / "bayesrank" / "data" / "datasets" / "arena-2024.json").read_text())
    return np.asarray(table["models"], dtype=object), np.asarray(table["X"], np.int64), np.asarray(table["Y"], np.int64)


def _records(kind: str):
    """Every record (old log first, then the new ones) as a DataFrame, with ``day`` for ``year``."""
    import numpy as np
    import pandas as pd

    models, X, Y = _arena()
    rng = np.random.default_rng(44)
    pair = np.repeat(np.arange(len(X)), Y.sum(axis=1))
    outcome = np.concatenate([np.repeat(np.arange(4), y) for y in Y])
    order = rng.permutation(pair.size)
    pair, outcome = pair[order], outcome[order]
    cell = rng.choice(Y.size, size=N_NEW, p=(Y / Y.sum()).ravel())
    pair, outcome = np.concatenate([pair, cell // 4]), np.concatenate([outcome, cell % 4])
    n = pair.size
    swap = rng.random(n) < 0.5
    a, b = np.where(swap, X[pair, 1], X[pair, 0]), np.where(swap, X[pair, 0], X[pair, 1])
    outcome = np.where(swap & (outcome < 2), 1 - outcome, outcome)
    frame = {"id": np.char.add("b", np.char.zfill(np.arange(n).astype(str), 7)), "model_a": models[a],
             "model_b": models[b]}
    if kind == "judge_aware":
        judge = rng.integers(JUDGES, size=n)
        noise = np.linspace(0, 0.5, JUDGES)[judge]
        verdict = np.array(["a", "b", "c", "c"])[outcome]
        verdict = np.where(rng.random(n) < noise, np.array(["a", "b", "c"])[rng.integers(3, size=n)], verdict)
        frame.update(judge_model=np.char.add("judge-", np.char.zfill((judge + 1).astype(str), 2)),
                     judge_preferred_model=verdict)
    else:
        frame["winner"] = np.array(["model_a", "model_b", "tie", "tie (bothbad)"], dtype=object)[outcome]
    if kind == "bt_style":
        sign = np.select([outcome == 0, outcome == 1], [1.0, -1.0], 0.0)
        frame["len_diff"] = np.clip(np.round(4 * rng.normal(0.25 * sign, 1.0)) / 4, -3, 3)
        frame["md_diff"] = np.clip(np.round(rng.normal(0.2 * sign, 1.0)), -3, 3)
    return pd.DataFrame(frame)


def logs(kind: str) -> dict:
    """``old.csv`` (the old log), ``new.csv`` (the new records) and ``all.csv`` (both), made once."""
    where = CACHE / kind
    paths = {name: where / f"{name}.csv" for name in ("old", "new", "all")}
    if all(p.exists() for p in paths.values()):
        return paths
    import duckdb

    frame = _records(kind)
    where.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    n_old = len(frame) - N_NEW
    for name, part in (("old", frame.iloc[:n_old]), ("new", frame.iloc[n_old:]), ("all", frame)):
        con.register("part", part)
        con.execute(f"COPY part TO '{paths[name]}' (HEADER, DELIMITER ',')")
        con.unregister("part")
    return paths


def year_logs() -> tuple[Path, list[Path]]:
    """The starting log and one file per day (see the module docstring), made once."""
    where = CACHE / "year"
    start, days = where / "start.csv", [where / f"day-{d:03d}.csv" for d in range(1, DAYS + 1)]
    if start.exists() and all(p.exists() for p in days):
        return start, days
    import duckdb
    import numpy as np

    frame = _records("davidson").iloc[:-N_NEW].reset_index(drop=True)
    rng = np.random.default_rng(365)
    models = np.array(sorted(set(frame["model_a"]) | set(frame["model_b"])), dtype=object)
    entering = dict(zip(rng.choice(models, ENTERING, replace=False), rng.integers(1, DAYS + 1, ENTERING)))
    entry = np.maximum(frame["model_a"].map(entering).fillna(0).to_numpy(int),
                       frame["model_b"].map(entering).fillna(0).to_numpy(int))
    later = rng.random(len(frame)) >= START_SHARE
    day = np.where(entry > 0, rng.integers(entry, DAYS + 1), np.where(later, rng.integers(1, DAYS + 1, len(frame)), 0))
    where.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    for d, path in [(0, start), *enumerate(days, start=1)]:
        con.register("part", frame[day == d])
        con.execute(f"COPY part TO '{path}' (HEADER, DELIMITER ',')")
        con.unregister("part")
    return start, days


# ---------------------------------------------------------------------- tasks
FRAMEWORKS = {"davidson": ("Davidson", {"k_tie": 1}, {}),
              "bt_style": ("BradleyTerry", {}, {"contrasts": ["len_diff", "md_diff"]}),
              "judge_aware": ("JudgeAware", {}, {})}


def _framework(kind):
    import bayesrank as br

    name, options, read = FRAMEWORKS[kind]
    return getattr(br, name)(**options), read


def _compare(a, b) -> dict:
    import numpy as np

    return {"nll_rel_diff": abs(a.nll - b.nll) / abs(b.nll),
            "max_score_diff": float(np.max(np.abs(a.scores() - b.scores().reindex(a.scores().index)))),
            "max_upper_diff": float(np.max(np.abs(a.leaderboard().set_index("name")["upper"]
                                                  - b.leaderboard().set_index("name")["upper"]))),
            "converged": [a.converged, b.converged]}


def task_update(kind: str = "davidson", repeats: int = 3) -> dict:
    import bayesrank as br

    paths = logs(kind)
    framework, read = _framework(kind)
    work = Path(tempfile.mkdtemp(prefix="bench-updates-"))
    try:
        old_log = work / "old.csv"
        shutil.copy(paths["old"], old_log)
        t0 = time.perf_counter()
        saved = br.fit(framework, br.load(old_log, **read))
        first_fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        saved.save(work / "fit.nc")
        save_seconds = time.perf_counter() - t0
        old_log.unlink()                                  # the old log is no longer on disk
        cells_old = saved.data.n_cells

        in_memory = br.Fit.load(work / "fit.nc")

        def update(fitted=None):
            t = time.perf_counter()
            fitted = br.Fit.load(work / "fit.nc") if fitted is None else fitted
            loaded = time.perf_counter() - t
            out = fitted.update(paths["new"])
            return out, {"load_fit": loaded, **out.diagnostics["update"]["seconds"],
                         "iterations": out.diagnostics["iterations"]}

        def refit():
            t = time.perf_counter()
            data = br.load(paths["all"], **read)
            read_seconds = time.perf_counter() - t
            out = br.fit(framework, data)
            return out, {"read": read_seconds, "fit": time.perf_counter() - t - read_seconds,
                         "iterations": out.diagnostics["iterations"]}

        contenders = {"update": update, "update_in_memory": lambda: update(in_memory), "refit": refit}
        first = {}
        for name, fn in contenders.items():
            t = time.perf_counter()
            _, parts = fn()
            first[name] = {"seconds": time.perf_counter() - t, **parts}
        times = {name: [] for name in contenders}
        steps = {name: [] for name in contenders}
        last = {}
        for _ in range(repeats):
            for name, fn in contenders.items():
                t = time.perf_counter()
                last[name], parts = fn()
                times[name].append(time.perf_counter() - t)
                steps[name].append(parts)
        median = {name: statistics.median(v) for name, v in times.items()}
        parts = {name: {k: statistics.median(s[k] for s in steps[name]) for k in steps[name][0]} for name in steps}
        out = {"kind": kind, "framework": last["update"].framework.label,
               "interval_method": last["update"].interval_method,
               "records_old": saved.data.n_records, "records_new": N_NEW, "cells_old": cells_old,
               "cells_all": last["refit"].data.n_cells, "first_fit_seconds": first_fit, "save_seconds": save_seconds,
               "fit_file_mib": (work / "fit.nc").stat().st_size / 2**20, "repeats": repeats,
               "update_seconds": median["update"], "update_in_memory_seconds": median["update_in_memory"],
               "refit_seconds": median["refit"], "ratio": median["update"] / median["refit"],
               "ratio_in_memory": median["update_in_memory"] / median["refit"], "steps": parts, "first_calls": first,
               "all_seconds": times, **_compare(last["update"], last["refit"])}
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def task_nuts(repeats: int = 2, draws: int = 1000, chains: int = 2) -> dict:
    import bayesrank as br

    paths = logs("davidson")
    framework = br.Davidson(k_tie=1)
    options = dict(method="nuts", draws=draws, tune=1000, chains=chains, random_seed=1, progressbar=False)
    work = Path(tempfile.mkdtemp(prefix="bench-updates-"))
    try:
        saved = br.fit(framework, br.load(paths["old"]), **options)
        saved.save(work / "fit.nc")

        def update():
            return br.Fit.load(work / "fit.nc").update(paths["new"])

        def refit(tune=1000):
            return br.fit(framework, br.load(paths["all"]), **{**options, "tune": tune})

        contenders = {"update": update, "refit": refit, "cold_tune_100": lambda: refit(100)}
        for fn in contenders.values():                     # compile for the merged cells, for all
            fn()
        runs = {name: [] for name in contenders}
        for _ in range(repeats):
            for name, fn in contenders.items():
                t = time.perf_counter()
                fitted = fn()
                d = fitted.diagnostics
                runs[name].append({"seconds": time.perf_counter() - t, "sampling_seconds": d["seconds"],
                                   "whitening_seconds": d["whitening_seconds"], "max_rhat": d["max_rhat"],
                                   "min_ess_bulk": d["min_ess_bulk"], "min_ess_tail": d["min_ess_tail"],
                                   "divergences": d["divergences"], "sampler": d["sampler"],
                                   "warm_start": d.get("warm_start")})
        median = {name: {k: statistics.median(r[k] for r in v) for k in ("seconds", "sampling_seconds",
                                                                       "whitening_seconds", "max_rhat",
                                                                       "min_ess_bulk", "min_ess_tail")}
                  for name, v in runs.items()}
        return {"framework": framework.label, "draws": draws, "chains": chains, "repeats": repeats,
                "median": median, "runs": runs, "ratio": median["update"]["seconds"] / median["refit"]["seconds"]}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def task_year(k_tie: int = 0, days: int = DAYS, refit_every: int = 30) -> dict:
    import duckdb
    import numpy as np

    import bayesrank as br

    start, files = year_logs()
    files = files[:days]
    framework = br.Davidson(k_tie=k_tie)
    work = Path(tempfile.mkdtemp(prefix="bench-year-"))
    try:
        fitted = br.fit(framework, br.load(start))
        records_start, models_start = fitted.data.n_records, len(fitted.items)
        update_seconds, iterations, refits, files_seconds, saves = [], [], {}, {}, {}
        for day, path in enumerate(files, start=1):
            t = time.perf_counter()
            fitted = fitted.update(path)
            update_seconds.append(time.perf_counter() - t)
            iterations.append(fitted.diagnostics["iterations"])
            if day % refit_every and day != len(files):
                continue
            t = time.perf_counter()
            fitted.save(work / "fit.nc")
            saved_at = time.perf_counter()
            fitted = br.Fit.load(work / "fit.nc")      # the chain goes on from the file
            files_seconds[day] = time.perf_counter() - t
            saves[day] = saved_at - t
            t = time.perf_counter()
            con = duckdb.connect()
            batch = br.fit(framework, br.load(con.read_csv([str(start), *(str(p) for p in files[:day])])))
            refits[day] = time.perf_counter() - t
            con.close()
        measured = sorted(refits)
        every = np.arange(1, len(files) + 1)

        def total(seconds):
            return float(np.interp(every, measured, [seconds[d] for d in measured]).sum())

        update_total, refit_total = sum(update_seconds), total(refits)
        update_files, refit_files = update_total + total(files_seconds), refit_total + total(saves)
        return {"framework": framework.label, "days": len(files), "records_start": records_start,
                "records_end": fitted.data.n_records, "models_start": models_start, "models_end": len(fitted.items),
                "lineage_entries": len(fitted.lineage), "update_total_seconds": update_total,
                "refit_days_timed": measured, "refit_seconds": refits, "file_seconds": files_seconds,
                "save_seconds": saves, "refit_total_seconds": refit_total, "ratio": update_total / refit_total,
                "update_with_files_total_seconds": update_files, "refit_with_save_total_seconds": refit_files,
                "ratio_with_files": update_files / refit_files,
                "update_median_seconds": statistics.median(update_seconds),
                "refit_median_seconds": float(np.median(list(refits.values()))),
                "update_max_seconds": max(update_seconds), "refit_max_seconds": max(refits.values()),
                "median_iterations": statistics.median(iterations), "max_iterations": max(iterations),
                "fit_file_mib": (work / "fit.nc").stat().st_size / 2**20, **_compare(fitted, batch)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


TASKS = {"update": task_update, "nuts": task_nuts, "year": task_year}

SUITE = [
    {"task": "update", "args": {"kind": "davidson", "repeats": 3}, "timeout": 3600, "quick": True},
    {"task": "update", "args": {"kind": "bt_style", "repeats": 3}, "timeout": 7200},
    {"task": "update", "args": {"kind": "judge_aware", "repeats": 3}, "timeout": 3600},
    {"task": "nuts", "args": {"repeats": 2}, "timeout": 7200},
    {"task": "year", "args": {"k_tie": 0}, "timeout": 14400},
]


# ---------------------------------------------------------------------- committed results
def saved() -> dict:
    """The committed outputs, ``task[:kind]`` → output."""
    path = RESULTS / "updates.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _key(task: str, out: dict) -> str:
    args = out.get("args", {})
    return {"update": f"update:{args.get('kind', 'davidson')}", "year": f"year:k_tie={args.get('k_tie', 0)}"}.get(
        task, task)


def save(task: str, out: dict) -> None:
    (RESULTS / "updates.json").write_text(json.dumps({**saved(), _key(task, out): out}, indent=1) + "\n")


def report(results: dict) -> list[str]:
    """The tables, from each task's newest output (this run's, else the committed one)."""
    stored = saved()
    latest = {key: out for key, out in stored.items()}
    for task in TASKS:
        for out in newest(results, task):
            latest[_key(task, out)] = out
    return table(latest).splitlines()


def table(latest: dict) -> str:
    lines = ["## Updates (bench/tasks_updates.py, issue 44)", "",
             "Synthetic raw logs made from the arena-2024 counts (module docstring). One warm process per row: the "
             "update (`Fit.load` of the saved fit + `Fit.update` of the 20,000 new records; the old log deleted) "
             "and the batch refit (`bayesrank.load` of all records + `bayesrank.fit`) alternate after one call of "
             "each; medians. `steps`: median seconds of each part.", "",
             "| fit | records (cells) | update from the saved file | update of the fit in memory | refit | "
             "NLL rel. diff | max score diff | update steps | refit steps |", "|---|---|---|---|---|---|---|---|---|"]
    for key in ("update:davidson", "update:bt_style", "update:judge_aware"):
        r = latest.get(key)
        if not r:
            continue
        u, f = r["steps"]["update"], r["steps"]["refit"]
        lines.append(
            f"| {r['framework']} ({r['interval_method']}) | {r['records_old']:,} + {r['records_new']:,} "
            f"({r['cells_all']:,}) | {r['update_seconds']:.2f} s (**{r['ratio']:.2f}×**) | "
            f"{r['update_in_memory_seconds']:.2f} s (**{r['ratio_in_memory']:.2f}×**) | {r['refit_seconds']:.2f} s | "
            f"{r['nll_rel_diff']:.1e} | {r['max_score_diff']:.1e} | "
            f"load fit {u['load_fit']:.2f}, read {u['read']:.2f}, merge {u['merge']:.2f}, fit {u['fit']:.2f} "
            f"({u['iterations']:.0f} it.) | read {f['read']:.2f}, fit {f['fit']:.2f} ({f['iterations']:.0f} it.) |")
    rows = [latest[k] for k in ("update:davidson", "update:bt_style", "update:judge_aware") if k in latest]
    if rows:
        lines += ["", "First calls in the process (the structure for the merged cells is built by whichever "
                  "comes first — the update here — and reused by the other):", ""]
        for r in rows:
            fc = r["first_calls"]
            lines.append(f"* {r['framework']}: update {fc['update']['seconds']:.2f} s (fit {fc['update']['fit']:.2f} s), "
                         f"then the update in memory {fc['update_in_memory']['seconds']:.2f} s and the refit "
                         f"{fc['refit']['seconds']:.2f} s; the first fit of the old log {r['first_fit_seconds']:.1f} s; "
                         f"saved fit {r['fit_file_mib']:.1f} MiB, written in {r['save_seconds']:.2f} s.")
    r = latest.get("nuts")
    if r:
        lines += ["", f"### NUTS ({r['framework']}, {r['chains']} chains × {r['draws']} draws)", "",
                  "| run | seconds | of which sampling | whitening MLE | max r̂ | min bulk / tail ESS |",
                  "|---|---|---|---|---|---|"]
        for name, m in r["median"].items():
            lines.append(f"| {name} | {m['seconds']:.1f} | {m['sampling_seconds']:.1f} | {m['whitening_seconds']:.2f} | "
                         f"{m['max_rhat']:.3f} | {m['min_ess_bulk']:.0f} / {m['min_ess_tail']:.0f} |")
        warm = r["runs"]["update"][-1]["warm_start"]
        lines += ["", f"Update/refit: **{r['ratio']:.2f}×**. Reused: initial points — {warm['initial_points']}; "
                  f"mass matrix — {warm['mass_matrix']}; whitening MLE from the saved posterior means "
                  f"({warm['whitening_iterations']} iterations); {warm['tune']} warm-up steps."
                  + (f" Note: {r['note']}." if r.get("note") else "")]
    for key in sorted(k for k in latest if k.startswith("year")):
        r = latest[key]
        lines += ["", f"### A year of daily updates ({r['framework']})", "",
                  f"{r['days']} days, {r['records_start']:,} → {r['records_end']:,} records, {r['models_start']} → "
                  f"{r['models_end']} models ({r['lineage_entries']} lineage entries). Every day: `Fit.update` of "
                  "the day's file on yesterday's fit against a batch refit (read every file so far, fit); refits "
                  f"and the file round trip (save + load of the fit) timed on {len(r['refit_days_timed'])} days "
                  "and interpolated.", "",
                  f"* total in memory: updates **{r['update_total_seconds']:.0f} s**, refits "
                  f"{r['refit_total_seconds']:.0f} s (**{r['ratio']:.2f}×**); with the fit kept on disk (updates "
                  f"+ save + load, refits + save): {r['update_with_files_total_seconds']:.0f} s against "
                  f"{r['refit_with_save_total_seconds']:.0f} s (**{r['ratio_with_files']:.2f}×**);",
                  f"* per day median {r['update_median_seconds']:.2f} s against {r['refit_median_seconds']:.2f} s "
                  f"(slowest {r['update_max_seconds']:.2f} s / {r['refit_max_seconds']:.2f} s); optimiser "
                  f"iterations per update: median {r['median_iterations']:.0f}, most {r['max_iterations']};",
                  f"* final fit against the final batch fit: NLL relative difference {r['nll_rel_diff']:.1e}, largest "
                  f"score difference {r['max_score_diff']:.1e}, upper interval bounds {r['max_upper_diff']:.1e}; "
                  f"saved fit {r['fit_file_mib']:.1f} MiB."]
    loads = ", ".join(f"{k} {v['load_average'][0]:.1f}" for k, v in latest.items() if v.get("load_average"))
    lines += ["", f"Machine: {os.cpu_count()} cores; Python {sys.version.split()[0]}; load average (1 min) when each "
              f"task finished: {loads}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    task_main(TASKS, save=save, report=report, report_file=RESULTS / "updates.md")
