"""Exact Hessian of the paired models' log-likelihood in natural coordinates.

Bradley–Terry, Rao–Kupper and Davidson (with or without the Thurstonian covariance) have a
log-likelihood ℓ = Σ_c L_c(z_c, h_c): per cell a linear predictor z and a raw tie threshold h
that depend on a handful of coordinates of the two items. The Hessian is therefore sparse in
natural coordinates and is assembled here from per-cell derivatives of the link (by the
chain rule, scatter-added), in milliseconds — against 2p gradient evaluations for finite
differences or p backward passes for automatic differentiation. ``CompiledModel.hessian``
maps it to the free coordinates θ with the constant Jacobian ∂natural/∂θ. It is what makes
Newton's method affordable for the covariance models (paper models 2, 3, 5, 6, 11–18, 23–30).

Natural coordinates (the model variables, in this order)

* ``score`` — x (no covariance) or μ;
* ``eta_raw`` / ``tie_factor`` — the global threshold or the tie factor G (h linear in them);
* ``cov_t``, ``cov_load_diag``, ``cov_load_off`` — the raw covariance coordinates of
  :func:`bayesrank.structures.thurstonian_covariance` (``cov_t`` is t − 1 for ``k_cov=0``).

With a covariance, z = Δμ·√C/√s̃ where s̃_ab = t_a² + t_b² + ‖λ̃_a − λ̃_b‖², Λ̃ = B L (B the
Helmert basis, L lower-triangular with L₁₁ = 1 and exp(``cov_load_diag``) on the rest of the
diagonal) and C = (1 − 1/m)Σt² + ‖Λ̃‖²_F the trace normalisation. Per cell ℓ depends on
the intermediates w = (Δμ, s̃, h) and on the one global C, so

    ∇²ℓ = Σ_c J_wᵀ ∇²_w L_c J_w + Σ_c ∂L_c/∂s̃ ∇²s̃_c
          + γ∇²C + v∇Cᵀ + ∇Cvᵀ + κ∇C∇Cᵀ,

with γ = Σ_c ∂L_c/∂C, v = Σ_c J_wᵀ ∂²L_c/∂w∂C and κ = Σ_c ∂²L_c/∂C²; the Λ̃ block is then
mapped to (``cov_load_diag``, ``cov_load_off``) by the dense linear ∂Λ̃/∂L plus the exp term.
"""

from __future__ import annotations

import numpy as np

from bayesrank.links import cell_derivatives
from bayesrank.structures import dct_iv_basis, loading_free_entries, zero_sum_basis


class _Assembly:
    """Accumulates Σ_c J_uᵀ W_c J_v for per-cell predictors with sparse coefficients.

    A predictor is ``(rows, coef)``: ``rows[c]`` the natural coordinates it depends on in
    cell c, ``coef[c]`` its first derivatives there.
    """

    def __init__(self, size: int):
        self.size = size
        self.index: list[np.ndarray] = []
        self.weight: list[np.ndarray] = []

    def outer(self, pred_u, pred_v, w):
        rows_u, coef_u = pred_u
        rows_v, coef_v = pred_v
        vals = w[:, None, None] * coef_u[:, :, None] * coef_v[:, None, :]
        idx = rows_u[:, :, None] * self.size + rows_v[:, None, :]
        self.index.append(idx.ravel())
        self.weight.append(vals.ravel())

    def predictors(self, preds, W):
        """Σ_c J_uᵀ W[u][v]_c J_v over every pair of predictors (u, v)."""
        for u, pred_u in enumerate(preds):
            for v, pred_v in enumerate(preds):
                self.outer(pred_u, pred_v, W[u][v])

    def add(self, rows, cols, w):
        """Entries w at (rows, cols) (arrays of equal length)."""
        self.index.append((np.asarray(rows) * self.size + np.asarray(cols)).ravel())
        self.weight.append(np.asarray(w, dtype=float).ravel())

    def matrix(self) -> np.ndarray:
        if not self.index:
            return np.zeros((self.size, self.size))
        flat = np.bincount(np.concatenate(self.index), np.concatenate(self.weight), self.size**2)
        return flat.reshape(self.size, self.size)


def _vector(size, pred, w) -> np.ndarray:
    """Σ_c w_c coef_c scattered at rows_c."""
    rows, coef = pred
    return np.bincount(rows.ravel(), (w[:, None] * coef).ravel(), size)


