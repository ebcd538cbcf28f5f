r"""Judge-aware Bradley–Terry–Luce (Xu, Tan, Wu & Zhou), the pooled BTL baseline and variants.

"A Judge-Aware Ranking Framework for Evaluating Large Language Models without Ground
Truth", §2–§3. Items i have latent scores s_i, judges k a
discrimination γ_k > 0:

.. math::

    P(a ≻ b \mid \text{judge } k) = σ\big(γ_k (s_a − s_b) \;[+\, δ_k x]\big),
    \qquad x = +1 \text{ if a was shown first, } −1 \text{ otherwise},

with the paper's normalisation (eq. 3), imposed by construction (zero-sum transforms):

.. math::

    \sum_i s_i = 0, \qquad \sum_k \log γ_k = 0 \quad (γ_k = e^{α_k}).

Variants, all on the same code path:

:class:`BTL`
    the pooled baseline, γ_k ≡ 1 (the paper's "unweighted" model, subscript u);
:class:`SignedJudgeAware`
    a signed sensitivity γ_k ∈ ℝ with Σγ = K (the HJA paper's rank-0 model); its fit tells
    whether the judge-aware MLE exists (:func:`judge_existence`);
:class:`JudgeAwareCovariate`
    γ_k(z) = exp(α_k + β_k z) with a per-cell covariate z (the paper's App. F.6).

Ties:

``half``
    a tie counts as y = ½ (half a win for each side) — the paper's pseudo-likelihood
    Σ n [ȳ log σ(η) + (1 − ȳ) log σ(−η)], needed to reproduce its tables;
``drop``
    ties are removed (paper App. F.4);
``davidson``
    Davidson link with judge-specific discrimination and a per-judge tie parameter η_k:
    P(a) : P(b) : P(tie) = e^{d/2} : e^{−d/2} : e^{η_k}, d = γ_k(s_a − s_b) [+ δ_k x];
``rao-kupper``
    Rao–Kupper link with a per-judge threshold η_k = softplus(eta_k) ≥ 0:
    P(a) = σ(d − η_k), P(b) = σ(−d − η_k), P(tie) = 1 − P(a) − P(b).

The four options are the same for every framework not named after its link
(:data:`~bayesrank.model.links.TIE_OPTIONS`): the paired models are the classes
``BradleyTerry`` / ``Davidson`` / ``RaoKupper`` of the same links.

Position bias (``position_bias=True``) adds a per-judge intercept δ_k on the shown-first
item (ours; the paper has none). The data must then carry ``first``.

MLE intervals follow the paper: the plug-in *expected* information with the empirical
design on the free zero-sum coordinates, delta method to γ (``default_information =
"expected"``); the judge table also gives the log-scale intervals exp(α̂ ± z·se(α̂)).

Examples
--------
>>> import bayesrank as br
>>> fit = br.fit(br.JudgeAware(), "mtbench-judges")
>>> list(fit.leaderboard()["name"])
['claude-v1', 'gpt-4', 'gpt-3.5-turbo', 'vicuna-13b-v1.2', 'alpaca-13b', 'llama-13b']
>>> fit.judges()[["name", "gamma", "lower_log", "upper_log"]].head(3).round(2)
                                      name  gamma  lower_log  upper_log
0           Qwen/Qwen2.5-7B-Instruct-Turbo   1.80       1.48       2.19
1  Qwen/Qwen3-235B-A22B-Instruct-2507-tput   1.86       1.52       2.27
2         Qwen/Qwen3-Next-80B-A3B-Instruct   2.00       1.63       2.45
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError, ModelSpecError
from bayesrank.model import weak
from bayesrank.model.framework import (
    AS_OBSERVED,
    SCORE_PAIR,
    TIES_AS_HALVES,
    TIES_DROPPED,
    Findings,
    Framework,
    Local,
    Predictor,
    Priors,
    style_variables,
    with_style,
)
from bayesrank.model.links import TIE_LINKS, TIE_OPTIONS, link_of
from bayesrank.model.structures import free_real, zero_sum_scores
from bayesrank.runtime.lazy import lazy_module

pm = lazy_module("pymc")
pt = lazy_module("pytensor.tensor")


TIE_HANDLING = TIE_OPTIONS

#: γ̂_k below this (with Σ log γ = 0) is treated as "driven to zero" by the optimizer.
GAMMA_FLOOR = 1e-3


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
        Also the scale of ``Normal(0, ·)`` on the covariate slopes β_k and of
        ``ZeroSumNormal`` on the signed sensitivities around 1.
    position : float
        ``Normal(0, position)`` on each judge's position-bias intercept δ_k (logit scale).
    """

    score: float = 3.0
    tie: float = 2.0
    log_gamma: float = 1.0
    position: float = 1.0


