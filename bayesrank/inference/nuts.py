"""Posterior sampling with NUTS (nutpie when installed — PyMC's own choice — or PyMC's sampler).

The model is the framework's with its weakly informative priors
(:class:`bayesrank.frameworks.base.Priors`). After sampling, the pointwise log-likelihood
per cell is stored for LOO, and r̂, ESS and divergences are summarised and turned into
warnings in words when they are bad.
"""

from __future__ import annotations

import time

import arviz as az
import numpy as np
import pymc as pm

from bayesrank.data.checks import statistical_warnings
from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import ModelSpecError
from bayesrank.frameworks.base import OBSERVED, Framework

#: Thresholds of a trustworthy posterior (Vehtari et al. 2021).
RHAT_MAX, ESS_MIN = 1.01, 400

#: NUTS implementations. blackjax is left out: blackjax 1.7 does not run under PyMC 6.4's
#: integration (its kernel rejects PyMC's ``progress_bar`` argument).
SAMPLERS = ("nutpie", "pymc", "numpyro")


def fit_nuts(
    framework: Framework,
    data: Comparisons,
    *,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    cores: int | None = None,
    random_seed: int | None = None,
    target_accept: float = 0.9,
    sampler: str | None = None,
    progressbar: bool = False,
):
    """Sample the posterior with NUTS.

    Parameters
    ----------
    framework : Framework
    data : Comparisons
    draws, tune, chains : int
        Kept draws, tuning steps and chains.
    cores : int, optional
        Parallel chains (PyMC's default: the number of CPUs, at most 4).
    random_seed : int, optional
    target_accept : float
        NUTS target acceptance rate (raise towards 0.99 on divergences).
    sampler : {"nutpie", "pymc", "numpyro"}, optional
        NUTS implementation; default is PyMC's choice (nutpie when installed). ``numpyro``
        runs on JAX (CPU or GPU) and needs ``pip install bayesrank[jax]``.
    progressbar : bool

    Returns
    -------
    Fit
        With ``method="nuts"``; ``fit.diagnostics`` has ``max_rhat``, ``min_ess_bulk``,
        ``min_ess_tail``, ``divergences``.
    """
    from bayesrank.results import Fit

    if sampler is not None and sampler not in SAMPLERS:
        raise ModelSpecError(f"unknown sampler {sampler!r}; use one of {', '.join(SAMPLERS)}.")
    if sampler is None:  # PyMC's own default: nutpie when installed
        from importlib.util import find_spec

        sampler = "nutpie" if find_spec("nutpie") else "pymc"
    _check_sampler_installed(sampler)
    if draws < 1 or tune < 0 or chains < 1:
        raise ModelSpecError("draws and chains must be positive and tune non-negative.")
    prepared = framework.prepare(data)
    notes = statistical_warnings(prepared)
    # with proper priors an infinite MLE is not a problem for the posterior
    notes = [w for w in notes if "maximum-likelihood" not in w and "MLE" not in w]
    built = framework.build(prepared, prior="weak")
    t0 = time.perf_counter()
    with built.model:
        tree = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            random_seed=random_seed,
            target_accept=target_accept,
            nuts_sampler=sampler,
            progressbar=progressbar,
            compute_convergence_checks=False,
        )
        pm.compute_log_likelihood(tree, model=built.model, progressbar=False)
    seconds = time.perf_counter() - t0
    diagnostics = sampling_diagnostics(tree, framework.reported())
    diagnostics["seconds"] = seconds
    diagnostics["sampler"] = sampler
    notes += sampling_warnings(diagnostics)
    return Fit.from_nuts(framework, data, prepared, tree=tree, diagnostics=diagnostics, warnings=notes)


def _check_sampler_installed(sampler: str | None) -> None:
    """Fail early, in words, when the chosen NUTS implementation is not installed."""
    from importlib.util import find_spec

    needs = {"nutpie": ["nutpie"], "numpyro": ["jax", "numpyro"]}
    missing = [pkg for pkg in needs.get(sampler, []) if find_spec(pkg) is None]
    if missing:
        extra = "jax" if sampler == "numpyro" else sampler
        raise ModelSpecError(
            f"sampler {sampler!r} needs {', '.join(missing)}, which is not installed: "
            f"pip install 'bayesrank[{extra}]' (or choose sampler='pymc')."
        )


def sampling_diagnostics(tree, var_names) -> dict:
    """Worst r̂ and ESS over the reported variables, and the number of divergences."""
    post = tree["posterior"].to_dataset()
    names = [v for v in var_names if v in post]
    summary = az.summary(tree, var_names=names, kind="diagnostics")
    divergent = tree["sample_stats"]["diverging"].values if "diverging" in tree["sample_stats"] else np.zeros(1)
    n_div = int(np.sum(divergent))
    out = {
        "max_rhat": float(summary["r_hat"].max()),
        "min_ess_bulk": float(summary["ess_bulk"].min()),
        "min_ess_tail": float(summary["ess_tail"].min()),
        "divergences": n_div,
        "chains": int(post.sizes["chain"]),
        "draws": int(post.sizes["draw"]),
    }
    out["converged"] = bool(
        out["max_rhat"] <= RHAT_MAX and n_div == 0 and min(out["min_ess_bulk"], out["min_ess_tail"]) >= ESS_MIN
    )
    return out


def sampling_warnings(diag: dict) -> list[str]:
    """Plain-English warnings for bad r̂, low ESS and divergences."""
    out = []
    if diag["divergences"]:
        out.append(
            f"{diag['divergences']} divergent transitions: the posterior has regions NUTS cannot "
            "explore reliably; raise target_accept (e.g. 0.99) or simplify the model."
        )
    if not diag["max_rhat"] <= RHAT_MAX:
        out.append(
            f"r_hat up to {diag['max_rhat']:.3f} (> {RHAT_MAX}): the chains disagree; run longer "
            "(more tune and draws) before trusting the posterior."
        )
    ess = min(diag["min_ess_bulk"], diag["min_ess_tail"])
    if not ess >= ESS_MIN:
        out.append(
            f"effective sample size as low as {ess:.0f} (< {ESS_MIN}): intervals and ranks are "
            "imprecise; draw more samples."
        )
    return out


__all__ = ["OBSERVED", "fit_nuts", "sampling_diagnostics", "sampling_warnings"]
