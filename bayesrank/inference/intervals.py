"""Interval methods of a MAP fit beyond the model-based Wald: the sandwich and the bootstrap.

Both work per *comparison* (one vote, one verdict), the independent unit of the data, not per
aggregated cell: :func:`comparison_units` recovers, for every cell the likelihood sees, how
many comparisons of each observed outcome it holds and what each adds to the likelihood
(:meth:`~bayesrank.model.framework.Framework.outcome_map`: a tie counted as half a win for
each side adds ½, ½; a reweighted pair scales that by its weight).

``sandwich``
    Cov(θ̂) = I⁻¹ M I⁻¹ with I the observed information and M = Σ_comparisons s sᵀ the outer
    products of the per-comparison scores (:func:`~bayesrank.inference.information.information`
    with ``kind="scores"``): valid when the likelihood is misspecified or a pseudo-likelihood
    (ties as halves, reweighted pairs), where the inverse information is not the variance of
    the MLE (White 1982).
``bootstrap``
    A seeded multinomial bootstrap of the comparisons: each replicate draws N comparisons
    with replacement (a multinomial over every cell × observed outcome), and is refitted by
    the same compiled model and optimiser, warm-started at θ̂ (:func:`refits`).

Votes that are not independent (one user's many votes, one prompt judged by many pairs) have
the same two methods with clusters of comparisons as the unit instead:
:mod:`bayesrank.inference.clustered`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.linalg import blas, cholesky, eigh

from bayesrank.data.checks import mle_existence
from bayesrank.data.comparisons import Comparisons
from bayesrank.inference.information import Units, information
from bayesrank.inference.optimize import maximise
from bayesrank.inference.structure import Bound
from bayesrank.model.framework import Framework
from bayesrank.runtime import progress

#: How each interval method is described in a fit (``estimate.attrs["covariance"]``).
DESCRIPTIONS = {
    "sandwich": "sandwich I⁻¹ M I⁻¹: inverse observed information around the outer products of the "
                "per-comparison scores (robust to misspecification and pseudo-likelihoods)",
    "bootstrap": "multinomial bootstrap of the comparisons, each replicate refitted from the MLE "
                 "(percentile intervals)",
    "none": "none: point estimates only (intervals='none')",
}
#: A bootstrap replicate counts as converged below this largest gradient entry per comparison.
BOOTSTRAP_TOL = 1e-8
#: Replicates drawn at once (bounds the memory of the multinomial draws).
BOOTSTRAP_CHUNK = 100


def comparison_units(framework: Framework, data: Comparisons, prepared: Comparisons,
                     weights: np.ndarray | None = None) -> Units:
    """The comparisons behind each prepared cell (see the module docstring).

    Parameters
    ----------
    framework : Framework
    data : Comparisons
        The comparisons as given.
    prepared : Comparisons
        ``framework.prepare(data)``, reweighted by ``weights`` when given.
    weights : ndarray, optional
        Per prepared cell.

    Raises
    ------
    RuntimeError
        When the prepared cells are not the given cells under the framework's outcome map (a
        framework whose ``prepare`` does something its ``outcome_map`` does not say).
    """
    Y = framework.outcome_map()
    raw = data.counts()
    keep = (raw @ Y).sum(axis=1) > 0
    counts = raw[keep]
    w = np.ones(len(counts)) if weights is None else np.asarray(weights, dtype=float)
    units = Units(counts=counts, pseudo=w[:, None, None] * Y[None])
    if len(counts) != prepared.n_cells or not np.allclose(units.cell_counts(), prepared.counts(), rtol=1e-12,
                                                          atol=1e-9):
        raise RuntimeError(f"{framework.label}: the prepared cells do not follow from the data by the "
                           "framework's outcome_map; per-comparison intervals are not available.")
    return units


def comparison_meat(bound: Bound, theta: np.ndarray, units: Units) -> np.ndarray:
    """M = Σ_comparisons s sᵀ on θ: the outer products of the per-comparison scores (the meat of
    the per-comparison sandwich; :func:`~bayesrank.inference.information.information` with
    ``kind="scores"``)."""
    return information(bound, theta, "scores", units=units)


def sandwich(meat: np.ndarray, observed: np.ndarray, chart: np.ndarray | None = None,
             bread: np.ndarray | None = None) -> np.ndarray:
    """I⁻¹ M I⁻¹ on θ (see the module docstring) for a meat M on θ (:func:`comparison_meat`, or
    summed over clusters: :func:`bayesrank.inference.clustered.cluster_meat`); ``observed`` is
    the observed information, in the coordinates of ``chart`` (``(len(θ), d)``: the complement
    of a symmetry's orbit, :func:`bayesrank.inference.map.gauge_complement`) when one is given;
    ``bread``: its inverse when the caller has it already (from the information's Cholesky
    factor)."""
    if chart is not None:
        meat = chart.T @ meat @ chart
    bread = np.linalg.inv(observed) if bread is None else bread
    cov = bread @ meat @ bread
    cov = cov if chart is None else chart @ cov @ chart.T
    return 0.5 * (cov + cov.T)


def sandwich_factor(bound: Bound, theta: np.ndarray, wald: np.ndarray, units: Units | None = None,
                    meat=None) -> np.ndarray:
    """F with F Fᵀ = I⁻¹ M I⁻¹, the sandwich of :func:`sandwich` as a factor, for the large-model
    path where no n × n covariance is formed (:data:`bayesrank.inference.map.DENSE_COVARIANCE_MAX`).
    M is the per-comparison meat of ``units`` (:func:`comparison_meat`), or ``meat()`` when a
    callable is given (a fresh array on each call, as it is factored in place: the meat summed
    over clusters, :func:`bayesrank.inference.clustered.clustered_sandwich_factor`).

    ``wald`` is the upper-triangular U with U Uᵀ = I⁻¹ (:func:`~bayesrank.inference.information.inverse_factor`);
    with R Rᵀ = M (Cholesky, or the eigen-decomposition's V √Λ when M is only semi-definite),
    F = U (Uᵀ R): the same covariance, from one Cholesky factorisation and two triangular
    products (LAPACK/BLAS trmm, in place) — the order of work and memory of the Wald path, with
    at most two n × n arrays alive, instead of the inverse and two dense products of the whole
    sandwich.
    """
    meat_of = meat if meat is not None else (lambda: comparison_meat(bound, theta, units))
    meat = meat_of()
    meat = meat.T if meat.flags.c_contiguous else meat  # symmetric: the Fortran-ordered view, factored in place
    try:
        root = cholesky(meat, lower=True, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError:  # M is positive semi-definite only
        values, vectors = eigh(meat_of(), overwrite_a=True, check_finite=False)
        root = vectors * np.sqrt(np.clip(values, 0.0, None))
    del meat
    root = np.asfortranarray(root)
    # U itself, or (C-ordered) its transpose as a Fortran-ordered lower triangle: no copy either way
    a, lower = (wald, 0) if wald.flags.f_contiguous else (np.asfortranarray(wald.T), 1)
    root = blas.dtrmm(1.0, a, root, lower=lower, trans_a=1 - lower, overwrite_b=1)  # Uᵀ R
    return blas.dtrmm(1.0, a, root, lower=lower, trans_a=lower, overwrite_b=1)  # U Uᵀ R


def bootstrap(bound: Bound, theta: np.ndarray, units: Units, n_boot: int, rng: np.random.Generator,
              maxiter: int) -> tuple[np.ndarray, dict]:
    """θ̂ of ``n_boot`` multinomial resamples of the comparisons.

    Parameters
    ----------
    bound : Bound
        The fit's compiled model and prepared cells.
    theta : ndarray
        The MLE (every refit starts there).
    units : Units
    n_boot : int
    rng : numpy Generator
    maxiter : int
        Iteration cap of a refit.

    Returns
    -------
    thetas : ndarray
        ``(n_kept, n_free)`` estimates of the replicates that have an MLE and converged.
    info : dict
        ``n_boot``, ``n_failed`` (no MLE in the resample, or no convergence) and ``iterations``
        (total over the replicates).
    """
    n_cells, n_kinds = units.counts.shape
    flat = units.counts.ravel()
    total = int(round(flat.sum()))
    p = flat / flat.sum()

    def resamples():
        for start in range(0, n_boot, BOOTSTRAP_CHUNK):
            for draw in rng.multinomial(total, p, size=min(BOOTSTRAP_CHUNK, n_boot - start)):
                yield units.cell_counts(draw.reshape(n_cells, n_kinds).astype(float))

    return refits(bound, theta, resamples(), n_boot, maxiter)


def refits(bound: Bound, theta: np.ndarray, resamples, n_boot: int, maxiter: int) -> tuple[np.ndarray, dict]:
    """θ̂ of each resample of the cells' counts, refitted by the fit's compiled model and optimiser
    from θ̂; a resample whose MLE does not exist (:func:`~bayesrank.data.checks.mle_existence`) or
    whose refit does not converge is left out and counted.

    Parameters
    ----------
    bound : Bound
    theta : ndarray
        The MLE (every refit starts there).
    resamples : iterable of ndarray
        ``(n_cells, 3)`` likelihood counts of the prepared cells, one array per replicate.
    n_boot : int
        Replicates (reported).
    maxiter : int

    Returns
    -------
    thetas : ndarray
        ``(n_kept, n_free)``.
    info : dict
        ``n_boot``, ``n_failed`` and ``iterations`` (total over the replicates).
    """
    structure, prepared = bound.structure, bound.data
    kept, failed, iterations = [], 0, 0
    with progress.bar("bootstrap: refitting resamples", n_boot) as shown:
        for counts in resamples:
            shown.advance()
            resample = replace(prepared, wins_a=counts[:, 0], wins_b=counts[:, 1], ties=counts[:, 2],
                               clusters=None)
            exists, _ = mle_existence(resample)
            if not exists:
                failed += 1
                continue
            end = maximise(structure.bind(resample), theta, maxiter=maxiter)
            iterations += end.iterations
            if not np.all(np.isfinite(end.theta)) or end.grad_max > BOOTSTRAP_TOL:
                failed += 1
                continue
            kept.append(end.theta)
    thetas = np.array(kept).reshape(len(kept), theta.size)
    return thetas, {"n_boot": int(n_boot), "n_failed": int(failed), "iterations": int(iterations)}


__all__ = [
    "BOOTSTRAP_CHUNK", "BOOTSTRAP_TOL", "DESCRIPTIONS", "bootstrap", "comparison_meat", "comparison_units", "refits",
    "sandwich", "sandwich_factor"
]
