"""Score structures: the parameters of a framework, with the papers' constraints by construction.

Every function here creates model variables inside a PyMC model context (or computes a
fixed basis); how the variables enter each cell's predictors is declared by the frameworks
(:mod:`bayesrank.model.paired`, :mod:`bayesrank.model.judge_aware`). The constraints are
imposed by construction, never by penalties:

* scores sum to zero — a zero-sum transform (PyMC's :class:`ZeroSumTransform`), so the free
  coordinates have dimension m − 1 and a flat prior on them gives the MLE;
* factored tie thresholds H = GΦᵀ + ΦGᵀ (+ η₀J) — the map G ↦ GΦᵀ + ΦGᵀ has the null space
  {ΦA : A antisymmetric}; we parameterise G = Φ⊥C + ΦS with S symmetric, where [Φ, Φ⊥] is
  the full orthonormal DCT-IV basis; the coordinates (C, S) are in turn a basis of the
  complement of the directions the compared pairs leave flat (:func:`tie_coordinate_basis`),
  so every free coordinate is identified;
* Thurstonian covariance Σ = D + ΛΛᵀ — raw coordinates whose scale, and the translation and
  rotation of the loadings, are fixed by linear charts (:func:`thurstonian`).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from bayesrank.runtime.lazy import lazy_module

pm = lazy_module("pymc")
pt = lazy_module("pytensor.tensor")
pytensor = lazy_module("pytensor")


def dct_iv_basis(m: int, k: int | None = None) -> np.ndarray:
    """DCT-IV basis, paper eq. (8): φ_ij = √(2/m) cos(π/(4m)(2i−1)(2j−1)).

    Parameters
    ----------
    m : int
        Number of items (rows).
    k : int, optional
        Number of columns (default ``m``: the full orthonormal matrix).

    Returns
    -------
    ndarray
        ``(m, k)`` matrix with orthonormal columns.
    """
    k = m if k is None else k
    i = np.arange(1, m + 1)[:, None]
    j = np.arange(1, k + 1)[None, :]
    return np.sqrt(2.0 / m) * np.cos(np.pi / (4 * m) * (2 * i - 1) * (2 * j - 1))


def zero_sum_scores(name: str, dims: str, prior: str, sigma: float, initval=None):
    """Scores that sum to zero by construction.

    ``prior="flat"`` puts a flat density on the m − 1 free coordinates (MAP = MLE);
    ``prior="weak"`` is ``ZeroSumNormal(sigma)``. ``initval`` (zero-sum) is the start of MAP
    and of the NUTS chains.
    """
    kw = {} if initval is None else {"initval": np.asarray(initval, dtype=float)}
    if prior == "flat":
        return pm.Flat(name, dims=dims, transform=pm.distributions.transforms.ZeroSumTransform([-1]), **kw)
    return pm.ZeroSumNormal(name, sigma=sigma, dims=dims, **kw)


def empirical_scores(data) -> np.ndarray:
    """Centred logits of each item's (wins + ties/2)/comparisons: a start for the scores.

    (leaderbot starts its covariance models from the centred rates themselves.) Needed by the
    Thurstonian models: at μ = 0 every z_ab is 0 whatever Σ, so the curvature in the
    covariance coordinates vanishes there and a diagonal preconditioner built at the start
    would be degenerate.

    Parameters
    ----------
    data : Comparisons
    """
    m = data.n_items
    half = data.ties / 2
    won = np.bincount(data.a, data.wins_a + half, m) + np.bincount(data.b, data.wins_b + half, m)
    n = np.bincount(data.a, data.totals, m) + np.bincount(data.b, data.totals, m)
    rate = np.clip((won + 0.5) / (n + 1.0), 0.02, 0.98)
    x = np.log(rate / (1 - rate))
    return x - x.mean()


#: Up to this many items the start's Laplacian is solved dense (Cholesky); beyond, sparse by
#: conjugate gradients (a dense Laplacian of many items takes items² doubles).
DENSE_START_MAX = 1000


def pair_logit_scores(data) -> np.ndarray:
    """Centred scores fitted to the cells' empirical log-odds by weighted least squares
    (Berkson's minimum logit χ²): a start for the scores of a log-concave model, closer to the
    maximum-likelihood estimate than :func:`empirical_scores` because it uses who met whom.

    Each compared cell gives l = log((w_a + t/2 + ½) / (w_b + t/2 + ½)) with weight
    v = (w_a + t/2 + ½)(w_b + t/2 + ½)/(n + 1), the inverse of the logit's asymptotic variance;
    the scores solve the weighted graph Laplacian's normal equations L x = Σ v l (signed by
    side), centred. Beyond :data:`DENSE_START_MAX` items the sparse
    Laplacian is solved by conjugate gradients. On a comparison graph that is not connected (no
    unique least-squares solution) the item logits of :func:`empirical_scores` are returned.

    Parameters
    ----------
    data : Comparisons
    """
    m = data.n_items
    half = data.ties / 2
    won_a, won_b = data.wins_a + half + 0.5, data.wins_b + half + 0.5
    weight = np.where(data.totals > 0, won_a * won_b / (won_a + won_b), 0.0)
    pulled = weight * np.log(won_a / won_b)
    rhs = np.bincount(data.a, pulled, m) - np.bincount(data.b, pulled, m)
    degree = np.bincount(data.a, weight, m) + np.bincount(data.b, weight, m)
    if m > DENSE_START_MAX:  # the sparse Laplacian, by conjugate gradients (it is singular along 1, rhs ⊥ 1)
        if np.any(degree <= 0):  # an item without comparisons: not connected
            return empirical_scores(data)
        off = scipy.sparse.csr_matrix((weight, (data.a, data.b)), shape=(m, m))
        laplacian = scipy.sparse.diags(degree) - off - off.T
        x, info = scipy.sparse.linalg.cg(laplacian, rhs, rtol=1e-10, maxiter=10 * m,
                                         M=scipy.sparse.diags(1.0 / degree))
    else:
        off = np.bincount(data.a * m + data.b, weight, m * m).reshape(m, m)
        # + 11ᵀ/m: positive definite on a connected graph, and its solution is centred (1ᵀ rhs = 0);
        # LAPACK's posv (Cholesky and solve) directly: scipy's wrappers cost more than the algebra
        _, x, info = scipy.linalg.lapack.dposv(np.diag(degree) - off - off.T + 1.0 / m, rhs, overwrite_a=1)
    return x - x.mean() if info == 0 and np.all(np.isfinite(x)) else empirical_scores(data)


def free_real(name: str, prior: str, sigma: float, mu: float = 0.0, **kwargs):
    """An unconstrained real parameter: flat for MAP, ``Normal(mu, sigma)`` for NUTS."""
    if prior == "flat":
        return pm.Flat(name, **kwargs)
    return pm.Normal(name, mu=mu, sigma=sigma, **kwargs)


def placed(shape: tuple[int, int], entries, constant: np.ndarray | None = None):
    """A matrix whose entries at given positions are vectors of free coordinates: written as a
    fixed linear map (so it stays affine, vectorises over draws, and differentiates cheaply).

    Parameters
    ----------
    shape : (int, int)
    entries : list of (rows, cols, vector)
        ``vector[i]`` goes to ``(rows[i], cols[i])``; positions listed twice add up.
    constant : ndarray, optional
        Fixed entries.
    """
    size = shape[0] * shape[1]
    out = pt.as_tensor(np.zeros(size) if constant is None else np.ravel(constant).astype(float))
    for rows, cols, vector in entries:
        rows, cols = np.asarray(rows), np.asarray(cols)
        E = np.zeros((size, rows.size))
        E[rows * shape[1] + cols, np.arange(rows.size)] = 1.0
        out = out + pt.as_tensor(E) @ vector
    return out.reshape(shape)


def n_symmetric(k: int) -> int:
    """Free entries of a symmetric k×k matrix."""
    return k * (k + 1) // 2


def tie_factor_columns(m: int, k: int) -> np.ndarray:
    """The loadings G (m×k) of each identified tie coordinate: ``(n_coords, m, k)``.

    The coordinates are those of :func:`tie_factors` — C ((m − k)×k, row-major), then the
    upper triangle of S (``np.triu_indices(k)`` order) — and G = Φ⊥C + ΦS is linear in them,
    so column j is G at the j-th unit vector.
    """
    full = dct_iv_basis(m)
    phi, phi_perp = full[:, :k], full[:, k:]
    cols = np.zeros((n_tie_coordinates(m, k), m, k))
    j = 0
    for p in range(m - k):
        for q in range(k):
            cols[j, :, q] = phi_perp[:, p]
            j += 1
    for p, q in zip(*np.triu_indices(k)):
        cols[j, :, q] += phi[:, p]
        if p != q:
            cols[j, :, p] += phi[:, q]
        j += 1
    return cols


def n_tie_coordinates(m: int, k: int) -> int:
    """Coordinates of G = Φ⊥C + ΦS: (m − k)k + k(k + 1)/2."""
    return (m - k) * k + n_symmetric(k)


#: Bases of the identified tie coordinates already computed: (m, k, data key) → basis.
_BASES: dict = {}
#: Comparison graphs whose tie results (:data:`_BASES`, :data:`_ROW_SPACES`) are kept; the oldest go first.
KEPT_GRAPHS = 64


def _per_graph(store: dict, key, compute):
    """``compute()`` kept in ``store`` under ``key`` (one comparison graph), at most :data:`KEPT_GRAPHS`."""
    if key not in store:
        store[key] = compute()
        if len(store) > KEPT_GRAPHS:
            store.pop(next(iter(store)))
    return store[key]


#: Directions of the tie coordinates whose curvature (eigenvalue of MᵀWM) is below this fraction
#: of the largest are flat: below what float64 resolves in the fit's information (singular
#: along them, :data:`bayesrank.inference.optimize.SINGULAR`).
RANK_TOL = 1e-8


def tie_coordinate_basis(m: int, k: int, a: np.ndarray, b: np.ndarray, weights: np.ndarray, threshold,
                         key) -> np.ndarray:
    """An orthonormal basis of the tie coordinates the compared pairs identify.

    H = GΦᵀ + ΦGᵀ enters the likelihood only at the pairs that were compared. Let M map the
    tie coordinates (those of :func:`tie_factors`: C row-major, then the upper triangle of S)
    to the thresholds of the compared pairs and W hold their numbers of comparisons. The
    directions along which MᵀWM is flat change η only at pairs never compared (the leaderbot
    paper's k_tie = 20 models on the arena: 22 of 2390 exactly, rank 2368) or through a handful
    of comparisons below float64 resolution; the free tie coordinates are the coefficients on
    the eigenvectors of MᵀWM whose eigenvalues are at least :data:`RANK_TOL` of the largest —
    a basis of the complement of those directions, computed once per comparison graph.

    Consequences:

    * the information is non-singular, so Newton's method and Wald intervals apply;
    * the kept directions reach every threshold vector of the compared pairs the full set
      reaches (up to the unresolvable ones): the same likelihood, identified;
    * the estimate is the *minimum-norm* choice (Euclidean norm of the coordinates) among the
      tie factors with the same compared thresholds, so the thresholds it predicts for pairs
      never compared are those of the smallest tie factors that fit the data;
    * the coordinates are the eigen-directions of the tie thresholds' curvature (up to each
      cell's link curvature), so a diagonal preconditioner nearly whitens them.

    Parameters
    ----------
    m, k : int
    a, b : ndarray
        Items of the compared pairs.
    weights : ndarray
        Comparisons of each pair.
    threshold : callable
        ``threshold(g_a, g_b)`` with ``(n, k)`` loadings of each pair's items ↦ ``(n,)``
        thresholds, linear: the framework's own threshold predictor, evaluated in NumPy.
    key : hashable
        Identifies the compared pairs (cache key).

    Returns
    -------
    basis : ndarray
        ``(n_tie_coordinates(m, k), r)`` with orthonormal columns, largest curvature first;
        r = n_tie_coordinates(m, k) when no direction is flat.
    curvature : ndarray
        ``(r,)`` the eigenvalues of MᵀWM along them, relative to the largest (in [RANK_TOL, 1]).
    """
    def compute():
        M = tie_threshold_map(m, k, a, b, threshold)
        gram = M.T @ (np.asarray(weights, dtype=float)[:, None] * M)
        w, V = np.linalg.eigh(gram)
        kept = w >= RANK_TOL * w[-1]
        basis = V[:, kept][:, ::-1]
        # a fixed sign per column (eigh's is arbitrary): its largest entry positive
        top = basis[np.argmax(np.abs(basis), axis=0), np.arange(basis.shape[1])]
        return np.ascontiguousarray(basis * np.sign(top)), w[kept][::-1] / w[-1]

    return _per_graph(_BASES, (m, k, key), compute)


#: Row spaces of the compared pairs' tie threshold maps already computed: (m, k, data key) → space.
_ROW_SPACES: dict = {}


def threshold_row_space(m: int, k: int, a: np.ndarray, b: np.ndarray, threshold, key
                        ) -> tuple[np.ndarray, float] | None:
    """The tie thresholds the compared pairs determine: the span of their rows of the tie threshold
    map M (by an orthonormal basis of its complement), and the tolerance of a test against it.

    A pair's threshold is a fixed combination of the compared pairs' thresholds — the same
    whatever the tie factors, among those with the same compared thresholds — exactly when its row
    of the map lies in that span; otherwise the likelihood is flat along a direction that moves
    it, and the data do not determine it at all. The span comes from a QR factorisation of Mᵀ with
    column pivoting (numerical rank by NumPy's rule on R's diagonal: entries above max(shape) · ε
    of the largest); it is accurate to about √n ε |R₁₁| / |R_rr| (n coordinates, r the rank: the
    gap to the directions left out), and a row counts as inside it when its part outside is below
    that tolerance (at least 1e-12) of its norm. Computed once per comparison graph.

    Parameters
    ----------
    m, k, a, b, threshold, key
        As :func:`tie_coordinate_basis`: the compared pairs and the threshold predictor.

    Returns
    -------
    tuple of (ndarray, float) or None
        ``(N, tolerance)`` with N ``(n_tie_coordinates(m, k), n − r)`` an orthonormal basis of the
        span's complement (the directions the likelihood is flat along); None when the compared
        pairs determine every tie coordinate (then every pair's threshold).
    """
    def compute():
        M = tie_threshold_map(m, k, a, b, threshold)
        Q, R, _ = scipy.linalg.qr(M.T, pivoting=True)  # Q square: its last n − r columns span the complement
        d = np.abs(np.diag(R))
        rank = int(np.sum(d > max(M.shape) * np.finfo(float).eps * d[0]))
        n = M.shape[1]
        return None if rank == n else (
            np.ascontiguousarray(Q[:, rank:]), max(1e-12, np.sqrt(n) * np.finfo(float).eps * d[0] / d[rank - 1]))

    return _per_graph(_ROW_SPACES, (m, k, key), compute)


def in_row_space(rows: np.ndarray, space: tuple[np.ndarray, float] | None) -> np.ndarray:
    """Whether each row of the tie threshold map (a pair's threshold) lies in the compared pairs'
    span ``space`` of :func:`threshold_row_space` (True for every row when it is None)."""
    if space is None:
        return np.ones(rows.shape[0], dtype=bool)
    complement, tolerance = space
    return np.linalg.norm(rows @ complement, axis=1) <= tolerance * np.linalg.norm(rows, axis=1)


def tie_threshold_map(m: int, k: int, a: np.ndarray, b: np.ndarray, threshold) -> np.ndarray:
    """The matrix M of the linear map from the tie coordinates (those of :func:`tie_factors`: C
    row-major, then the upper triangle of S) to the thresholds of the pairs ``(a, b)``.

    Parameters
    ----------
    m, k : int
    a, b : ndarray
        Items of the pairs.
    threshold : callable
        As :func:`tie_coordinate_basis`.

    Returns
    -------
    ndarray
        ``(len(a), n_tie_coordinates(m, k))``.
    """
    n = len(a)
    zero, rows = np.zeros((n, k)), np.arange(n)
    entries = []
    for q in range(k):  # ∂η_ab/∂g_aq and ∂η_ab/∂g_bq: the (linear) predictor at unit loadings
        unit = zero.copy()
        unit[:, q] = 1.0
        entries += [(rows, a * k + q, threshold(unit, zero)), (rows, b * k + q, threshold(zero, unit))]
    r, c, v = (np.concatenate(x) for x in zip(*entries))
    M_G = scipy.sparse.csr_matrix((v, (r, c)), shape=(n, m * k))
    cols = tie_factor_columns(m, k)
    return np.asarray(M_G @ cols.reshape(len(cols), m * k).T)


#: The free tie coordinates on the basis of :func:`tie_coordinate_basis` (:func:`tie_factors`).
TIE_COORDINATES = "tie_coord"


def tie_factors(m: int, k: int, prior: str, sigma: float, start_level: float = 0.0, basis=None):
    """Identified tie factor loadings G (m×k) for H = GΦᵀ + ΦGᵀ.

    G = Φ⊥C + ΦS with C ∈ ℝ^{(m−k)×k} free and S symmetric; this removes the null space
    {ΦA : A antisymmetric} of the map G ↦ H exactly (its dimension is k(k−1)/2). With
    ``basis`` (the ``(basis, curvature)`` of :func:`tie_coordinate_basis`), the coordinates
    (C, upper S) are ``basis @ θ`` with θ free (``tie_coord``), which removes the directions the
    data leave flat; without it, C and S are free themselves (``tie_coef``, ``tie_sym``). The
    chart is the same under both priors: the basis is orthonormal, so the isotropic Normal prior
    on θ is the isotropic prior on (C, S) restricted to the identified directions.

    Returns
    -------
    G : TensorVariable
        Registered as the deterministic ``tie_factor`` with dims ``(item, tie_factor)``.
    phi : ndarray
        The fixed basis Φ (m×k).

    Notes
    -----
    ``start_level`` c ≠ 0 starts the optimiser at the H of G₀ = c·1e₁ᵀ, i.e.
    h_ab = c(φ_a1 + φ_b1), positive for every pair because the first DCT-IV column is
    positive (with ``basis``: its projection on the kept directions). Threshold maps that are
    flat at h = 0 (the paper's |h|) need such a start.
    """
    full = dct_iv_basis(m)
    phi, phi_perp = full[:, :k], full[:, k:]
    rows, cols = np.triu_indices(k)
    G0 = np.zeros((m, k))
    G0[:, 0] = start_level
    A = phi.T @ G0
    coef0, sym0 = phi_perp.T @ G0, ((A + A.T) / 2)[rows, cols]
    # initial values only where needed, and for MAP only (nutpie cannot take them)
    start = start_level != 0 and prior == "flat"
    n_coef = (m - k) * k
    if basis is None:
        coef = free_real("tie_coef", prior, sigma, shape=(m - k, k), **({"initval": coef0} if start else {})) \
            if m > k else None
        sym = free_real("tie_sym", prior, sigma, shape=(n_symmetric(k),), **({"initval": sym0} if start else {}))
    else:  # the identified directions free, the flat ones removed
        basis, _ = basis
        theta0 = basis.T @ np.concatenate([coef0.ravel(), sym0])
        free = free_real(TIE_COORDINATES, prior, sigma, shape=(basis.shape[1],),
                         **({"initval": theta0} if start else {}))
        # a shared variable, not a constant: the samplers' backends keep a large array out of their code
        stored = pytensor.shared(np.ascontiguousarray(basis, dtype=float), name="tie_coordinate_basis")
        coords = pt.dot(stored, free)
        coef = coords[:n_coef].reshape((m - k, k)) if m > k else None
        sym = coords[n_coef:]
    parts = [] if coef is None else [pt.as_tensor(phi_perp) @ coef]
    lower = np.flatnonzero(rows != cols)  # the mirror image of the strictly upper entries
    S = placed((k, k), [(rows, cols, sym), (cols[lower], rows[lower], sym[lower])])
    parts.append(pt.as_tensor(phi) @ S)
    G = pm.Deterministic("tie_factor", sum(parts[1:], parts[0]), dims=("item", "factor"))
    return G, phi


# ---------------------------------------------------------------------- Thurstonian covariance
def zero_sum_basis(m: int) -> np.ndarray:
    """Orthonormal basis of the zero-sum subspace {v : 1ᵀv = 0} (normalised Helmert contrasts).

    Column j (0-based) is (1, …, 1, −(j+1), 0, …, 0)/√((j+1)(j+2)) with j + 1 ones, so the
    basis is fixed and platform independent.

    Returns
    -------
    ndarray
        ``(m, m − 1)`` with ``Bᵀ B = I`` and ``Bᵀ 1 = 0``.
    """
    B = np.zeros((m, m - 1))
    for j in range(m - 1):
        B[: j + 1, j] = 1.0
        B[j + 1, j] = -(j + 1)
        B[:, j] /= np.sqrt((j + 1) * (j + 2))
    return B


def n_covariance(m: int, k: int) -> int:
    """Free parameters of the identified Thurstonian covariance Σ = D + ΛΛᵀ of rank-k loadings.

    m diagonal entries and m·k loadings, minus 1 (scale, trace(PΣP) = 1), minus k (zero-sum
    columns of Λ), minus k(k − 1)/2 (rotation of Λ): (m − 1)(k + 1) − k(k − 1)/2.
    """
    return (m - 1) * (k + 1) - k * (k - 1) // 2


def thurstonian(m: int, k: int, prior: str, score_sigma: float, cov_sigma: float):
    """Thurstonian scores and factor covariance Σ = D + ΛΛᵀ (leaderbot paper eq. 9–13), every
    symmetry removed by construction.

    The likelihood sees z_ab = (μ_a − μ_b)/√s_ab with s_ab = d_a + d_b + ‖λ_a − λ_b‖². It is
    written in *raw* coordinates, z_ab = (μ̃_a − μ̃_b)/√s̃_ab with s̃_ab = t_a² + t_b² +
    ‖λ̃_a − λ̃_b‖², and the paper's quantities are reported under its normalisation
    trace(PΣP) = 1: with C = (1 − 1/m)Σt² + ‖Λ̃‖²_F (= trace(PΣ̃P)),

        μ = μ̃/√C,   d = t²/C,   Λ = Λ̃/√C,

    which leaves z unchanged. So the cell likelihood depends on a handful of per-item raw
    coordinates only (no global normalising constant), and every raw coordinate is linear in
    the free coordinates. The symmetries of the paper's §2.5 / App. C.4 and the rotation of Λ:

    * **translation of loadings** Λ → Λ + 1cᵀ: Λ̃ = B L with B the orthonormal zero-sum basis
      :func:`zero_sum_basis`, so Λᵀ1 = 0 exactly;
    * **rotation** Λ → ΛQ (not treated in the paper): L is (m − 1)×k lower-triangular, which
      leaves only the signs of its columns (a discrete symmetry); its diagonal entries are free
      real coordinates, so the chart has no edge: a diagonal entry crossing 0 is the mirror image
      of its column, with the same likelihood. Loadings are reported in this rotation (interpret
      S, Z or ΛΛᵀ, which are rotation and sign free);
    * **scale** (μ̃, t, Λ̃) → (aμ̃, at, aΛ̃), a > 0, leaves z unchanged: fixed by
      Σ_a t_a = m (t = 1 + a zero-sum vector).

    t enters squared (as leaderbot's d = t²), so d_a = 0 — where several arena items sit at
    the MLE — is an interior point; the signs of t are discrete symmetries, and only sign-free
    quantities are reported.

    Free coordinates: the zero-sum ``score_raw`` (m − 1), ``cov_t`` (m − 1, zero-sum around
    1) and, for k ≥ 1, ``cov_load_diag`` (k) and ``cov_load_off`` ((m − 1)k − k(k + 1)/2). The
    covariance has :func:`n_covariance` free coordinates.

    Returns
    -------
    dict
        ``score_raw`` (μ̃), ``cov_t`` (t) and ``cov_raw_loading`` (Λ̃, None when k = 0) — the
        raw coordinates the likelihood uses — and the reported deterministics ``score`` (μ),
        ``cov_diag`` (d) and ``cov_loading`` (Λ, when k ≥ 1).
    """
    # μ̃ ≈ √2 × logit-scale scores when t ≈ 1 (s̃ ≈ 2): the prior scale follows
    raw = zero_sum_scores("score_raw", "item", prior, np.sqrt(2.0) * score_sigma)
    # Σt = m pins the scale (t = 1 + a zero-sum vector); the signs of t are a discrete symmetry
    # that Framework.canonical resolves when the optimiser mixes them
    t = pm.Deterministic("cov_t", 1.0 + zero_sum_scores("cov_u", "item", prior, cov_sigma), dims="item")
    C = (1.0 - 1.0 / m) * pt.sum(t**2)
    if k:
        diag_index, (rows, cols) = loading_free_entries(m, k)
        start = {"initval": np.ones(k)} if prior == "flat" else {}  # (nutpie takes no initial values)
        entries = [(diag_index, diag_index, free_real("cov_load_diag", prior, cov_sigma, shape=(k,), **start))]
        if rows.size:
            entries.append((rows, cols, free_real("cov_load_off", prior, cov_sigma, shape=(rows.size,))))
        L = placed((m - 1, k), entries)
        lam = pm.Deterministic("cov_raw_loading", pt.as_tensor(zero_sum_basis(m)) @ L, dims=("item", "cov_factor"))
        C = C + pt.sum(lam**2)
        pm.Deterministic("cov_loading", lam / pt.sqrt(C), dims=("item", "cov_factor"))
    else:
        lam = None
    pm.Deterministic("score", raw / pt.sqrt(C), dims="item")
    pm.Deterministic("cov_diag", t**2 / C, dims="item")
    return {"score_raw": raw, "cov_t": t, "cov_raw_loading": lam}


def loading_free_entries(m: int, k: int) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Where the free coordinates sit in the (m − 1)×k lower-triangular loading factor L of
    :func:`thurstonian`.

    Returns
    -------
    diag : ndarray
        Indices j of the diagonal entries L_jj = ``cov_load_diag``, j = 0, …, k − 1.
    off : (ndarray, ndarray)
        Rows and columns of the strictly lower entries (``cov_load_off``, in this order).
    """
    return np.arange(k), np.tril_indices(m - 1, k=-1, m=k)


def dispersion_matrix(d: np.ndarray, loading: np.ndarray | None) -> np.ndarray:
    """The m×m matrix S with s_ab = d_a + d_b + ‖λ_a − λ_b‖² off the diagonal, s_aa = 0."""
    d = np.asarray(d, dtype=float)
    S = d[:, None] + d[None, :]
    if loading is not None and np.size(loading):
        L = np.asarray(loading, dtype=float)
        sq = (L**2).sum(axis=1)
        S = S + sq[:, None] + sq[None, :] - 2 * L @ L.T
    np.fill_diagonal(S, 0.0)
    return S


__all__ = [
    "DENSE_START_MAX", "KEPT_GRAPHS", "RANK_TOL", "TIE_COORDINATES", "dct_iv_basis", "dispersion_matrix",
    "empirical_scores", "free_real", "in_row_space", "loading_free_entries", "n_covariance", "n_symmetric",
    "n_tie_coordinates", "pair_logit_scores", "placed", "threshold_row_space", "thurstonian", "tie_coordinate_basis",
    "tie_factor_columns", "tie_factors", "tie_threshold_map", "zero_sum_basis", "zero_sum_scores"
]
