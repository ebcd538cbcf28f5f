"""The judges of an HJA fit (:class:`~bayesrank.model.hja.HJA`): sensitivities, leverages, the
disagreement and its factors, judge-specific contrasts — pure functions of the fit's DataTree.

Every number here is a function of the judge scores S (the canonical map of
:mod:`bayesrank.model.hja`), so it is identified; intervals are Wald (MAP: delta method in the
identified tangent space) or equal-tailed posterior intervals (NUTS), as the tree says.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from bayesrank.errors import BayesrankError
from bayesrank.model.hja import canonical, zero_test
from bayesrank.results.estimates import draws, interval, point, se, stored_covariance
from bayesrank.results.io import diagnostics_of, framework_of
from bayesrank.results.leaderboard import items, pairwise_contrasts

#: A judge is a leverage outlier when its robust z-score (h − median)/(1.4826·MAD) exceeds this.
OUTLIER_Z = 3.5
#: Two judges are indistinguishable when their score rows correlate at least this much and the
#: data cannot tell the rows apart (a Wald test from the draws, p above ``DUPLICATE_P``).
DUPLICATE_CORRELATION = 0.99
DUPLICATE_P = 0.05


def _check(tree):
    framework = framework_of(tree)
    if framework.name != "hja":
        raise BayesrankError(f"{framework.label} is not an HJA fit; fit bayesrank.HJA(rank=r).")
    return framework


def judge_names(tree: xr.DataTree) -> list[str]:
    """The fit's judges, in its order."""
    return [str(x) for x in tree["constant_data"]["judge"].values]


def judge_table(tree: xr.DataTree, level: float = 0.95) -> pd.DataFrame:
    """Per judge: the signed consensus sensitivity γ_k and the leverage h_k = ‖(UVᵀ)_k‖.

    Returns
    -------
    DataFrame
        ``name, sensitivity, gamma`` (the same γ_k, under the judge-aware column name),
        ``se, lower, upper`` (of γ_k), ``leverage, leverage_se, leverage_lower,
        leverage_upper`` and ``relative_leverage`` (ρ_k = h_k/(|γ_k| ‖μ‖)), one row per judge
        in the fit's order. NaN where the fit found γ not identified (Condition 2).
    """
    _check(tree)
    lower, upper = interval(tree, "gamma", level)
    h_lower, h_upper = interval(tree, "leverage", level)
    gamma = point(tree, "gamma")
    return pd.DataFrame({
        "name": judge_names(tree), "sensitivity": gamma, "gamma": gamma, "se": se(tree, "gamma"),
        "lower": lower, "upper": upper, "leverage": point(tree, "leverage"),
        "leverage_se": se(tree, "leverage"), "leverage_lower": np.maximum(h_lower, 0.0), "leverage_upper": h_upper,
        "relative_leverage": point(tree, "relative_leverage"),
    })


def judge_scores(tree: xr.DataTree) -> pd.DataFrame:
    """Ŝ (judges × items): each judge's own scores, γ_k μ + (UVᵀ)_k."""
    _check(tree)
    return pd.DataFrame(point(tree, "judge_score"), index=pd.Index(judge_names(tree), name="judge"),
                        columns=pd.Index(items(tree), name="item"))


def disagreement_matrix(tree: xr.DataTree) -> pd.DataFrame:
    """ÛV̂ᵀ (judges × items): what each judge adds to its share of the consensus."""
    _check(tree)
    return pd.DataFrame(point(tree, "disagreement"), index=pd.Index(judge_names(tree), name="judge"),
                        columns=pd.Index(items(tree), name="item"))


