"""Benchmark tasks of the data layer: raw logs aggregated against DuckDB's own GROUP BY, and
memory bounded in the number of items through the CLI.

Run by ``bench/run.py`` (protocol: ``bench/common.py``; ``--only tasks_data``, ``--quick``: the
1.67M-row CSV and Parquet and the 2,000-item CLI fit). ``python bench/tasks_data.py TASK
'{"repeats": 3}'`` runs one task and prints one line ``BENCH_JSON {...}``; either way the output
of this checkout is also kept in ``bench/results/data.json`` (task → output), and ``python
bench/tasks_data.py report`` writes the table ``bench/results/data.md`` from those and the latest
``bench/results.json``. Self-contained: the inputs are generated here (into ``bench/.cache/``, untracked) and every
measurement runs in its own fresh subprocess, so peak memory (the child's maximum resident set
size) is per measurement and includes the interpreter and the imports. Repeats interleave ours
and the peer; figures are medians.

No real 1.67M-row Chatbot Arena battles log ships with bayesrank (the bundled arena-2024 data
are pair counts), so ``battles_1p67m`` is **synthetic**: 1,670,250 battles — the number of
comparisons in arena-2024 counting both-bad ties — drawn pair by pair with the arena's model
names and each pair's own counts of wins, losses, ties and both-bad ties (so the outcome
frequencies are the arena's), in random order and random sides.

Tasks
-----
``csv``        bayesrank.load on the 1.67M-row CSV vs ``SELECT model_a, model_b, winner,
               count(*) FROM read_csv(...) GROUP BY ALL`` in DuckDB (target: within 1.5×, peak ≤ 400 MB).
``parquet``    the same records as Parquet (target: within 2×).
``parquet_1e8`` 10⁸ synthetic records (the same pair and outcome frequencies) from Parquet:
               bayesrank.load's peak memory (target ≤ 2 GB) and time, DuckDB's GROUP BY beside it.
``cli_battles`` the whole process ``bayesrank fit battles.csv --model bt`` (load, aggregate, fit
               with sandwich intervals, JSON) against evalica's whole process on the same CSV: read
               it (pandas, as evalica's documentation does, and Polars), leave out the both-bad ties
               as bayesrank does by default, ``evalica.bradley_terry`` with ties as halves (its
               defaults). Target: faster than evalica's whole process.
``cli_2000``   ``bayesrank fit`` of 2,000 items (21,984 pairs, 2.2M comparisons; BT) printing a
               leaderboard with rank intervals: peak memory (target < 1 GB).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import HERE, RESULTS, newest, task_main

CACHE = HERE / ".cache"
REPEATS = 3
N_BATTLES = 1_670_250
N_BIG = 100_000_000


# ---------------------------------------------------------------------- inputs
def _pair_frequencies():
    import numpy as np

    table = json.loads((HERE.parent / "bayesrank" / "data" / "datasets" / "arena-2024.json").read_text())
    models = np.asarray(table["models"], dtype=object)
    X = np.asarray(table["X"], dtype=np.int64)
    Y = np.asarray(table["Y"], dtype=np.int64)  # wins of i, wins of j, ties, both-bad ties
    return models, X, Y


def battles_csv() -> Path:
    """The synthetic 1.67M-row battles log (CSV and Parquet), made once."""
    csv, parquet = CACHE / "battles_1p67m.csv", CACHE / "battles_1p67m.parquet"
    if csv.exists() and parquet.exists():
        return csv
    import duckdb
    import numpy as np
    import pandas as pd

    models, X, Y = _pair_frequencies()
    rng = np.random.default_rng(2024)
    per_pair = Y.sum(axis=1)
    pair = np.repeat(np.arange(len(X)), per_pair)
    outcome = np.concatenate([np.repeat(np.arange(4), y) for y in Y])
    assert pair.size == N_BATTLES
    order = rng.permutation(pair.size)
    pair, outcome = pair[order], outcome[order]
    swap = rng.random(pair.size) < 0.5
    a = np.where(swap, X[pair, 1], X[pair, 0])
    b = np.where(swap, X[pair, 0], X[pair, 1])
    labels = np.array(["model_a", "model_b", "tie", "tie (bothbad)"], dtype=object)
    outcome = np.where(swap & (outcome < 2), 1 - outcome, outcome)
    frame = pd.DataFrame({"model_a": models[a], "model_b": models[b], "winner": labels[outcome]})
    CACHE.mkdir(exist_ok=True)
    con = duckdb.connect()
    con.register("frame", frame)
    con.execute(f"COPY frame TO '{csv}' (HEADER, DELIMITER ',')")
    con.execute(f"COPY frame TO '{parquet}' (FORMAT parquet)")
    return csv


def battles_1e8() -> Path:
    """10⁸ records with the arena's pair and outcome frequencies, as Parquet, made in chunks."""
    path = CACHE / "battles_1e8.parquet"
    if path.exists():
        return path
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    models, X, Y = _pair_frequencies()
    weights = (Y / Y.sum()).ravel()
    rng = np.random.default_rng(8)
    labels = pa.array(["model_a", "model_b", "tie", "tie (bothbad)"])
    names = pa.array(list(models))
    CACHE.mkdir(exist_ok=True)
    tmp = path.with_suffix(".tmp")
    writer = None
    chunk = 10_000_000
    for start in range(0, N_BIG, chunk):
        k = min(chunk, N_BIG - start)
        cell = rng.choice(weights.size, size=k, p=weights)
        pair, outcome = cell // 4, cell % 4
        table = pa.table({
            "model_a": pa.DictionaryArray.from_arrays(pa.array(X[pair, 0].astype(np.int32)), names),
            "model_b": pa.DictionaryArray.from_arrays(pa.array(X[pair, 1].astype(np.int32)), names),
            "winner": pa.DictionaryArray.from_arrays(pa.array(outcome.astype(np.int32)), labels),
        })
        writer = writer or pq.ParquetWriter(tmp, table.schema)
        writer.write_table(table, row_group_size=1_000_000)
    writer.close()
    tmp.rename(path)
    return path


