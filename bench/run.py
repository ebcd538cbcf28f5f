"""bayesrank benchmarks: every task file, every peer, one run.

``make bench`` (or ``python bench/run.py``) discovers ``bench/tasks_*.py`` (the protocol is in
``bench/common.py``), runs each file's ``SUITE`` in fresh processes with threads pinned
(``common.THREAD_ENV``), interleaving repeats and variants, and writes

* ``bench/results.json``: machine, settings and every task output;
* ``bench/results.md``: each task file's Markdown section (its ``report``), also printed.

Variants: ``current`` is this checkout; ``baseline`` is the same task run on the code of
``--baseline REF`` (default ``main``), exported with ``git archive`` into a temporary folder
and put first on ``PYTHONPATH`` — so "before / after" figures come from the same run.

Options: ``--only tasks_core,tasks_data`` (files), ``--quick`` (the runs a file marks quick,
one repeat), ``--repeats N`` (override), ``--report-only`` (rebuild the Markdown from the JSON).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from common import THREAD_ENV  # noqa: E402

#: Unset in every benchmark process: some machines set them for old OpenBLAS builds and they
#: slow a current NumPy.
UNSET = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def task_files(only=None) -> list[Path]:
    files = sorted(HERE.glob("tasks_*.py"))
    return [f for f in files if not only or f.stem in only]


def load_file(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_env(code_root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(THREAD_ENV)
    env["BENCH_VARIANT"] = "current" if code_root == ROOT else "baseline"
    env["PYTHONPATH"] = os.pathsep.join([str(code_root), str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("PYTHONHASHSEED", "0")
    return env


def run_one(path: Path, task: str, args: dict, code_root: Path, timeout: float) -> dict:
    """One task in a fresh process; its BENCH_JSON output (or an error)."""
    cmd = [sys.executable, str(path), task, json.dumps(args)]
    label = f"{path.stem}:{task} {json.dumps(args) if args else ''} [{'baseline' if code_root != ROOT else 'current'}]"
    print(f"  {label} ...", end="", flush=True)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, env=bench_env(code_root), cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(" timed out")
        return {"task": task, "error": f"timed out after {timeout} s"}
    wall = time.perf_counter() - t0
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("BENCH_JSON "):
            out = json.loads(line[len("BENCH_JSON "):])
            out["process_wall_seconds"] = wall
            print(f" {wall:.1f} s")
            return out
    print(" failed")
    return {"task": task, "error": f"exit {proc.returncode}", "stderr_tail": proc.stderr[-3000:]}


def export_baseline(ref: str) -> Path | None:
    """The code of ``ref`` in a temporary folder (git archive), or None when it cannot be had."""
    try:
        sha = subprocess.run(["git", "rev-parse", ref], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        folder = Path(tempfile.mkdtemp(prefix="bayesrank-baseline-"))
        archive = subprocess.run(["git", "archive", sha, "bayesrank"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
        (folder / "BASELINE").write_text(f"{ref} {sha}\n")
        return folder
    except (subprocess.CalledProcessError, OSError):
        return None


def machine_info() -> dict:
    probe = "import json, numpy, scipy.linalg, threadpoolctl; print(json.dumps(threadpoolctl.threadpool_info()))"
    blas = subprocess.run([sys.executable, "-c", probe], env=bench_env(ROOT), capture_output=True, text=True)
    versions = {}
    from importlib.metadata import PackageNotFoundError, version

    for pkg in ("bayesrank", "numpy", "scipy", "pymc", "pytensor", "numba", "nutpie", "numpyro", "jax", "arviz",
                "leaderbot", "choix", "evalica", "arena-rank", "duckdb", "polars", "pyarrow", "narwhals"):
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            versions[pkg] = None
    cpu = None
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        blas_info = [{k: i.get(k) for k in ("internal_api", "version", "num_threads")} for i in json.loads(blas.stdout)]
    except ValueError:
        blas_info = None
    return {"cpu_count": os.cpu_count(), "cpu_model": cpu, "platform": platform.platform(),
            "python": platform.python_version(), "versions": versions, "thread_env": THREAD_ENV,
            "blas_in_benchmarks": blas_info, "load_average_at_start": os.getloadavg()}


def markdown(result: dict, modules: dict) -> str:
    m = result["machine"]
    lines = [f"# bayesrank benchmarks — {result['started']}", "",
             f"Machine: {m['cpu_count']} CPUs ({m['cpu_model']}), Python {m['python']}; load average at start "
             f"{', '.join(f'{v:.1f}' for v in m['load_average_at_start'])}, at end "
             f"{', '.join(f'{v:.1f}' for v in m.get('load_average_at_end', []))}. Threads: every benchmark process runs "
             f"with {', '.join(f'{k}={v}' for k, v in THREAD_ENV.items() if k != 'XLA_FLAGS')} and XLA_FLAGS="
             f"\"{THREAD_ENV['XLA_FLAGS']}\" (one thread for every tool's linear algebra; BLAS seen: "
             f"{m.get('blas_in_benchmarks')}). Baseline: {result.get('baseline') or 'none'}.", "",
             "Every figure is a median of interleaved repeats measured in this run; ratios compare numbers "
             "from this run only.", ""]
    for stem, module in modules.items():
        if stem not in result["results"]:
            continue
        try:
            lines += module.report(result["results"][stem])
        except Exception as err:  # noqa: BLE001 - one file's broken report must not lose the others
            lines += [f"## {stem}", "", f"(report failed: {err!r})", ""]
        errors = [(t, v, o["error"]) for t, vs in result["results"][stem].items() for v, outs in vs.items()
                  for o in outs if "error" in o]
        if errors:
            lines += ["Errors: " + "; ".join(f"`{t}` [{v}]: {e}" for t, v, e in errors), ""]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", default="", help="comma-separated task files (e.g. tasks_core)")
    p.add_argument("--tasks", default="", help="comma-separated task names to run (default: every task of the suites)")
    p.add_argument("--quick", action="store_true", help="only the runs marked quick, one repeat each")
    p.add_argument("--repeats", type=int, default=None, help="override every run's repeats")
    p.add_argument("--baseline", default="main", help="git ref of the 'before' code (empty: no baseline)")
    p.add_argument("--task-args", default="{}", help='JSON {task: {arg: value}} merged into the suite\'s arguments')
    p.add_argument("--out", type=Path, default=HERE)
    p.add_argument("--report-only", action="store_true")
    args = p.parse_args(argv)
    only = [x for x in args.only.split(",") if x]
    files = task_files(only)
    modules = {f.stem: load_file(f) for f in files}
    if args.report_only:
        result = json.loads((args.out / "results.json").read_text())
        md = markdown(result, modules)
        (args.out / "results.md").write_text(md + "\n")
        print(md)
        return
    wanted = [x for x in args.tasks.split(",") if x]
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"bayesrank bench ({started}): {', '.join(modules) or 'no task files'}")
    baseline_root = export_baseline(args.baseline) if args.baseline else None
    result = {"started": started, "settings": {k: str(v) for k, v in vars(args).items()},
              "machine": machine_info(), "baseline": (baseline_root / "BASELINE").read_text().strip() if baseline_root else None,
              "results": {}}
    previous = args.out / "results.json"
    if (only or wanted) and previous.exists():  # a partial run updates the stored results
        result["results"] = json.loads(previous.read_text()).get("results", {})
    try:
        run_modules(modules, args, only, wanted, result, baseline_root)
    finally:
        if baseline_root is not None:
            shutil.rmtree(baseline_root, ignore_errors=True)
    md = markdown(result, modules)
    (args.out / "results.md").write_text(md + "\n")
    print()
    print(md)
    print(f"wrote {args.out / 'results.json'} and {args.out / 'results.md'}")


def run_modules(modules: dict, args, only, wanted, result: dict, baseline_root: Path | None) -> None:
    """Run the suites of ``modules`` (current code and the baseline), storing into ``result``
    and ``results.json`` after each module."""
    overrides = json.loads(args.task_args)
    for stem, module in modules.items():
        path = HERE / f"{stem}.py"
        out = result["results"].setdefault(stem, {})
        fresh: set = set()
        for run in module.SUITE:
            if (args.quick and not run.get("quick")) or (wanted and run["task"] not in wanted):
                continue
            repeats = 1 if args.quick else (args.repeats or run.get("repeats", 1))
            variants = [v for v in run.get("variants", ["current"]) if v == "current" or baseline_root]
            if run["task"] not in fresh:  # this run replaces what an earlier run stored
                out[run["task"]] = {}
                fresh.add(run["task"])
            slot = out[run["task"]]
            for _ in range(repeats):
                for v in variants:
                    root = ROOT if v == "current" else baseline_root
                    task_args = {**run.get("args", {}), **overrides.get(run["task"], {})}
                    slot.setdefault(v, []).append(run_one(path, run["task"], task_args, root, run.get("timeout", 3600)))
        result["machine"]["load_average_at_end"] = os.getloadavg()
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "results.json").write_text(json.dumps(result, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
