"""Style control: a leaderboard adjusted for how answers look, next to the unadjusted one.

Voters prefer longer answers and more markdown whatever the model behind them. With per-battle
*contrasts* z (a's length minus b's, differences of header / list / bold counts: any numeric
columns, read with ``contrasts=[...]``), every framework's linear predictor becomes
d = s_a − s_b + βᵀz (judge-aware models: γ_k(s_a − s_b) + β_kᵀz, a style bias per judge), so
the scores s are the models' strengths *at equal style* and β says what style is worth.
:func:`style_control` fits the framework with and without the contrasts and reports the
adjusted leaderboard, the style effects with intervals and every model's rank change.

Examples
--------
>>> import bayesrank as br
>>> from bayesrank.analysis.style import style_control
>>> import numpy as np
>>> from bayesrank.data.simulate import battles
>>> records = battles([1.0, 0.5, 0.0, -0.5], 2000, np.random.default_rng(0), beta=[0.3], eta=-1.0)
>>> report = style_control(br.Davidson(), br.load(records, contrasts=["z0"]))
>>> report.effects.round(2)
  contrast  estimate    se  lower  upper
0       z0      0.19  0.05   0.08   0.29
>>> report.leaderboard[["name", "rank", "rank_unadjusted"]]
  name  rank  rank_unadjusted
0  m00     1                1
1  m01     2                2
2  m02     3                3
3  m03     4                4
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError
from bayesrank.inference.tree import plain
from bayesrank.model.framework import STYLE, Framework
from bayesrank.results.estimates import interval, point, se
from bayesrank.results.fit import Fit, fit


@dataclass
class StyleControl:
    """A style-controlled fit and its unadjusted twin.

    Attributes
    ----------
    adjusted, unadjusted : Fit
    leaderboard : DataFrame
        The adjusted leaderboard with ``rank_unadjusted`` and ``rank_change`` (positive: the
        model moves up once style is accounted for).
    effects : DataFrame
        ``contrast[, judge], estimate, se, lower, upper``: the style coefficients β (logit per
        unit of the contrast).
    """

    adjusted: Fit
    unadjusted: Fit
    leaderboard: pd.DataFrame
    effects: pd.DataFrame

    def to_json(self, level: float = 0.95) -> dict:
        """The adjusted fit's JSON with ``style``: effects and rank changes."""
        changes = self.leaderboard[["name", "rank", "rank_unadjusted", "rank_change"]]
        return plain({**self.adjusted.to_json(level),
                      "style": {"effects": self.effects.to_dict("records"),
                                "rank_change": changes.to_dict("records")}})


def style_effects(fitted: Fit, level: float = 0.95) -> pd.DataFrame:
    """The style coefficients of a fit with contrasts, with intervals."""
    tree = fitted.tree
    if STYLE not in tree["estimate"]:
        raise DataError("the fit has no style coefficients: read the data with contrasts=[...] "
                        "(CLI: --contrasts COLS).")
    est, err = point(tree, STYLE), se(tree, STYLE)
    lower, upper = interval(tree, STYLE, level)
    names = list(fitted.model_data.contrast_names)
    frame = {"contrast": names * (est.size // len(names))}
    if est.ndim == 2:  # per judge
        judges = [str(x) for x in tree["constant_data"]["judge"].values]
        frame = {"judge": np.repeat(judges, len(names)), "contrast": names * len(judges)}
    return pd.DataFrame({**frame, "estimate": est.ravel(), "se": err.ravel(), "lower": lower.ravel(),
                         "upper": upper.ravel()})


def style_control(framework: Framework, data: Comparisons, method: str = "map", level: float = 0.95,
                  **kwargs) -> StyleControl:
    """Fit ``framework`` to ``data`` with its contrasts (style-controlled) and without.

    Parameters
    ----------
    framework : Framework
    data : Comparisons
        Comparisons read with ``contrasts=[...]``.
    method : {"map", "nuts"}
    level : float
        Interval level of the effects.
    **kwargs
        Passed to :func:`bayesrank.fit` for both fits.

    Returns
    -------
    StyleControl
    """
    if not data.contrast_names:
        raise DataError("style control needs contrasts: read the records with contrasts=[column, ...] "
                        "(columns of model_a's value minus model_b's; CLI: --contrasts COLS).")
    adjusted = fit(framework, data, method=method, **kwargs)
    unadjusted = fit(framework, replace(data, contrasts=None, contrast_names=()), method=method, **kwargs)
    board = adjusted.leaderboard(level)
    before = unadjusted.leaderboard(level).set_index("name")["rank"]
    board.insert(2, "rank_unadjusted", before.reindex(board["name"]).to_numpy())
    board.insert(3, "rank_change", board["rank_unadjusted"] - board["rank"])
    return StyleControl(adjusted, unadjusted, board, style_effects(adjusted, level))


__all__ = ["StyleControl", "style_control", "style_effects"]
