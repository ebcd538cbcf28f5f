"""Many items: intervals from sparse information and structured maps, checked against dense
NumPy written here; the cheap certificate that lets a MAP fit skip the existence LP."""

import numpy as np
import pytest
import scipy.sparse as sp

import bayesrank as br
from bayesrank.inference import existence
from bayesrank.inference.natural import SparsePlusRankOne
from bayesrank.results.ranksets import rank_sets


def _laplacian(m, a, b, weight):
    """Σ_c w_c (e_a − e_b)(e_a − e_b)ᵀ, dense, written out pair by pair."""
    L = np.zeros((m, m))
    for i, j, w in zip(a, b, weight):
        L[i, i] += w
        L[j, j] += w
        L[i, j] -= w
        L[j, i] -= w
    return L


def _bt_wald_reference(fit, data):
    """The Bradley–Terry score covariance as the pseudo-inverse of the observed information,
    a weighted graph Laplacian (the zero-sum scores span its range)."""
    s = fit.scores().reindex(data.items).to_numpy()
    d = s[data.a] - s[data.b]
    p = 1 / (1 + np.exp(-d))
    n = data.wins_a + data.wins_b + data.ties
    return s, np.linalg.pinv(_laplacian(data.n_items, data.a, data.b, n * p * (1 - p)), hermitian=True)


def test_arena_wald_covariance_is_the_dense_inverse(arena):
    fit = br.fit(br.BradleyTerry(ties="half"), arena, intervals="wald")
    _, reference = _bt_wald_reference(fit, arena)
    cov = fit.tree["estimate"]["score_cov"].values
    assert np.max(np.abs(cov - reference)) < 1e-10 * np.max(np.abs(reference))
    se = fit.tree["estimate"]["score_se"].values
    assert np.allclose(se, np.sqrt(np.diag(reference)), rtol=1e-9, atol=0)


def _synthetic(m, pairs_per_item=6, per_pair=50, seed=1):
    rng = np.random.default_rng(seed)
    scores = rng.normal(0, 1, m)
    a = rng.integers(0, m, pairs_per_item * m)
    b = (a + 1 + rng.integers(0, m - 1, a.size)) % m
    a[:m - 1], b[:m - 1] = np.arange(m - 1), np.arange(1, m)
    wins = rng.binomial(per_pair, 1 / (1 + np.exp(-(scores[a] - scores[b]))))
    names = np.array([f"m{k:04d}" for k in range(m)], dtype=object)
    return br.Comparisons.from_cells(names[a], names[b], wins, per_pair - wins)


def test_many_items_covariance_and_smallest_eigenvalue_match_dense_numpy():
    """Beyond 400 free coordinates the smallest eigenvalue comes from Lanczos on the inverse and
    the score covariance from the structured zero-sum map: both against dense NumPy here."""
    data = _synthetic(450)
    fit = br.fit(br.BradleyTerry(ties="drop"), data)
    assert fit.converged
    s, reference = _bt_wald_reference(fit, data)
    cov = fit.tree["estimate"]["score_cov"].values
    assert np.max(np.abs(cov - reference)) < 1e-9 * np.max(np.abs(reference))
    d = s[data.a] - s[data.b]
    p = 1 / (1 + np.exp(-d))
    L = _laplacian(data.n_items, data.a, data.b, (data.wins_a + data.wins_b) * p * (1 - p))
    # the information on the zero-sum coordinates has the Laplacian's non-zero eigenvalues
    smallest = np.linalg.eigvalsh(L)[1] / fit.n_comparisons
    assert fit.diagnostics["min_information_eigenvalue"] == pytest.approx(smallest, rel=1e-5)


@pytest.mark.parametrize("shape", ["zero-sum", "sparse", "dense"])
def test_sparse_plus_rank_one_products_match_dense(shape):
    rng = np.random.default_rng(3)
    m = 12
    if shape == "zero-sum":  # PyMC's zero-sum map: identity with a rank-one correction
        B = np.vstack([np.eye(m - 1), np.zeros((1, m - 1))])
        c = 1 / (np.sqrt(m) + m)
        B = B - c - np.outer(np.eye(m)[-1], np.ones(m - 1)) / np.sqrt(m)
    elif shape == "sparse":
        B = np.eye(m)[:, : m - 2]
    else:
        B = rng.standard_normal((m, m - 1))
    part = SparsePlusRankOne.of(B)
    assert (part.u is not None) == (shape == "zero-sum")
    assert sp.issparse(part.S) == (shape != "dense")
    H = sp.random(m, m, density=0.3, random_state=4)
    H = (H + H.T).tocsr()
    assert np.allclose(part.sandwich(H, part), B.T @ H.toarray() @ B, atol=1e-13)
    assert np.allclose(part.sandwich(H.toarray(), part), B.T @ H.toarray() @ B, atol=1e-13)
    C = rng.standard_normal((B.shape[1], B.shape[1]))
    C = C @ C.T
    assert np.allclose(part.congruence(C), B @ C @ B.T, atol=1e-12)
    at = np.arange(B.shape[1])
    assert np.allclose(part.diagonal_sandwich(H, part, at, at), np.diag(B.T @ H.toarray() @ B), atol=1e-13)


