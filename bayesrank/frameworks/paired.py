"""Framework 1: Bradley–Terry, Rao–Kupper and Davidson with factored tie thresholds.

Ameli et al. (ICLR 2025), digest ``seed-leaderbot.md`` §1–§2. Linear predictor
d_ab = x_a − x_b with Σx = 0; tie threshold per pair

* ``k_tie=0``: one global value η (paper models 7, 19);
* ``k_tie=k>0``: H = GΦᵀ + ΦGᵀ with the DCT-IV basis Φ (paper-exact, *not* nested in
  ``k_tie=0`` because Φ does not span the constant vector);
* ``k_tie=k>0, tie_intercept=True``: H = η₀J + GΦᵀ + ΦGᵀ, nested in ``k_tie=0``.

Thurstonian covariance (paper §2.4, eq. 9–13), option ``k_cov`` of all three frameworks:

* ``k_cov=None``: no covariance, the linear predictor is x_a − x_b;
* ``k_cov=0``: Σ = D, ``k_cov=K``: Σ = D + ΛΛᵀ with Λ of rank K; the linear predictor is
  z_ab = (μ_a − μ_b)/√s_ab with s_ab = d_a + d_b + ‖λ_a − λ_b‖². The tie threshold η is *not*
  divided by √s_ab. The constraints trace(PΣP) = 1, Λᵀ1 = 0 and the rotation of Λ are
  imposed by construction (:func:`bayesrank.structures.thurstonian_covariance`).

Rao–Kupper maps the raw threshold through softplus (η ≥ 0, smooth); Davidson uses it as is.

Examples
--------
>>> import bayesrank as br
>>> fit = br.Davidson(k_tie=1).fit("arena-2024", method="map")   # doctest: +SKIP
>>> fit.leaderboard().head()                                       # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError, ModelSpecError
from bayesrank.frameworks.base import Framework, gather_scores
import pymc as pm
import pytensor.tensor as pt

from bayesrank.frameworks.paired_hessian import paired_natural_hessian
from bayesrank.links import log_probs
from bayesrank.structures import (
    empirical_scores,
    factored_threshold,
    free_real,
    n_covariance,
    n_symmetric,
    thurstonian_covariance,
    thurstonian_dispersion,
    tie_factors,
    zero_sum_scores,
)

TIE_HANDLING = ("half", "drop")


def _check_k_cov(k_cov):
    if k_cov is not None and (isinstance(k_cov, bool) or not isinstance(k_cov, int) or k_cov < 0):
        raise ModelSpecError(f"k_cov must be None or a non-negative integer, got {k_cov!r}.")


def _check_k_cov_data(k_cov, data):
    if k_cov is not None and k_cov > data.n_items - 2:
        raise ModelSpecError(
            f"k_cov={k_cov} is too large for {data.n_items} items (at most {max(data.n_items - 2, 0)}: "
            "the loadings live in the (m − 1)-dimensional zero-sum space)."
        )


def _scores(k_cov, data, prior, priors):
    """Zero-sum scores; with a covariance, μ = c·ν with c = √(2/(m − 1)) the root mean
    dispersion under trace(PΣP) = 1, so the free coordinates ν (``score_std``) are on the
    logit scale of z like Bradley–Terry scores: the same model, better conditioned for the
    optimiser and for NUTS (the prior scale applies to ν)."""
    if k_cov is None:
        return zero_sum_scores("score", "item", prior, priors.score)
    c = (2.0 / (data.n_items - 1)) ** 0.5
    # MAP starts from the empirical logits (nutpie cannot take initial values: NUTS starts jittered)
    init = empirical_scores(data) if prior == "flat" else None
    raw = zero_sum_scores("score_std", "item", prior, priors.score, initval=init)
    return pm.Deterministic("score", c * raw, dims="item")


def _covariance_params(k_cov, data, prior, priors):
    if k_cov is None:
        return {}
    d, loading = thurstonian_covariance(data.n_items, k_cov, prior, priors.cov)
    return {"cov_diag": d, "cov_loading": loading}


def _linear_predictor(params, a, b):
    """x_a − x_b, or the Thurstonian z_ab = (μ_a − μ_b)/√s_ab when the model has a covariance."""
    diff = gather_scores(params["score"], a, b)
    if "cov_diag" not in params:
        return diff
    return diff / pt.sqrt(thurstonian_dispersion(params["cov_diag"], params["cov_loading"], a, b))


def _n_cov(k_cov, data):
    return 0 if k_cov is None else n_covariance(data.n_items, k_cov)


def _cov_reported(k_cov):
    if k_cov is None:
        return ()
    return ("cov_diag",) if k_cov == 0 else ("cov_diag", "cov_loading")


def _cov_coords(k_cov, coords):
    if k_cov:
        coords["cov_factor"] = list(range(1, k_cov + 1))
    return coords


@dataclass(frozen=True)
class BradleyTerry(Framework):
    """Bradley–Terry: P(a ≻ b) = σ(x_a − x_b).

    Parameters
    ----------
    ties : {"half", "drop"}
        ``"half"`` counts a tie as half a win for each side (the Chatbot Arena convention,
        paper model 1); ``"drop"`` ignores ties (model 4).
    k_cov : int or None
        Thurstonian covariance: None (none, models 1 and 4), 0 (Σ = D, models 2 and 5) or
        K ≥ 1 (Σ = D + ΛΛᵀ, rank-K loadings; models 3 and 6 have K = 3). The score is then μ.
    """

    ties: str = "half"
    k_cov: int | None = None
    name = "bt"
    link = "bt"

    def __post_init__(self):
        if self.ties not in TIE_HANDLING:
            raise ModelSpecError(f"ties must be one of {TIE_HANDLING} for Bradley-Terry, got {self.ties!r}.")
        _check_k_cov(self.k_cov)

    def coords(self, data):
        return _cov_coords(self.k_cov, super().coords(data))

    def reported(self):
        return ("score", *_cov_reported(self.k_cov))

    def prepare(self, data: Comparisons) -> Comparisons:
        from dataclasses import replace

        _check_k_cov_data(self.k_cov, data)

        if self.ties == "drop":
            out = data.without_ties()
            if out.n_cells == 0:
                raise DataError("every comparison is a tie: nothing is left for Bradley-Terry with ties='drop'.")
            return out
        half = data.ties / 2
        return replace(data, wins_a=data.wins_a + half, wins_b=data.wins_b + half, ties=0 * half)

    def parameters(self, data, prior):
        params = {"score": _scores(self.k_cov, data, prior, self.priors)}
        params.update(_covariance_params(self.k_cov, data, prior, self.priors))
        return params

    def cell_log_probs(self, params, a, b, judge=None, first=None):
        return log_probs(self.link, _linear_predictor(params, a, b))

    def count_free_parameters(self, data):
        return data.n_items - 1 + _n_cov(self.k_cov, data)

    def natural_hessian(self, data, values):
        """Exact Hessian of the log-likelihood in natural coordinates
        (:func:`~bayesrank.frameworks.paired_hessian.paired_natural_hessian`)."""
        return paired_natural_hessian(self, data, values)


@dataclass(frozen=True)
class _TieFramework(Framework):
    """Shared code of Rao–Kupper and Davidson (global or factored tie thresholds)."""

    k_tie: int = 0
    tie_intercept: bool = False
    k_cov: int | None = None

    def __post_init__(self):
        _check_k_cov(self.k_cov)
        if not isinstance(self.k_tie, int) or self.k_tie < 0:
            raise ModelSpecError(f"k_tie must be a non-negative integer, got {self.k_tie!r}.")
        if self.tie_intercept and self.k_tie == 0:
            raise ModelSpecError("tie_intercept only applies with k_tie > 0 (k_tie=0 is a single global threshold).")

    def prepare(self, data):
        if self.k_tie > data.n_items:
            raise ModelSpecError(f"k_tie={self.k_tie} exceeds the number of items ({data.n_items}).")
        _check_k_cov_data(self.k_cov, data)
        if data.ties.sum() == 0:
            raise DataError(
                f"the data have no ties, so the tie threshold of {type(self).__name__} is not "
                "estimable; use BradleyTerry or data with ties."
            )
        return data

    def coords(self, data):
        coords = super().coords(data)
        if self.k_tie:
            coords["factor"] = list(range(1, self.k_tie + 1))
        return _cov_coords(self.k_cov, coords)

    #: starting level of the raw threshold (0 unless the threshold map is flat at h = 0)
    start_level = 0.0

    def parameters(self, data, prior):
        params = {"score": _scores(self.k_cov, data, prior, self.priors)}
        level = self.start_level
        if self.k_tie == 0:
            start = {"initval": level} if level and prior == "flat" else {}  # nutpie takes no initvals
            params["eta_raw"] = free_real("eta_raw", prior, self.priors.tie, **start)
        else:
            params["tie_factor"], params["phi"] = tie_factors(
                data.n_items, self.k_tie, prior, self.priors.tie, start_level=level
            )
            if self.tie_intercept:
                params["eta_raw"] = free_real("eta_raw", prior, self.priors.tie)
        params.update(_covariance_params(self.k_cov, data, prior, self.priors))
        return params

    def cell_log_probs(self, params, a, b, judge=None, first=None):
        d = _linear_predictor(params, a, b)
        if self.k_tie == 0:
            h = params["eta_raw"]
        else:
            h = factored_threshold(params["tie_factor"], params["phi"], a, b, params.get("eta_raw"))
        return log_probs(self.link, d, h)

    def count_free_parameters(self, data):
        m, k = data.n_items, self.k_tie
        cov = _n_cov(self.k_cov, data)
        if k == 0:
            return m - 1 + 1 + cov
        return m - 1 + (m - k) * k + n_symmetric(k) + int(self.tie_intercept) + cov

    def natural_hessian(self, data, values):
        """Exact Hessian of the log-likelihood in natural coordinates (scores, tie factor G or
        η, raw covariance coordinates): per-cell link derivatives scatter-added by the chain
        rule (:func:`~bayesrank.frameworks.paired_hessian.paired_natural_hessian`)."""
        return paired_natural_hessian(self, data, values)

    def reported(self):
        names = ["score"]
        if self.k_tie == 0 or self.tie_intercept:
            names.append("eta_raw")
        if self.k_tie:
            names.append("tie_factor")
        return (*names, *_cov_reported(self.k_cov))


@dataclass(frozen=True)
class RaoKupper(_TieFramework):
    """Rao–Kupper: a tie when |x_a − x_b| < η, η = softplus(h) ≥ 0.

    With ``threshold="abs"`` η = √(h² + 0.01²), a smooth version of the leaderbot paper's
    ``max(|h|, 0.01)``: the paper's exact model, for replication (its factored models 8, 12, 16
    fit worse than ``k_tie=0``, and |h| has the sign symmetry h ↦ −h, so prefer the default
    for new work and for NUTS).

    Parameters
    ----------
    k_tie : int
        0 for one global threshold (paper model 7), k > 0 for the factored H (models 8–10).
    tie_intercept : bool
        Add a global intercept η₀ to the factored H so the model nests ``k_tie=0``.
    k_cov : int or None
        Thurstonian covariance: None (none), 0 (Σ = D) or K ≥ 1 (Σ = D + ΛΛᵀ of rank K);
        the scores are then the Thurstonian means μ, and η is not standardised.
    threshold : {"softplus", "abs"}
        Map from the raw threshold h to η ≥ 0 (see above).
    """

    threshold: str = "softplus"
    name = "rao-kupper"

    def __post_init__(self):
        super().__post_init__()
        if self.threshold not in ("softplus", "abs"):
            raise ModelSpecError(f"threshold must be 'softplus' or 'abs', got {self.threshold!r}.")

    @property
    def link(self) -> str:
        return "rao-kupper" if self.threshold == "softplus" else "rao-kupper-abs"

    @property
    def start_level(self) -> float:
        # √(h² + ε²) is flat at h = 0: start every threshold positive
        return 0.0 if self.threshold == "softplus" else 1.5


@dataclass(frozen=True)
class Davidson(_TieFramework):
    """Davidson: P(a ≻ b) : P(b ≻ a) : P(tie) = π_a : π_b : ν√(π_aπ_b), ν = e^η, η ∈ ℝ.

    Parameters
    ----------
    k_tie : int
        0 for one global threshold (paper model 19), k > 0 for the factored H (models 20–22).
    tie_intercept : bool
        Add a global intercept η₀ to the factored H so the model nests ``k_tie=0``.
    k_cov : int or None
        Thurstonian covariance: None (none), 0 (Σ = D) or K ≥ 1 (Σ = D + ΛΛᵀ of rank K);
        the scores are then the Thurstonian means μ, and η is not standardised.
    """

    name = "davidson"
    link = "davidson"
