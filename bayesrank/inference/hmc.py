"""Hamiltonian Monte Carlo with a quarter-period trajectory, for the whitened models.

In the coordinates of :mod:`bayesrank.inference.whiten` the posterior is close to a standard
normal. For a standard normal target with an identity mass matrix, Hamiltonian dynamics rotate
each coordinate's (position, momentum) pair at unit angular speed: after an integration time t
the position is q cos t + p sin t. At t = π/2 the new position is the freshly drawn momentum —
an independent draw, for the location and for the scale alike.

NUTS cannot aim at that point: its U-turn criterion stops a trajectory near a *half* period
(t ≈ π, where q → −q), and its multinomial choice favours the far end of the trajectory. The
location then mixes better than independent draws (bulk ESS above the number of draws) while the
squares barely move (q² → q²): tail ESS of about half the draws, and a folded r̂ that lands on
either side of 1.01 by chance with 2 chains × 1000 draws of a few hundred parameters
(``bench/results/nuts.md``). A fixed integration time of π/2, with the step size adapted to the
target acceptance, keeps the sampler exact (Metropolis-corrected leapfrog) and makes the draws of
a near-normal posterior nearly independent in both respects.

The trajectory is fixed, so this sampler is only offered where its premise holds: a model sampled
in whitened coordinates (:func:`sample`'s caller checks). A posterior that is far from normal
there is still sampled correctly, only less efficiently — r̂ and ESS say so. It runs on
numpyro's HMC kernel (JAX: CPU or GPU), chains side by side on as many JAX devices as chains
(:func:`parallel_devices`).
"""

from __future__ import annotations

import os

import numpy as np
import xarray as xr

from bayesrank.runtime.lazy import lazy_module

jax = lazy_module("jax")
numpyro_infer = lazy_module("numpyro.infer")
pymc_jax = lazy_module("pymc.sampling.jax")

#: Integration time of every trajectory: a quarter of the period of a standard normal target.
QUARTER_PERIOD = np.pi / 2
#: Half-width of the uniform jitter of the chains' starting points around the MLE (z = 0), as PyMC's.
START_JITTER = 1.0


def parallel_devices(chains: int) -> None:
    """Let JAX run ``chains`` chains side by side on the CPU: at least as many host devices as
    chains and as CPUs.

    JAX reads the number of CPU devices once, when its first computation starts, so every
    JAX path of bayesrank (nutpie's JAX backend, numpyro, :func:`sample`) calls this before it
    starts; a process whose JAX already ran keeps what it has (numpyro then runs the chains one
    after the other, with the same draws to rounding). On a GPU the devices are the GPU's and this does not apply.
    """
    wanted = max(chains, os.cpu_count() or 1)
    if jax.config.jax_num_cpu_devices >= wanted:
        return
    try:
        jax.config.update("jax_num_cpu_devices", wanted)
    except RuntimeError:  # JAX's backends are already initialised in this process
        pass


def sample(model, n_coordinates: int, *, draws: int, tune: int, chains: int, random_seed: int | None,
           target_accept: float, progressbar: bool, starts: np.ndarray | None = None) -> xr.DataTree:
    """Sample the whitened ``model`` (one flat variable of ``n_coordinates``) by HMC with an
    integration time of π/2.

    Parameters
    ----------
    model : pymc.Model
        The whitened model (:func:`bayesrank.inference.whiten.whitened_model`).
    n_coordinates : int
        Size of its one free variable z.
    draws, tune, chains : int
        Kept draws and warm-up iterations per chain (the step size is adapted during warm-up
        to ``target_accept``; the mass matrix stays the identity: the coordinates are whitened).
    random_seed : int, optional
    target_accept : float
    progressbar : bool
    starts : ndarray, optional
        ``(chains, n_coordinates)`` starting points (default: uniform within
        :data:`START_JITTER` of the MLE, z = 0).

    Returns
    -------
    xarray.DataTree
        ``posterior`` with the draws of z under the model's variable name, and
        ``sample_stats`` (``diverging``, ``n_steps``, ``step_size``, ``acceptance_rate``,
        ``energy``), as :func:`pymc.sample` returns them.
    """
    (name,) = [v.name for v in model.value_vars]
    parallel_devices(chains)
    # pymc returns the negated log-density when asked for a non-negative one: numpyro's potential
    potential = pymc_jax.get_jaxified_logp(model, negative_logp=False)
    kernel = numpyro_infer.HMC(potential_fn=lambda z: potential([z]), trajectory_length=QUARTER_PERIOD,
                               adapt_step_size=True, adapt_mass_matrix=False, target_accept_prob=target_accept)
    parallel = jax.local_device_count() >= chains
    mcmc = numpyro_infer.MCMC(kernel, num_warmup=max(tune, 1), num_samples=draws, num_chains=chains,
                              chain_method="parallel" if parallel else "vectorized", progress_bar=progressbar)
    rng = np.random.default_rng(random_seed)
    start = rng.uniform(-START_JITTER, START_JITTER, size=(chains, n_coordinates))
    if starts is not None:
        start = np.asarray(starts, dtype=float)
    key = jax.random.PRNGKey(int(rng.integers(2**31)))
    fields = ("diverging", "num_steps", "accept_prob", "energy", "adapt_state.step_size")
    mcmc.run(key, init_params=start, extra_fields=fields)
    z = np.asarray(mcmc.get_samples(group_by_chain=True))
    extra = {k: np.asarray(v) for k, v in mcmc.get_extra_fields(group_by_chain=True).items()}
    coords = {"chain": np.arange(chains), "draw": np.arange(draws)}
    posterior = xr.Dataset({name: (("chain", "draw", f"{name}_dim_0"), z)}, coords=coords)
    stats = xr.Dataset({"diverging": (("chain", "draw"), extra["diverging"].astype(bool)),
                        "n_steps": (("chain", "draw"), extra["num_steps"].astype(int)),
                        "step_size": (("chain", "draw"), extra["adapt_state.step_size"]),
                        "acceptance_rate": (("chain", "draw"), extra["accept_prob"]),
                        "energy": (("chain", "draw"), extra["energy"])}, coords=coords,
                       attrs={"sampler": "hmc", "trajectory_length": QUARTER_PERIOD,
                              "chain_method": "parallel" if parallel else "vectorized"})
    return xr.DataTree.from_dict({"posterior": posterior, "sample_stats": stats})


__all__ = ["QUARTER_PERIOD", "parallel_devices", "sample"]
