"""Names of the nuisance learners DMLRank offers (:mod:`bayesrank.dml.nuisance` builds them);
kept apart so that the command line can list them without importing scikit-learn."""

LEARNERS = ("hist-gradient-boosting", "lightgbm", "spline-logistic", "cell-means")