def test_rank_sets_of_many_items_stay_in_bounded_memory(monkeypatch):
    """The max statistic is taken over blocks of draws and pairs: never draws × all pairs."""
    import bayesrank.results.ranksets as ranksets

    data = _synthetic(120, pairs_per_item=4)
    fit = br.fit(br.BradleyTerry(ties="drop"), data)
    seen = []
    original = ranksets._block_max

    def spy(deviations, sigma, i, j):
        seen.append(deviations.shape[0] * len(i))
        return original(deviations, sigma, i, j)

    monkeypatch.setattr(ranksets, "_block_max", spy)
    monkeypatch.setattr(ranksets, "BLOCK_ENTRIES", 50_000)
    small = rank_sets(fit.tree)
    assert max(seen) <= 50_000
    monkeypatch.setattr(ranksets, "BLOCK_ENTRIES", 10**9)
    assert small.equals(rank_sets(fit.tree))  # the blocks change nothing


def _count_lp(monkeypatch):
    calls = []
    original = existence.linprog

    def counting(*args, **kw):
        calls.append(1)
        return original(*args, **kw)

    monkeypatch.setattr(existence, "linprog", counting)
    return calls


def test_existence_certificates_skip_the_lp_on_arena(arena, monkeypatch):
    calls = _count_lp(monkeypatch)
    fit = br.fit(br.Davidson(k_tie=1), arena)
    assert fit.diagnostics["mle_exists"] is True and fit.converged
    assert calls == []
    assert fit.diagnostics["existence_check"] == "locked cells"  # the first certificate held
    # without it, Stiemke's certificate holds on its own
    monkeypatch.setattr(existence, "locked_cells_identify", lambda *args: False)
    fit = br.fit(br.Davidson(k_tie=1), arena)
    assert calls == [] and fit.diagnostics["mle_exists"] is True
    assert fit.diagnostics["existence_check"] == "certificate"


def test_lp_still_runs_and_finds_the_flat_ray_where_the_certificate_fails(monkeypatch):
    """'a' beat 'b' once and tied once (Davidson): no positive weights cancel the gradient, so
    the certificate fails, the LP runs and finds the direction."""
    calls = _count_lp(monkeypatch)
    fit = br.fit(br.Davidson(), br.Comparisons.from_cells(["a"], ["b"], [1], [0], [1]))
    assert calls == [1]
    assert fit.diagnostics["mle_exists"] is False
    assert fit.diagnostics["existence_check"] == "linear programme"
    assert any("extended Ford condition" in w for w in fit.warnings)


def test_certificate_is_refused_without_positive_weights():
    """A = [[1], [1]] admits w = 1 with A w > 0, so no positive y has Aᵀ y = 0 and the certificate
    is refused; A = [[1], [−1]] has none, and y = (1, 1) proves it (a zero weight proves nothing)."""
    A = sp.csr_matrix(np.array([[1.0], [1.0]]))
    assert not existence.stiemke_certificate(A, np.array([1.0, 1.0]))
    B = sp.csr_matrix(np.array([[1.0], [-1.0]]))  # ±w both decrease one row: bounded
    assert existence.stiemke_certificate(B, np.array([1.0, 1.0]))
    assert not existence.stiemke_certificate(B, np.array([1.0, 0.0]))


