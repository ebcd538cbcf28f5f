"""Posterior sampling with NUTS (PyMC's sampler by default, :func:`default_sampler`; numpyro on JAX
or nutpie when asked for), or with quarter-period HMC on the whitened coordinates
(:mod:`bayesrank.inference.hmc`), returning the DataTree shape of :mod:`bayesrank.inference.tree`.

The model is the framework's with its weakly informative priors
(:class:`~bayesrank.model.framework.Priors`). After sampling, the pointwise log-likelihood
per cell is stored for LOO, r̂, ESS and divergences are summarised and turned into warnings
in words when they are bad, and the ``estimate`` group gets posterior means and sds and the
posterior-mean outcome probabilities of every cell.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from importlib.util import find_spec

import numpy as np
import xarray as xr

from bayesrank.data.checks import judge_warnings, statistical_warnings
from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.errors import ModelSpecError
from bayesrank.inference import hmc
from bayesrank.inference.structure import cell_arrays, structure_of
from bayesrank.inference.tree import assemble
from bayesrank.inference.warm import MASS_DRAWS, WarmStart, whitened_starts
from bayesrank.inference.whiten import WHITE, Whitening, posterior_of, whitened_model, whitening
from bayesrank.model.framework import OBSERVED, STYLE, Framework
from bayesrank.model.links import TIE_LINKS
from bayesrank.runtime import progress
from bayesrank.runtime.lazy import lazy_module

# imported when sampling starts: a MAP fit never loads ArviZ (bayesrank.runtime.lazy)
az = lazy_module("arviz")
pm = lazy_module("pymc")
quadpotential = lazy_module("pymc.step_methods.hmc.quadpotential")

#: Thresholds of a trustworthy posterior (Vehtari et al. 2021).
RHAT_MAX, ESS_MIN = 1.01, 400

#: Samplers: the NUTS implementations, and ``"hmc"`` (:mod:`bayesrank.inference.hmc`, whitened
#: models only). blackjax is left out: blackjax 1.7 does not run under PyMC 6.4's integration
#: (its kernel rejects PyMC's ``progress_bar`` argument).
SAMPLERS = ("nutpie", "pymc", "numpyro", "hmc")
#: Posterior draws per batch when outcome probabilities are averaged over the posterior.
DRAW_CHUNK = 64
#: NUTS in whitened coordinates (``geometry_tuned``): the largest tree depth considered.
MAX_WHITE_TREE_DEPTH = 8


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
    progressbar: bool | None = None,
    whiten: bool = True,
    geometry_tuned: bool = True,
    warm: WarmStart | None = None,
) -> xr.DataTree:
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
        Non-negative seed.
    target_accept : float
        Target acceptance rate (raise towards 0.99 on divergences): of the step-size adaptation,
        or, for whitened NUTS with ``geometry_tuned``, the acceptance the fixed step size would
        have on a standard normal (:func:`white_tree_depth`).
    sampler : {"nutpie", "pymc", "numpyro", "hmc"}, optional
        NUTS implementation; default PyMC's, whatever is installed (:func:`default_sampler` says
        why). ``numpyro`` runs on JAX (CPU or GPU) and needs ``pip install bayesrank[jax]``. ``"hmc"``:
        Hamiltonian Monte Carlo with a fixed integration time of π/2 in the whitened
        coordinates (:mod:`bayesrank.inference.hmc`; JAX, and ``whiten`` must apply): nearly
        independent draws of a near-normal posterior, where NUTS's draws of the scale are
        correlated.
    progressbar : bool, optional
        Show the sampler's progress bar (PyMC's and nutpie's own, numpyro's tqdm bars); default:
        as :func:`bayesrank.runtime.progress.enabled` decides (the CLI's setting, else whether standard
        error is a terminal).
    whiten : bool
        Sample in coordinates whitened by the maximum-likelihood fit, θ = θ̂ + L z with
        L Lᵀ = Cov(θ̂), starting at θ̂ (:mod:`bayesrank.inference.whiten`): the same posterior,
        several times fewer leapfrog steps per draw. Models without a finite MLE covariance
        are sampled in their own coordinates (``diagnostics["whitened"]`` says which).
    geometry_tuned : bool
        NUTS on whitened coordinates with the step size and tree depth set by the geometry and
        ``target_accept`` (:func:`whitened_nuts_options`): draws of the posterior's scale less
        correlated than with the sampler's own step-size adaptation and tree depth (False), whose
        trajectories stop near a half period (``bench/results/nuts.md``).
    warm : WarmStart, optional
        Start from an earlier posterior (an update, :meth:`bayesrank.Fit.update`): the
        whitening's maximum-likelihood fit starts at ``warm.point``; in whitened coordinates each
        chain starts at its ``warm.chains`` entry (numpyro, PyMC's sampler and ``"hmc"``; nutpie
        takes one starting point for every chain), without jitter, and numpyro's and PyMC's
        samplers take their diagonal mass matrix from the spread of ``warm.draws`` (numpyro keeps
        it, PyMC's adapts on from it; :func:`~bayesrank.inference.warm.whitened_starts`).
        ``diagnostics["warm_start"]`` says what was reused. The chains still warm up for ``tune``
        steps and are judged by r̂, ESS and divergences like any others.

    Returns
    -------
    xarray.DataTree
        ``attrs["bayesrank_diagnostics"]`` has ``max_rhat``, ``min_ess_bulk``,
        ``min_ess_tail``, ``divergences``, ``converged``.
    """
    sampler = None if sampler is None else _check_sampler(sampler)
    if draws < 1 or tune < 0 or chains < 1:
        raise ModelSpecError("draws and chains must be positive and tune non-negative.")
    if random_seed is not None and (not isinstance(random_seed, (int, np.integer)) or random_seed < 0):
        raise ModelSpecError(f"random_seed must be a non-negative integer, got {random_seed!r}.")
    if not 0 < target_accept < 1:
        raise ModelSpecError(f"target_accept must be in (0, 1), got {target_accept}.")
    prepared = framework.prepare(data)
    # with proper priors an infinite MLE is not a problem for the posterior
    notes = [w for w in statistical_warnings(prepared) if "maximum-likelihood" not in w]
    judge_notes, near_duplicates = judge_warnings(data, getattr(framework, "ties", None) in TIE_LINKS)
    notes += judge_notes + independence_notes(framework, data)
    model, _ = framework.build(prepared, prior="weak")
    progressbar = progress.enabled(progressbar)
    t0 = time.perf_counter()
    white = whitening(framework, data, model, None if warm is None else warm.point) if whiten else \
        Whitening(None, None, "whiten=False")
    if sampler == "hmc" and white.theta is None:
        raise ModelSpecError(
            f"sampler='hmc' integrates a quarter period of the whitened coordinates, where the posterior is close "
            f"to a standard normal; {framework.label} is sampled in its own coordinates here ({white.reason}). "
            "Use a NUTS sampler ('nutpie', 'pymc' or 'numpyro')."
        )
    sampled = model if white.theta is None else whitened_model(model, white)
    map_seconds = time.perf_counter() - t0
    # NUTS whose step and tree depth follow the whitened geometry (quarter-period HMC fixes its own)
    tuned = geometry_tuned and sampler != "hmc" and white.theta is not None
    sampler = sampler or default_sampler(tuned)
    starts, inverse_mass, reused = _warm_starts(framework, prepared, white, warm, chains, sampler)
    # the sampler draws its own bar (PyMC's and nutpie's, numpyro's tqdm bars): ours steps aside
    with progress.suspended(), progress.tqdm_sized(progressbar and sampler in ("numpyro", "hmc")):
        idata = _sample(sampler, sampled, white, tuned, draws=draws, tune=tune, chains=chains, cores=cores,
                        random_seed=random_seed, target_accept=target_accept, progressbar=progressbar,
                        starts=starts, inverse_mass=inverse_mass)
    if white.theta is not None:
        idata["posterior"] = posterior_of(idata["posterior"].to_dataset(), white, framework, prepared, model)
    pm.compute_log_likelihood(idata, model=model, progressbar=False)
    seconds = time.perf_counter() - t0
    diagnostics = sampling_diagnostics(idata, (*framework.reported(), STYLE))
    diagnostics.update(seconds=seconds, sampler=sampler, target_accept=target_accept,
                       near_duplicates=[list(d) for d in near_duplicates],
                       whitened=white.theta is not None, whitening_seconds=map_seconds,
                       geometry_tuned=tuned,
                       **({"nutpie_backend": nutpie_backend()} if sampler == "nutpie" else {}),
                       **({"warm_start": {**reused, "whitening_iterations": white.iterations, "tune": tune}}
                          if warm is not None else {}))
    if white.reason and whiten:
        diagnostics["whitening_skipped"] = white.reason
    notes += sampling_warnings(diagnostics)
    posterior = idata["posterior"].to_dataset()
    flat = {name: da.values.reshape(-1, *da.shape[2:]) for name, da in posterior.data_vars.items()}
    found = framework.findings(prepared, {name: x.mean(axis=0) for name, x in flat.items()}, flat)
    notes += found.warnings
    diagnostics.update(found.diagnostics)
    for name in found.hidden:  # not identified by these data: never reported as a number
        posterior[name] = posterior[name] * np.nan
    log_likelihood = idata["log_likelihood"].to_dataset()
    estimate = _posterior_estimate(framework, prepared, posterior, log_likelihood)
    estimate.attrs["cluster"] = json.dumps(list(framework.clusters()))
    extra = {"log_likelihood": log_likelihood, "sample_stats": _text_as_str(idata["sample_stats"].to_dataset())}
    n_params = structure_of(framework, prepared, "flat").n_free - framework.n_gauge(prepared)
    return assemble(framework=framework, data=data, prepared=prepared, method="nuts", posterior=posterior,
                    estimate=estimate, n_params=n_params, diagnostics=diagnostics, warnings=notes, extra=extra)


