"""Score structures: the parameters of a framework and the map to (d, h) per cell.

The paper's constraints are imposed by construction, never by penalties:

* scores sum to zero — a zero-sum transform (PyMC's :class:`ZeroSumTransform`), so the free
  coordinates have dimension m − 1 and a flat prior on them gives the MLE;
* factored tie thresholds H = GΦᵀ + ΦGᵀ (+ η₀J) — the map G ↦ GΦᵀ + ΦGᵀ has the null space
  {ΦA : A antisymmetric}; we parameterise G = Φ⊥C + ΦS with S symmetric, where [Φ, Φ⊥] is
  the full orthonormal DCT-IV basis, so every free coordinate is identified.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.distributions.transforms import ZeroSumTransform


def dct_iv_basis(m: int, k: int | None = None) -> np.ndarray:
    """DCT-IV basis, paper eq. (8): φ_ij = √(2/m) cos(π/(4m)(2i−1)(2j−1)).

    Parameters
    ----------
    m : int
        Number of items (rows).
    k : int, optional
        Number of columns (default ``m``: the full orthonormal matrix).

    Returns
    -------
    ndarray
        ``(m, k)`` matrix with orthonormal columns.
    """
    k = m if k is None else k
    i = np.arange(1, m + 1)[:, None]
    j = np.arange(1, k + 1)[None, :]
    return np.sqrt(2.0 / m) * np.cos(np.pi / (4 * m) * (2 * i - 1) * (2 * j - 1))


def zero_sum_scores(name: str, dims: str, prior: str, sigma: float):
    """Scores that sum to zero by construction.

    ``prior="flat"`` puts a flat density on the m − 1 free coordinates (MAP = MLE);
    ``prior="weak"`` is ``ZeroSumNormal(sigma)``.
    """
    if prior == "flat":
        return pm.Flat(name, dims=dims, transform=ZeroSumTransform([-1]))
    return pm.ZeroSumNormal(name, sigma=sigma, dims=dims)


def free_real(name: str, prior: str, sigma: float, mu: float = 0.0, **kwargs):
    """An unconstrained real parameter: flat for MAP, ``Normal(mu, sigma)`` for NUTS."""
    if prior == "flat":
        return pm.Flat(name, **kwargs)
    return pm.Normal(name, mu=mu, sigma=sigma, **kwargs)


def n_symmetric(k: int) -> int:
    """Free entries of a symmetric k×k matrix."""
    return k * (k + 1) // 2


def tie_factors(m: int, k: int, prior: str, sigma: float):
    """Identified tie factor loadings G (m×k) for H = GΦᵀ + ΦGᵀ.

    G = Φ⊥C + ΦS with C ∈ ℝ^{(m−k)×k} free and S symmetric; this removes the null space
    {ΦA : A antisymmetric} of the map G ↦ H exactly (its dimension is k(k−1)/2).

    Returns
    -------
    G : TensorVariable
        Registered as the deterministic ``tie_factor`` with dims ``(item, tie_factor)``.
    phi : ndarray
        The fixed basis Φ (m×k).
    """
    full = dct_iv_basis(m)
    phi, phi_perp = full[:, :k], full[:, k:]
    parts = []
    if m > k:
        coef = free_real("tie_coef", prior, sigma, shape=(m - k, k))
        parts.append(pt.as_tensor(phi_perp) @ coef)
    sym = free_real("tie_sym", prior, sigma, shape=(n_symmetric(k),))
    rows, cols = np.triu_indices(k)
    S = pt.zeros((k, k))
    S = pt.set_subtensor(S[rows, cols], sym)
    S = pt.set_subtensor(S[cols, rows], sym)
    parts.append(pt.as_tensor(phi) @ S)
    G = pm.Deterministic("tie_factor", sum(parts[1:], parts[0]), dims=("item", "factor"))
    return G, phi


def factored_threshold(G, phi: np.ndarray, a, b, intercept=None):
    """h_ab = g_a·φ_b + g_b·φ_a (+ η₀) for the cells (a, b)."""
    phi_t = pt.as_tensor(phi)
    h = (G[a] * phi_t[b]).sum(-1) + (G[b] * phi_t[a]).sum(-1)
    return h if intercept is None else h + intercept
