"""Factored tie thresholds on sparse comparison graphs: the free tie coordinates are a basis of the
complement of the directions the compared pairs leave flat, so the information is non-singular and
Wald intervals exist.

The reference is written here in NumPy: the map from the tie coordinates (G = Φ⊥C + ΦS) to the
thresholds h_ab = g_a·φ_b + g_b·φ_a of the compared pairs, and its rank by SVD.
"""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.model.structures import dct_iv_basis, n_tie_coordinates, tie_coordinate_basis


def sparse_davidson(m, pairs, rng, n=400, eta=-0.5):
    a, b = np.array(pairs).T
    scores = rng.normal(0, 1, m)
    d = scores[a] - scores[b]
    w = np.column_stack([np.exp(d / 2), np.exp(-d / 2), np.full_like(d, np.exp(eta))])
    counts = np.array([rng.multinomial(n, p / p.sum()) for p in w])
    names = np.array([f"m{k:02d}" for k in range(m)], dtype=object)
    return br.Comparisons.from_cells(names[a], names[b], counts[:, 0], counts[:, 1], counts[:, 2])


def reference_map(m, k, a, b):
    """(pairs × coordinates) Jacobian of the compared thresholds in (C row-major, upper S)."""
    full = dct_iv_basis(m)
    phi, perp = full[:, :k], full[:, k:]
    columns = []
    for p in range(m - k):
        for q in range(k):
            G = np.zeros((m, k))
            G[:, q] = perp[:, p]
            columns.append(G)
    for p, q in zip(*np.triu_indices(k)):
        S = np.zeros((k, k))
        S[p, q] = S[q, p] = 1.0
        columns.append(phi @ S)
    return np.column_stack([(G[a] * phi[b]).sum(1) + (G[b] * phi[a]).sum(1) for G in columns])


@pytest.fixture(scope="module")
def ring():
    """12 items on a ring with two chords: most items meet only two or three others."""
    m = 12
    pairs = [(i, (i + 1) % m) for i in range(m)] + [(0, 6), (3, 9)]
    return m, sparse_davidson(m, pairs, np.random.default_rng(3))


def test_basis_spans_the_complement_of_the_flat_directions(ring):
    m, data = ring
    k = 5
    fw = br.Davidson(k_tie=k)
    prepared = fw.prepare(data)
    basis = fw.tie_basis(prepared)[0]
    M = reference_map(m, k, prepared.a, prepared.b)
    assert M.shape[1] == n_tie_coordinates(m, k)
    rank = np.linalg.matrix_rank(M)
    assert rank < M.shape[1]  # this graph leaves flat directions
    assert basis.shape == (M.shape[1], rank)
    np.testing.assert_allclose(basis.T @ basis, np.eye(rank), atol=1e-12)
    assert np.linalg.matrix_rank(M @ basis) == rank  # the kept ones reach every compared threshold vector
    # the basis is orthogonal to the null space: the estimate is the minimum-norm choice
    _, s, Vt = np.linalg.svd(M)
    null = Vt[rank:].T
    np.testing.assert_allclose(null.T @ basis, 0.0, atol=1e-10)


def test_the_threshold_map_is_the_reference_map(ring):
    """The framework's map from its tie coordinates to the compared thresholds (what Table D.1's
    notes count the identified directions with) is the reference map, and a model without tie
    factors says it has none."""
    m, data = ring
    fw = br.Davidson(k_tie=5)
    prepared = fw.prepare(data)
    np.testing.assert_allclose(fw.tie_threshold_map(prepared), reference_map(m, 5, prepared.a, prepared.b),
                               atol=1e-12)
    a, b = np.triu_indices(m, 1)  # every pair, compared or not
    np.testing.assert_allclose(fw.tie_threshold_map(prepared, a, b), reference_map(m, 5, a, b), atol=1e-12)
    with pytest.raises(br.ModelSpecError, match="no tie factors"):
        br.Davidson().tie_threshold_map(prepared)