def _sample(sampler: str, sampled, white: Whitening, tuned: bool, *, draws: int, tune: int, chains: int,
            cores: int | None, random_seed: int | None, target_accept: float, progressbar: bool,
            starts: list | None = None, inverse_mass: np.ndarray | None = None):
    """Run ``sampler`` on the (whitened) model: quarter-period HMC, or NUTS through :func:`pymc.sample`;
    with ``starts`` (and ``inverse_mass``) from :func:`_warm_starts`, the chains start there."""
    if sampler == "hmc":
        return hmc.sample(sampled, white.theta.size, draws=draws, tune=tune, chains=chains,
                          random_seed=random_seed, target_accept=target_accept, progressbar=progressbar,
                          starts=None if starts is None else np.array(starts))
    if sampler == "numpyro" or (sampler == "nutpie" and nutpie_backend() == "jax"):
        hmc.parallel_devices(chains)
    options = _backend_kwargs(sampler)
    if tuned:
        options["nuts"] = whitened_nuts_options(sampler, white.theta.size, target_accept)
    with sampled:
        options.update(_warm_options(sampler, sampled, starts, inverse_mass, options.pop("nuts", {}),
                                     target_accept))
        if "step" not in options:  # a step made here carries its own target acceptance
            options["target_accept"] = target_accept
        with warnings.catch_warnings():
            # numpyro's note when JAX ran in this process before with fewer CPU devices than chains
            # (hmc.parallel_devices): the chains then run one after another, with the same draws
            # to rounding (tests/inference/test_nuts.py); nothing a user can act on
            warnings.filterwarnings("ignore", "There are not enough devices to run parallel chains", UserWarning)
            return pm.sample(draws=draws, tune=tune, chains=chains, cores=cores, random_seed=random_seed,
                             nuts_sampler=sampler, progressbar=progressbar, compute_convergence_checks=False,
                             **options)


