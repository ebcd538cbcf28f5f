"""The natural information matrix in CSR form (CellDerivatives.matrix with ``sparse=True``): the
dense matrix's entries, from a CSR structure kept with the block positions of the cells."""

import numpy as np

import bayesrank as br
from bayesrank.inference.information import CellDerivatives, _weights
from bayesrank.inference.structure import structure_of
from tests.conftest import random_cells


def test_the_sparse_natural_matrix_is_the_dense_one_from_a_kept_structure():
    rng = np.random.default_rng(4)
    data = random_cells(7, rng, 20, keep=lambda i, j: (i + j) % 3)
    framework = br.Davidson(k_tie=1, k_cov=2)   # two predictors, one of them with second derivatives
    prepared = framework.prepare(data)
    bound = structure_of(framework, prepared, prior="flat").bind(prepared)
    theta = bound.x0 + 0.3 * rng.standard_normal(bound.n_free)
    cd = CellDerivatives.at(bound, theta)
    weights, second = _weights(cd, bound.counts, "observed", None)
    assert len(cd.names) == 2
    for skip in (frozenset(), frozenset({(0, 1), (1, 0)})):
        for extra in (second, None):
            dense = cd.matrix(weights, extra, skip=skip)
            sparse = cd.matrix(weights, extra, sparse=True, skip=skip)
            assert sparse.has_canonical_format
            np.testing.assert_allclose(sparse.toarray(), dense, rtol=1e-13, atol=1e-12 * np.abs(dense).max())
    kept = [key for key in bound.matrix_positions if key[0] == "csr"]
    assert len(kept) == 4
    before = {key: bound.matrix_positions[key] for key in kept}
    CellDerivatives.at(bound, theta + 0.1).matrix(weights, second, sparse=True)
    assert all(bound.matrix_positions[key] is before[key] for key in kept)


def test_the_information_is_exactly_symmetric_where_only_its_loose_blocks_are_averaged(monkeypatch):
    """With the tie block and its cross blocks given (:func:`_factored`), only the other blocks are
    averaged with their transposes: the matrix is still exactly symmetric, and it is the
    information computed without factored blocks (every block a sandwich, all averaged)."""
    from bayesrank.inference import information as info_module

    rng = np.random.default_rng(6)
    data = random_cells(9, rng, 25)
    framework = br.Davidson(k_tie=2, k_cov=2)
    prepared = framework.prepare(data)
    bound = structure_of(framework, prepared, prior="flat").bind(prepared)
    theta = bound.x0 + 0.2 * rng.standard_normal(bound.n_free)
    whole = info_module.information(bound, theta, "observed")
    monkeypatch.setattr(info_module, "FACTORED_FROM", 5)
    bound.block_jacobians.clear()
    factored = info_module.information(bound, theta, "observed")
    assert info_module._block_jacobians(bound, CellDerivatives.at(bound, theta))
    np.testing.assert_array_equal(factored, factored.T)
    np.testing.assert_allclose(factored, whole, rtol=1e-10, atol=1e-10 * np.abs(whole).max())
