"""How bayesrank compiles PyTensor graphs: which backend for which function, a disk cache of
rewritten graphs, and an honest clock of what compiling costs.

Two tiers
---------
Compiling a PyTensor function costs, in every new process, the graph rewrites (about half a
second for a model's log-density) plus the backend's own work: numba — PyTensor's default
here — generates code and loads it from its disk cache, or JIT-compiles it for seconds per
graph when it has never seen it; the C backend loads small per-operation modules, but first
scans PyTensor's whole module cache (``compiledir``: a second with the ~850 modules a few
installs leave there) and hashes every operation's C code; the NumPy implementations of the
operations (PyTensor's virtual machine without C thunks) cost nothing to link.

* **cheap** (``CHEAP``: PyTensor's virtual machine with NumPy thunks, fusion left out, see
  :func:`mode_for`): every function a fit calls a handful of times (the per-cell kernels of
  the information, the variables map) and the log-density of a model's first fit in a
  process. It needs no compiler at all, so a fit whose rewritten graphs are on disk links in
  milliseconds, in the first process after an install as in every later one.
* **hot** (``HOT``: numba): the log-density of a model reused :data:`JIT_AFTER` times in the
  same process — the L-BFGS loop calls it a hundred times per fit, and numba's code is
  faster there (Davidson k_tie = 1 on arena-2024: 0.1 s a fit against 0.3 s on the cheap
  tier); with it, the per-cell derivatives of the model's link (the Newton steps' Hessians,
  :meth:`bayesrank.inference.kernels.LinkKernel.promote`). Moving costs about a second in every
  process even when numba's machine code is on
  disk (``bayesrank precompile`` stores it for the standard models at install time): numba's
  PyTensor dispatch is imported and the code loaded. Without that code it is a JIT of
  seconds; either way a simulation, a bootstrap or a cross-validation pays it back, a
  notebook fitting a model twice does not wait for it. ``BAYESRANK_JIT=always`` moves every
  model from its first fit on (a large non-concave model's single fit pays for the move: whole
  ``bayesrank fit`` processes of the leaderbot paper's models 16 and 18 on arena-2024 took 6.5 s
  and 20–22 s instead of 9.7 s and 31.3 s), ``never`` stays on the cheap tier.

The rewritten graph of every function is kept on disk (``<base_compiledir>/bayesrank-graphs/<digest>``,
keyed by the function's structure and the backend, in a folder named by a digest of bayesrank's
sources and the library versions; folders of other digests are deleted when the cache is first
used), so a new process skips the rewrites as well. ``BAYESRANK_GRAPH_CACHE=0``
turns that off. Without a C compiler (``pytensor.config.cxx`` empty) the hot tier is
PyTensor's default backend.

The clock
---------
:func:`compile_seconds` counts building and compiling, including the *first call* of every
compiled function (where numba JIT-compiles or loads its code). A fit reports the seconds the
clock advanced while it ran (``diagnostics["compile_seconds"]``).
"""

from __future__ import annotations

import hashlib
import math
import os
import pickle
import time
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from bayesrank.lazy import lazy_module

pytensor = lazy_module("pytensor")
cloudpickle = lazy_module("cloudpickle")

#: Environment variables that control compilation (see the module docstring).
GRAPH_CACHE_ENV, JIT_ENV = "BAYESRANK_GRAPH_CACHE", "BAYESRANK_JIT"
JIT_POLICIES = ("cached", "always", "never")
#: The two tiers, as PyTensor linker names.
CHEAP, HOT = "vm", "numba"
#: Under the default policy a structure reused this many times in a process is JIT-compiled
#: even when its hot code is not on disk yet (simulations, bootstraps, cross-validation).
JIT_AFTER = 3
#: Graph-cache folders of other source versions kept besides the current one (see :func:`graph_directory`).
KEEP_VERSIONS = 8

_CLOCK = [0.0]


def compile_seconds() -> float:
    """Seconds this process has spent building and compiling so far (see the module docstring)."""
    return _CLOCK[0]


def timed(build, *args, **kwargs):
    """``build(*args, **kwargs)`` with its time charged to the compile clock (building a model
    to compile)."""
    t0 = time.perf_counter()
    try:
        return build(*args, **kwargs)
    finally:
        _CLOCK[0] += time.perf_counter() - t0


class Compiled:
    """A compiled PyTensor function whose first call is charged to the compile clock."""

    __slots__ = ("fn", "_first")

    def __init__(self, fn):
        self.fn = fn
        self._first = True

    def __call__(self, *args):
        if self._first:
            t0 = time.perf_counter()
            try:
                return self.fn(*args)
            finally:
                self._first = False
                _CLOCK[0] += time.perf_counter() - t0
        return self.fn(*args)

    @property
    def maker(self):
        return self.fn.maker


