"""A fit's Gaussian belief and its update by new votes: for Bradley–Terry the covariance after n more
votes of a pair is, in the zero-sum space of the scores, the pseudo-inverse of the fit's information
plus n p(1 − p)(e_a − e_b)(e_a − e_b)ᵀ — written here in NumPy — whichever of its two factor updates
the belief takes."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.design.belief import belief_of
from bayesrank.design.candidates import candidates
from bayesrank.inference.structure import structure_of
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def fit():
    return br.fit(br.BradleyTerry(ties="drop"),
                  simulate_counts(np.linspace(-1, 1, 6), 30, np.random.default_rng(21)))


@pytest.fixture(scope="module")
def planned(fit):
    structure = structure_of(fit.framework, fit.model_data, "flat")
    belief = belief_of(fit.tree, structure)
    return belief, candidates(structure, fit.framework, fit.model_data, fit.data, belief.nat)


def test_the_belief_holds_the_fits_covariance(fit, planned):
    belief, _ = planned
    np.testing.assert_allclose(belief.score, fit.scores().to_numpy())
    np.testing.assert_allclose(belief.score_covariance(), fit.tree["estimate"]["score_cov"].values, atol=1e-12)


@pytest.mark.parametrize("pairs", [[(0, 5)], [(0, 5), (2, 3), (1, 4)]], ids=["one-pair", "three-pairs"])
def test_votes_shrink_the_covariance_as_added_information(fit, planned, pairs):
    belief, cand = planned
    m = len(fit.items)
    votes = np.zeros(len(cand.table))
    s = belief.score
    added = np.zeros((m, m))
    for (a, b), n in zip(pairs, (40, 25, 60)):
        c = int(np.flatnonzero((cand.a == a) & (cand.b == b))[0])
        votes[c] = n
        p = 1 / (1 + np.exp(-(s[a] - s[b])))
        x = np.zeros(m)
        x[a], x[b] = 1, -1
        added += n * p * (1 - p) * np.outer(x, x)
    C = fit.tree["estimate"]["score_cov"].values
    want = np.linalg.pinv(np.linalg.pinv(C, hermitian=True) + added, hermitian=True)
    after = belief.with_votes(cand.rows, cand.factors, votes)
    np.testing.assert_allclose(after.score_covariance(), want, atol=1e-10)
    assert np.all(np.diag(after.score_covariance()) < np.diag(C))
    assert belief.with_votes(cand.rows, cand.factors, np.zeros(len(cand.table))) is belief


def test_a_fit_without_intervals_cannot_plan():
    fit = br.fit(br.BradleyTerry(), simulate_counts(np.array([0.0, 0.5, 1.0]), 30, np.random.default_rng(0)),
                 intervals="none")
    structure = structure_of(fit.framework, fit.model_data, "flat")
    with pytest.raises(br.BayesrankError, match="choosing the next pairs needs the fit's uncertainty"):
        belief_of(fit.tree, structure)