def paired_natural_hessian(framework, data, values) -> tuple[tuple[str, ...], np.ndarray]:
    """Hessian of the log-likelihood of a paired framework in its natural coordinates.

    Parameters
    ----------
    framework : BradleyTerry, RaoKupper or Davidson
    data : Comparisons
        The prepared data.
    values : dict of ndarray
        Values of the model variables (``CompiledModel`` reported values).

    Returns
    -------
    names : tuple of str
        Model variables whose flattened, concatenated values are the coordinates of ``H``.
    H : ndarray
    """
    m, n = data.n_items, data.n_cells
    a, b = data.a, data.b
    k_tie = getattr(framework, "k_tie", None)
    k_cov = framework.k_cov
    names: list[str] = ["score"]
    offsets = {"score": 0}
    size = m

    def _claim(name, count):
        nonlocal size
        names.append(name)
        offsets[name] = size
        size += count

    # ---- tie threshold h (linear in its natural coordinates)
    h = None
    if k_tie is not None:
        if k_tie == 0:
            _claim("eta_raw", 1)
            h = np.full(n, float(values["eta_raw"]))
            h_pred = (np.full((n, 1), offsets["eta_raw"]), np.ones((n, 1)))
        else:
            G, phi = values["tie_factor"], dct_iv_basis(m, k_tie)
            _claim("tie_factor", m * k_tie)
            h = (G[a] * phi[b]).sum(-1) + (G[b] * phi[a]).sum(-1)
            factor = offsets["tie_factor"] + np.arange(k_tie)  # G[i, j] at offset + i*k + j
            h_pred = (
                np.column_stack([a[:, None] * k_tie + factor, b[:, None] * k_tie + factor]),
                np.column_stack([phi[b], phi[a]]),
            )
            if framework.tie_intercept:
                _claim("eta_raw", 1)
                h = h + float(values["eta_raw"])
                h_pred = (
                    np.column_stack([h_pred[0], np.full(n, offsets["eta_raw"])]),
                    np.column_stack([h_pred[1], np.ones(n)]),
                )

    score = values["score"]
    delta = score[a] - score[b]
    delta_pred = (np.column_stack([a, b]), np.column_stack([np.ones(n), -np.ones(n)]))
    counts = data.counts()

    if k_cov is None:  # z = Δx: both predictors linear
        _, curv = cell_derivatives(framework.link, delta, h, counts)
        asm = _Assembly(size)
        if h is None:
            asm.predictors([delta_pred], [[curv[0]]])
        else:
            w_dd, w_dh, w_hh = curv
            asm.predictors([delta_pred, h_pred], [[w_dd, w_dh], [w_dh, w_hh]])
        return tuple(names), asm.matrix()
    return _covariance_hessian(framework, data, values, names, offsets, size, delta, delta_pred, h,
                               h_pred if h is not None else None, counts)


