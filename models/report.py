"""Comparison report of the reference fits: reads the CLI's JSON summaries, prints Markdown."""

import json
import sys
from pathlib import Path

from bayesrank.model.papers import LEADERBOT_D1

#: reference fit → its leaderbot Table D.1 model id
PAPER_ID = {"bt-half": 1, "bt-drop": 4, "rk-k0": 7, "rk-k1": 8, "dv-k0": 19, "dv-k1": 20}


def _grad(res):
    grad = res["diagnostics"].get("grad_norm")
    return f"{grad:.1e}" if grad is not None else f"r_hat {res['diagnostics'].get('max_rhat', float('nan')):.3f}"


def main(folder: Path) -> None:
    rows = []
    for path in sorted(folder.glob("**/summary.json")):
        res = json.loads(path.read_text())
        name = f"{path.parent.name} ({res['method']})"
        pid = PAPER_ID.get(path.parent.name, "")
        ref = LEADERBOT_D1[pid][1] if pid else None
        ce = res["cross_entropy"]
        top = ", ".join(it["name"] for it in res["items"][:3])
        rows.append(
            f"| {name} | {pid} | {res['n_params']} | {res['nll']:.5f} | "
            f"{'' if ref is None else f'{ref:.4f}'} | {ce['win']:.4f} | {ce['loss']:.4f} | {ce['tie']:.4f} | "
            f"{res['converged']} | {_grad(res)} | {top} |"
        )
    print("# Reference fits on arena-2024 (MAP = MLE)\n")
    print("Produced by `make models` (models/regenerate.sh) through the CLI; NLL is per comparison "
          "(multinomial constant dropped), as in the leaderbot paper's Table D.1. Paper model 8 uses "
          "|η| clipped at 0.01 for the Rao–Kupper threshold; ours uses softplus, a different "
          "(smooth) form, hence the lower NLL.\n")
    print("| fit | paper model | free params | NLL | paper NLL | H_win | H_loss | H_tie | converged | grad | top 3 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    loo_file = folder / "loo-comparison.json"
    if loo_file.exists():
        _loo_section(json.loads(loo_file.read_text()))


def _loo_section(comparison: dict) -> None:
    """The leave-one-out comparison of ``bayesrank compare --format json``, as a table and its sentences."""
    print("\n## Leave-one-out comparison of the tie models (NUTS, one held-out cell = one pair)\n")
    print("Produced by `bayesrank compare` (see models/regenerate.sh). ELPD and its standard error per fit; "
          "the difference to the best with the standard error of the pointwise differences; stacking "
          "weights; PSIS diagnostics (cells with Pareto k > 0.7 are named in the notes below).\n")
    print("| model | ELPD | se | ELPD diff | dse | stacking weight | p_loo | max Pareto k | method |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in comparison["models"]:
        print(f"| {m['name']} | {m['elpd']:.1f} | {m['se']:.1f} | {m['elpd_diff']:.1f} | {m['dse']:.1f} | "
              f"{m['weight']:.3f} | {m['p']:.1f} | {m['max_pareto_k']:.2f} | {m['method']} |")
    print()
    print("\n".join(f"- {w}" for w in comparison["warnings"]))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
