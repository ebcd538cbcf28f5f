"""What every framework is: a named spec that builds a PyMC model from :class:`Comparisons`.

A framework = score structure + outcome link + constraints + priors. Subclasses implement
:meth:`Framework.parameters` (create the free parameters inside a model context) and
:meth:`Framework.cell_log_probs` (log P(a), log P(b), log P(tie) per cell from those
parameters). Everything else — the likelihood with its pointwise per-cell log-likelihood,
MAP, NUTS, results — is shared.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.links import cell_loglik

#: The observed variable holding the cell counts; its pointwise log-likelihood is per cell.
OBSERVED = "outcomes"


@dataclass(frozen=True)
class BuiltModel:
    """A PyMC model with the symbolic per-cell log-probabilities it was built from."""

    model: pm.Model
    log_probs: pt.TensorVariable


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
        Thurstonian covariance: ``ZeroSumNormal(cov)`` on the log raw diagonal and
        ``Normal(0, cov)`` on the raw loadings (before the trace(PΣP) = 1 normalisation).
    """

    score: float = 3.0
    tie: float = 2.0
    cov: float = 1.0


@dataclass(frozen=True)
class Framework:
    """Base class of all frameworks (see the module docstring).

    Subclasses are frozen dataclasses whose fields are the model options; ``spec()`` /
    ``from_spec()`` round-trip them through JSON for saved fits and the CLI.
    """

    priors: Priors = field(default_factory=Priors, kw_only=True)

    #: short machine name used by the CLI and saved fits
    name = "framework"

    # ----------------------------------------------------------------- to implement
    def prepare(self, data: Comparisons) -> Comparisons:
        """Validate the data for this framework and apply its data conventions (ties)."""
        return data

    def parameters(self, data: Comparisons, prior: str) -> dict:
        """Create the free parameters in the current model context; return them by name."""
        raise NotImplementedError

    def cell_log_probs(self, params: dict, a, b, judge=None, first=None):
        """``(n, 3)`` log-probabilities of (a wins, b wins, tie) for cells (a, b, judge, first)."""
        raise NotImplementedError

    def count_free_parameters(self, data: Comparisons) -> int:
        """Free parameters after constraints."""
        raise NotImplementedError

    #: names of the model variables reported with intervals (``score`` first)
    def reported(self) -> tuple[str, ...]:
        return ("score",)

    #: information matrix used for MLE Wald intervals unless the caller asks otherwise
    default_information = "observed"

    def information(self, compiled, theta, data: Comparisons, kind: str | None = None) -> np.ndarray:
        """Information matrix of the free coordinates θ at ``theta`` (for Wald intervals).

        Parameters
        ----------
        compiled : CompiledModel
            The compiled model of this framework on ``data``.
        theta : ndarray
            Free coordinates (usually the MLE).
        data : Comparisons
            The prepared data.
        kind : {"observed", "expected"}, optional
            ``"observed"``: −∇²ℓ(θ); ``"expected"``: plug-in expected information with the
            empirical design, Σ_c n_c Σ_o p_co ∇log p_co ∇log p_coᵀ. Default:
            :attr:`default_information`.
        """
        from bayesrank.inference.information import information

        return information(compiled, theta, data, kind or self.default_information)

    def check_mle(self, data: Comparisons, prepared: Comparisons, compiled, theta) -> dict:
        """Framework-specific checks of an MLE (called by ``fit_map`` after optimising).

        Returns
        -------
        dict
            ``mle_exists`` (bool; when False the optimiser's point is not an estimate and
            must not be reported), ``warnings`` (list of str) and further diagnostics
            (JSON-able). The base class checks Ford's condition on the cells the likelihood
            sees (:func:`bayesrank.data.checks.separated_groups`): the MLE of the scores
            exists iff every item can be reached from every other by "beat or tied" edges.
        """
        from bayesrank.data.checks import separated_groups

        if len(prepared.components()) > 1:
            return {
                "mle_exists": False,
                "warnings": [
                    "scores are not identified across disconnected parts of the comparison graph: "
                    "no estimates are reported; fit each component separately or add comparisons between them."
                ],
            }
        groups = separated_groups(prepared)
        if len(groups) <= 1:
            return {"mle_exists": True, "warnings": []}
        shown = " > ".join("{" + ", ".join(g[:5]) + (", …" if len(g) > 5 else "") + "}" for g in groups[:4])
        more = f" > … ({len(groups)} groups)" if len(groups) > 4 else ""
        return {
            "mle_exists": False,
            "warnings": [
                f"the maximum-likelihood estimate does not exist: the items split into groups that never "
                f"lose to the groups after them ({shown}{more}), so score gaps between groups grow without "
                "bound; no estimates are reported. Use method='nuts' (proper priors) or add comparisons "
                "across the groups."
            ],
        }

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
        """JSON-able description from which :func:`framework_from_spec` rebuilds this framework."""
        return {"framework": self.name, **self.options(), "priors": asdict(self.priors)}

    def coords(self, data: Comparisons) -> dict:
        """Named coordinates of the model."""
        coords = {"item": list(data.items), "cell": np.arange(data.n_cells), "outcome": list(OUTCOMES)}
        if data.judges is not None:
            coords["judge"] = list(data.judges)
        return coords

    def build(self, data: Comparisons, prior: str = "weak") -> BuiltModel:
        """The PyMC model of ``data`` and its per-cell log-probabilities.

        Parameters
        ----------
        data : Comparisons
            Already passed through :meth:`prepare`.
        prior : {"flat", "weak"}
            Flat priors on the free coordinates (MAP = MLE) or the weakly informative
            :class:`Priors` (NUTS).

        Returns
        -------
        BuiltModel
            ``model`` has the free parameters with named dims, the data containers
            ``item_a``, ``item_b`` (``judge_index``, ``first``) and ``counts``, and the observed
            ``outcomes`` (cell × outcome) whose pointwise log-likelihood is the per-cell
            multinomial log-likelihood (constant dropped). ``log_probs`` is the symbolic
            ``(cell, outcome)`` matrix of log-probabilities.
        """
        with pm.Model(coords=self.coords(data)) as model:
            a = pm.Data("item_a", data.a, dims="cell")
            b = pm.Data("item_b", data.b, dims="cell")
            judge = pm.Data("judge_index", data.judge, dims="cell") if data.judge is not None else None
            first = pm.Data("first", data.first, dims="cell") if data.first is not None else None
            counts = pm.Data("counts", data.counts(), dims=("cell", "outcome"))
            params = self.parameters(data, prior)
            logp = self.cell_log_probs(params, a, b, judge, first)
            pm.CustomDist(
                OBSERVED,
                logp,
                logp=lambda value, lp: cell_loglik(value, lp),
                observed=counts,
                signature="(o)->(o)",
                dims=("cell", "outcome"),
            )
        return BuiltModel(model, logp)

    def build_model(self, data: Comparisons, prior: str = "weak") -> pm.Model:
        """The PyMC model alone (see :meth:`build`)."""
        return self.build(self.prepare(data), prior).model

    def fit(self, data, method: str = "map", **kwargs):
        """Fit the framework to comparisons.

        Parameters
        ----------
        data : Comparisons, DataFrame, str or Path
            Anything :func:`bayesrank.data.load` accepts (a bundled dataset name or a path).
        method : {"map", "nuts"}
            ``"map"``: maximum likelihood (flat priors) with asymptotic Wald intervals;
            ``"nuts"``: posterior sampling with the weakly informative priors.
        **kwargs
            Passed to :func:`bayesrank.inference.fit_map` or :func:`bayesrank.inference.fit_nuts`
            (e.g. ``draws``, ``tune``, ``chains``, ``random_seed``).

        Returns
        -------
        Fit
        """
        from bayesrank.inference import fit_map, fit_nuts
        from bayesrank.data import load

        data = load(data) if not isinstance(data, Comparisons) else data
        if method == "map":
            return fit_map(self, data, **kwargs)
        if method == "nuts":
            return fit_nuts(self, data, **kwargs)
        from bayesrank.errors import ModelSpecError

        raise ModelSpecError(f"unknown method {method!r}; use 'map' or 'nuts'.")


def spec_json(framework: Framework) -> str:
    """The framework's spec as a JSON string (stored in saved fits)."""
    return json.dumps(framework.spec(), sort_keys=True)


def gather_scores(score, a, b):
    """``score[a] − score[b]`` per cell."""
    return pt.take(score, a) - pt.take(score, b)
