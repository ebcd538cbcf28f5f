"""Covariate-dependent judge discrimination (judge-aware paper, App. F.6).

.. math::

    P(a ≻ b \\mid k, z) = σ\\big(\\exp(α_k + β_k z)\\,(s_a − s_b) \\;[+\\, δ_k x]\\big),

with a per-record covariate z (the paper: standardised log question length,
z = (ℓ − mean ℓ)/sd ℓ, ℓ = log(1 + len(q))). Normalisation (Cor. F.2): Σ s = 0 and
Σ α = 0; β is **not** centred. β ≡ 0 is the scalar judge-aware model. Identified when z
takes at least two distinct values (Thm F.1). The paper gives no asymptotic theory for this
extension; the Wald intervals here are the usual MLE ones.

The covariate lives on the cells, so the data are a :class:`CovariateComparisons` (cells
keyed by pair, judge, position *and* z), built with :func:`judgements_with_covariate`.
``Fit.save`` stores the covariate with the cells and ``Fit.load`` rebuilds the
:class:`CovariateComparisons`; ``Fit.predict(..., covariate=z)`` predicts at any z.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt

from bayesrank.data.comparisons import FIRST_A, FIRST_B, Comparisons
from bayesrank.errors import DataError
from bayesrank.frameworks.base import gather_scores
from bayesrank.frameworks.judge_aware import JudgeAware
from bayesrank.structures import free_real


@dataclass(frozen=True, eq=False, repr=False)
class CovariateComparisons(Comparisons):
    """:class:`Comparisons` with a covariate value per cell (``covariate``, float array)."""

    covariate: np.ndarray | None = None

    def subset(self, mask) -> CovariateComparisons:
        out = super().subset(mask)
        cov = None if self.covariate is None else np.asarray(self.covariate)[np.asarray(mask)]
        return replace(out, covariate=cov)


def standardized_log_length(lengths) -> np.ndarray:
    """z = (ℓ − mean ℓ) / sd ℓ with ℓ = log(1 + length) (paper App. F.6; sample sd, ddof=1)."""
    ell = np.log1p(np.asarray(lengths, dtype=float))
    sd = ell.std(ddof=1)
    if not np.isfinite(sd) or sd == 0:
        raise DataError("the covariate is constant: β is not identified (needs two distinct values).")
    return (ell - ell.mean()) / sd


def judgements_with_covariate(records: pd.DataFrame, covariate, *, source: str = "") -> CovariateComparisons:
    """Judge records (``model_a, model_b, judge_model, judge_preferred_model``) with a covariate.

    Parameters
    ----------
    records : DataFrame
        One verdict per row; ``judge_preferred_model`` in ``a``, ``b``, ``c`` (tie) or
        ``unknown`` (dropped). ``model_a`` was shown first.
    covariate : str or array-like
        Column name or one value per record (use e.g. :func:`standardized_log_length`).

    Returns
    -------
    CovariateComparisons
        Cells per (pair, judge, position, z), items and judges in sorted order.
    """
    df = records.reset_index(drop=True)
    z = df[covariate].to_numpy(float) if isinstance(covariate, str) else np.asarray(covariate, dtype=float)
    if z.shape != (len(df),):
        raise DataError(f"the covariate has {z.size} values for {len(df)} records.")
    verdict = df["judge_preferred_model"].astype(str).str.strip().str.lower()
    bad = ~verdict.isin(["a", "b", "c", "unknown"])
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise DataError(f"record {i}: judge_preferred_model is {df['judge_preferred_model'].iloc[i]!r}; use a, b, c or unknown.")
    keep = (verdict != "unknown").to_numpy()
    if not np.isfinite(z[keep]).all():
        raise DataError("the covariate has missing or infinite values among the usable records.")
    df, z, verdict = df[keep], z[keep], verdict[keep].to_numpy()
    items = tuple(sorted(set(df["model_a"].astype(str)) | set(df["model_b"].astype(str))))
    judges = tuple(sorted(set(df["judge_model"].astype(str))))
    idx = {n: i for i, n in enumerate(items)}
    jdx = {n: i for i, n in enumerate(judges)}
    a = df["model_a"].astype(str).map(idx).to_numpy()
    b = df["model_b"].astype(str).map(idx).to_numpy()
    if (a == b).any():
        raise DataError("a record compares a model with itself.")
    wa, wb, t = (verdict == "a").astype(float), (verdict == "b").astype(float), (verdict == "c").astype(float)
    flip = a > b
    frame = pd.DataFrame({
        "a": np.where(flip, b, a), "b": np.where(flip, a, b),
        "judge": df["judge_model"].astype(str).map(jdx).to_numpy(),
        "first": np.where(flip, FIRST_B, FIRST_A), "z": z,
        "wins_a": np.where(flip, wb, wa), "wins_b": np.where(flip, wa, wb), "ties": t,
    })
    cells = frame.groupby(["a", "b", "judge", "first", "z"], sort=True, as_index=False).sum()
    n_unknown = int((~keep).sum())
    return CovariateComparisons(
        items=items,
        a=cells["a"].to_numpy(np.int64), b=cells["b"].to_numpy(np.int64),
        wins_a=cells["wins_a"].to_numpy(float), wins_b=cells["wins_b"].to_numpy(float),
        ties=cells["ties"].to_numpy(float), ties_bothbad=np.zeros(len(cells)),
        judges=judges, judge=cells["judge"].to_numpy(np.int64), first=cells["first"].to_numpy(np.int64),
        dropped={"unknown verdict": n_unknown} if n_unknown else {},
        source=source, covariate=cells["z"].to_numpy(float),
    )


@dataclass(frozen=True)
class JudgeAwareCovariate(JudgeAware):
    """Judge-aware BTL with γ_k(z) = exp(α_k + β_k z) (paper App. F.6).

    Parameters are those of :class:`JudgeAware`; the data must be
    :class:`CovariateComparisons`. Reported: ``score``, ``gamma`` (= e^{α_k}, γ at z = 0),
    ``log_gamma`` (α), ``beta`` [, ``delta``, ``eta``]. Priors for NUTS: β_k ~
    Normal(0, ``priors.log_gamma``).
    """

    name = "judge-aware-covariate"

    def prepare(self, data):
        cov = getattr(data, "covariate", None)
        if cov is None:
            raise DataError(
                "the covariate model needs a covariate per cell: build the data with "
                "judge_covariate.judgements_with_covariate."
            )
        if np.unique(np.asarray(cov)).size < 2:
            raise DataError("the covariate takes a single value: β is not identified (Thm F.1 needs two).")
        return super().prepare(data)

    def parameters(self, data, prior):
        params = super().parameters(data, prior)
        params["beta"] = free_real("beta", prior, self.priors.log_gamma, dims="judge")
        params["covariate"] = pm.Data("covariate", np.asarray(data.covariate, dtype=float), dims="cell")
        return params

    def linear_predictor(self, params, a, b, judge=None, first=None):
        scale = pt.exp(pt.take(params["log_gamma"], judge) + pt.take(params["beta"], judge) * params["covariate"])
        d = scale * gather_scores(params["score"], a, b)
        if "delta" in params:
            d = d + self._per_cell(params["delta"], judge) * (1 - 2 * first)
        return d

    def count_free_parameters(self, data):
        return super().count_free_parameters(data) + data.n_judges

    def reported(self):
        names = list(super().reported())
        names.insert(3, "beta")
        return tuple(names)
