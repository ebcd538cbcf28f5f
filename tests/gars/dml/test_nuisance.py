"""DMLRank's nuisance models: cell means are the per-pair frequencies counted here; the default
spline-logistic learner recovers the simulator's known μ(x) and π(x); learners are checked by name."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.gars.dml import read_records
from bayesrank.gars.dml.nuisance import OutcomeModel, PropensityModel, check_learner
from bayesrank.gars.dml.simulate import simulator


@pytest.fixture(scope="module")
def simulated():
    """The paper's NonlinearTie simulator with a labelling design that depends strongly on the context."""
    sim = simulator("nonlinear_tie", K=3, p=2, random_seed=4, pi_min=0.02, pi_max=0.9, lam_pi=1.0, eta_pi=4.0)
    return sim, read_records(sim.records(3000, random_seed=1), features=["x0", "x1"])


def every_pair(records, K=3):
    j, k = np.nonzero(~np.eye(K, dtype=bool))
    ctx = np.repeat(np.arange(records.n_contexts), j.size)
    return ctx, np.tile(j, records.n_contexts), np.tile(k, records.n_contexts)


def test_cell_means_are_the_pair_frequencies(simulated):
    _, records = simulated
    labelled = np.arange(len(records.label))
    mu = OutcomeModel("cell-means", 3).fit(records, labelled)
    pi = PropensityModel("cell-means").fit(records, np.arange(records.n_contexts))
    for j, k in [(0, 1), (1, 0), (2, 0)]:
        mine = (records.first == j) & (records.second == k)
        want = np.bincount(records.label[mine], minlength=3) / mine.sum()
        np.testing.assert_allclose(mu.predict(records, np.array([0]), np.array([j]), np.array([k]))[0], want)
        assert pi.predict(records, np.array([0]), np.array([j]), np.array([k]))[0] == mine.sum() / records.n_contexts


def test_spline_logistic_recovers_the_true_probabilities(simulated):
    sim, records = simulated
    ctx, first, second = every_pair(records)
    mu = OutcomeModel("spline-logistic", 3).fit(records, np.arange(len(records.label)))
    got = mu.predict(records, ctx, first, second)
    true = sim.mu(records.X)[ctx, first, second]
    np.testing.assert_allclose(got.sum(axis=1), 1.0)
    pooled = np.bincount(records.label, minlength=3) / len(records.label)
    assert np.abs(got - true).mean() < 0.25 * np.abs(pooled - true).mean()
    pi = PropensityModel("spline-logistic").fit(records, np.arange(records.n_contexts))
    true = sim.propensity(records.X)[ctx, first, second]
    per_pair = PropensityModel("cell-means").fit(records, np.arange(records.n_contexts)).predict(records, ctx, first,
                                                                                               second)
    # the context matters: the spline model is much closer to π(x) than the per-pair rates
    assert np.abs(pi.predict(records, ctx, first, second) - true).mean() < 0.5 * np.abs(per_pair - true).mean()


def test_a_single_outcome_is_predicted_as_its_frequency(simulated):
    _, records = simulated
    ties = np.flatnonzero(records.label == 2)[:30]
    model = OutcomeModel("spline-logistic", 3).fit(records, ties)
    np.testing.assert_array_equal(model.predict(records, np.array([0, 1]), np.array([0, 1]), np.array([1, 2])),
                                  [[0, 0, 1], [0, 0, 1]])


def test_learners_are_checked():
    with pytest.raises(br.BayesrankError, match="unknown learner 'forest'; use one of spline-logistic"):
        check_learner("forest")
    with pytest.raises(br.BayesrankError, match="a learner needs fit and predict_proba; got dict"):
        check_learner({})
    check_learner("cell-means")
