"""Framework 1: Bradley–Terry, Rao–Kupper and Davidson with factored tie thresholds.

Ameli et al. (ICLR 2025), digest ``seed-leaderbot.md`` §1–§2. Linear predictor
d_ab = x_a − x_b with Σx = 0; tie threshold per pair

* ``k_tie=0``: one global value η (paper models 7, 19);
* ``k_tie=k>0``: H = GΦᵀ + ΦGᵀ with the DCT-IV basis Φ (paper-exact, *not* nested in
  ``k_tie=0`` because Φ does not span the constant vector);
* ``k_tie=k>0, tie_intercept=True``: H = η₀J + GΦᵀ + ΦGᵀ, nested in ``k_tie=0``.

Rao–Kupper maps the raw threshold through softplus (η ≥ 0, smooth); Davidson uses it as is.

Examples
--------
>>> import bayesrank as br
>>> fit = br.Davidson(k_tie=1).fit("arena-2024", method="map")   # doctest: +SKIP
>>> fit.leaderboard().head()                                       # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError, ModelSpecError
from bayesrank.frameworks.base import Framework, gather_scores
from bayesrank.links import log_probs
from bayesrank.structures import (
    factored_threshold,
    free_real,
    n_symmetric,
    tie_factors,
    zero_sum_scores,
)

TIE_HANDLING = ("half", "drop")


@dataclass(frozen=True)
class BradleyTerry(Framework):
    """Bradley–Terry: P(a ≻ b) = σ(x_a − x_b).

    Parameters
    ----------
    ties : {"half", "drop"}
        ``"half"`` counts a tie as half a win for each side (the Chatbot Arena convention,
        paper model 1); ``"drop"`` ignores ties (model 4).
    """

    ties: str = "half"
    name = "bt"
    link = "bt"

    def __post_init__(self):
        if self.ties not in TIE_HANDLING:
            raise ModelSpecError(f"ties must be one of {TIE_HANDLING} for Bradley-Terry, got {self.ties!r}.")

    def prepare(self, data: Comparisons) -> Comparisons:
        from dataclasses import replace

        if self.ties == "drop":
            out = data.without_ties()
            if out.n_cells == 0:
                raise DataError("every comparison is a tie: nothing is left for Bradley-Terry with ties='drop'.")
            return out
        half = data.ties / 2
        return replace(data, wins_a=data.wins_a + half, wins_b=data.wins_b + half, ties=0 * half)

    def parameters(self, data, prior):
        return {"score": zero_sum_scores("score", "item", prior, self.priors.score)}

    def cell_log_probs(self, params, a, b, judge=None, first=None):
        return log_probs(self.link, gather_scores(params["score"], a, b))

    def count_free_parameters(self, data):
        return data.n_items - 1


@dataclass(frozen=True)
class _TieFramework(Framework):
    """Shared code of Rao–Kupper and Davidson (global or factored tie thresholds)."""

    k_tie: int = 0
    tie_intercept: bool = False

    def __post_init__(self):
        if not isinstance(self.k_tie, int) or self.k_tie < 0:
            raise ModelSpecError(f"k_tie must be a non-negative integer, got {self.k_tie!r}.")
        if self.tie_intercept and self.k_tie == 0:
            raise ModelSpecError("tie_intercept only applies with k_tie > 0 (k_tie=0 is a single global threshold).")

    def prepare(self, data):
        if self.k_tie > data.n_items:
            raise ModelSpecError(f"k_tie={self.k_tie} exceeds the number of items ({data.n_items}).")
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
        return coords

    def parameters(self, data, prior):
        params = {"score": zero_sum_scores("score", "item", prior, self.priors.score)}
        if self.k_tie == 0:
            params["eta_raw"] = free_real("eta_raw", prior, self.priors.tie)
        else:
            params["tie_factor"], params["phi"] = tie_factors(data.n_items, self.k_tie, prior, self.priors.tie)
            if self.tie_intercept:
                params["eta_raw"] = free_real("eta_raw", prior, self.priors.tie)
        return params

    def cell_log_probs(self, params, a, b, judge=None, first=None):
        d = gather_scores(params["score"], a, b)
        if self.k_tie == 0:
            h = params["eta_raw"]
        else:
            h = factored_threshold(params["tie_factor"], params["phi"], a, b, params.get("eta_raw"))
        return log_probs(self.link, d, h)

    def count_free_parameters(self, data):
        m, k = data.n_items, self.k_tie
        if k == 0:
            return m - 1 + 1
        return m - 1 + (m - k) * k + n_symmetric(k) + int(self.tie_intercept)

    def reported(self):
        names = ["score"]
        if self.k_tie == 0 or self.tie_intercept:
            names.append("eta_raw")
        if self.k_tie:
            names.append("tie_factor")
        return tuple(names)


@dataclass(frozen=True)
class RaoKupper(_TieFramework):
    """Rao–Kupper: a tie when |x_a − x_b| < η, η = softplus(h) ≥ 0.

    Parameters
    ----------
    k_tie : int
        0 for one global threshold (paper model 7), k > 0 for the factored H (models 8–10).
    tie_intercept : bool
        Add a global intercept η₀ to the factored H so the model nests ``k_tie=0``.
    """

    name = "rao-kupper"
    link = "rao-kupper"


@dataclass(frozen=True)
class Davidson(_TieFramework):
    """Davidson: P(a ≻ b) : P(b ≻ a) : P(tie) = π_a : π_b : ν√(π_aπ_b), ν = e^η, η ∈ ℝ.

    Parameters
    ----------
    k_tie : int
        0 for one global threshold (paper model 19), k > 0 for the factored H (models 20–22).
    tie_intercept : bool
        Add a global intercept η₀ to the factored H so the model nests ``k_tie=0``.
    """

    name = "davidson"
    link = "davidson"
