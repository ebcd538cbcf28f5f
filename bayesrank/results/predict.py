"""Predicted outcome probabilities of any comparison, with intervals, from a fit's DataTree.

The framework is rebuilt from the fit's spec and its per-cell kernels evaluate the stored
estimate (MAP, with delta-method Wald intervals through the stored covariance of θ) or the
stored posterior draws (NUTS, equal-tailed intervals).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import ndtri

from bayesrank.data.comparisons import FIRST_A, FIRST_B, OUTCOMES, Comparisons
from bayesrank.errors import BayesrankError
from bayesrank.inference.information import outcome_jacobian
from bayesrank.inference.nuts import posterior_probabilities
from bayesrank.inference.structure import cell_arrays, structure_of
from bayesrank.results.estimates import check_level, draws, point, point_kind, stored_covariance
from bayesrank.results.io import framework_of, model_data_of

#: Posterior draws used for NUTS predictions (evenly spaced), bounding memory.
MAX_DRAWS = 1000
#: Draw × cell rows evaluated at once when predicting from draws: every row holds the local values
#: its cell reads (80 numbers and their intermediates for a k_tie = 20 model), so memory grows
#: with draws × cells and is bounded by evaluating this many rows at a time.
ROWS_AT_ONCE = 100_000


def predict(tree: xr.DataTree, item_a, item_b, *, judge=None, first=None, covariates=None, contrasts=None,
            level: float = 0.95, max_draws: int = MAX_DRAWS) -> pd.DataFrame:
    """Predicted outcome probabilities for any pairs, compared or not, with intervals.

    Parameters
    ----------
    tree : DataTree
        A fit.
    item_a, item_b : str or sequence of str
        Item names.
    judge : str or sequence of str, optional
        Judge names, for fits with judges.
    first : {"a", "b"} or sequence, optional
        Which item is shown first, for fits with positions (default "a").
    covariates : mapping of str to float or sequence, optional
        Covariate values of each comparison, for fits with covariates (default 0: for a
        standardised covariate, its mean).
    contrasts : mapping of str to float or sequence, optional
        Style contrasts (a minus b) of each comparison, for style-controlled fits (default 0:
        both answers alike in style — the style-controlled prediction).
    level : float
        Interval level: Wald by the delta method (MAP, clipped to [0, 1]) or equal-tailed
        posterior intervals (NUTS, over at most ``max_draws`` draws).

    Returns
    -------
    DataFrame
        ``item_a, item_b[, judge]``, ``identified`` (whether the data determine the pair's
        probabilities, below) and for each outcome ``o`` in ``win_a, win_b, tie``: ``p_o,
        p_o_lower, p_o_upper``. ``attrs["note"]`` says why when some pair is not identified.

    Notes
    -----
    A factored tie threshold (``k_tie`` > 0) of a pair never compared may not be identified by
    the data: with many tie factors (the leaderbot paper's k_tie = 20 on arena-2024) the compared
    pairs leave directions of the tie factors flat, and a pair whose row of
    ``framework.tie_threshold_map(data, a, b)`` is not a combination of the compared pairs' rows
    has a threshold the likelihood leaves free (:meth:`Framework.identified`): its three
    probabilities and their intervals are NaN (MAP and NUTS alike: the fit fixed those directions
    at its minimum-norm choice, so a number would be that choice's, not the data's), and its
    ``identified`` is False (``models/arena-2024/table-d1.md`` counts such pairs).
    """
    check_level(level)
    framework, data = framework_of(tree), model_data_of(tree)
    structure = structure_of(framework, data, "flat")
    a_names, b_names = np.broadcast_arrays(np.atleast_1d(item_a).astype(object), np.atleast_1d(item_b).astype(object))
    cells = {"item_a": _indices(a_names, data.items, "item"), "item_b": _indices(b_names, data.items, "item")}
    frame = pd.DataFrame({"item_a": a_names, "item_b": b_names})
    n = len(a_names)
    if data.judges is not None:
        if judge is None:
            raise BayesrankError(f"this fit has judges; pass judge= (one of {list(data.judges)}).")
        judges = np.broadcast_to(np.atleast_1d(judge).astype(object), (n,))
        cells["judge_index"] = _indices(judges, data.judges, "judge")
        frame["judge"] = judges
    if data.first is not None:
        pos = np.broadcast_to(np.atleast_1d("a" if first is None else first).astype(object), (n,))
        cells["first"] = np.array([FIRST_A if str(p) in ("a", "0") else FIRST_B for p in pos])
    for key, names, given in (("covariates", data.covariate_names, covariates),
                              ("contrasts", data.contrast_names, contrasts)):
        if names:
            given = dict(given or {})
            unknown = set(given) - set(names)
            if unknown:
                raise BayesrankError(f"unknown {key[:-1]}(s) {sorted(unknown)}; the fit has {list(names)}.")
            cells[key] = np.column_stack([np.broadcast_to(np.asarray(given.get(c, 0.0), float), (n,))
                                          for c in names])
    alpha = (1 - level) / 2
    names = structure.natural.names
    cov = stored_covariance(tree, "theta_cov")
    if cov is not None:
        probs, jac = outcome_jacobian(structure, tree["estimate"]["theta"].values, cells)
        err = np.sqrt(np.clip(np.einsum("nop,pq,noq->no", jac, cov, jac), 0, None))
        z = ndtri(1 - alpha)
        lower, upper = np.clip(probs - z * err, 0, 1), np.clip(probs + z * err, 0, 1)
    else:
        sample = {v: draws(tree, v) for v in names}
        total = len(next(iter(sample.values())))
        keep = np.linspace(0, total - 1, min(max_draws, total)).astype(int)
        kept = {v: x[keep] for v, x in sample.items()}
        probs, lower, upper = (np.empty((n, 3)) for _ in range(3))
        step = max(1, ROWS_AT_ONCE // len(keep))  # cells at a time: memory bounded whatever their number
        for start in range(0, n, step):
            part = slice(start, start + step)
            p = np.exp(structure.log_probs(kept, {key: value[part] for key, value in cells.items()}, draws=True))
            probs[part] = p.mean(axis=0)
            lower[part], upper[part] = np.quantile(p, [alpha, 1 - alpha], axis=0)
        if point_kind(tree) == "mle":  # bootstrap replicates: the prediction itself is at the MLE
            probs = np.exp(structure.log_probs({v: point(tree, v) for v in names}, cells))
    if np.isnan(point(tree, "score")).any():  # no estimate (the MLE does not exist): no prediction
        probs = lower = upper = np.full_like(probs, np.nan)
    identified = framework.identified(data, cells)
    if not identified.all():  # never reported as a number: any value is as likely as the fit's
        probs, lower, upper = (np.where(identified[:, None], x, np.nan) for x in (probs, lower, upper))
        frame.attrs["note"] = (
            f"{int(np.sum(~identified))} of {n} pairs were never compared and the compared pairs do not determine "
            f"their tie threshold ({framework.label}: the likelihood is flat along a direction that moves it), so "
            "their probabilities are NaN; a model with fewer tie factors (k_tie) determines more pairs.")
    frame["identified"] = identified
    for k, outcome in enumerate(OUTCOMES):
        frame[f"p_{outcome}"] = probs[:, k]
        frame[f"p_{outcome}_lower"] = lower[:, k]
        frame[f"p_{outcome}_upper"] = upper[:, k]
    return frame


def _indices(names, known, what) -> np.ndarray:
    lookup = {n: k for k, n in enumerate(known)}
    bad = [n for n in names if n not in lookup]
    if bad:
        shown = ", ".join(list(known)[:10]) + (", …" if len(known) > 10 else "")
        raise BayesrankError(f"unknown {what} {bad[0]!r}; known {what}s: {shown}.")
    return np.array([lookup[n] for n in names], dtype=np.int64)


def _in_fit_order(cells: Comparisons, data: Comparisons) -> dict:
    """Per-cell arrays of ``cells`` with items and judges indexed as in the fit (matched by name:
    a test split or a subset may list them in another order)."""
    arrays = cell_arrays(cells)
    items = np.asarray(cells.items, dtype=object)
    arrays["item_a"] = _indices(items[cells.a], data.items, "item")
    arrays["item_b"] = _indices(items[cells.b], data.items, "item")
    if cells.judge is not None and data.judges is not None:
        arrays["judge_index"] = _indices(np.asarray(cells.judges, dtype=object)[cells.judge], data.judges, "judge")
    return arrays


def cell_log_probs(tree: xr.DataTree, cells) -> np.ndarray:
    """``(n, 3)`` log-probabilities of any cells of the fit's items (a :class:`Comparisons`,
    whose items and judges are matched to the fit's by name, or per-cell arrays in the fit's
    indexing): MAP — at the estimate; NUTS — log of the posterior-mean probabilities."""
    framework, data = framework_of(tree), model_data_of(tree)
    structure = structure_of(framework, data, "flat")
    if isinstance(cells, Comparisons):
        cells = _in_fit_order(cells, data)
    if point_kind(tree) == "mle":
        return structure.log_probs({v: point(tree, v) for v in structure.natural.names}, cells)
    probs = posterior_probabilities(framework, data, tree["posterior"].to_dataset(), cells)
    with np.errstate(divide="ignore"):
        return np.log(probs)


__all__ = ["MAX_DRAWS", "ROWS_AT_ONCE", "cell_log_probs", "predict"]