def _position(u, cells):
    """δ_k x with x = +1 when item a was shown first, −1 otherwise."""
    return u["delta"] * (1 - 2 * cells["first"])


@dataclass(frozen=True)
class JudgeAware(Framework):
    """Judge-aware BTL: P(a ≻ b | k) = σ(γ_k(s_a − s_b) [+ δ_k x]), Σs = 0, Σ log γ = 0.

    Parameters
    ----------
    ties : {"half", "drop", "davidson", "rao-kupper"}
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

    ties: str = field(default="half", metadata={"choices": TIE_HANDLING, "help": (
        "half: a tie is half a win for each side (the paper's); drop: ties are ignored; "
        "davidson / rao-kupper: ties modelled by that link, with a tie parameter per judge")})
    position_bias: bool = field(default=False, metadata={
        "help": "a per-judge intercept for the answer shown first (needs the position of each record)"})
    priors: JudgePriors = field(default_factory=JudgePriors, kw_only=True)

    name = "judge-aware"
    scale_note = ("judge-aware: d = γ_k(s_a − s_b); 400 points = odds 10:1 for a judge with γ = 1 (the "
                  "geometric-mean judge), γ_k times that for judge k")
    #: the judges' discrimination γ_k: "positive" (e^α, Σα = 0), "signed" (Σγ = K) or None (γ ≡ 1)
    discrimination = "positive"
    #: the paper's intervals use the plug-in expected information
    default_information = "expected"

    def __post_init__(self):
        if self.ties not in TIE_HANDLING:
            raise ModelSpecError(f"ties must be one of {TIE_HANDLING}, got {self.ties!r}.")
        if not isinstance(self.position_bias, bool):
            raise ModelSpecError(f"position_bias must be True or False, got {self.position_bias!r}.")

    @property
    def link(self) -> str:
        return link_of(self.ties)

    # ------------------------------------------------------------------ data
    def prepare(self, data: Comparisons) -> Comparisons:
        """Check judges / positions and apply the tie convention.

        Raises
        ------
        DataError
            No judge column (judge-aware), a single judge, a judge without comparisons, no
            ``first`` column with ``position_bias``, or no ties with ``ties="davidson"`` or ``"rao-kupper"``.
        """
        if self.discrimination is not None:
            if data.judge is None:
                raise DataError(
                    f"the {self.name} model needs a judge per comparison (column 'judge' / "
                    "'judge_model'); use the pooled 'btl' model for data without judges."
                )
            if data.n_judges < 2:
                raise DataError(
                    f"the {self.name} model needs at least 2 judges, the data have {data.n_judges}; "
                    "with one judge its discrimination is fixed by the normalisation — use 'btl'."
                )
            used = np.unique(data.judge)
            if used.size < data.n_judges:
                missing = [data.judges[k] for k in range(data.n_judges) if k not in set(used)]
                raise DataError(
                    f"judges {missing[:5]} have no comparisons, so their discrimination is not identified; "
                    "remove them (Comparisons.without_judges)."
                )
        if self.position_bias and data.first is None:
            raise DataError(
                "position_bias=True needs which item was shown first (column 'first'); "
                "the data have no position information."
            )
        if self.ties in TIE_LINKS and data.ties.sum() == 0:
            raise DataError(
                f"the data have no ties, so the {self.ties} tie parameters are not estimable; "
                "use ties='half' or ties='drop'."
            )
        return self.tie_convention(data)

    def tie_convention(self, data: Comparisons) -> Comparisons:
        """The cells as the likelihood counts them: ties as halves, dropped, or kept (Davidson)."""
        if self.ties == "drop":
            return data.without_ties()
        if self.ties == "half":
            return data.ties_as_halves()
        return data

    # ------------------------------------------------------------------ model
    def _per_judge(self, data) -> tuple[dict, str | None]:
        """dims and gathering index of a per-judge parameter (a scalar without judges)."""
        return ({"dims": "judge"}, "judge_index") if data.judge is not None else ({}, None)

    def variables(self, data, prior):
        zero_sum_scores("score", "item", prior, self.priors.score)
        self._discrimination(data, prior)
        self._judge_terms(data, prior)

    def _judge_terms(self, data, prior):
        """The per-judge position intercepts δ_k and Davidson tie parameters η_k, when asked for."""
        dims, _ = self._per_judge(data)
        if self.position_bias:
            free_real("delta", prior, self.priors.position, **dims)
        if self.ties in TIE_LINKS:
            free_real("eta", prior, self.priors.tie, **dims)
        # style control: each judge has its own style bias (LLM judges differ in verbosity bias)
        style_variables(data, prior, self.priors.score, self._per_judge(data)[1])

    def outcome_map(self):
        return {"half": TIES_AS_HALVES, "drop": TIES_DROPPED}.get(self.ties, AS_OBSERVED)

    @property
    def default_intervals(self) -> str:
        # the paper's intervals (plug-in expected information), which its tables reproduce;
        # intervals="sandwich" gives the robust ones for the ties-as-halves pseudo-likelihood
        return "wald"

    def _discrimination(self, data, prior):
        log_gamma = zero_sum_scores("log_gamma", "judge", prior, self.priors.log_gamma)
        pm.Deterministic("gamma", pt.exp(log_gamma), dims="judge")

    def _scale_inputs(self) -> dict[str, Local]:
        return {"log_gamma": Local("log_gamma", "judge_index")}

    @staticmethod
    def _scale(u, cells):
        return pt.exp(u["log_gamma"])

    def _contrast_inputs(self) -> dict[str, Local]:
        """The local values the judge's contrast of the two items reads."""
        inputs = dict(SCORE_PAIR)
        if self.discrimination is not None:
            inputs.update(self._scale_inputs())
        return inputs

    def _contrast(self, u, cells):
        """γ_k(s_a − s_b) (s_a − s_b for the pooled model)."""
        d = u["score_a"] - u["score_b"]
        return d if self.discrimination is None else self._scale(u, cells) * d

    def predictors(self, data):
        _, by = self._per_judge(data)
        inputs = self._contrast_inputs()
        if self.position_bias:
            inputs["delta"] = Local("delta", by)
        contrast = self._contrast

        def linear_predictor(u, cells):
            """d = the judge's contrast of a and b [+ δ_k x]."""
            d = contrast(u, cells)
            return d + _position(u, cells) if "delta" in u else d

        out = {"d": with_style(Predictor(inputs, linear_predictor, linear=self.discrimination is None), data, by)}
        if self.ties in TIE_LINKS:
            out["h"] = Predictor({"eta": Local("eta", by)}, lambda u, cells: u["eta"], linear=True)
        return out

    def signed_counterpart(self):
        return SignedJudgeAware(ties=self.ties, position_bias=self.position_bias)

    def reported(self):
        names = ["score"]
        if self.discrimination == "positive":
            names += ["gamma", "log_gamma"]
        elif self.discrimination == "signed":
            names.append("gamma")
        if self.position_bias:
            names.append("delta")
        if self.ties in TIE_LINKS:
            names.append("eta")
        return tuple(names)

    def findings(self, data, point, draws):
        """Judges whose discrimination γ_k these data pin down only within an order of magnitude
        (:mod:`bayesrank.model.weak`), named with the interval of γ_k from its log scale."""
        if self.discrimination != "positive":
            return Findings()
        return Findings(warnings=_weak_discriminations(data.judges, draws))


