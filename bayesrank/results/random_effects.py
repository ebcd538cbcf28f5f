"""What a random-effects fit says about its clusters: how much they disagree, and each one's board.

A fit of :class:`~bayesrank.model.random_effects.RandomEffects` (MAP with Laplace intervals, or
NUTS) has the population board (:func:`~bayesrank.results.leaderboard.leaderboard`), the scale
τ of the clusters' deviations (``spread``) and every cluster's own scores s + u_g
(``cluster_score``), shrunk towards the population's. :func:`random_effects` gathers the last
two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr
from scipy.special import ndtri

from bayesrank.errors import BayesrankError
from bayesrank.inference.tree import plain
from bayesrank.results.categories import group_leaderboards
from bayesrank.results.estimates import check_level, cluster, draws, interval_kind, interval_method, point, se


@dataclass(frozen=True)
class RandomEffectsSummary:
    """The clusters of a random-effects fit (:func:`random_effects`).

    Attributes
    ----------
    cluster : str
        The cluster column.
    n_clusters : int
    spread, spread_lower, spread_upper : float
        τ̂ (MAP: its maximum marginal likelihood; NUTS: posterior mean) and its interval at
        ``level`` (MAP: Wald on log τ; NUTS: equal-tailed); NaN bounds where τ was fixed or
        sits at the end of its search.
    level : float
    method : str
        ``"laplace"`` (MAP) or ``"posterior"`` (NUTS).
    boards : DataFrame
        ``cluster, rank, name, score, se, lower, upper, rank_lower, rank_upper``: each
        cluster's own board, best first.
    """

    cluster: str
    n_clusters: int
    spread: float
    spread_lower: float
    spread_upper: float
    level: float
    method: str
    boards: pd.DataFrame

    def to_json(self) -> dict:
        """Every field, the boards as records."""
        return plain({"cluster": self.cluster, "n_clusters": self.n_clusters, "spread": self.spread,
                      "spread_lower": self.spread_lower, "spread_upper": self.spread_upper, "level": self.level,
                      "method": self.method, "boards": self.boards.to_dict("records")})

    def to_text(self, top: int = 5, clusters: int = 10) -> str:
        """τ in words and the first ``top`` rows (0: all) of the boards of the first ``clusters``
        clusters (0: all; the rest are in :meth:`to_json`)."""
        pct = f"{100 * self.level:g}%"
        bounds = (f" ({pct} interval {self.spread_lower:.3f} to {self.spread_upper:.3f})"
                  if np.isfinite(self.spread_lower) else "")
        lines = [f"clusters of {self.cluster!r}: {self.n_clusters}; their scores deviate from the population's by "
                 f"τ = {self.spread:.3f}{bounds} on the logit scale (sd of a deviation; "
                 f"{'Laplace, τ at its maximum marginal likelihood' if self.method == 'laplace' else 'posterior'})",
                 "each cluster's board, shrunk towards the population board:"]
        groups = list(self.boards.groupby("cluster", sort=False))
        for name, group in groups[:clusters or None]:
            shown = group.head(top) if top else group
            lines.append(f"\n{self.cluster} {name}:")
            lines.append(shown.drop(columns="cluster").to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        if clusters and len(groups) > clusters:
            lines.append(f"\n(+{len(groups) - clusters} more clusters: their boards are in the JSON output)")
        return "\n".join(lines)


def random_effects(tree: xr.DataTree, level: float = 0.95) -> RandomEffectsSummary:
    """τ and the clusters' own boards of a random-effects fit (:class:`RandomEffectsSummary`).

    Raises
    ------
    BayesrankError
        For a fit without random effects, or without intervals.
    """
    check_level(level)
    estimate = tree["estimate"]
    if "cluster_score" not in estimate or "spread" not in estimate:
        raise BayesrankError("the fit has no random effects: fit bayesrank.RandomEffects(base, cluster=COLUMN).")
    spread = float(point(tree, "spread"))
    if interval_kind(tree) == "wald":   # Wald on log τ: τ̂ exp(± z se / τ̂)
        z = ndtri(0.5 + level / 2)
        ratio = float(se(tree, "spread")) / spread
        lower, upper = spread * np.exp(-z * ratio), spread * np.exp(z * ratio)
    else:
        x = draws(tree, "spread")
        lower, upper = (float(q) for q in np.quantile(x, [(1 - level) / 2, (1 + level) / 2]))
    boards = group_leaderboards(tree, "cluster_score", "cluster", level)
    return RandomEffectsSummary(cluster=cluster(tree)[0], n_clusters=len(estimate["cluster"]), spread=spread,
                                spread_lower=float(lower), spread_upper=float(upper), level=level,
                                method=interval_method(tree), boards=boards)


__all__ = ["RandomEffectsSummary", "random_effects"]
