"""Arrowhead-banded SPD algebra against dense NumPy references."""

import numpy as np
import pytest

from bayesrank.inference.banded import Arrowhead


def arrowhead(n, p, g, seed):
    """A random SPD matrix, banded (half-bandwidth p) in its first n coordinates, g dense last ones."""
    rng = np.random.default_rng(seed)
    M = np.zeros((n + g, n + g))
    for i in range(n):
        for j in range(i, min(n, i + p + 1)):
            M[i, j] = M[j, i] = rng.normal() * 0.3
    M[:n, n:] = rng.normal(size=(n, g)) * 0.2
    M[n:, :n] = M[:n, n:].T
    return M + np.eye(n + g) * (3 + 0.1 * (n + g))


def factor_of(M, n, p):
    """Arrowhead.from_parts of M, its banded part's upper band written out diagonal by diagonal."""
    p = min(p, n - 1)
    band = np.zeros((p + 1, n))
    for d in range(p + 1):
        band[p - d, d:] = np.diagonal(M[:n, :n], d)
    return Arrowhead.from_parts(band, M[:n, n:], M[n:, n:])


@pytest.mark.parametrize("n,p,g", [(60, 5, 2), (61, 7, 0), (10, 12, 1), (200, 13, 0), (1, 0, 1)])
def test_solve_logdet_and_band_of_the_inverse_match_dense(n, p, g):
    M = arrowhead(n, p, g, seed=n + p)
    factor = factor_of(M, n, p)
    inverse = np.linalg.inv(M)
    r = np.random.default_rng(0).normal(size=n + g)
    np.testing.assert_allclose(factor.solve(r), inverse @ r, atol=1e-12)
    assert factor.logdet() == pytest.approx(np.linalg.slogdet(M)[1], abs=1e-10)
    i = np.arange(n)
    j = np.minimum(i + np.random.default_rng(1).integers(0, factor.p + 1, n), n - 1)
    np.testing.assert_allclose(factor.covariance_at(i, j), inverse[i, j], atol=1e-13)


def test_draws_have_the_inverse_as_covariance():
    M = arrowhead(30, 4, 2, seed=3)
    draws = factor_of(M, 30, 4).draws(100_000, np.random.default_rng(0))
    np.testing.assert_allclose(np.cov(draws.T), np.linalg.inv(M), atol=4e-3)


def test_entries_outside_the_band_are_refused():
    factor = factor_of(arrowhead(20, 2, 0, seed=1), 20, 2)
    with pytest.raises(ValueError, match="outside the band"):
        factor.covariance_at(np.array([0]), np.array([10]))


def test_a_matrix_that_is_not_positive_definite_raises():
    M = arrowhead(10, 2, 0, seed=2)
    M[4, 4] = -50.0
    with pytest.raises(np.linalg.LinAlgError):
        factor_of(M, 10, 2)
