"""Figures of fits: every function returns a ``matplotlib.figure.Figure`` built without pyplot.

:mod:`bayesrank.plots.rankings` draws scores, rank probabilities, tiers, maps, trajectories and
the judge diagnostics of HJA fits; :mod:`bayesrank.plots.arena` draws the figures Chatbot Arena
users look for (pairwise heat maps, Elo ratings with intervals). Save one with
``fig.savefig(path)``.
"""

from bayesrank.plots.arena import plot_elo, plot_matrix
from bayesrank.plots.rankings import (
    plot_bump,
    plot_change_strip,
    plot_compare,
    plot_dendrogram,
    plot_forest,
    plot_judge_consensus,
    plot_judge_disagreement,
    plot_judge_leverage,
    plot_judge_profiles,
    plot_judge_sensitivity,
    plot_kendall,
    plot_map,
    plot_match_probabilities,
    plot_observed_predicted,
    plot_rank_probabilities,
    plot_trajectories,
)

__all__ = [
    "plot_bump", "plot_change_strip", "plot_compare", "plot_dendrogram", "plot_elo", "plot_forest",
    "plot_judge_consensus", "plot_judge_disagreement", "plot_judge_leverage", "plot_judge_profiles",
    "plot_judge_sensitivity", "plot_kendall", "plot_map", "plot_match_probabilities", "plot_matrix",
    "plot_observed_predicted", "plot_rank_probabilities", "plot_trajectories",
]
