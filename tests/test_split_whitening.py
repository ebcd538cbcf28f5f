"""Whitened L-BFGS-B phases with coordinates whitened by construction scaled apart
(optimize._whitening's ``apart``): the factored tie coordinates are stretched to unit curvature of the
thresholds on their basis, so only the other coordinates need a dense eigendecomposition.

References here: the block-diagonal T written out as a dense matrix in NumPy, and the whitening
property Tᵀ |A| T = 1 on each block, checked with numpy's own eigendecomposition.
"""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.inference import optimize
from bayesrank.inference.compiled import compiled
from tests.conftest import random_cells


def indefinite(rng, size):
    Q, _ = np.linalg.qr(rng.standard_normal((size, size)))
    return (Q * np.linspace(-2.0, 5.0, size)) @ Q.T


def test_split_whitening_whitens_each_block_and_acts_as_its_matrix():
    rng = np.random.default_rng(3)
    n_kept, n_apart = 6, 9
    information = np.zeros((n_kept + n_apart,) * 2)
    information[:n_kept, :n_kept] = indefinite(rng, n_kept)
    information[n_kept:, n_kept:] = np.diag(rng.uniform(0.5, 3.0, n_apart))
    information += 0.01 * (lambda C: C + C.T)(rng.standard_normal(information.shape))  # weak coupling, ignored
    order = rng.permutation(n_kept + n_apart)   # the coordinates apart need not be contiguous
    information = information[np.ix_(order, order)]
    apart = order >= n_kept
    T, T_inverse = optimize._whitening(information, 2.0, apart)
    assert T_inverse is None
    dense = np.column_stack([T @ e for e in np.eye(apart.size)])
    v = rng.standard_normal(apart.size)
    np.testing.assert_allclose(T.T @ v, dense.T @ v, rtol=1e-12, atol=1e-12)
    assert np.all(dense[np.ix_(apart, ~apart)] == 0) and np.all(dense[np.ix_(~apart, apart)] == 0)
    kept = information[np.ix_(~apart, ~apart)] / 2.0
    w, V = np.linalg.eigh(kept)
    absolute = (V * np.abs(w)) @ V.T
    T_kept = dense[np.ix_(~apart, ~apart)]
    np.testing.assert_allclose(T_kept.T @ absolute @ T_kept, np.eye(n_kept), atol=1e-10)
    np.testing.assert_allclose(np.diag(dense)[apart] ** 2 * np.abs(np.diag(information)[apart]) / 2.0, 1.0,
                               rtol=1e-12)


def test_whitened_phases_with_coordinates_apart_reach_the_maximum(monkeypatch):
    """A sum of double wells (maximal at θ_i = ±1), three coordinates scaled apart: from a start where
    the information is indefinite the whitened phases and Newton's method finish."""
    def logp_dlogp(theta):
        return -np.sum((theta**2 - 1) ** 2), -4 * theta * (theta**2 - 1)

    def hessian(theta):
        return np.diag(-(12 * theta**2 - 4))

    monkeypatch.setattr(optimize, "FIRST_PHASE", 1)
    seen = []
    whitening = optimize._whitening
    monkeypatch.setattr(optimize, "_whitening", lambda *a: seen.append(a[2]) or whitening(*a))
    apart = np.array([False, True, False, True, True, False])
    theta, _ = optimize.maximise_in_chart(logp_dlogp, hessian, np.array([0.3, 0.9, -0.2, 1.2, 0.8, 2.0]), 1.0,
                                          apart=apart)
    assert seen and all(a is apart for a in seen)
    np.testing.assert_allclose(np.abs(theta), 1.0, atol=1e-12)


@pytest.mark.parametrize("framework, apart", [
    (br.Davidson(k_tie=3, k_cov=0), True),
    (br.RaoKupper(k_tie=3, k_cov=0), True),   # (η = softplus(h): the block may be indefinite, still diagonal)
    (br.Davidson(k_cov=0), False),            # no tie factors
    (br.RaoKupper(k_cov=3), False),
])
def test_factored_tie_coordinates_are_whitened_by_construction(arena, framework, apart):
    prepared = framework.prepare(arena)
    structure = compiled(framework, prepared, prior="flat")
    mask = structure.whitened_columns
    assert mask.shape == (structure.n_free,)
    if not apart:
        assert not mask.any()
        return
    tie = structure.slices["tie_coord"][0]
    assert mask[tie].all() and mask.sum() == tie.stop - tie.start
    assert not compiled(framework, prepared, prior="weak").whitened_columns.any()  # a proper prior: orthonormal