@dataclass(frozen=True)
class BTL(JudgeAware):
    """Pooled Bradley–Terry–Luce baseline: the judge-aware model with γ_k ≡ 1.

    P(a ≻ b | k) = σ(s_a − s_b [+ δ_k x]), Σ s = 0: every judge's verdicts count the same
    (paper's "unweighted" model). Judge columns are optional; with them, ``position_bias``
    and ``ties="davidson"`` still use per-judge δ_k / η_k.
    """

    name = "btl"
    scale_note = "pooled BTL: 400 Elo points = odds 10:1 of winning (ties as the model treats them)"
    discrimination = None

    def _discrimination(self, data, prior):
        pass

    def signed_counterpart(self):
        return None


@dataclass(frozen=True)
class SignedJudgeAware(JudgeAware):
    """Judge-aware BTL with a signed sensitivity: σ(γ_k(s_a − s_b) [+ δ_k x]), γ_k ∈ ℝ, Σγ = K.

    The HJA paper's rank-0 model. A judge with γ_k ≤ 0 is uninformative or anti-aligned with
    the consensus; the positive judge-aware model has no MLE then (:func:`bayesrank.model.judge_aware.judge_existence`).
    """

    name = "judge-aware-signed"
    scale_note = "signed judge-aware: d = γ_k(s_a − s_b), Σγ = K; 400 points = odds 10:1 for a judge with γ = 1"
    discrimination = "signed"

    def _discrimination(self, data, prior):
        # γ = 1 + a zero-sum vector: Σγ = K exactly, γ linear in the free coordinates
        offset = zero_sum_scores("gamma_offset", "judge", prior, self.priors.log_gamma)
        pm.Deterministic("gamma", 1.0 + offset, dims="judge")

    def _scale_inputs(self):
        return {"gamma": Local("gamma", "judge_index")}

    @staticmethod
    def _scale(u, cells):
        return u["gamma"]

    def signed_counterpart(self):
        return None


