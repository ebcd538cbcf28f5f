"""Model comparison by leave-one-out cross-validation that a user can trust.

* :func:`loo` — PSIS-LOO per cell of a NUTS fit (arviz-stats), with the Pareto k̂ diagnostic
  in words; where k̂ > 0.7 (PSIS cannot approximate leaving that cell out), the cells are
  refitted exactly (``refit="cells"``: one NUTS refit per bad cell, arviz-stats' ``reloo``) or
  the whole ELPD is computed by exact K-fold cross-validation (``refit="kfold"``: K NUTS
  refits). ``refit="auto"`` refits the bad cells when there are at most ``max_refits`` of
  them and uses K-fold otherwise; ``refit=None`` keeps PSIS and says which cells to distrust.
* :func:`compare` — several fits of the *same observations*: ELPD, its standard error,
  differences to the best with their standard errors, and weights. Fits whose likelihoods
  score different observations (Bradley–Terry with ties counted as halves against a tie
  model, ties dropped against ties kept, different data) are refused with the reason.

One LOO "point" is one cell: a (pair, judge, position, covariates) combination with all its
comparisons — for pair-aggregated data such as arena-2024, leaving out a whole pair. ArviZ's
own warnings are caught and said in our words (``Loo.warnings``).
"""

from __future__ import annotations

import warnings as _warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import arviz_stats as azs
import numpy as np
import pandas as pd
import xarray as xr
from arviz_stats.loo import SamplingWrapper
from scipy.optimize import minimize
from scipy.special import logsumexp

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import BayesrankError, options_checked
from bayesrank.inference.structure import cell_arrays, structure_of
from bayesrank.model.framework import OBSERVED, Framework
from bayesrank.results.fit import Fit, fit as fit_framework
from bayesrank.runtime import progress

#: Pareto k̂ above which PSIS-LOO is not trusted for a cell (Vehtari et al. 2024).
K_THRESHOLD = 0.7
#: Refit the bad cells one by one up to this many; above, exact K-fold.
MAX_REFITS = 10
#: Folds of the exact K-fold fallback.
FOLDS = 10


@dataclass
class Loo:
    """Leave-one-out estimate of one fit's expected log predictive density.

    Attributes
    ----------
    label : str
    elpd, se : float
        ELPD (sum over cells) and its standard error.
    p : float
        Effective number of parameters.
    elpd_i : ndarray
        Pointwise ELPD per cell.
    pareto_k : ndarray
        PSIS Pareto k̂ per cell (NaN for K-fold).
    method : str
        ``"psis"``, ``"psis + exact refit of N cells"`` or ``"exact 10-fold"``.
    warnings : list of str
        What the diagnostics say, in words.
    """

    label: str
    elpd: float
    se: float
    p: float
    elpd_i: np.ndarray
    pareto_k: np.ndarray
    method: str
    warnings: list[str] = field(default_factory=list)

    @property
    def n_bad(self) -> int:
        """Cells whose PSIS estimate is not trusted (k̂ > 0.7) and was not replaced by a refit."""
        return int(np.sum(self.pareto_k > K_THRESHOLD)) if self.method == "psis" else 0

    def summary(self) -> dict:
        k = self.pareto_k[np.isfinite(self.pareto_k)]
        return {"label": self.label, "elpd": self.elpd, "se": self.se, "p": self.p,
                "n_cells": int(self.elpd_i.size), "method": self.method,
                "max_pareto_k": float(k.max()) if k.size else None,
                "n_pareto_k_above_0.7": int(np.sum(k > K_THRESHOLD)), "warnings": self.warnings}


