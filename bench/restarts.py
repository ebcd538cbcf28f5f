"""Multi-start MAP fits (``restarts``) of models whose log-likelihood is not concave: where each run from a
moved start ends, against the run from the model's own start.

    .venv/bin/python bench/restarts.py [--restarts 4] [--seed 0] [--models 3,6,15,16,17,27] > bench/results/restarts.md

One process, BLAS pinned to one thread; each model is timed with its restarts (CPU seconds of the whole
multi-start fit, building the model included). Models: Table D.1 rows on arena-2024, and Bradley–Terry (ties
dropped, k_cov = 3) on dolphin-2.2.1-mistral-7b and the 29 items it met most.
"""

import argparse
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' data helpers

import bayesrank as br  # noqa: E402
from bayesrank.inference.map import GRADIENT_TOL, RESTART_AGREEMENT  # noqa: E402
from bayesrank.model.papers import leaderbot_model  # noqa: E402
from tests.conftest import around  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--restarts", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", default="3,6,15,16,17,27")
    args = parser.parse_args()
    arena = br.load("arena-2024")
    cases = [(f"Table D.1 model {mid}", leaderbot_model(mid), arena) for mid in map(int, filter(None, args.models.split(",")))]
    cases.append(("BT (drop), k_cov = 3, around dolphin (30 items)", br.BradleyTerry(ties="drop", k_cov=3),
                  around(arena, "dolphin-2.2.1-mistral-7b", 29)))
    print(f"# Multi-start MAP fits ({args.restarts} restarts, seed {args.seed})\n")
    print("NLL per comparison at the end of each run (run 0: the model's own start); **bold**: the estimate. "
          f"Runs within {RESTART_AGREEMENT:g} per comparison of the estimate reached its maximum; † marks a run "
          f"that stopped short of a stationary point (largest gradient entry ≥ {GRADIENT_TOL:g} per comparison), "
          "‡ one that ended at a boundary of the model (`diagnostics['start_boundaries']`, listed below the "
          "table).\n")
    print("| case | " + " | ".join(f"run {k}" for k in range(args.restarts + 1)) + " | estimate − run 0 (log-lik.) "
          "| converged | CPU s |")
    print("|---|" + "---|" * (args.restarts + 4))
    boundaries = []
    for label, framework, data in cases:
        start = time.process_time()
        fit = br.fit(framework, data, restarts=args.restarts, random_seed=args.seed)
        seconds = time.process_time() - start
        d = fit.diagnostics
        cells = []
        for k, (nll, grad, at) in enumerate(zip(d["start_nlls"], d["start_grad_norms"], d["start_boundaries"])):
            text = f"{nll:.10f}" + (" †" if grad >= GRADIENT_TOL else "") + (" ‡" if at else "")
            boundaries += [f"- {label}, run {k}: {'; '.join(at)}"] if at else []
            cells.append(f"**{text}**" if k == d["best_start"] else text)
        gain = (d["start_nlls"][0] - d["start_nlls"][d["best_start"]]) * fit.model_data.n_comparisons
        print(f"| {label} | " + " | ".join(cells) + f" | {gain:.3g} | {fit.converged} | {seconds:.1f} |", flush=True)
    if boundaries:
        print("\nWhere the runs marked ‡ ended:\n\n" + "\n".join(boundaries))


if __name__ == "__main__":
    main()
