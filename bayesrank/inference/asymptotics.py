"""The asymptotic normal of the MLE pushed to every model variable: delta-method standard
errors and draws.

With Cov(θ̂) = L Lᵀ, the delta-method covariance of any variable q(θ) is (J L)(J L)ᵀ with J = ∂q/∂θ. Its columns J L_j
are directional derivatives along the columns of L, taken here by central differences of the model's own map θ ↦
variables, a few hundred rows per call; no ``(variables × θ)`` Jacobian is ever formed. Where the variables not affine
in θ are functions of at most half of θ's coordinates (the Thurstonian ones of a model with a tie factor), their
Jacobian in those coordinates is taken instead, by differences along each, and J Cov(θ̂) Jᵀ formed from Cov(θ̂) there:
fewer evaluations of the map than directions of L. Draws are θ̂ + L z, z ~ N(0, I), pushed through the same map (exactly
normal for the variables linear in θ, such as the scores).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas
from xarray.backends import BackendArray
from xarray.core import indexing

from bayesrank.inference.backend import one_thread
from bayesrank.inference.natural import SparsePlusRankOne
from bayesrank.inference.structure import Structure

#: Relative step of the directional differences along a column of the covariance factor
#: (central differences: exact for linear maps, a truncation error of order STEP² times the
#: map's third derivative for the smooth non-linear ones).
STEP = 1e-4
#: Directions per call of the batched value function.
CHUNK = 128
#: Columns of a covariance factor per product in :func:`linear_variances` (bounds its temporaries
#: at size × COLUMN_CHUNK).
COLUMN_CHUNK = 512


def covariance_factor(cov: np.ndarray) -> np.ndarray:
    """A factor L with L Lᵀ = cov (Cholesky, or an eigen-factor for semi-definite matrices)."""
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        w, v = np.linalg.eigh((cov + cov.T) / 2)
        return v * np.sqrt(np.clip(w, 0, None))


def linear_covariances(structure: Structure, cov: np.ndarray) -> dict[str, np.ndarray]:
    """Exact covariances of the variables that are affine in θ, B Cov(θ̂)[cols, cols] Bᵀ with B in its
    sparse-plus-rank-one form: O(size²) per variable for the zero-sum scores, where differences along the columns of a
    covariance factor cost O(size³)."""
    index = np.arange(cov.shape[0])
    return {name: B.congruence(cov[np.ix_(index[cols], index[cols])])
            for name, (cols, B) in affine_blocks(structure).items()}


def affine_blocks(structure: Structure) -> dict[str, tuple[slice, SparsePlusRankOne]]:
    """The model variables affine in θ: per name, its θ columns and the block B with variable =
    B θ[cols] + constant — the natural variables (B their block of the natural map), and the free
    variables without a transform, which are their own coordinates (B = 1)."""
    nmap = structure.natural
    out = {name: (cols, B) for (_, cols, _), name, B in zip(nmap.blocks, nmap.names, nmap.structured)}
    layout = structure.layout()
    for name, (cols, _) in structure.slices.items():  # (a transformed one's value is named apart)
        if name in layout and name not in out:
            out[name] = (cols, SparsePlusRankOne(sp.identity(cols.stop - cols.start, format="csr")))
    return out


def linear_variances(structure: Structure, factor: np.ndarray) -> dict[str, np.ndarray]:
    """Exact variances of the natural variables affine in θ from a covariance factor L
    (L Lᵀ = Cov(θ̂)): the squared row norms of B L, a chunk of columns at a time with B in its
    sparse-plus-rank-one form — neither Cov(θ̂) nor the variables' covariance is formed."""
    out = {}
    for name, (cols, B) in affine_blocks(structure).items():
        rows = factor[cols]
        var = np.zeros(B.S.shape[0])
        dense = B.u is None and not sp.issparse(B.S)
        for start in range(0, rows.shape[1], COLUMN_CHUNK):
            chunk = rows[:, start:start + COLUMN_CHUNK]
            if dense:  # (a triangular factor's chunk is zero outside a band of rows: S on that band only)
                live = np.flatnonzero(np.any(chunk != 0, axis=1))
                band = slice(int(live[0]), int(live[-1]) + 1) if live.size else slice(0, 0)
                var += np.sum((B.S[:, band] @ chunk[band]) ** 2, axis=1)
            else:
                var += np.sum(B.times(chunk) ** 2, axis=1)
        out[name] = var
    return out


