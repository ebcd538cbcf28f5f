r"""Random effects by cluster: each user's (prompt's, judge's) own scores, partially pooled.

When the votes come in clusters — one user casts many, one prompt is judged by many pairs —
the comparisons of a cluster share what the cluster makes of the items. The random-effects
model writes that down: cluster g's scores are the population's plus a deviation,

.. math::

    s_{g,i} = s_i + u_{g,i}, \qquad u_{g,·} \sim \mathrm{ZeroSumNormal}(τ) \text{ independently},

with d = s_{g,a} − s_{g,b} (+ the base framework's style terms) in a comparison of cluster g,
and the base framework's link and tie thresholds (Bradley–Terry, Rao–Kupper, Davidson). τ
says how much the clusters disagree (on the logit scale of the scores), s is the population
board, and s + u_g a cluster's own board, shrunk towards s by as much as its few comparisons
cannot tell it apart. Each u_g sums to zero over the items (the scores are only defined up to a
constant), so the pooled board carries the population's level.

Two ways to fit it:

* ``method="nuts"``: τ ~ HalfNormal(``priors.spread``), non-centred (u = τ δ, δ ~
  ZeroSumNormal(1)), every quantity's posterior, τ's uncertainty included.
* ``method="map"`` (:mod:`bayesrank.inference.laplace`): τ by maximum marginal likelihood,
  the effects integrated out by the Laplace approximation, with (s, u) at their joint mode
  given τ — the approximation of lme4's ``glmer(nAGQ = 0)`` (Bates et al. 2015, §5) —, or τ
  fixed by the user (``spread=``). Intervals are the Laplace ones: the inverse Hessian of the
  penalised log-likelihood, which integrates over u but takes τ̂ as known. Fast, and with many
  clusters close to NUTS; with few clusters NUTS says more about τ.

The model's size grows with clusters × items: it suits tens to a few thousand clusters (users,
prompts, judges); for a log of 100,000 users the cluster-robust sandwich
(``intervals="sandwich", cluster=...``) allows for their dependence at the cost of one pass.

The cells are the records aggregated by cell × cluster (read with ``cluster=COLUMN``); the
cluster takes the judge's place in them, so the base must be a framework of paired scores
without judges.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError, ModelSpecError
from bayesrank.model.framework import Framework, Local, Predictor, Priors
from bayesrank.model.paired import BradleyTerry, Davidson, RaoKupper
from bayesrank.model.structures import zero_sum_scores
from bayesrank.runtime.lazy import lazy_module

pm = lazy_module("pymc")
pt = lazy_module("pytensor.tensor")

#: Frameworks whose scores can get random effects.
BASES = (BradleyTerry, RaoKupper, Davidson)
#: The random effects u (cluster × item) and each cluster's scores s + u.
EFFECT, CLUSTER_SCORE = "cluster_effect", "cluster_score"


@dataclass(frozen=True)
class RandomEffectsPriors(Priors):
    """Priors of the random-effects model for NUTS (the base framework's own priors hold for its
    variables).

    Attributes
    ----------
    spread : float
        ``HalfNormal(spread)`` on τ, the scale of the clusters' deviations (logit scale).
    """

    spread: float = 0.5


def _with_effect(inner):
    """A base linear predictor plus the cluster's deviation: d + u_{g,a} − u_{g,b}."""
    def predictor(u, cells):
        rows = pt.arange(u["effect"].shape[0])
        return inner(u, cells) + u["effect"][rows, cells["item_a"]] - u["effect"][rows, cells["item_b"]]
    return predictor


