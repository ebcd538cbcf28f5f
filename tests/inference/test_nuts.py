"""NUTS fits: diagnostics, agreement with the MAP asymptotics, pointwise log-likelihood, save/load."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(11)
    return simulate_counts(np.array([-0.8, -0.2, 0.1, 0.4, 0.5]), 400, rng, eta=-0.3)


@pytest.fixture(scope="module")
def small_nuts(small):
    # 2 × 1000 draws: at 2 × 500, r̂ over 1.01 happened by chance for 1 of 10 seeds, whitened
    # or not (the sampled coordinates change the draws of a seed, not their quality); the step
    # size adapted (geometry_tuned=False): NUTS as the samplers ship it, the HMC test's peer
    return br.fit(br.Davidson(k_tie=0), small, method="nuts", draws=1000, tune=500, chains=2, random_seed=5,
                  geometry_tuned=False)


def test_nuts_converges_and_matches_map(small, small_nuts):
    post = small_nuts
    assert post.method == "nuts"
    assert post.converged, (post.diagnostics, post.warnings)
    assert post.diagnostics["divergences"] == 0
    assert post.diagnostics["max_rhat"] <= 1.01
    mle = br.fit(br.Davidson(k_tie=0), small)
    # 4000 comparisons: the posterior is close to the asymptotic normal
    np.testing.assert_allclose(post.scores(), mle.scores(), atol=0.05)
    ratio = post.leaderboard().set_index("name")["se"] / mle.leaderboard().set_index("name")["se"]
    assert ratio.between(0.8, 1.25).all(), ratio
    assert abs(post.scores().sum()) < 1e-8


def test_nuts_stores_pointwise_loglik_per_cell(small, small_nuts):
    ll = small_nuts.tree["log_likelihood"]["outcomes"]
    assert ll.sizes["cell"] == small.n_cells
    assert small_nuts.nll == pytest.approx(-ll.values.sum(axis=-1).mean() / small.n_comparisons)


def test_nuts_save_load(tmp_path, small_nuts):
    again = br.Fit.load(small_nuts.save(tmp_path / "post.nc"))
    assert again.method == "nuts"
    pd.testing.assert_frame_equal(again.leaderboard(), small_nuts.leaderboard())
    pd.testing.assert_frame_equal(again.differences(), small_nuts.differences())


def test_bad_sampler_name(small):
    with pytest.raises(br.ModelSpecError, match="unknown sampler"):
        br.fit(br.BradleyTerry(), small, method="nuts", sampler="emcee")
    with pytest.raises(br.ModelSpecError, match="unknown sampler"):
        br.fit(br.BradleyTerry(), small, method="nuts", sampler="blackjax")


@pytest.mark.slow
def test_arena_nuts_sd_matches_wald_se(arena):
    """Foundation issue: MAP Wald se of score differences within 10% of the NUTS posterior sd."""
    mle = br.fit(br.Davidson(k_tie=0), arena)
    post = br.fit(br.Davidson(k_tie=0), arena, method="nuts", draws=1000, tune=1000, chains=4, random_seed=1)
    assert post.diagnostics["max_rhat"] <= 1.01
    assert post.diagnostics["divergences"] == 0
    dm = mle.differences().set_index(["item_i", "item_j"])
    dn = post.differences().set_index(["item_i", "item_j"])
    common = dm.index.intersection(dn.index)
    ratio = dn.loc[common, "se"] / dm.loc[common, "se"]
    assert ratio.between(0.9, 1.1).all(), ratio.describe()


def test_jax_sampler_runs_on_cpu(small):
    """The JAX (GPU-capable) NUTS path, exercised on the CPU; `make test` installs it."""
    sampler = "numpyro"
    post = br.fit(br.Davidson(k_tie=0), small, method="nuts", sampler=sampler, draws=300, tune=300, chains=2,
                  random_seed=3)
    assert post.diagnostics["sampler"] == sampler
    assert post.diagnostics["max_rhat"] <= 1.02
    mle = br.fit(br.Davidson(k_tie=0), small)
    np.testing.assert_allclose(post.scores(), mle.scores(), atol=0.06)
    assert post.tree["log_likelihood"]["outcomes"].sizes["cell"] == small.n_cells


def test_numpyro_draws_do_not_depend_on_earlier_jax_use(small):
    """A process whose JAX ran before with one CPU device (another library's JAX code) runs numpyro's
    chains one after another: the same draws to rounding (XLA compiles the chains apart instead of
    side by side), and no warning about it."""
    script = (
        "import sys, warnings, jax, jax.numpy as jnp, numpy as np\n"
        "jax.config.update('jax_num_cpu_devices', 1); jnp.ones(2).sum().block_until_ready()\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
        "import bayesrank as br\n"
        "from tests.conftest import simulate_counts\n"
        "small = simulate_counts(np.array([-0.8, -0.2, 0.1, 0.4, 0.5]), 400, np.random.default_rng(11), eta=-0.3)\n"
        "with warnings.catch_warnings():\n"
        "    warnings.simplefilter('error')\n"
        "    post = br.fit(br.Davidson(), small, method='nuts', sampler='numpyro', draws=50, tune=50, chains=2,\n"
        "                  random_seed=3)\n"
        "print(post.tree['posterior']['score'].values.ravel().tolist())\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    here = br.fit(br.Davidson(), small, method="nuts", sampler="numpyro", draws=50, tune=50, chains=2, random_seed=3)
    there = np.array(json.loads(done.stdout.strip().splitlines()[-1]))
    np.testing.assert_allclose(there, here.tree["posterior"]["score"].values.ravel(), rtol=0, atol=1e-12)


def _lag_one(x: np.ndarray) -> float:
    """Mean over chains of the lag-1 autocorrelation of ``x`` (chain, draw)."""
    x = x - x.mean(axis=1, keepdims=True)
    return float(np.mean([np.sum(c[1:] * c[:-1]) / np.sum(c * c) for c in x]))


def _square_autocorrelation(fit) -> float:
    """Lag-1 autocorrelation of the squared standardised scores, averaged over items: how slowly
    the sampler moves the posterior's scale (what the folded r̂ and tail ESS measure)."""
    s = fit.tree["posterior"]["score"].values
    z = (s - s.mean(axis=(0, 1))) / s.std(axis=(0, 1))
    return float(np.mean([_lag_one(z[..., i] ** 2) for i in range(z.shape[-1])]))


@pytest.fixture(scope="module")
def small_hmc(small):
    return br.fit(br.Davidson(k_tie=0), small, method="nuts", sampler="hmc", draws=1000, tune=500, chains=2,
                  random_seed=5)


def test_quarter_period_hmc_matches_map_and_moves_the_scale(small, small_nuts, small_hmc):
    """HMC with a π/2 trajectory in whitened coordinates: the same posterior as NUTS and the MLE's
    asymptotics, and draws of the scale nearly independent where NUTS's are correlated (its
    U-turn stops near a half period, q → −q, so q² repeats)."""
    post = small_hmc
    assert post.diagnostics["sampler"] == "hmc" and post.diagnostics["whitened"]
    assert post.converged, (post.diagnostics, post.warnings)
    assert post.diagnostics["divergences"] == 0 and post.diagnostics["max_rhat"] <= 1.01
    mle = br.fit(br.Davidson(k_tie=0), small)
    np.testing.assert_allclose(post.scores(), mle.scores(), atol=0.05)
    ratio = post.leaderboard().set_index("name")["se"] / mle.leaderboard().set_index("name")["se"]
    assert ratio.between(0.85, 1.15).all(), ratio
    # measured: HMC 0.02–0.05, nutpie 0.31–0.33 (seeds 5, 6); lag-1 noise is about 0.02
    assert _square_autocorrelation(post) < 0.12
    assert _square_autocorrelation(small_nuts) > 0.2
    assert post.diagnostics["min_ess_tail"] > small_nuts.diagnostics["min_ess_tail"]
    assert post.tree["log_likelihood"]["outcomes"].sizes["cell"] == small.n_cells


def _location_autocorrelation(fit) -> float:
    """Lag-1 autocorrelation of the scores, averaged over items."""
    s = fit.tree["posterior"]["score"].values
    return float(np.mean([_lag_one(s[..., i]) for i in range(s.shape[-1])]))


def test_white_tree_depth_follows_dimension_and_target():
    from bayesrank.inference.nuts import white_tree_depth

    # a standard normal in n coordinates: step π/2**d accepted at erfc(√n (π/2**d)² / 8√2)
    assert white_tree_depth(5, 0.9) == 3 and white_tree_depth(257, 0.9) == 4 and white_tree_depth(1000, 0.9) == 5
    depths = [white_tree_depth(n, 0.9) for n in (1, 10, 100, 1000, 10_000)]
    assert depths == sorted(depths)
    assert white_tree_depth(257, 0.99) > white_tree_depth(257, 0.9) > white_tree_depth(257, 0.6)


@pytest.fixture(scope="module")
def small_nuts_tuned(small):
    return br.fit(br.Davidson(k_tie=0), small, method="nuts", draws=1000, tune=500, chains=2, random_seed=5)


@pytest.mark.parametrize("sampler", ["nutpie", "numpyro", "pymc"])
def test_whitened_nuts_options_set_depth_and_step(sampler):
    from bayesrank.inference.nuts import whitened_nuts_options

    options = whitened_nuts_options(sampler, 257, 0.9)
    depth = next(v for k, v in options.items() if k in ("maxdepth", "max_tree_depth", "max_treedepth"))
    assert depth == 4
    step = {"nutpie": "max_step_size", "numpyro": "step_size"}.get(sampler)
    assert (options[step] if step else options["step_scale"] / 257**0.25) == pytest.approx(np.pi / 16)


def test_geometry_tuned_nuts_lands_a_quarter_period_away(small, small_nuts, small_nuts_tuned):
    """Whitened NUTS with the step π/2**d and depth d (d = 3 for these 5 coordinates): its draws
    land on average π/2 from the start, so the location's lag-1 autocorrelation is near 0; with
    the step size adapted, NUTS stops near a half period and the location is anti-correlated."""
    from bayesrank.inference.nuts import default_sampler

    tuned, adapted = small_nuts_tuned, small_nuts
    assert tuned.diagnostics["geometry_tuned"] and not adapted.diagnostics["geometry_tuned"]
    assert tuned.diagnostics["sampler"] == default_sampler(True) != "nutpie"  # a sampler that fixes its step
    stats = tuned.tree["sample_stats"]
    np.testing.assert_allclose(stats["step_size"].values, np.pi / 8, rtol=1e-6)
    assert 6.5 < float(stats["n_steps"].mean()) <= 7  # nearly every tree reaches depth 3: by design
    # the step's acceptance predicted for a standard normal is ≥ target_accept (0.9)
    assert float(stats["acceptance_rate"].mean()) >= 0.9
    # measured (seeds 5, 6): tuned 0.015, 0.040; adapted -0.116, -0.135; lag-1 noise is about 0.02
    assert _location_autocorrelation(tuned) > -0.05
    assert _location_autocorrelation(adapted) < -0.08
    assert tuned.converged and adapted.converged
    np.testing.assert_allclose(tuned.scores(), adapted.scores(), atol=0.03)


def test_default_sampler_is_the_same_whatever_is_installed(monkeypatch):
    """PyMC's sampler, with or without JAX, numpyro or nutpie, and for either geometry."""
    from bayesrank.inference import nuts

    for installed in ({"jax", "numpyro", "nutpie"}, {"nutpie"}, set()):
        monkeypatch.setattr(nuts, "find_spec", lambda name, installed=installed: name if name in installed else None)
        assert nuts.default_sampler(True) == nuts.default_sampler(False) == "pymc"


def test_quarter_period_hmc_needs_whitened_coordinates(small):
    with pytest.raises(br.ModelSpecError, match="sampler='hmc'.*own coordinates.*whiten=False"):
        br.fit(br.Davidson(k_tie=0), small, method="nuts", sampler="hmc", whiten=False, draws=10, tune=10, chains=1)


def test_cli_sampler_choices_are_the_samplers():
    from bayesrank import cli
    from bayesrank.inference import nuts

    assert cli.SAMPLERS == nuts.SAMPLERS


def test_refits_and_cli_keep_the_sampling_coordinates_and_step(small_nuts):
    """LOO's exact refits sample as the fit did (whitened or not, geometry-tuned or adapted), and
    the CLI passes --no-geometry-tuned through."""
    from bayesrank.cli import _fit_kwargs, build_parser
    from bayesrank.evaluation.compare import _Refits

    refit = _Refits(small_nuts).kwargs
    assert small_nuts.diagnostics["geometry_tuned"] is False and small_nuts.diagnostics["whitened"] is True
    assert refit["geometry_tuned"] is False and refit["whiten"] is True
    args = build_parser().parse_args(["fit", "arena-2024", "--model", "bt", "--method", "nuts", "--no-geometry-tuned",
                                      "--no-whiten"])
    assert _fit_kwargs(args)["geometry_tuned"] is False and _fit_kwargs(args)["whiten"] is False
    args = build_parser().parse_args(["fit", "arena-2024", "--model", "bt", "--method", "nuts"])
    assert _fit_kwargs(args)["geometry_tuned"] is True


def _agreement(framework, data, sampler):
    """NUTS and MAP on data large enough that the posterior sits on the MLE: every reported
    variable's posterior mean within 4 standard errors of the MLE (and every variable named the
    same), and the predicted outcome probabilities of every compared pair likewise."""
    mle = br.fit(framework, data)
    post = br.fit(framework, data, method="nuts", draws=400, tune=400, chains=2, random_seed=3, sampler=sampler)
    est_map, est_nuts = mle.tree["estimate"], post.tree["estimate"]
    for name in framework.reported():
        if name not in est_map:
            continue
        value, se = est_map[name].values, est_map[f"{name}_se"].values
        mean, sd = est_nuts[name].values, est_nuts[f"{name}_se"].values
        assert np.all(np.abs(mean - value) <= 4 * np.maximum(se, sd) + 1e-9), (name, mean, value, se)
    names = np.asarray(data.items)
    pairs = {"judge": np.asarray(data.judges)[data.judge]} if data.judges is not None else {}
    cells = mle.predict(names[data.a], names[data.b], **pairs)
    again = post.predict(names[data.a], names[data.b], **pairs)
    for column in ("p_win_a", "p_win_b", "p_tie"):
        if column in cells:
            sd = (cells[f"{column}_upper"] - cells[f"{column}_lower"]) / (2 * 1.96)
            assert np.all(np.abs(again[column] - cells[column]) <= 4 * sd + 1e-6), column


@pytest.fixture(scope="module")
def large():
    rng = np.random.default_rng(21)
    return simulate_counts(np.array([-0.9, -0.3, 0.0, 0.2, 0.7]), 3000, rng, eta=-1.0)


@pytest.mark.parametrize("sampler", ["nutpie", "numpyro"])
@pytest.mark.parametrize("framework", [br.Davidson(k_tie=1), br.RaoKupper(k_tie=1)], ids=lambda f: f.label)
def test_nuts_agrees_with_map_on_tie_factors(large, framework, sampler):
    """The map from the sampler's coordinates back to the model's variables is the model's own: the
    factored tie thresholds' posterior sits on their MLE, and so do the predicted tie probabilities."""
    _agreement(framework, large, sampler)


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["nutpie", "numpyro"])
@pytest.mark.parametrize("framework", [br.BradleyTerry(), br.BradleyTerry(ties="drop", k_cov=0), br.Davidson(k_tie=0),
                                       br.Davidson(k_tie=2, tie_intercept=True), br.RaoKupper(k_tie=0, k_cov=1)],
                         ids=lambda f: f.label)
