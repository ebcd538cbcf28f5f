"""The paper's simulators (Frauen et al., App. J) as documented: outcome probabilities on the simplex
with the stated floor and mirror symmetry, Bradley–Terry at γ = 0, propensities within their clip,
and records whose labels and outcomes follow them (known truth, checked by frequency)."""

import numpy as np
import pytest
from scipy.special import expit

from bayesrank.gars.dml.simulate import simulator


def test_nonlinear_tie_probabilities_are_floored_and_mirror():
    sim = simulator("nonlinear_tie", K=4, p=3, random_seed=2, eps_mu=0.05)
    X = sim.contexts(50, np.random.default_rng(0))
    mu = sim.mu(X)
    off = ~np.eye(4, dtype=bool)
    np.testing.assert_allclose(mu.sum(axis=-1)[:, off], 1.0)
    assert mu[:, off].min() >= 0.05 - 1e-15 and np.all(mu[:, ~off] == 0)
    # (j, k) and (k, j): the wins swap, the tie stays (no position effect)
    np.testing.assert_allclose(mu[..., 0], np.swapaxes(mu[..., 1], 1, 2), atol=1e-15)
    np.testing.assert_allclose(mu[..., 2], np.swapaxes(mu[..., 2], 1, 2), atol=1e-15)


def test_bt_misspec_without_a_cycle_is_bradley_terry():
    sim = simulator("bt_misspec", K=3, p=2, random_seed=1, gamma=0.0)
    X = sim.contexts(20, np.random.default_rng(1))
    u = sim.utilities(X)
    mu = sim.mu(X)
    np.testing.assert_allclose(mu[:, 0, 1, 0], expit(u[:, 0] - u[:, 1]), rtol=1e-12)
    assert np.all(mu[..., 2] == 0) and sim.scheme == "binary"
    cyclic = simulator("bt_misspec", K=3, p=2, random_seed=1, gamma=1.0).mu(X)
    np.testing.assert_allclose(cyclic[:, 0, 1, 0], expit(u[:, 0] - u[:, 1] + 1.0), rtol=1e-12)


def test_records_follow_the_propensities_and_the_outcome_probabilities():
    sim = simulator("nonlinear_tie", K=3, p=2, random_seed=4, pi_min=0.05, pi_max=0.5)
    frame = sim.records(4000, random_seed=7)
    assert frame.equals(sim.records(4000, random_seed=7))
    assert frame["context"].nunique() == 4000 and frame["context"].is_monotonic_increasing
    X = frame.groupby("context")[["x0", "x1"]].first().to_numpy()
    pi = sim.propensity(X)
    off = ~np.eye(3, dtype=bool)
    assert pi[:, off].min() >= 0.05 and pi[:, off].max() <= 0.5
    labelled = frame.dropna(subset=["winner"])
    assert len(labelled) == pytest.approx(pi[:, off].sum(), rel=0.03)
    np.testing.assert_allclose(labelled["propensity"],
                               pi[labelled["context"], labelled["model_a"].str[3:].astype(int),
                                  labelled["model_b"].str[3:].astype(int)])
    a, b = labelled["model_a"].str[3:].astype(int), labelled["model_b"].str[3:].astype(int)
    mu = sim.mu(X)[labelled["context"], a, b]
    for q, outcome in enumerate(["model_a", "model_b", "tie"]):
        expected = mu[:, q].sum()
        assert (labelled["winner"] == outcome).sum() == pytest.approx(expected, abs=4 * np.sqrt(expected))


def test_unknown_simulator_is_refused():
    with pytest.raises(ValueError, match="unknown simulator 'cycle'"):
        simulator("cycle")
