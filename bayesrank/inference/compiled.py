"""A framework's model compiled once per structure, and bound to each fit's data.

:class:`Structure` is everything about a model that does not depend on the data values:
the PyMC model (built once, as a template), the layout of its free coordinates θ, the
compiled log-density and gradient — which take the cell data as *inputs*, never as state —,
the map from θ to every model variable, and the per-cell kernels of its predictors and link.
Structures are cached by (framework spec, prior, number of items and judges, which per-cell
data exist) in a small LRU cache, so refits of any data of that shape are warm.

:class:`Bound` pairs a structure with one fit's data. It is immutable and private to the
fit: two fits of the same shape share compiled code, never data.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, cached_property

import numpy as np
import pytensor.tensor as pt
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, lsqr
from pymc.pytensorf import join_nonshared_inputs
from pymc.logprob.transforms import LogTransform
from pytensor.compile.mode import Mode
from pytensor.graph.traversal import ancestors
from pytensor.graph.replace import graph_replace, vectorize_graph

from bayesrank.data.comparisons import Comparisons
from bayesrank.data.memo import remembered
from bayesrank.inference import backend
from bayesrank.inference.kernels import link_kernel, predictor_kernel
from bayesrank.model.framework import CELL_DATA, Framework
from bayesrank.model.links import LOG_CONCAVE

#: Structures kept compiled at once (least recently used dropped first).
CACHE_SIZE = 32
_CACHE: OrderedDict[tuple, Structure] = OrderedDict()

#: Mode of the functions called a handful of times per fit (the map θ ↦ all model variables):
#: the Python linker compiles in a fraction of a second, where the default backend's
#: just-in-time compilation of a vectorised graph took tens of seconds on a cold cache; the
#: scalar operations without a NumPy function are replaced as in the cheap tier.
LIGHT_MODE = Mode(linker="py", optimizer="fast_compile").register(backend.vectorised_scalar_ops())
#: Rows of θ evaluated per call of the batched value function.
BATCH_ROWS = 512


def structure_key(framework: Framework, data: Comparisons, prior: str) -> tuple:
    """What a compiled model depends on besides the data values."""
    return (
        framework.spec_json(),
        prior,
        data.n_items,
        data.n_judges,
        data.judge is not None,
        data.first is not None,
        tuple(data.covariate_names),
        framework.structure_key(data),
        tuple(data.contrast_names),
    )


def compiled(framework: Framework, data: Comparisons, prior: str = "flat") -> Structure:
    """The compiled structure of ``framework`` for data shaped like ``data`` (prepared).

    Parameters
    ----------
    framework : Framework
    data : Comparisons
        Prepared data; only its shape (items, judges, per-cell fields) is used.
    prior : {"flat", "weak"}
    """
    key = structure_key(framework, data, prior)
    found = _CACHE.get(key)
    if found is None:
        found = backend.timed(Structure, framework, data, prior, key)
        _CACHE[key] = found
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
        if backend.jit_policy() == "always":  # the first fit on the hot tier too
            found.move_to_hot()
    else:  # fitted again in this process: the log-density may move to the hot tier
        _CACHE.move_to_end(key)
        found.promote()
    return found


def cell_arrays(data: Comparisons) -> dict[str, np.ndarray]:
    """The per-cell data arrays of :data:`~bayesrank.model.framework.CELL_DATA` that ``data`` has."""
    arrays = {"item_a": data.a, "item_b": data.b, "judge_index": data.judge, "first": data.first,
              "covariates": data.covariates, "contrasts": data.contrasts}
    return {name: arrays[name] for name in CELL_DATA if arrays[name] is not None}


class Structure:
    """A framework's model compiled for one shape of data (see the module docstring).

    Attributes
    ----------
    framework : Framework
    prior : {"flat", "weak"}
    model : pm.Model
        The template model (its data containers hold the first data it was built with; every
        compiled function takes the cell data as inputs instead).
    x0 : ndarray
        The data-independent starting point of θ.
    slices : dict
        Free coordinate name → (slice of θ, shape).
    """

    def __init__(self, framework: Framework, data: Comparisons, prior: str, key: tuple | None = None):
        self.framework = framework
        self.prior = prior
        self.model, self._log_probs = framework.build(data, prior)
        self.cell_names = [name for name in CELL_DATA if name in self.model.named_vars]
        #: what the compiled graphs are functions of (None: not cached on disk)
        self.key = None if key is None else (*key, tuple(sorted(self.cell_dtypes().items())))
        #: whether the log-density runs on the hot tier (:mod:`bayesrank.inference.backend`)
        self.hot = False
        #: how often the structure was fitted again in this process
        self.reuses = 0
        self._point = self.model.initial_point()
        self.value_vars = list(self.model.value_vars)
        self.slices, start = {}, 0
        for v in self.value_vars:
            shape = self._point[v.name].shape
            size = int(np.prod(shape))
            self.slices[v.name] = (slice(start, start + size), shape)
            start += size
        self.x0 = np.concatenate([np.ravel(self._point[v.name]) for v in self.value_vars]).astype(float)
        self.variable_names = [v.name for v in (*self.model.free_RVs, *self.model.deterministics)]

    # ------------------------------------------------------------------ sizes
    @property
    def n_free(self) -> int:
        """Dimension of θ (free coordinates after every constraint)."""
        return self.x0.size

    def cell_dtypes(self) -> dict[str, str]:
        return {name: self.model[name].dtype for name in self.cell_names}

    def cast_cells(self, cells: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Per-cell data arrays in the dtypes of the model's containers."""
        dtypes = self.cell_dtypes()
        return {name: np.asarray(cells[name], dtype=dtypes[name]) for name in self.cell_names}

    # ------------------------------------------------------------------ θ ↦ log-density
    def _theta_parts(self, theta):
        return [theta[sl].reshape(shape).astype(v.dtype) for v, (sl, shape) in
                ((v, self.slices[v.name]) for v in self.value_vars)]

    @cached_property
    def _logp_graph(self):
        """(θ, cell data, counts) ↦ (log-density, gradient): the PyMC model's own graph with
        the data containers replaced by inputs (flat priors: the log-likelihood)."""
        logp = self.model.logp(jacobian=False)
        (logp_t,), theta = join_nonshared_inputs(self._point, [logp], self.value_vars)
        names = [*self.cell_names, "counts"]
        inputs = {name: self.model[name].type(name) for name in names}
        logp_t = graph_replace(logp_t, {self.model[name]: inputs[name] for name in names}, strict=False)
        return [theta, *inputs.values()], [logp_t, pt.grad(logp_t, theta)]

    def _logp_fn(self, tier):
        key = None if self.key is None else (*self.key, "logp_dlogp")
        return backend.build(lambda: self._logp_graph, key=key, tier=tier, on_unused_input="ignore")

    @cached_property
    def _logp_cheap(self):
        return self._logp_fn("cheap")

    @cached_property
    def _logp_hot(self):
        return self._logp_fn("hot")

    def promote(self, force: bool = False) -> None:
        """Called when the structure is fitted again: run the log-density on the hot tier from now
        on when the policy allows it (:func:`bayesrank.inference.backend.jit_policy`) or
        ``force`` — always when forced or ``BAYESRANK_JIT=always`` (which moves a structure when
        it is built, :func:`compiled`); by default once the structure has been reused
        :data:`~bayesrank.inference.backend.JIT_AFTER` times (moving costs a second even when
        numba's code is on disk, so it pays only over several fits)."""
        self.reuses += 1
        policy = backend.jit_policy()
        if force or policy == "always" or (policy == "cached" and self.reuses >= backend.JIT_AFTER):
            self.move_to_hot()

    def move_to_hot(self) -> None:
        """Run the log-density, and the link's derivatives of every Newton step, on the hot tier
        from now on (compiled, or loaded from numba's cache, here)."""
        if self.hot:
            return
        self._logp_hot(self.x0, *self._template_cells())
        self.kernels["link"].promote()
        self.hot = True

    def _template_cells(self):
        return [self.model[name].get_value() for name in [*self.cell_names, "counts"]]

    def logp_dlogp(self, theta: np.ndarray, cells: Mapping[str, np.ndarray], counts: np.ndarray):
        """Log-density and its gradient at θ for the given cells."""
        fn = self._logp_hot if self.hot else self._logp_cheap
        lp, grad = fn(theta, *[cells[name] for name in self.cell_names], counts)
        return float(lp), grad

    # ------------------------------------------------------------------ θ ↦ model variables
    @cached_property
    def _values_fn(self):
        """Rows of θ ↦ every free variable and deterministic, flattened and concatenated; and
        the shape of every variable."""
        key = None if self.key is None else (*self.key, "values")
        graph = cache(lambda: self._values_graph(self.variable_names))
        fn = backend.build(lambda: ([graph()[2]], graph()[3]), key=key, mode=LIGHT_MODE)
        shape_fn = backend.build(lambda: ([graph()[0]], [pt.as_tensor(o.shape) for o in graph()[1]]),
                                 key=None if key is None else (*key, "shapes"), mode=LIGHT_MODE,
                                 on_unused_input="ignore")
        shapes = {n: tuple(int(s) for s in shape) for n, shape in zip(self.variable_names, shape_fn(self.x0))}
        return fn, shapes

    @property
    def shapes(self) -> dict[str, tuple]:
        """Shape of every model variable."""
        return self._values_fn[1]

    def value_rows(self, thetas: np.ndarray, names: Iterable[str] | None = None) -> np.ndarray:
        """Flattened values of every model variable for each row of θ, ``(rows, total size)``;
        with ``names``, only those variables' entries (the others 0), by a function of those
        alone — the Thurstonian variances of a k_tie = 20 model without the tie factors'
        2,390 × 2,330 product per row (paper model 26: the delta method's differences along
        2,586 directions 1.9 s of BLAS for values it does not use)."""
        thetas = np.atleast_2d(np.asarray(thetas, dtype=float))
        wanted = None if names is None else tuple(n for n in self.variable_names if n in set(names))
        if wanted is None or len(wanted) == len(self.variable_names):
            fn, _ = self._values_fn
            return np.concatenate([fn(thetas[i:i + BATCH_ROWS]) for i in range(0, len(thetas), BATCH_ROWS)])
        layout = self.layout()
        out = np.zeros((len(thetas), sum(sl.stop - sl.start for sl, _ in layout.values())))
        if not wanted:
            return out
        if wanted not in self._subset_values_fns:
            key = None if self.key is None else (*self.key, "values", wanted)
            graph = cache(lambda: self._values_graph(wanted))
            self._subset_values_fns[wanted] = backend.build(lambda: ([graph()[2]], graph()[3]), key=key,
                                                            mode=LIGHT_MODE)
        fn = self._subset_values_fns[wanted]
        columns = np.concatenate([np.arange(layout[n][0].start, layout[n][0].stop) for n in wanted])
        for i in range(0, len(thetas), BATCH_ROWS):
            out[i:i + BATCH_ROWS, columns] = fn(thetas[i:i + BATCH_ROWS])
        return out

    def theta_columns(self, names: Iterable[str]) -> np.ndarray:
        """The coordinates of θ the variables ``names`` are functions of (those of every free
        variable in their graphs), as sorted indices: a non-linear variable's derivatives vanish
        along the others (the Thurstonian loadings of a k_tie = 20 model do not move with its
        2,330 tie coordinates)."""
        wanted = tuple(n for n in self.variable_names if n in set(names))
        if wanted not in self._theta_columns:
            outputs = self.model.replace_rvs_by_values([self.model[n] for n in wanted])
            read = set(ancestors(outputs))
            index = np.arange(self.n_free)
            self._theta_columns[wanted] = np.concatenate(
                [index[self.slices[v.name][0]] for v in self.value_vars if v in read] or [index[:0]])
        return self._theta_columns[wanted]

    @cached_property
    def _theta_columns(self) -> dict:
        """:meth:`theta_columns` of the subsets of the variables asked for so far."""
        return {}

    @cached_property
    def _subset_values_fns(self) -> dict:
        """The value functions of subsets of the variables compiled so far (:meth:`value_rows`)."""
        return {}

    def _values_graph(self, names: tuple[str, ...]):
        """θ, the variables ``names`` of it, and rows of θ ↦ those variables flattened and
        concatenated: ``(theta, outputs, batch, flat rows)``."""
        theta = pt.vector("theta")
        outputs = self.model.replace_rvs_by_values([self.model[n] for n in names])
        outputs = graph_replace(outputs, dict(zip(self.value_vars, self._theta_parts(theta))), strict=False)
        flat = pt.concatenate([pt.flatten(o) for o in outputs])
        batch = pt.matrix("thetas")
        return theta, outputs, batch, vectorize_graph(flat, {theta: batch})

    def layout(self) -> dict[str, tuple[slice, tuple]]:
        """Where each variable sits in a row of :meth:`value_rows`."""
        out, start = {}, 0
        for name in self.variable_names:
            shape = self.shapes[name]
            size = int(np.prod(shape)) if shape else 1
            out[name] = (slice(start, start + size), shape)
            start += size
        return out

    def values(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        """Every model variable (constrained scale) at θ: by the natural map (:class:`NaturalMap`,
        derived from this model's value function) when the predictors read every variable — no
        call of the compiled value function (Bradley–Terry's scores) — else by that function."""
        layout = self.layout()
        if set(layout) <= set(self.natural.names):
            natural = self.natural.unflatten(self.natural(np.asarray(theta, dtype=float)))
            return {name: natural[name] for name in layout}
        row = self.value_rows(theta)[0]
        return {name: row[sl].reshape(shape) for name, (sl, shape) in layout.items()}

    # ------------------------------------------------------------------ natural coordinates
    @cached_property
    def natural(self) -> NaturalMap:
        """The model variables the predictors read, as an affine map of θ."""
        return NaturalMap.from_structure(self)

    @cached_property
    def kernels(self) -> dict:
        """Per-cell kernels of the framework's predictors (and its link, under ``"link"``)."""
        shapes, cell_ndims = self.shapes, {n: self.model[n].ndim for n in self.cell_names}
        out = {}
        for name, pred in self.predictors.items():
            local = {}
            for key, loc in {**pred.inputs, **pred.constants}.items():
                shape = shapes[loc.var] if loc.var in shapes else self.model[loc.var].get_value().shape
                local[key] = shape[1:] if loc.by is not None else shape
            out[name] = predictor_kernel(pred, local, cell_ndims, self.cell_dtypes())
        out["link"] = link_kernel(self.framework.link)
        return out

    @cached_property
    def predictors(self) -> dict:
        return self.framework.predictors(self._template_data)

    @cached_property
    def affine(self) -> bool:
        """Every predictor is linear in the natural variables and those are affine in θ (no positive
        variable entering through exp): the predictors' Jacobians in θ are the same at every θ."""
        return all(p.linear for p in self.predictors.values()) and not self.natural.exp_columns.any()

    @cached_property
    def concave(self) -> bool:
        """The log-likelihood (flat priors) is concave in θ: the link is log-concave
        (:data:`~bayesrank.model.links.LOG_CONCAVE`) and the predictors are :attr:`affine` in θ."""
        return self.framework.link in LOG_CONCAVE and self.affine

    @cached_property
    def whitened_columns(self) -> np.ndarray:
        """The coordinates of θ whitened by construction (flat priors only:
        :meth:`~bayesrank.model.framework.Framework.whitened_by_construction`), as a mask."""
        mask = np.zeros(self.x0.size, dtype=bool)
        if self.prior == "flat":
            for name in self.framework.whitened_by_construction():
                if name in self.slices:  # (a framework may keep its own coordinates instead)
                    mask[self.slices[name][0]] = True
        return mask

    @cached_property
    def constants(self) -> dict[str, np.ndarray]:
        """Values of the fixed model data the predictors read (a basis)."""
        return {loc.var: np.asarray(self.model[loc.var].get_value(), dtype=float)
                for pred in self.predictors.values() for loc in pred.constants.values()}

    # ------------------------------------------------------------------ per cell
    def locals(self, nat: Mapping[str, np.ndarray], cells: Mapping[str, np.ndarray], draws: bool = False
               ) -> dict[str, dict]:
        """Per predictor, the local values each cell sees (inputs and constants).

        With ``draws=True`` every natural variable has a leading axis of k draws and the
        result covers k × n rows: draw j's values for every cell, draw by draw.
        """
        n = len(cells["item_a"])
        k = len(next(iter(nat.values()))) if draws else 1
        out = {}
        for name, pred in self.predictors.items():
            u = {}
            for key, loc in pred.inputs.items():
                value = np.asarray(nat[loc.var], dtype=float)
                u[key] = _gather(value if draws else value[None], cells, loc.by, n)
            for key, loc in pred.constants.items():
                u[key] = _gather(self.constants[loc.var][None], cells, loc.by, n)
                if draws:
                    u[key] = np.tile(u[key], (k,) + (1,) * (u[key].ndim - 1))
            out[name] = u
        return out

    def local_rows(self, cells: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Per predictor, ``(n, p)`` positions in the natural vector of each cell's flattened
        local inputs (for scattering per-cell derivatives)."""
        n = len(cells["item_a"])
        nmap = self.natural
        out = {}
        for name, pred in self.predictors.items():
            blocks = []
            for loc in pred.inputs.values():
                offset, shape = nmap.offsets[loc.var], nmap.shapes[loc.var]
                if loc.by is None:
                    size = int(np.prod(shape)) if shape else 1
                    blocks.append(np.broadcast_to(offset + np.arange(size), (n, size)))
                else:
                    width = int(np.prod(shape[1:])) if len(shape) > 1 else 1
                    index = np.asarray(cells[loc.by], dtype=np.int64)
                    blocks.append(offset + index[:, None] * width + np.arange(width))
            out[name] = np.concatenate(blocks, axis=1)
        return out

    def predictor_values(self, nat: Mapping[str, np.ndarray], cells: Mapping[str, np.ndarray],
                         draws: bool = False) -> dict:
        """The predictors of each cell (``draws=True``: of each draw × cell, flattened)."""
        cells = self.cast_cells(cells)
        u = self.locals(nat, cells, draws)
        if draws:
            k = len(next(iter(nat.values())))
            cells = {name: np.tile(v, (k,) + (1,) * (v.ndim - 1)) for name, v in cells.items()}
        return {name: self.kernels[name].value(u[name], cells) for name in self.predictors}

    def log_probs(self, nat: Mapping[str, np.ndarray], cells: Mapping[str, np.ndarray],
                  draws: bool = False) -> np.ndarray:
        """Log P(a wins), log P(b wins), log P(tie) of the cells: ``(n, 3)``, or ``(k, n, 3)``
        for k draws of the natural variables (``draws=True``)."""
        lp = self.kernels["link"].log_probs(self.predictor_values(nat, cells, draws))
        return lp.reshape(-1, len(cells["item_a"]), 3) if draws else lp

    def link_derivatives(self, values: Mapping[str, np.ndarray], counts: np.ndarray) -> dict[str, np.ndarray]:
        """The link's per-cell derivatives at the predictors ``values``
        (:meth:`~bayesrank.inference.kernels.LinkKernel.derivatives`), on this structure's own tier:
        never on a tier another model of the same link moved the shared kernel to."""
        return self.kernels["link"].derivatives(values, counts, hot=self.hot)

    def outcome_gradients(self, values: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The link's log-probabilities and ∂ log P_o/∂p at ``values``
        (:meth:`~bayesrank.inference.kernels.LinkKernel.outcome_gradients`), on this structure's tier."""
        return self.kernels["link"].outcome_gradients(values, hot=self.hot)

    def bind(self, data: Comparisons) -> Bound:
        """This structure with one fit's (prepared) data."""
        return Bound(self, data)

    @cached_property
    def _template_data(self) -> Comparisons:
        """Shape information for :meth:`Framework.predictors` (covariate positions)."""
        return _TemplateData(self.model)


class _TemplateData:
    """The shape of the data a structure was built for: what a framework's
    :meth:`~bayesrank.model.framework.Framework.predictors` may ask (no data values)."""

    def __init__(self, model):
        names = model.named_vars
        self.covariate_names = tuple(model.coords.get("covariate", ()))
        self.contrast_names = tuple(model.coords.get("contrast", ()))
        self.items = tuple(model.coords["item"])
        self.n_items = len(self.items)
        self.judges = tuple(model.coords["judge"]) if "judge" in model.coords else None
        self.n_judges = 0 if self.judges is None else len(self.judges)
        self.judge = np.empty(0, dtype=np.int64) if "judge_index" in names else None
        self.first = np.empty(0, dtype=np.int64) if "first" in names else None


def _gather(value: np.ndarray, cells, by, n) -> np.ndarray:
    """``(k, *shape)`` draws of a variable as k × n cells see them, flattened to ``(k·n, …)``."""
    k = value.shape[0]
    if by is not None:
        out = value[:, np.asarray(cells[by], dtype=np.int64)]
    else:
        out = np.broadcast_to(value[:, None], (k, n, *value.shape[1:]))
    return out.reshape(k * n, *out.shape[2:])


#: From this many natural coordinates on, information matrices are assembled sparse and pulled
#: back through the structured blocks of B (:class:`SparsePlusRankOne`); below, dense algebra
#: on small matrices is faster than building sparse ones.
SPARSE_FROM = 400
#: Up to this many columns a block of B keeps its pseudo-inverse for :meth:`NaturalMap.theta_for`;
#: beyond, a sparse block is solved by LSQR (:meth:`NaturalMap._least_squares`).
PSEUDO_INVERSE_MAX = 400
#: A block of B counts as sparse (possibly after removing a rank-one part) when it has at most
#: this many non-zeros per row and column on average.
SPARSE_DENSITY = 4
#: A sparse matrix multiplied into a dense block is made dense from this fill on: a dense
#: product (BLAS) costs rows · cols per column where the sparse one costs its non-zeros, about
#: ten times slower per entry (measured: 1290² matrix times 1245 columns, break-even near 7 %).
#: The natural information of factored tie thresholds is such a matrix (every compared pair
#: couples 2k loadings: 85 % filled for k_tie = 10 on the arena).
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
    """The variables the predictors read (*natural coordinates*), an affine map of φ(θ).

    nat = c + B φ(θ), where φ is the identity on every free coordinate except those of
    log-transformed (positive) free variables, where it is exp; B is block-sparse: each
    natural variable depends on a few free coordinates (its own, after the zero-sum and other
    linear transforms).

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
        c, the natural vector at φ(θ) = 0.
    exp_columns : ndarray of bool
        The free coordinates that enter through exp.
    """

    names: tuple[str, ...]
    shapes: dict
    offsets: dict
    size: int
    blocks: tuple
    constant: np.ndarray
    exp_columns: np.ndarray

    @property
    def structured(self) -> tuple[SparsePlusRankOne, ...]:
        """Each block of B (:class:`SparsePlusRankOne`: sparse plus rank one from
        :data:`SPARSE_FROM` natural coordinates on, dense below)."""
        return tuple(block for _, _, block in self.blocks)

    @classmethod
    def from_structure(cls, structure: Structure) -> NaturalMap:
        names = tuple(dict.fromkeys(loc.var for pred in structure.predictors.values()
                                    for loc in pred.inputs.values()))
        layout = structure.layout()
        shapes = {n: layout[n][1] for n in names}
        sizes = {n: int(np.prod(shapes[n])) if shapes[n] else 1 for n in names}
        offsets, start = {}, 0
        for n in names:
            offsets[n] = start
            start += sizes[n]
        pick = np.concatenate([np.arange(layout[n][0].start, layout[n][0].stop) for n in names])
        exp_columns = np.zeros(structure.n_free, dtype=bool)
        for rv, transform in structure.model.rvs_to_transforms.items():
            if isinstance(transform, LogTransform):
                exp_columns[structure.slices[structure.model.rvs_to_values[rv].name][0]] = True
        x0 = structure.x0
        phi0 = np.where(exp_columns, np.exp(x0), x0)

        def theta_of(phi):
            return np.where(exp_columns, np.log(np.where(exp_columns, phi, 1.0)), phi)

        n_free = x0.size
        base = structure.value_rows(theta_of(phi0))[0, pick]

        def columns(at: np.ndarray, rows: slice | None = None):
            """B's columns ``at`` (rows ``rows``), a chunk at a time: the natural variables are
            affine in φ, so unit steps in φ give them exactly (up to rounding)."""
            for first in range(0, at.size, UNIT_STEPS):
                cols = at[first:first + UNIT_STEPS]
                steps = np.repeat(phi0[None], cols.size, axis=0)
                steps[np.arange(cols.size), cols] += 1.0
                chunk = (structure.value_rows(theta_of(steps))[:, pick] - base).T
                yield first, chunk if rows is None else chunk[rows]

        every = np.arange(n_free)
        probe = np.abs(np.random.default_rng(0).standard_normal(n_free))
        moved = np.zeros((len(names), n_free), dtype=bool)   # the θ columns each variable depends on
        predicted = base.copy()
        for first, chunk in columns(every):
            predicted += chunk @ probe[first:first + chunk.shape[1]]
            for k, n in enumerate(names):
                moved[k, first:first + chunk.shape[1]] = np.any(chunk[offsets[n]:offsets[n] + sizes[n]] != 0, axis=0)
        at_probe = structure.value_rows(theta_of(phi0 + probe))[0, pick]
        if not np.allclose(at_probe, predicted, rtol=1e-8, atol=1e-8):
            bad = [n for n in names
                   if not np.allclose(at_probe[offsets[n]:offsets[n] + sizes[n]],
                                      predicted[offsets[n]:offsets[n] + sizes[n]], rtol=1e-8, atol=1e-8)]
            raise RuntimeError(f"{structure.framework.label}: the predictors read {bad}, which are not affine "
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
            constant[rows] -= block.times(phi0[cols])
        return cls(names, shapes, offsets, start, tuple(blocks), constant, exp_columns)

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
        J = sp.csr_matrix((jac[r, c], (r, rows[r, c] - rows_k.start)), shape=(rows.shape[0], rows_k.stop - rows_k.start))
        return np.asarray(J @ (block.S if block.u is None and not sp.issparse(block.S) else block.dense()))

    def phi(self, theta: np.ndarray) -> np.ndarray:
        """φ(θ): exp on the coordinates of positive variables, the identity elsewhere."""
        return np.where(self.exp_columns, np.exp(np.where(self.exp_columns, theta, 0.0)), theta)

    def __call__(self, theta: np.ndarray) -> np.ndarray:
        """The flat natural vector at θ."""
        phi = self.phi(theta)
        out = self.constant.copy()
        for (rows, cols, _), B in zip(self.blocks, self.structured):
            out[rows] += B.times(phi[cols])
        return out

    def unflatten(self, flat: np.ndarray) -> dict[str, np.ndarray]:
        """Named arrays of a flat natural vector."""
        return {n: flat[self.offsets[n]:self.offsets[n] + (int(np.prod(self.shapes[n])) if self.shapes[n] else 1)]
                .reshape(self.shapes[n]) for n in self.names}

    def _bt_g(self, grad: np.ndarray, n_free: int) -> np.ndarray:
        out = np.zeros(n_free)
        for (rows, cols, _), B in zip(self.blocks, self.structured):
            out[cols] += B.transpose_times(grad[rows])
        return out

    def pull_back(self, grad: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """∇_θ from a gradient in natural coordinates: φ'(θ) ⊙ Bᵀ g."""
        return self._bt_g(grad, theta.size) * np.where(self.exp_columns, np.exp(theta), 1.0)

    def push_forward(self, V: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Directions in θ (columns of ``V``) as directions in natural coordinates: B φ'(θ) V,
        so that vᵀ ∇_θ f = (B φ'(θ) v)ᵀ ∇_nat f."""
        V = np.asarray(V, dtype=float)
        scaled = V * np.where(self.exp_columns, np.exp(theta), 1.0).reshape(-1, *([1] * (V.ndim - 1)))
        out = np.zeros((self.size, *V.shape[1:]))
        for (rows, cols, _), B in zip(self.blocks, self.structured):
            out[rows] += B.times(scaled[cols])
        return out

    def pull_back_product(self, H, theta: np.ndarray, v: np.ndarray, grad: np.ndarray | None = None) -> np.ndarray:
        """:meth:`pull_back_matrix` times a vector, without forming the matrix: D Bᵀ (H (B D v))
        (+ the curvature of exp), O(non-zeros of H and B) — a Hessian-vector product."""
        d = np.where(self.exp_columns, np.exp(theta), 1.0)
        out = self.pull_back(H @ self.push_forward(v, theta), theta)
        if grad is not None and self.exp_columns.any():
            out += np.where(self.exp_columns, d, 0.0) * self._bt_g(grad, theta.size) * v
        return out

    def pull_back_matrix(self, H, theta: np.ndarray, grad: np.ndarray | None = None,
                         given: Mapping[int, np.ndarray] | None = None) -> np.ndarray:
        """A matrix in natural coordinates (dense, or sparse: then no product costs more than
        O(non-zeros + n²)) as a matrix in θ: D Bᵀ H B D (block by block), with
        D = diag φ'(θ), plus diag(φ''(θ) ⊙ Bᵀ g) when the natural gradient ``grad`` is given
        (a Hessian: the curvature of exp). ``given``: block k ↦ B_kᵀ H_kk B_k (or its diagonal alone,
        1-D: the block's other entries then 0), and block pair
        (j, k) ↦ B_jᵀ H_jk B_k (its transpose for (k, j)), already computed (another way), used
        instead of the products."""
        n_free = theta.size
        out = np.zeros((n_free, n_free))
        H = H.tocsr() if sp.issparse(H) else H
        given = given or {}
        for i, (rows_i, cols_i, B_i) in enumerate(self.blocks):
            for j, (rows_j, cols_j, B_j) in enumerate(self.blocks):
                if not _given(given, i, j):
                    if isinstance(cols_i, slice) and isinstance(cols_j, slice):
                        B_i.sandwich(H[rows_i][:, rows_j], B_j, into=out[cols_i, cols_j])
                    else:
                        product = B_i.sandwich(H[rows_i][:, rows_j], B_j)
                        out[np.ix_(np.arange(n_free)[cols_i], np.arange(n_free)[cols_j])] += product
                elif i == j:
                    at = np.arange(n_free)[cols_i]
                    if given[i].ndim == 1:  # a block given by its diagonal alone (a screened information)
                        out[at, at] += given[i]
                    elif isinstance(cols_i, slice):
                        out[cols_i, cols_i] += given[i]
                    else:
                        out[np.ix_(at, at)] += given[i]
                else:
                    product = given[i, j] if (i, j) in given else given[j, i].T
                    if isinstance(cols_i, slice) and isinstance(cols_j, slice):
                        out[cols_i, cols_j] += product
                    else:
                        out[np.ix_(np.arange(n_free)[cols_i], np.arange(n_free)[cols_j])] += product
        if self.exp_columns.any():
            # D out D with D = 1 but on the few exp columns (a Thurstonian model's k loading diagonals):
            # their rows and columns only, each entry times the same d_i d_j as a whole pass would
            d = np.where(self.exp_columns, np.exp(theta), 1.0)
            exp_at, others = np.flatnonzero(self.exp_columns), np.flatnonzero(~self.exp_columns)
            out[exp_at] *= np.outer(d[exp_at], d)
            out[np.ix_(others, exp_at)] *= d[exp_at]
            if grad is not None:
                out[np.diag_indices(n_free)] += np.where(self.exp_columns, np.exp(theta), 0.0) * self._bt_g(grad, n_free)
        return out

    def sandwiched_columns(self, given: Mapping, n_free: int) -> np.ndarray:
        """The θ coordinates of the blocks with a block pair :meth:`pull_back_matrix` computes as a
        sandwich (not ``given``), whose two sides agree only to rounding: the rest of its matrix
        enters exactly symmetric (a given block pair and its transpose, a given diagonal block
        from a symmetric rank-k update), so only these need averaging (paper model 30: 637 of 2,967)."""
        loose = np.zeros(n_free, dtype=bool)
        index = np.arange(n_free)
        for i, (_, cols_i, _) in enumerate(self.blocks):
            for j, (_, cols_j, _) in enumerate(self.blocks):
                if not _given(given, i, j):
                    loose[index[cols_i]] = loose[index[cols_j]] = True
        return np.flatnonzero(loose)

    def pull_back_diagonal(self, H, theta: np.ndarray, grad: np.ndarray | None = None,
                           given: Mapping[int, np.ndarray] | None = None) -> np.ndarray:
        """The diagonal of :meth:`pull_back_matrix` without forming the matrix (``given``: block
        k ↦ the diagonal of B_kᵀ H_kk B_k, already computed)."""
        n_free = theta.size
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
        if self.exp_columns.any():
            e = np.where(self.exp_columns, np.exp(theta), 0.0)
            out *= np.where(self.exp_columns, e, 1.0) ** 2
            if grad is not None:
                out += e * self._bt_g(grad, n_free)
        return out

    def theta_directions(self, directions: Mapping[str, np.ndarray], theta: np.ndarray) -> np.ndarray:
        """``(len(θ), g)`` directions in θ that move the natural variables along ``directions``
        (variable → ``(g, *shape)``; variables not named stay), to first order at θ: least
        squares on each variable's block, in φ, then through dφ/dθ."""
        g = len(next(iter(directions.values())))
        out = np.zeros((theta.size, g))
        dphi = np.where(self.exp_columns, self.phi(theta), 1.0)
        for (rows, cols, block), name in zip(self.blocks, self.names):
            if name in directions:
                target = np.asarray(directions[name], dtype=float).reshape(g, -1).T
                out[cols] = np.linalg.lstsq(block.dense(), target, rcond=None)[0] / dphi[cols][:, None]
        return out

    @cached_property
    def _pseudo_inverses(self) -> dict[int, np.ndarray]:
        """The pseudo-inverses of blocks of B made so far, by block (:meth:`_pseudo_inverse`; a
        cached property writes the instance's ``__dict__`` directly, which a frozen dataclass
        without slots allows; it is not a field, so never compared)."""
        return {}

    def _pseudo_inverse(self, k: int) -> np.ndarray:
        """The pseudo-inverse of block k of B (the least-squares solve of :meth:`theta_for`), kept:
        a fit's starting point then costs a product, not a least-squares problem (1.2 ms for
        Bradley–Terry's 129 × 128 zero-sum block). Made only for the blocks asked for (a tie
        factor block can have thousands of columns)."""
        if k not in self._pseudo_inverses:
            self._pseudo_inverses[k] = np.linalg.pinv(self.blocks[k][2].dense())
        return self._pseudo_inverses[k]

    def _least_squares(self, k: int, target: np.ndarray) -> np.ndarray:
        """φ minimising ‖B_k φ − target‖: by the kept pseudo-inverse up to
        :data:`PSEUDO_INVERSE_MAX` columns or for a dense block; beyond, for a sparse (plus
        rank-one) block, by LSQR on its products — the zero-sum scores of 10,000 items would
        otherwise need the SVD of a 10,000² matrix (8 minutes and 6 GB for the first fit)."""
        block = self.blocks[k][2]
        if block.S.shape[1] <= PSEUDO_INVERSE_MAX or not sp.issparse(block.S):
            return self._pseudo_inverse(k) @ target
        operator = LinearOperator(block.S.shape, matvec=block.times, rmatvec=block.transpose_times, dtype=float)
        return lsqr(operator, target, atol=1e-15, btol=1e-15, iter_lim=10 * block.S.shape[1])[0]

    def theta_for(self, values: Mapping[str, np.ndarray], theta: np.ndarray) -> np.ndarray:
        """θ with the coordinates of the given natural variables set to reproduce their values
        (least squares on each variable's block, in φ; exact for values in the block's range)."""
        theta = np.array(theta, dtype=float)
        for k, ((rows, cols, block), name) in enumerate(zip(self.blocks, self.names)):
            if name in values:
                target = np.ravel(values[name]) - self.constant[rows]
                phi = self._least_squares(k, target)
                exp = self.exp_columns[cols]
                theta[cols] = np.where(exp, np.log(np.maximum(np.where(exp, phi, 1.0), 1e-300)), phi)
        return theta


@dataclass(frozen=True, eq=False)
class Bound:
    """A compiled structure with one fit's prepared data (immutable, private to the fit).

    What depends on the cells and the structure alone — the cell arrays, the counts, the
    cells' rows in the natural vector, the positions of their matrix blocks, the linear
    predictors' Jacobians, the starting θ — is kept in the data's memo under the structure's
    key (:meth:`shared`) when the data are frozen (:mod:`bayesrank.data.memo`): a refit of the
    same cells finds it made.
    """

    structure: Structure
    data: Comparisons

    def shared(self, name: str, compute: Callable[[], object]) -> object:
        """``compute()``, a fact of these cells and this structure alone: remembered for the data
        with the structure's key (every fit of it on these cells shares it: what it returns nobody
        changes, or it is a cache only the code that fills it changes), or this fit's own when
        no key names the structure (built outside the compiled cache). The memo holds one
        structure's facts per data content at a time (a k_tie = 20 model's block positions take
        tens of MB): fits alternating between two structures make theirs again."""
        key = self.structure.key
        if key is None:
            return compute()
        slot = remembered(self.data, "bound_facts", dict)  # (a dict only this method changes)
        if slot.get("structure") != key:
            slot.clear()
            slot["structure"] = key
        if name not in slot:
            slot[name] = compute()
        return slot[name]

    @cached_property
    def cells(self) -> dict[str, np.ndarray]:
        return self.shared("cells", lambda: self.structure.cast_cells(cell_arrays(self.data)))

    @cached_property
    def counts(self) -> np.ndarray:
        return self.shared("counts", self.data.counts)

    @property
    def n_free(self) -> int:
        return self.structure.n_free

    @property
    def x0(self) -> np.ndarray:
        """Starting θ: the structure's, with the framework's data-dependent starting values
        (a copy: the caller's to change)."""
        def start():
            values = self.structure.framework.initial_values(self.data)
            return self.structure.natural.theta_for(values, self.structure.x0) if values else self.structure.x0.copy()
        return self.shared("x0", start).copy()

    def logp_dlogp(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """Log-likelihood (flat priors) and its gradient at θ."""
        return self.structure.logp_dlogp(theta, self.cells, self.counts)

    def natural(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        """The natural variables at θ."""
        nmap = self.structure.natural
        return nmap.unflatten(nmap(theta))

    @cached_property
    def local_rows(self) -> dict[str, np.ndarray]:
        return self.shared("local_rows", lambda: self.structure.local_rows(self.cells))

    @cached_property
    def matrix_positions(self) -> dict:
        """Flat positions of the cells' blocks in a natural-coordinate matrix, by pair of
        predictors (filled by :class:`~bayesrank.inference.information.CellDerivatives`): they
        depend on the cells, not on θ, and every information of every fit on these cells reuses
        them."""
        return self.shared("matrix_positions", dict)

    @cached_property
    def affine_predictors(self) -> dict:
        """Per linear predictor, its value at zero inputs and its Jacobian on the fit's cells
        (filled by :class:`~bayesrank.inference.information.CellDerivatives`): the same at every
        θ, so each later point — of this fit and of every later fit on these cells — costs a
        product instead of a call of the predictor's kernel."""
        return self.shared("affine_predictors", dict)

    @cached_property
    def block_jacobians(self) -> dict:
        """The cells' gradients in θ on the dense blocks of B that linear predictors read (filled
        by :func:`~bayesrank.inference.information._block_jacobians`): constant, so every
        information of the fit reuses them."""
        return {}

    @cached_property
    def last_at(self) -> dict:
        """This fit's memo of quantities derived at one θ (the last θ asked for, per kind):
        the steps of a fit that all need them at θ̂ — information, existence check, cell
        log-probabilities — compute them once. It lives and dies with the fit."""
        return {}

    def log_probs(self, theta: np.ndarray) -> np.ndarray:
        """``(n_cells, 3)`` log-probabilities at θ."""
        return self.structure.log_probs(self.natural(theta), self.cells)