@dataclass(frozen=True)
class JudgeAwareCovariate(JudgeAware):
    """Judge-aware BTL with γ_k(z) = exp(α_k + β_k z) (judge-aware paper, App. F.6).

    z is a per-cell context covariate of the data (e.g. the standardised log question
    length, :func:`bayesrank.data.standardized_log_length`, read with ``covariates=[...]``).
    Normalisation (Cor. F.2): Σ s = 0 and Σ α = 0; β is not centred. Identified when z takes
    at least two distinct values (Thm F.1). The paper gives no asymptotic theory for this
    extension; the Wald intervals are the usual MLE ones. Reported: ``score``, ``gamma``
    (= e^{α_k}, γ at z = 0), ``log_gamma`` (α), ``beta`` [, ``delta``, ``eta``]. Priors for
    NUTS: β_k ~ Normal(0, ``priors.log_gamma``).

    Parameters
    ----------
    covariate : str, optional
        Name of the data's covariate column (default: the data's only covariate).
    """

    covariate: str | None = field(default=None, metadata={
        "help": "the data's covariate column z in gamma_k(z) = exp(alpha_k + beta_k z) (default: the only one)"})
    name = "judge-aware-covariate"

    def _column(self, data) -> int:
        names = list(data.covariate_names)
        if not names:
            raise DataError(
                "the covariate model needs a covariate per comparison: read the records with "
                "covariates=[column] (CLI: --covariates COLUMN)."
            )
        if self.covariate is None:
            if len(names) > 1:
                raise ModelSpecError(f"the data have covariates {names}; choose one with covariate=.")
            return 0
        if self.covariate not in names:
            raise ModelSpecError(f"covariate {self.covariate!r} is not among the data's covariates {names}.")
        return names.index(self.covariate)

    def prepare(self, data):
        z = data.covariates[:, self._column(data)] if data.covariates is not None else None
        if z is None or np.unique(z).size < 2:
            raise DataError("the covariate takes a single value: β is not identified (Thm F.1 needs two).")
        return super().prepare(data)

    def variables(self, data, prior):
        super().variables(data, prior)
        free_real("beta", prior, self.priors.log_gamma, dims="judge")

    def predictors(self, data):
        column = self._column(data)
        out = super().predictors(data)
        d = out["d"]

        def linear_predictor(u, cells):
            """d = exp(α_k + β_k z)(s_a − s_b) [+ δ_k x]."""
            z = cells["covariates"][:, column]
            diff = pt.exp(u["log_gamma"] + u["beta"] * z) * (u["score_a"] - u["score_b"])
            return diff + _position(u, cells) if "delta" in u else diff

        out["d"] = with_style(Predictor({**{k: v for k, v in d.inputs.items() if k != "style"},
                                          "beta": Local("beta", "judge_index")}, linear_predictor),
                              data, "judge_index")
        return out

    def signed_counterpart(self):
        return None

    def reported(self):
        names = list(super().reported())
        names.insert(3, "beta")
        return tuple(names)

    def findings(self, data, point, draws):
        """As the judge-aware model's, and the judges whose covariate effect β_k these data do not
        identify: a judge whose records carry one value of z (Thm F.1 needs two per judge), or
        whose factor e^{β_k} per unit of z is unknown within an order of magnitude."""
        found = super().findings(data, point, draws)
        return Findings(warnings=found.warnings + _weak_covariate_effects(
            data, data.covariates[:, self._column(data)], draws), hidden=found.hidden,
            diagnostics=found.diagnostics)