def test_full_rank_graphs_keep_every_direction(arena):
    fw = br.Davidson(k_tie=1)
    basis = fw.tie_basis(fw.prepare(arena))[0]
    assert basis.shape == (n_tie_coordinates(arena.n_items, 1),) * 2


def test_identification_is_cached_by_the_data_key():
    a, b = np.array([0, 1, 2]), np.array([1, 2, 0])
    calls = []

    def threshold(g_a, g_b):
        calls.append(1)
        return g_a.sum(1) - g_b.sum(1)

    first = tie_coordinate_basis(3, 1, a, b, np.ones(3), threshold, key="cached-test")
    n_calls = len(calls)
    assert tie_coordinate_basis(3, 1, a, b, np.ones(3), threshold, key="cached-test") is first
    assert len(calls) == n_calls


def test_sparse_graph_fit_converges_with_intervals(ring):
    m, data = ring
    fit = br.fit(br.Davidson(k_tie=5), data)
    assert fit.converged, fit.warnings
    assert np.all(np.isfinite(fit.leaderboard()["se"]))
    assert np.all(np.isfinite(fit.tree["estimate"]["tie_factor_se"].values))
    assert fit.n_params == (m - 1) + br.Davidson(k_tie=5).tie_basis(br.Davidson(k_tie=5).prepare(data))[0].shape[1]


@pytest.mark.parametrize("framework", [br.Davidson(k_tie=5), br.RaoKupper(k_tie=4, tie_intercept=True),
                                       br.Davidson(k_tie=5, k_cov=0)])
def test_tie_block_from_cell_gradients_is_the_sandwich(ring, monkeypatch, framework):
    """The information of the dense tie block assembled from the cells' gradients in θ (Aᵀ W A),
    and its blocks with the scores (Jᵀ W A), are the ones the natural matrix pulled back through
    B gives: full matrix, diagonal and products, for every kind (the intercept shares the
    threshold predictor: its cross terms stay in the natural matrix; the Thurstonian scores'
    predictor is not linear: its gradient at θ enters the cross blocks)."""
    from bayesrank.inference import information as inf
    from bayesrank.inference.structure import structure_of

    _, data = ring
    prepared = framework.prepare(data)
    bound = structure_of(framework, prepared, prior="flat").bind(prepared)
    nmap = bound.structure.natural
    tie = nmap.names.index("tie_factor")
    assert tie in nmap.dense_blocks()
    theta = bound.x0 + 0.3 * np.random.default_rng(0).standard_normal(bound.n_free)
    v = np.random.default_rng(1).standard_normal(bound.n_free)
    found = {}
    for threshold in (1, 10**9):          # the cells' gradients, then the sandwich alone
        monkeypatch.setattr(inf, "FACTORED_FROM", threshold)
        bound.last_at.clear()
        matvec = inf.information_operator(bound, theta)
        found[threshold] = [inf.information(bound, theta, kind) for kind in inf.INFORMATION] + \
                           [inf.information(bound, theta, diagonal=True), matvec(v)]
        used = inf._block_jacobians(bound, inf.CellDerivatives.at(bound, theta))
        assert (tie in used) == (threshold == 1)
    for new, old in zip(found[1], found[10**9]):
        np.testing.assert_allclose(new, old, rtol=1e-10, atol=1e-10 * np.max(np.abs(old)))


@pytest.fixture(scope="module")
def core_and_leaves():
    """Ten items compared with each other but for three pairs, and two items compared once each:
    the leaves' tie factors are left partly free, the core's are not (k_tie = 3)."""
    m, missing = 12, [(0, 1), (2, 3), (4, 5)]
    pairs = [p for p in zip(*np.triu_indices(10, 1)) if p not in missing] + [(10, 0), (11, 1)]
    return m, missing, sparse_davidson(m, pairs, np.random.default_rng(5))


