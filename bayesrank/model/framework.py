"""What every framework is: a named spec that builds a PyMC model from :class:`Comparisons`.

A framework = score structure + outcome link + constraints + priors. It declares

* its **variables** (:meth:`Framework.variables`: the free parameters and deterministics,
  created inside a PyMC model context, constraints imposed by construction);
* its per-cell **predictors** (:meth:`Framework.predictors`): the linear predictor ``d``
  (how much item a is preferred to item b) and, for tie links, the raw tie threshold ``h``.
  Each is a PyTensor function of a few *local* values — model variables gathered at the
  cell's items or judge (:class:`Local`) — and of the cell's data;
* its **link** (:mod:`bayesrank.model.links`), which turns the predictors into
  log P(a wins), log P(b wins), log P(tie).

That declaration is the only definition of the likelihood. :meth:`Framework.build` composes
it into the PyMC model (NUTS, and the MAP's log-density); the inference layer compiles the
same predictor and link functions per cell to get exact derivatives, information matrices
and predictions without a second, hand-written copy.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property

import numpy as np

from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.model.links import cell_loglik, log_probs
from bayesrank.model.structures import free_real
from bayesrank.runtime.lazy import lazy_module

pm = lazy_module("pymc")
pt = lazy_module("pytensor.tensor")


#: The observed variable holding the cell counts; its pointwise log-likelihood is per cell.
OBSERVED = "outcomes"

#: Per-cell data the predictors may read, as named in the model (``pm.Data`` containers).
CELL_DATA = ("item_a", "item_b", "judge_index", "first", "period_index", "covariates", "contrasts")

#: How one comparison of each outcome (rows: a wins, b wins, tie) enters a likelihood, as the
#: counts of each outcome column it adds (:meth:`Framework.outcome_map`).
AS_OBSERVED = np.eye(3)
#: The Chatbot Arena convention: a tie is half a win for each side (a pseudo-likelihood).
TIES_AS_HALVES = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.0]])
#: Ties left out (the likelihood of the decisive comparisons).
TIES_DROPPED = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
#: Interval methods of a MAP fit (:func:`bayesrank.inference.map.fit_map`); ``"none"``: point
#: estimates only (the MLE and its diagnostics, no covariance and no draws).
INTERVALS = ("wald", "sandwich", "bootstrap", "none")


@dataclass(frozen=True)
class Local:
    """A model variable as one cell sees it.

    Attributes
    ----------
    var : str
        Name of a model variable (free or deterministic; it must be an affine function of
        the free coordinates, which every structure here guarantees).
    by : {"item_a", "item_b", "judge_index"}, tuple of them and "period_index", or None
        The per-cell index the variable is gathered by (its first axis); a tuple of per-cell
        indices gathers by its first axes together (``("item_a", "period_index")``: an item's score in
        the cell's period); None for a variable every cell sees whole (a global threshold, a
        coefficient vector).
    """

    var: str
    by: str | tuple[str, ...] | None = None


@dataclass(frozen=True)
class Predictor:
    """One per-cell predictor of the likelihood.

    Attributes
    ----------
    inputs : mapping of str to Local
        The local values the predictor reads, by key.
    fn : callable
        ``fn(u, cells) -> (n,)`` tensor, where ``u[key]`` has shape ``(n, *shape of the
        variable without its gathered axis)`` and ``cells`` maps the names in
        :data:`CELL_DATA` to per-cell tensors. The same function builds the PyMC model and
        is differentiated per cell by the inference layer.
    linear : bool
        The predictor is linear in its inputs (its second derivatives vanish).
    constants : mapping of str to Local
        Fixed model data the predictor reads per cell (a basis), gathered like the inputs
        but never differentiated; also passed in ``u``.
    """

    inputs: Mapping[str, Local]
    fn: Callable
    linear: bool = False
    constants: Mapping[str, Local] = field(default_factory=dict)


@dataclass(frozen=True)
class Findings:
    """A framework's verdict on what a fit identifies (:meth:`Framework.findings`).

    Attributes
    ----------
    warnings : list of str
        Sentences for the fit's warnings.
    hidden : tuple of str
        Variables that are not identified by these data: reported as NaN, never as numbers.
    diagnostics : dict
        JSON-able facts for the fit's diagnostics.
    """

    warnings: list = field(default_factory=list)
    hidden: tuple = ()
    diagnostics: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Priors:
    """Scales of the weakly informative priors used with ``method="nuts"``.

    MAP fits use flat priors on every free coordinate, so the MAP is the MLE.

    Attributes
    ----------
    score : float
        ``ZeroSumNormal(sigma=score)`` on the scores (logit scale; arena scores span ≈ ±2).
    tie : float
        ``Normal(0, tie)`` on the raw tie threshold (η for Davidson, softplus⁻¹(η) for
        Rao–Kupper) and on the tie factor coordinates.
    cov : float
        Thurstonian covariance: ``Normal(0, cov)`` on the raw coordinates t and L (before
        the trace(PΣP) = 1 normalisation; ``ZeroSumNormal(cov)`` on t − 1 when k_cov = 0).
    """

    score: float = 3.0
    tie: float = 2.0
    cov: float = 1.0


@dataclass(frozen=True)
class Framework:
    """Base class of all frameworks (see the module docstring).

    Subclasses are frozen dataclasses whose fields are the model options; :meth:`spec` and
    :func:`bayesrank.model.registry.framework_from_spec` round-trip them through JSON for
    saved fits and the CLI. Field ``metadata`` (``help``, ``choices``) documents an option
    once, for the docstring and the command line.
    """

    priors: Priors = field(default_factory=Priors, kw_only=True)

    #: short machine name used by the CLI and saved fits
    name = "framework"
    #: outcome link (:data:`bayesrank.model.links.LINKS`)
    link = "bt"
    #: information matrix inverted for MLE Wald intervals unless the caller asks otherwise
    default_information = "observed"

    # ----------------------------------------------------------------- to implement
    def prepare(self, data: Comparisons) -> Comparisons:
        """Validate the data for this framework and apply its data conventions (ties)."""
        return data

    def variables(self, data: Comparisons, prior: str) -> None:
        """Create the model variables in the current model context.

        ``prior`` is ``"flat"`` (MAP = MLE) or ``"weak"`` (the :class:`Priors`, for NUTS).
        """
        raise NotImplementedError

    def predictors(self, data: Comparisons) -> dict[str, Predictor]:
        """The per-cell predictors: ``{"d": ...}`` and, for tie links, ``"h"``."""
        raise NotImplementedError

    def reported(self) -> tuple[str, ...]:
        """Names of the model variables reported with intervals (``score`` first); the style
        coefficients (:data:`STYLE`) come on top when the data carry contrasts."""
        return ("score",)

    def outcome_map(self) -> np.ndarray:
        """How one comparison enters the likelihood: row o (a wins, b wins, tie) holds the
        counts it adds to the outcome columns the link scores (:data:`AS_OBSERVED`,
        :data:`TIES_AS_HALVES`, :data:`TIES_DROPPED`). :meth:`prepare` applies it to the
        cells; the sandwich, the bootstrap and the fragility work per comparison with it."""
        return AS_OBSERVED

    @property
    def pseudo_likelihood(self) -> bool:
        """The likelihood is not the probability of the comparisons as observed (a tie counted
        as half a win for each side): the model-based Wald interval then has no guarantee."""
        Y = self.outcome_map()
        return bool(np.any((Y != 0) & (Y != 1)))

    @property
    def default_intervals(self) -> str:
        """Interval method of a MAP fit unless the caller chooses (:data:`INTERVALS`): the
        robust sandwich for a pseudo-likelihood, Wald otherwise."""
        return "sandwich" if self.pseudo_likelihood else "wald"

    #: what one unit of the score means, shown beside Elo-scale leaderboards
    scale_note = "score difference d: P(a beats b) = σ(d); 400 Elo points = odds 10:1"

    #: what the ``score`` column of a leaderboard is, in the words of its header
    score_meaning = "logit scale"

    #: MAP (flat priors = MLE) is available; frameworks whose hierarchy needs its prior are NUTS-only
    map_supported = True

    def initial_values(self, data: Comparisons) -> dict[str, np.ndarray]:
        """Data-dependent starting values of model variables for MAP (default: none)."""
        return {}

    def nested(self) -> Framework | None:
        """A simpler model this one contains, whose maximum-likelihood estimate is where this
        model's MAP starts (placed by :meth:`from_nested`; :func:`bayesrank.inference.warm.model_start`),
        or None (the default): then the start is :meth:`initial_values`. Worth stating for a
        log-likelihood that is not concave, where the start decides which maximum a fit reaches."""
        return None

    def from_nested(self, values: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The natural variables of this model at the :meth:`nested` model's ``values`` (variables
        left out start at :meth:`initial_values`); only called when :meth:`nested` is not None."""
        raise NotImplementedError(f"{self.label} has no nested model")

    def boundaries(self, data: Comparisons, values: Mapping[str, np.ndarray]) -> list[str]:
        """The boundaries of the parameter space that ``values`` sit at, where the likelihood's supremum
        can be approached without being attained, each in a few words that name the items (two
        Thurstonian items coinciding, a dispersion run out); empty (the default) at none. A MAP fit
        that stops short of a maximum says where (:func:`bayesrank.inference.map.fit_map`)."""
        return []

    def gauge(self, values: Mapping[str, np.ndarray]) -> dict[str, np.ndarray] | None:
        """Tangent directions of a continuous symmetry of the likelihood that the variables'
        constraints leave (HJA: GL(r + 1) acting on its factors), at ``values`` of the natural
        variables: variable → ``(g, *shape)``, the same g directions for each; None (the
        default) when the constraints remove every symmetry.

        The MAP's optimiser then takes no step along these directions, its covariance lives in
        their complement (a chart of the quotient), and only quantities invariant under the
        symmetry are reported (:mod:`bayesrank.inference.map`).
        """
        return None

    def n_gauge(self, data: Comparisons) -> int:
        """Dimension g of the symmetry of :meth:`gauge` (not counted as a free parameter)."""
        return 0

    def clusters(self) -> tuple[str, ...]:
        """The cluster columns of the records the model itself reads (random effects by user or
        prompt: :class:`~bayesrank.model.random_effects.RandomEffects`); empty (the default) for
        a model of independent comparisons. :func:`bayesrank.fit` reads them with the records."""
        return ()

    def random_effects(self) -> dict[str, float | None]:
        """The variables that are random effects — each cluster's zero-sum deviation u_g of the
        scores, u_g ~ ZeroSumNormal(τ) — by name, with their scale τ when it is fixed, or None
        where it is learnt; empty (the default) without random effects. The MAP path
        penalises them by their prior and chooses τ by the Laplace marginal likelihood
        (:mod:`bayesrank.inference.laplace`); the NUTS model declares their prior itself."""
        return {}

    def covariances(self) -> dict[str, bool]:
        """Variables whose delta-method covariance a MAP fit stores for contrasts (``<name>_cov``):
        name → False for the full matrix of a vector, True for one block per entry of its first
        axis (a judge's scores: contrasts within a judge)."""
        return {"score": False}

    def findings(self, data: Comparisons, point: Mapping[str, np.ndarray],
                 draws: Mapping[str, np.ndarray]) -> Findings:
        """What a fit of these data leaves unidentified, said in words (default: nothing).

        Parameters
        ----------
        data : Comparisons
            The prepared cells.
        point : mapping
            Point values of the model variables (MLE or posterior mean).
        draws : mapping
            Their draws (asymptotic normal or posterior), leading axis = draw.
        """
        return Findings()

    def identified(self, data: Comparisons, cells: Mapping[str, np.ndarray]) -> np.ndarray:
        """Whether these data determine the model's outcome probabilities of each cell (default:
        every one). A cell they do not determine is one along whose probabilities the likelihood
        is exactly flat — the factored tie threshold of a pair never compared, with more tie
        factors than the compared pairs pin down — so no value of them is an estimate.

        Parameters
        ----------
        data : Comparisons
            The prepared cells of the fit.
        cells : mapping
            Per-cell arrays of the cells asked about (``item_a``, ``item_b``, …), indexed as
            ``data``.

        Returns
        -------
        ndarray of bool
        """
        return np.ones(np.shape(cells["item_a"]), dtype=bool)

    def structure_key(self, data: Comparisons) -> tuple:
        """What, besides the options and the numbers of items and judges, the model's structure
        depends on in the (prepared) data — part of the key under which a compiled model is
        reused. Default: nothing (the factored tie thresholds: which coordinates the compared
        pairs identify)."""
        return ()

    def signed_counterpart(self) -> Framework | None:
        """A framework whose fit tells whether this one's MLE exists (judge-aware models: the
        same model with signed judge sensitivities), or None."""
        return None

    def coords(self, data: Comparisons) -> dict:
        """Named coordinates of the model."""
        coords = {"item": list(data.items), "cell": np.arange(data.n_cells), "outcome": list(OUTCOMES)}
        if data.judges is not None:
            coords["judge"] = list(data.judges)
        if data.covariate_names:
            coords["covariate"] = list(data.covariate_names)
        if data.contrast_names:
            coords["contrast"] = list(data.contrast_names)
        return coords

    # ----------------------------------------------------------------- shared
    @property
    def label(self) -> str:
        """Human-readable description, e.g. ``Davidson(k_tie=1)``."""
        opts = ", ".join(f"{k}={v}" for k, v in self.options().items())
        return f"{type(self).__name__}({opts})"

    def options(self) -> dict:
        """Model options (fields without the priors)."""
        out = asdict(self)
        out.pop("priors")
        return out

    def spec(self) -> dict:
        """JSON-able description from which :func:`~bayesrank.model.registry.framework_from_spec`
        rebuilds this framework."""
        return {"framework": self.name, **self.options(), "priors": asdict(self.priors)}

    def spec_json(self) -> str:
        """:meth:`spec` as canonical JSON (a cache key and the saved form)."""
        return self._spec_text

    @cached_property
    def _spec_text(self) -> str:
        # made once per framework object (frozen: its spec cannot change); a fit asks for it a few times
        return json.dumps(self.spec(), sort_keys=True)

    def build(self, data: Comparisons, prior: str = "weak") -> tuple[pm.Model, pt.TensorVariable]:
        """The PyMC model of ``data`` and its symbolic per-cell log-probabilities.

        Parameters
        ----------
        data : Comparisons
            Already passed through :meth:`prepare`.
        prior : {"flat", "weak"}
            Flat priors on the free coordinates (MAP = MLE) or the weakly informative
            :class:`Priors` (NUTS).

        Returns
        -------
        model : pm.Model
            The variables with named dims, the data containers of :data:`CELL_DATA` that the
            data have and ``counts``, and the observed ``outcomes`` (cell × outcome) whose
            pointwise log-likelihood is the per-cell multinomial log-likelihood (constant
            dropped).
        log_probs : TensorVariable
            ``(cell, outcome)`` log-probabilities.
        """
        with pm.Model(coords=self.coords(data)) as model:
            cells = cell_data(data)
            counts = pm.Data("counts", data.counts(), dims=("cell", "outcome"))
            self.variables(data, prior)
            logp = self.cell_log_probs(model, cells, data)
            pm.CustomDist(
                OBSERVED,
                logp,
                logp=lambda value, lp: cell_loglik(value, lp),
                observed=counts,
                signature="(o)->(o)",
                dims=("cell", "outcome"),
            )
        return model, logp

    def cell_log_probs(self, variables: Mapping, cells: Mapping, data: Comparisons) -> pt.TensorVariable:
        """``(n, 3)`` log-probabilities of the cells: the predictors on the gathered local
        values, through the link."""
        n = cells["item_a"].shape[0]
        values = {}
        for name, pred in self.predictors(data).items():
            locals_ = {**pred.inputs, **pred.constants}
            u = {key: gather(variables[loc.var], cells, loc.by, n) for key, loc in locals_.items()}
            values[name] = pred.fn(u, cells)
        return log_probs(self.link, values["d"], values.get("h"))


