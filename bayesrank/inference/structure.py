"""A framework's model compiled once per shape of data, and bound to each fit's data.

:class:`Structure` is everything about a model that does not depend on the data values: the
PyMC model (built once, as a template), the layout of its free coordinates θ, the map from θ
to every model variable, the affine map to the variables the predictors read
(:class:`~bayesrank.inference.natural.NaturalMap`) and the per-cell kernels of its predictors
and link. Its compiled functions take the cell data as *inputs*, never as state, so a structure
is immutable once built and two fits of one shape share it without sharing anything that could
change a number. :func:`structure_of` keeps the most recently used ones (refits, bootstraps and
cross-validations of data of one shape then skip building and compiling).

:class:`Bound` pairs a structure with one fit's prepared data. It is private to the fit.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pytensor.tensor as pt
from pytensor.graph.replace import graph_replace, vectorize_graph
from pytensor.graph.traversal import ancestors

from bayesrank.data.comparisons import Comparisons
from bayesrank.inference.backend import function
from bayesrank.inference.kernels import link_kernel, predictor_kernel
from bayesrank.inference.natural import NaturalMap
from bayesrank.model.framework import CELL_DATA, Framework
from bayesrank.model.links import LOG_CONCAVE

#: Structures kept at once (least recently used dropped first).
CACHE_SIZE = 32
_CACHE: OrderedDict[tuple, Structure] = OrderedDict()
#: Rows of θ evaluated per call of the batched value function.
BATCH_ROWS = 512


def structure_key(framework: Framework, data: Comparisons, prior: str) -> tuple:
    """What a structure depends on besides the data values."""
    return (
        framework.spec_json(),
        prior,
        data.n_items,
        data.n_judges,
        data.judge is not None,
        data.first is not None,
        len(data.periods) if data.period is not None else None,
        tuple(data.covariate_names),
        framework.structure_key(data),
        tuple(data.contrast_names),
    )


def structure_of(framework: Framework, data: Comparisons, prior: str = "flat") -> Structure:
    """The structure of ``framework`` for data shaped like ``data`` (prepared).

    Parameters
    ----------
    framework : Framework
    data : Comparisons
        Prepared data; only its shape (items, judges, per-cell fields, and what
        :meth:`~bayesrank.model.framework.Framework.structure_key` names) is used.
    prior : {"flat", "weak"}
    """
    key = structure_key(framework, data, prior)
    found = _CACHE.get(key)
    if found is None:
        found = _CACHE[key] = Structure(framework, data, prior)
        while len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return found


def cell_arrays(data: Comparisons) -> dict[str, np.ndarray]:
    """The per-cell data arrays of :data:`~bayesrank.model.framework.CELL_DATA` that ``data`` has."""
    arrays = {"item_a": data.a, "item_b": data.b, "judge_index": data.judge, "first": data.first,
              "period_index": data.period, "covariates": data.covariates, "contrasts": data.contrasts}
    return {name: arrays[name] for name in CELL_DATA if arrays[name] is not None}


class Structure:
    """A framework's model compiled for one shape of data (see the module docstring).

    Attributes
    ----------
    framework : Framework
    prior : {"flat", "weak"}
    model : pm.Model
        The template model (its data containers hold the data it was built with; every
        compiled function takes the cell data as inputs instead).
    x0 : ndarray
        The data-independent starting point of θ.
    slices : dict
        Free coordinate name → (slice of θ, shape).
    """

    def __init__(self, framework: Framework, data: Comparisons, prior: str):
        self.framework = framework
        self.prior = prior
        self.model, _ = framework.build(data, prior)
        self.cell_names = [name for name in CELL_DATA if name in self.model.named_vars]
        point = self.model.initial_point()
        self.value_vars = list(self.model.value_vars)
        self.slices, start = {}, 0
        for v in self.value_vars:
            shape = point[v.name].shape
            size = int(np.prod(shape))
            self.slices[v.name] = (slice(start, start + size), shape)
            start += size
        self.x0 = np.concatenate([np.ravel(point[v.name]) for v in self.value_vars]).astype(float)
        self.variable_names = [v.name for v in (*self.model.free_RVs, *self.model.deterministics)]

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

    # ------------------------------------------------------------------ θ ↦ model variables
    def _values_graph(self, names: tuple[str, ...]):
        """Rows of θ ↦ the variables ``names``, flattened and concatenated: ``(rows, flat rows,
        per-variable outputs at one θ, that θ)``."""
        theta = pt.vector("theta")
        parts = [theta[sl].reshape(shape).astype(v.dtype)
                 for v, (sl, shape) in ((v, self.slices[v.name]) for v in self.value_vars)]
        outputs = self.model.replace_rvs_by_values([self.model[n] for n in names])
        outputs = graph_replace(outputs, dict(zip(self.value_vars, parts)), strict=False)
        flat = pt.concatenate([pt.flatten(o) for o in outputs])
        batch = pt.matrix("thetas")
        return batch, vectorize_graph(flat, {theta: batch}), outputs, theta

    @cached_property
    def _values_fns(self) -> dict:
        """The compiled maps of :meth:`_values_graph` made so far, by set of names."""
        return {}

    def _values_fn(self, names: tuple[str, ...]):
        """The compiled map of :meth:`_values_graph` for ``names``."""
        if names not in self._values_fns:
            batch, flat, _, _ = self._values_graph(names)
            self._values_fns[names] = function([batch], flat)
        return self._values_fns[names]

    @cached_property
    def shapes(self) -> dict[str, tuple]:
        """Shape of every model variable."""
        _, _, outputs, theta = self._values_graph(tuple(self.variable_names))
        shape_fn = function([theta], [pt.as_tensor(o.shape) for o in outputs], on_unused_input="ignore")
        return {n: tuple(int(s) for s in shape) for n, shape in zip(self.variable_names, shape_fn(self.x0))}

    def layout(self) -> dict[str, tuple[slice, tuple]]:
        """Where each variable sits in a row of :meth:`value_rows`."""
        out, start = {}, 0
        for name in self.variable_names:
            shape = self.shapes[name]
            size = int(np.prod(shape)) if shape else 1
            out[name] = (slice(start, start + size), shape)
            start += size
        return out

    def value_rows(self, thetas: np.ndarray, names: Iterable[str] | None = None) -> np.ndarray:
        """Flattened values of every model variable for each row of θ, ``(rows, total size)``;
        with ``names``, only those variables' entries are computed (the others 0): a function of
        those alone, so that a few non-linear variables do not pay for a large linear one."""
        thetas = np.atleast_2d(np.asarray(thetas, dtype=float))
        wanted = tuple(self.variable_names) if names is None else \
            tuple(n for n in self.variable_names if n in set(names))
        layout = self.layout()
        if wanted == tuple(self.variable_names):
            fn = self._values_fn(wanted)
            return np.concatenate([fn(thetas[i:i + BATCH_ROWS]) for i in range(0, len(thetas), BATCH_ROWS)])
        out = np.zeros((len(thetas), sum(sl.stop - sl.start for sl, _ in layout.values())))
        if not wanted:
            return out
        fn = self._values_fn(wanted)
        columns = np.concatenate([np.arange(layout[n][0].start, layout[n][0].stop) for n in wanted])
        for i in range(0, len(thetas), BATCH_ROWS):
            out[i:i + BATCH_ROWS, columns] = fn(thetas[i:i + BATCH_ROWS])
        return out

    def values(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        """Every model variable (constrained scale) at θ."""
        layout = self.layout()
        theta = np.asarray(theta, dtype=float)
        if set(layout) <= set(self.natural.names):  # every variable is natural: no call of the value map
            natural = self.natural.unflatten(self.natural(theta))
            return {name: natural[name] for name in layout}
        row = self.value_rows(theta)[0]
        return {name: row[sl].reshape(shape) for name, (sl, shape) in layout.items()}

    def theta_columns(self, names: Iterable[str]) -> np.ndarray:
        """The coordinates of θ the variables ``names`` are functions of (those of every free
        variable in their graphs), as sorted indices: a variable's derivatives vanish along the
        others."""
        outputs = self.model.replace_rvs_by_values([self.model[n] for n in names])
        read = set(ancestors(outputs))
        index = np.arange(self.n_free)
        return np.concatenate([index[self.slices[v.name][0]] for v in self.value_vars if v in read] or [index[:0]])

    # ------------------------------------------------------------------ natural coordinates, kernels
    @cached_property
    def natural(self) -> NaturalMap:
        """The model variables the predictors read, as an affine map of θ."""
        names = tuple(dict.fromkeys(loc.var for pred in self.predictors.values() for loc in pred.inputs.values()))
        return NaturalMap.measure(names, self.layout(), self.x0, self.value_rows, self.framework.label)

    @cached_property
    def predictors(self) -> dict:
        return self.framework.predictors(_TemplateData(self.model))

    @cached_property
    def kernels(self) -> dict:
        """Per-cell kernels of the framework's predictors (and its link, under ``"link"``)."""
        shapes, cell_ndims = self.shapes, {n: self.model[n].ndim for n in self.cell_names}
        out = {}
        for name, pred in self.predictors.items():
            local = {}
            for key, loc in {**pred.inputs, **pred.constants}.items():
                shape = shapes[loc.var] if loc.var in shapes else self.model[loc.var].get_value().shape
                local[key] = shape[_gathered_axes(loc.by):]
            out[name] = predictor_kernel(pred, local, cell_ndims, self.cell_dtypes())
        out["link"] = link_kernel(self.framework.link)
        return out

    @cached_property
    def concave(self) -> bool:
        """The log-likelihood (flat priors) is concave in θ: the link is log-concave
        (:data:`~bayesrank.model.links.LOG_CONCAVE`) and every predictor is linear in the
        natural variables, which are affine in θ."""
        return self.framework.link in LOG_CONCAVE and all(p.linear for p in self.predictors.values())

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
                    axes = _gathered_axes(loc.by)
                    width = int(np.prod(shape[axes:])) if len(shape) > axes else 1
                    index = _flat_index(shape[:axes], cells, loc.by)
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

    def bind(self, data: Comparisons) -> Bound:
        """The structure bound to one fit's (prepared) data."""
        return Bound(self, data)


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
        self.period = np.empty(0, dtype=np.int64) if "period_index" in names else None
        self.periods = tuple(model.coords.get("period", ()))


