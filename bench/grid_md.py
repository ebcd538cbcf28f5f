"""Render ``bench/results/grid.md`` from the progress lines of the ``grid`` task (one JSON row per
model on stderr): ``python bench/grid_md.py run.err "note" > bench/results/grid.md``."""

import json
import sys

rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
note = sys.argv[2] if len(sys.argv) > 2 else ""
print("# Table D.1 models by MAP on arena-2024 (bench task `grid`)\n")
if note:
    print(note + "\n")
print("| id | label | free params | warm s (median of 2) | warm CPU s | first s | converged | intervals | "
      "NLL | paper NLL | L-BFGS-B it. | Newton it. |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['id']} | {r['label']} | {r['n_params']} | {r['warm_seconds']:.2f} | {r['warm_cpu_seconds']:.2f} | "
          f"{r['first_seconds']:.1f} | {'yes' if r['converged'] else 'NO'} | {'yes' if r['intervals'] else 'NO'} | "
          f"{r['nll']:.5f} | {r['paper_nll']:.4f} | {r['iterations']} | {r['newton_iterations']} |")
