"""Exact Hessian, expected information and score outer products, assembled per cell.

With per-cell predictors p_c = (d_c[, h_c]) of the local natural values u_c (kernels in
:mod:`bayesrank.inference.kernels`) and the affine map nat = c + Bθ
(:class:`~bayesrank.inference.natural.NaturalMap`), every matrix here has the form

    Bᵀ [ Σ_c J_cᵀ W_c J_c  (+ Σ_c Σ_q g_cq ∇²p_cq) ] B,

with J_c = ∂p_c/∂u_c scattered into natural coordinates and a small per-cell weight matrix
W_c (P × P, P = 1 or 2 predictors) that says which matrix is built:

``observed``
    −∇²ℓ(θ): W_c = −∂²L_c/∂p², plus the second derivatives of non-linear predictors
    weighted by −∂L_c/∂p (the Thurstonian z, the judge discrimination e^α (s_a − s_b)).
``expected``
    The plug-in expected information with the empirical design ("A Judge-Aware Ranking
    Framework…", Theorem 3.4):
    W_c = n_c Σ_o P_co ∇_p log P_co ∇_p log P_coᵀ — for a two-outcome cell the paper's
    n p̂(1 − p̂) g gᵀ, with no (y − p)∇²η term.
``scores``
    Σ_c s_c s_cᵀ with s_c = ∇_θ L_c, the "meat" of a sandwich covariance: W_c = g_c g_cᵀ
    with g_c = ∂L_c/∂p. Given the comparisons behind each cell (:class:`Units`), the meat is
    per comparison instead, Σ_c Σ_k n_ck s_ck s_ckᵀ: W_c = Σ_k n_ck g_ck g_ckᵀ with
    g_ck = Σ_o y_cko ∂ log P_co/∂p the score of one comparison of kind k (y_ck: the counts it
    adds to the cell's outcome columns, e.g. ½, ½ for a tie counted as half a win).

The same assembly gives the gradient Σ_c J_cᵀ g_c, which tests check against the PyMC
graph's. Every derivative comes from automatic differentiation of the framework's own
predictor and link functions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas, cho_factor, eigh, lapack
from scipy.sparse.linalg import ArpackError, LinearOperator, eigsh

from bayesrank.errors import ModelSpecError
from bayesrank.inference.natural import SPARSE_FROM
from bayesrank.inference.structure import Bound, Structure

#: Up to this many natural coordinates a full information matrix is assembled dense in natural
#: coordinates and pulled back by dense blocks (the θ matrix it becomes is dense and about as
#: large anyway, and the sparse assembly's sort and sliced products cost more there). Beyond,
#: and for a diagonal alone, sparse.
DENSE_NATURAL_MAX = 4000
#: Up to this many free coordinates the smallest eigenvalue of the information comes from a full
#: eigendecomposition; beyond, from Lanczos iterations with its Cholesky factor (O(n²) a step
#: instead of O(n³)).
DENSE_EIGEN_MAX = 400


#: The start of every Lanczos iteration: fixed, because ARPACK's own draws come from a generator it
#: keeps for the process, so a value (converged to 1e-6) would depend on the eigenproblems solved before.
LANCZOS_SEED = 0
#: An information whose smallest eigenvalue is below this fraction of its largest is singular in
#: float64: the directions along it are not identified by the data.
SINGULAR = 1e-12


def largest_eigenvalue(matrix: np.ndarray) -> float:
    """The largest eigenvalue of a symmetric matrix: by Lanczos (:func:`lanczos_largest`), or by
    LAPACK on that one index where ARPACK breaks down."""
    largest = lanczos_largest(matrix)
    if largest is None:
        n = matrix.shape[0]
        largest = float(eigh(matrix, eigvals_only=True, subset_by_index=[n - 1, n - 1])[0])
    return largest


def lanczos_largest(operator) -> float | None:
    """The largest eigenvalue of a symmetric matrix or operator by Lanczos (ARPACK) from the fixed
    start :data:`LANCZOS_SEED`, or None when ARPACK breaks down or does not converge."""
    start = np.random.default_rng(LANCZOS_SEED).standard_normal(operator.shape[0])
    try:
        return float(eigsh(operator, k=1, which="LA", return_eigenvectors=False, tol=1e-6, v0=start)[0])
    except ArpackError:  # ArpackNoConvergence is one
        return None


def extreme_eigenvalues(info: np.ndarray, definite_only: bool = False, overwrite: bool = False
                        ) -> tuple[float, float, tuple | None]:
    """Smallest and largest eigenvalues of a symmetric matrix and its Cholesky factor
    (``cho_factor`` form) when it is positive definite (else None). With ``definite_only`` the
    eigenvalues of a matrix that is not positive definite are not computed (NaN); with
    ``overwrite`` beyond :data:`DENSE_EIGEN_MAX` coordinates the factor is made in ``info``'s
    memory (which is lost)."""
    large = info.shape[0] > DENSE_EIGEN_MAX
    n = info.shape[0]
    # Lanczos on the matrix and on its inverse, applied by two triangular solves with the factor:
    # O(n²) a step instead of the O(n³) of a full eigendecomposition or of forming the inverse
    largest = None
    if large:
        largest = largest_eigenvalue(info)
    try:
        factor = cho_factor(info, check_finite=False, overwrite_a=overwrite and large)
    except np.linalg.LinAlgError:
        factor = None
    if factor is None and (definite_only or (overwrite and large)):  # (a failed factor overwrote info)
        return float("nan"), float("nan") if largest is None else largest, None
    if factor is None or not large:
        return *_dense_extremes(info), factor
    c, lower = factor  # LAPACK's potrs on the factor's memory (cho_solve copied it on every call)
    c, lower = (c, lower) if c.flags.f_contiguous else (c.T, not lower)
    inverse = LinearOperator((n, n), matvec=lambda x: lapack.dpotrs(c, x, lower=lower)[0], dtype=float)
    largest_inverse = lanczos_largest(inverse)
    if largest_inverse is not None:
        return 1.0 / largest_inverse, largest, factor
    # ARPACK broke down (it does on a nearly singular information, ill-conditioned beyond 1e12):
    # the matrix again from its factor, and its smallest eigenvalue by LAPACK
    L = np.tril(c) if lower else np.triu(c).T  # A = L Lᵀ
    rebuilt = L @ L.T
    smallest = float(eigh(rebuilt, eigvals_only=True, subset_by_index=[0, 0], overwrite_a=True)[0])
    return smallest, largest, factor


def _dense_extremes(info: np.ndarray) -> tuple[float, float]:
    """Smallest and largest eigenvalues of a small symmetric matrix: LAPACK's reduction to
    tridiagonal form, then bisection for those two alone (two thirds of the time of every
    eigenvalue, with the same absolute accuracy)."""
    n = info.shape[0]
    if n < 2:
        w = np.linalg.eigvalsh(info)
        return float(w[0]), float(w[-1])
    _, d, e, _, failed = lapack.dsytrd(info, lower=1)
    ends = [lapack.dstebz(d, e, 2, 0.0, 0.0, k, k, 0.0, "E") for k in (1, n)]
    if failed or any(end[-1] for end in ends):  # (LAPACK's info: never seen) every eigenvalue instead
        w = np.linalg.eigvalsh(info)
        return float(w[0]), float(w[-1])
    return float(ends[0][1][0]), float(ends[1][1][0])


def cholesky_inverse(factor: tuple) -> np.ndarray:
    """A⁻¹ from the Cholesky factor of A (``cho_factor`` form): LAPACK's potri, a third of the
    work of solving against the identity."""
    c, lower = factor
    inverse, info = lapack.dpotri(c, lower=lower)
    if info != 0:
        raise np.linalg.LinAlgError(f"potri failed ({info})")
    triangle = np.tril(inverse) if lower else np.triu(inverse)
    return triangle + triangle.T - np.diag(np.diag(triangle))


#: Rows per step when a triangle of a large matrix is cleared, mirrored or averaged in place (the
#: temporaries stay in cache).
ROW_CHUNK = 128


def inverse_factor(factor: tuple, scale: float = 1.0) -> np.ndarray:
    """F with F Fᵀ = A⁻¹ / ``scale`` from the Cholesky factor of A (``cho_factor`` form),
    overwriting it: the triangular inverse of the factor (LAPACK's trtri: half of potri's work,
    and no second n × n array). F is upper triangular for an upper factor (A = UᵀU, F = U⁻¹),
    the transpose of the lower one's inverse otherwise."""
    c, lower = factor
    if c.flags.f_contiguous:
        inv, info = lapack.dtrtri(c, lower=lower, overwrite_c=1)
    else:  # cho_factor's C-ordered output: LAPACK inverts its transpose in place, the other triangle
        inv, info = lapack.dtrtri(c.T, lower=not lower, overwrite_c=1)
        inv = inv.T
    if info != 0:
        raise np.linalg.LinAlgError(f"trtri failed ({info})")
    n = inv.shape[0]
    for start in range(0, n, ROW_CHUNK):  # the other triangle of cho_factor's output is left as it was
        rows = np.arange(start, min(start + ROW_CHUNK, n))[:, None]
        keep = np.arange(n)[None, :] <= rows if lower else np.arange(n)[None, :] >= rows
        inv[start:start + ROW_CHUNK] *= keep
    inv *= 1.0 / np.sqrt(scale)
    return inv.T if lower else inv


