"""The learners DMLRank offers by name: the default is one of them, and every one offered (lightgbm
when installed) is accepted and fits outcome probabilities and propensities on simulated records."""

from importlib.util import find_spec

import numpy as np
import pytest

from bayesrank.gars.dml import read_records
from bayesrank.gars.dml.learners import DEFAULT_LEARNER, LEARNERS
from bayesrank.gars.dml.nuisance import OutcomeModel, PropensityModel, check_learner
from bayesrank.gars.dml.simulate import simulator


@pytest.fixture(scope="module")
def records():
    sim = simulator("nonlinear_tie", K=3, p=2, random_seed=6, pi_min=0.05, pi_max=0.5)
    return read_records(sim.records(600, random_seed=2), features=["x0", "x1"])


@pytest.mark.parametrize("learner", LEARNERS)
def test_every_offered_learner_fits_probabilities(records, learner):
    if learner == "lightgbm" and find_spec("lightgbm") is None:
        pytest.skip("lightgbm is an optional extra")
    check_learner(learner)
    ctx, first, second = np.arange(5), np.array([0, 1, 2, 0, 2]), np.array([1, 0, 1, 2, 0])
    mu = OutcomeModel(learner, 3).fit(records, np.arange(len(records.label))).predict(records, ctx, first, second)
    assert mu.shape == (5, 3) and np.all(mu >= 0)
    np.testing.assert_allclose(mu.sum(axis=1), 1.0)
    pi = PropensityModel(learner).fit(records, np.arange(records.n_contexts)).predict(records, ctx, first, second)
    assert pi.shape == (5,) and np.all((pi > 0) & (pi < 1))


def test_the_default_is_offered():
    assert DEFAULT_LEARNER in LEARNERS
