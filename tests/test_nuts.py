"""NUTS fits: diagnostics, agreement with the MAP asymptotics, pointwise log-likelihood, save/load."""

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
    # or not (the sampled coordinates change the draws of a seed, not their quality)
    return br.fit(br.Davidson(k_tie=0), small, method="nuts", draws=1000, tune=500, chains=2, random_seed=5)


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
        br.fit(br.BradleyTerry(), small, method="nuts", sampler="hmc")
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