def test_a_screened_information_is_the_whole_one_but_for_the_tie_block_and_completes_to_it(monkeypatch):
    """``information(..., apart=)`` leaves the dense tie block (:func:`_factored`) at its diagonal and
    every other entry as the whole information has it; ``complete_screened`` fills the block in to
    the whole information, entry for entry. (The tie block of a small model is factored once the
    threshold of columns is lowered to its size.)"""
    from bayesrank.inference import information as info_module

    monkeypatch.setattr(info_module, "FACTORED_FROM", 5)
    rng = np.random.default_rng(8)
    data = random_cells(9, rng, 25)
    framework = br.Davidson(k_tie=2, k_cov=2)
    prepared = framework.prepare(data)
    structure = compiled(framework, prepared, prior="flat")
    apart = structure.whitened_columns
    assert apart.any() and not apart.all()
    bound = structure.bind(prepared)
    theta = bound.x0 + 0.2 * rng.standard_normal(bound.n_free)
    whole = info_module.information(bound, theta, "observed")
    screened = info_module.information(bound, theta, "observed", apart=apart)
    block = np.ix_(apart, apart)
    outside = ~(apart[:, None] & apart[None, :])
    np.testing.assert_array_equal(screened[outside], whole[outside])
    np.testing.assert_allclose(np.diag(screened)[apart], np.diag(whole)[apart], rtol=1e-12)
    assert np.all(screened[block][~np.eye(apart.sum(), dtype=bool)] == 0)
    assert np.any(whole[block][~np.eye(apart.sum(), dtype=bool)] != 0)
    completed = info_module.complete_screened(bound, theta, screened, apart)
    assert completed is screened
    np.testing.assert_array_equal(completed, whole)


def test_newton_completes_a_screened_information_only_where_its_kept_block_is_definite():
    """Where the block on the kept coordinates is not positive definite Newton's method stops at
    once and returns the screened matrix, never completed; where it is, each information is
    completed and the steps converge as with the whole Hessian."""
    rng = np.random.default_rng(4)
    n_kept, n_apart = 5, 7
    apart = np.r_[np.zeros(n_kept, bool), np.ones(n_apart, bool)]
    Q, _ = np.linalg.qr(rng.standard_normal((n_kept + n_apart,) * 2))
    for eigenvalues, definite in ((np.linspace(0.5, 4.0, n_kept + n_apart), True),
                                  (np.r_[-1.0, np.linspace(0.5, 4.0, n_kept + n_apart - 1)], False)):
        A = (Q * eigenvalues) @ Q.T
        if not definite:   # a negative direction inside the kept block
            A[:n_kept, :n_kept] = indefinite(rng, n_kept)
        peak = rng.standard_normal(apart.size)
        calls = {"screened": 0, "completed": 0}

        def logp_dlogp(theta):
            return -0.5 * (theta - peak) @ A @ (theta - peak), -A @ (theta - peak)

        def screened(theta):
            calls["screened"] += 1
            matrix = A.copy()
            matrix[np.ix_(apart, apart)] = np.diag(np.diag(A)[apart])

            def complete():
                calls["completed"] += 1
                matrix[np.ix_(apart, apart)] = A[np.ix_(apart, apart)]
                return matrix
            return matrix, complete

        theta, iterations, done, information = optimize._newton(
            logp_dlogp, lambda th: -A, np.zeros(apart.size), 1.0, iterative=False, screen=(screened, ~apart))
        if definite:
            assert done and calls["completed"] == calls["screened"] >= 1 and information is None
            np.testing.assert_allclose(theta, peak, atol=1e-9)
        else:
            assert not done and iterations == 0 and calls == {"screened": 1, "completed": 0}
            assert np.all(information[np.ix_(apart, apart)][~np.eye(n_apart, dtype=bool)] == 0)