def cell_data(data: Comparisons) -> dict:
    """``pm.Data`` containers (dims ``cell``) for the per-cell data the comparisons have."""
    arrays = {
        "item_a": data.a,
        "item_b": data.b,
        "judge_index": data.judge,
        "first": data.first,
        "period_index": data.period,
        "covariates": data.covariates,
        "contrasts": data.contrasts,
    }
    dims = {"covariates": ("cell", "covariate"), "contrasts": ("cell", "contrast")}
    return {
        name: pm.Data(name, value, dims=dims.get(name, "cell"))
        for name, value in arrays.items()
        if value is not None
    }


def gather(variable, cells: Mapping, by: str | None, n):
    """A variable as the cells see it: rows picked by the cells' ``by`` index (or indices), or
    the whole variable repeated for every cell."""
    if isinstance(by, tuple):
        return variable[tuple(cells[name] for name in by)]
    if by is not None:
        return variable[cells[by]]
    variable = pt.as_tensor(variable)
    return pt.broadcast_to(variable, (n, *variable.shape))


def score_difference(u, cells):
    """d = s_a − s_b (predictor function of the local values ``score_a``, ``score_b``)."""
    return u["score_a"] - u["score_b"]


#: The local values of a score difference.
SCORE_PAIR = {"score_a": Local("score", "item_a"), "score_b": Local("score", "item_b")}