def _weak_discriminations(judges, draws) -> list[str]:
    """One sentence naming the judges whose γ_k interval spans an order of magnitude or more."""
    bounds = weak.log_intervals(draws, "log_gamma")
    if bounds is None:
        return []
    lo, hi = bounds
    named = np.flatnonzero(weak.wide(lo, hi))
    if named.size == 0:
        return []
    listed = "; ".join(f"{judges[k]!r}: {np.exp(lo[k]):.3g} to {np.exp(hi[k]):.3g}, a factor of "
                       f"{np.exp(hi[k] - lo[k]):.0f}" for k in named)
    return [f"the discrimination γ of {_judges([judges[k] for k in named])} is weakly identified: its "
            f"{weak.LEVEL:.0%} interval spans an order of magnitude or more ({listed}). These data say "
            "how much such a judge's verdicts count only within that range; read γ's interval on the log scale "
            "(lower_log, upper_log — the symmetric "
            "interval on γ's own scale can run below zero), collect more of its verdicts, or compare "
            "with the pooled 'btl' model (γ ≡ 1)."]


def _weak_covariate_effects(data: Comparisons, z: np.ndarray, draws) -> list[str]:
    """Sentences naming the judges whose covariate effect β_k is not identified: one value of z
    in their records, or a factor e^{β_k} per unit of z unknown within an order of magnitude."""
    judge = np.asarray(data.judge)
    single = [k for k in range(data.n_judges) if np.unique(z[judge == k]).size < 2]
    out = []
    if single:
        out.append(f"the covariate's effect β on {_judges([data.judges[k] for k in single])} is not "
                   "identified: the records carry a single value of the covariate per such judge (Thm "
                   "F.1 needs two), so its β is a number the data do not determine; fit without the "
                   "covariate or give these judges records that vary it.")
    bounds = weak.log_intervals(draws, "beta")
    if bounds is None:
        return out
    lo, hi = bounds
    named = [k for k in np.flatnonzero(weak.wide(lo, hi)) if k not in single]
    if named:
        listed = "; ".join(f"{data.judges[k]!r}: β from {lo[k]:.3g} to {hi[k]:.3g}, γ times "
                           f"{np.exp(lo[k]):.3g} to {np.exp(hi[k]):.3g}"
                           + (", sign not determined" if lo[k] < 0 < hi[k] else "") for k in named)
        out.append(f"the covariate's effect β on {_judges([data.judges[k] for k in named])} is not "
                   "identified by these data: per unit of the covariate, the factor by which γ changes "
                   f"is unknown within an order of magnitude ({weak.LEVEL:.0%} intervals: {listed}). "
                   "Read no dependence on the covariate into these judges' fit; collect records that "
                   "vary it, or fit the judge-aware model without it.")
    return out


