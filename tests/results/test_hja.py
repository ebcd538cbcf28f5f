"""The judges of an HJA fit, from its DataTree: judge scores are γμᵀ plus the disagreement, whose
parts are orthogonal (the consensus and disagreement shares add up to 1), the factors rebuild the
disagreement, leverages are its row norms and outliers follow the robust z-score — each checked in
NumPy on a simulated panel with a planted outlier."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.model.papers import hja_comparisons, hja_truth
from bayesrank.results import hja
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def fit():
    truth = hja_truth(n_items=6, n_judges=6, rank=1, heterogeneity=0.3, random_seed=5)
    S = truth["S"].copy()
    S[5] = -S[5] + np.linspace(2, -2, 6)        # judge j5 ranks against the panel
    return br.fit(br.HJA(rank=1), hja_comparisons(S, 6000, random_seed=5))


def test_judge_scores_split_into_orthogonal_consensus_and_disagreement(fit):
    S, D = hja.judge_scores(fit.tree), hja.disagreement_matrix(fit.tree)
    table = hja.judge_table(fit.tree)
    mu = fit.scores().reindex(S.columns).to_numpy()
    consensus = np.outer(table["sensitivity"], mu)
    np.testing.assert_allclose(S.to_numpy(), consensus + D.to_numpy(), atol=1e-8)
    summary = hja.disagreement_summary(fit.tree)
    total = (S.to_numpy() ** 2).sum()
    assert summary["disagreement_share"] == pytest.approx((D.to_numpy() ** 2).sum() / total)
    assert summary["consensus_share"] == pytest.approx((consensus ** 2).sum() / total, rel=1e-6)
    np.testing.assert_allclose(table["leverage"], np.linalg.norm(D.to_numpy(), axis=1), rtol=1e-8)


def test_factors_rebuild_the_disagreement(fit):
    f = hja.factors(fit.tree)
    D = hja.disagreement_matrix(fit.tree).to_numpy()
    np.testing.assert_allclose(f["U"].to_numpy() @ f["V"].to_numpy().T, D, atol=1e-8)
    K, N = D.shape
    np.testing.assert_allclose(f["strengths"], f["singular_values"] ** 2 / (K * N))


def test_leverage_outliers_follow_the_robust_z_score(fit):
    h = hja.judge_table(fit.tree)["leverage"].to_numpy()
    z = (h - np.median(h)) / (1.4826 * np.median(np.abs(h - np.median(h))))
    found = hja.leverage_outliers(fit.tree)
    names = hja.judge_names(fit.tree)
    np.testing.assert_allclose([found["robust_z"][n] for n in names], z)
    assert found["outliers"] == [names[k] for k in np.argsort(-z) if z[k] > hja.OUTLIER_Z]
    assert found["highest"] == names[int(np.argmax(h))] == "j5"
    assert found["sentence"].startswith("the highest-leverage judge is 'j5'")


def test_judge_differences_are_that_judges_own_contrasts(fit):
    S = hja.judge_scores(fit.tree).loc["j2"]
    table = hja.judge_differences(fit.tree, "j2")
    np.testing.assert_allclose(table["difference"], S[table["item_i"]].to_numpy() - S[table["item_j"]].to_numpy())
    assert (table["difference"] >= 0).all() and (table["judge"] == "j2").all()
    with pytest.raises(br.BayesrankError, match="unknown judge 'j9'; the fit's judges: j0, j1"):
        hja.judge_differences(fit.tree, "j9")


def test_a_fit_of_another_framework_is_refused():
    other = br.fit(br.BradleyTerry(), simulate_counts(np.array([0.0, 0.5, 1.0]), 30, np.random.default_rng(0)))
    with pytest.raises(br.BayesrankError, match="is not an HJA fit; fit bayesrank.HJA"):
        hja.judge_table(other.tree)
