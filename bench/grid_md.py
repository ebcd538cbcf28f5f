"""Publish a run of the ``grid`` task: ``python bench/grid_md.py RUN.err [RUN.err ...]`` reads the
progress lines (one JSON row per model on stderr, the later file's row winning for a model) and
writes ``bench/results/grid.json`` (the rows, the commit, the machine) and ``bench/results/grid.md``
(the table)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "results"
#: The models beyond the everyday ones (issue 43) should fit warm within this many seconds.
WARM_TARGET = 30.0
#: Log-likelihood units by which a model may end below the previous engine's maximum (issue 43).
PREVIOUS_SLACK = 0.01
#: Models of Table D.1 that are everyday models (Bradley–Terry, Rao–Kupper and Davidson with k_tie ≤ 1 and no
#: Thurstonian covariance).
EVERYDAY = {1, 4, 7, 8, 19, 20}


def main(paths):
    rows = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.startswith("{"):
                row = json.loads(line)
                rows[row["id"]] = row
    rows = [rows[k] for k in sorted(rows)]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    (OUT / "grid.json").write_text(json.dumps({"commit": commit, "models": rows}, indent=1) + "\n")
    lines = ["# Table D.1 models by MAP on arena-2024 (bench task `grid`)", "",
             f"Commit {commit}; `python bench/tasks_core.py grid '{{\"ids\": \"1-30\"}}'` (threads pinned to 1), each "
             "model's two fits in one process: the first (building and compiling included) and a warm one. "
             "Rows: `grid.json`. Δ ℓ is the log-likelihood gained over the previous engine "
             "(`d1-previous-engine.jsonl`), in units of the total log-likelihood (n = 1,374,996 comparisons "
             "for the models with ties, fewer where ties are dropped); the machine is shared, so the load "
             "average (1 min, at the warm fit's start) stands beside each time, and CPU seconds with the wall.", "",
             "| id | model | paper NLL | previous engine | this engine | Δ ℓ (units) | ≥ previous − 0.01 | ≤ paper + 1e-4 "
             "| KKT converged | intervals | L-BFGS-B it. | trust-region it. | warm wall s | warm CPU s | load | first s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        gain = r.get("loglik_gain")
        lines.append("| " + " | ".join(str(x) for x in (
            r["id"], r["label"], f"{r['paper_nll']:.4f}", f"{r['previous_nll']:.10f}" if r.get("previous_nll") else "—",
            f"{r['nll']:.10f}", f"{gain:+.3g}" if gain is not None else "—",
            "yes" if gain is not None and gain >= -PREVIOUS_SLACK else "**no**",
            "yes" if r["nll"] <= r["paper_nll"] + 1e-4 else "**no**",
            "yes" if r["converged"] else "**no**", "yes" if r["intervals"] else "**no**",
            r.get("approach_iterations") or 0, r["iterations"], f"{r['warm_seconds']:.1f}",
            f"{r['warm_cpu_seconds']:.1f}", f"{r.get('load_average', float('nan')):.1f}",
            f"{r['first_seconds']:.1f}")) + " |")
    beyond = [r for r in rows if r["id"] not in EVERYDAY]
    slow = [r["id"] for r in beyond if r["warm_cpu_seconds"] > WARM_TARGET]
    slow_wall = [r["id"] for r in beyond if r["warm_seconds"] > WARM_TARGET]
    short = [r["id"] for r in rows if r.get("loglik_gain") is not None and r["loglik_gain"] < -PREVIOUS_SLACK]
    lines += ["", f"{len(rows)} models. Below the previous engine's maximum by more than {PREVIOUS_SLACK} units: "
              f"{short or 'none'}. Not converged: {[r['id'] for r in rows if not r['converged']] or 'none'}. "
              f"Beyond the everyday models, warm CPU above {WARM_TARGET:.0f} s: {slow or 'none'}; warm wall above "
              f"{WARM_TARGET:.0f} s: {slow_wall or 'none'}.", ""]
    (OUT / "grid.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
