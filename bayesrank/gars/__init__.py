"""The GARS family: generalised average ranking scores and their debiased estimate, DMLRank.

From "Nonparametric LLM Evaluation from Preference Data" (Frauen et al.):

* :mod:`bayesrank.gars.scores` — the score functionals (Borda, Bradley–Terry projection, Rank
  Centrality) of the pairwise outcome probabilities, and their plug-in estimates from any fit
  (:func:`~bayesrank.gars.scores.from_fit`), from the saturated model of the raw counts
  (:func:`~bayesrank.gars.scores.from_counts`) or from
  data with the default model (:func:`~bayesrank.gars.scores.from_data`);
* :mod:`bayesrank.gars.dml` — DMLRank, the cross-fitted debiased estimate from human labels,
  LLM judges and context, with its A-optimal labelling policy.
"""

from bayesrank.gars.scores import (
    Gars,
    Graph,
    default_model,
    from_counts,
    from_data,
    from_fit,
    functional,
    implied_probabilities,
    jacobian,
    jvp,
)
from bayesrank.model.scoring import SCHEMES, SCORES

__all__ = ["SCHEMES", "SCORES", "Gars", "Graph", "default_model", "from_counts", "from_data", "from_fit",
           "functional", "implied_probabilities", "jacobian", "jvp"]
