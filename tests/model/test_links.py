"""Outcome links and score structures: the digest's identities (seed-leaderbot.md §6.3)."""

import numpy as np
import pytensor.tensor as pt
import pytest

from bayesrank.model.links import log_probs
from bayesrank.model.structures import dct_iv_basis

D = np.linspace(-4, 4, 17)


def _probs(link, d, h=None):
    return np.exp(log_probs(link, pt.as_tensor(d), None if h is None else pt.as_tensor(h)).eval())


@pytest.mark.parametrize("link,h", [("bt", None), ("rao-kupper", 0.3), ("davidson", -0.5)])
def test_probabilities_sum_to_one(link, h):
    p = _probs(link, D, h)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-12)


def test_rao_kupper_tie_identity():
    h = 0.4
    eta = np.log1p(np.exp(h))  # softplus
    p = _probs("rao-kupper", D, h)
    np.testing.assert_allclose(p[:, 2], (np.exp(2 * eta) - 1) * p[:, 0] * p[:, 1], rtol=1e-10)
    np.testing.assert_allclose(p[:, 0], 1 / (1 + np.exp(-(D - eta))), rtol=1e-12)


def test_tie_links_reduce_to_bradley_terry():
    bt = _probs("bt", D)
    np.testing.assert_allclose(_probs("davidson", D, -40.0)[:, :2], bt[:, :2], atol=1e-12)
    np.testing.assert_allclose(_probs("rao-kupper", D, -40.0)[:, :2], bt[:, :2], atol=1e-12)


def test_davidson_matches_paper_formula():
    eta = 0.2
    p = _probs("davidson", D, eta)
    win = 1 / (1 + np.exp(-D) + np.exp(-(D / 2 - eta)))
    tie = 1 / (1 + np.exp(-(D / 2 + eta)) + np.exp(-(-D / 2 + eta)))
    np.testing.assert_allclose(p[:, 0], win, rtol=1e-12)
    np.testing.assert_allclose(p[:, 2], tie, rtol=1e-12)


def test_dct_iv_basis_is_orthonormal_and_paper_exact():
    m = 129
    phi = dct_iv_basis(m)
    np.testing.assert_allclose(phi.T @ phi, np.eye(m), atol=1e-12)
    i, j = 5, 3  # 1-based (6, 4)
    assert phi[i, j] == pytest.approx(np.sqrt(2 / m) * np.cos(np.pi / m * (i + 0.5) * (j + 0.5)))
    # the paper's factored ties do not contain the constant vector: not nested in k_tie=0
    assert abs(phi[:, 0].std()) > 0.01


def _log_tie_odds_reference(h: float) -> float:
    """log(e^{2η} − 1), η = log(1 + e^h), in 600-digit decimal arithmetic (no identity used)."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 600
        eta = (Decimal(1) + Decimal(h).exp()).ln()
        return float(((2 * eta).exp() - 1).ln())


def test_rao_kupper_log_tie_odds_finite_and_exact_for_every_h():
    from bayesrank.model.links import log_tie_odds

    h = np.concatenate([np.linspace(-800, 800, 161), [-745.2, -40.0, -1e-3, 0.0, 1e-3, 36.0]])
    got = log_tie_odds("rao-kupper", pt.as_tensor(h)).eval()
    ref = np.array([_log_tie_odds_reference(x) for x in h])
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, ref, rtol=1e-14, atol=1e-14)
    # where the former form 2η + log(1 − e^{−2η}) is accurate (η resolved), both agree to 1e-12
    mid = h[(h >= -30) & (h <= 800)]
    eta = np.logaddexp(0.0, mid)
    old = 2 * eta + np.log(-np.expm1(-2 * eta))
    np.testing.assert_allclose(log_tie_odds("rao-kupper", pt.as_tensor(mid)).eval(), old, rtol=1e-12, atol=1e-12)


def test_rao_kupper_tie_log_probability_finite_where_threshold_underflows():
    # h = −800: η = softplus(h) = 0 in float64, the tie is still possible (P(tie) ∝ e^h)
    h = np.array([-800.0, -760.0, -745.0])
    lp = log_probs("rao-kupper", pt.as_tensor(np.zeros(3)), pt.as_tensor(h)).eval()
    ref = np.array([_log_tie_odds_reference(x) for x in h]) + 2 * np.log(0.5)
    np.testing.assert_allclose(lp[:, 2], ref, rtol=1e-14)
    d_sym, h_sym = pt.dvector("d"), pt.dvector("h")
    tie = log_probs("rao-kupper", d_sym, h_sym)[:, 2].sum()
    grad = pt.grad(tie, h_sym).eval({d_sym: np.zeros(3), h_sym: h})
    np.testing.assert_allclose(grad, 1.0, rtol=1e-12)  # ∂/∂h [h + log 2 + softplus(h − log 2) − 2 softplus(η)]


def test_pair_logit_scores_solve_the_weighted_least_squares_and_start_near_the_mle(arena):
    """Berkson's start: the centred solution of the weighted least squares of the cells' empirical
    log-odds (checked against lstsq on the explicit design), nearer the MLE than the item logits."""
    import bayesrank as br
    from bayesrank.model.structures import empirical_scores, pair_logit_scores

    data = br.BradleyTerry().prepare(arena)
    half = data.ties / 2
    won_a, won_b = data.wins_a + half + 0.5, data.wins_b + half + 0.5
    keep = data.totals > 0
    sqrt_w = np.sqrt((won_a * won_b / (won_a + won_b))[keep])
    design = np.zeros((keep.sum(), data.n_items))
    design[np.arange(keep.sum()), data.a[keep]] = 1.0
    design[np.arange(keep.sum()), data.b[keep]] = -1.0
    expected = np.linalg.lstsq(design * sqrt_w[:, None], np.log(won_a / won_b)[keep] * sqrt_w, rcond=None)[0]
    start = pair_logit_scores(data)
    assert abs(start.sum()) < 1e-10
    np.testing.assert_allclose(start, expected - expected.mean(), atol=1e-10)
    mle = br.fit(br.BradleyTerry(), arena).scores().to_numpy()
    assert np.max(np.abs(start - mle)) < 0.2 * np.max(np.abs(empirical_scores(data) - mle))


def test_pair_logit_scores_fall_back_to_item_logits_on_a_disconnected_graph(arena):
    import bayesrank as br
    from bayesrank.model.structures import empirical_scores, pair_logit_scores

    data = br.BradleyTerry().prepare(arena)
    # two groups of items never compared across: no unique least-squares solution
    low = data.n_items // 2
    split = data.subset(((data.a < low) & (data.b < low)) | ((data.a >= low) & (data.b >= low)))
    np.testing.assert_array_equal(pair_logit_scores(split), empirical_scores(split))


def test_pair_logit_scores_sparse_path_equals_the_dense_one(arena, monkeypatch):
    """Beyond DENSE_START_MAX items the start is solved by conjugate gradients on the sparse
    Laplacian (10,000 items in bounded memory); the same solution as the dense Cholesky's."""
    import bayesrank as br
    from bayesrank.model import structures

    data = br.BradleyTerry().prepare(arena)
    dense = structures.pair_logit_scores(data)
    monkeypatch.setattr(structures, "DENSE_START_MAX", 0)
    np.testing.assert_allclose(structures.pair_logit_scores(data), dense, atol=1e-7)