@options_checked
def loo(fit: Fit, *, refit: str | None = "auto", max_refits: int = MAX_REFITS, folds: int = FOLDS,
        label: str = "") -> Loo:
    """PSIS-LOO per cell of a NUTS fit, with exact refits where PSIS fails (module docstring).

    Parameters
    ----------
    fit : Fit
        A NUTS fit (``method="nuts"``): its posterior and pointwise log-likelihood.
    refit : {"auto", "cells", "kfold"} or None
        What to do where the Pareto k̂ exceeds 0.7.
    max_refits : int
        ``"auto"``: refit the bad cells one by one up to this many, else K-fold.
    folds : int
        Folds of the K-fold fallback.
    label : str
        Name of the fit in messages.

    Raises
    ------
    BayesrankError
        For a MAP fit (no posterior to leave cells out of).
    """
    if fit.method != "nuts" or "log_likelihood" not in fit.tree.children:
        raise BayesrankError(
            f"{label or fit.framework.label}: leave-one-out cross-validation needs a NUTS fit "
            "(method='nuts'), whose posterior draws and pointwise log-likelihood it reweights."
        )
    if refit not in ("auto", "cells", "kfold", None):
        raise BayesrankError(f"refit must be 'auto', 'cells', 'kfold' or None, got {refit!r}.")
    label = label or fit.framework.label
    tree = _loo_tree(fit)
    with _warnings.catch_warnings(record=True):
        _warnings.simplefilter("always")
        psis = azs.loo(tree, pointwise=True, var_name=OBSERVED)
    k = np.asarray(psis.pareto_k.values, dtype=float)
    bad = np.flatnonzero(k > K_THRESHOLD)
    words = []
    result = _from_elpd(label, psis, k, "psis")
    if not bad.size:
        return result
    where = _cells_named(fit, bad)
    if refit is None:
        result.warnings.append(
            f"PSIS-LOO is not reliable for {bad.size} of {k.size} cells (Pareto k̂ > {K_THRESHOLD}: "
            f"{where}): leaving one of them out changes the posterior too much for importance "
            "sampling. Their ELPD terms are approximations; pass refit='cells' or 'kfold' for exact "
            "values."
        )
        return result
    wrapper = _Refits(fit)
    if refit == "cells" or (refit == "auto" and bad.size <= max_refits):
        with _warnings.catch_warnings(record=True):
            _warnings.simplefilter("always")
            exact = azs.reloo(wrapper, loo_orig=psis, var_name=OBSERVED, k_threshold=K_THRESHOLD, pointwise=True)
        words.append(
            f"PSIS-LOO was not reliable for {bad.size} of {k.size} cells (Pareto k̂ > {K_THRESHOLD}: "
            f"{where}); those cells were left out one at a time and the model refitted exactly."
        )
        out = _from_elpd(label, exact, k, f"psis + exact refit of {bad.size} cells")
    else:
        with _warnings.catch_warnings(record=True):
            _warnings.simplefilter("always")
            kfold = azs.loo_kfold(tree, wrapper, pointwise=True, var_name=OBSERVED, k=folds, seed=0)
        words.append(
            f"PSIS-LOO was not reliable for {bad.size} of {k.size} cells (Pareto k̂ > {K_THRESHOLD}: "
            f"{where}); the ELPD is exact {folds}-fold cross-validation instead ({folds} refits)."
        )
        out = _from_elpd(label, kfold, np.full(k.size, np.nan), f"exact {folds}-fold")
    out.warnings = words
    return out


@options_checked
def compare(fits: Mapping[str, Fit], *, refit: str | None = "auto", loos: Mapping[str, Loo] | None = None
            ) -> pd.DataFrame:
    """Compare NUTS fits of the same observations by leave-one-out ELPD.

    Parameters
    ----------
    fits : mapping of str to Fit
        Named NUTS fits of the same cells.
    refit : {"auto", "cells", "kfold"} or None
        Passed to :func:`loo` for each fit.
    loos : mapping of str to Loo, optional
        Already computed :func:`loo` results (not recomputed).

    Returns
    -------
    DataFrame
        One row per fit, best first: ``rank, elpd, se, p, elpd_diff`` (to the best),
        ``dse`` (standard error of the difference, from the pointwise differences),
        ``weight`` (stacking weights of the predictive distributions), ``method``,
        ``max_pareto_k``, ``warning`` (bool). ``attrs["warnings"]`` holds the sentences.

    Raises
    ------
    BayesrankError
        Fewer than two fits, a fit that is not NUTS, or fits whose likelihoods score
        different observations (the reason is named).
    """
    if len(fits) < 2:
        raise BayesrankError("compare needs at least two fits.")
    names = list(fits)
    _check_same_observations(fits)
    results = {name: (loos or {}).get(name) or loo(fits[name], refit=refit, label=name)
               for name in progress.track(names, "leave-one-out per model")}
    order = sorted(names, key=lambda name: -results[name].elpd)
    weights = dict(zip(order, stacking_weights(np.column_stack([results[name].elpd_i for name in order]))))
    best = order[0]
    rows = []
    for rank, name in enumerate(order, start=1):
        res = results[name]
        diff = res.elpd_i - results[best].elpd_i
        rows.append({
            "name": name, "rank": rank, "elpd": res.elpd, "se": res.se, "p": res.p,
            "elpd_diff": float(diff.sum()), "dse": float(np.sqrt(diff.size * np.var(diff))) if name != best else 0.0,
            "weight": float(weights[name]), "method": res.method,
            "max_pareto_k": res.summary()["max_pareto_k"], "warning": bool(res.n_bad),
        })
    out = pd.DataFrame(rows).set_index("name")
    sentences = [f"{name}: {w}" for name in names for w in results[name].warnings]
    for name, row in out.iloc[1:].iterrows():
        z = -row["elpd_diff"] / row["dse"] if row["dse"] > 0 else np.inf
        verdict = ("clearly worse" if z > 4 else "worse, but within a few standard errors" if z > 2
                   else "not distinguishable")
        sentences.append(f"{name} vs {best}: ELPD difference {row['elpd_diff']:.1f} ± {row['dse']:.1f} — {verdict}.")
    out.attrs["warnings"] = sentences
    return out