def _gathered_axes(by) -> int:
    """How many leading axes of a variable a :class:`~bayesrank.model.framework.Local`'s ``by`` gathers."""
    return 0 if by is None else len(by) if isinstance(by, tuple) else 1


def _flat_index(shape: tuple, cells, by) -> np.ndarray:
    """The cells' row-major positions in the gathered leading axes ``shape`` of a variable."""
    names = by if isinstance(by, tuple) else (by,)
    return np.ravel_multi_index(tuple(np.asarray(cells[name], dtype=np.int64) for name in names), shape)


def _gather(value: np.ndarray, cells, by, n) -> np.ndarray:
    """``(k, *shape)`` draws of a variable as k × n cells see them, flattened to ``(k·n, …)``."""
    k = value.shape[0]
    if by is not None:
        axes = _gathered_axes(by)
        flat = value.reshape(k, -1, *value.shape[1 + axes:])
        out = flat[:, _flat_index(value.shape[1:1 + axes], cells, by)]
    else:
        out = np.broadcast_to(value[:, None], (k, n, *value.shape[1:]))
    return out.reshape(k * n, *out.shape[2:])


@dataclass(frozen=True, eq=False)
class Bound:
    """A structure with one fit's prepared data (private to the fit).

    What depends on the cells and the structure alone — the cell arrays, the counts, the
    cells' rows in the natural vector, the positions of their matrix blocks, the linear
    predictors' Jacobians — is made once per fit, on first use.
    """

    structure: Structure
    data: Comparisons

    @cached_property
    def cells(self) -> dict[str, np.ndarray]:
        return self.structure.cast_cells(cell_arrays(self.data))

    @cached_property
    def counts(self) -> np.ndarray:
        return self.data.counts()

    @property
    def n_free(self) -> int:
        return self.structure.n_free

    @cached_property
    def _start(self) -> np.ndarray:
        values = self.structure.framework.initial_values(self.data)
        start = self.structure.natural.theta_for(values, self.structure.x0) if values else self.structure.x0.copy()
        start.flags.writeable = False
        return start

    @property
    def x0(self) -> np.ndarray:
        """Starting θ: the structure's, with the framework's data-dependent starting values
        (a copy: the caller's to change)."""
        return self._start.copy()

    def natural(self, theta: np.ndarray) -> dict[str, np.ndarray]:
        """The natural variables at θ."""
        nmap = self.structure.natural
        return nmap.unflatten(nmap(np.asarray(theta, dtype=float)))

    @cached_property
    def local_rows(self) -> dict[str, np.ndarray]:
        return self.structure.local_rows(self.cells)

    @cached_property
    def matrix_positions(self) -> dict:
        """Flat positions of the cells' blocks in a natural-coordinate matrix, by pair of
        predictors (filled by :class:`~bayesrank.inference.information.CellDerivatives`): they
        depend on the cells, not on θ."""
        return {}

    @cached_property
    def affine_predictors(self) -> dict:
        """Per linear predictor, its value at zero inputs and its Jacobian on the fit's cells
        (filled by :class:`~bayesrank.inference.information.CellDerivatives`): the same at every
        θ, so each later point costs a product instead of a call of the predictor's kernel."""
        return {}

    @cached_property
    def block_jacobians(self) -> dict:
        """The cells' gradients in θ on the dense blocks of B that linear predictors read (filled
        by :mod:`~bayesrank.inference.information`): constant, so every information of the fit
        reuses them."""
        return {}

    @cached_property
    def last_at(self) -> dict:
        """The cell derivatives at the last θ asked for (:meth:`CellDerivatives.at`): the
        objective, its gradient and the information at one point share one pass over the cells."""
        return {}

    def log_probs(self, theta: np.ndarray) -> np.ndarray:
        """``(n_cells, 3)`` log-probabilities at θ."""
        return self.structure.log_probs(self.natural(theta), self.cells)


__all__ = ["Bound", "Structure", "cell_arrays", "structure_of"]
