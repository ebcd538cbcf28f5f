"""Outcome links: (linear predictor d, tie threshold h) → log P(a wins), log P(b wins), log P(tie).

Every framework produces, per cell, a linear predictor ``d`` (how much item a is preferred to item b) and, for tie
models, a raw threshold ``h``. A link turns them into the three log-probabilities with numerically stable expressions
(Ameli, "A Statistical Framework for Ranking LLM-Based Chatbots", eqs. 2–8). The functions take and return PyTensor
tensors, so the same code builds the PyMC likelihood, its gradients and the compiled prediction functions.

Links
-----
``bt``
    Bradley–Terry: P(a) = σ(d), P(b) = σ(−d), P(tie) = 0 (ties are fed as halves or dropped).
``rao-kupper``
    Rao–Kupper with η = softplus(h) ≥ 0, a smooth map instead of leaderbot's ``|η|`` clipped
    at 0.01: P(a) = σ(d − η), P(b) = σ(−d − η), P(tie) = (e^{2η} − 1) P(a) P(b), the tie
    factor in log space for every h (:func:`log_tie_odds`).
``rao-kupper-abs``
    The leaderbot paper's form of the Rao–Kupper threshold, η = √(h² + 0.01²): a smooth
    version of its ``max(|h|, 0.01)``, for replicating the paper's factored models exactly.
``davidson``
    Davidson with η = h ∈ ℝ: P ∝ (e^{d/2}, e^{−d/2}, e^{η}).
"""

from __future__ import annotations

import numpy as np

from bayesrank.runtime.lazy import lazy_module

pt = lazy_module("pytensor.tensor")


LINKS = ("bt", "rao-kupper", "rao-kupper-abs", "davidson")

#: Predictors each link reads: the linear predictor d, and the raw tie threshold h for tie links.
PREDICTORS = {"bt": ("d",), "rao-kupper": ("d", "h"), "rao-kupper-abs": ("d", "h"), "davidson": ("d", "h")}

#: Where each link's outcome log-probabilities stop decreasing: along a ray of the predictors
#: (d, h) = (d₀ + tδ, h₀ + tε), t → ∞, log P(outcome) has slope 0 iff every row (c_d, c_h)
#: listed for the outcome has c_d·δ + c_h·ε ≥ 0 (otherwise its slope is negative). A direction
#: of the free parameters that meets these rows for every observed outcome is a direction in
#: which the likelihood never decreases: the maximum-likelihood estimate does not exist (the
#: "extended Ford condition", :mod:`bayesrank.inference.existence`).
#:
#: * bt: P(a) = σ(d) → slope min(δ, 0).
#: * davidson: log P(a) = d/2 − log(e^{d/2} + e^{−d/2} + e^h) → slope δ/2 − max(|δ|/2, ε);
#:   log P(tie) → ε − max(|δ|/2, ε).
#: * rao-kupper (η = softplus(h), slope max(ε, 0)): P(a) = σ(d − η) → min(δ − max(ε, 0), 0);
#:   log P(tie) → 0 iff ε ≥ |δ|.
#: * rao-kupper-abs (η ≈ |h|): the Rao–Kupper rows with ε ≥ 0 added (so that |ε| = ε), which
#:   finds every such direction that raises the thresholds.
RECESSION = {
    "bt": {"win_a": ((1.0, 0.0),), "win_b": ((-1.0, 0.0),), "tie": ()},
    "davidson": {"win_a": ((1.0, 0.0), (0.5, -1.0)), "win_b": ((-1.0, 0.0), (-0.5, -1.0)),
                 "tie": ((-0.5, 1.0), (0.5, 1.0))},
    "rao-kupper": {"win_a": ((1.0, 0.0), (1.0, -1.0)), "win_b": ((-1.0, 0.0), (-1.0, -1.0)),
                   "tie": ((-1.0, 1.0), (1.0, 1.0))},
    "rao-kupper-abs": {"win_a": ((1.0, 0.0), (1.0, -1.0), (0.0, 1.0)), "win_b": ((-1.0, 0.0), (-1.0, -1.0), (0.0, 1.0)),
                       "tie": ((-1.0, 1.0), (1.0, 1.0), (0.0, 1.0))},
}

#: Links whose every outcome log-probability is concave in the predictors (d, h): Bradley–Terry's
#: log σ(±d) = −softplus(∓d), and Davidson's affine-minus-logsumexp-of-affine. With predictors
#: affine in the free coordinates, a cell log-likelihood (non-negative counts times these) is then
#: concave in them, and Newton's method can start anywhere (:mod:`bayesrank.inference.optimize`).
LOG_CONCAVE = ("bt", "davidson")

