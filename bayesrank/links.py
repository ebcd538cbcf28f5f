"""Outcome links: (linear predictor d, tie threshold h) → log P(a wins), log P(b wins), log P(tie).

Every framework produces, per cell, a linear predictor ``d`` (how much item a is preferred
to item b) and, for tie models, a raw threshold ``h``. A link turns them into the three
log-probabilities with numerically stable expressions (digest ``seed-leaderbot.md`` §1.2–1.4,
§6.2). The functions take and return PyTensor tensors, so the same code builds the PyMC
likelihood, its gradients and the compiled prediction functions.

Links
-----
``bt``
    Bradley–Terry: P(a) = σ(d), P(b) = σ(−d), P(tie) = 0 (ties are fed as halves or dropped).
``rao-kupper``
    Rao–Kupper with η = softplus(h) ≥ 0, a smooth map instead of leaderbot's ``|η|`` clipped
    at 0.01: P(a) = σ(d − η), P(b) = σ(−d − η), P(tie) = (e^{2η} − 1) P(a) P(b).
``rao-kupper-abs``
    The leaderbot paper's form of the Rao–Kupper threshold, η = √(h² + 0.01²): a smooth
    version of its ``max(|h|, 0.01)``, for replicating the paper's factored models exactly.
``davidson``
    Davidson with η = h ∈ ℝ: P ∝ (e^{d/2}, e^{−d/2}, e^{η}).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytensor
import pytensor.tensor as pt

LINKS = ("bt", "rao-kupper", "rao-kupper-abs", "davidson")

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
        # log(e^{2η} − 1) = 2η + log(1 − e^{−2η}), stable for large and small η
        tie = 2 * eta + pt.log1mexp(-2 * eta) + win_a + win_b
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


def cell_loglik(counts, logp):
    """Multinomial log-likelihood per cell without the multinomial constant.

    ``Σ_o counts[..., o] · logp[..., o]`` with ``0 · log 0 = 0`` (a Bradley–Terry tie
    column of zeros meets log P(tie) = −∞).
    """
    return pt.sum(pt.switch(pt.gt(counts, 0), counts * logp, 0.0), axis=-1)


@cache
def _cell_derivatives_fn(link: str):
    d, h = pt.dvector("d"), pt.dvector("h")
    counts = pt.dmatrix("counts")
    ll = cell_loglik(counts, log_probs(link, d, h if link != "bt" else None)).sum()
    # the log-likelihood is a sum of per-cell terms, so the gradient of a summed derivative
    # is the per-cell second derivative
    gd = pt.grad(ll, d)
    grads, curv = [gd], [pt.grad(gd.sum(), d)]
    if link != "bt":
        gh = pt.grad(ll, h)
        grads.append(gh)
        curv += [pt.grad(gd.sum(), h), pt.grad(gh.sum(), h)]
    return pytensor.function([d, h, counts], grads + curv, on_unused_input="ignore"), len(grads)


def cell_derivatives(
    link: str, d: np.ndarray, h: np.ndarray | None, counts: np.ndarray
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per-cell first and second derivatives of the cell log-likelihood (exact, by automatic
    differentiation).

    Returns
    -------
    grads : list of ndarray
        ``[∂/∂d]`` for Bradley–Terry, ``[∂/∂d, ∂/∂h]`` for the tie links.
    curvature : list of ndarray
        ``[∂²/∂d²]`` for Bradley–Terry, ``[∂²/∂d², ∂²/∂d∂h, ∂²/∂h²]`` for the tie links.
    """
    h = np.zeros_like(d) if h is None else np.broadcast_to(h, d.shape).astype(float)
    fn, n_grads = _cell_derivatives_fn(link)
    out = fn(np.asarray(d, float), h, np.asarray(counts, float))
    return out[:n_grads], out[n_grads:]
