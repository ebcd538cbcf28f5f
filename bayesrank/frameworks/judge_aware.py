"""Judge-aware Bradley–Terry–Luce (Xu, Tan, Wu & Zhou) and the pooled BTL baseline.

Digest ``seed-judge-aware-btl.md`` §1–§3. Items i have latent scores s_i, judges k a
discrimination γ_k > 0:

.. math::

    P(a ≻ b \\mid \\text{judge } k) = σ\\big(γ_k (s_a − s_b) \\;[+\\, δ_k x]\\big),
    \\qquad x = +1 \\text{ if a was shown first, } −1 \\text{ otherwise},

with the paper's normalisation (eq. 3), imposed by construction (zero-sum transforms):

.. math::

    \\sum_i s_i = 0, \\qquad \\sum_k \\log γ_k = 0 \\quad (γ_k = e^{α_k}).

The pooled baseline :class:`BTL` is the same code path with γ_k ≡ 1 (paper's "unweighted"
model, subscript u). Ties:

``half``
    a tie counts as y = ½ (half a win for each side) — the paper's pseudo-likelihood
    Σ n [ȳ log σ(η) + (1 − ȳ) log σ(−η)], needed to reproduce its tables;
``drop``
    ties are removed (paper App. F.4);
``davidson``
    Davidson link with judge-specific discrimination and a per-judge tie parameter η_k:
    P(a) : P(b) : P(tie) = e^{d/2} : e^{−d/2} : e^{η_k}, d = γ_k(s_a − s_b) [+ δ_k x].

Position bias (``position_bias=True``) adds a per-judge intercept δ_k on the shown-first
item (ours; the paper has none). The data must then carry ``first``.

MLE intervals (``fit(data, method="map")``) follow the paper: the plug-in *expected*
information with the empirical design on the free zero-sum coordinates, delta method to γ
(``default_information = "expected"``); :meth:`bayesrank.results.Fit.judges` also gives the
log-scale intervals exp(α̂ ± z·se(α̂)). :func:`judge_diagnostics` (run by every MAP fit)
detects when the constrained MLE does not exist (an uninformative or anti-aligned judge
drives γ_k → 0 and the others → ∞) and flags near-duplicate judges.

Examples
--------
>>> import bayesrank as br                                     # doctest: +SKIP
>>> from bayesrank.frameworks.judge_aware import JudgeAware, BTL
>>> data = br.data.load_dataset("mtbench-judges")              # doctest: +SKIP
>>> fit = JudgeAware().fit(data)                               # doctest: +SKIP
>>> fit.leaderboard(), fit.judges()                            # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from scipy import optimize as sopt

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError, ModelSpecError
from bayesrank.frameworks.base import Framework, Priors, gather_scores
from bayesrank.links import log_probs
from bayesrank.structures import free_real, zero_sum_scores

TIE_HANDLING = ("half", "drop", "davidson")

#: γ̂_k below this (with Σ log γ = 0) is treated as "driven to zero" by the optimizer.
GAMMA_FLOOR = 1e-3
#: share of agreeing verdicts on shared records above which two judges are near duplicates.
DUPLICATE_AGREEMENT = 0.98


@dataclass(frozen=True)
class JudgePriors(Priors):
    """Weakly informative priors of the judge-aware models (``method="nuts"``).

    MAP fits use flat priors on every free coordinate (MAP = MLE).

    Attributes
    ----------
    score : float
        ``ZeroSumNormal(sigma=score)`` on s (logit scale per unit γ).
    tie : float
        ``Normal(0, tie)`` on each judge's Davidson tie parameter η_k.
    log_gamma : float
        ``ZeroSumNormal(sigma=log_gamma)`` on α = log γ: with 1.0 a judge is a priori within a
        factor e^{±2} ≈ ×7.4 of the geometric-mean judge (95%). It keeps γ_k finite and > 0
        when the MLE does not exist (an anti-aligned judge gets a small γ_k instead of 0).
    position : float
        ``Normal(0, position)`` on each judge's position-bias intercept δ_k (logit scale).
    """

    score: float = 3.0
    tie: float = 2.0
    log_gamma: float = 1.0
    position: float = 1.0


@dataclass(frozen=True)
class JudgeAware(Framework):
    """Judge-aware BTL: P(a ≻ b | k) = σ(γ_k(s_a − s_b) [+ δ_k x]), Σs = 0, Σ log γ = 0.

    Parameters
    ----------
    ties : {"half", "drop", "davidson"}
        Tie handling (module docstring). ``"half"`` is the paper's convention.
    position_bias : bool
        Add a per-judge position intercept δ_k (x = +1 when item a was shown first, −1
        otherwise); needs the ``first`` column.
    priors : JudgePriors
        Prior scales for NUTS.

    Notes
    -----
    Free parameters: (N − 1) scores + (K − 1) log-discriminations [+ K position intercepts]
    [+ K Davidson tie parameters]. Reported: ``score``, ``gamma`` (Deterministic, dims
    ``judge``), ``log_gamma`` [, ``delta``] [, ``eta``].
    """

    ties: str = "half"
    position_bias: bool = False
    priors: JudgePriors = field(default_factory=JudgePriors, kw_only=True)

    name = "judge-aware"
    #: γ_k ≡ 1 (the pooled BTL baseline) when True
    pooled = False
    #: the paper's intervals use the plug-in expected information
    default_information = "expected"

    def __post_init__(self):
        if self.ties not in TIE_HANDLING:
            raise ModelSpecError(f"ties must be one of {TIE_HANDLING}, got {self.ties!r}.")
        if not isinstance(self.position_bias, bool):
            raise ModelSpecError(f"position_bias must be True or False, got {self.position_bias!r}.")

    # ------------------------------------------------------------------ data
    def prepare(self, data: Comparisons) -> Comparisons:
        """Check judges / positions and apply the tie convention.

        Raises
        ------
        DataError
            No judge column (judge-aware), a single judge, no ``first`` column with
            ``position_bias``, or no ties with ``ties="davidson"``.
        """
        if not self.pooled:
            if data.judge is None:
                raise DataError(
                    "the judge-aware model needs a judge per comparison (column 'judge' / "
                    "'judge_model'); use the pooled 'btl' model for data without judges."
                )
            if data.n_judges < 2:
                raise DataError(
                    f"the judge-aware model needs at least 2 judges, the data have {data.n_judges}; "
                    "with one judge γ is fixed to 1 by Σ log γ = 0 — use 'btl'."
                )
            used = np.unique(data.judge)
            if used.size < data.n_judges:
                missing = [data.judges[k] for k in range(data.n_judges) if k not in set(used)]
                raise DataError(
                    f"judges {missing[:5]} have no comparisons, so their γ is not identified; "
                    "remove them (judge_aware.without_judges)."
                )
        if self.position_bias and data.first is None:
            raise DataError(
                "position_bias=True needs which item was shown first (column 'first'); "
                "the data have no position information."
            )
        if self.ties == "drop":
            out = data.without_ties()
            if out.n_cells == 0:
                raise DataError("every comparison is a tie: nothing is left with ties='drop'.")
            return out
        if self.ties == "half":
            half = data.ties / 2
            return replace(data, wins_a=data.wins_a + half, wins_b=data.wins_b + half, ties=0 * half)
        if data.ties.sum() == 0:
            raise DataError(
                "the data have no ties, so the Davidson tie parameters are not estimable; "
                "use ties='half' or ties='drop'."
            )
        return data

    # ------------------------------------------------------------------ model
    def _judge_dims(self, data) -> str | None:
        return "judge" if data.judge is not None else None

    def parameters(self, data, prior):
        params = {"score": zero_sum_scores("score", "item", prior, self.priors.score)}
        jdims = self._judge_dims(data)
        if not self.pooled:
            log_gamma = zero_sum_scores("log_gamma", "judge", prior, self.priors.log_gamma)
            params["log_gamma"] = log_gamma
            params["gamma"] = pm.Deterministic("gamma", pt.exp(log_gamma), dims="judge")
        if self.position_bias:
            params["delta"] = free_real("delta", prior, self.priors.position, dims=jdims)
        if self.ties == "davidson":
            params["eta"] = free_real("eta", prior, self.priors.tie, dims=jdims)
        return params

    @staticmethod
    def _per_cell(value, judge):
        """A per-judge parameter at each cell (a scalar when the data have no judges)."""
        return value if judge is None or value.ndim == 0 else pt.take(value, judge)

    def linear_predictor(self, params, a, b, judge=None, first=None):
        """η = γ_k(s_a − s_b) [+ δ_k x] per cell (x = +1 when a was shown first)."""
        d = gather_scores(params["score"], a, b)
        if "gamma" in params:
            d = pt.take(params["gamma"], judge) * d
        if "delta" in params:
            d = d + self._per_cell(params["delta"], judge) * (1 - 2 * first)
        return d

    def cell_log_probs(self, params, a, b, judge=None, first=None):
        d = self.linear_predictor(params, a, b, judge, first)
        if self.ties == "davidson":
            return log_probs("davidson", d, self._per_cell(params["eta"], judge))
        return log_probs("bt", d)

    def count_free_parameters(self, data):
        k = max(data.n_judges, 1)
        n = data.n_items - 1
        if not self.pooled:
            n += data.n_judges - 1
        n += k * int(self.position_bias) + k * int(self.ties == "davidson")
        return n

    def check_mle(self, data, prepared, compiled, theta) -> dict:
        """Existence of the constrained MLE and judge warnings (:func:`judge_diagnostics`).

        Called by ``fit_map``; when ``mle_exists`` is False the fit reports no estimates.
        """
        mle = _Optimum(compiled, np.asarray(theta))
        out = judge_diagnostics(self, data, mle if not self.pooled else None)
        if not self.pooled:
            out["signed_sensitivity"] = {k: float(v) for k, v in (out["signed_sensitivity"] or {}).items()}
        else:
            out.pop("signed_sensitivity")
            out.pop("degenerate_judges")
        return out

    def reported(self):
        names = ["score"]
        if not self.pooled:
            names += ["gamma", "log_gamma"]
        if self.position_bias:
            names.append("delta")
        if self.ties == "davidson":
            names.append("eta")
        return tuple(names)


@dataclass(frozen=True)
class BTL(JudgeAware):
    """Pooled Bradley–Terry–Luce baseline: the judge-aware model with γ_k ≡ 1.

    P(a ≻ b | k) = σ(s_a − s_b [+ δ_k x]), Σ s = 0: every judge's verdicts count the same
    (paper's "unweighted" model). Judge columns are optional; with them, ``position_bias``
    and ``ties="davidson"`` still use per-judge δ_k / η_k.
    """

    name = "btl"
    pooled = True


@dataclass(frozen=True)
class _SignedJudgeAware(JudgeAware):
    """Diagnostic only: γ_k replaced by a signed sensitivity c_k ∈ ℝ (scale not fixed).

    P(a ≻ b | k) = σ(c_k(s_a − s_b) [+ δ_k x]). Used by :func:`judge_diagnostics` to find
    anti-aligned judges (c_k < 0 relative to the consensus); the overall scale of (s, c)
    is not identified, so it is fitted with a tiny ridge and only signs are used.
    """

    name = "judge-aware-signed"

    def parameters(self, data, prior):
        params = {"score": zero_sum_scores("score", "item", prior, self.priors.score)}
        params["gamma"] = free_real("sensitivity", prior, self.priors.log_gamma, dims="judge")
        if self.position_bias:
            params["delta"] = free_real("delta", prior, self.priors.position, dims="judge")
        if self.ties == "davidson":
            params["eta"] = free_real("eta", prior, self.priors.tie, dims="judge")
        return params


# ---------------------------------------------------------------------- existence-check helpers
@dataclass
class _Optimum:
    """The positive fit at the optimiser's point, as handed to the existence check."""

    compiled: object
    theta: np.ndarray

    @property
    def values(self) -> dict[str, np.ndarray]:
        """Constrained values (score, gamma, ...) at θ."""
        return self.compiled.constrained(self.theta)[0]


def _optimize(compiled, x0, ridge=0.0, maxiter=20000):
    """L-BFGS of the signed diagnostic model (:func:`anti_aligned_judges`); estimates use ``fit_map``."""

    def f(x):
        lp, g = compiled.logp_dlogp(x)
        return -lp + 0.5 * ridge * x @ x, -g + ridge * x

    return sopt.minimize(
        f, x0, jac=True, method="L-BFGS-B", options=dict(maxiter=maxiter, maxfun=2 * maxiter, gtol=1e-9, ftol=1e-15)
    )


# ---------------------------------------------------------------------- diagnostics
def without_judges(data: Comparisons, names) -> Comparisons:
    """The data without the comparisons of the named judges (judge list re-indexed)."""
    if data.judge is None:
        return data
    drop = {data.judges.index(n) for n in names if n in data.judges}
    keep_idx = [k for k in range(data.n_judges) if k not in drop]
    remap = -np.ones(data.n_judges, dtype=np.int64)
    remap[keep_idx] = np.arange(len(keep_idx))
    sub = data.subset(np.isin(data.judge, keep_idx))
    if sub.n_cells == 0:
        raise DataError("no comparisons are left after removing the judges.")
    return replace(sub, judges=tuple(data.judges[k] for k in keep_idx), judge=remap[sub.judge])


def anti_aligned_judges(framework: JudgeAware, data: Comparisons, start: _Optimum | None = None) -> dict:
    """Signed sensitivities c_k of the model with γ_k ∈ ℝ, oriented to the consensus.

    Fits σ(c_k(s_a − s_b) [+ δ_k x]) by L-BFGS (tiny ridge, only signs are used) from the
    positive fit, orients (s, c) so that s correlates positively with the positive fit
    (or, without one, so that Σ_k n_k c_k > 0) and returns ``judge -> c_k / max|c|``.
    A judge with c_k ≤ 0 is anti-aligned or uninformative: the positivity-constrained MLE
    then does not exist (its γ_k → 0 and Σ log γ = 0 pushes the others to ∞).
    """
    from bayesrank.inference.compiled import compiled_model

    signed = _SignedJudgeAware(ties=framework.ties, position_bias=framework.position_bias)
    prepared = signed.prepare(data)
    comp = compiled_model(signed, prepared, "flat")
    x0 = comp.x0.copy()
    ssl, _ = comp.slices["sensitivity"]
    x0[ssl] = 1.0
    if start is not None:
        for name, (sl, _) in comp.slices.items():
            if name == "sensitivity":
                x0[sl] = start.values["gamma"]
            elif name in start.compiled.slices:
                x0[sl] = start.theta[start.compiled.slices[name][0]]
    res = _optimize(comp, x0, ridge=1e-6)
    vals = comp.free_rv_values(res.x)
    c = np.asarray(vals["sensitivity"], dtype=float)
    s = np.asarray(vals["score"], dtype=float)
    if start is not None:
        ref = start.values["score"]
        flip = float(s @ ref) < 0
    else:
        n_k = np.bincount(prepared.judge, prepared.totals, prepared.n_judges)
        flip = float(n_k @ c) < 0
    if flip:
        c = -c
    c = c / max(np.abs(c).max(), 1e-300)
    return dict(zip(data.judges, c))


def judge_agreement(records) -> "pd.DataFrame":
    """Share of identical verdicts of each pair of judges on shared records.

    Parameters
    ----------
    records : DataFrame
        One verdict per row with ``question_id``, ``model_a``, ``model_b``, ``judge_model``
        and ``judge_preferred_model`` (the released judge-record format); ``unknown``
        verdicts are ignored. A record is (question, unordered pair); verdicts are oriented
        to the alphabetically first model.

    Returns
    -------
    DataFrame
        Columns ``judge_1, judge_2, shared, agreement`` (one row per pair of judges with
        shared records).
    """
    import pandas as pd

    df = records[records["judge_preferred_model"].isin(["a", "b", "c"])].copy()
    swap = df["model_a"].astype(str) > df["model_b"].astype(str)
    verdict = df["judge_preferred_model"].map({"a": 1, "b": -1, "c": 0}).to_numpy()
    verdict = np.where(swap, -verdict, verdict)
    lo = np.where(swap, df["model_b"], df["model_a"])
    hi = np.where(swap, df["model_a"], df["model_b"])
    key = df["question_id"].astype(str).to_numpy() + "\x1f" + lo.astype(str) + "\x1f" + hi.astype(str)
    frame = pd.DataFrame({"key": key, "judge": df["judge_model"].astype(str).to_numpy(), "v": verdict})
    frame = frame.drop_duplicates(["key", "judge"])
    wide = frame.pivot(index="key", columns="judge", values="v")
    judges = list(wide.columns)
    vals = wide.to_numpy(dtype=float)
    present = ~np.isnan(vals)
    rows = []
    for i in range(len(judges)):
        for j in range(i + 1, len(judges)):
            both = present[:, i] & present[:, j]
            n = int(both.sum())
            if n:
                agree = float((vals[both, i] == vals[both, j]).mean())
                rows.append((judges[i], judges[j], n, agree))
    return pd.DataFrame(rows, columns=["judge_1", "judge_2", "shared", "agreement"])


def near_duplicate_judges(records, threshold: float = DUPLICATE_AGREEMENT, min_shared: int = 20):
    """Pairs of judges agreeing on ≥ ``threshold`` of ≥ ``min_shared`` shared records."""
    agree = judge_agreement(records)
    hits = agree[(agree["agreement"] >= threshold) & (agree["shared"] >= min_shared)]
    return [(r.judge_1, r.judge_2, int(r.shared), float(r.agreement)) for r in hits.itertuples()]


def judge_diagnostics(
    framework: JudgeAware,
    data: Comparisons,
    mle: _Optimum | None = None,
    records=None,
    gamma_floor: float = GAMMA_FLOOR,
) -> dict:
    """Does the judge-aware MLE exist, and are some judges suspicious?

    The constrained MLE (γ_k > 0, Σ log γ = 0) does not exist when a judge is uninformative
    or anti-aligned with the consensus: its γ_k → 0, the other γ's → ∞ and ŝ → 0 while the
    products γ_k(s_i − s_j) stay finite. Two independent signals are used:

    1. the signed fit (:func:`anti_aligned_judges`) gives c_k ≤ 0 for the judge;
    2. the positive fit drives γ̂_k below ``gamma_floor`` (optimizer-path value).

    Parameters
    ----------
    framework : JudgeAware
        The model (for :class:`BTL` only the duplicate check applies).
    data : Comparisons
        Raw (unprepared) data.
    mle : optional
        The positive fit at the optimiser's point (``check_mle`` passes it); needed for
        judge-aware frameworks. To check data, fit them: ``framework.fit(data).diagnostics``
        holds this dict's entries.
    records : DataFrame, optional
        Raw judge records (with ``question_id``) for the near-duplicate check.
    gamma_floor : float
        Threshold of signal 2.

    Returns
    -------
    dict
        ``mle_exists`` (bool), ``degenerate_judges`` (list of names), ``warnings`` (list of
        plain-English sentences), ``recommendation`` (str or None), ``near_duplicates``
        (list of (judge, judge, shared, agreement)), ``signed_sensitivity`` (dict or None).
    """
    warnings: list[str] = []
    out = {
        "mle_exists": True,
        "degenerate_judges": [],
        "warnings": warnings,
        "recommendation": None,
        "near_duplicates": [],
        "signed_sensitivity": None,
    }
    if not framework.pooled and data.judge is not None:
        if mle is None:
            raise ModelSpecError(
                "the judge-aware existence check needs the positive fit; "
                "use framework.fit(data).diagnostics (MAP runs this check)."
            )
        gamma = np.asarray(mle.values["gamma"], dtype=float)
        signed = anti_aligned_judges(framework, data, start=mle)
        out["signed_sensitivity"] = signed
        bad = [
            name
            for k, name in enumerate(data.judges)
            if signed[name] <= 0 or gamma[k] < gamma_floor
        ]
        if bad:
            out["mle_exists"] = False
            out["degenerate_judges"] = bad
            detail = ", ".join(f"'{n}' (signed sensitivity {signed[n]:+.3f})" for n in bad)
            warnings.append(
                f"the judge-aware maximum-likelihood estimate does not exist: {detail} "
                f"{'is' if len(bad) == 1 else 'are'} uninformative or anti-aligned with the other "
                "judges, so γ → 0 for them while Σ log γ = 0 sends the other γ's to infinity and "
                "the scores to 0; no estimates are reported (optimizer-path values are not estimates)"
            )
            out["recommendation"] = (
                f"drop the judge{'s' if len(bad) > 1 else ''} {', '.join(repr(n) for n in bad)} "
                "(judge_aware.without_judges), or fit with priors on log γ (method='nuts'), or use "
                "a model with a signed judge sensitivity (HJA)"
            )
        else:
            low = [n for k, n in enumerate(data.judges) if gamma[k] < 0.1]
            if low:
                warnings.append(
                    f"judges with very low discrimination (γ̂ < 0.1): {', '.join(low)}; their verdicts "
                    "carry almost no information and make the information matrix ill-conditioned"
                )
    if records is not None:
        dups = near_duplicate_judges(records)
        out["near_duplicates"] = dups
        for j1, j2, n, agr in dups:
            warnings.append(
                f"judges '{j1}' and '{j2}' agree on {agr:.1%} of {n} shared comparisons: they are "
                "probably the same model counted twice, which breaks the independence of judges"
            )
    return out
