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