def _judges(names) -> str:
    """``judge 'x'`` or ``judges 'x', 'y'``."""
    return ("judge " if len(names) == 1 else "judges ") + ", ".join(repr(str(n)) for n in names)


def judge_existence(judges, gamma, signed, gamma_floor: float = GAMMA_FLOOR) -> dict:
    """Does the judge-aware MLE exist, given the positive fit and the signed one?

    The constrained MLE (γ_k > 0, Σ log γ = 0) does not exist when a judge is uninformative
    or anti-aligned with the consensus: its γ_k → 0, the other γ's → ∞ and ŝ → 0 while the
    products γ_k(s_i − s_j) stay finite. Two independent signals:

    1. the signed fit (:class:`SignedJudgeAware`, Σγ = K) gives γ_k ≤ 0 for the judge;
    2. the positive fit drives γ̂_k below ``gamma_floor`` (an optimizer-path value).

    Parameters
    ----------
    judges : sequence of str
    gamma : ndarray
        γ̂ of the positive fit at the optimiser's point.
    signed : ndarray
        γ̂ of the signed fit.
    gamma_floor : float

    Returns
    -------
    dict
        ``mle_exists``, ``degenerate_judges`` (names), ``signed_sensitivity`` (judge → γ_k of
        the signed fit), ``warnings`` (sentences) and ``recommendation`` (or None).
    """
    gamma, signed = np.asarray(gamma, dtype=float), np.asarray(signed, dtype=float)
    bad = [name for k, name in enumerate(judges) if signed[k] <= 0 or gamma[k] < gamma_floor]
    out = {"mle_exists": not bad, "degenerate_judges": bad, "recommendation": None,
           "signed_sensitivity": {name: float(c) for name, c in zip(judges, signed)}, "warnings": []}
    if bad:
        detail = ", ".join(f"'{n}' (signed sensitivity {signed[list(judges).index(n)]:+.3f})" for n in bad)
        out["warnings"].append(
            f"the judge-aware maximum-likelihood estimate does not exist: {detail} "
            f"{'is' if len(bad) == 1 else 'are'} uninformative or anti-aligned with the other "
            "judges, so γ → 0 for them while Σ log γ = 0 sends the other γ's to infinity and "
            "the scores to 0; no estimates are reported (optimizer-path values are not estimates)"
        )
        out["recommendation"] = (
            f"drop the judge{'s' if len(bad) > 1 else ''} {', '.join(repr(n) for n in bad)} "
            "(Comparisons.without_judges), or fit with priors on log γ (method='nuts'), or use "
            "a model with a signed judge sensitivity (judge-aware-signed)"
        )
        return out
    low = [n for k, n in enumerate(judges) if gamma[k] < 0.1]
    if low:
        out["warnings"].append(
            f"judges with very low discrimination (γ̂ < 0.1): {', '.join(low)}; their verdicts "
            "carry almost no information and make the information matrix ill-conditioned"
        )
    return out


__all__ = [
    "BTL", "GAMMA_FLOOR", "JudgeAware", "JudgeAwareCovariate", "JudgePriors", "SignedJudgeAware", "TIE_HANDLING",
    "judge_existence"
]
