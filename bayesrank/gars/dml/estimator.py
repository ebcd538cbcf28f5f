"""DMLRank: the cross-fitted one-step estimator of a GARS with its efficient influence function.

For contexts x_i (prompts) with labelled ordered pairs S_i,jk = 1 and labels y_i,jk
(Frauen et al., "Nonparametric LLM Evaluation from Preference Data", Thm 5.1, eqs. 9–12):

    φ_i = F(μ̂(x_i)) + Σ_{j≠k} (S_i,jk / π̂_jk(x_i)) J_jk(μ̂(x_i)) (y_i,jk − μ̂_jk(x_i)),
    θ̂ = mean_i φ_i,    Σ̂ = mean_i (φ_i − θ̂)(φ_i − θ̂)ᵀ,    se = √(diag Σ̂ / n),

with μ̂ and π̂ fitted on the other folds (cross-fitting over contexts). The correction term is
a Jacobian-vector product of F (forward-mode automatic differentiation of the same
functional as everywhere else, :func:`bayesrank.gars.jvp`); the full Jacobian is never formed.
Σ̂ has rank K − 1 (every score sums to a constant), so tests use its pseudo-inverse.
Simultaneous intervals θ̂_j ± c·se_j: c the (1 − α) quantile of max_j |Z_j|, Z ~ N(0, R̂)
(Gaussian max, R̂ the correlation of Σ̂, sampled through its eigen-decomposition), or
Bonferroni's Φ⁻¹(1 − α/(2K)).

This is a **frequentist** estimator: its intervals are confidence intervals from the
asymptotic normality of θ̂, not posterior intervals, and nothing here is a Bayesian fit.

The plug-in θ̂_PI = mean_i F(μ̂(x_i)) with its naive standard error sd_i F(μ̂(x_i))/√n is
reported beside it: the paper's point is that it has no valid interval.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import chi2, norm

from bayesrank.errors import BayesrankError, ModelSpecError
from bayesrank.gars.dml.design import Policy, optimal_policy, variance_weights
from bayesrank.gars.dml.learners import DEFAULT_LEARNER
from bayesrank.gars.dml.nuisance import OutcomeModel, PropensityModel, check_learner
from bayesrank.gars.dml.records import Records, read_records
from bayesrank.gars.scores import functional, jvp, scheme_of
from bayesrank.inference.tree import plain
from bayesrank.results.estimates import check_level

#: Outcome-model rows predicted per batch (memory stays bounded whatever the number of contexts).
ROWS_PER_BATCH = 400_000
#: Monte-Carlo draws for the Gaussian-max critical value (the paper's B).
N_MC = 100_000
INFERENCE = ("frequentist: a cross-fitted one-step (AIPW-type) estimator with efficient-influence-function "
             "confidence intervals; not a posterior")


def max_critical(cov: np.ndarray, level: float, n_mc: int = N_MC, random_seed=0) -> float:
    """(level) quantile of max_j |Z_j| for Z ~ N(0, R), R the correlation matrix of ``cov``
    (singular allowed: sampled through the eigen-decomposition)."""
    sd = np.sqrt(np.clip(np.diag(cov), 0, None))
    ok = sd > 0
    if not ok.any():
        return float(norm.ppf(1 - (1 - level) / 2))
    R = cov[np.ix_(ok, ok)] / np.outer(sd[ok], sd[ok])
    vals, vecs = np.linalg.eigh(0.5 * (R + R.T))
    root = vecs * np.sqrt(np.clip(vals, 0, None))
    z = np.random.default_rng(random_seed).standard_normal((n_mc, ok.sum())) @ root.T
    return float(np.quantile(np.abs(z).max(axis=1), level))


def bonferroni_critical(d: int, level: float) -> float:
    """The two-sided normal critical value of ``d`` intervals at joint level ``level`` by Bonferroni."""
    return float(norm.ppf(1 - (1 - level) / (2 * d)))


@dataclass(frozen=True, eq=False)
class DMLResult:
    """DMLRank estimates (frequentist; see the module docstring).

    Attributes
    ----------
    score, scheme : str
    items : tuple of str
    estimate : ndarray
        θ̂ ``(K,)``.
    cov : ndarray
        Σ̂/n, the covariance of θ̂ (rank K − 1).
    influence : ndarray
        ``(n, K)`` centred influence values φ̂_i − θ̂.
    plugin, plugin_cov : ndarray
        The plug-in estimate and its naive covariance.
    critical, critical_bonferroni : float
        Multipliers of the simultaneous intervals (Gaussian max; Bonferroni).
    level : float
    n_contexts, n_labels : int
    diagnostics : dict
        Cross-fitting folds, held-out log-loss of the outcome model per fold, the smallest
        propensity, the share clipped and the effective sample size of the weights 1/π̂.
    warnings : tuple of str
    policy : Policy or None
        The A-optimal labelling policy for the same contexts, when a budget was given.
    """

    score: str
    scheme: str
    items: tuple[str, ...]
    estimate: np.ndarray
    cov: np.ndarray
    influence: np.ndarray
    plugin: np.ndarray
    plugin_cov: np.ndarray
    critical: float
    critical_bonferroni: float
    level: float
    n_contexts: int
    n_labels: int
    diagnostics: dict = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    policy: Policy | None = None
    inference: str = INFERENCE

    @property
    def se(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.cov), 0, None))

    @property
    def plugin_se(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.plugin_cov), 0, None))

    def table(self) -> pd.DataFrame:
        """``rank, name, score, se, lower, upper`` (simultaneous, Gaussian max),
        ``lower_bonferroni, upper_bonferroni``, ``rank_lower, rank_upper`` (ranks compatible
        with the simultaneous intervals), ``plugin, plugin_se``; best first."""
        se = self.se
        lower, upper = self.estimate - self.critical * se, self.estimate + self.critical * se
        # an item's rank interval: the items surely above it, and those not surely below
        above = (lower[None, :] > upper[:, None]).sum(axis=1)
        not_below = (upper[None, :] >= lower[:, None]).sum(axis=1)
        frame = pd.DataFrame({
            "name": self.items, "score": self.estimate, "se": se, "lower": lower, "upper": upper,
            "lower_bonferroni": self.estimate - self.critical_bonferroni * se,
            "upper_bonferroni": self.estimate + self.critical_bonferroni * se,
            "rank_lower": above + 1, "rank_upper": not_below, "plugin": self.plugin, "plugin_se": self.plugin_se})
        frame = frame.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
        frame.insert(0, "rank", np.arange(1, len(frame) + 1))
        return frame

    def wald_test(self, theta0) -> dict:
        """χ² test of θ = θ0 with the pseudo-inverse of the rank-deficient covariance."""
        diff = self.estimate - np.asarray(theta0, dtype=float)
        rank = np.linalg.matrix_rank(self.cov, tol=1e-10 * np.abs(self.cov).max())
        stat = float(diff @ np.linalg.pinv(self.cov, rcond=1e-10) @ diff)
        return {"statistic": stat, "df": int(rank), "p_value": float(chi2.sf(stat, rank))}

    def to_json(self) -> dict:
        """The CLI's JSON: settings, ``items`` (``name, score, se, lower, upper, rank`` and the
        rest of :meth:`table`), diagnostics, warnings and, with a budget, ``policy`` (the
        pairs to label, highest probability first)."""
        out = {"estimator": "DMLRank", "inference": self.inference, "score": self.score, "scheme": self.scheme,
               "level": self.level, "interval": "simultaneous (Gaussian max)", "critical": self.critical,
               "critical_bonferroni": self.critical_bonferroni, "n_items": len(self.items),
               "n_contexts": self.n_contexts, "n_labels": self.n_labels,
               "items": self.table().to_dict("records"), "diagnostics": self.diagnostics,
               "warnings": list(self.warnings)}
        if self.policy is not None:
            out["policy"] = {"budget": self.policy.budget, "lambda": self.policy.lam,
                             "expected_cost": self.policy.expected_cost, "floor": self.policy.floor,
                             "pairs": self.policy.table.to_dict("records")}
        return plain(out)


@dataclass(frozen=True, eq=False)
class CrossFit:
    """Cross-fitted nuisances: per fold, the outcome model trained on the other folds, and
    the (known or estimated, clipped) labelling propensity of every labelled comparison."""

    records: Records
    fold: np.ndarray
    outcome: tuple
    propensity: np.ndarray
    diagnostics: dict
    warnings: tuple[str, ...]

    def batches(self, rows_per_batch: int = ROWS_PER_BATCH):
        """Yield ``(contexts, μ̂ (b, K, K, C), labelled rows)`` for the contexts of each fold in
        batches, μ̂ from the model that did not see them; memory bounded by the batch."""
        records = self.records
        K, C = records.n_items, records.n_categories
        j, k = np.nonzero(~np.eye(K, dtype=bool))
        label_fold = self.fold[records.ctx]
        size = max(1, rows_per_batch // len(j))
        for v, model in enumerate(self.outcome):
            test = np.flatnonzero(self.fold == v)
            labels = np.flatnonzero(label_fold == v)
            labels = labels[np.argsort(records.ctx[labels], kind="stable")]
            for start in range(0, len(test), size):
                ctx = test[start:start + size]
                mu = np.zeros((len(ctx), K, K, C))
                mu[:, j, k] = model.predict(records, np.repeat(ctx, len(j)), np.tile(j, len(ctx)),
                                            np.tile(k, len(ctx))).reshape(len(ctx), len(j), C)
                lo, hi = np.searchsorted(records.ctx[labels], [ctx[0], ctx[-1] + 1])
                yield ctx, mu, labels[lo:hi]


def crossfit(records: Records, *, learner=DEFAULT_LEARNER, propensity_learner=None, n_folds: int = 5,
             pi_clip: float = 1e-3, random_seed: int = 0) -> CrossFit:
    """Fit the nuisances of :func:`dmlrank` by cross-fitting over contexts (its parameters)."""
    if isinstance(pi_clip, bool) or not isinstance(pi_clip, (int, float)) or not 0 < pi_clip < 1:
        raise ModelSpecError(f"pi_clip is the lowest labelling propensity kept, a number in (0, 1), got {pi_clip!r}.")
    warnings = []
    if records.n_labels == 0:
        raise BayesrankError("no labelled comparison: DMLRank needs human labels (rows with a winner).")
    if records.X.shape[1] == 0 and records.judge is None and learner == DEFAULT_LEARNER:
        learner, n_folds = "cell-means", 1
    check_learner(learner)
    propensity_learner = learner if propensity_learner is None else propensity_learner
    check_learner(propensity_learner)
    if not isinstance(n_folds, int) or n_folds < 1:
        raise BayesrankError(f"n_folds must be a positive integer, got {n_folds!r}.")
    if n_folds > records.n_contexts:
        raise BayesrankError(f"{n_folds} folds for {records.n_contexts} contexts; use fewer folds.")
    if n_folds == 1 and learner != "cell-means":
        warnings.append("no cross-fitting (n_folds=1): the outcome model is evaluated on the contexts it was "
                        "trained on, which the estimator's guarantees do not cover.")
    n = records.n_contexts
    fold = np.random.default_rng(random_seed).permutation(n) % n_folds
    label_fold = fold[records.ctx]
    models, raw_pi, losses = [], np.zeros(records.n_labels), []
    for v in range(n_folds):
        held = label_fold == v
        train = np.flatnonzero(~held) if n_folds > 1 else np.arange(records.n_labels)
        model = OutcomeModel(learner, records.n_categories, random_seed + v).fit(records, train)
        models.append(model)
        test = np.flatnonzero(held)
        args = records.ctx[test], records.first[test], records.second[test]
        if records.propensity is not None:
            raw_pi[test] = records.propensity[test]
        else:
            contexts = np.flatnonzero(fold != v) if n_folds > 1 else np.arange(n)
            raw_pi[test] = PropensityModel(propensity_learner, random_seed + v).fit(records, contexts).predict(
                records, *args)
        if n_folds > 1 and test.size:
            p = model.predict(records, *args)[np.arange(test.size), records.label[test]]
            losses.append(-np.log(np.clip(p, 1e-15, None)))
    clipped = float(np.mean(raw_pi < pi_clip))
    pi = np.clip(raw_pi, pi_clip, 1.0)
    w = 1.0 / pi
    diagnostics = {"n_folds": n_folds, "learner": learner if isinstance(learner, str) else type(learner).__name__,
                   "propensity": "known" if records.propensity is not None else "estimated",
                   "min_propensity": float(raw_pi.min()), "clipped_share": clipped,
                   "weight_ess": float(w.sum() ** 2 / (w**2).sum()), "max_weight": float(w.max())}
    if losses:
        diagnostics["outcome_log_loss"] = float(np.concatenate(losses).mean())
    if clipped > 0:
        warnings.append(f"{100 * clipped:.1f}% of the labelling propensities were below {pi_clip:g} and clipped; "
                        "the estimate leans on few labels there (positivity is weak).")
    return CrossFit(records, fold, tuple(models), pi, diagnostics, tuple(warnings))


def dmlrank(data, score: str = "borda", scheme="win-loss-tie", **kwargs) -> DMLResult:
    """DMLRank estimate of a GARS with simultaneous confidence intervals.

    Parameters
    ----------
    data : Records, DataFrame, str or Path
        Contexts and labelled comparisons (:mod:`bayesrank.gars.dml.records`).
    score : {"borda", "bt", "rank-centrality"}
    scheme : str or Scheme
        Tie weights (:data:`bayesrank.gars.SCHEMES`).
    features, judge_probs, context, propensity : column names
        See :func:`~bayesrank.gars.dml.records.read_records`. ``propensity``: known labelling
        probabilities; otherwise they are estimated by ``propensity_learner``.
    learner, propensity_learner
        :mod:`bayesrank.gars.dml.nuisance` (default :data:`~bayesrank.gars.dml.learners.DEFAULT_LEARNER`,
        ``"spline-logistic"``). Without
        features or judge probabilities the default becomes ``"cell-means"`` with no
        cross-fitting: the saturated model's MLE and delta method.
    n_folds : int
        Cross-fitting folds over contexts (default 5; 1 fits and evaluates on the same contexts).
    pi_clip : float
        Propensities are clipped below at this value (default 1e-3).
    level : float
        Simultaneous coverage of the intervals (default 0.95).
    budget, cost, floor
        With a budget, also the A-optimal policy (:func:`~bayesrank.gars.dml.design.optimal_policy`)
        for these contexts, from the cross-fitted μ̂ (floor default 0.01).
    n_mc : int
        Draws for the Gaussian-max critical value.
    random_seed : int
        Folds, learners and the Monte-Carlo critical value.
    """
    return dmlrank_scores(data, (score,), scheme, **kwargs)[score]


def dmlrank_scores(data, scores=("borda", "bt", "rank-centrality"), scheme="win-loss-tie", *, features=(),
                   judge_probs=(), context: str = "context", propensity: str | None = None,
                   learner=DEFAULT_LEARNER, propensity_learner=None, n_folds: int = 5, pi_clip: float = 1e-3,
                   level: float = 0.95, budget: float | None = None, cost=1.0, floor: float = 0.01,
                   n_mc: int = N_MC, random_seed: int = 0) -> dict[str, DMLResult]:
    """:func:`dmlrank` of several scores with one set of cross-fitted nuisances (the same
    parameters), ``{score: DMLResult}``."""
    check_level(level)
    scheme = scheme_of(scheme)
    for score in scores:
        if score not in ("borda", "bt", "rank-centrality"):
            raise BayesrankError(f"unknown score {score!r}; use one of borda, bt, rank-centrality.")
    records = data if isinstance(data, Records) else read_records(
        data, features=features, judge_probs=judge_probs, context=context, propensity=propensity,
        n_categories=scheme.n_categories)
    if records.n_categories != scheme.n_categories:
        raise BayesrankError(f"the records have {records.n_categories} outcome categories; tie weights "
                             f"{scheme.name!r} need {scheme.n_categories}.")
    cf = crossfit(records, learner=learner, propensity_learner=propensity_learner, n_folds=n_folds,
                  pi_clip=pi_clip, random_seed=random_seed)
    n, K, C = records.n_contexts, records.n_items, records.n_categories
    phi = {s: np.zeros((n, K)) for s in scores}
    plug = {s: np.zeros((n, K)) for s in scores}
    a = {s: np.zeros((n, K, K)) for s in scores} if budget is not None else None
    onehot = records.one_hot()
    for ctx, mu, labels in cf.batches():
        local = np.searchsorted(ctx, records.ctx[labels])
        f, s_ = records.first[labels], records.second[labels]
        tangent = np.zeros_like(mu)
        np.add.at(tangent, (local, f, s_), (onehot[labels] - mu[local, f, s_]) / cf.propensity[labels, None])
        for score in scores:
            value = functional(mu, score, scheme)
            plug[score][ctx] = value
            phi[score][ctx] = value + jvp(mu, tangent, score, scheme)
            if a is not None:
                step = max(1, 2_000_000 // (K**3 * C))
                for i in range(0, len(ctx), step):
                    a[score][ctx[i:i + step]] = variance_weights(mu[i:i + step], score, scheme)
    out = {}
    for score in scores:
        estimate = phi[score].mean(axis=0)
        influence = phi[score] - estimate
        cov = influence.T @ influence / n**2
        policy = None
        if budget is not None:
            labelled = np.zeros((n, K, K), dtype=bool)
            labelled[records.ctx, records.first, records.second] = True
            policy = optimal_policy(a[score], budget, cost=cost, floor=floor, items=records.items,
                                    context_ids=records.context_ids, labelled=labelled)
        out[score] = DMLResult(
            score=score, scheme=scheme.name, items=records.items, estimate=estimate, cov=cov, influence=influence,
            plugin=plug[score].mean(axis=0), plugin_cov=np.cov(plug[score], rowvar=False) / n,
            critical=max_critical(cov, level, n_mc, random_seed), critical_bonferroni=bonferroni_critical(K, level),
            level=level, n_contexts=n, n_labels=records.n_labels, diagnostics=cf.diagnostics,
            warnings=cf.warnings, policy=policy)
    return out


__all__ = [
    "CrossFit", "DMLResult", "INFERENCE", "N_MC", "ROWS_PER_BATCH", "bonferroni_critical", "crossfit", "dmlrank",
    "dmlrank_scores", "max_critical"
]
