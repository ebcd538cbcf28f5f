"""Fit quality from the stored cell probabilities: log-likelihood, NLL, cross-entropies, predicted rates.

``nll`` is the mean negative log-likelihood per comparison with the multinomial constant
dropped — the leaderbot paper's normalisation; for Bradley–Terry with dropped ties it is per
non-tie comparison. MAP: at the MLE; NUTS: the posterior mean of the total log-likelihood.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from bayesrank.results.io import framework_of, model_data_of


def loglik(tree: xr.DataTree) -> float:
    """Total log-likelihood (multinomial constant dropped)."""
    return float(tree["estimate"]["loglik"].values)


def n_comparisons(tree: xr.DataTree) -> float:
    """Comparisons the likelihood is normalised by (the cells it saw)."""
    return float(tree["observed_data"]["counts"].values.sum())


def nll(tree: xr.DataTree) -> float:
    """Mean negative log-likelihood per comparison."""
    return -loglik(tree) / n_comparisons(tree)


def cross_entropies(tree: xr.DataTree, total: bool = False) -> dict[str, float]:
    """Per-outcome cross-entropies H_win, H_loss, H_tie (leaderbot paper eq. D.2).

    ``win`` is "item a of the cell wins" with a the alphabetically first item, as in the
    paper. For MAP fits they sum to ``nll``. With ``total=True`` the (negative) sums are
    returned unnormalised.
    """
    counts = tree["observed_data"]["counts"].values
    lp = tree["estimate"]["cell_log_probs"].values
    with np.errstate(invalid="ignore"):
        terms = np.where(counts > 0, counts * lp, 0.0).sum(axis=0)
    if total:
        return dict(zip(("win", "loss", "tie"), terms))
    return dict(zip(("win", "loss", "tie"), 0.0 - terms / n_comparisons(tree)))  # 0.0 -: no -0.0


def predicted_rates(tree: xr.DataTree) -> pd.DataFrame:
    """Per item: model-predicted win, tie and loss rates over its observed comparisons.

    A framework that counts a tie as half a win for each side (a pseudo-likelihood: Bradley–Terry
    with ``ties="half"``) predicts the share of wins plus half the ties, not wins and ties apart:
    its ``pred_win_rate`` is to be read against ``win_rate + tie_rate / 2``, and its
    ``pred_tie_rate`` is NaN (it predicts no tie rate), not 0."""
    d = model_data_of(tree)
    p = np.exp(tree["estimate"]["cell_log_probs"].values)
    n, m = d.totals, d.n_items
    win = np.bincount(d.a, n * p[:, 0], m) + np.bincount(d.b, n * p[:, 1], m)
    loss = np.bincount(d.a, n * p[:, 1], m) + np.bincount(d.b, n * p[:, 0], m)
    tie = (np.full(m, np.nan) if framework_of(tree).pseudo_likelihood else
           np.bincount(d.a, n * p[:, 2], m) + np.bincount(d.b, n * p[:, 2], m))
    tot = np.bincount(d.a, n, m) + np.bincount(d.b, n, m)
    with np.errstate(invalid="ignore", divide="ignore"):
        return pd.DataFrame({"pred_win_rate": win / tot, "pred_tie_rate": tie / tot, "pred_loss_rate": loss / tot},
                            index=pd.Index(d.items, name="name"))


__all__ = ["cross_entropies", "loglik", "n_comparisons", "nll", "predicted_rates"]