def bt_2000() -> Path:
    """2,000 items, 21,984 pairs (random pairs plus a chain), 100 BT comparisons each."""
    path = CACHE / "bt_2000.csv"
    if path.exists():
        return path
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    m = 2000
    s = rng.normal(0, 1, m)
    pairs = set()
    while len(pairs) < 20000:
        i, j = rng.integers(m, size=2)
        if i != j:
            pairs.add((min(i, j), max(i, j)))
    pairs |= {(k, k + 1) for k in range(m - 1)}
    a, b = np.array(sorted(pairs)).T
    wins = rng.binomial(100, 1 / (1 + np.exp(-(s[a] - s[b]))))
    CACHE.mkdir(exist_ok=True)
    pd.DataFrame({"model_a": [f"model-{i:04d}" for i in a], "model_b": [f"model-{j:04d}" for j in b],
                  "wins_a": wins, "wins_b": 100 - wins}).to_csv(path, index=False)
    return path


def made(maker: str) -> Path:
    """The input that ``maker()`` (one of the functions above) writes, made in a child process:
    Linux keeps a process's peak memory across exec, so making a large input in this process
    would raise the peak every measured child reports."""
    code = f"import sys; sys.path.insert(0, {str(HERE)!r}); import tasks_data; print(tasks_data.{maker}())"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return Path(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- measurements
def child(code: str) -> dict:
    """Run ``code`` in a fresh interpreter: wall seconds, peak RSS (MiB) and its JSON output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = json.loads([line for line in proc.stdout.splitlines() if line.startswith("{")][-1])
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: run the largest last, or read
    # the child's own figure, which every snippet reports
    out.setdefault("peak_mib", max(peak, before) / 1024)
    out["wall_seconds"] = wall
    return out


OURS = """
import json, resource, time
t0 = time.perf_counter()
import bayesrank.data as d
t1 = time.perf_counter()
data = d.load({path!r})
t2 = time.perf_counter()
print(json.dumps({{"seconds": t2 - t1, "import_seconds": t1 - t0, "cells": data.n_cells,
                  "comparisons": data.accounting()["comparisons_read"],
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""
DUCKDB = """
import json, resource, time
t0 = time.perf_counter()
import duckdb
duckdb.execute("SET enable_progress_bar = false")
t1 = time.perf_counter()
rows = duckdb.execute("SELECT model_a, model_b, winner, count(*) FROM {reader}({path!r}) GROUP BY ALL").fetchall()
t2 = time.perf_counter()
print(json.dumps({{"seconds": t2 - t1, "import_seconds": t1 - t0, "groups": len(rows),
                  "comparisons": sum(r[-1] for r in rows),
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def _versus(path: Path, reader: str, repeats: int = REPEATS) -> dict:
    ours, peer = [], []
    for _ in range(repeats):  # interleaved
        ours.append(child(OURS.format(path=str(path))))
        peer.append(child(DUCKDB.format(path=str(path), reader=reader)))
    med = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
    assert ours[0]["comparisons"] == peer[0]["comparisons"]
    return {"rows": ours[0]["comparisons"], "cells": ours[0]["cells"], "repeats": repeats,
            "bayesrank_seconds": med(ours, "seconds"), "duckdb_seconds": med(peer, "seconds"),
            "ratio": med(ours, "seconds") / med(peer, "seconds"),
            "bayesrank_peak_mib": med(ours, "peak_mib"), "duckdb_peak_mib": med(peer, "peak_mib"),
            "bayesrank_import_seconds": med(ours, "import_seconds")}


def task_csv(repeats: int = REPEATS) -> dict:
    return {"task": "csv", "input": "synthetic 1.67M-row battles CSV", **_versus(made("battles_csv"), "read_csv", repeats)}


def task_parquet(repeats: int = REPEATS) -> dict:
    made("battles_csv")
    return {"task": "parquet", "input": "synthetic 1.67M-row battles Parquet",
            **_versus(CACHE / "battles_1p67m.parquet", "read_parquet", repeats)}


def task_parquet_1e8(repeats: int = 1) -> dict:
    return {"task": "parquet_1e8", "input": "10^8 synthetic records, Parquet",
            **_versus(made("battles_1e8"), "read_parquet", repeats)}


def task_cli_2000(repeats: int = REPEATS) -> dict:
    path = made("bt_2000")
    code = f"""
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.run([sys.executable, "-m", "bayesrank.cli", "fit", {str(path)!r}, "--model", "bt", "--format", "table",
                    "--top", "0"], capture_output=True, text=True)
assert p.returncode == 0, p.stderr
rows = [line for line in p.stdout.splitlines() if line.strip().startswith(tuple("0123456789"))]
print(json.dumps({{"seconds": time.perf_counter() - t0, "rows": len(rows),
                  "peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}}))
"""
    runs = [child(code) for _ in range(repeats)]
    return {"task": "cli_2000", "input": "2,000 items, 21,984 pairs, BT, leaderboard with rank intervals",
            "rows": runs[0]["rows"], "repeats": repeats,
            "seconds": statistics.median(r["seconds"] for r in runs),
            "peak_mib": statistics.median(r["peak_mib"] for r in runs)}


#: evalica's whole process on the battles CSV: read, drop the both-bad ties, BT with ties as halves.
EVALICA = """
import json, resource, sys, time
import numpy as np
import evalica
reader = {reader!r}
if reader == "pandas":
    import pandas as pd
    df = pd.read_csv({path!r})
    df = df[df["winner"] != "tie (bothbad)"]
    a, b, w = df["model_a"], df["model_b"], df["winner"]
else:
    import polars as pl
    df = pl.read_csv({path!r}).filter(pl.col("winner") != "tie (bothbad)")
    a, b, w = df["model_a"].to_list(), df["model_b"].to_list(), df["winner"].to_list()
outcome = {{"model_a": evalica.Winner.X, "model_b": evalica.Winner.Y, "tie": evalica.Winner.Draw}}
winners = [outcome[x] for x in w]
res = evalica.bradley_terry(a, b, winners)
scores = np.log(res.scores)
print(json.dumps({{"scores": {{str(k): float(v) for k, v in scores.items()}},
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""
#: bayesrank's whole process on the same CSV (the CLI, JSON output).
OURS_CLI = """
import json, resource, subprocess, sys
p = subprocess.run([sys.executable, "-m", "bayesrank.cli", "fit", {path!r}, "--model", "bt", "--format", "json"],
                   capture_output=True, text=True)
assert p.returncode == 0, p.stderr
fit = json.loads(p.stdout)
print(json.dumps({{"scores": {{row["name"]: row["score"] for row in fit["items"]}}, "converged": fit["converged"],
                  "interval_method": fit["interval_method"], "comparisons": fit["n_comparisons"],
                  "peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}}))
"""


def task_cli_battles(repeats: int = REPEATS) -> dict:
    """Whole processes on the 1.67M-row battles CSV: ``bayesrank fit --model bt`` against evalica
    (pandas and Polars readers), interleaved; also how far apart the two sets of scores are."""
    import numpy as np

    path = str(made("battles_csv"))
    runs = {"bayesrank": [], "evalica_pandas": [], "evalica_polars": []}
    for _ in range(repeats):
        runs["bayesrank"].append(child(OURS_CLI.format(path=path)))
        for reader in ("pandas", "polars"):
            runs[f"evalica_{reader}"].append(child(EVALICA.format(path=path, reader=reader)))
    ours = runs["bayesrank"][-1]["scores"]
    names = sorted(ours)
    mine = np.array([ours[k] for k in names])
    theirs = np.array([runs["evalica_pandas"][-1]["scores"][k] for k in names])
    gap = float(np.max(np.abs((mine - mine.mean()) - (theirs - theirs.mean()))))
    med = {name: statistics.median(r["wall_seconds"] for r in rs) for name, rs in runs.items()}
    return {"task": "cli_battles", "input": "synthetic 1.67M-row battles CSV, whole processes", "repeats": repeats,
            "seconds": med, "peak_mib": {name: statistics.median(r["peak_mib"] for r in rs) for name, rs in runs.items()},
            "ratio_pandas": med["bayesrank"] / med["evalica_pandas"], "ratio_polars": med["bayesrank"] / med["evalica_polars"],
            "comparisons": runs["bayesrank"][-1]["comparisons"], "converged": runs["bayesrank"][-1]["converged"],
            "interval_method": runs["bayesrank"][-1]["interval_method"], "max_abs_score_difference": gap}


TASKS = {"csv": task_csv, "parquet": task_parquet, "parquet_1e8": task_parquet_1e8, "cli_battles": task_cli_battles,
         "cli_2000": task_cli_2000}

#: ``--quick``: everything but the 10⁸ records (whose input alone takes minutes to write).
SUITE = [
    {"task": "csv", "args": {"repeats": 3}, "timeout": 1800, "quick": True},
    {"task": "parquet", "args": {"repeats": 3}, "timeout": 1800, "quick": True},
    {"task": "parquet_1e8", "args": {"repeats": 1}, "timeout": 7200},
    {"task": "cli_battles", "args": {"repeats": 3}, "timeout": 1800, "quick": True},
    {"task": "cli_2000", "args": {"repeats": 3}, "timeout": 3600, "quick": True},
]


def saved() -> dict:
    """The committed outputs, task → output."""
    path = RESULTS / "data.json"
    return json.loads(path.read_text()) if path.exists() else {}


def save(task: str, out: dict) -> None:
    (RESULTS / "data.json").write_text(json.dumps({**saved(), task: out}, indent=1) + "\n")


def report(results: dict) -> list[str]:
    """The table, from each task's newest output (this run's, else the committed one)."""
    stored = saved()
    latest = [runs[-1] for runs in (newest(results, task, saved=stored.get(task)) for task in TASKS) if runs]
    return table(latest).splitlines()


def table(results: list[dict]) -> str:
    lines = ["## Data layer benchmarks (bench/tasks_data.py)", "",
             "Medians of interleaved repeats, each in a fresh process; peak = maximum resident set size of that "
             "process (interpreter and imports included). The 1.67M-row log is synthetic (see the module docstring). "
             "DuckDB runs on its default threads (every core) in bayesrank's aggregation and in the peer alike; the "
             "other libraries' threads are pinned to one (bench/README.md).",
             "", "| task | input | bayesrank | DuckDB GROUP BY | ratio | bayesrank peak | DuckDB peak |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        if r["task"] == "cli_battles":
            sec, peak = r["seconds"], r["peak_mib"]
            lines.append(f"| cli_battles | {r['input']}: `bayesrank fit CSV --model bt` ({r['interval_method']} intervals) "
                         f"against evalica (pandas / Polars reader) | {sec['bayesrank']:.2f} s | evalica "
                         f"{sec['evalica_pandas']:.2f} s / {sec['evalica_polars']:.2f} s | "
                         f"{r['ratio_pandas']:.2f}× / {r['ratio_polars']:.2f}× | {peak['bayesrank']:.0f} MiB | evalica "
                         f"{peak['evalica_pandas']:.0f} / {peak['evalica_polars']:.0f} MiB |")
            continue
        if r["task"] == "cli_2000":
            lines.append(f"| cli_2000 | {r['input']} ({r['rows']} rows printed) | {r['seconds']:.1f} s (whole process) | "
                         f"— | — | {r['peak_mib']:.0f} MiB | — |")
            continue
        lines.append(f"| {r['task']} | {r['input']} ({r['rows']:,} records → {r['cells']:,} cells) | "
                     f"{r['bayesrank_seconds']:.2f} s | {r['duckdb_seconds']:.2f} s | {r['ratio']:.2f}× | "
                     f"{r['bayesrank_peak_mib']:.0f} MiB | {r['duckdb_peak_mib']:.0f} MiB |")
    loads = ", ".join(f"{r['task']} {r['load_average'][0]:.1f}" for r in results if r.get("load_average"))
    lines += ["", f"Machine: {os.cpu_count()} cores; Python {sys.version.split()[0]}; load average (1 min) when each "
              f"task finished: {loads}."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    task_main(TASKS, save=save, report=report, report_file=RESULTS / "data.md")
