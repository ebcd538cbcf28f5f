"""Generalised average ranking scores (GARS): Borda, Bradley–Terry projection, Rank Centrality.

A GARS is a known function F of the pairwise outcome probabilities μ_jkc = P(category c | item j shown first, item k
second), averaged over contexts: θ = E_X[F(μ(X))] (Frauen et al., "Nonparametric LLM Evaluation from Preference Data",
§4.2 and App. C). It is the common currency of this package: any fit (a Davidson model, a judge-aware model, a saturated
model of the raw counts) implies μ for every pair, and F turns it into scores on one scale, whatever the fit's native
parameters.

Every F is written once, in :func:`functional`, on array-namespace calls that NumPy and
PyTensor share (``xp`` is ``numpy`` or ``pytensor.tensor``): NumPy evaluates it directly and
its Jacobians are PyTensor's automatic derivatives of the same code (:func:`jacobian`,
:func:`jvp`).

Categories and weights (``Scheme``)
    μ has the categories ``win_first, win_second, tie[, both_bad]``. A scheme gives the credit
    w⁽¹⁾ of each category to the first item and w⁽²⁾ to the second; s⁽ⁱ⁾_jk = ⟨w⁽ⁱ⁾, μ_jk⟩ /
    ⟨n, μ_jk⟩ with a normaliser n that is 1 except for ``binary``, which drops ties
    (s = P(win)/P(win or loss)). Symmetrised over display order,
    s_jk = ½(s⁽¹⁾_jk + s⁽²⁾_kj): how much j beats k, position bias averaged out.

Scores (all: higher is better)
    ``borda``: F_j = mean over the opponents k of s_jk (average win rate; Σ F = K/2).
    ``bt``: the least-squares projection of the edge log-odds ℓ_jk = ½(logit s⁽¹⁾_jk +
    logit s⁽²⁾_kj) (j < k) onto score differences r_j − r_k, Σ r = 0 (Hodge rank; on the
    complete graph F = Bᵀℓ/K). Equal to the Bradley–Terry scores when the BT model holds.
    ``rank-centrality``: the stationary distribution of the walk that moves from i to j with
    probability ∝ s_ji (row-normalised, no self-loops, as in the paper; Σ F = 1).

On an incomplete comparison graph (raw counts that miss pairs) each F uses the observed pairs
only (Borda: mean over observed opponents; BT: projection on the observed edges; Rank
Centrality: walk on the observed graph); a warning says so, since these are then other
estimands than the complete-graph ones a model implies. :func:`from_data` (what
``bayesrank gars DATA`` runs) therefore uses the raw counts only when every pair was compared,
and otherwise the probabilities of a model fitted to the data (:func:`default_model`), which
covers every pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

import numpy as np
import pandas as pd
import pytensor
import pytensor.tensor as pt
import xarray as xr
from pytensor.gradient import jacobian as _pt_jacobian, pushforward
from scipy.stats import norm

from bayesrank.data import bothbad
from bayesrank.data.comparisons import FIRST_A, Comparisons
from bayesrank.data.load import load
from bayesrank.errors import BayesrankError, options_checked
from bayesrank.inference.information import outcome_jacobian
from bayesrank.inference.structure import structure_of
from bayesrank.inference.tree import plain
from bayesrank.model.framework import Framework
from bayesrank.model.paired import BradleyTerry, Davidson
from bayesrank.model.saturated import PairCounts, multinomial_covariance, pair_counts, posterior_concentration
from bayesrank.model.scoring import SCORES, Scheme, scheme_of
from bayesrank.results.estimates import check_level, draws as variable_draws, interval_kind, point, stored_covariance
from bayesrank.results.fit import Fit, fit as fit_framework
from bayesrank.results.io import framework_of, method_of, model_data_of
from bayesrank.runtime import progress


def default_model(data: Comparisons) -> Framework:
    """The model whose implied probabilities give the GARS of data that leave pairs uncompared:
    Davidson with factored ties (k_tie = 1, the package's reference model) when the data have
    ties, else Bradley–Terry."""
    return Davidson(k_tie=1) if data.ties.sum() > 0 else BradleyTerry()
#: s is clipped to [ε, 1 − ε] before the logit of the BT projection.
LOGIT_EPS = 1e-3
#: Contexts (or draws) per batch when evaluating F and its derivatives.
BATCH = 4096


def _check_score(score: str) -> str:
    if score not in SCORES:
        raise BayesrankError(f"unknown score {score!r}; use one of {', '.join(SCORES)}.")
    return score


@dataclass(frozen=True, eq=False)
class Graph:
    """Which unordered pairs a functional averages over (symmetric adjacency, zero diagonal)."""

    adjacency: np.ndarray

    @classmethod
    def complete(cls, n_items: int) -> Graph:
        return cls(1.0 - np.eye(n_items))

    @classmethod
    def of_pairs(cls, n_items: int, first, second) -> Graph:
        A = np.zeros((n_items, n_items))
        A[first, second] = A[second, first] = 1.0
        return cls(A)

    @property
    def n_items(self) -> int:
        return len(self.adjacency)

    @property
    def complete_graph(self) -> bool:
        return bool(np.all(self.adjacency + np.eye(self.n_items) > 0))

    @cached_property
    def degree(self) -> np.ndarray:
        return self.adjacency.sum(axis=1)

    @cached_property
    def upper(self) -> np.ndarray:
        """Edges j < k."""
        return np.triu(self.adjacency, 1)

    @cached_property
    def projector(self) -> np.ndarray:
        """(L + 11ᵀ/K)⁻¹ with L the graph Laplacian: maps an edge-flow divergence to the
        zero-sum least-squares potential (Bᵀ/K on the complete graph)."""
        K = self.n_items
        L = np.diag(self.degree) - self.adjacency
        M = L + np.ones((K, K)) / K
        if np.linalg.matrix_rank(L) < K - 1:
            raise BayesrankError("the comparison graph is not connected: GARS need every item linked to the others "
                                 "through compared pairs.")
        return np.linalg.inv(M)

    @cached_property
    def key(self) -> tuple:
        return (self.n_items, np.packbits(self.adjacency > 0).tobytes())


# ====================================================================== F, written once
def _solve(xp, M, b):
    """Solve M x = b for a batch of matrices and one vector b (the two libraries spell it differently)."""
    if xp is np:
        return np.linalg.solve(M, np.broadcast_to(b, M.shape[:-1])[..., None])[..., 0]
    return pt.linalg.solve(M, b, b_ndim=1)


def _credits(mu, scheme: Scheme, xp):
    """s⁽¹⁾ and s⁽²⁾: ``(..., K, K)`` credit to the first and the second item of each ordered pair."""
    w1, w2, n = (np.asarray(v, dtype=float) for v in (scheme.w1, scheme.w2, scheme.norm))
    if np.all(n == 1):  # Σ_c μ = 1
        return (mu * w1).sum(axis=-1), (mu * w2).sum(axis=-1)
    total = (mu * n).sum(axis=-1)
    total = xp.where(total > 0, total, 1.0)
    return (mu * w1).sum(axis=-1) / total, (mu * w2).sum(axis=-1) / total


def functional(mu, score: str, scheme: str | Scheme = "win-loss-tie", graph: Graph | None = None, xp=np,
               eps: float = LOGIT_EPS):
    """A GARS functional F(μ).

    Parameters
    ----------
    mu : array or TensorVariable
        ``(..., K, K, C)`` outcome probabilities of every ordered pair (first, second); the
        diagonal and pairs outside ``graph`` are ignored.
    score : {"borda", "bt", "rank-centrality"}
    scheme : str or Scheme
        Tie weights (:data:`SCHEMES`); C must equal its number of categories.
    graph : Graph, optional
        The pairs to average over (default: all).
    xp : module
        ``numpy`` or ``pytensor.tensor``.
    eps : float
        Clip of s before the logit (BT projection).

    Returns
    -------
    ``(..., K)`` scores.
    """
    scheme = scheme_of(scheme)
    graph = Graph.complete(mu.shape[-2]) if graph is None else graph
    A = graph.adjacency
    s1, s2 = _credits(mu, scheme, xp)
    if score == "bt":
        def logit(s):
            s = xp.clip(s, eps, 1 - eps)
            return xp.log(s) - xp.log(1 - s)

        ell = 0.5 * (logit(s1) + xp.swapaxes(logit(s2), -1, -2)) * graph.upper
        flow = ell - xp.swapaxes(ell, -1, -2)  # ℓ_jk on j < k, −ℓ_kj on j > k
        return flow.sum(axis=-1) @ graph.projector.T
    s = 0.5 * (s1 + xp.swapaxes(s2, -1, -2)) * A  # s_jk: how much j beats k
    if score == "borda":
        return s.sum(axis=-1) / graph.degree
    if score == "rank-centrality":
        R = xp.swapaxes(s, -1, -2)  # R_ij = s_ji: how much j beats i
        d = R.sum(axis=-1, keepdims=True)
        T = xp.where(d > 0, R / xp.where(d > 0, d, 1.0), A / graph.degree[:, None])  # no-one beats i: uniform
        K = graph.n_items
        return _solve(xp, np.eye(K) - xp.swapaxes(T, -1, -2) + np.ones((K, K)), np.ones(K))
    raise BayesrankError(f"unknown score {score!r}; use one of {', '.join(SCORES)}.")


@lru_cache(maxsize=32)
def _compiled(score: str, scheme: Scheme, graph_key: tuple, eps: float, what: str):
    """PyTensor functions of a batch of contexts: the Jacobian ``(n, K, K, K, C)`` or the
    Jacobian-vector product ``(n, K)`` of F."""
    graph = _GRAPHS[graph_key]
    K, C = graph.n_items, scheme.n_categories
    mu = pt.tensor("mu", shape=(None, K, K, C), dtype="float64")
    out = functional(mu, score, scheme, graph, pt, eps)
    if what == "jacobian":
        J = _pt_jacobian(out.sum(axis=0), mu, vectorize=True)  # (K, n, K, K, C)
        return pytensor.function([mu], pt.moveaxis(J, 0, 1), on_unused_input="ignore")
    tangent = pt.tensor("tangent", shape=(None, K, K, C), dtype="float64")
    return pytensor.function([mu, tangent], pushforward(out, mu, tangent), on_unused_input="ignore")


_GRAPHS: dict[tuple, Graph] = {}


def _function(score, scheme, graph, eps, what):
    _GRAPHS.setdefault(graph.key, graph)
    return _compiled(_check_score(score), scheme_of(scheme), graph.key, float(eps), what)


def jacobian(mu: np.ndarray, score: str, scheme: str | Scheme = "win-loss-tie", graph: Graph | None = None,
             eps: float = LOGIT_EPS) -> np.ndarray:
    """∂F/∂μ of each context by automatic differentiation: ``(n, K, K, K, C)`` for ``mu`` of
    shape ``(n, K, K, C)`` (output axis first, then the ordered pair and category)."""
    mu = np.asarray(mu, dtype=float)
    graph = Graph.complete(mu.shape[-2]) if graph is None else graph
    fn = _function(score, scheme, graph, eps, "jacobian")
    return np.concatenate([fn(mu[i:i + BATCH]) for i in range(0, len(mu), BATCH)])


def jvp(mu: np.ndarray, tangent: np.ndarray, score: str, scheme: str | Scheme = "win-loss-tie",
        graph: Graph | None = None, eps: float = LOGIT_EPS) -> np.ndarray:
    """The Jacobian of F times a direction, per context: Σ_jkc ∂F/∂μ_jkc · tangent_jkc,
    ``(n, K)`` (forward-mode automatic differentiation; the full Jacobian is never formed)."""
    mu = np.asarray(mu, dtype=float)
    graph = Graph.complete(mu.shape[-2]) if graph is None else graph
    fn = _function(score, scheme, graph, eps, "jvp")
    tangent = np.asarray(tangent, dtype=float)
    return np.concatenate([fn(mu[i:i + BATCH], tangent[i:i + BATCH]) for i in range(0, len(mu), BATCH)])


# ====================================================================== results
@dataclass(frozen=True, eq=False)
class Gars:
    """GARS of one source with their uncertainty.

    Attributes
    ----------
    score, scheme : str
    source : str
        What the probabilities came from (a fit's framework and method, or the saturated model).
    interval : {"wald", "quantile"}
        Delta-method Wald intervals (MAP) or equal-tailed intervals of the draws (posterior).
    items : tuple of str
    estimate, se : ndarray
        ``(K,)``; for ``quantile`` the posterior mean and sd.
    cov : ndarray or None
        ``(K, K)`` delta-method covariance (rank K − 1: each score sums to a constant).
    draws : ndarray
        ``(S, K)`` draws: posterior draws of F, or draws of the asymptotic normal N(F̂, cov)
        (``wald``), for rank intervals.
    n_contexts : int
    complete : bool
        Whether F averaged over every pair of items.
    warnings : tuple of str
    """

    score: str
    scheme: str
    source: str
    interval: str
    items: tuple[str, ...]
    estimate: np.ndarray
    se: np.ndarray
    cov: np.ndarray | None
    draws: np.ndarray
    n_contexts: int = 1
    complete: bool = True
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def bounds(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        check_level(level)
        alpha = (1 - level) / 2
        if self.interval == "wald":
            z = norm.ppf(1 - alpha)
            return self.estimate - z * self.se, self.estimate + z * self.se
        return np.quantile(self.draws, alpha, axis=0), np.quantile(self.draws, 1 - alpha, axis=0)

    def table(self, level: float = 0.95) -> pd.DataFrame:
        """``rank, name, score, se, lower, upper, rank_lower, rank_upper``, best first; rank
        intervals are the ``level`` quantiles of the ranks of the draws."""
        lower, upper = self.bounds(level)
        alpha = (1 - level) / 2
        ranks = _ranks(self.draws)
        frame = pd.DataFrame({"name": self.items, "score": self.estimate, "se": self.se, "lower": lower,
                              "upper": upper,
                              "rank_lower": np.quantile(ranks, alpha, axis=0, method="lower").astype(int),
                              "rank_upper": np.quantile(ranks, 1 - alpha, axis=0, method="higher").astype(int)})
        frame = frame.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
        frame.insert(0, "rank", np.arange(1, len(frame) + 1))
        return frame

    def rank_distribution(self) -> pd.DataFrame:
        """P(rank = r) of every item (rows, best first) over the draws."""
        ranks = _ranks(self.draws)
        K = ranks.shape[1]
        probs = np.stack([(ranks == r).mean(axis=0) for r in range(1, K + 1)], axis=1)
        table = pd.DataFrame(probs, index=pd.Index(self.items, name="name"),
                             columns=pd.RangeIndex(1, K + 1, name="rank"))
        return table.iloc[np.argsort(-self.estimate, kind="stable")]

    def to_json(self, level: float = 0.95) -> dict:
        """The CLI's JSON: the settings, ``items`` (``name, score, se, lower, upper, rank,
        rank_lower, rank_upper``, best first) and ``warnings``."""
        fields = ["name", "score", "se", "lower", "upper", "rank", "rank_lower", "rank_upper"]
        return plain({"score": self.score, "scheme": self.scheme, "source": self.source, "interval": self.interval,
                      "level": level, "inference": "bayesian" if self.interval == "quantile" else "asymptotic",
                      "n_items": len(self.items), "n_contexts": self.n_contexts, "complete_graph": self.complete,
                      "items": self.table(level)[fields].to_dict("records"), "warnings": list(self.warnings)})


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks (1 = best) of each row."""
    order = np.argsort(-x, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, x.shape[1] + 1)[None, :], axis=1)
    return ranks


