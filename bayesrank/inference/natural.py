"""The natural coordinates: the model variables the predictors read, as an affine map of θ.

nat = c + Bθ, where θ are the free coordinates (every constraint imposed by construction) and B
is block-sparse: each natural variable depends on a few free coordinates (its own, after the
zero-sum and other linear transforms). B is measured from the model's own map θ ↦ variables
by unit steps (exact: the map is affine in θ), and kept in a structured form
(:class:`SparsePlusRankOne`) so that every matrix of :mod:`bayesrank.inference.information`
is pulled back to θ at a cost proportional to its non-zeros, for thousands of items.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, lsqr

#: From this many natural coordinates on, information matrices are assembled sparse and pulled
#: back through the structured blocks of B (:class:`SparsePlusRankOne`); below, dense algebra
#: on small matrices costs less than building sparse ones.
SPARSE_FROM = 400
#: Up to this many columns a block of B keeps its pseudo-inverse for :meth:`NaturalMap.theta_for`;
#: beyond, a sparse block is solved by LSQR (:meth:`NaturalMap._least_squares`).
PSEUDO_INVERSE_MAX = 400
#: A block of B counts as sparse (possibly after removing a rank-one part) when it has at most
#: this many non-zeros per row and column on average.
SPARSE_DENSITY = 4
#: A sparse matrix multiplied into a dense block is made dense from this fill on: a dense
#: product (BLAS) costs rows · cols per column where the sparse one costs its non-zeros, each
#: several times a dense entry's cost. The natural information of factored tie thresholds is such
#: a matrix (every compared pair couples 2k loadings).
DENSE_FILL = 0.1
#: Entries of a block below this fraction of its largest are rounding of exact zeros (B is
#: measured by unit steps of the value map).
ROUNDING = 1e-12
#: Rows per step of in-place updates of large dense matrices (temporaries of this many rows).
ROW_CHUNK = 512
#: Unit steps of the value map per call when B is measured (its temporaries: this many rows of
#: every variable's values, never free × natural coordinates at once).
UNIT_STEPS = 256


def _index(rows: np.ndarray) -> slice | np.ndarray:
    """``rows`` as a slice when they are consecutive (a view instead of a fancy-indexed copy)."""
    if rows.size and rows[-1] - rows[0] + 1 == rows.size and np.all(np.diff(rows) == 1):
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


def _dense_if_filled(H, right):
    """H as a dense array when it multiplies a dense ``right`` and is at least :data:`DENSE_FILL`
    filled (the same product, by BLAS), else H."""
    if sp.issparse(H) and not sp.issparse(right) and H.nnz >= DENSE_FILL * H.shape[0] * H.shape[1]:
        return H.toarray()
    return H


@dataclass(frozen=True)
class SparsePlusRankOne:
    """A dense block of B as S + u vᵀ with S sparse, when it has that shape (the zero-sum scores:
    PyMC's transform is the identity plus a rank-one correction), else S = B, dense. Products
    with sparse information matrices then cost O(non-zeros + size²), not O(size³).
    """

    S: sp.csr_matrix | np.ndarray
    u: np.ndarray | None = None
    v: np.ndarray | None = None

    @cached_property
    def picks(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(rows, weights)`` when S is a scaled selection — one entry per column, at distinct rows,
        S[rows[j], j] = weights[j] (the zero-sum scores: the identity on all items but the last) —,
        else None. Products with S are then indexing: a dense information pulled back through B
        costs O(size²) (:meth:`sandwich`), not two O(size³) products."""
        if not sp.issparse(self.S):
            return None
        S = sp.csc_matrix(self.S)
        if S.nnz != S.shape[1] or np.any(np.diff(S.indptr) != 1) or np.unique(S.indices).size != S.nnz:
            return None
        return S.indices.copy(), S.data.copy()

    @classmethod
    def of(cls, B: np.ndarray) -> SparsePlusRankOne:
        limit = SPARSE_DENSITY * sum(B.shape)
        tiny = ROUNDING * max(float(np.max(np.abs(B), initial=0.0)), 1e-300)
        if np.count_nonzero(np.abs(B) > tiny) <= limit:
            return cls(sp.csr_matrix(np.where(np.abs(B) > tiny, B, 0.0)))
        if min(B.shape) > 1:
            u = np.median(B, axis=1)                  # each row's common value
            S = B - u[:, None]
            S[np.abs(S) <= tiny] = 0.0
            if np.count_nonzero(S) <= limit:
                return cls(sp.csr_matrix(S), u, np.ones(B.shape[1]))
        return cls(B)

    def sandwich(self, H, other: SparsePlusRankOne, into: np.ndarray | None = None) -> np.ndarray:
        """selfᵀ H other as a dense array (H sparse or dense); with ``into`` (a 2-D view of the
        right shape) added to it in place, without an n × n temporary."""
        if self.picks is not None and other.picks is not None and not sp.issparse(H):
            return self._selection_sandwich(np.asarray(H), other, into)
        H = _dense_if_filled(H, other.S)
        out = self.S.T @ (H @ other.S)
        if into is not None and sp.issparse(out):
            out = out.tocoo()
            into[out.row, out.col] += out.data   # (a CSR product has no duplicate entries)
            out = into
        elif into is not None:
            into += out
            out = into
        else:
            out = out.toarray() if sp.issparse(out) else np.array(out)
        left, right = [], []                          # the rank-one terms, added in one product
        if other.u is not None:
            left.append(self.S.T @ (H @ other.u))
            right.append(other.v)
        if self.u is not None:
            Hu = H.T @ self.u
            left.append(self.v)
            right.append(other.S.T @ Hu + (float(Hu @ other.u) * other.v if other.u is not None else 0.0))
        if left:
            left, right = np.column_stack(left), np.vstack(right)
            for first in range(0, out.shape[0], ROW_CHUNK):   # no n × n temporary
                out[first:first + ROW_CHUNK] += left[first:first + ROW_CHUNK] @ right
        return out

    def _selection_sandwich(self, H: np.ndarray, other: SparsePlusRankOne, into: np.ndarray | None) -> np.ndarray:
        """:meth:`sandwich` of a dense H between two scaled selections plus rank one (:attr:`picks`):
        (S + u vᵀ)ᵀ H (S' + u' v'ᵀ) = SᵀHS' + Sᵀ(Hu') v'ᵀ + v (uᵀH S') + (uᵀHu') v v'ᵀ, every
        term read off H by indexing: O(size²)."""
        (rows, w), (rows_o, w_o) = self.picks, other.picks
        block = H[_index(rows)][:, _index(rows_o)]
        if np.any(w != 1.0) or np.any(w_o != 1.0):
            block = block * np.outer(w, w_o)
        if into is None:
            out = np.array(block)
        else:
            out = into
            out += block
        if other.u is not None:
            out += np.outer(w * (H @ other.u)[rows], other.v)
        if self.u is not None:
            uH = self.u @ H
            out += np.outer(self.v, w_o * uH[rows_o] + (float(uH @ other.u) * other.v if other.u is not None
                                                        else 0.0))
        return out

    @property
    def shape(self) -> tuple[int, int]:
        return self.S.shape

    def dense(self) -> np.ndarray:
        """The block as a dense array (a small block, or a least-squares solve that needs it)."""
        out = self.S.toarray() if sp.issparse(self.S) else np.array(self.S)
        if self.u is not None:
            out += np.outer(self.u, self.v)
        return out

    @classmethod
    def of_columns(cls, columns: Callable[[], Iterable[tuple[int, np.ndarray]]], n_rows: int, n_cols: int,
                   probe: int = 64) -> SparsePlusRankOne:
        """:meth:`of` for a block produced a chunk of columns at a time (``columns()`` yields
        ``(first column, dense columns)``) and never held whole unless it has neither shape:
        the rank-one part's common row values are the medians over the first chunk's first
        ``probe`` columns (exact when fewer than half of those differ from it, as for the
        zero-sum map's one entry per row)."""
        limit = SPARSE_DENSITY * (n_rows + n_cols)
        u, scale = None, 0.0
        found = {"plain": [], "split": []}
        count = {"plain": 0, "split": 0}
        for start, chunk in columns():
            scale = max(scale, float(np.max(np.abs(chunk), initial=0.0)))
            if u is None and min(n_rows, n_cols) > 1:
                u = np.median(chunk[:, :probe], axis=1)
            tiny = ROUNDING * max(scale, 1e-300)   # the final scale only drops more (below)
            for kind, values in (("plain", chunk), ("split", None if u is None else chunk - u[:, None])):
                if values is None or count[kind] > limit:
                    continue
                r, c = np.nonzero(np.abs(values) > tiny)
                count[kind] += r.size
                found[kind].append((r, c + start, values[r, c]))
        tiny = ROUNDING * max(scale, 1e-300)
        for kind in ("plain", "split"):
            if count[kind] > limit or (kind == "split" and u is None):
                continue
            r, c, v = (np.concatenate(x) for x in zip(*found[kind])) if found[kind] else (np.zeros(0, int),) * 3
            keep = np.abs(v) > tiny
            S = sp.csr_matrix((v[keep], (r[keep], c[keep])), shape=(n_rows, n_cols))
            return cls(S) if kind == "plain" else cls(S, u, np.ones(n_cols))
        block = np.zeros((n_rows, n_cols))
        for start, chunk in columns():
            block[:, start:start + chunk.shape[1]] = chunk
        return cls(block)

    def _s_times(self, X: np.ndarray) -> np.ndarray:
        """S X (a dense array), by indexing for a scaled selection."""
        if self.picks is None:
            return np.array(self.S @ X)
        rows, w = self.picks
        out = np.zeros((self.S.shape[0], *np.shape(X)[1:]))
        out[rows] = w.reshape(-1, *([1] * (np.ndim(X) - 1))) * np.asarray(X)
        return out

    def times(self, X: np.ndarray) -> np.ndarray:
        """self X for a dense X (columns: directions): O(non-zeros · columns + size · columns)."""
        out = self._s_times(X)
        if self.u is not None:
            out = out + np.multiply.outer(self.u, self.v @ X)
        return out

    def transpose_times(self, Y: np.ndarray) -> np.ndarray:
        """selfᵀ Y for a dense Y."""
        if self.picks is not None:
            rows, w = self.picks
            out = w.reshape(-1, *([1] * (np.ndim(Y) - 1))) * np.asarray(Y)[rows]
        else:
            out = np.asarray(self.S.T @ Y)
        if self.u is not None:
            out = out + np.multiply.outer(self.v, self.u @ Y)
        return out

    def congruence(self, C: np.ndarray) -> np.ndarray:
        """self C selfᵀ for a dense symmetric C (the covariance of B x when Cov(x) = C)."""
        SC = self._s_times(C)
        out = self._s_times(SC.T)
        if self.u is not None:
            w = SC @ self.v + 0.5 * float(self.v @ C @ self.v) * self.u   # S C v + ½ (vᵀ C v) u
            out += np.column_stack([w, self.u]) @ np.vstack([self.u, w])
        return out

    def diagonal_sandwich(self, H, other: SparsePlusRankOne, at_self: np.ndarray, at_other: np.ndarray
                          ) -> np.ndarray:
        """The entries (at_self[k], at_other[k]) of selfᵀ H other, without forming it (formed, in
        O(size²), for a dense H between scaled selections)."""
        if self.picks is not None and other.picks is not None and not sp.issparse(H):
            return self._selection_sandwich(np.asarray(H), other, None)[at_self, at_other]
        H = _dense_if_filled(H, other.S)
        HS = H @ other.S
        S_i = self.S[:, at_self]
        HS_j = HS[:, at_other]
        prod = S_i.multiply(HS_j) if sp.issparse(S_i) else (HS_j.multiply(S_i) if sp.issparse(HS_j)
                                                             else S_i * HS_j)
        out = np.asarray(prod.sum(axis=0)).ravel()
        if other.u is not None:
            out += (self.S.T @ (H @ other.u))[at_self] * other.v[at_other]
        if self.u is not None:
            left = H.T @ self.u
            out += self.v[at_self] * (other.S.T @ left)[at_other]
            if other.u is not None:
                out += float(left @ other.u) * self.v[at_self] * other.v[at_other]
        return out


def _given(given: Mapping, i: int, j: int) -> bool:
    """Whether block pair (i, j) of :meth:`NaturalMap.pull_back_matrix` is given (block k ↦ its
    diagonal block, (j, k) ↦ a pair and its transpose), not computed as a sandwich."""
    return i in given if i == j else (i, j) in given or (j, i) in given


@dataclass(frozen=True)
class NaturalMap:
    """The variables the predictors read (*natural coordinates*), nat = c + Bθ (the module
    docstring).

    Attributes
    ----------
    names : tuple of str
    shapes, offsets : dict
        Shape and position of each variable in the flat natural vector.
    size : int
    blocks : tuple of (slice, slice or ndarray, ndarray)
        Per variable: its rows in the natural vector, the θ columns it depends on, and its
        block of B (:class:`SparsePlusRankOne`).
    constant : ndarray
        c, the natural vector at θ = 0.
    """

    names: tuple[str, ...]
    shapes: dict
    offsets: dict
    size: int
    blocks: tuple
    constant: np.ndarray

    @property
    def structured(self) -> tuple[SparsePlusRankOne, ...]:
        """Each block of B (:class:`SparsePlusRankOne`: sparse plus rank one from
        :data:`SPARSE_FROM` natural coordinates on, dense below)."""
        return tuple(block for _, _, block in self.blocks)

    @classmethod
    def measure(cls, names: tuple[str, ...], layout: Mapping[str, tuple[slice, tuple]], x0: np.ndarray,
                value_rows: Callable[[np.ndarray], np.ndarray], label: str) -> NaturalMap:
        """The natural map of the variables ``names``, measured by unit steps of ``value_rows``
        (θ rows ↦ every variable's values, laid out as ``layout``) from ``x0``.

        Raises
        ------
        RuntimeError
            A variable in ``names`` is not affine in θ (the model ``label`` breaks the
            structure's contract).
        """
        shapes = {n: layout[n][1] for n in names}
        sizes = {n: int(np.prod(shapes[n])) if shapes[n] else 1 for n in names}
        offsets, start = {}, 0
        for n in names:
            offsets[n] = start
            start += sizes[n]
        pick = np.concatenate([np.arange(layout[n][0].start, layout[n][0].stop) for n in names])
        n_free = x0.size
        base = value_rows(x0)[0, pick]

        def columns(at: np.ndarray, rows: slice | None = None):
            """B's columns ``at`` (rows ``rows``), a chunk at a time: the natural variables are
            affine in θ, so unit steps in θ give them exactly (up to rounding)."""
            for first in range(0, at.size, UNIT_STEPS):
                cols = at[first:first + UNIT_STEPS]
                steps = np.repeat(x0[None], cols.size, axis=0)
                steps[np.arange(cols.size), cols] += 1.0
                chunk = (value_rows(steps)[:, pick] - base).T
                yield first, chunk if rows is None else chunk[rows]

        every = np.arange(n_free)
        probe = np.abs(np.random.default_rng(0).standard_normal(n_free))
        moved = np.zeros((len(names), n_free), dtype=bool)   # the θ columns each variable depends on
        predicted = base.copy()
        for first, chunk in columns(every):
            predicted += chunk @ probe[first:first + chunk.shape[1]]
            for k, n in enumerate(names):
                moved[k, first:first + chunk.shape[1]] = np.any(chunk[offsets[n]:offsets[n] + sizes[n]] != 0, axis=0)
        at_probe = value_rows(x0 + probe)[0, pick]
        if not np.allclose(at_probe, predicted, rtol=1e-8, atol=1e-8):
            bad = [n for n in names
                   if not np.allclose(at_probe[offsets[n]:offsets[n] + sizes[n]],
                                      predicted[offsets[n]:offsets[n] + sizes[n]], rtol=1e-8, atol=1e-8)]
            raise RuntimeError(f"{label}: the predictors read {bad}, which are not affine "
                               "in the free coordinates; a structure must expose affine coordinates.")
        blocks = []
        for k, n in enumerate(names):
            rows_n = slice(offsets[n], offsets[n] + sizes[n])
            cols = np.flatnonzero(moved[k])
            if start < SPARSE_FROM:
                block = np.zeros((sizes[n], cols.size))
                for first, chunk in columns(cols, rows_n):
                    block[:, first:first + chunk.shape[1]] = chunk
                structured = SparsePlusRankOne.of(block)  # a scaled selection plus rank one: indexing
                block = structured if structured.picks is not None else SparsePlusRankOne(block)
            else:
                block = SparsePlusRankOne.of_columns(lambda cols=cols, rows_n=rows_n: columns(cols, rows_n),
                                                     sizes[n], cols.size)
            if cols.size and cols[-1] - cols[0] + 1 == cols.size:  # a variable's own θ slice: a view
                cols = slice(int(cols[0]), int(cols[-1]) + 1)
            blocks.append((rows_n, cols, block))
        constant = base.copy()
        for (rows, cols, block) in blocks:
            constant[rows] -= block.times(x0[cols])
        return cls(names, shapes, offsets, start, tuple(blocks), constant)

    def dense_blocks(self) -> tuple[int, ...]:
        """Indices of the blocks of B that are dense — neither sparse nor sparse plus rank one
        (the identified tie coordinates: each moves every loading)."""
        return tuple(k for k, (_, _, block) in enumerate(self.blocks) if not sp.issparse(block.S) and block.u is None)

    def block_jacobian(self, k: int, rows: np.ndarray, jac: np.ndarray) -> np.ndarray | None:
        """A predictor's per-cell gradient ``jac`` ``(n, p)`` in the natural coordinates ``rows``
        ``(n, p)``, carried to the θ columns of block k of B: J B_k, ``(n, columns of block k)``
        (the entries outside block k dropped); None when no entry is inside it."""
        rows_k, _, block = self.blocks[k]
        inside = (rows >= rows_k.start) & (rows < rows_k.stop)
        if not inside.any():
            return None
        r, c = np.nonzero(inside)
        J = sp.csr_matrix((jac[r, c], (r, rows[r, c] - rows_k.start)),
                          shape=(rows.shape[0], rows_k.stop - rows_k.start))
        return np.asarray(J @ (block.S if block.u is None and not sp.issparse(block.S) else block.dense()))

    def __call__(self, theta: np.ndarray) -> np.ndarray:
        """The flat natural vector at θ."""
        out = self.constant.copy()
        for (rows, cols, _), B in zip(self.blocks, self.structured):
            out[rows] += B.times(theta[cols])
        return out

    def unflatten(self, flat: np.ndarray) -> dict[str, np.ndarray]:
        """Named arrays of a flat natural vector."""
        return {n: flat[self.offsets[n]:self.offsets[n] + (int(np.prod(self.shapes[n])) if self.shapes[n] else 1)]
                .reshape(self.shapes[n]) for n in self.names}

    def pull_back(self, grad: np.ndarray, n_free: int) -> np.ndarray:
        """∇_θ from a gradient in natural coordinates: Bᵀ g (``n_free``: the length of θ)."""
        out = np.zeros(n_free)
        for (rows, cols, _), B in zip(self.blocks, self.structured):
            out[cols] += B.transpose_times(grad[rows])
        return out

    def push_forward(self, V: np.ndarray) -> np.ndarray:
        """Directions in θ (columns of ``V``) as directions in natural coordinates, B V, so that
        vᵀ ∇_θ f = (B v)ᵀ ∇_nat f."""
        V = np.asarray(V, dtype=float)
        out = np.zeros((self.size, *V.shape[1:]))
        for (rows, cols, _), B in zip(self.blocks, self.structured):
            out[rows] += B.times(V[cols])
        return out

    def sparse(self, n_free: int) -> sp.csr_matrix:
        """B as one sparse ``(size, n_free)`` matrix (a block's rank-one part, where it has one, made
        dense): for products of sparse natural-coordinate matrices Bᵀ H B that stay sparse."""
        rows_all, cols_all, values = [], [], []
        index_rows, index_cols = np.arange(self.size), np.arange(n_free)
        for rows, cols, block in self.blocks:
            S = sp.coo_matrix(block.S if block.u is None else block.dense())
            rows_all.append(index_rows[rows][S.row])
            cols_all.append(index_cols[cols][S.col])
            values.append(S.data)
        return sp.csr_matrix((np.concatenate(values), (np.concatenate(rows_all), np.concatenate(cols_all))),
                             shape=(self.size, n_free))

    def pull_back_product(self, H, v: np.ndarray) -> np.ndarray:
        """:meth:`pull_back_matrix` times a vector without forming the matrix, Bᵀ (H (B v)):
        O(non-zeros of H and B), a Hessian-vector product."""
        return self.pull_back(H @ self.push_forward(v), v.size)

    def pull_back_matrix(self, H, n_free: int, given: Mapping | None = None) -> np.ndarray:
        """A matrix in natural coordinates (dense, or sparse: then no product costs more than
        O(non-zeros + n²)) as the matrix Bᵀ H B in θ, block by block. ``given``: block k ↦
        B_kᵀ H_kk B_k, and block pair (j, k) ↦ B_jᵀ H_jk B_k (its transpose for (k, j)), already
        computed another way, used instead of the products."""
        out = np.zeros((n_free, n_free))
        index = np.arange(n_free)
        H = H.tocsr() if sp.issparse(H) else H
        given = given or {}
        for i, (rows_i, cols_i, B_i) in enumerate(self.blocks):
            for j, (rows_j, cols_j, B_j) in enumerate(self.blocks):
                both = isinstance(cols_i, slice) and isinstance(cols_j, slice)
                target = out[cols_i, cols_j] if both else None
                if not _given(given, i, j):
                    product = B_i.sandwich(H[rows_i][:, rows_j], B_j, into=target)
                elif i == j:
                    product = given[i]
                else:
                    product = given[i, j] if (i, j) in given else given[j, i].T
                if both and product is not target:
                    target += product
                elif not both:
                    out[np.ix_(index[cols_i], index[cols_j])] += product
        return out

    def sandwiched_columns(self, given: Mapping, n_free: int) -> np.ndarray:
        """The θ coordinates of the blocks with a block pair :meth:`pull_back_matrix` computes as a
        sandwich (not ``given``), whose two sides agree only to rounding: the rest of its matrix
        enters exactly symmetric (a given block pair and its transpose, a given diagonal block
        from a symmetric rank-k update), so only these need averaging."""
        loose = np.zeros(n_free, dtype=bool)
        index = np.arange(n_free)
        for i, (_, cols_i, _) in enumerate(self.blocks):
            for j, (_, cols_j, _) in enumerate(self.blocks):
                if not _given(given, i, j):
                    loose[index[cols_i]] = loose[index[cols_j]] = True
        return np.flatnonzero(loose)

    def pull_back_diagonal(self, H, n_free: int, given: Mapping | None = None) -> np.ndarray:
        """The diagonal of :meth:`pull_back_matrix` without forming the matrix (``given``: block
        k ↦ the diagonal of B_kᵀ H_kk B_k, already computed)."""
        out = np.zeros(n_free)
        index = np.arange(n_free)
        H = H.tocsr() if sp.issparse(H) else H
        given = given or {}
        for i, (rows_i, cols_i, B_i) in enumerate(self.blocks):
            for j, (rows_j, cols_j, B_j) in enumerate(self.blocks):
                if i == j and i in given:
                    out[cols_i] += given[i]
                    continue
                common, at_i, at_j = np.intersect1d(index[cols_i], index[cols_j], return_indices=True)
                if common.size:
                    out[common] += B_i.diagonal_sandwich(H[rows_i][:, rows_j], B_j, at_i, at_j)
        return out

    def theta_directions(self, directions: Mapping[str, np.ndarray], n_free: int) -> np.ndarray:
        """``(n_free, g)`` directions in θ that move the natural variables along ``directions``
        (variable → ``(g, *shape)``; variables not named stay): least squares on each variable's
        block."""
        g = len(next(iter(directions.values())))
        out = np.zeros((n_free, g))
        for (rows, cols, block), name in zip(self.blocks, self.names):
            if name in directions:
                target = np.asarray(directions[name], dtype=float).reshape(g, -1).T
                out[cols] = np.linalg.lstsq(block.dense(), target, rcond=None)[0]
        return out

    @cached_property
    def _pseudo_inverses(self) -> dict[int, np.ndarray]:
        """The pseudo-inverses of blocks of B made so far, by block (:meth:`_pseudo_inverse`; a
        cached property writes the instance's ``__dict__`` directly, which a frozen dataclass
        without slots allows; it is not a field, so never compared)."""
        return {}

    def _pseudo_inverse(self, k: int) -> np.ndarray:
        """The pseudo-inverse of block k of B (the least-squares solve of :meth:`theta_for`), kept:
        a fit's starting point then costs a product, not a least-squares problem. Made only for
        the blocks asked for (a tie factor block can have thousands of columns)."""
        if k not in self._pseudo_inverses:
            self._pseudo_inverses[k] = np.linalg.pinv(self.blocks[k][2].dense())
        return self._pseudo_inverses[k]

    def _least_squares(self, k: int, target: np.ndarray) -> np.ndarray:
        """x minimising ‖B_k x − target‖: by the kept pseudo-inverse up to
        :data:`PSEUDO_INVERSE_MAX` columns or for a dense block; beyond, for a sparse (plus
        rank-one) block, by LSQR on its products — the zero-sum scores of many items would
        otherwise need the SVD of an items² matrix."""
        block = self.blocks[k][2]
        if block.S.shape[1] <= PSEUDO_INVERSE_MAX or not sp.issparse(block.S):
            return self._pseudo_inverse(k) @ target
        operator = LinearOperator(block.S.shape, matvec=block.times, rmatvec=block.transpose_times, dtype=float)
        return lsqr(operator, target, atol=1e-15, btol=1e-15, iter_lim=10 * block.S.shape[1])[0]

    def theta_for(self, values: Mapping[str, np.ndarray], theta: np.ndarray) -> np.ndarray:
        """θ with the coordinates of the given natural variables set to reproduce their values
        (least squares on each variable's block; exact for values in the block's range)."""
        theta = np.array(theta, dtype=float)
        for k, ((rows, cols, block), name) in enumerate(zip(self.blocks, self.names)):
            if name in values:
                theta[cols] = self._least_squares(k, np.ravel(values[name]) - self.constant[rows])
        return theta


__all__ = [
    "DENSE_FILL", "NaturalMap", "PSEUDO_INVERSE_MAX", "ROUNDING", "ROW_CHUNK", "SPARSE_DENSITY", "SPARSE_FROM",
    "SparsePlusRankOne", "UNIT_STEPS"
]