def test_determined_thresholds_are_those_in_the_compared_rows_span(core_and_leaves):
    """A pair's tie threshold is determined exactly when its row of the reference map is a
    combination of the compared pairs' rows (SVD here, pivoted QR in the package): every compared
    pair, the three core pairs never compared, and no pair of a leaf never compared."""
    m, missing, data = core_and_leaves
    fw = br.Davidson(k_tie=3)
    prepared = fw.prepare(data)
    M = reference_map(m, 3, prepared.a, prepared.b)
    rank = np.linalg.matrix_rank(M)
    assert rank < M.shape[1]
    null = np.linalg.svd(M)[2][rank:].T
    a, b = np.triu_indices(m, 1)
    rows = reference_map(m, 3, a, b)
    expected = np.linalg.norm(rows @ null, axis=1) < 1e-8 * np.linalg.norm(rows, axis=1)
    got = fw.identified(prepared, {"item_a": a, "item_b": b})
    np.testing.assert_array_equal(got, expected)
    compared = np.isin(a * m + b, np.minimum(prepared.a, prepared.b) * m + np.maximum(prepared.a, prepared.b))
    assert got[compared].all()
    assert sorted(zip(a[~compared & got], b[~compared & got])) == missing
    assert br.Davidson(k_tie=1).identified(prepared, {"item_a": a, "item_b": b}).all()  # nothing left flat
    assert br.Davidson().identified(prepared, {"item_a": a, "item_b": b}).all()         # a global threshold


def test_predict_reports_no_number_for_undetermined_pairs(core_and_leaves):
    """`predict` gives NaN probabilities and intervals, `identified` False and a note for the pairs
    whose threshold the data leave free, and the same numbers as alone for the others."""
    m, _, data = core_and_leaves
    fw = br.Davidson(k_tie=3)
    fit = br.fit(fw, data)
    assert fit.converged, fit.warnings
    names = np.asarray(data.items, dtype=object)
    a, b = np.triu_indices(m, 1)
    pred = fit.predict(names[a], names[b])
    determined = fw.identified(fw.prepare(data), {"item_a": a, "item_b": b})
    assert determined.any() and not determined.all()
    np.testing.assert_array_equal(pred["identified"].to_numpy(), determined)
    columns = [c for c in pred.columns if c.startswith("p_")]
    assert pred.loc[~determined, columns].isna().all().all()
    assert np.isfinite(pred.loc[determined, columns].to_numpy(float)).all()
    assert f"{int((~determined).sum())} of {len(a)} pairs" in pred.attrs["note"]
    alone = fit.predict(names[a[determined]], names[b[determined]])
    assert "note" not in alone.attrs and alone["identified"].all()
    np.testing.assert_allclose(alone[columns].to_numpy(float), pred.loc[determined, columns].to_numpy(float))


def test_gars_of_a_fit_that_leaves_pairs_free_has_no_number(core_and_leaves):
    """GARS read every pair's probabilities: from a fit whose data do not determine some pairs' tie
    thresholds they are NaN and say why; with one tie factor (nothing left free) they are numbers."""
    from bayesrank import gars

    m, missing, data = core_and_leaves
    free = gars.from_fit(br.fit(br.Davidson(k_tie=3), data), "borda")
    assert np.isnan(free.estimate).all()
    never = m * (m - 1) // 2 - data.n_cells      # pairs never compared; the missing core pairs are determined
    assert f"do not determine the tie threshold of {never - len(missing)} pairs" in free.warnings[0]
    fixed = gars.from_fit(br.fit(br.Davidson(k_tie=1), data), "borda")
    assert np.isfinite(fixed.estimate).all() and np.isfinite(fixed.se).all()


def test_compared_pairs_are_identified_without_the_row_space(core_and_leaves, monkeypatch):
    """Asking only about compared pairs never computes the compared rows' span (a QR of the whole
    threshold map: 2.6 s at k_tie = 20 on arena-2024)."""
    from bayesrank.model import paired

    _, _, data = core_and_leaves
    fw = br.Davidson(k_tie=3)
    prepared = fw.prepare(data)

    def refuse(*args, **kwargs):
        raise AssertionError("the row space was computed")

    monkeypatch.setattr(paired, "threshold_row_space", refuse)
    assert fw.identified(prepared, {"item_a": prepared.b, "item_b": prepared.a}).all()  # either order