def _warm_starts(framework, prepared, white: Whitening, warm: WarmStart | None, chains: int, sampler: str):
    """The chains' starting points and inverse mass matrix in whitened coordinates from ``warm``
    (None, None when there is nothing to reuse), and what is reused, in words."""
    if warm is None or white.theta is None:
        return None, None, {"initial_points": "the sampler's own (the model is not whitened)" if warm else "",
                            "mass_matrix": "the sampler's own"}
    bound = structure_of(framework, prepared, "flat").bind(prepared)
    starts, inverse_mass = whitened_starts(bound, warm, white.theta, white.factor, chains)
    if sampler == "nutpie":
        starts = starts[:1]
    if sampler not in ("numpyro", "pymc"):
        inverse_mass = None
    points = ("the earlier chains' last draws" if sampler != "nutpie" else
              "the first earlier chain's last draw, for every chain (nutpie takes one starting point)")
    mass = ("the earlier draws' variance in the new whitened coordinates" if inverse_mass is not None else
            "the identity of the whitened coordinates" if sampler == "hmc" else "the sampler's own adaptation")
    return starts, inverse_mass, {"initial_points": points if starts else "the sampler's own",
                                  "mass_matrix": mass}


def _warm_options(sampler: str, model, starts, inverse_mass, nuts: dict, target_accept: float) -> dict:
    """``pm.sample`` options that start the chains at ``starts`` (whitened, no jitter) with the
    diagonal inverse mass matrix ``inverse_mass``; ``nuts``: the sampler's NUTS options."""
    if starts is None:
        return {"nuts": nuts} if nuts else {}
    if sampler == "nutpie":
        return {"initvals": {WHITE: starts[0]}, **({"nuts": nuts} if nuts else {})}
    initvals = [{WHITE: z} for z in starts]
    if sampler == "numpyro":
        mass = {} if inverse_mass is None else {"inverse_mass_matrix": inverse_mass, "adapt_mass_matrix": False}
        return {"initvals": initvals, "nuts": {**nuts, **mass, "jitter": False}}
    # PyMC's own NUTS: a step whose diagonal mass matrix adapts on from the earlier draws' variance
    n = len(starts[0])
    potential = quadpotential.QuadPotentialDiagAdapt(
        n, np.mean(starts, axis=0), np.ones(n) if inverse_mass is None else inverse_mass,
        10 if inverse_mass is None else MASS_DRAWS)
    step = pm.NUTS(model.value_vars, potential=potential, **{"target_accept": target_accept, **nuts})
    return {"initvals": initvals, "step": step}


