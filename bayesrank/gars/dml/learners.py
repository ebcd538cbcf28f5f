"""Names of the nuisance learners DMLRank offers (:mod:`bayesrank.gars.dml.nuisance` builds them);
kept apart so that the command line can list them without importing scikit-learn."""

LEARNERS = ("spline-logistic", "hist-gradient-boosting", "lightgbm", "cell-means")
#: The default outcome and propensity learner. Spline logistic regression, not boosted trees:
#: on the paper's NonlinearTie simulator (bench/results/gars.md, Table 1 shape, 177 runs per
#: cell) its debiased 95% boxes covered θ in 0.93–0.97 of runs for all three scores, while
#: hist-gradient-boosting's μ̂ left a second-order bias in Rank Centrality (coverage 0.31–0.41).
DEFAULT_LEARNER = "spline-logistic"


__all__ = ["DEFAULT_LEARNER", "LEARNERS"]