def judge_differences(tree: xr.DataTree, judge: str, level: float = 0.95) -> pd.DataFrame:
    """Judge-specific contrasts S_ki − S_kj of one judge for every pair (its own ranking).

    Returns
    -------
    DataFrame
        As :func:`~bayesrank.results.leaderboard.differences`, plus ``judge``.
    """
    _check(tree)
    names = judge_names(tree)
    if judge not in names:
        raise BayesrankError(f"unknown judge {judge!r}; the fit's judges: {', '.join(names)}.")
    k = names.index(judge)
    cov = stored_covariance(tree, "judge_score_cov")
    table = pairwise_contrasts(items(tree), point(tree, "judge_score")[k], None if cov is None else cov[k],
                               None if cov is not None else draws(tree, "judge_score")[:, k], level)
    table.insert(0, "judge", judge)
    return table


def factors(tree: xr.DataTree) -> dict:
    """The canonical factors of the disagreement (Condition 1 (iv) and the sign rule).

    Returns
    -------
    dict
        ``U`` (judges × components) and ``V`` (items × components) DataFrames of Ŝ's canonical
        map, ``singular_values`` σ_j, ``strengths`` d_j = σ_j²/(KN), and ``distinct``: whether
        the data tell each σ_j from the next (the fit's diagnostics); columns of U and V are
        identified only where the strengths are distinct.
    """
    framework = _check(tree)
    can = canonical(point(tree, "judge_score"), framework.rank)
    cols = pd.RangeIndex(1, framework.rank + 1, name="component")
    facts = diagnostics_of(tree).get("hja", {})
    return {
        "U": pd.DataFrame(can.U, index=pd.Index(judge_names(tree), name="judge"), columns=cols),
        "V": pd.DataFrame(can.V, index=pd.Index(items(tree), name="item"), columns=cols),
        "singular_values": can.singular_values, "strengths": can.strengths,
        "distinct": facts.get("distinct", []),
    }


def leverage_outliers(tree: xr.DataTree) -> dict:
    """Judges whose leverage h_k stands out (robust z-score above :data:`OUTLIER_Z`), and the
    highest-leverage judge, in words (the paper's Fig. F6 reading).

    Returns
    -------
    dict
        ``highest`` (name), ``outliers`` (names), ``robust_z`` (judge → z) and ``sentence``.
    """
    _check(tree)
    names, h = judge_names(tree), point(tree, "leverage")
    if not np.all(np.isfinite(h)):
        return {"highest": None, "outliers": [], "robust_z": {}, "sentence": "leverages are not identified."}
    med = np.median(h)
    mad = 1.4826 * np.median(np.abs(h - med))
    z = (h - med) / mad if mad > 0 else np.zeros_like(h)
    top = int(np.argmax(h))
    outliers = [names[k] for k in np.argsort(-z) if z[k] > OUTLIER_Z]
    gamma = point(tree, "gamma")
    sentence = (f"the highest-leverage judge is '{names[top]}' (h = {h[top]:.3f}, {h[top] / med:.1f}× the median "
                f"judge's, sensitivity γ = {gamma[top]:+.3f})")
    if outliers:
        several = len(outliers) > 1
        sentence += (f"; {len(outliers)} judge{'s' if several else ''} stand{'' if several else 's'} "
                     f"out from the panel's disagreement (robust z > {OUTLIER_Z}): "
                     + ", ".join(f"'{n}' (z = {z[names.index(n)]:.1f})" for n in outliers)
                     + " — refit without them to see how they distort the others (paper Fig. F7)")
    else:
        sentence += "; no judge stands out from the panel's disagreement"
    return {"highest": names[top], "outliers": outliers, "robust_z": dict(zip(names, z.tolist())),
            "sentence": sentence}


