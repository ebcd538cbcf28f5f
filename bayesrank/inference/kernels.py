"""Per-cell kernels: a framework's predictors and link, compiled with their exact derivatives.

The log-likelihood is ℓ = Σ_c L(link; p_c(u_c), n_c): per cell c a few predictors p (the
linear predictor d, the raw tie threshold h) of a few *local* values u_c (model variables
gathered at the cell's items or judge; :class:`~bayesrank.model.framework.Local`). Because
the cells are independent given their local values, the derivative of a sum over cells with
respect to one cell's inputs is that cell's own derivative. So one backward pass through
Σ_c p_c gives every cell's gradient ∂p_c/∂u_c, and one pass per local coordinate gives every
cell's Hessian — exact automatic derivatives of the very functions that build the PyMC
model, in a few vectorised calls, whatever the number of cells.

Two kinds of kernels:

:func:`link_kernel`
    (d[, h], counts) ↦ log-probabilities, the cell log-likelihood and its first and second
    derivatives in the predictors, and the derivatives of every outcome's log-probability
    (for the expected information).
:func:`predictor_kernel`
    (local values, constants, cell data) ↦ the predictor, its gradient in the local values
    and, for non-linear predictors, the weighted second derivatives Σ_c g_c ∇²p_c.

Each function is compiled on first use in the one mode of :mod:`bayesrank.inference.backend`;
a link's kernel is shared by every model of that link (the same function gives the same
numbers, whoever compiled it first).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, cached_property

import numpy as np
import pytensor.tensor as pt

from bayesrank.inference.backend import function
from bayesrank.model.framework import Predictor
from bayesrank.model.links import PREDICTORS, cell_loglik, log_probs


class LinkKernel:
    """Per-cell functions of one link (see :func:`link_kernel`), each compiled on first use."""

    def __init__(self, link: str):
        self.link = link

    @cached_property
    def _symbols(self):
        d, h = pt.dvector("d"), pt.dvector("h")
        return d, h, log_probs(self.link, d, h if "h" in PREDICTORS[self.link] else None)

    def _compile(self, graph):
        inputs, outputs = graph()
        return function(inputs, outputs, on_unused_input="ignore")

    @cached_property
    def probs_fn(self):
        def graph():
            d, h, lp = self._symbols
            return [d, h], lp
        return self._compile(graph)

    @cached_property
    def derivatives_fn(self):
        return self._compile(self._derivatives_graph)

    @cached_property
    def outcome_fn(self):
        """∂ log P_o / ∂p per outcome (the −∞ tie column of Bradley–Terry gives NaN, masked later)."""
        return self._compile(self._outcome_graph)

    def _derivatives_graph(self):
        d, h, lp = self._symbols
        counts = pt.dmatrix("counts")
        preds = [d, h][: self.n_predictors]
        ll = cell_loglik(counts, lp)
        grads = pt.grad(ll.sum(), preds)
        # Σ_c of a per-cell derivative differentiated again gives every cell's second derivative
        hess = pt.stack([pt.stack(pt.grad(g.sum(), preds), axis=-1) for g in grads], axis=-2)
        return [d, h, counts], [lp, ll, pt.stack(grads, axis=-1), hess]

    def _outcome_graph(self):
        d, h, lp = self._symbols
        preds = [d, h][: self.n_predictors]
        outcome = pt.stack([pt.stack(pt.grad(lp[:, o].sum(), preds), axis=-1) for o in range(3)], axis=-2)
        return [d, h], [lp, outcome]

    @property
    def n_predictors(self) -> int:
        return len(PREDICTORS[self.link])

    def _args(self, pred: Mapping[str, np.ndarray]):
        d = np.asarray(pred["d"], dtype=float)
        h = np.asarray(pred["h"], dtype=float) if "h" in pred else np.zeros_like(d)
        return d, h

    def log_probs(self, pred: Mapping[str, np.ndarray]) -> np.ndarray:
        """``(n, 3)`` log P(a wins), log P(b wins), log P(tie)."""
        return self.probs_fn(*self._args(pred))

    def derivatives(self, pred: Mapping[str, np.ndarray], counts: np.ndarray) -> dict[str, np.ndarray]:
        """Per-cell derivatives of the cell log-likelihood L_c in the predictors.

        Returns
        -------
        dict
            ``log_probs`` (n, 3); ``loglik`` (n,); ``grad`` (n, P) = ∂L_c/∂p; ``hess``
            (n, P, P) = ∂²L_c/∂p². P = 1 (d) for Bradley–Terry, 2 (d, h) for the tie links.
        """
        lp, ll, grad, hess = self.derivatives_fn(*self._args(pred), np.asarray(counts, dtype=float))
        return {"log_probs": lp, "loglik": ll, "grad": grad, "hess": hess}

    def outcome_gradients(self, pred: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Log-probabilities ``(n, 3)`` and ∂ log P_o/∂p ``(n, 3, P)`` (zero where P_o = 0)."""
        lp, ograd = self.outcome_fn(*self._args(pred))
        return lp, np.where(np.isfinite(lp)[..., None], np.nan_to_num(ograd), 0.0)


