"""Fit quality from the stored cell probabilities: the per-outcome cross-entropies add up to the
NLL at the MLE, the NLL of Bradley–Terry with dropped ties is per non-tie comparison, and the
predicted rates are the fitted probabilities summed over each item's comparisons (NumPy here)."""

import numpy as np
import pytest
from scipy.special import expit

import bayesrank as br
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def data():
    return simulate_counts(np.array([-0.6, 0.1, 0.2, 0.7]), 70, np.random.default_rng(9), eta=-0.3)


def test_cross_entropies_add_up_to_the_nll(data):
    fit = br.fit(br.Davidson(), data)
    ce = fit.cross_entropies()
    assert ce["win"] + ce["loss"] + ce["tie"] == pytest.approx(fit.nll, rel=1e-12)
    total = fit.cross_entropies(total=True)
    assert sum(total.values()) == pytest.approx(fit.loglik, rel=1e-12)
    assert total["tie"] == pytest.approx(-ce["tie"] * data.n_comparisons, rel=1e-12)


def test_dropped_ties_are_not_counted(data):
    fit = br.fit(br.BradleyTerry(ties="drop"), data)
    non_ties = data.wins_a.sum() + data.wins_b.sum()
    assert fit.n_comparisons == non_ties
    s = fit.scores().to_numpy()
    d = s[data.a] - s[data.b]
    ll = np.sum(data.wins_a * np.log(expit(d)) + data.wins_b * np.log(expit(-d)))
    assert fit.nll == pytest.approx(-ll / non_ties, rel=1e-10)
    assert fit.cross_entropies()["tie"] == 0.0


def test_predicted_rates_are_the_fitted_probabilities_per_item(data):
    fit = br.fit(br.Davidson(), data)
    s, eta = fit.scores().to_numpy(), float(fit.tree["estimate"]["eta_raw"])
    d = s[data.a] - s[data.b]
    w = np.column_stack([np.exp(d / 2), np.exp(-d / 2), np.full_like(d, np.exp(eta))])
    p = w / w.sum(axis=1, keepdims=True)
    rates = fit.predicted_rates()
    for k, name in enumerate(data.items):
        as_a, as_b = data.a == k, data.b == k
        n = data.totals[as_a].sum() + data.totals[as_b].sum()
        win = (data.totals * p[:, 0])[as_a].sum() + (data.totals * p[:, 1])[as_b].sum()
        tie = (data.totals * p[:, 2])[as_a | as_b].sum()
        assert rates.loc[name, "pred_win_rate"] == pytest.approx(win / n, rel=1e-10)
        assert rates.loc[name, "pred_tie_rate"] == pytest.approx(tie / n, rel=1e-10)
    np.testing.assert_allclose(rates.sum(axis=1), 1.0, rtol=1e-12)


def test_ties_as_halves_predict_wins_plus_half_the_ties_and_no_tie_rate(data):
    """With ties counted as half a win for each side the model predicts the share of wins plus
    half the ties: at the MLE it equals the observed one item by item (a score equation of
    Bradley–Terry), and it predicts no tie rate (NaN, not 0)."""
    fit = br.fit(br.BradleyTerry(ties="half"), data, intervals="none")
    board = fit.leaderboard().set_index("name")
    assert board["pred_tie_rate"].isna().all()
    np.testing.assert_allclose(board["pred_win_rate"], board["win_rate"] + board["tie_rate"] / 2, atol=1e-8)
    davidson = br.fit(br.Davidson(), data, intervals="none").leaderboard()
    assert davidson["pred_tie_rate"].notna().all()
