r"""Per-category leaderboards with partial pooling: a hierarchical Bradley–Terry / Davidson model.

Records grouped by a category (language, task type: ``load(..., by=COLUMN)``, CLI ``--by``)
give one leaderboard per category. Fitted separately, a small category gets noisy scores (or
none: an item that never loses there has no MLE); fitted together as one, the categories'
differences are lost. The hierarchical model sits in between:

.. math::

    s_{k,i} = μ_i + τ δ_{k,i}, \qquad δ_{k,·} \sim \mathrm{ZeroSumNormal}(1), \qquad
    τ \sim \mathrm{HalfNormal}(σ_τ), \qquad μ \sim \mathrm{ZeroSumNormal}(σ_s),

with d = s_{k,a} − s_{k,b} (+ style terms) in category k. The spread τ is learnt from the data:
categories that agree pull each other's scores together, and a small category borrows strength
from the others (its scores shrink towards μ by as much as its own data cannot tell them apart).
The offsets are non-centred (δ, not τδ, is the free variable), which keeps NUTS efficient when
τ is small. The model needs its prior (the hierarchy *is* the prior), so it is fitted by NUTS.

Reported: ``score`` (μ, the pooled leaderboard), ``category_score`` (category × item),
``spread`` (τ) [, ``eta_raw``].
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError, ModelSpecError
from bayesrank.model.framework import (
    AS_OBSERVED,
    TIES_AS_HALVES,
    TIES_DROPPED,
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

TIES = TIE_OPTIONS


@dataclass(frozen=True)
class CategoryPriors(Priors):
    """Priors of the per-category model.

    Attributes
    ----------
    score : float
        ``ZeroSumNormal(score)`` on the pooled scores μ.
    tie : float
        ``Normal(0, tie)`` on the Davidson tie parameter.
    spread : float
        ``HalfNormal(spread)`` on τ, the scale of the categories' departures from μ.
    """

    spread: float = 0.5


def _category_difference(u, cells):
    """d = μ_a − μ_b + τ(δ_{k,a} − δ_{k,b}) with k the cell's category."""
    rows = pt.arange(u["offset"].shape[0])
    offsets = u["offset"][rows, cells["item_a"]] - u["offset"][rows, cells["item_b"]]
    return u["score_a"] - u["score_b"] + u["spread"] * offsets


@dataclass(frozen=True)
class ByCategory(Framework):
    """Per-category Bradley–Terry (or Davidson) scores, partially pooled (module docstring).

    Parameters
    ----------
    ties : {"half", "drop", "davidson", "rao-kupper"}
        Ties as half wins (Chatbot Arena), dropped, or a Davidson tie outcome with one
        global tie parameter.
    priors : CategoryPriors
    """

    ties: str = field(default="half", metadata={"choices": TIES, "help": (
        "half: a tie is half a win for each side; drop: ties are ignored; davidson / rao-kupper: ties "
        "modelled by that link")})
    priors: CategoryPriors = field(default_factory=CategoryPriors, kw_only=True)

    name = "by-category"
    map_supported = False
    scale_note = ("per-category Bradley–Terry (Davidson with ties='davidson') scores: 400 Elo points = odds "
                  "10:1 within a category")

    def __post_init__(self):
        if self.ties not in TIES:
            raise ModelSpecError(f"ties must be one of {TIES}, got {self.ties!r}.")

    @property
    def link(self) -> str:
        return link_of(self.ties)

    def outcome_map(self):
        return {"half": TIES_AS_HALVES, "drop": TIES_DROPPED}.get(self.ties, AS_OBSERVED)

    def prepare(self, data: Comparisons) -> Comparisons:
        if data.judge is None or data.n_judges < 2:
            raise DataError("the per-category model needs records grouped by a category with at least two "
                            "values: load(..., by=COLUMN) (CLI: --by COLUMN).")
        if self.ties in TIE_LINKS:
            if data.ties.sum() == 0:
                raise DataError("the data have no ties: use ties='half' or ties='drop'.")
            return data
        return data.without_ties() if self.ties == "drop" else data.ties_as_halves()

    def coords(self, data):
        coords = super().coords(data)
        coords["category"] = coords.pop("judge")
        return coords

    def variables(self, data, prior):
        mu = zero_sum_scores("score", "item", prior, self.priors.score)
        # (flat: the structure of the natural variables the predictions read, never optimised — the
        # model is NUTS-only — so the spread is a plain real coordinate there)
        spread = (free_real("spread", prior, self.priors.spread, initval=1.0) if prior == "flat"
                  else pm.HalfNormal("spread", sigma=self.priors.spread))
        if prior == "flat":
            offset = zero_sum_scores("category_offset", ("category", "item"), prior, 1.0)
        else:
            offset = pm.ZeroSumNormal("category_offset", sigma=1.0, dims=("category", "item"))
        pm.Deterministic("category_score", mu[None, :] + spread * offset, dims=("category", "item"))
        if self.ties in TIE_LINKS:
            free_real("eta_raw", prior, self.priors.tie)
        style_variables(data, prior, self.priors.score)

    def predictors(self, data):
        inputs = {"score_a": Local("score", "item_a"), "score_b": Local("score", "item_b"),
                  "spread": Local("spread"), "offset": Local("category_offset", "judge_index")}
        out = {"d": with_style(Predictor(inputs, _category_difference), data)}
        if self.ties in TIE_LINKS:
            out["h"] = Predictor({"eta": Local("eta_raw")}, lambda u, cells: u["eta"], linear=True)
        return out

    def reported(self):
        names = ["score", "spread", "category_score"]
        if self.ties in TIE_LINKS:
            names.append("eta_raw")
        return tuple(names)

    def initial_values(self, data):
        return {"spread": np.array(1.0)}


__all__ = ["ByCategory", "CategoryPriors", "TIES"]
