"""The one evaluation path of bayesrank's own numerics: one PyTensor mode, one BLAS thread.

The per-cell kernels (:mod:`bayesrank.inference.kernels`) and the map from the free coordinates
to the model variables (:class:`~bayesrank.inference.structure.Structure`) are compiled in
:func:`mode`: PyTensor's virtual machine running each operation's NumPy implementation, with
the ``fast_run`` rewrites except elementwise fusion (a fused loop has no NumPy implementation),
the in-place rewrites and the shape-inference ones (``ShapeOpt``, ``local_useless_reshape``:
on these small per-cell graphs they take much of the compilation and save nothing measurable
when the functions run; the results are the same to the last bit), without shape assertions,
every plain ``OpFromGraph`` inlined (the gradient of ``logsumexp`` is one), and the scalar
operations that PyTensor implements only element by element in Python given a vectorised form
(:func:`_vectorised_scalar_ops`).

The dense linear algebra of a fit (information matrices, their factors, the draws) runs on one
BLAS thread (:func:`one_thread`): several threads split the sums of a product in an order that
depends on their number, so the last bits of a result would depend on the machine's cores.

Why one path: a fit's numbers then depend on its specification, data, options and seed only —
never on what the process compiled or fitted before, on a cache's state, on the machine's cores
or on an environment variable. There is no JIT. The inner graphs of PyTensor's derivative
operations that stay after inlining (inlining them too makes the kernels slower) are linked by
PyTensor's own rule, with C thunks when a C compiler is present: that C is compiled once per
machine into PyTensor's cache — ``make install`` does it (``make compile-cache``) — and a cached
module is the same code as a freshly compiled one. The samplers of
:mod:`bayesrank.inference.nuts` compile the PyMC model in their own backends; that is theirs to
choose, and a NUTS fit says which sampler it used.
"""

from __future__ import annotations

import math
from functools import cache

from threadpoolctl import ThreadpoolController

from bayesrank.runtime.lazy import lazy_module

pytensor = lazy_module("pytensor")

#: Where the vectorised scalar operations replace PyTensor's: after the specialising rewrites
#: (so ``log(sigmoid)`` has already become ``softplus``), before the in-place ones.
_VECTORISE_POSITION = 48.5


@cache
def mode():
    """The one PyTensor mode of bayesrank's own compiled functions (see the module docstring)."""
    from pytensor.compile.builders import OpFromGraph
    from pytensor.compile.rewriting import inline_ofg_node
    from pytensor.graph.rewriting.basic import dfs_rewriter, node_rewriter
    from pytensor.link.vm import VMLinker

    @node_rewriter([OpFromGraph])
    def inline_opfromgraph(fgraph, node):
        return inline_ofg_node(node) if type(node.op) is OpFromGraph else False

    base = pytensor.compile.mode.Mode(linker=VMLinker(use_cloop=False, c_thunks=False), optimizer="fast_run")
    # shape assertions removed: the inputs' shapes agree by construction (every per-cell array has one
    # row per cell), and each assertion is one more Python call per evaluation
    return (base.excluding("fusion", "inplace", "ShapeOpt", "local_useless_reshape")
            .including("local_remove_all_assert")
            .register((dfs_rewriter(inline_opfromgraph), -0.005))
            .register((_vectorised_scalar_ops(), _VECTORISE_POSITION)))


@cache
def _threads() -> ThreadpoolController:
    """The process's thread pools, inspected once (scanning the loaded libraries takes milliseconds)."""
    return ThreadpoolController()


def one_thread():
    """A context in which the BLAS and OpenMP pools run one thread (the module docstring)."""
    return _threads().limit(limits=1)


def function(inputs, outputs, **kwargs):
    """``pytensor.function(inputs, outputs, **kwargs)`` in :func:`mode`."""
    return pytensor.function(inputs, outputs, mode=mode(), **kwargs)


def _vectorised_scalar_ops():
    """A rewrite giving the NumPy thunks a vectorised form of the elementwise operations that
    PyTensor implements only per element in Python (``np.frompyfunc`` on the scalar ``impl``).

    The operations:

    * softplus(x) = max(x, 0) + log1p(exp(−|x|)), exact for every finite x and ±∞;
    * log1mexp(x) = log(1 − eˣ) (x ≤ 0) = log(−expm1(x)) for x > −log 2, log1p(−eˣ) below
      (Mächler's split, the one PyTensor's scalar implementation uses).
    """
    import pytensor.tensor as pt
    from pytensor.graph.rewriting.basic import dfs_rewriter, node_rewriter
    from pytensor.scalar.math import Log1mexp, Softplus
    from pytensor.tensor.elemwise import Elemwise

    @node_rewriter([Elemwise])
    def vectorise(fgraph, node):
        scalar_op = node.op.scalar_op
        (x,) = node.inputs if len(node.inputs) == 1 else (None,)
        if isinstance(scalar_op, Softplus):
            out = pt.maximum(x, 0) + pt.log1p(pt.exp(-pt.abs(x)))
        elif isinstance(scalar_op, Log1mexp):
            out = pt.switch(x > -math.log(2.0), pt.log(-pt.expm1(x)), pt.log1p(-pt.exp(x)))
        else:
            return False
        return [pt.cast(out, node.outputs[0].dtype)] if out.dtype != node.outputs[0].dtype else [out]

    return dfs_rewriter(vectorise)


__all__ = ["function", "mode", "one_thread"]