def jit_policy() -> str:
    """``BAYESRANK_JIT``: ``cached`` (default: after :data:`JIT_AFTER` reuses, from numba's
    cache when it has the code), ``always`` (from a model's first fit on) or ``never``."""
    policy = os.environ.get(JIT_ENV, "cached")
    return policy if policy in JIT_POLICIES else "cached"


def mode_for(tier: str | None):
    """The PyTensor mode of a tier (``"cheap"``, ``"hot"``) or PyTensor's default (None)."""
    if tier is None:
        return pytensor.compile.mode.get_default_mode()
    if tier == "cheap":
        return _cheap_mode()
    if not pytensor.config.cxx:
        return pytensor.compile.mode.get_default_mode()
    return pytensor.compile.mode.Mode(linker=HOT, optimizer="fast_run")


@cache
def _cheap_mode():
    """The cheap tier: PyTensor's virtual machine running every operation's NumPy
    implementation (no C thunks, so no C module cache to scan), with the ``fast_run``
    rewrites except elementwise fusion (a fused loop has no NumPy implementation and would run
    element by element in Python), and with every plain ``OpFromGraph`` inlined (a gradient
    of ``logsumexp`` is one, and its inner function would otherwise be linked with C thunks),
    and the scalar operations without a NumPy function replaced (:func:`vectorised_scalar_ops`)."""
    from pytensor.compile.builders import OpFromGraph
    from pytensor.compile.rewriting import inline_ofg_node
    from pytensor.graph.rewriting.basic import dfs_rewriter, node_rewriter
    from pytensor.link.vm import VMLinker

    @node_rewriter([OpFromGraph])
    def inline_opfromgraph(fgraph, node):
        return inline_ofg_node(node) if type(node.op) is OpFromGraph else False

    mode = pytensor.compile.mode.Mode(linker=VMLinker(use_cloop=False, c_thunks=False), optimizer="fast_run")
    return (mode.excluding("fusion")
            .register((dfs_rewriter(inline_opfromgraph), -0.005))
            .register(vectorised_scalar_ops()))


#: Where the cheap tier replaces scalar operations without a NumPy function: after the
#: specialising rewrites (so ``log(sigmoid)`` has already become ``softplus``), before the
#: in-place ones (which then apply to the replacement too).
VECTORISE_POSITION = 48.5


@cache
def vectorised_scalar_ops():
    """``(rewrite, position)`` for ``Mode.register``: gives NumPy thunks a vectorised form of the elementwise
    operations PyTensor implements only per element in Python (``np.frompyfunc`` on the scalar
    ``impl``: 70 ms of a 90 ms warm Bradley–Terry fit on arena-2024 went to ``softplus``):

    * softplus(x) = max(x, 0) + log1p(exp(−|x|)), exact for every finite x and ±∞;
    * log1mexp(x) = log(1 − eˣ) (x ≤ 0) = log(−expm1(x)) for x > −log 2, log1p(−eˣ) below
      (Mächler's split, the one PyTensor's scalar implementation uses).

    The hot tier keeps PyTensor's own compiled scalar code."""
    import pytensor.tensor as pt
    from pytensor.graph.rewriting.basic import dfs_rewriter, node_rewriter
    from pytensor.scalar.math import Log1mexp, Softplus
    from pytensor.tensor.elemwise import Elemwise

    @node_rewriter([Elemwise])
    def vectorise(fgraph, node):
        scalar_op = node.op.scalar_op
        if isinstance(scalar_op, Softplus):
            (x,) = node.inputs
            out = pt.maximum(x, 0) + pt.log1p(pt.exp(-pt.abs(x)))
        elif isinstance(scalar_op, Log1mexp):
            (x,) = node.inputs
            out = pt.switch(x > -math.log(2.0), pt.log(-pt.expm1(x)), pt.log1p(-pt.exp(x)))
        else:
            return False
        return [pt.cast(out, node.outputs[0].dtype)] if out.dtype != node.outputs[0].dtype else [out]

    return dfs_rewriter(vectorise), VECTORISE_POSITION


def function(inputs, outputs, *, key=None, tier: str | None = None, mode=None, **kwargs) -> Compiled:
    """``pytensor.function(inputs, outputs, **kwargs)`` in a tier's backend, timed, with its
    rewritten graph cached on disk under ``key`` (see the module docstring and :func:`build`)."""
    return build(lambda: (inputs, outputs), key=key, tier=tier, mode=mode, **kwargs)