# ---------------------------------------------------------------------- style control
#: The style coefficients β (one per contrast of the data; dims ``contrast``).
STYLE = "style_coef"


def style_term(u, cells):
    """βᵀz_c: the cell's contrasts (a minus b: length difference, markdown counts, …) weighted
    by the style coefficients (``u["style"]``: the coefficients as the cell sees them)."""
    return pt.sum(u["style"] * cells["contrasts"], axis=-1)


def style_variables(data, prior: str, sigma: float, by: str | None = None) -> None:
    """The style coefficients, when the data carry contrasts: flat for MAP, Normal(0, σ) for
    NUTS; one per contrast, or per judge and contrast (``by="judge_index"``)."""
    if data.contrast_names:
        dims = ("judge", "contrast") if by == "judge_index" else "contrast"
        free_real(STYLE, prior, sigma, dims=dims)


def with_style(predictor: Predictor, data, by: str | None = None) -> Predictor:
    """The linear predictor plus βᵀz when the data carry contrasts (style control); the
    predictor unchanged otherwise. The added term is linear in β."""
    if not data.contrast_names:
        return predictor
    inner = predictor.fn

    def styled(u, cells):
        return inner(u, cells) + style_term(u, cells)

    return Predictor({**predictor.inputs, "style": Local(STYLE, by)}, styled, predictor.linear, predictor.constants)


__all__ = [
    "AS_OBSERVED", "CELL_DATA", "Findings", "Framework", "INTERVALS", "Local", "OBSERVED", "Predictor", "Priors",
    "SCORE_PAIR", "STYLE", "TIES_AS_HALVES", "TIES_DROPPED", "cell_data", "gather", "score_difference", "style_term",
    "style_variables", "with_style"
]
