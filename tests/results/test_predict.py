"""Predictions of any pair: the framework's formula at the MLE with delta-method intervals, written
here for Bradley–Terry (ties dropped), where P(a wins) = σ(s_a − s_b) and its standard error is
p(1 − p) · se(s_a − s_b)."""

import numpy as np
import pytest
from scipy.special import expit
from scipy.stats import norm

import bayesrank as br
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def fit():
    data = simulate_counts(np.array([-0.8, -0.1, 0.3, 0.9]), 50, np.random.default_rng(5))
    return br.fit(br.BradleyTerry(ties="drop"), data)


def test_bt_prediction_is_the_logistic_with_delta_method_intervals(fit):
    names = fit.items
    a, b = ["m00", "m03", "m02"], ["m03", "m00", "m01"]
    pred = fit.predict(a, b, level=0.9)
    s = fit.scores()
    C = fit.tree["estimate"]["score_cov"].values
    i, j = [names.index(x) for x in a], [names.index(x) for x in b]
    p = expit(s.iloc[i].to_numpy() - s.iloc[j].to_numpy())
    se = p * (1 - p) * np.sqrt(C[i, i] + C[j, j] - 2 * C[i, j])
    np.testing.assert_allclose(pred["p_win_a"], p, rtol=1e-10)
    np.testing.assert_allclose(pred["p_win_b"], 1 - p, rtol=1e-10)
    np.testing.assert_allclose(pred["p_tie"], 0.0, atol=1e-12)
    np.testing.assert_allclose(pred["p_win_a_lower"], np.clip(p - norm.ppf(0.95) * se, 0, 1), rtol=1e-6)
    np.testing.assert_allclose(pred["p_win_a_upper"], np.clip(p + norm.ppf(0.95) * se, 0, 1), rtol=1e-6)
    assert pred["identified"].all() and list(pred["item_a"]) == a


def test_swapping_the_pair_swaps_the_outcomes(fit):
    one, other = fit.predict("m01", "m02"), fit.predict("m02", "m01")
    assert one["p_win_a"].iloc[0] == pytest.approx(other["p_win_b"].iloc[0], rel=1e-12)
    assert one["p_win_a_upper"].iloc[0] == pytest.approx(other["p_win_b_upper"].iloc[0], rel=1e-9)


def test_unknown_names_and_options_are_refused(fit):
    with pytest.raises(br.BayesrankError, match="unknown item 'gpt-5'; known items: m00, m01"):
        fit.predict("gpt-5", "m00")
    with pytest.raises(br.BayesrankError, match="level"):
        fit.predict("m00", "m01", level=1.5)
