"""Elo-scale presentation of a fit's scores: a view of the same fit, never a second model.

Chatbot Arena reports ratings R = offset + scale · s with scale = 400 / ln 10 (so 400 points
are odds of 10:1 in a Bradley–Terry model) and offset 1000. Any fit's scores can be shown
that way; what a point *means* depends on the framework (``framework.scale_note``: Davidson
and Bradley–Terry scores of the same data are not on the same Elo scale). With an *anchor*
model the ratings are differences to it, R_i = offset + scale · (s_i − s_anchor), so the
anchor has the rating ``offset`` exactly and every interval is the interval of a difference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import ndtri

from bayesrank.errors import BayesrankError
from bayesrank.results.estimates import check_level, draws, has_intervals, interval, point, stored_covariance
from bayesrank.results.io import framework_of

#: 400 / ln 10: Elo points per unit of the logit-scale score.
ELO_SCALE = 400 / np.log(10)
#: The rating of the average model (or of the anchor).
ELO_OFFSET = 1000.0


@dataclass(frozen=True)
class Elo:
    """How scores are shown as Elo ratings.

    Attributes
    ----------
    scale : float
        Points per unit of score (default 400 / ln 10).
    offset : float
        Rating of the average model (scores sum to zero), or of the anchor.
    anchor : str, optional
        A model whose rating is fixed at ``offset``.
    """

    scale: float = ELO_SCALE
    offset: float = ELO_OFFSET
    anchor: str | None = None

    def __post_init__(self):
        if not (np.isfinite(self.scale) and self.scale > 0 and np.isfinite(self.offset)):
            raise BayesrankError(f"the Elo scale must be positive and the offset finite, got {self.scale}, "
                                 f"{self.offset}.")


def elo(tree: xr.DataTree, level: float = 0.95, view: Elo | None = None) -> pd.DataFrame:
    """Elo ratings of every item with intervals, best first.

    Parameters
    ----------
    tree : DataTree
        A fit.
    level : float
        Interval level (Wald / sandwich, or quantiles of the draws: the fit's own kind).
    view : Elo, optional
        Scale, offset and anchor (default: 400 / ln 10, 1000, no anchor).

    Returns
    -------
    DataFrame
        Indexed by ``name``, best first (the leaderboard's order): ``rank, elo, elo_lower,
        elo_upper`` (``rank, elo`` for a fit without intervals; items without an estimate last,
        without a rank); ``attrs["scale_note"]`` says what a point means for this framework.
    """
    check_level(level)
    view = view or Elo()
    names = [str(x) for x in tree["constant_data"]["item"].values]
    s = point(tree, "score")
    if view.anchor is not None and view.anchor not in names:
        raise BayesrankError(f"unknown anchor {view.anchor!r}; known items: {', '.join(names[:10])}, ….")
    if not has_intervals(tree):
        centre = s if view.anchor is None else s - s[names.index(view.anchor)]
        table = pd.DataFrame({"elo": view.offset + view.scale * centre}, index=pd.Index(names, name="name"))
        return _best_first(table, framework_of(tree).scale_note)
    if view.anchor is None:
        lower, upper = interval(tree, "score", level)
        centre = s
    else:
        if view.anchor not in names:
            raise BayesrankError(f"unknown anchor {view.anchor!r}; known items: {', '.join(names[:10])}, ….")
        a = names.index(view.anchor)
        centre = s - s[a]
        alpha = (1 - level) / 2
        C = stored_covariance(tree, "score_cov")
        if C is not None:
            err = np.sqrt(np.clip(np.diag(C) + C[a, a] - 2 * C[:, a], 0, None))
            z = ndtri(1 - alpha)
            lower, upper = centre - z * err, centre + z * err
        else:
            dd = draws(tree, "score")
            dd = dd - dd[:, [a]]
            lower, upper = np.quantile(dd, alpha, axis=0), np.quantile(dd, 1 - alpha, axis=0)
    table = pd.DataFrame({"elo": view.offset + view.scale * centre,
                          "elo_lower": view.offset + view.scale * lower,
                          "elo_upper": view.offset + view.scale * upper},
                         index=pd.Index(names, name="name"))
    return _best_first(table, framework_of(tree).scale_note)


def _best_first(table: pd.DataFrame, scale_note: str) -> pd.DataFrame:
    """The ratings sorted best first with a ``rank`` column (none for items without an estimate)."""
    table = table.sort_values("elo", ascending=False, kind="stable")
    rank = pd.array(np.arange(1, len(table) + 1), dtype="Int64")
    rank[table["elo"].isna().to_numpy()] = pd.NA
    table.insert(0, "rank", rank)
    table.attrs["scale_note"] = scale_note
    return table


__all__ = ["ELO_OFFSET", "ELO_SCALE", "Elo", "elo"]