def stacking_weights(elpd_i: np.ndarray) -> np.ndarray:
    """Stacking weights of predictive distributions (Yao et al., 2018): the weights w on the
    simplex that maximise Σ_i log Σ_k w_k exp(elpd_ik), computed in log space.

    ``arviz_stats.compare`` exponentiates the pointwise ELPDs as they are: a cell that holds
    thousands of comparisons has a pointwise ELPD hundreds of nats below zero, whose exponential
    underflows, and its weights come back uniform whatever the differences. The objective is
    unchanged by a constant per cell, so each row is shifted by its maximum and the weights are
    the softmax of free coordinates (L-BFGS with the exact gradient).

    Parameters
    ----------
    elpd_i : ndarray
        ``(n_cells, n_models)`` pointwise ELPDs.

    Returns
    -------
    ndarray
        ``(n_models,)`` non-negative weights summing to one.
    """
    e = np.asarray(elpd_i, dtype=float)
    e = e - e.max(axis=1, keepdims=True)

    def objective(z):
        logw = z - logsumexp(z)
        per_cell = logsumexp(e + logw, axis=1)
        share = np.exp(e + logw - per_cell[:, None]).sum(axis=0)  # ∂/∂log w_k of Σ_i per_cell
        return -per_cell.sum(), -(share - np.exp(logw) * share.sum())

    z = minimize(objective, np.zeros(e.shape[1]), jac=True, method="L-BFGS-B",
                 options={"gtol": 1e-10, "maxiter": 1000}).x
    return np.exp(z - logsumexp(z))


# ---------------------------------------------------------------------- helpers
def _loo_tree(fit: Fit) -> xr.DataTree:
    ll = fit.tree["log_likelihood"][OBSERVED]
    if "outcome" in ll.dims:  # per-outcome terms: a cell is the unit left out
        ll = ll.sum("outcome")
    return xr.DataTree.from_dict({"posterior": fit.tree["posterior"].to_dataset(),
                                  "log_likelihood": xr.Dataset({OBSERVED: ll})})


def _from_elpd(label, elpd, pareto_k, method) -> Loo:
    elpd_i = np.asarray(elpd.elpd_i.values, dtype=float).ravel()
    return Loo(label=label, elpd=float(elpd.elpd), se=float(elpd.se), p=float(elpd.p), elpd_i=elpd_i,
               pareto_k=np.asarray(pareto_k, dtype=float), method=method)


def _cells_named(fit: Fit, cells: np.ndarray, shown: int = 4) -> str:
    data = fit.model_data
    names = [f"{data.items[data.a[c]]} vs {data.items[data.b[c]]}"
             + (f" (judge {data.judges[data.judge[c]]})" if data.judge is not None else "") for c in cells[:shown]]
    return ", ".join(names) + (f", … (+{cells.size - shown} more)" if cells.size > shown else "")


def check_comparable(frameworks: Mapping[str, Framework], data: Comparisons) -> None:
    """Refuse, before anything is fitted, models that :func:`compare` would refuse after sampling:
    models whose likelihoods score different observations of ``data`` (each framework's cells,
    :meth:`~bayesrank.model.framework.Framework.prepare`, which also raises for data a framework
    cannot fit).

    Raises
    ------
    BayesrankError
        Fewer than two models, or two that score different observations (the reason is named).
    """
    if len(frameworks) < 2:
        raise BayesrankError("compare needs at least two models.")
    _refuse_different_cells(frameworks, {name: fw.prepare(data) for name, fw in frameworks.items()})


