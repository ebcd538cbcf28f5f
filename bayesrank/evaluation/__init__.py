"""How good a fit is and which fit to prefer.

* :mod:`bayesrank.evaluation.compare` — leave-one-out comparison of fits (PSIS-LOO with exact
  refits where Pareto k̂ is high; stacking weights);
* :mod:`bayesrank.evaluation.goodness` — the leaderbot paper's goodness-of-fit metrics, held-out
  generalisation and information criteria;
* :mod:`bayesrank.evaluation.selection` — choosing the rank of an HJA model.
"""

from bayesrank.evaluation.compare import Loo, compare, loo
from bayesrank.evaluation.goodness import generalization, goodness_of_fit, information_criteria
from bayesrank.evaluation.selection import RankSelection, select_rank

__all__ = ["Loo", "RankSelection", "compare", "generalization", "goodness_of_fit", "information_criteria", "loo",
           "select_rank"]