def independence_notes(framework: Framework, data: Comparisons) -> list[str]:
    """A sentence when the data carry clusters of dependent comparisons that the model does not
    allow for (the posterior of a model of independent comparisons is then too narrow)."""
    if data.clusters is None or framework.clusters():
        return []
    names = ", ".join(map(repr, data.clusters.names))
    return [f"the posterior treats the comparisons as independent, but the data carry clusters ({names}): "
            f"model them with RandomEffects(..., cluster={data.clusters.names[0]!r}), or use MAP intervals by "
            "cluster (intervals='sandwich', cluster=...)."]


def nutpie_backend() -> str:
    """nutpie's backend: JAX when installed (XLA's compiled log-density is cached across
    processes, numba's C callback is not), else numba."""
    return "jax" if find_spec("jax") else "numba"


def white_tree_depth(n_coordinates: int, target_accept: float) -> int:
    """The smallest tree depth d whose step size ε = π / 2**d is accepted at ``target_accept``
    or more on a standard normal target of ``n_coordinates``.

    Leapfrog with step ε conserves p²/2 + (1 - ε²/4) q²/2 exactly on a standard normal, so a
    move from q to q' changes the energy by ε²/8 Σ (q'² - q²): about N(σ²/2, σ²) with
    σ = √n ε²/4 for nearly independent q and q' (a quarter period apart), accepted at rate
    2 Φ(-σ/2) = erfc(σ / 2√2).
    """
    for depth in range(1, MAX_WHITE_TREE_DEPTH + 1):
        sigma = math.sqrt(n_coordinates) * (math.pi / 2**depth) ** 2 / 4
        if math.erfc(sigma / (2 * math.sqrt(2))) >= target_accept:
            return depth
    return MAX_WHITE_TREE_DEPTH