@dataclass(frozen=True)
class RandomEffects(Framework):
    """A base framework's scores with a partially pooled deviation per cluster (module docstring).

    Parameters
    ----------
    base : BradleyTerry, RaoKupper or Davidson
        The framework whose scores get random effects (without a Thurstonian covariance).
    cluster : str
        The record column of the clusters (user, prompt, conversation, judge): the data must
        be read with it (``load(..., cluster=...)``; :func:`bayesrank.fit` reads it itself).
    spread : float, optional
        τ fixed at this value on the MAP path; default: learnt (Laplace marginal likelihood).
    priors : RandomEffectsPriors

    Examples
    --------
    >>> import bayesrank as br
    >>> model = br.RandomEffects(br.BradleyTerry(ties="drop"), cluster="question_id")
    >>> fit = br.fit(model, "mtbench-judges")
    >>> effects = fit.random_effects()
    >>> effects.n_clusters, round(effects.spread, 2), round(effects.spread_lower, 2), round(effects.spread_upper, 2)
    (80, 0.72, 0.66, 0.8)
    """

    base: Framework = field(default_factory=BradleyTerry, metadata={
        "help": "the framework whose scores get random effects, as framework[:option=value,...] (bt, "
                "rao-kupper, davidson)", "spec": True})
    cluster: str = field(default="", metadata={"help": "the column of the clusters (--cluster)", "cli": False})
    spread: float | None = field(default=None, metadata={
        "help": "random effects: their scale tau fixed at this value on the MAP path (default: learnt by "
                "the Laplace marginal likelihood)"})
    priors: RandomEffectsPriors = field(default_factory=RandomEffectsPriors, kw_only=True)

    name = "random-effects"

    def __post_init__(self):
        if not isinstance(self.base, BASES):
            raise ModelSpecError(f"RandomEffects takes a BradleyTerry, RaoKupper or Davidson base, got "
                                 f"{type(self.base).__name__}.")
        if self.base.k_cov is not None:
            raise ModelSpecError("RandomEffects takes a base without a Thurstonian covariance (k_cov=None): the "
                                 "deviations are of the scores on the logit scale.")
        if not isinstance(self.cluster, str) or not self.cluster.strip():
            raise ModelSpecError("RandomEffects needs cluster=COLUMN, the record column of the clusters (user, "
                                 "prompt, judge).")
        if self.spread is not None and (isinstance(self.spread, bool) or not isinstance(self.spread, (int, float))
                                        or not 0 < self.spread < np.inf):
            raise ModelSpecError(f"spread must be None (learnt) or a positive number, got {self.spread!r}.")

    # ------------------------------------------------------------------ what it is
    @property
    def link(self) -> str:
        return self.base.link

    @property
    def label(self) -> str:
        fixed = "" if self.spread is None else f", spread={self.spread:g}"
        return f"RandomEffects({self.base.label}, cluster={self.cluster!r}{fixed})"

    @property
    def scale_note(self) -> str:
        return f"population scores of {self.base.label}; {self.base.scale_note}"

    @property
    def score_meaning(self) -> str:
        return self.base.score_meaning

    def options(self) -> dict:
        return {"base": self.base.spec(), "cluster": self.cluster, "spread": self.spread}

    def outcome_map(self):
        return self.base.outcome_map()

    @property
    def default_intervals(self) -> str:
        """The Laplace intervals (the MAP path's only ones: the dependence is in the model)."""
        return "wald"

    def clusters(self) -> tuple[str, ...]:
        return (self.cluster,)

    def random_effects(self) -> dict[str, float | None]:
        return {EFFECT: None if self.spread is None else float(self.spread)}

    def reported(self):
        return (*self.base.reported(), "spread")

    def covariances(self):
        return self.base.covariances()

    # ------------------------------------------------------------------ data
    def prepare(self, data: Comparisons) -> Comparisons:
        """The cells by cell × cluster, the cluster in the judge's place, then the base's
        conventions (ties).

        Raises
        ------
        DataError
            Data read without the cluster column, a single cluster, or every cluster holding a
            single comparison (then nothing tells a cluster's deviation from chance).
        """
        if data.clusters is None:
            raise DataError(f"RandomEffects(cluster={self.cluster!r}) needs the records read with that column: "
                            f"bayesrank.load(..., cluster={self.cluster!r}) (CLI: --cluster {self.cluster}).")
        k = data.clusters.index(self.cluster)
        data.clusters.check(self.cluster)
        sizes = data.clusters.per_cluster(self.cluster)
        if np.all(sizes[sizes > 0] == 1):
            raise DataError(f"every cluster of {self.cluster!r} holds a single comparison: a cluster's own "
                            "deviation cannot be told from chance, so random effects are not identified; check the "
                            "column, or fit without random effects.")
        cell, code, counts = data.clusters.grouped(self.cluster)
        def pick(x):
            return None if x is None else x[cell]

        expanded = Comparisons(
            items=data.items, a=data.a[cell], b=data.b[cell], wins_a=counts[:, 0], wins_b=counts[:, 1],
            ties=counts[:, 2], ties_bothbad=np.zeros(cell.size), judges=data.clusters.levels[k], judge=code,
            first=pick(data.first), covariates=pick(data.covariates), covariate_names=data.covariate_names,
            contrasts=pick(data.contrasts), contrast_names=data.contrast_names, dropped=data.dropped,
            source=data.source, n_records=data.n_records, notes=data.notes)
        return self.base.prepare(expanded)

    def coords(self, data):
        coords = self.base.coords(data)
        coords["cluster"] = coords.pop("judge")
        return coords

    def initial_values(self, data):
        return self.base.initial_values(data)

    def structure_key(self, data):
        return self.base.structure_key(data)

    # ------------------------------------------------------------------ model
    def variables(self, data, prior):
        self.base.variables(data, prior)
        model = pm.modelcontext(None)
        if prior == "flat":
            effect = zero_sum_scores(EFFECT, ("cluster", "item"), "flat", 1.0)
        else:  # non-centred: NUTS explores small τ without a funnel
            spread = pm.HalfNormal("spread", sigma=self.priors.spread)
            offset = pm.ZeroSumNormal("cluster_offset", sigma=1.0, dims=("cluster", "item"))
            effect = pm.Deterministic(EFFECT, spread * offset, dims=("cluster", "item"))
        pm.Deterministic(CLUSTER_SCORE, model["score"][None, :] + effect, dims=("cluster", "item"))

    def predictors(self, data):
        out = dict(self.base.predictors(data))
        d = out["d"]
        out["d"] = Predictor({**d.inputs, "effect": Local(EFFECT, "judge_index")}, _with_effect(d.fn), d.linear,
                             d.constants)
        return out

    # ------------------------------------------------------------------ findings
    def boundaries(self, data, values):
        return self.base.boundaries(data, values)

    def findings(self, data, point, draws):
        return self.base.findings(data, point, draws)

    def identified(self, data, cells):
        return self.base.identified(data, cells)


__all__ = ["BASES", "CLUSTER_SCORE", "EFFECT", "RandomEffects", "RandomEffectsPriors"]