@cache
def link_kernel(link: str) -> LinkKernel:
    """The per-cell kernel of an outcome link (one per link for the process)."""
    if link not in PREDICTORS:
        raise ValueError(f"unknown link {link!r}")
    return LinkKernel(link)


class PredictorKernel:
    """Per-cell functions of one predictor (see :func:`predictor_kernel`), compiled on first use.

    Attributes
    ----------
    keys : tuple of str
        The predictor's local inputs, in the order of the flattened local vector.
    sizes : tuple of int
        Entries of each input per cell.
    """

    def __init__(self, predictor: Predictor, shapes, cell_ndims, cell_dtypes):
        self.predictor = predictor
        self.keys = tuple(predictor.inputs)
        self.constant_keys = tuple(predictor.constants)
        self.cell_keys = tuple(cell_ndims)
        self.sizes = tuple(int(np.prod(shapes[k])) for k in self.keys)
        self._shapes = dict(shapes)
        self._cell_ndims, self._cell_dtypes = dict(cell_ndims), dict(cell_dtypes)

    @cached_property
    def _symbols(self):
        u = {k: pt.tensor(k, dtype="float64", shape=(None,) * (1 + len(self._shapes[k])))
             for k in (*self.keys, *self.constant_keys)}
        cells = {k: pt.tensor(k, dtype=self._cell_dtypes[k], shape=(None,) * self._cell_ndims[k])
                 for k in self.cell_keys}
        inputs = [u[k] for k in self.keys] + [u[k] for k in self.constant_keys] + [cells[k] for k in self.cell_keys]
        return u, inputs, self.predictor.fn(u, cells)

    def _flat_grad(self, scalar):
        u, _, value = self._symbols
        n = value.shape[0]
        grads = pt.grad(scalar, [u[k] for k in self.keys], disconnected_inputs="ignore")
        return pt.concatenate([g.reshape((n, -1)) for g in grads], axis=1)

    def _compile(self, graph):
        inputs, outputs = graph()
        return function(inputs, outputs, on_unused_input="ignore")

    @cached_property
    def value_fn(self):
        def graph():
            _, inputs, value = self._symbols
            return inputs, value
        return self._compile(graph)

    @cached_property
    def jacobian_fn(self):
        def graph():
            _, inputs, value = self._symbols
            return inputs, [value, self._flat_grad(value.sum())]
        return self._compile(graph)

    @cached_property
    def second_fn(self):
        if self.predictor.linear:
            return None

        def graph():
            _, inputs, value = self._symbols
            weight = pt.dvector("weight")
            weighted = self._flat_grad((weight * value).sum())
            rows = [self._flat_grad(weighted[:, j].sum()) for j in range(self.width)]
            return [*inputs, weight], pt.stack(rows, axis=-1)
        return self._compile(graph)

    @property
    def width(self) -> int:
        """Length p of the flattened local vector of one cell."""
        return int(sum(self.sizes))

    def _args(self, u, cells):
        return ([np.asarray(u[k], dtype=float) for k in self.keys]
                + [np.asarray(u[k], dtype=float) for k in self.constant_keys]
                + [cells[k] for k in self.cell_keys])

    def value(self, u: Mapping, cells: Mapping) -> np.ndarray:
        """The predictor per cell, ``(n,)``."""
        return self.value_fn(*self._args(u, cells))

    def jacobian(self, u: Mapping, cells: Mapping) -> tuple[np.ndarray, np.ndarray]:
        """The predictor ``(n,)`` and its gradient in the flattened local values ``(n, p)``."""
        value, jac = self.jacobian_fn(*self._args(u, cells))
        return value, jac

    def second(self, u: Mapping, cells: Mapping, weight: np.ndarray) -> np.ndarray | None:
        """Σ-weighted second derivatives ``weight_c ∇²p_c`` per cell ``(n, p, p)``; None for a
        linear predictor."""
        if self.second_fn is None:
            return None
        return self.second_fn(*self._args(u, cells), np.asarray(weight, dtype=float))


def predictor_kernel(predictor: Predictor, shapes: Mapping[str, tuple], cell_ndims: Mapping[str, int],
                     cell_dtypes: Mapping[str, str]) -> PredictorKernel:
    """One predictor's per-cell kernel (compiled on first use).

    Parameters
    ----------
    predictor : Predictor
    shapes : mapping
        Per input and constant key: the shape one cell sees (the variable's shape without the
        gathered axis, or its whole shape for an ungathered variable).
    cell_ndims, cell_dtypes : mapping
        Dimensions and dtypes of the per-cell data arrays (``item_a``, ``first``, …).
    """
    return PredictorKernel(predictor, shapes, cell_ndims, cell_dtypes)


__all__ = ["LinkKernel", "PredictorKernel", "link_kernel", "predictor_kernel"]
