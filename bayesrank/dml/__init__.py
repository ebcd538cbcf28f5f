"""DMLRank (Frauen et al.): frequentist, debiased GARS from human labels, LLM judges and context.

* :func:`dmlrank` — the cross-fitted one-step estimator with efficient-influence-function
  confidence intervals (simultaneous: Gaussian max and Bonferroni);
* :func:`optimal_policy` — the A-optimal labelling policy under a budget;
* :func:`read_records` — the table of contexts and labelled comparisons;
* :mod:`bayesrank.dml.simulate` — the paper's synthetic simulators with their truth.

Everything here is frequentist (no prior, no posterior); the Bayesian side of GARS lives in
:mod:`bayesrank.gars`.
"""

from bayesrank.dml.design import Policy, a_optimal, optimal_policy, variance_weights
from bayesrank.dml.estimator import CrossFit, DMLResult, crossfit, dmlrank, dmlrank_scores
from bayesrank.dml.records import Records, read_records

__all__ = ["CrossFit", "DMLResult", "Policy", "Records", "a_optimal", "crossfit", "dmlrank", "dmlrank_scores",
           "optimal_policy", "read_records",
           "variance_weights"]
