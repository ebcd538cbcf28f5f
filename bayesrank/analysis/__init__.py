"""Analyses of fitted leaderboards, as arena teams run them after a fit.

* :mod:`bayesrank.analysis.style` — style control: the board adjusted for how answers look;
* :mod:`bayesrank.analysis.fragility` — how many votes the top of the board rests on;
* :mod:`bayesrank.analysis.tiers` — performance tiers, maps of competitors, agreement of rankings;
* :mod:`bayesrank.analysis.changes` — why the board changed between two fits of one arena.
"""

from bayesrank.analysis.changes import BoardDiff, diff
from bayesrank.analysis.fragility import Fragility, fragility
from bayesrank.analysis.style import StyleControl, style_control
from bayesrank.analysis.tiers import kendall_tau, kernel_pca, mds, rank_table, tiers

__all__ = ["BoardDiff", "Fragility", "StyleControl", "diff", "fragility", "kendall_tau", "kernel_pca", "mds",
           "rank_table", "style_control", "tiers"]