@pytest.mark.parametrize("shape", ["zero-sum", "sparse", "dense"])
def test_sparse_plus_rank_one_from_column_chunks_is_the_whole_block_split(shape):
    """The chunked construction (B measured a few columns at a time) gives :meth:`of`'s split."""
    rng = np.random.default_rng(6)
    m = 40
    if shape == "zero-sum":
        c = 1 / (np.sqrt(m) + m)
        B = np.vstack([np.eye(m - 1), np.zeros((1, m - 1))]) - c - np.outer(np.eye(m)[-1], np.ones(m - 1)) / np.sqrt(m)
    elif shape == "sparse":
        B = np.eye(m)[:, : m - 2] * 2.5
    else:
        B = rng.standard_normal((m, m - 1))
    chunks = lambda: ((k, B[:, k:k + 7]) for k in range(0, B.shape[1], 7))  # noqa: E731
    part = SparsePlusRankOne.of_columns(chunks, *B.shape)
    whole = SparsePlusRankOne.of(B)
    assert (part.u is None) == (whole.u is None) and sp.issparse(part.S) == sp.issparse(whole.S)
    assert np.allclose(part.dense(), B, rtol=0, atol=1e-14)
    X = rng.standard_normal((B.shape[1], 3))
    assert np.allclose(part.times(X), B @ X, atol=1e-13)
    assert np.allclose(part.transpose_times(X[:1].T.repeat(m // X.shape[1] + 1, 0)[:m]),
                       B.T @ X[:1].T.repeat(m // X.shape[1] + 1, 0)[:m], atol=1e-13)


def _force_large_path(monkeypatch, size=60):
    """Every threshold of the many-items path lowered below a small model's size."""
    from bayesrank.inference import information, map as map_, natural, optimize, structure

    monkeypatch.setattr(map_, "DENSE_COVARIANCE_MAX", size)
    monkeypatch.setattr(optimize, "DENSE_MAX", size)
    monkeypatch.setattr(information, "DENSE_EIGEN_MAX", size)
    monkeypatch.setattr(natural, "SPARSE_FROM", size)
    monkeypatch.setattr(information, "SPARSE_FROM", size)
    monkeypatch.setattr(natural, "UNIT_STEPS", 17)   # B measured in several chunks
    monkeypatch.setattr(structure, "_CACHE", type(structure._CACHE)())  # structures built anew


def test_large_model_path_keeps_the_covariance_as_a_factor_and_matches_dense_numpy(monkeypatch):
    """At 150 items with every threshold lowered: no covariance is stored, the standard errors
    are the Laplacian pseudo-inverse's (NumPy, written here), the draws have its covariance, and
    the results layer works from the draws."""
    data = _synthetic(150, pairs_per_item=5, per_pair=40, seed=7)
    dense = br.fit(br.BradleyTerry(ties="drop"), data)
    _force_large_path(monkeypatch)
    fit = br.fit(br.BradleyTerry(ties="drop"), data, draws=4000)
    assert fit.converged and fit.diagnostics["optimiser"]["method"] == "trust-krylov"
    estimate = fit.tree["estimate"]
    assert "theta_cov" not in estimate and "score_cov" not in estimate
    assert estimate.attrs["covariance_stored"] == 0 and dense.tree["estimate"].attrs["covariance_stored"] == 1
    s, reference = _bt_wald_reference(fit, data)
    se = estimate["score_se"].values
    assert np.allclose(se, np.sqrt(np.diag(reference)), rtol=1e-8, atol=0)
    # both paths stop at the MLE to the optimiser's tolerance (a gradient of about 1e-10 per comparison)
    assert np.allclose(s, dense.scores().reindex(data.items).to_numpy(), atol=1e-6)
    assert np.allclose(se, dense.tree["estimate"]["score_se"].values, rtol=1e-6)
    # the smallest eigenvalue (Lanczos with the factor) is the Laplacian's second, per comparison
    d = s[data.a] - s[data.b]
    p = 1 / (1 + np.exp(-d))
    L = _laplacian(data.n_items, data.a, data.b, (data.wins_a + data.wins_b) * p * (1 - p))
    assert fit.diagnostics["min_information_eigenvalue"] == pytest.approx(np.linalg.eigvalsh(L)[1] / fit.n_comparisons,
                                                                          rel=1e-5)
    # draws θ̂ + F z: their covariance is the reference, up to Monte-Carlo error (4000 draws:
    # a variance's relative sd is 2.2%; a contrast's likewise)
    x = fit.tree["posterior"]["score"].values[0]
    assert np.allclose(x.mean(axis=0), s, atol=5 * se.max() / np.sqrt(4000))
    ratio = x.var(axis=0, ddof=1) / np.diag(reference)
    assert np.all(np.abs(ratio - 1) < 0.12) and abs(ratio.mean() - 1) < 0.02
    i, j = np.argsort(-s)[:2]
    contrast = reference[i, i] + reference[j, j] - 2 * reference[i, j]
    assert np.var(x[:, i] - x[:, j], ddof=1) == pytest.approx(contrast, rel=0.1)
    # the results layer without a stored covariance: Wald score intervals, contrasts from draws
    board = fit.leaderboard()
    assert np.allclose(board["se"], dense.leaderboard()["se"], rtol=1e-6)
    diffs = fit.differences()
    top = diffs[(diffs["item_i"] == data.items[i]) & (diffs["item_j"] == data.items[j])]
    assert top["se"].item() == pytest.approx(np.sqrt(contrast), rel=0.06)
    pred = fit.predict([data.items[i]], [data.items[j]])
    assert np.all(np.isfinite(pred.filter(like="lower").to_numpy()))
    assert pred.iloc[0]["p_win_a"] == pytest.approx(dense.predict([data.items[i]], [data.items[j]]).iloc[0]["p_win_a"],
                                                    abs=1e-7)


def test_thousands_of_items_store_no_dense_item_by_item_array():
    m = 2500
    data = _synthetic(m, pairs_per_item=6, per_pair=30, seed=8)
    fit = br.fit(br.BradleyTerry(ties="drop"), data, draws=200)
    assert fit.converged and np.all(np.isfinite(fit.tree["estimate"]["score_se"].values))
    for group in fit.tree.subtree:
        for name, var in group.dataset.data_vars.items():
            big = [size for size in var.shape if size >= m - 1]
            assert len(big) <= 1, (group.path, name, var.shape)
    assert fit.tree["estimate"].attrs["covariance_stored"] == 0
    board = fit.leaderboard()
    assert board["rank_lower"].notna().all() and np.all(np.isfinite(board["lower"]))


@pytest.mark.parametrize("overwrite", [False, True])
def test_extreme_eigenvalues_survive_an_arpack_breakdown(monkeypatch, overwrite):
    """ARPACK broke down ('could not build an Arnoldi factorization') on the nearly singular
    information of a k_tie = 20 model of Table D.1: the eigenvalues then come from LAPACK."""
    from bayesrank.inference import information as info_mod

    n = info_mod.DENSE_EIGEN_MAX + 20
    rng = np.random.default_rng(7)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    spectrum = np.geomspace(1e-11, 3.0, n)
    A = (Q * spectrum) @ Q.T
    A = 0.5 * (A + A.T)
    expected = np.linalg.eigvalsh(A)
    monkeypatch.setattr(info_mod, "lanczos_largest", lambda operator: None)
    smallest, largest, factor = info_mod.extreme_eigenvalues(np.array(A, order="F") if overwrite else A.copy(),
                                                             overwrite=overwrite)
    assert factor is not None
    np.testing.assert_allclose(largest, expected[-1], rtol=1e-10)
    np.testing.assert_allclose(smallest, expected[0], rtol=1e-3)


def test_extreme_eigenvalues_are_the_same_at_every_call():
    """ARPACK draws its Lanczos start from a generator it keeps for the process, so the same
    information gave another smallest eigenvalue at each call (1e-12 apart) and a fit's diagnostics
    depended on the eigenproblems solved before it; the start is fixed now, and the values agree
    with LAPACK's."""
    from bayesrank.inference import information as info_mod

    n = info_mod.DENSE_EIGEN_MAX + 50
    rng = np.random.default_rng(3)
    X = rng.standard_normal((n, n))
    A = X @ X.T / n + 0.1 * np.eye(n)
    calls = [info_mod.extreme_eigenvalues(A.copy())[:2] for _ in range(3)]
    assert calls[0] == calls[1] == calls[2]
    expected = np.linalg.eigvalsh(A)
    np.testing.assert_allclose(calls[0], (expected[0], expected[-1]), rtol=1e-6)


def test_start_on_a_large_zero_sum_block_by_lsqr_equals_the_pseudo_inverse(monkeypatch):
    """Beyond PSEUDO_INVERSE_MAX columns a sparse block of B is solved by LSQR for the starting θ
    (no m × m SVD at 10,000 items); the same θ as the pseudo-inverse's on arena-2024."""
    import bayesrank as br
    from bayesrank.inference import natural
    from bayesrank.inference.structure import structure_of

    framework = br.BradleyTerry()
    prepared = framework.prepare(br.load("arena-2024"))
    structure = structure_of(framework, prepared, prior="flat")
    start = framework.initial_values(prepared)
    by_pinv = structure.natural.theta_for(start, structure.x0)
    monkeypatch.setattr(natural, "PSEUDO_INVERSE_MAX", 0)
    np.testing.assert_allclose(structure.natural.theta_for(start, structure.x0), by_pinv, atol=1e-12)
