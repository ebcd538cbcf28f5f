"""Products with a large fixed basis, stored in single precision and accumulated in double.

The free tie coordinates of a factored threshold enter the log-density through a dense
orthonormal basis (:func:`~bayesrank.model.structures.tie_coordinate_basis`): 2,580 × 2,368
for the leaderbot paper's k_tie = 20 models on arena-2024, 49 MB in double precision. The
product with it and the gradient's product with its transpose read the whole matrix at every
evaluation, so they are bound by memory traffic, not arithmetic. :class:`FixedBasisProduct` keeps the
basis rounded to single precision and accumulates in double: the map it computes is exactly
linear, with the rounded basis B (its entries float32 numbers, its columns orthonormal to ~1e-7,
which spans the same thresholds), and every consumer — the log-density on every backend, the
natural map the exact Hessian is assembled from — sees that same B. Half the bytes per product:
the pair takes 1.24 ms instead of 3.43 ms, and paper model 14's log-density and gradient on the
compiled tier 1.45 ms instead of 3.32 ms (``bench/results/grid.md``).

Backends: NumPy (``perform``, the cheap tier: a double-precision copy made once per basis, then
BLAS), numba (the hot tier, nutpie, PyMC's sampler: loops that read float32 and sum float64) and
JAX (numpyro). The numba and JAX implementations are registered when PyTensor's backend is first
imported (:func:`bayesrank.lazy.after_import`), so a fit that stays on the cheap tier never
imports numba.
"""

from __future__ import annotations

import weakref

import numpy as np
from pytensor.gradient import grad_not_implemented
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.graph.replace import _vectorize_node, _vectorize_not_needed

from bayesrank.lazy import after_import, lazy_module

pt = lazy_module("pytensor.tensor")
pytensor = lazy_module("pytensor")


def fixed_basis_times(basis: np.ndarray, x):
    """``basis @ x`` for a fixed basis ``(m, r)`` and a symbolic ``x`` ``(r,)`` or ``(rows, r)``, with
    the basis stored rounded to single precision (module docstring). The basis enters the graph as a
    shared variable, not a constant: numba embeds an array constant above 1 MB as a dynamic global,
    and PyTensor cannot cache a compiled function holding one on disk, so every process compiled a
    k_tie = 20 model's log-density again (paper model 18: 6.8 s; loaded from the cache, 0.5 s).

    Parameters
    ----------
    basis : ndarray
        ``(m, r)``; rounded to float32.
    x : TensorVariable
        float64 coordinates.

    Returns
    -------
    TensorVariable
        ``(m,)`` or ``(rows, m)``.
    """
    stored = np.ascontiguousarray(basis, dtype=np.float32)
    return FixedBasisProduct()(pytensor.shared(stored, name="fixed_basis", shape=stored.shape), x)


class FixedBasisProduct(Op):
    """``B x`` (``Bᵀ x`` when ``transposed``) for a fixed float32 matrix B and float64 coordinates x
    (a vector, or rows of them), accumulated in double precision."""

    __props__ = ("transposed",)

    def __init__(self, transposed: bool = False):
        self.transposed = transposed

    def make_node(self, basis, x):
        basis, x = pt.as_tensor_variable(basis), pt.as_tensor_variable(x)
        if basis.ndim != 2 or basis.dtype != "float32" or x.ndim not in (1, 2) or x.dtype != "float64":
            raise TypeError("FixedBasisProduct takes a float32 matrix and float64 coordinates (a vector or rows).")
        size = basis.type.shape[1 if self.transposed else 0]
        return Apply(self, [basis, x], [pt.tensor(dtype="float64", shape=(*x.type.shape[:-1], size))])

    def perform(self, node, inputs, outputs):
        basis, x = inputs
        wide = _wide(basis)
        outputs[0][0] = x @ wide if self.transposed else x @ wide.T

    def infer_shape(self, *args):
        # (node, shapes) since PyTensor 3.3, which warns about the older (fgraph, node, shapes)
        basis_shape, x_shape = args[-1]
        return [(*x_shape[:-1], basis_shape[1] if self.transposed else basis_shape[0])]

    def pullback(self, inputs, outputs, cotangents):
        basis, _ = inputs  # (fixed: its gradient is never asked for)
        return [grad_not_implemented(self, 0, basis), FixedBasisProduct(not self.transposed)(basis, cotangents[0])]


# rows of coordinates are the batch the operation takes itself (the value function's rows of θ;
# make_node refuses any other)
_vectorize_node.register(FixedBasisProduct)(_vectorize_not_needed)

#: id of a float32 basis → its float64 copy, for NumPy's products (:func:`_wide`); an entry leaves
#: with its basis.
_WIDE: dict[int, np.ndarray] = {}


def _wide(basis: np.ndarray) -> np.ndarray:
    """A double-precision copy of ``basis`` for NumPy's products, made once per basis array however
    the functions reading different arrays alternate, and dropped with it."""
    key = id(basis)
    if key not in _WIDE:
        _WIDE[key] = basis.astype(np.float64)
        weakref.finalize(basis, _WIDE.pop, key, None)
    return _WIDE[key]


def _numba(dispatch):
    """The numba implementation: loops over the float32 rows, sums in float64."""

    @dispatch.register_funcify_default_op_cache_key(FixedBasisProduct)
    def funcify(op, node, **kwargs):
        batched = node.inputs[1].type.ndim == 2

        @dispatch.numba_njit
        def times(basis, x):  # B x
            m, r = basis.shape
            out = np.empty(m)
            for i in range(m):
                total = 0.0
                for j in range(r):
                    total += np.float64(basis[i, j]) * x[j]
                out[i] = total
            return out

        @dispatch.numba_njit
        def times_transposed(basis, x):  # Bᵀ x
            m, r = basis.shape
            out = np.zeros(r)
            for i in range(m):
                xi = x[i]
                for j in range(r):
                    out[j] += np.float64(basis[i, j]) * xi
            return out

        one = times_transposed if op.transposed else times
        if not batched:
            return one, 1

        size_axis = 1 if op.transposed else 0  # the output's length: B's columns for Bᵀ x

        @dispatch.numba_njit
        def rows(basis, x):
            out = np.empty((x.shape[0], basis.shape[size_axis]))
            for k in range(x.shape[0]):
                out[k] = one(basis, x[k])
            return out

        return rows, 2


def _jax(dispatch):
    """The JAX implementation: XLA's product with the basis widened to float64."""
    import jax.numpy as jnp

    @dispatch.jax_funcify.register(FixedBasisProduct)
    def funcify(op, **kwargs):
        transposed = op.transposed

        def product(basis, x):
            wide = jnp.asarray(basis, dtype=jnp.float64)
            return x @ wide if transposed else x @ wide.T

        return product


after_import("pytensor.link.numba.dispatch.basic", _numba)
after_import("pytensor.link.jax.dispatch.basic", _jax)