#: Matrices :func:`information` builds.
INFORMATION = ("observed", "expected", "scores")


@dataclass(frozen=True)
class Units:
    """The comparisons behind each cell of a fit, by kind (the independent units of a sandwich,
    a bootstrap, an influence function).

    Attributes
    ----------
    counts : ndarray
        ``(n_cells, K)`` comparisons of each kind per cell (kinds: a wins, b wins, tie, as
        observed).
    pseudo : ndarray
        ``(n_cells, K, 3)`` the counts one comparison of each kind adds to the cell's outcome
        columns in the likelihood (the framework's outcome map, times the cell's weight).
    """

    counts: np.ndarray
    pseudo: np.ndarray

    def cell_counts(self, counts: np.ndarray | None = None) -> np.ndarray:
        """``(n_cells, 3)`` likelihood counts of the cells from per-kind comparison counts
        (default: the observed ones)."""
        return np.einsum("ck,cko->co", self.counts if counts is None else counts, self.pseudo)

    @property
    def n(self) -> float:
        """Number of comparisons."""
        return float(self.counts.sum())


def _unit_gradients(cd, units: Units) -> np.ndarray:
    """``(n, K, P)``: ∂L/∂p of one comparison of each kind, per cell."""
    _, D = cd.structure.kernels["link"].outcome_gradients(cd.values)
    return np.einsum("cko,cop->ckp", units.pseudo, D)