def indistinguishable_judges(tree: xr.DataTree, correlation: float = DUPLICATE_CORRELATION,
                             p_value: float = DUPLICATE_P) -> pd.DataFrame:
    """Pairs of judges whose estimated score rows the data cannot tell apart: correlated at
    least ``correlation`` and a Wald test of S_k = S_l from the fit's draws with p above
    ``p_value``. Such judges rank alike; whether they are *duplicates* (the same model twice,
    with dependent errors) is what :func:`near_duplicate_judges` asks of the raw verdicts.

    Returns
    -------
    DataFrame
        ``judge_1, judge_2, correlation, chi2, p_value``.
    """
    _check(tree)
    names, S = judge_names(tree), point(tree, "judge_score")
    sample = draws(tree, "judge_score")
    rows = []
    if not np.all(np.isfinite(sample)):
        return pd.DataFrame(rows, columns=["judge_1", "judge_2", "correlation", "chi2", "p_value"])
    corr = np.corrcoef(S)
    for k in range(len(names)):
        for l in range(k + 1, len(names)):
            if not corr[k, l] >= correlation:
                continue
            stat, p = zero_test(S[k] - S[l], sample[:, k] - sample[:, l])
            if p > p_value:
                rows.append((names[k], names[l], float(corr[k, l]), stat, p))
    return pd.DataFrame(rows, columns=["judge_1", "judge_2", "correlation", "chi2", "p_value"])


def near_duplicate_judges(tree: xr.DataTree) -> pd.DataFrame:
    """Judges that are probably the same model counted twice: the pairs agreeing on ≥ 98% of
    the records they share (the data's agreement check, when the records carry question ids),
    with the correlation of their estimated score rows.

    Returns
    -------
    DataFrame
        ``judge_1, judge_2, shared, agreement, correlation``.
    """
    _check(tree)
    names, S = judge_names(tree), point(tree, "judge_score")
    corr = np.corrcoef(S) if np.all(np.isfinite(S)) else np.full((len(names),) * 2, np.nan)
    rows = [(j1, j2, int(n), float(agr), float(corr[names.index(j1), names.index(j2)]))
            for j1, j2, n, agr in diagnostics_of(tree).get("near_duplicates", [])]
    return pd.DataFrame(rows, columns=["judge_1", "judge_2", "shared", "agreement", "correlation"])


def disagreement_summary(tree: xr.DataTree) -> dict:
    """Headline facts of the disagreement (the CLI's ``disagreement`` object).

    Returns
    -------
    dict
        ``rank``; ``singular_values``, ``strengths`` and ``distinct`` (:func:`factors`);
        ``consensus_share`` = ‖γ̂μ̂ᵀ‖²_F/‖Ŝ‖²_F (how much of the judges' scores the consensus
        carries) and ``disagreement_share`` = ‖ÛV̂ᵀ‖²_F/‖Ŝ‖²_F (they add up to 1: the parts are
        orthogonal); ``consensus_p_value`` (Condition 2's test); ``highest_leverage``,
        ``leverage_outliers`` and ``outlier_sentence`` (:func:`leverage_outliers`);
        ``near_duplicates`` (:func:`near_duplicate_judges`) and ``indistinguishable_pairs``
        (how many pairs of judges :func:`indistinguishable_judges` finds).
    """
    framework = _check(tree)
    S, D = point(tree, "judge_score"), point(tree, "disagreement")
    total = float((S * S).sum())
    facts = diagnostics_of(tree).get("hja", {})
    out = {"rank": framework.rank, "singular_values": [], "strengths": [], "distinct": facts.get("distinct", [])}
    if framework.rank:
        f = factors(tree)
        out["singular_values"], out["strengths"] = f["singular_values"].tolist(), f["strengths"].tolist()
    share = float((D * D).sum()) / total if total > 0 else float("nan")
    outliers = leverage_outliers(tree)
    dups = near_duplicate_judges(tree)
    out.update({
        "consensus_share": 1.0 - share, "disagreement_share": share,
        "consensus_p_value": facts.get("consensus_p_value"),
        "highest_leverage": outliers["highest"], "leverage_outliers": outliers["outliers"],
        "outlier_sentence": outliers["sentence"],
        "near_duplicates": dups.to_dict("records"),
        "indistinguishable_pairs": len(indistinguishable_judges(tree)),
    })
    return out


__all__ = [
    "DUPLICATE_CORRELATION", "DUPLICATE_P", "OUTLIER_Z", "disagreement_matrix", "disagreement_summary", "factors",
    "indistinguishable_judges", "judge_differences", "judge_names", "judge_scores", "judge_table",
    "leverage_outliers", "near_duplicate_judges"
]