def whitened_nuts_options(sampler: str, n_coordinates: int, target_accept: float) -> dict:
    """NUTS options for a whitened model: tree depth at most d (:func:`white_tree_depth`) and the
    step size ε = π / 2**d, fixed (numpyro, PyMC) or adapted to ``target_accept`` but at most ε
    (nutpie: its fixed step size let its mass-matrix adaptation diverge), no jitter. nutpie
    estimates its diagonal mass matrix from the draws' variances (``"draw_diag"``), as PyMC and
    numpyro do: its default estimate from the gradients left the tie coordinates of Davidson
    k_tie=1 on arena-2024 with a bulk ESS of 295–455 at this step (``bench/results/nuts.md``).

    In whitened coordinates the posterior is close to a standard normal: the leapfrog dynamics
    rotate each coordinate, after an integration time t the position is q cos t + p sin t. A tree
    of depth d spans 2**d - 1 steps; NUTS takes its draw from the half added last (biased
    progressive sampling), on average 2**(d-1) steps = π/2 away from the start, where the new
    position is the fresh momentum. Left to itself NUTS adapts ε to ``target_accept`` and stops
    where the trajectory turns back, near t = π (q → -q): the location mixes, the squares q²
    repeat, and the folded r̂ sits at 1.01 (``bench/results/nuts.md``). Reaching depth d is the
    design here, not a problem, and is not reported as one. ε is set for a near-normal target
    (acceptance rates on arena-2024 in ``bench/results/nuts.md``); a posterior far from normal
    shows as divergences or a low ESS, reported as usual, and ``geometry_tuned=False`` adapts ε.

    Parameters
    ----------
    sampler : {"nutpie", "numpyro", "pymc"}
    n_coordinates : int
        Size of the whitened coordinates (PyMC scales its step by ``n ** -0.25``).
    target_accept : float

    Returns
    -------
    dict
        The ``nuts=`` options of :func:`pymc.sample` for ``sampler``.
    """
    depth = white_tree_depth(n_coordinates, target_accept)
    step = math.pi / 2**depth
    if sampler == "nutpie":  # mass matrix from the draws' variances, as PyMC's and numpyro's
        return {"maxdepth": depth, "max_step_size": step, "initial_step": step, "step_size_jitter": 0.0,
                "adaptation": "draw_diag"}
    if sampler == "numpyro":
        return {"max_tree_depth": depth, "step_size": step, "adapt_step_size": False}
    return {"max_treedepth": depth, "early_max_treedepth": depth, "step_scale": step * n_coordinates**0.25,
            "adapt_step_size": False}


def _backend_kwargs(sampler: str) -> dict:
    if sampler != "nutpie":
        return {}
    backend = nutpie_backend()
    return {"compile_kwargs": {"backend": backend, "gradient_backend": "jax" if backend == "jax" else "pytensor"}}


def _text_as_str(stats: xr.Dataset) -> xr.Dataset:
    """Text-valued sample statistics (nutpie's divergence messages: a string or NaN per draw) as
    strings, empty where there is none — what NetCDF stores, so a saved fit reloads equal."""
    for name, da in stats.data_vars.items():
        if da.dtype == object:
            text = np.array(["" if not isinstance(v, str) else v for v in da.values.ravel()]).reshape(da.shape)
            stats[name] = da.copy(data=text)
    return stats


def _posterior_estimate(framework, prepared, posterior: xr.Dataset, log_likelihood: xr.Dataset) -> xr.Dataset:
    """Posterior means and sds of every variable, the posterior-mean outcome probabilities of
    every cell (as logs) and the posterior mean of the total log-likelihood."""
    stacked = posterior.stack(sample=("chain", "draw"))
    out = {}
    for name, da in stacked.data_vars.items():
        out[name] = da.mean("sample")
        out[f"{name}_se"] = da.std("sample", ddof=1)
    probs = posterior_probabilities(framework, prepared, posterior, cell_arrays(prepared))
    with np.errstate(divide="ignore"):
        out["cell_log_probs"] = xr.DataArray(np.log(probs), dims=("cell", "outcome"),
                                             coords={"outcome": list(OUTCOMES)})
    total = log_likelihood[OBSERVED].sum([d for d in log_likelihood[OBSERVED].dims if d not in ("chain", "draw")])
    out["loglik"] = total.mean()
    return xr.Dataset(out).assign_coords(cell=np.arange(prepared.n_cells)).assign_attrs(interval="quantile")


