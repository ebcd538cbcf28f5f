"""What every benchmark task file shares: thread pinning, timing, and the task protocol.

A task file ``bench/tasks_<topic>.py`` (discovered by ``bench/run.py``) defines

* ``TASKS``: name → function(**args) -> dict of measurements; each runs in a fresh process,
  ``python bench/tasks_<topic>.py NAME '{"arg": ...}'``, which prints one line
  ``BENCH_JSON {...}`` (:func:`task_main`);
* ``SUITE``: a list of runs, each ``{"task": NAME, "args": {...}, "repeats": N,
  "variants": ["current"] or ["current", "baseline"], "timeout": seconds, "quick": bool}``.
  ``run.py`` runs the repeats of all variants interleaved (current, baseline, current, …), in
  fresh processes, and keeps every output;
* ``report(results) -> list[str]``: the file's Markdown section, from
  ``results[task][variant]`` = the list of outputs of that task's processes.

A file whose results are committed (``bench/results/``) also passes ``save`` to
:func:`task_main`: every output of the ``current`` variant is then kept there as well (with its
arguments, the time it finished and the load average then), and its ``report`` falls back on those saved outputs for
the tasks ``results`` lacks (:func:`newest`), so ``python bench/tasks_<topic>.py report``
rewrites the committed Markdown from the saved outputs and the latest ``bench/results.json``.

Every figure in a report is a median of interleaved repeats: within a process the task
alternates ours and each peer; across processes run.py alternates the variants.

Threads are pinned the same way for every tool: :data:`THREAD_ENV` is set in the environment
of every benchmark process before any library loads, so NumPy/SciPy (OpenBLAS), numba,
Polars, JAX/XLA and leaderbot all run on one thread; DuckDB has no such variable and keeps its
default (every core) on both sides of the data benchmarks, bayesrank's aggregation (DuckDB) and
the DuckDB peer. Samplers still run their chains in parallel (one chain per core), which is what
a user gets.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: Committed outputs and per-file reports.
RESULTS = HERE / "results"
#: "current" (this checkout) or "baseline" (run.py sets it for every task process).
VARIANT = os.environ.get("BENCH_VARIANT", "current")

#: Environment that pins every library's threads to one (set by run.py for every task process).
THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "POLARS_MAX_THREADS": "1",
    "RAYON_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}


def maxrss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn):
    """(seconds, result) of ``fn()``."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def summary(times) -> dict:
    times = list(times)
    return {"median": statistics.median(times), "min": min(times), "max": max(times), "n": len(times), "all": times}


def interleaved(contenders: dict, repeats: int, cpu: bool = False, twice: bool = False) -> dict:
    """Run every contender once per round, in turn, for ``repeats`` rounds.

    Returns name → {"times": summary, "last": the last result} (with ``cpu``, also "cpu": a
    summary of the process CPU seconds of each call — on a loaded machine wall time counts
    the other processes too). With ``twice``, each turn calls the contender twice back to back:
    "times" / "cpu" are the first calls (as without), "second" / "second_cpu" the second. On this
    benchmark machine (a nested virtual machine) a call that follows other work, or any pause,
    runs slower than one right after itself — the ``warm`` task measures how much (``after_idle``) —
    so the second call says what the code costs with its memory in reach, the first what a call
    costs amid other work; both, for every contender alike.
    """
    names = list(contenders)
    times, cpus = {n: [] for n in names}, {n: [] for n in names}
    seconds, second_cpus = {n: [] for n in names}, {n: [] for n in names}
    last = {}
    for _ in range(repeats):
        for name, fn in contenders.items():
            for wall, cpu_s in ((times, cpus), (seconds, second_cpus))[:2 if twice else 1]:
                c0 = time.process_time()
                t, last[name] = timed(fn)
                cpu_s[name].append(time.process_time() - c0)
                wall[name].append(t)
    return {name: {"times": summary(times[name]), "last": last[name],
                   **({"cpu": summary(cpus[name])} if cpu else {}),
                   **({"second": summary(seconds[name])} if twice else {}),
                   **({"second_cpu": summary(second_cpus[name])} if twice and cpu else {})} for name in names}


def median(results, *path, default=None):
    """Median over processes of a numeric field (``path`` into each output)."""
    vals = []
    for r in results or []:
        x = r
        for p in path:
            x = x.get(p) if isinstance(x, dict) else None
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            vals.append(x)
    return statistics.median(vals) if vals else default


def fmt(x, spec="{:.3f}", none="n/a"):
    if x is None:
        return none
    if isinstance(x, bool):
        return "yes" if x else "**no**"
    return spec.format(x)


def ok(outputs) -> list[dict]:
    """The outputs that did not fail."""
    return [o for o in outputs or [] if "error" not in o]


def newest(results: dict, task: str, variant: str = "current", saved: dict | None = None) -> list[dict]:
    """The successful outputs of ``task`` in ``results`` (run.py's), or ``[saved]`` (the
    committed output) when that is newer or the run has none."""
    runs = ok((results.get(task) or {}).get(variant))
    if saved and "error" not in saved and (
            not runs or saved.get("finished", "") > max(r.get("finished", "") for r in runs)):
        return [saved]
    return runs


def stored_results(stem: str) -> dict:
    """``bench/results.json``'s results of task file ``stem`` (empty when there is none)."""
    path = HERE / "results.json"
    return json.loads(path.read_text()).get("results", {}).get(stem, {}) if path.exists() else {}


def task_main(tasks: dict, argv=None, *, save=None, report=None, report_file: Path | None = None) -> None:
    """Entry point of a task file: run ``argv[0]`` with the JSON arguments ``argv[1]``.

    ``save(task, output)``: keep the output of the current variant (committed results);
    ``report`` and ``report_file``: ``argv[0] == "report"`` writes the file's report there.
    """
    import warnings

    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["report"] and report is not None:
        text = "\n".join(report(stored_results(Path(sys.argv[0]).stem))) + "\n"
        if report_file is not None:
            report_file.write_text(text)
        print(text)
        return
    if not argv or argv[0] not in tasks:
        sys.exit(f"usage: {Path(sys.argv[0]).name} {{{'|'.join(tasks)}{'|report' if report else ''}}} ['{{JSON arguments}}']")
    name, args = argv[0], (json.loads(argv[1]) if len(argv) > 1 else {})
    warnings.simplefilter("ignore")
    out = tasks[name](**args)
    out["task"] = name
    out["args"] = args
    out["maxrss_mib"] = maxrss_mib()
    out["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    out["load_average"] = os.getloadavg()
    out = json.loads(json.dumps(out, default=_default))
    if save is not None and VARIANT == "current":
        RESULTS.mkdir(exist_ok=True)
        save(name, out)
    print("BENCH_JSON " + json.dumps(out), flush=True)


def _default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)