#: The ``ties`` option of the frameworks not named after their link (judge-aware, HJA, per-category):
#: ``half`` and ``drop`` feed ties to the Bradley–Terry link as half a win each or not at all;
#: ``davidson`` and ``rao-kupper`` model them with that link, as the paired classes
#: :class:`~bayesrank.model.paired.Davidson` and :class:`~bayesrank.model.paired.RaoKupper` do.
TIE_OPTIONS = ("half", "drop", "davidson", "rao-kupper")
#: The tie options that are links of their own (a tie parameter is estimated).
TIE_LINKS = ("davidson", "rao-kupper")


def link_of(ties: str) -> str:
    """The outcome link of a ``ties`` option (:data:`TIE_OPTIONS`)."""
    return ties if ties in TIE_LINKS else "bt"


#: floor of the paper-form Rao–Kupper threshold (leaderbot clips |h| at 0.01)
ABS_FLOOR = 0.01


def log_probs(link: str, d, h=None):
    """Stack ``[log P(a wins), log P(b wins), log P(tie)]`` along a new last axis.

    Parameters
    ----------
    link : {"bt", "rao-kupper", "davidson"}
        Outcome link.
    d : TensorVariable
        Linear predictor per cell.
    h : TensorVariable, optional
        Raw tie threshold per cell (or scalar); required for the tie links.

    Returns
    -------
    TensorVariable
        Shape ``d.shape + (3,)``.
    """
    if link == "bt":
        win_a, win_b = -pt.softplus(-d), -pt.softplus(d)
        tie = pt.full_like(d, -np.inf)
    elif link in ("rao-kupper", "rao-kupper-abs"):
        eta = tie_threshold(link, h)
        win_a, win_b = -pt.softplus(eta - d), -pt.softplus(eta + d)
        tie = log_tie_odds(link, h, eta) + win_a + win_b
    elif link == "davidson":
        half = d / 2
        norm = pt.logsumexp(pt.stack(pt.broadcast_arrays(half, -half, h), axis=-1), axis=-1)
        win_a, win_b, tie = half - norm, -half - norm, h - norm
    else:
        raise ValueError(f"unknown link {link!r}; expected one of {LINKS}")
    return pt.stack([win_a, win_b, tie], axis=-1)


def tie_threshold(link: str, h):
    """The tie threshold η on the link's own scale (η ≥ 0 for Rao–Kupper, η ∈ ℝ for Davidson)."""
    if link == "rao-kupper":
        return pt.softplus(h)
    if link == "rao-kupper-abs":  # leaderbot's max(|h|, 0.01), smoothed: √(h² + 0.01²)
        return pt.sqrt(h**2 + ABS_FLOOR**2)
    return h


def log_tie_odds(link: str, h, eta=None):
    """log(e^{2η} − 1), the Rao–Kupper tie factor P(tie) / (P(a) P(b)), finite for every raw h.

    With η = softplus(h), e^{2η} − 1 = (1 + e^h)² − 1 = e^h (2 + e^h), so

        log(e^{2η} − 1) = h + log 2 + softplus(h − log 2),

    exact for every finite h: the form 2η + log(1 − e^{−2η}) is −∞ once e^h underflows
    (h ≲ −745, η = 0) and loses the relative accuracy of η long before. The paper-form threshold
    η = √(h² + 0.01²) ≥ 0.01 keeps 2η + log(1 − e^{−2η}), accurate there for every h.

    Parameters
    ----------
    link : {"rao-kupper", "rao-kupper-abs"}
    h : TensorVariable
        Raw tie threshold.
    eta : TensorVariable, optional
        ``tie_threshold(link, h)`` when already built.
    """
    if link == "rao-kupper":
        return h + np.log(2.0) + pt.softplus(h - np.log(2.0))
    eta = tie_threshold(link, h) if eta is None else eta
    return 2 * eta + pt.log1mexp(-2 * eta)


def cell_loglik(counts, logp):
    """Multinomial log-likelihood per cell without the multinomial constant.

    ``Σ_o counts[..., o] · logp[..., o]`` with ``0 · log 0 = 0`` (a Bradley–Terry tie
    column of zeros meets log P(tie) = −∞).
    """
    return pt.sum(pt.switch(pt.gt(counts, 0), counts * logp, 0.0), axis=-1)


__all__ = [
    "ABS_FLOOR", "LINKS", "LOG_CONCAVE", "PREDICTORS", "RECESSION", "TIE_LINKS", "TIE_OPTIONS", "cell_loglik",
    "link_of", "log_probs", "log_tie_odds", "tie_threshold"
]
