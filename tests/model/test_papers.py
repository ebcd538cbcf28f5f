"""The papers' reference designs: Table D.1's thirty leaderbot models on their documented grid, and
the HJA paper's simulated truth (App. E.1) and near-balanced design (App. E.2) with the properties
the paper states."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.model.papers import LEADERBOT_D1, hja_comparisons, hja_truth, leaderbot_model


def test_table_d1_models_follow_the_grid():
    assert sorted(LEADERBOT_D1) == list(range(1, 31))
    for k in range(6):
        assert leaderbot_model(k + 1) == br.BradleyTerry(ties="half" if k < 3 else "drop", k_cov=[None, 0, 3][k % 3])
    for first, cls in ((7, br.RaoKupper), (19, br.Davidson)):
        for k_cov_index, k_cov in enumerate([None, 0, 3]):
            for k_tie_index, k_tie in enumerate([0, 1, 10, 20]):
                assert leaderbot_model(first + 4 * k_cov_index + k_tie_index) == cls(k_tie=k_tie, k_cov=k_cov)
    assert leaderbot_model("12abs") == br.RaoKupper(k_tie=1, k_cov=0, threshold="abs")
    with pytest.raises(ValueError, match="Table D.1 has models 1-30, not 31"):
        leaderbot_model(31)


@pytest.mark.parametrize("rank", [0, 1, 2])
def test_hja_truth_has_the_papers_constraints(rank):
    K, N = 5, 9
    truth = hja_truth(n_items=N, n_judges=K, rank=rank, heterogeneity=0.5, random_seed=rank)
    gamma, mu, U, V = truth["gamma"], truth["mu"], truth["U"], truth["V"]
    np.testing.assert_allclose(truth["S"], np.outer(gamma, mu) + U @ V.T)
    assert np.all(gamma >= 0) and gamma.sum() == pytest.approx(K) and mu.sum() == pytest.approx(0, abs=1e-12)
    if rank:
        np.testing.assert_allclose(V.sum(axis=0), 0, atol=1e-10)
        np.testing.assert_allclose(mu @ V, 0, atol=1e-10)
        np.testing.assert_allclose(U.T @ U / K, 0.5 * np.diag(np.arange(rank, 0, -1.0) ** 2), atol=1e-10)
        assert np.all(U[0] > 0)


def test_hja_design_is_near_balanced_with_logistic_verdicts():
    S = hja_truth(n_items=4, n_judges=3, rank=1, random_seed=2)["S"]
    data = hja_comparisons(S, 1000, random_seed=3)
    assert data.n_comparisons == 1000 and data.judges == ("j0", "j1", "j2") and data.n_cells == 18
    assert set(data.totals) <= {1000 // 18, 1000 // 18 + 1}
    big = hja_comparisons(S, 180_000, random_seed=4)
    p = big.wins_a / big.totals
    want = 1 / (1 + np.exp(-(S[big.judge, big.a] - S[big.judge, big.b])))
    np.testing.assert_allclose(p, want, atol=4 * np.sqrt(0.25 / big.totals.min()))
