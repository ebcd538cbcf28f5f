"""Where a Thurstonian MAP fit ends from its framework's starting values and from the estimate of the
model it contains, on the leaderbot paper's Table D.1 models with a covariance (arena-2024; ``12abs``: model 12 with the
paper's |h| threshold).

    .venv/bin/python bench/nested_starts.py [--models 2,5,11,...] > bench/results/nested-starts.md

Starts compared, per model:

* **own**: the framework's starting values (``Framework.initial_values``: μ̃ from the items' empirical
  logits, t = 1, the loading chart's own start);
* **nested**: for Σ = D (k_cov = 0), the estimate of the model without covariance (``Framework.nested``,
  the default start since it was introduced); for Σ = D + ΛΛᵀ, the estimate of Σ = D (itself started
  from the model without covariance) with the loadings at the chart's own start.

Each row: the log-likelihood each run ends at, against the previous engine's maximum
(``bench/results/d1-previous-engine.jsonl``, in units of the total log-likelihood), whether the fit
converged, and its CPU seconds (the nested start's include its nested fits). One process, BLAS pinned to
one thread.
"""

import argparse
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import json  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import bayesrank as br  # noqa: E402
from bayesrank.inference.structure import structure_of  # noqa: E402
from bayesrank.model.papers import leaderbot_model  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BEFORE = ROOT / "bench" / "results" / "d1-previous-engine.jsonl"
DEFAULT = "2,5,11,12,13,14,23,24,25,26,12abs,3,6,15,16,17,27,28"


def timed_fit(framework, data, init):
    """A MAP fit from ``init`` and its CPU seconds."""
    start = time.process_time()
    fit = br.fit(framework, data, init=init)
    return fit, time.process_time() - start


def loglik(fit) -> float:
    """The total log-likelihood at a fit's estimate."""
    return float(fit.tree["estimate"]["loglik"])


def own_start(framework, data):
    """The fit from the framework's starting values, passed by name (so no nested fit is made)."""
    return timed_fit(framework, data, framework.initial_values(framework.prepare(data)))


def nested_start(framework, data):
    """The fit from the nested model's estimate: the default start of Σ = D; for k_cov ≥ 1, Σ = D's
    estimate (scores, dispersions, tie variables) with the loadings at the chart's own start."""
    if framework.k_cov == 0:
        return timed_fit(framework, data, None)
    diagonal, seconds = timed_fit(replace(framework, k_cov=0), data, None)
    estimate = diagonal.tree["estimate"]
    names = structure_of(framework, framework.prepare(data)).natural.names
    init = {name: estimate[name].values for name in names if name in estimate and name != "cov_raw_loading"}
    fit, more = timed_fit(framework, data, init)
    return fit, seconds + more


def main():
    """The table, on standard output (the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=DEFAULT)
    args = parser.parse_args()
    arena = br.load("arena-2024")
    before = {r["id"]: r["nll"] for r in map(json.loads, BEFORE.read_text().splitlines())}
    print("# Starts of the Thurstonian MAP fits: own against nested\n")
    print("`.venv/bin/python bench/nested_starts.py` (module docstring). Δ ℓ: the log-likelihood a run ends at "
          "minus the previous engine's maximum, in units of the total log-likelihood (≥ −0.01 is issue 43's "
          "line); **bold**: the start a fit uses by default.\n")
    print("| id | model | Δ ℓ own start | converged | CPU s | Δ ℓ nested start | converged | CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    totals = {"own": 0.0, "nested": 0.0}
    for mid in (int(x) if x.isdigit() else x for x in args.models.split(",") if x):
        framework = leaderbot_model(mid)
        n = framework.prepare(arena).n_comparisons
        previous = -before[mid] * n
        cells = []
        for name, run in (("own", own_start), ("nested", nested_start)):
            fit, seconds = run(framework, arena)
            gain = loglik(fit) - previous
            totals[name] += gain
            default = (name == "nested") == (framework.nested() is not None)
            text = f"{gain:+.3g}"
            cells += [f"**{text}**" if default else text, str(fit.converged), f"{seconds:.1f}"]
        print(f"| {mid} | {framework.label} | " + " | ".join(cells) + " |", flush=True)
    print(f"\nSum of Δ ℓ over these models: own start {totals['own']:+.4g}, nested start {totals['nested']:+.4g}.")


if __name__ == "__main__":
    main()