def _check_same_observations(fits: Mapping[str, Fit]) -> None:
    names = list(fits)
    first = fits[names[0]]
    for name in names:
        if fits[name].method != "nuts":
            raise BayesrankError(f"{name} is a {fits[name].method.upper()} fit; compare needs NUTS fits "
                                 "(method='nuts').")
    for name in names[1:]:
        if not _same_cells(first.data, fits[name].data):
            raise BayesrankError(f"{names[0]} and {name} were fitted to different data; their ELPDs "
                                 "score different observations and cannot be compared.")
    _refuse_different_cells({name: fit.framework for name, fit in fits.items()},
                            {name: fit.model_data for name, fit in fits.items()})


def _refuse_different_cells(frameworks: Mapping[str, Framework], cells: Mapping[str, Comparisons]) -> None:
    """Raise when two models' likelihoods see different cells or counts (another tie convention)."""
    names = list(frameworks)
    for name in names[1:]:
        a, b = cells[names[0]], cells[name]
        if not (_same_cells(a, b) and np.array_equal(a.counts(), b.counts())):
            why = _convention(frameworks[names[0]], frameworks[name])
            raise BayesrankError(f"{names[0]} and {name} score different observations ({why}); "
                                 "their ELPDs cannot be compared — compare models with the same tie convention.")


def _same_cells(a: Comparisons, b: Comparisons) -> bool:
    return (a.items == b.items and np.array_equal(a.a, b.a) and np.array_equal(a.b, b.b)
            and np.array_equal(a.counts(), b.counts()))


def _convention(f1, f2) -> str:
    def kind(f):
        ties = getattr(f, "ties", None)
        if ties == "half":
            return "ties counted as half a win for each side"
        if ties == "drop":
            return "ties dropped"
        return "ties as an outcome of their own"

    return f"{f1.label}: {kind(f1)}; {f2.label}: {kind(f2)}"


class _Refits(SamplingWrapper):
    """Exact leave-cells-out refits of a NUTS fit for arviz-stats' ``reloo`` and ``loo_kfold``:
    the same framework, priors and sampler settings, on the fit's cells without the left-out ones."""

    def __init__(self, fit: Fit):
        super().__init__(model=fit.framework, idata_orig=_loo_tree(fit))
        self.fit = fit
        d = fit.diagnostics
        self.kwargs = dict(method="nuts", draws=int(d["draws"]), tune=int(d.get("tune", d["draws"])),
                           chains=int(d["chains"]), sampler=d.get("sampler"), random_seed=1,
                           target_accept=float(d.get("target_accept", 0.9)),
                           whiten=bool(d.get("whitened", True)),
                           geometry_tuned=bool(d.get("geometry_tuned", True)))
        self.cells = fit.model_data

    def sel_observations(self, idx):
        keep = np.ones(self.cells.n_cells, dtype=bool)
        keep[np.atleast_1d(np.asarray(idx)).ravel()] = False
        return self.cells.subset(keep), self.cells.subset(~keep)

    def sample(self, modified_observed_data):
        return fit_framework(self.fit.framework, modified_observed_data, **self.kwargs)

    def get_inference_data(self, fitted_model):
        return fitted_model.tree

    def log_likelihood__i(self, excluded_obs, idata__i):
        framework = self.fit.framework
        structure = structure_of(framework, excluded_obs, "flat")
        post = idata__i["posterior"]
        chains, draws = post.sizes["chain"], post.sizes["draw"]
        nat = {v: post[v].values.reshape(chains * draws, *post[v].shape[2:]) for v in structure.natural.names}
        lp = structure.log_probs(nat, cell_arrays(excluded_obs), draws=True)
        counts = excluded_obs.counts()
        with np.errstate(invalid="ignore"):
            ll = np.where(counts > 0, counts * lp, 0.0).sum(axis=-1)        # (draws, cells)
        return xr.DataArray(ll.reshape(chains, draws, -1), dims=("chain", "draw", "cell"))


__all__ = ["FOLDS", "K_THRESHOLD", "Loo", "MAX_REFITS", "check_comparable", "compare", "loo", "stacking_weights"]