def test_nuts_agrees_with_map_for_every_paired_framework(large, framework, sampler):
    _agreement(framework, large, sampler)


@pytest.mark.slow
@pytest.mark.parametrize("sampler", ["nutpie", "numpyro"])
@pytest.mark.parametrize("framework", [br.JudgeAware(), br.BTL(), br.JudgeAware(ties="davidson"),
                                       br.HJA(rank=1)], ids=lambda f: f.label)
def test_nuts_agrees_with_map_for_the_judge_frameworks(framework, sampler):
    _agreement(framework, br.load("mtbench-judges"), sampler)


@pytest.mark.parametrize("chains", [1, 4])
def test_one_chain_is_unchecked_not_chains_disagreeing(chains):
    """r̂ compares chains: a one-chain run is called unchecked, never "the chains disagree",
    and is not reported as converged; well-mixed chains raise no r̂ warning."""
    import arviz as az

    from bayesrank.inference.nuts import sampling_diagnostics, sampling_warnings

    rng = np.random.default_rng(0)
    tree = az.from_dict({"posterior": {"x": rng.normal(size=(chains, 2000))},
                         "sample_stats": {"diverging": np.zeros((chains, 2000), bool)}})
    diag = sampling_diagnostics(tree, ["x"])
    rhat = [w for w in sampling_warnings(diag) if "r_hat" in w]
    assert not any("disagree" in w for w in rhat)
    if chains == 1:
        assert len(rhat) == 1 and "one" in rhat[0] and not diag["converged"]
    else:
        assert rhat == [] and diag["converged"]
