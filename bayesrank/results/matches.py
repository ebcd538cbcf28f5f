"""What a match between any two items would give: P(i wins), P(tie), P(j wins) and the
expected score P(i wins) + ½ P(tie), for every ordered pair of items.

The probabilities come from the framework's own per-cell kernels
(:func:`bayesrank.results.predict.cell_log_probs`: at the MLE for MAP fits, averaged over the
posterior for NUTS fits). For fits with judges they are averaged over the judges (each judge
counts once), and for fits with positions over both presentation orders.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import xarray as xr

from bayesrank.results.io import model_data_of
from bayesrank.results.leaderboard import scores
from bayesrank.results.predict import cell_log_probs


def match_probabilities(tree: xr.DataTree, top: int | None = None) -> dict[str, pd.DataFrame]:
    """Outcome probabilities of a match for every ordered pair of (the ``top``) items.

    Returns
    -------
    dict of DataFrame
        ``win`` (row beats column), ``tie``, ``loss`` and ``expected`` (win + ½ tie), each
        items × items in leaderboard order, NaN on the diagonal.
    """
    data = model_data_of(tree)
    order = list(scores(tree).sort_values(ascending=False, kind="stable").index)[: top or None]
    index = np.array([data.items.index(n) for n in order])
    m = index.size
    a, b = (x.ravel() for x in np.meshgrid(index, index, indexing="ij"))
    keep = a != b
    a, b = a[keep], b[keep]
    judges = range(data.n_judges) if data.judge is not None else [None]
    firsts = (0, 1) if data.first is not None else (None,)
    probs, count = np.zeros((a.size, 3)), 0
    for judge, first in itertools.product(judges, firsts):
        cells = {"item_a": a, "item_b": b}
        if judge is not None:
            cells["judge_index"] = np.full(a.size, judge)
        if first is not None:
            cells["first"] = np.full(a.size, first)
        if data.covariates is not None:
            cells["covariates"] = np.zeros((a.size, data.covariates.shape[1]))
        probs += np.exp(cell_log_probs(tree, cells))
        count += 1
    probs /= count
    out = {}
    for name, column in (("win", probs[:, 0]), ("loss", probs[:, 1]), ("tie", probs[:, 2]),
                         ("expected", probs[:, 0] + 0.5 * probs[:, 2])):
        matrix = np.full((m, m), np.nan)
        matrix[~np.eye(m, dtype=bool)] = column
        out[name] = pd.DataFrame(matrix, index=pd.Index(order, name="name"), columns=order)
    return out


__all__ = ["match_probabilities"]