def _covariance_hessian(framework, data, values, names, offsets, size, delta, delta_pred, h, h_pred, counts):
    m, n, k = data.n_items, data.n_cells, framework.k_cov
    a, b = data.a, data.b
    t = np.asarray(values["cov_t"], dtype=float) + (1.0 if k == 0 else 0.0)
    # Λ̃ = B L and its natural block: the Λ̃ entries get temporary coordinates after t
    off_t = size
    size_nat = size + m + m * k
    if k:
        L = np.zeros((m - 1, k))
        L[0, 0] = 1.0
        diag_index, (rows_off, cols_off) = loading_free_entries(m, k)
        diag = np.exp(np.asarray(values.get("cov_load_diag", np.zeros(0)), dtype=float))
        L[diag_index, diag_index] = diag
        L[rows_off, cols_off] = np.asarray(values.get("cov_load_off", np.zeros(0)), dtype=float)
        basis = zero_sum_basis(m)
        lam = basis @ L
    else:
        lam = np.zeros((m, 0))
    off_lam = off_t + m
    C = (1.0 - 1.0 / m) * np.sum(t**2) + np.sum(lam**2)
    diff = lam[a] - lam[b]
    s = t[a] ** 2 + t[b] ** 2 + np.sum(diff**2, axis=1)

    # z = Δ √C s^(-1/2) and its derivatives in (Δ, s, C)
    rc, rs = np.sqrt(C), 1.0 / np.sqrt(s)
    z = delta * rc * rs
    z_d, z_s, z_c = rc * rs, -0.5 * delta * rc * rs**3, 0.5 * delta * rs / rc
    z_ds, z_dc = -0.5 * rc * rs**3, 0.5 * rs / rc
    z_ss, z_sc, z_cc = 0.75 * delta * rc * rs**5, -0.25 * delta * rs**3 / rc, -0.25 * delta * rs / C**1.5

    grads, curv = cell_derivatives(framework.link, z, h, counts)
    L_z = grads[0]
    L_zz = curv[0]
    ell_s = L_z * z_s
    w_dd = L_zz * z_d**2
    w_ds = L_zz * z_d * z_s + L_z * z_ds
    w_ss = L_zz * z_s**2 + L_z * z_ss
    c_d = L_zz * z_d * z_c + L_z * z_dc
    c_s = L_zz * z_s * z_c + L_z * z_sc
    kappa = float(np.sum(L_zz * z_c**2 + L_z * z_cc))
    gamma = float(np.sum(L_z * z_c))

    factor = np.arange(k)
    s_pred = (
        np.column_stack([off_t + a, off_t + b, off_lam + a[:, None] * k + factor, off_lam + b[:, None] * k + factor]),
        np.column_stack([2 * t[a], 2 * t[b], 2 * diff, -2 * diff]),
    )
    if h is None:
        preds, W, cross = [delta_pred, s_pred], [[w_dd, w_ds], [w_ds, w_ss]], [c_d, c_s]
    else:
        L_zh, L_hh = curv[1], curv[2]
        w_dh, w_sh = L_zh * z_d, L_zh * z_s
        preds = [delta_pred, s_pred, h_pred]
        W = [[w_dd, w_ds, w_dh], [w_ds, w_ss, w_sh], [w_dh, w_sh, L_hh]]
        cross = [c_d, c_s, L_zh * z_c]

    asm = _Assembly(size_nat)
    asm.predictors(preds, W)
    # Σ_c ℓ_s ∇²s̃_c: 2ℓ_s on t_a, t_b; 2ℓ_s [[I, −I], [−I, I]] on (λ̃_a, λ̃_b)
    asm.add(off_t + a, off_t + a, 2 * ell_s)
    asm.add(off_t + b, off_t + b, 2 * ell_s)
    if k:
        ia = off_lam + a[:, None] * k + factor
        ib = off_lam + b[:, None] * k + factor
        w2 = np.broadcast_to((2 * ell_s)[:, None], ia.shape)
        asm.add(ia, ia, w2)
        asm.add(ib, ib, w2)
        asm.add(ia, ib, -w2)
        asm.add(ib, ia, -w2)
    H = asm.matrix()

    # the global scale C
    grad_C = np.zeros(size_nat)
    grad_C[off_t : off_t + m] = 2 * (1.0 - 1.0 / m) * t
    grad_C[off_lam:] = 2 * lam.ravel()
    hess_C = np.zeros(size_nat)
    hess_C[off_t : off_t + m] = 2 * (1.0 - 1.0 / m)
    hess_C[off_lam:] = 2.0
    v = sum(_vector(size_nat, p, c) for p, c in zip(preds, cross))
    H[np.diag_indices(size_nat)] += gamma * hess_C
    H += np.outer(v, grad_C) + np.outer(grad_C, v) + kappa * np.outer(grad_C, grad_C)

    names.append("cov_t")
    if not k:
        return tuple(names), H

    # Λ̃ (m·k entries) → (cov_load_diag, cov_load_off): ∂vec(Λ̃)/∂(diag, off), dense
    n_diag, n_off = k - 1, rows_off.size
    M = np.zeros((m * k, n_diag + n_off))
    for j in diag_index:
        M[np.arange(m) * k + j, j - 1] = basis[:, j] * diag[j - 1]
    for q, (r, c) in enumerate(zip(rows_off, cols_off)):
        M[np.arange(m) * k + c, n_diag + q] = basis[:, r]
    keep = slice(0, off_lam)
    lam_sl = slice(off_lam, size_nat)
    out = np.zeros((off_lam + n_diag + n_off,) * 2)
    out[keep, keep] = H[keep, keep]
    cross_block = H[keep, lam_sl] @ M
    out[keep, off_lam:] = cross_block
    out[off_lam:, keep] = cross_block.T
    out[off_lam:, off_lam:] = M.T @ H[lam_sl, lam_sl] @ M
    # second derivative of exp(diag): ∂ℓ/∂Λ̃ · ∂²Λ̃/∂diag_j² = ∂ℓ/∂diag_j
    if n_diag:
        grad_lam = _vector(size_nat, s_pred, ell_s)[lam_sl] + gamma * grad_C[lam_sl]
        grad_diag = grad_lam @ M[:, :n_diag]
        out[np.arange(off_lam, off_lam + n_diag), np.arange(off_lam, off_lam + n_diag)] += grad_diag
        names.append("cov_load_diag")
    if n_off:
        names.append("cov_load_off")
    return tuple(names), out