def posterior_probabilities(framework, prepared, posterior: xr.Dataset, cells: dict) -> np.ndarray:
    """Posterior-mean outcome probabilities ``(n, 3)`` of the given cells, averaged over every
    draw in batches (memory bounded by :data:`DRAW_CHUNK` × cells)."""
    structure = structure_of(framework, prepared, "flat")
    flat = {n: posterior[n].values.reshape(-1, *posterior[n].shape[2:]) for n in structure.natural.names}
    n_draws = next(iter(flat.values())).shape[0]
    total = np.zeros((len(cells["item_a"]), 3))
    for start in range(0, n_draws, DRAW_CHUNK):
        batch = {name: value[start:start + DRAW_CHUNK] for name, value in flat.items()}
        total += np.exp(structure.log_probs(batch, cells, draws=True)).sum(axis=0)
    return total / n_draws


def default_sampler(geometry_tuned: bool) -> str:
    """The NUTS implementation used when none is named: PyMC's own sampler, whatever is installed.

    One default, the same on every installation, so that a fit's numbers do not depend on which
    optional packages happen to be present (numpyro comes with the ``jax`` extra; nutpie's
    backend follows JAX too). PyMC's sampler is the one that needs nothing beyond PyMC itself,
    takes the fixed step size of geometry-tuned NUTS (:func:`whitened_nuts_options`; nutpie can
    only cap its adapted step), adapts its own step elsewhere, and draws its progress bar in any
    terminal. numpyro, nutpie and ``"hmc"`` stay one argument away (``sampler=``, CLI
    ``--sampler``): ``bench/results/nuts.md`` compares their speed. ``geometry_tuned`` is kept for
    callers that ask per geometry; the answer is the same. The sampler used is recorded in
    ``fit.diagnostics["sampler"]`` and printed by the CLI's table.
    """
    return "pymc"


def _check_sampler(sampler: str) -> str:
    """A named NUTS implementation; fails early, in words, when it is unknown or not installed."""
    if sampler not in SAMPLERS:
        raise ModelSpecError(f"unknown sampler {sampler!r}; use one of {', '.join(SAMPLERS)}.")
    needs = {"nutpie": ["nutpie"], "numpyro": ["jax", "numpyro"], "hmc": ["jax", "numpyro"]}
    missing = [pkg for pkg in needs.get(sampler, []) if find_spec(pkg) is None]
    if missing:
        extra = "jax" if sampler in ("numpyro", "hmc") else sampler
        raise ModelSpecError(
            f"sampler {sampler!r} needs {', '.join(missing)}, which is not installed: "
            f"pip install 'bayesrank[{extra}]' (or choose sampler='pymc')."
        )
    return sampler


def sampling_diagnostics(idata, var_names) -> dict:
    """Worst r̂ and ESS over the reported variables, and the number of divergences."""
    post = idata["posterior"].to_dataset()
    names = [v for v in var_names if v in post]
    # an entry held constant by a constraint (a fixed loading) has no within-chain variance: its
    # r̂ is 0/0, NaN, and the maximum below skips it
    with np.errstate(divide="ignore", invalid="ignore"):
        summary = az.summary(idata, var_names=names, kind="diagnostics")
    stats = idata["sample_stats"]
    n_div = int(np.sum(stats["diverging"].values)) if "diverging" in stats else 0
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
            "explore reliably; " + ("the step size was set for a near-normal posterior: sample with "
                                    "geometry_tuned=False (step size adapted to target_accept), "
                                    if diag.get("geometry_tuned") else "")
            + "raise target_accept (e.g. 0.99; CLI: --target-accept) or simplify the model."
        )
    if diag.get("chains", 2) < 2:
        out.append(
            "r_hat compares chains and this run has one, so convergence is unchecked (not reported as "
            "converged); sample two or more chains (chains=4; CLI: --chains 4)."
        )
    elif diag["max_rhat"] != diag["max_rhat"]:
        out.append(
            "r_hat could not be computed (too few draws per chain), so convergence is unchecked (not "
            "reported as converged); draw more samples."
        )
    elif not diag["max_rhat"] <= RHAT_MAX:
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


__all__ = [
    "DRAW_CHUNK", "MAX_WHITE_TREE_DEPTH", "SAMPLERS", "default_sampler", "fit_nuts", "independence_notes",
    "nutpie_backend", "posterior_probabilities", "sampling_diagnostics", "sampling_warnings", "white_tree_depth",
    "whitened_nuts_options"
]
