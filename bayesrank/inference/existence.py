"""Does the maximum-likelihood estimate exist? Checks that run with every MAP fit.

* For every framework, on the cells the likelihood sees: a connected comparison graph and
  Ford's condition (:func:`bayesrank.data.checks.mle_existence`).
* For frameworks that declare a :meth:`~bayesrank.model.framework.Framework.signed_counterpart`
  (the judge-aware models): that counterpart is fitted by the same optimiser from the
  positive fit, and its signed judge sensitivities decide
  (:func:`bayesrank.model.judge_aware.judge_existence`).
"""

from __future__ import annotations

import numpy as np

from bayesrank.data.checks import mle_existence
from bayesrank.data.comparisons import Comparisons
from bayesrank.inference.compiled import compiled
from bayesrank.inference.information import information
from bayesrank.inference.optimize import maximise
from bayesrank.model.judge_aware import judge_existence


def check_existence(framework, prepared: Comparisons, values: dict, maxiter: int) -> dict:
    """Existence of the MLE of ``framework`` on ``prepared`` cells, given the optimiser's point.

    Parameters
    ----------
    framework : Framework
    prepared : Comparisons
    values : dict
        Model variables at the optimiser's point.
    maxiter : int
        Iteration cap for the counterpart's fit.

    Returns
    -------
    dict
        ``mle_exists`` (bool), ``warnings`` (list of str) and, for judge-aware models,
        ``degenerate_judges``, ``signed_sensitivity`` and ``recommendation``.
    """
    exists, warnings = mle_existence(prepared)
    out = {"mle_exists": exists, "warnings": warnings}
    signed = framework.signed_counterpart()
    if signed is None or not exists:
        return out
    bound = compiled(signed, prepared).bind(prepared)
    gamma = np.asarray(values["gamma"], dtype=float)
    start = {name: values[name] for name in bound.structure.natural.names if name in values}
    start["gamma"] = gamma * gamma.size / gamma.sum()
    x0 = bound.structure.natural.theta_for(start, bound.x0)
    theta, _ = maximise(bound.logp_dlogp, lambda th: -information(bound, th, "observed"), x0,
                        prepared.n_comparisons, maxiter,
                        information_diagonal=lambda th: information(bound, th, "observed", diagonal=True))
    signed_gamma = bound.structure.values(theta)["gamma"]
    verdict = judge_existence(prepared.judges, gamma, signed_gamma)
    verdict["warnings"] = warnings + verdict["warnings"]
    return {**out, **verdict}