def _normal_draws(mean: np.ndarray, cov: np.ndarray, n: int, seed) -> np.ndarray:
    """Draws of N(mean, cov) for a singular cov (eigen square root)."""
    vals, vecs = np.linalg.eigh(0.5 * (cov + cov.T))
    root = vecs * np.sqrt(np.clip(vals, 0, None))
    z = np.random.default_rng(seed).standard_normal((n, len(mean)))
    return mean + z @ root.T


def _weighted(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σ_c ω_c values[..., c, :]: context axis second to last."""
    return np.einsum("...ck,c->...k", values, weights)


# ====================================================================== from a fit
def contexts(data: Comparisons, weights: str = "data", judges: bool = True) -> pd.DataFrame:
    """The contexts a fit's probabilities depend on besides the pair: its judges and
    covariate values (one row each, with ``weight``).

    The judge is part of the context: a judge-aware fit's GARS average F over the judges,
    θ = Σ_k ω_k F(μ_k), each judge weighted by its share of the comparisons (``"data"``, the
    empirical distribution of contexts) or equally (``"uniform"``). ``judges=False``: the
    model ignores the judge (a Davidson fit of judge records), so judges are no context.
    """
    if weights not in ("data", "uniform"):
        raise BayesrankError(f"context weights must be 'data' or 'uniform', got {weights!r}.")
    keys = {}
    if judges and data.judge is not None:
        keys["judge_index"] = data.judge
    if data.covariates is not None:
        for k, name in enumerate(data.covariate_names):
            keys[f"covariate:{name}"] = data.covariates[:, k]
    if not keys:
        return pd.DataFrame({"weight": [1.0]})
    frame = pd.DataFrame({**keys, "n": data.totals}).groupby(list(keys), sort=True, as_index=False)["n"].sum()
    frame["weight"] = frame["n"] / frame["n"].sum() if weights == "data" else 1.0 / len(frame)
    return frame.drop(columns="n")


def pair_cells(data: Comparisons, ctx: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per-cell arrays of every ordered pair (j, k), j ≠ k, in every context: context-major,
    then j, then k; the first item is shown first."""
    K = data.n_items
    j, k = np.nonzero(1 - np.eye(K, dtype=int))
    n_ctx = len(ctx)
    cells = {"item_a": np.tile(j, n_ctx), "item_b": np.tile(k, n_ctx)}
    if data.judge is not None:
        judge = ctx["judge_index"].to_numpy(np.int64) if "judge_index" in ctx else np.zeros(n_ctx, dtype=np.int64)
        cells["judge_index"] = np.repeat(judge, len(j))
    if data.first is not None:
        cells["first"] = np.full(n_ctx * len(j), FIRST_A, dtype=np.int64)
    if data.covariates is not None:
        cols = [ctx[f"covariate:{c}"].to_numpy(float) for c in data.covariate_names]
        cells["covariates"] = np.repeat(np.column_stack(cols), len(j), axis=0)
    return cells


def _pair_tensor(probs: np.ndarray, n_items: int) -> np.ndarray:
    """``(..., n_ctx · K(K − 1), C)`` probabilities of :func:`pair_cells` → ``(..., n_ctx, K, K, C)``."""
    K, C = n_items, probs.shape[-1]
    j, k = np.nonzero(1 - np.eye(K, dtype=int))
    lead = probs.shape[:-2]
    n_ctx = probs.shape[-2] // len(j)
    out = np.zeros((*lead, n_ctx, K, K, C))
    out[..., j, k, :] = probs.reshape(*lead, n_ctx, len(j), C)
    return out


def _reads_judges(structure) -> bool:
    """Whether the framework's predictors read anything by judge."""
    return any(loc.by == "judge_index" for pred in structure.predictors.values()
               for loc in {**pred.inputs, **pred.constants}.values())


def implied_probabilities(fit, context_weights: str = "data") -> tuple[pd.DataFrame, np.ndarray]:
    """The outcome probabilities a fit implies for every ordered pair of items in every context.

    Returns
    -------
    contexts : DataFrame
        :func:`contexts` of the fit.
    mu : ndarray
        ``(n_contexts, K, K, 3)`` at the point estimate (MAP) or averaged over the posterior.
    """
    tree = _tree(fit)
    framework, data = framework_of(tree), model_data_of(tree)
    structure = structure_of(framework, data, "flat")
    ctx = contexts(data, context_weights, _reads_judges(structure))
    cells = pair_cells(data, ctx)
    if interval_kind(tree) == "wald":
        probs = np.exp(structure.log_probs({v: point(tree, v) for v in structure.natural.names}, cells))
    else:
        probs = np.zeros((len(cells["item_a"]), 3))
        sample = {v: variable_draws(tree, v) for v in structure.natural.names}
        n = len(next(iter(sample.values())))
        for start in range(0, n, 64):
            probs += np.exp(structure.log_probs({v: x[start:start + 64] for v, x in sample.items()}, cells,
                                                draws=True)).sum(axis=0)
        probs /= n
    return ctx, _pair_tensor(probs, data.n_items)


def _tree(fit) -> xr.DataTree:
    if isinstance(fit, Fit):
        return fit.tree
    if isinstance(fit, xr.DataTree):
        return fit
    raise BayesrankError(f"expected a Fit or its DataTree, got {type(fit).__name__}.")


@options_checked
def from_fit(fit, score: str = "borda", scheme: str | Scheme = "win-loss-tie", *, context_weights: str = "data",
             draws: int = 1000, random_seed=0) -> Gars:
    """GARS implied by a fitted model: F of its pairwise outcome probabilities.

    MAP fits: F at the MLE with delta-method standard errors (the Jacobian of F by automatic
    differentiation times ∂μ/∂θ of the per-cell kernels, with the fit's Cov(θ̂)). NUTS fits:
    F at every posterior draw (a posterior of the scores and their ranks).

    Parameters
    ----------
    fit : Fit or DataTree
    score : {"borda", "bt", "rank-centrality"}
    scheme : str or Scheme
        Tie weights (three categories: models predict win, loss and tie).
    context_weights : {"data", "uniform"}
        How judges (and covariate values) are averaged (:func:`contexts`).
    draws : int
        MAP: draws of the asymptotic normal of F, for rank intervals. NUTS: at most this many
        posterior draws (evenly spaced).
    """
    tree = _tree(fit)
    score, scheme = _check_score(score), scheme_of(scheme)
    if scheme.n_categories != 3:
        raise BayesrankError(f"tie weights {scheme.name!r} need {scheme.n_categories} outcome categories; a model "
                             "predicts three (win, loss, tie): use 'binary' or 'win-loss-tie', or the raw counts.")
    framework, data = framework_of(tree), model_data_of(tree)
    structure = structure_of(framework, data, "flat")
    ctx = contexts(data, context_weights, _reads_judges(structure))
    weights = ctx["weight"].to_numpy(float)
    cells = pair_cells(data, ctx)
    K = data.n_items
    graph = Graph.complete(K)
    source = f"{framework.label} by {method_of(tree).upper()}"
    warnings = []
    identified = framework.identified(data, cells)
    if not np.all(np.isfinite(point(tree, "score"))) or not identified.all():
        free = {(min(a, b), max(a, b)) for a, b in zip(cells["item_a"][~identified], cells["item_b"][~identified])}
        why = ("the fit has no estimate (the MLE does not exist), so neither have its GARS." if identified.all() else
               f"the compared pairs do not determine the tie threshold of {len(free)} pairs never compared under "
               f"{framework.label} (the likelihood is flat along a direction that moves it), and GARS read every "
               "pair's probabilities, so there are none: use a model with fewer tie factors (k_tie).")
        nan = np.full(K, np.nan)
        return Gars(score, scheme.name, source, interval_kind(tree), tuple(data.items), nan, nan, None,
                    np.full((1, K), np.nan), len(ctx), True, (why,))
    theta_cov = stored_covariance(tree, "theta_cov")  # None for many items: then from the draws
    if theta_cov is not None:
        theta = tree["estimate"]["theta"].values
        probs, dprobs = outcome_jacobian(structure, theta, cells)  # (n, 3), (n, 3, n_free)
        mu = _pair_tensor(probs, K)
        estimate = _weighted(functional(mu, score, scheme, graph), weights)
        j, k = np.nonzero(1 - np.eye(K, dtype=int))
        G = np.zeros((K, theta.size))
        per_ctx = len(j)
        for c in progress.track(range(len(ctx)), f"GARS {score}: Jacobian of F per context"):
            JF = jacobian(mu[c:c + 1], score, scheme, graph)[0][:, j, k, :]  # (K, pairs, 3)
            G += weights[c] * np.einsum("dpo,pon->dn", JF, dprobs[c * per_ctx:(c + 1) * per_ctx])
        cov = G @ theta_cov @ G.T
        cov = 0.5 * (cov + cov.T)
        se = np.sqrt(np.clip(np.diag(cov), 0, None))
        sample = _normal_draws(estimate, cov, draws, random_seed)
        return Gars(score, scheme.name, source, "wald", tuple(data.items), estimate, se, cov, sample, len(ctx),
                    True, tuple(warnings))
    nat = {v: variable_draws(tree, v) for v in structure.natural.names}
    total = len(next(iter(nat.values())))
    keep = np.linspace(0, total - 1, min(draws, total)).astype(int)
    out = []
    step = max(1, BATCH // max(1, len(cells["item_a"]) // 64))
    for start in progress.track(range(0, len(keep), step), f"GARS {score}: F of the posterior draws"):
        idx = keep[start:start + step]
        p = np.exp(structure.log_probs({v: x[idx] for v, x in nat.items()}, cells, draws=True))
        out.append(_weighted(functional(_pair_tensor(p, K), score, scheme, graph), weights))
    sample = np.concatenate(out)
    return Gars(score, scheme.name, source, "quantile", tuple(data.items), sample.mean(axis=0),
                sample.std(axis=0, ddof=1), np.cov(sample, rowvar=False), sample, len(ctx), True, tuple(warnings))


# ====================================================================== from the raw counts
def _mirror(n_categories: int) -> np.ndarray:
    """The category permutation of a pair seen from the other side (win_first ↔ win_second)."""
    return np.array([1, 0, *range(2, n_categories)])


def _counts_tensor(pc: PairCounts, values: np.ndarray) -> np.ndarray:
    """Per-pair probability vectors ``(..., n_pairs, C)`` → ``(..., n_contexts, K, K, C)``
    (unordered pairs fill both orders, the second mirrored)."""
    K = len(pc.items)
    lead = values.shape[:-2]
    out = np.zeros((*lead, len(pc.contexts), K, K, pc.n_categories))
    out[..., pc.context, pc.first, pc.second, :] = values
    if not pc.ordered:
        out[..., pc.context, pc.second, pc.first, :] = values[..., _mirror(pc.n_categories)]
    return out


def saturated_graph(pc: PairCounts) -> Graph:
    """The comparison graph of the counts; every context must cover it (ordered: both orders)."""
    K = len(pc.items)
    graph = Graph.of_pairs(K, pc.first, pc.second)
    need = int(graph.upper.sum()) * (2 if pc.ordered else 1)
    per_context = np.bincount(pc.context, minlength=len(pc.contexts))
    short = [pc.contexts[c] for c in np.flatnonzero(per_context < need)]
    if short:
        raise BayesrankError(f"context(s) {short[:3]} do not compare every pair the others compare; GARS per context "
                             "need the same pairs in each: pool the contexts (by_judge=False).")
    return graph


@options_checked
def from_counts(data, score: str = "borda", scheme: str | Scheme = "win-loss-tie", *, method: str = "map",
                by_judge: bool = False, alpha: float = 1.0, draws: int = 1000, random_seed=0) -> Gars:
    """GARS of the raw counts: the saturated model (:mod:`bayesrank.model.saturated`) through F.

    ``method="map"``: F at the cell frequencies (the MAP under a flat Dirichlet(1) prior, the
    MLE) with delta-method standard errors Σ_p J_p V_p J_pᵀ / N_p, V_p = Diag(μ̂_p) − μ̂_pμ̂_pᵀ —
    DMLRank without covariates. ``method="posterior"``: F at draws of the conjugate posterior
    Dirichlet(α + counts).

    Parameters
    ----------
    data : Comparisons, DataFrame, str or Path
        Anything :func:`bayesrank.load` accepts.
    by_judge : bool
        One context per judge, θ = Σ_k ω_k F(μ_k) with ω the judges' shares; otherwise judges
        are pooled.
    """
    score, scheme = _check_score(score), scheme_of(scheme)
    if method not in ("map", "posterior"):
        raise BayesrankError(f"method must be 'map' or 'posterior', got {method!r}.")
    data = data if isinstance(data, Comparisons) else load(data, both_bad_as_ties=False if scheme.n_categories == 4
                                                             else None)
    if scheme.n_categories == 4 and bothbad.convention(data.dropped, data.notes) == bothbad.ARENA:
        raise BayesrankError(f"tie weights {scheme.name!r} keep 'tie (bothbad)' apart, but these data count them as "
                             "ties (the Arena convention of battle records); read them with both_bad_as_ties=False "
                             "(CLI: --no-both-bad-ties).")
    pc = pair_counts(data, scheme.n_categories, by_judge)
    graph = saturated_graph(pc)
    weights = pc.context_weights()
    warnings = list(pc.notes)
    if not graph.complete_graph:
        warnings.append(f"the data compare {int(graph.upper.sum())} of {len(pc.items) * (len(pc.items) - 1) // 2} "
                        f"pairs: raw-count {score} uses the observed pairs only (a different estimand from a model's, "
                        "which covers every pair; fit a model and use its GARS to compare all items on one footing).")
    source = "saturated model of the raw counts" + (" per judge" if by_judge else "")
    items = tuple(pc.items)
    if method == "map":
        freq = pc.frequencies()
        mu = _counts_tensor(pc, freq)
        estimate = _weighted(functional(mu, score, scheme, graph), weights)
        JF = jacobian(mu, score, scheme, graph)  # (n_ctx, K, K, K, C)
        Jp = JF[pc.context, :, pc.first, pc.second, :]  # (pairs, K, C)
        if not pc.ordered:
            Jp = Jp + JF[pc.context, :, pc.second, pc.first, :][:, :, _mirror(pc.n_categories)]
        Jp = Jp * weights[pc.context][:, None, None]
        V = multinomial_covariance(freq) / pc.totals[:, None, None]
        cov = np.einsum("pdc,pce,pfe->df", Jp, V, Jp)
        se = np.sqrt(np.clip(np.diag(cov), 0, None))
        sample = _normal_draws(estimate, cov, draws, random_seed)
        return Gars(score, scheme.name, source + " (MLE, delta method)", "wald", items, estimate, se, cov, sample,
                    len(pc.contexts), graph.complete_graph, tuple(warnings))
    conc = posterior_concentration(pc, alpha)
    rng = np.random.default_rng(random_seed)
    out = []
    step = max(1, BATCH * 16 // max(1, len(pc.contexts) * len(items) ** 2))
    for start in range(0, draws, step):
        g = rng.gamma(conc, size=(min(step, draws - start), *conc.shape))
        out.append(_weighted(functional(_counts_tensor(pc, g / g.sum(axis=-1, keepdims=True)), score, scheme, graph),
                             weights))
    sample = np.concatenate(out)
    return Gars(score, scheme.name, source + f" (Dirichlet({alpha:g}) posterior)", "quantile", items,
                sample.mean(axis=0), sample.std(axis=0, ddof=1), np.cov(sample, rowvar=False), sample,
                len(pc.contexts), graph.complete_graph, tuple(warnings))


@options_checked
def from_data(data, score: str = "borda", scheme: str | Scheme = "win-loss-tie", *,
              framework: Framework | None = None, counts_only: bool = False, method: str = "map",
              by_judge: bool = False, draws: int = 1000, random_seed=0) -> Gars:
    """GARS of data, on every pair of items: the raw counts when they identify it, else a model's.

    GARS average over *all* opponents, so they need the outcome probabilities of every pair.
    When every pair was compared, the saturated model of the raw counts gives them without any
    model (:func:`from_counts`). When some pairs never met (arena logs), the raw counts do not
    identify those pairs' probabilities: then ``framework`` (default :func:`default_model`) is
    fitted by MAP and its implied probabilities go through F (:func:`from_fit`); the result's
    warnings say so.

    Parameters
    ----------
    data : Comparisons, DataFrame, str or Path
        Anything :func:`bayesrank.load` accepts.
    framework : Framework, optional
        Use this model's probabilities even when the raw counts would do.
    counts_only : bool
        Raw counts whatever the design (on an incomplete graph: the observed pairs only, another
        estimand; see the module docstring).
    method : {"map", "posterior"}
        Raw counts: the MLE with delta-method intervals or the Dirichlet posterior.
    by_judge, draws, random_seed
        As in :func:`from_counts` / :func:`from_fit`.

    Raises
    ------
    BayesrankError
        ``method="posterior"`` on data that leave pairs uncompared without ``counts_only`` (a
        model's posterior needs a NUTS fit: :func:`from_fit`).
    """
    data = data if isinstance(data, Comparisons) else load(data)
    if counts_only and framework is not None:
        raise BayesrankError("counts_only and framework exclude each other: the GARS come from one source.")
    if framework is None:
        pc = pair_counts(data, scheme_of(scheme).n_categories, by_judge)
        graph = saturated_graph(pc)
        if counts_only or graph.complete_graph:
            return from_counts(data, score, scheme, method=method, by_judge=by_judge, draws=draws,
                               random_seed=random_seed)
        if method != "map":
            raise BayesrankError(
                "the data leave pairs uncompared, so the raw counts have no posterior for them; fit a model "
                "by NUTS and take its GARS (gars.from_fit, CLI --fit), or pass counts_only=True "
                "(--counts-only) for the observed pairs only.")
        framework = default_model(data)
        n_pairs = len(pc.items) * (len(pc.items) - 1) // 2
        why = (f"the data compare {int(graph.upper.sum())} of {n_pairs} pairs, so the raw counts do "
               f"not identify the others: these are the GARS of a {framework.label} fit (MAP), which covers "
               "every pair (counts_only=True / --counts-only for the observed pairs only)")
    else:
        why = None
    fitted = fit_framework(framework, data, method="map")
    result = from_fit(fitted, score, scheme, draws=draws, random_seed=random_seed)
    return result if why is None else replace(result, warnings=(why, *result.warnings))


__all__ = [
    "BATCH", "Gars", "Graph", "LOGIT_EPS", "contexts", "default_model", "from_counts", "from_data", "from_fit",
    "functional", "implied_probabilities", "jacobian", "jvp", "pair_cells", "saturated_graph"
]