def delta_method(structure: Structure, theta: np.ndarray, factor: np.ndarray,
                 cross: Mapping[str, bool] | None = None, cov: np.ndarray | None = None
                 ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Delta-method standard errors of every model variable, and covariances of a few.

    Parameters
    ----------
    structure : Structure
    theta : ndarray
        The estimate θ̂.
    factor : ndarray
        L with L Lᵀ = Cov(θ̂).
    cross : mapping of str to bool, optional
        Variables whose covariance is returned (default ``{"score": False}``: for
        differences): False for the full matrix, True for one block per entry of the first
        axis (:meth:`~bayesrank.model.framework.Framework.covariances`).
    cov : ndarray, optional
        Cov(θ̂) itself: the variables affine in θ then come from :func:`linear_covariances`,
        and the directional differences run only when some other variable is left. Without
        it and without ``cross``, their variances come from the factor
        (:func:`linear_variances`): the large-model path, where no covariance is formed.

    Returns
    -------
    se : dict
        Variable → standard errors (its shape).
    cov : dict
        Variable in ``cross`` → ``(size, size)`` covariance, or ``(rows, cols, cols)`` blocks.
    """
    cross = {"score": False} if cross is None else cross
    layout = structure.layout()
    fulls = {name: full for name, full in linear_covariances(structure, cov).items() if name in layout} \
        if cov is not None else {}
    exact = {name: np.diag(full) for name, full in fulls.items()} if cov is not None else \
        {name: var for name, var in linear_variances(structure, factor).items() if name in layout and not cross}
    total = sum(sl.stop - sl.start for sl, _ in layout.values())
    var = np.zeros(total)
    picks = {name: (layout[name][0], layout[name][1] if blocked else (int(np.prod(layout[name][1])),))
             for name, blocked in cross.items() if name in layout}
    out = {name: np.zeros((*shape[:-1], shape[-1], shape[-1])) for name, (sl, shape) in picks.items()}
    left = [name for name in layout if name not in exact]
    # the variables left are functions of some θ coordinates only (:meth:`Structure.theta_columns`):
    # with fewer of those than the factor has directions, their Jacobian J in those coordinates
    # and Cov(θ̂) there give J Cov Jᵀ directly
    reads = structure.theta_columns(left) if left else None
    narrow = bool(left) and 2 * reads.size <= factor.shape[1]
    if narrow:
        read_rows = factor[reads]
        J = _jacobian_columns(structure, theta, read_rows, reads, left)
        CJ = (read_rows @ read_rows.T) @ J
        at = 0
        for name in left:
            sl, shape = layout[name]
            width = sl.stop - sl.start
            var[sl] = np.einsum("rj,rj->j", J[:, at:at + width], CJ[:, at:at + width])
            if name in picks:
                _, picked = picks[name]
                Jb, CJb = (X[:, at:at + width].reshape(len(reads), -1, picked[-1]) for X in (J, CJ))
                out[name] = np.einsum("rbi,rbj->bij", Jb, CJb).reshape(out[name].shape)
            at += width
    for start in range(0, factor.shape[1] if left and not narrow else 0, CHUNK):
        L = factor[:, start:start + CHUNK].T * STEP
        rows = structure.value_rows(np.vstack([theta + L, theta - L]), names=left)
        k = L.shape[0]
        JL = (rows[:k] - rows[k:]) / (2 * STEP)          # (directions, variables)
        var += np.sum(JL**2, axis=0)
        for name, (sl, shape) in picks.items():
            if name in exact:
                continue
            block = JL[:, sl].reshape(k, -1, shape[-1])   # (directions, blocks, entries)
            out[name] += np.matmul(block.transpose(1, 2, 0), block.transpose(1, 0, 2)).reshape(out[name].shape)
    se = {name: np.sqrt(var[sl]).reshape(shape) for name, (sl, shape) in layout.items()}
    for name, variance in exact.items():
        sl, shape = layout[name]
        se[name] = np.sqrt(np.clip(variance, 0.0, None)).reshape(shape)
    for name, full in fulls.items():
        if name in picks:
            _, picked = picks[name]
            size = picked[-1]
            blocks = [full[r * size:(r + 1) * size, r * size:(r + 1) * size] for r in range(full.shape[0] // size)]
            out[name] = np.stack(blocks).reshape(out[name].shape)
    return se, out


def _jacobian_columns(structure: Structure, theta: np.ndarray, read_rows: np.ndarray, reads: np.ndarray,
                      names: list[str]) -> np.ndarray:
    """``(len(reads), entries of names)``: ∂(the variables ``names``, flattened in that order)/∂θ_j
    for the coordinates j in ``reads``, by central differences along each coordinate with the
    step :data:`STEP` × its standard deviation (the row norm of ``read_rows``, the covariance
    factor's rows at ``reads``): the scale of the differences along the factor's columns."""
    sd = np.sqrt(np.einsum("ij,ij->i", read_rows, read_rows))
    h = STEP * np.where(sd > 0, sd, 1.0)
    layout = structure.layout()
    columns = np.concatenate([np.arange(layout[n][0].start, layout[n][0].stop) for n in names])
    out = np.empty((reads.size, columns.size))
    for start in range(0, reads.size, CHUNK):
        j, step = reads[start:start + CHUNK], h[start:start + CHUNK]
        steps = np.zeros((j.size, theta.size))
        steps[np.arange(j.size), j] = step
        rows = structure.value_rows(np.vstack([theta + steps, theta - steps]), names=names)[:, columns]
        out[start:start + j.size] = (rows[:j.size] - rows[j.size:]) / (2 * step[:, None])
    return out


def moved_by(structure: Structure, theta: np.ndarray, directions: np.ndarray) -> list[str]:
    """Model variables that change along ``directions`` (``(len(θ), g)``: a symmetry of the
    likelihood): representatives of the symmetry's orbit, not identified quantities."""
    step = STEP * directions.T / np.maximum(np.abs(directions).max(axis=0), 1e-300)[:, None]
    rows = structure.value_rows(np.vstack([theta + step, theta - step]))
    change = np.abs(rows[: len(step)] - rows[len(step):]).max(axis=0)
    scale = np.maximum(np.abs(structure.value_rows(theta)[0]), 1.0)
    return [name for name, (sl, _) in structure.layout().items() if np.any(change[sl] > 1e-7 * scale[sl])]


class _DrawnWhenRead:
    """Draws made on the first call of :meth:`rows` (once, whichever thread asks first) and kept,
    read-only; what only making them needed is let go then (:meth:`_make` says what). They are made
    on one BLAS thread, as the fit itself: the same numbers whenever and wherever they are read."""

    def __init__(self):
        self._rows = None
        self._lock = threading.Lock()

    def _make(self) -> np.ndarray:
        """``(n_draws, total)``: the draws, letting go of what only they needed."""
        raise NotImplementedError

    def rows(self) -> np.ndarray:
        """``(n_draws, total)``: every variable's draws, made on the first call."""
        with self._lock:
            if self._rows is None:
                with one_thread():
                    rows = self._make()
                rows.flags.writeable = False
                self._rows = rows
        return self._rows

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _lock=threading.Lock())


class AffineDraws(_DrawnWhenRead):
    """Draws of every model variable affine in θ (:func:`affine_blocks`): θ̂'s values plus
    (B L) z, z ~ N(0, I), made from ``rng`` when one of them is first read and kept — a fit
    whose draws nobody reads (a score table, a bootstrap or simulation loop) does not pay for
    them, and one that reads them gets the numbers an eager fit with that seed would have.

    Parameters
    ----------
    centre : ndarray
        ``(total,)``: θ̂'s values, a row of :meth:`Structure.value_rows`.
    moved : ndarray
        ``(total, n_free)``: B L.
    n_draws : int
    rng : numpy Generator
        Owned from here on (its next numbers are the draws').
    """

    def __init__(self, centre: np.ndarray, moved: np.ndarray, n_draws: int, rng: np.random.Generator):
        super().__init__()
        self.centre, self.moved, self.n_draws, self._rng = centre, moved, n_draws, rng

    def _make(self) -> np.ndarray:
        z = self._rng.standard_normal((self.n_draws, self.moved.shape[1]))
        rows = z @ self.moved.T
        rows += self.centre  # (in place: a second draws-sized array costs as much as the product)
        self._rng, self.moved = None, None  # (B L is not needed again)
        return rows


#: Largest covariance factor (bytes) a fit keeps until its draws are first read (:class:`MappedDraws`):
#: a factor of up to 4,096 coordinates; beyond, the draws are made at once and the factor let go.
LAZY_FACTOR_MAX = 2**27


class MappedDraws(_DrawnWhenRead):
    """Draws of every model variable pushed through the model's map, θ̂ + L z ↦ variables,
    z ~ N(0, I), made from ``rng`` when one of them is first read and kept, as
    :class:`AffineDraws` (the same numbers an eager fit with that seed would have): for the
    variables not affine in θ, where a pass of every draw through the map can cost more than the
    rest of the intervals.

    Parameters
    ----------
    structure : Structure
    theta : ndarray
        θ̂.
    factor : ndarray
        L with L Lᵀ = Cov(θ̂), kept until the draws are made.
    n_draws : int
    rng : numpy Generator
        Owned from here on (its next numbers are the draws').
    upper : bool
        As :func:`draws`.
    """

    def __init__(self, structure: Structure, theta: np.ndarray, factor: np.ndarray, n_draws: int,
                 rng: np.random.Generator, upper: bool = False):
        super().__init__()
        self.structure, self.theta, self.factor, self.n_draws, self._rng = structure, theta, factor, n_draws, rng
        self.upper = upper

    def _make(self) -> np.ndarray:
        rows = _mapped_rows(self.structure, self.theta, self.factor, self.n_draws, self._rng, self.upper)
        self._rng, self.factor, self.structure = None, None, None
        return rows

    def __getstate__(self) -> dict:
        self.rows()  # (the compiled map does not travel: the draws do)
        return super().__getstate__()


class LazyDraws(BackendArray):
    """One variable's draws from an :class:`AffineDraws` or a :class:`MappedDraws`, an array of ``shape`` (``(draws,
    *var)``, or ``(1, draws, *var)`` with a chain axis) made when indexed: xarray's lazily indexed array for a variable
    of the fit's posterior group (xarray's backend interface); ``np.asarray`` reads it."""

    def __init__(self, source: AffineDraws | MappedDraws, columns: slice, shape: tuple):
        self.source, self.columns, self.shape, self.dtype = source, columns, tuple(shape), np.dtype(float)

    def with_chain(self) -> LazyDraws:
        """The same draws with a leading chain axis of one."""
        return LazyDraws(self.source, self.columns, (1, *self.shape))

    def __getitem__(self, key: indexing.ExplicitIndexer) -> np.ndarray:
        return indexing.explicit_indexing_adapter(key, self.shape, indexing.IndexingSupport.BASIC, self._read)

    def _read(self, key: tuple) -> np.ndarray:
        return self.source.rows()[:, self.columns].reshape(self.shape)[key]


def chained(values) -> object:
    """Draws ``(draws, *shape)`` with a leading chain axis of one, for a posterior group: lazy
    draws stay lazy (wrapped for xarray's lazy indexing)."""
    if isinstance(values, LazyDraws):
        return indexing.LazilyIndexedArray(values.with_chain())
    return np.asarray(values)[None]


def draws(structure: Structure, theta: np.ndarray, factor: np.ndarray, n_draws: int,
          rng: np.random.Generator, upper: bool = False) -> dict[str, np.ndarray | LazyDraws]:
    """Draws of every model variable from the asymptotic normal θ̂ + L z (``upper``: L is
    upper triangular, and the product a triangular one — half the work). When every variable is
    affine in θ (:func:`affine_blocks`: Bradley–Terry's scores) the draws are its value at θ̂
    plus (B L) z, B its block of the natural map: one product, no pass of every draw through
    the model's map, made when first read (:class:`LazyDraws`) unless B L is larger than the
    draws (then at once: the fit keeps the smaller of the two; not with ``upper``, the
    large-model path, where B L would be a second factor-sized array). Otherwise every draw
    passes through the model's map, also when first read (:class:`MappedDraws`, which keeps L
    until then), unless L is larger than :data:`LAZY_FACTOR_MAX`: then at once.

    Returns
    -------
    dict
        Variable → ``(n_draws, *shape)`` (an array, or a :class:`LazyDraws` that ``np.asarray``
        reads).
    """
    layout, affine = structure.layout(), affine_blocks(structure)
    if not upper and set(layout) <= set(affine):
        moved = np.concatenate([affine[name][1].times(factor[affine[name][0]]) for name in layout])
        values = structure.values(theta)
        centre = np.concatenate([values[name].ravel() for name in layout])
        source = AffineDraws(centre, moved, n_draws, rng)
        if moved.size > n_draws * centre.size:
            # B L larger than the draws (many items): made now, so that the fit keeps the draws, not B L
            source.rows()
        return {name: LazyDraws(source, sl, (n_draws, *shape)) for name, (sl, shape) in layout.items()}
    if factor.nbytes <= LAZY_FACTOR_MAX:
        source = MappedDraws(structure, theta, factor, n_draws, rng, upper)
        return {name: LazyDraws(source, sl, (n_draws, *shape)) for name, (sl, shape) in layout.items()}
    rows = _mapped_rows(structure, theta, factor, n_draws, rng, upper)
    return {name: rows[:, sl].reshape(n_draws, *shape) for name, (sl, shape) in layout.items()}


def _mapped_rows(structure: Structure, theta: np.ndarray, factor: np.ndarray, n_draws: int,
                 rng: np.random.Generator, upper: bool = False) -> np.ndarray:
    """``(n_draws, total)``: θ̂ + L z through the model's map (:func:`draws`)."""
    z = rng.standard_normal((n_draws, factor.shape[1]))
    if upper:  # (L zᵀ)ᵀ by BLAS trmm on the memory of Lᵀ, Fortran-ordered and lower triangular
        steps = blas.dtrmm(1.0, factor.T, z.T, side=0, lower=1, trans_a=1, overwrite_b=1).T
    elif factor.flags.c_contiguous and not np.any(np.triu(factor, 1)):
        # a lower Cholesky factor: the same product by trmm on the memory of Lᵀ (Fortran-ordered,
        # upper triangular), two thirds of the time of the dense product, the same values
        steps = blas.dtrmm(1.0, factor.T, z.T, side=0, lower=0, trans_a=1, overwrite_b=1).T
    else:
        steps = z @ factor.T
    return structure.value_rows(theta + steps)


def replicates(structure: Structure, thetas: np.ndarray, cross: tuple[str, ...] = ("score",)
               ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Every model variable at replicates of θ̂ (a bootstrap): their standard deviations, the
    full covariances of the ``cross`` variables and the replicates themselves.

    Returns
    -------
    se, cov, draws : dict
        As :func:`delta_method` (se, cov) and :func:`draws`.
    """
    rows = structure.value_rows(thetas)
    out = {name: rows[:, sl].reshape(len(thetas), *shape) for name, (sl, shape) in structure.layout().items()}
    se = {name: np.std(v, axis=0, ddof=1) for name, v in out.items()}
    cov = {name: np.atleast_2d(np.cov(out[name].reshape(len(thetas), -1), rowvar=False)) for name in cross
           if name in out}
    return se, cov, out


def jacobian(structure: Structure, theta: np.ndarray, name: str, step: float = 1e-5) -> np.ndarray:
    """∂(variable)/∂θ by central differences of the model's own map, ``(size, n_free)``
    (exact up to rounding for the variables linear in θ, such as the scores)."""
    theta = np.asarray(theta, dtype=float)
    E = np.eye(theta.size) * step
    rows = structure.value_rows(np.vstack([theta + E, theta - E]))
    sl, _ = structure.layout()[name]
    return ((rows[:theta.size, sl] - rows[theta.size:, sl]) / (2 * step)).T


__all__ = [
    "AffineDraws", "CHUNK", "COLUMN_CHUNK", "LAZY_FACTOR_MAX", "LazyDraws", "MappedDraws", "STEP", "affine_blocks",
    "chained", "covariance_factor", "delta_method", "draws", "jacobian", "linear_covariances", "linear_variances",
    "moved_by", "replicates"
]