def build(graph, *, key=None, tier: str | None = None, mode=None, **kwargs) -> Compiled:
    """Compile the graph that ``graph()`` returns as ``(inputs, outputs)``, or load its rewritten
    form from the disk cache without building it.

    Parameters
    ----------
    graph : callable
        ``() -> (inputs, outputs)``; called only when the graph is not on disk.
    key : hashable, optional
        What the graph is a function of (the structure and the function's role); no disk cache
        without it. It must determine the graph: equal keys, equal graphs.
    tier : {"cheap", "hot"}, optional
        Backend tier; default PyTensor's default mode. Ignored when ``mode`` is given.
    mode : pytensor Mode, optional
    **kwargs
        Passed to ``pytensor.function``.
    """
    t0 = time.perf_counter()
    try:
        mode = mode if mode is not None else mode_for(tier)
        path = _graph_path(key, mode)
        fn = _load(path, mode, kwargs) if path is not None and path.exists() else None
        if fn is None:
            inputs, outputs = graph()
            fn = pytensor.function(inputs, outputs, mode=mode, **kwargs)
            if path is not None:
                _save(path, fn)
        return Compiled(fn)
    finally:
        _CLOCK[0] += time.perf_counter() - t0


def _graph_path(key, mode) -> Path | None:
    if key is None or os.environ.get(GRAPH_CACHE_ENV, "1") == "0":
        return None
    linker = type(mode.linker).__name__ + str(getattr(mode.linker, "use_cloop", "")) + str(getattr(mode.linker, "c_thunks", ""))
    text = repr((key, linker, rewrites_signature(mode)))
    return graph_directory() / (hashlib.sha256(text.encode()).hexdigest() + ".pkl")


def rewrites_signature(mode) -> str:
    """What decides a mode's rewrites, as text that is the same in every process (the
    optimizer objects' own ``repr`` carries memory addresses, which made every process miss
    the disk cache and add new files to it)."""
    query = mode.provided_optimizer
    if isinstance(query, str) or query is None:
        return str(query)
    parts = [sorted(map(str, getattr(query, name, ()) or ())) for name in ("include", "exclude", "require")]
    extra = [(type(r).__name__, str(r), position) for r, position in getattr(query, "extra_rewrites", ()) or ()]
    return repr((type(query).__name__, parts, getattr(query, "position_cutoff", None), extra))


@cache
def graph_directory() -> Path:
    """``<base_compiledir>/bayesrank-graphs/<source digest>``: one folder per version of the
    sources and libraries. Besides this version's, the :data:`KEEP_VERSIONS` most recently used
    folders stay (several installs may share the compile directory); older ones are removed
    here, so the cache does not grow with every upgrade or edit."""
    return version_folder(Path(pytensor.config.base_compiledir) / "bayesrank-graphs")


def version_folder(root: Path) -> Path:
    """This version's folder under ``root``, after removing the stale ones (see
    :func:`graph_directory`)."""
    here = root / source_digest()[:16]
    if root.is_dir():
        others = [p for p in root.iterdir() if p != here]
        others.sort(key=lambda p: p.stat().st_mtime if p.exists() else 0.0, reverse=True)
        for stale in [p for p in others if not p.is_dir()] + [p for p in others if p.is_dir()][KEEP_VERSIONS:]:
            _remove(stale)
    if here.is_dir():
        try:
            os.utime(here)  # "most recently used" for the other installs' pruning
        except OSError:
            pass
    return here


def _remove(path: Path) -> None:
    """Delete a stale cache entry or folder (best effort: another process may be using it)."""
    import shutil

    try:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    except OSError:
        pass


def _save(path: Path, fn) -> None:
    """Store the rewritten graph of ``fn`` (best effort: a failure only loses the cache)."""
    try:
        maker = fn.maker
        blob = cloudpickle.dumps((maker.inputs, maker.outputs, maker.fgraph, maker.unpack_single))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(blob)
        tmp.replace(path)
    except Exception:  # noqa: BLE001 - an uncachable graph is still a working function
        pass


def _load(path: Path, mode, kwargs):
    """A function from a stored rewritten graph, without rewriting it again (None on failure)."""
    try:
        inputs, outputs, fgraph, unpack_single = pickle.loads(path.read_bytes())
        if unpack_single:  # ``pytensor.function`` was given one output, not a list: return it bare
            outputs = outputs[0]
        maker = pytensor.compile.maker.FunctionMaker(
            inputs, outputs, mode=mode, fgraph=fgraph, no_fgraph_prep=True, accept_inplace=True,
            on_unused_input=kwargs.get("on_unused_input", "ignore"))
        return maker.create()
    except Exception:  # noqa: BLE001 - a stale or unreadable entry: compile afresh
        return None


@cache
def source_digest() -> str:
    """Digest of bayesrank's source files and the versions of the libraries that shape a
    graph: any change gives new cache keys."""
    h = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    for lib in ("pytensor", "pymc", "numpy", "numba"):
        try:
            h.update(f"{lib}={version(lib)}".encode())
        except PackageNotFoundError:
            h.update(f"{lib}=none".encode())
    return h.hexdigest()
