"""HMC with a quarter-period trajectory: on a standard normal target (what a whitened posterior is
close to) its draws have the target's moments, are nearly independent for the location and the
scale alike (lag-one autocorrelation of z and z² near 0), and are decided by the seed."""

import numpy as np
import pytest


@pytest.mark.slow
def test_quarter_period_draws_of_a_standard_normal_are_nearly_independent():
    pm = pytest.importorskip("pymc")
    pytest.importorskip("numpyro")
    from bayesrank.inference.hmc import QUARTER_PERIOD, sample

    with pm.Model() as model:
        pm.Normal("z", 0, 1, shape=20)
    kw = dict(draws=500, tune=200, chains=2, random_seed=1, target_accept=0.8, progressbar=False)
    tree = sample(model, 20, **kw)
    z = tree["posterior"]["z"].values
    assert z.shape == (2, 500, 20) and tree["sample_stats"].attrs["trajectory_length"] == QUARTER_PERIOD
    assert abs(z.mean()) < 0.03 and z.var() == pytest.approx(1, abs=0.06)

    def lag_one(x):
        x = x - x.mean(axis=1, keepdims=True)
        return float((x[:, 1:] * x[:, :-1]).mean() / (x * x).mean())

    assert abs(lag_one(z)) < 0.2 and abs(lag_one(z ** 2)) < 0.2
    assert not tree["sample_stats"]["diverging"].values.any()
    np.testing.assert_array_equal(sample(model, 20, **kw)["posterior"]["z"].values, z)
