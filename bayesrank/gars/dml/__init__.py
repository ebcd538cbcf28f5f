"""DMLRank (Frauen et al.): frequentist, debiased GARS from human labels, LLM judges and context.

* :func:`dmlrank` — the cross-fitted one-step estimator with efficient-influence-function
  confidence intervals (simultaneous: Gaussian max and Bonferroni);
* :func:`optimal_policy` — the A-optimal labelling policy under a budget;
* :func:`read_records` — the table of contexts and labelled comparisons;
* :mod:`bayesrank.gars.dml.simulate` — the paper's synthetic simulators with their truth.

Everything here is frequentist (no prior, no posterior); the Bayesian side of GARS lives in
:mod:`bayesrank.gars`.
"""

from importlib import import_module

#: Public name → the module that defines it, imported on first use (``bayesrank dml --help``
#: and ``bayesrank.gars.dml.learners`` do not load scikit-learn).
_WHERE = {"Policy": "design", "a_optimal": "design", "optimal_policy": "design", "variance_weights": "design",
          "CrossFit": "estimator", "DMLResult": "estimator", "crossfit": "estimator", "dmlrank": "estimator",
          "dmlrank_scores": "estimator", "Records": "records", "read_records": "records"}

__all__ = sorted(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        return getattr(import_module(f"bayesrank.gars.dml.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'bayesrank.gars.dml' has no attribute {name!r}")


def __dir__():
    return [*globals(), *__all__]