def _outer_index(size, rows_u, rows_v) -> np.ndarray:
    """Flat positions in a ``size × size`` matrix of every cell's (rows_u × rows_v) block."""
    return (rows_u[:, :, None] * size + rows_v[:, None, :]).ravel()


def _outer_values(J_u, J_v, weight) -> np.ndarray:
    """Values of Σ_c weight_c J_u,cᵀ J_v,c, cell by cell, in the order of :func:`_outer_index`."""
    return (weight[:, None, None] * J_u[:, :, None] * J_v[:, None, :]).ravel()


class CellDerivatives:
    """Predictors, their Jacobians and the link's derivatives for every cell at given values of
    the natural variables.

    Parameters
    ----------
    structure : Structure
    nat : dict
        Values of the natural variables.
    cells : dict
        Per-cell data arrays (any cells: the fit's own or new ones to predict).
    counts : ndarray, optional
        ``(n, 3)`` counts (zeros when predicting).
    rows, positions, affine : dict, optional
        The cells' :meth:`~bayesrank.inference.structure.Structure.local_rows`, a dict in which the
        flat matrix positions of their blocks are kept, and one in which every linear predictor's
        value at zero inputs and its Jacobian are kept (:meth:`at`: the bound model's own, made
        once per fit: they do not depend on the values; a linear predictor's second derivatives
        vanish, so its Jacobian is the same at every point and its value p₀ + J u).
    """

    def __init__(self, structure: Structure, nat: dict, cells: dict, counts: np.ndarray | None = None,
                 rows: dict | None = None, positions: dict | None = None, affine: dict | None = None):
        self.structure = structure
        self.cells = structure.cast_cells(cells)
        n = len(self.cells["item_a"])
        self.size = structure.natural.size
        self.names = list(structure.predictors)
        u = structure.locals(nat, self.cells)
        self.u = u
        self.values, self.jac = {}, {}
        for name in self.names:
            kernel = structure.kernels[name]
            if affine is None or not structure.predictors[name].linear:
                self.values[name], self.jac[name] = kernel.jacobian(u[name], self.cells)
                continue
            if name not in affine:
                zero = {k: np.zeros_like(v) if k in kernel.keys else v for k, v in u[name].items()}
                value0, jac = kernel.jacobian(zero, self.cells)
                jac.flags.writeable = False   # shared by every point of the fit
                affine[name] = (value0, jac)
            value0, jac = affine[name]
            local = np.concatenate([np.reshape(u[name][k], (n, -1)) for k in kernel.keys], axis=1)
            self.values[name], self.jac[name] = value0 + np.einsum("cp,cp->c", jac, local), jac
        self.link = structure.kernels["link"].derivatives(self.values, np.zeros((n, 3)) if counts is None else counts)
        self.rows = structure.local_rows(self.cells) if rows is None else rows
        self._positions = {} if positions is None else positions

    @classmethod
    def at(cls, bound: Bound, theta: np.ndarray) -> CellDerivatives:
        """The cells of a bound model at θ (kept in the fit's memo ``bound.last_at`` for the
        last θ: a fit asks for the observed information, the scores, the existence check and the
        cells' log-probabilities at θ̂)."""
        key = np.asarray(theta, dtype=float).tobytes()
        last = bound.last_at.get(cls)
        if last is not None and last[0] == key:
            return last[1]
        cd = cls(bound.structure, bound.natural(theta), bound.cells, bound.counts, rows=bound.local_rows,
                 positions=bound.matrix_positions, affine=bound.affine_predictors)
        bound.last_at[cls] = (key, cd)
        return cd

    def _block_positions(self, name_q: str, name_r: str) -> np.ndarray:
        """:func:`_outer_index` of two predictors' local rows, kept (they do not depend on θ)."""
        key = (name_q, name_r)
        if key not in self._positions:
            self._positions[key] = _outer_index(self.size, self.rows[name_q], self.rows[name_r])
        return self._positions[key]

    def gradient(self) -> np.ndarray:
        """∇_nat ℓ: Σ_c J_cᵀ ∂L_c/∂p."""
        g = self.link["grad"]
        out = np.zeros(self.size)
        for q, name in enumerate(self.names):
            out += np.bincount(self.rows[name].ravel(), (self.jac[name] * g[:, q, None]).ravel(), self.size)
        return out

    def matrix(self, weights: np.ndarray, second_weights: np.ndarray | None = None, sparse: bool = False,
               skip: frozenset = frozenset()):
        """Σ_c J_cᵀ W_c J_c (+ Σ_c Σ_q w_cq ∇²p_cq) in natural coordinates: dense, or with
        ``sparse`` a CSR matrix (each cell touches a few natural coordinates: O(cells) non-zeros).

        Parameters
        ----------
        weights : ndarray
            ``(n, P, P)`` per-cell weights W_c.
        second_weights : ndarray, optional
            ``(n, P)`` weights of the predictors' own second derivatives (observed only).
        skip : frozenset
            Pairs ``(q, r)`` of predictors whose term J_qᵀ W_qr J_r is left out (computed
            elsewhere: :func:`_factored`).
        """
        blocks, value = [], []
        for q, name_q in enumerate(self.names):
            for r, name_r in enumerate(self.names):
                if (q, r) in skip:
                    continue
                blocks.append((name_q, name_r))
                value.append(_outer_values(self.jac[name_q], self.jac[name_r], weights[:, q, r]))
            if second_weights is not None:
                kernel = self.structure.kernels[name_q]
                H = kernel.second(self.u[name_q], self.cells, second_weights[:, q])
                if H is not None:
                    blocks.append((name_q, name_q))
                    value.append(H.ravel())
        value = value[0] if len(value) == 1 else np.concatenate(value)
        if sparse:
            indptr, indices, inverse = self._csr_pattern(tuple(blocks))
            return sp.csr_matrix((np.bincount(inverse, value, indices.size), indices, indptr),
                                 shape=(self.size, self.size))
        index = np.concatenate([self._block_positions(*block) for block in blocks])
        return np.bincount(index, value, self.size**2).reshape(self.size, self.size)

    def _csr_pattern(self, blocks: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The CSR structure of the sum of the predictor blocks ``blocks`` (``indptr``, ``indices``)
        and where each of their entries lands in its data (``inverse``): it depends on the cells
        alone, so it is kept with the block positions of the fit's cells, and a sparse matrix costs
        one bincount instead of scipy's COO → CSR sort at every information."""
        key = ("csr", blocks)
        if key not in self._positions:
            index = np.concatenate([self._block_positions(*block) for block in blocks])
            flat, inverse = np.unique(index, return_inverse=True)
            indptr = np.searchsorted(flat // self.size, np.arange(self.size + 1))
            pattern = (indptr, (flat % self.size).astype(np.int32), inverse)
            for array in pattern:
                array.flags.writeable = False
            self._positions[key] = pattern
        return self._positions[key]


def fisher_weights(cd: CellDerivatives, comparisons: np.ndarray) -> np.ndarray:
    """``(n, P, P)``: the expected information of ``comparisons`` comparisons of each cell in its
    predictors, n_c Σ_o P_co ∇_p log P_co ∇_p log P_coᵀ (the ``expected`` weight; with
    ``comparisons`` = 1, what one more comparison of the cell adds)."""
    lp, D = cd.structure.kernels["link"].outcome_gradients(cd.values)
    return np.einsum("c,co,cop,coq->cpq", comparisons, np.exp(lp), D, D)


def _weights(cd: CellDerivatives, counts: np.ndarray, kind: str, units: Units | None
             ) -> tuple[np.ndarray, np.ndarray | None]:
    """The per-cell weights ``(n, P, P)`` W_c of an information-type matrix (module docstring)
    and those ``(n, P)`` of the predictors' own second derivatives (observed only, else None)."""
    link = cd.link
    if kind == "observed":
        return -link["hess"], -link["grad"]
    if kind == "expected":
        return fisher_weights(cd, np.asarray(counts).sum(axis=1)), None
    if units is None:
        g = link["grad"]
        return g[:, :, None] * g[:, None, :], None
    G = _unit_gradients(cd, units)
    return np.einsum("ck,ckp,ckq->cpq", units.counts, G, G), None


#: A dense block of B (the identified tie coordinates of the k_tie = 10, 20 models: each of them
#: moves every loading) with at least this many columns, read by linear predictors only, has its
#: diagonal block of the θ matrix assembled from the cells' gradients in θ (:func:`_factored`).
FACTORED_FROM = 400


def _block_jacobians(bound: Bound, cd: CellDerivatives) -> dict[int, list[tuple[int, np.ndarray, bool]]]:
    """Block k ↦ ``[(q, A_q, whole)]``: A_q = J_q B_k ``(n cells, columns of block k)`` for each
    predictor q that reads the natural variable of block k (``whole``: it reads nothing else),
    for the dense blocks of at least :data:`FACTORED_FROM` columns read by linear predictors only
    (none else: then ``{}``).

    They are constant (a linear predictor's gradient depends on the cells only), so they are made
    once per fit (``bound.block_jacobians``)."""
    structure, nmap = bound.structure, bound.structure.natural
    dense = [k for k in nmap.dense_blocks() if np.arange(bound.n_free)[nmap.blocks[k][1]].size >= FACTORED_FROM]
    if not dense:
        return {}
    dense = tuple(dense)
    per_fit = bound.block_jacobians
    if dense not in per_fit:
        found = {}
        for k in dense:
            rows_k = nmap.blocks[k][0]
            parts = []
            for q, name in enumerate(cd.names):
                A = nmap.block_jacobian(k, cd.rows[name], cd.jac[name])
                if A is not None:
                    A.flags.writeable = False   # shared by every information of the fit
                    rows = cd.rows[name]
                    parts.append((q, A, bool(np.all((rows >= rows_k.start) & (rows < rows_k.stop)))))
            if all(structure.predictors[cd.names[q]].linear for q, _, _ in parts):
                found[k] = parts
        per_fit[dense] = found
    return per_fit[dense]


def _factored(bound: Bound, cd: CellDerivatives, weights: np.ndarray, diagonal: bool) -> dict[int, np.ndarray]:
    """The diagonal blocks B_kᵀ H_kk B_k of the θ matrix (their diagonals with ``diagonal``) for the
    blocks of :func:`_block_jacobians`, as Σ_{q,r} A_qᵀ diag(W_qr) A_r over the cells: a linear
    predictor has no second-derivative term. With fewer cells than loadings (factored tie
    thresholds: every cell couples 2k loadings, and B_k is dense) a symmetric rank-k update over
    the cells costs about a third of the dense sandwich B_kᵀ (H_kk B_k), and the diagonal is
    O(cells × columns) instead of that sandwich's first product."""
    out = {}
    for k, parts in _block_jacobians(bound, cd).items():
        total = None
        for q, A_q, _ in parts:
            for r, A_r, _ in parts:
                w = weights[:, q, r]
                if diagonal:
                    term = w @ (A_q * A_r)
                elif q == r:
                    term = _weighted_gram(A_q, w)
                else:
                    term = A_q.T @ (w[:, None] * A_r)
                total = term if total is None else total + term
        out[k] = total
    return out


def separate_blocks(bound: Bound, cd: CellDerivatives) -> list[tuple[int, int, np.ndarray]]:
    """``(k, r, A_r)`` for the dense blocks k of B (:func:`_block_jacobians`) whose natural
    variable one predictor r alone reads, and that reads nothing else (A_r = J_r B_k, the same for
    every θ): every term of a natural matrix between block k and another block is then a (q, r)
    term, and with unit weights per predictor there is none."""
    out = []
    for k, parts in _block_jacobians(bound, cd).items():
        rows_k = bound.structure.natural.blocks[k][0]
        readers = [q for q, name in enumerate(cd.names)
                   if np.any((cd.rows[name] >= rows_k.start) & (cd.rows[name] < rows_k.stop))]
        if len(parts) == 1 and parts[0][2] and readers == [parts[0][0]]:
            out.append((k, parts[0][0], parts[0][1]))
    return out


def _factored_cross(bound: Bound, cd: CellDerivatives, weights: np.ndarray
                    ) -> tuple[frozenset, dict[tuple[int, int], np.ndarray]]:
    """The blocks B_jᵀ H_jk B_k of the θ matrix between each block k of :func:`separate_blocks`
    and the other blocks j, from the cells' gradients in θ (A_r = J_r B_k, kept): Σ J_q,jᵀ
    diag(W_qr) A_r over the other predictors q (J_q,j: q's gradient in the natural rows of block
    j, sparse), then B_jᵀ on the left. Returns the predictor pairs (q, r) and (r, q) covered (left
    out of the natural matrix) and block pairs (j, k) ↦ ``(columns of j, columns of k)``, the average of the
    (q, r) and (r, q) terms (the matrix is symmetrised anyway). The scores × tie coordinates
    block is then a sparse (items × cells, two entries a cell) times dense (cells × tie
    coordinates) product, cheaper than the natural matrix's block times the dense B_k."""
    nmap = bound.structure.natural
    pairs, out = set(), {}
    for k, r, A_r in separate_blocks(bound, cd):
        for q, name_q in enumerate(cd.names):
            rows_q, jac_q = cd.rows[name_q], cd.jac[name_q]
            if q == r:
                continue
            weighted = (0.5 * (weights[:, q, r] + weights[:, r, q]))[:, None] * A_r
            for j, (rows_j, _, block_j) in enumerate(nmap.blocks):
                inside = (rows_q >= rows_j.start) & (rows_q < rows_j.stop)
                if not inside.any():
                    continue
                c, p = np.nonzero(inside)
                J = sp.csr_matrix((jac_q[c, p], (c, rows_q[c, p] - rows_j.start)),
                                  shape=(rows_q.shape[0], rows_j.stop - rows_j.start))
                term = block_j.transpose_times(np.asarray(J.T @ weighted))
                out[j, k] = term if (j, k) not in out else out[j, k] + term
            pairs |= {(q, r), (r, q)}
    return frozenset(pairs), out


def _inside(bound: Bound, cd: CellDerivatives) -> frozenset:
    """Pairs of predictors whose whole term of the natural matrix lies in a block :func:`_factored`
    computes (:meth:`CellDerivatives.matrix` leaves them out)."""
    return frozenset((q, r) for parts in _block_jacobians(bound, cd).values()
                     for q, _, whole_q in parts for r, _, whole_r in parts if whole_q and whole_r)


def _weighted_gram(A: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Aᵀ diag(w) A by symmetric rank-k updates (one for the positive weights, one for the
    negative): half the flops of a general product. With weights of one sign (a concave link's
    observed information) the rows are not copied out first, and the lower triangle is mirrored
    a block of rows at a time (no n × n temporary)."""
    out = None
    for sign in (1.0, -1.0):
        pick = sign * w > 0
        if not pick.any():
            continue
        X = A * np.sqrt(sign * w)[:, None] if pick.all() else A[pick] * np.sqrt(sign * w[pick])[:, None]
        out = blas.dsyrk(sign, X.T, trans=0, lower=0) if out is None else \
            blas.dsyrk(sign, X.T, beta=1.0, c=out, trans=0, lower=0, overwrite_c=1)
    if out is None:
        return np.zeros((A.shape[1], A.shape[1]), order="F")
    n = out.shape[0]
    for start in range(0, n, ROW_CHUNK):   # the upper triangle mirrored into the lower one
        stop = min(start + ROW_CHUNK, n)
        out[stop:, start:stop] = out[start:stop, stop:].T
        block = out[start:stop, start:stop]
        lower = np.tril_indices(stop - start, -1)
        block[lower] = block.T[lower]
    return out


def information(bound: Bound, theta: np.ndarray, kind: str = "observed", diagonal: bool = False,
                units: Units | None = None) -> np.ndarray:
    """An information-type matrix of the free coordinates θ (see the module docstring).

    Parameters
    ----------
    bound : Bound
    theta : ndarray
    kind : {"observed", "expected", "scores"}
    diagonal : bool
        Return only the diagonal (cheaper: the full matrix in θ is never formed).
    units : Units, optional
        ``kind="scores"``: the meat per comparison instead of per cell.

    Returns
    -------
    ndarray
        ``(n_free, n_free)``, symmetric (``(n_free,)`` with ``diagonal=True``).
    """
    if kind not in INFORMATION:
        raise ModelSpecError(f"information must be one of {INFORMATION}, got {kind!r}.")
    cd = CellDerivatives.at(bound, theta)
    weights, second = _weights(cd, bound.counts, kind, units)
    return cell_matrix(bound, cd, weights, second, diagonal)


def cell_matrix(bound: Bound, cd: CellDerivatives, weights: np.ndarray, second: np.ndarray | None = None,
                diagonal: bool = False) -> np.ndarray:
    """Σ_c J_cᵀ W_c J_c (+ Σ_c Σ_q w_cq ∇²p_cq) of the cells ``cd`` of ``bound``, pulled back to θ
    (:meth:`CellDerivatives.matrix`'s arguments), the dense tie blocks from the cells' gradients in
    θ (:func:`_factored`): the matrix of :func:`information` for any per-cell weights (the
    existence check's Gram matrix of the locked cells is one).

    Returns
    -------
    ndarray
        ``(n_free, n_free)``, symmetric (``(n_free,)`` with ``diagonal=True``).
    """
    nmap, n_free = bound.structure.natural, bound.n_free
    skip = _inside(bound, cd)
    given = _factored(bound, cd, weights, diagonal)
    if not diagonal:  # (a diagonal has no blocks between different coordinates)
        crossed, cross = _factored_cross(bound, cd, weights)
        skip, given = skip | crossed, {**given, **cross}
    # without the terms of the factored blocks the rest is sparse: a dense natural matrix would
    # be mostly those blocks' zeros
    nat = cd.matrix(weights, second, sparse=nmap.size >= SPARSE_FROM and (diagonal or nmap.size > DENSE_NATURAL_MAX
                                                                          or bool(skip)), skip=skip)
    if diagonal:
        return nmap.pull_back_diagonal(nat, n_free, given)
    out = nmap.pull_back_matrix(nat, n_free, given)
    at = nmap.sandwiched_columns(given, n_free)
    if at.size == n_free:
        return symmetrised(out)
    if at.size and at[-1] - at[0] + 1 == at.size:   # one run of coordinates: averaged in place
        symmetrised(out[at[0]:at[-1] + 1, at[0]:at[-1] + 1])
    elif at.size:
        out[np.ix_(at, at)] = symmetrised(out[np.ix_(at, at)])
    return out


def symmetrised(out: np.ndarray) -> np.ndarray:
    """(A + Aᵀ) / 2 in A's memory, a pair of row blocks at a time (no n × n temporary)."""
    n = out.shape[0]
    if n <= ROW_CHUNK:  # one block: numpy buffers the overlapping transpose itself
        out += out.T
        out *= 0.5
        return out
    for i in range(0, n, ROW_CHUNK):
        for j in range(i, n, ROW_CHUNK):
            average = 0.5 * (out[i:i + ROW_CHUNK, j:j + ROW_CHUNK] + out[j:j + ROW_CHUNK, i:i + ROW_CHUNK].T)
            out[i:i + ROW_CHUNK, j:j + ROW_CHUNK] = average
            out[j:j + ROW_CHUNK, i:i + ROW_CHUNK] = average.T
    return out


def information_operator(bound: Bound, theta: np.ndarray, kind: str = "observed") -> Callable[[np.ndarray], np.ndarray]:
    """:func:`information` as a matrix-vector product v ↦ I v, never formed as a matrix: the
    natural-coordinate matrix stays sparse and B structured, so a product costs O(cells + free
    coordinates) (plus the dense blocks of B), where the dense matrix in θ costs O(n_free²)."""
    if kind not in INFORMATION:
        raise ModelSpecError(f"information must be one of {INFORMATION}, got {kind!r}.")
    cd = CellDerivatives.at(bound, np.asarray(theta, dtype=float))
    weights, second = _weights(cd, bound.counts, kind, None)
    nat = cd.matrix(weights, second, sparse=True)
    return lambda v: bound.structure.natural.pull_back_product(nat, v)


def unit_effects(bound: Bound, theta: np.ndarray, units: Units, directions: np.ndarray) -> np.ndarray:
    """vᵀ s_ck for every comparison kind of every cell and every direction v in θ: how much one
    comparison moves a linear function of θ through the score (influence functions).

    Parameters
    ----------
    directions : ndarray
        ``(n_free, r)``.

    Returns
    -------
    ndarray
        ``(n_cells, K, r)``.
    """
    theta = np.asarray(theta, dtype=float)
    cd = CellDerivatives.at(bound, theta)
    G = _unit_gradients(cd, units)
    U = bound.structure.natural.push_forward(np.asarray(directions, dtype=float))
    out = 0.0
    for q, name in enumerate(cd.names):
        along = np.einsum("cj,cjr->cr", cd.jac[name], U[cd.rows[name]])
        out = out + G[:, :, q, None] * along[:, None, :]
    return out


def gradient(bound: Bound, theta: np.ndarray) -> np.ndarray:
    """∇_θ ℓ assembled from the per-cell kernels (the PyMC graph's gradient, computed another way)."""
    cd = CellDerivatives.at(bound, theta)
    return bound.structure.natural.pull_back(cd.gradient(), bound.n_free)


def outcome_jacobian(structure: Structure, theta: np.ndarray, cells: dict) -> tuple[np.ndarray, np.ndarray]:
    """Outcome probabilities of new cells and their Jacobian in θ, at θ.

    Returns
    -------
    probs : ndarray
        ``(n, 3)``.
    jacobian : ndarray
        ``(n, 3, n_free)`` = ∂P_o/∂θ = P_o ∇_θ log P_o.
    """
    theta = np.asarray(theta, dtype=float)
    nat = structure.natural.unflatten(structure.natural(theta))
    cd = CellDerivatives(structure, nat, cells)
    lp, outcome_grad = structure.kernels["link"].outcome_gradients(cd.values)
    probs = np.exp(lp)
    n = probs.shape[0]
    grad_nat = np.zeros((n, 3, cd.size))
    cell = np.arange(n)[:, None]
    for q, name in enumerate(cd.names):
        for o in range(3):
            np.add.at(grad_nat[:, o], (np.broadcast_to(cell, cd.rows[name].shape), cd.rows[name]),
                      outcome_grad[:, o, q, None] * cd.jac[name])
    out = np.zeros((n, 3, structure.n_free))
    for rows, cols, block in structure.natural.blocks:
        along = grad_nat[:, :, rows].reshape(n * 3, -1).T        # (rows, n · 3): Bᵀ on its columns
        out[:, :, cols] += block.transpose_times(along).T.reshape(n, 3, -1)
    return probs, probs[:, :, None] * out


__all__ = [
    "CellDerivatives", "DENSE_EIGEN_MAX", "DENSE_NATURAL_MAX", "FACTORED_FROM", "INFORMATION", "LANCZOS_SEED",
    "ROW_CHUNK", "SINGULAR", "Units", "cell_matrix", "cholesky_inverse", "extreme_eigenvalues", "fisher_weights",
    "gradient", "information", "information_operator", "inverse_factor", "lanczos_largest", "largest_eigenvalue",
    "outcome_jacobian", "separate_blocks", "symmetrised", "unit_effects"
]
