"""Symmetric positive definite matrices that are banded but for a few dense last rows ("arrowhead").

The negative Hessian of a time fit's log-posterior has this shape when its free coordinates run
through the periods in order (:mod:`bayesrank.model.dynamic`): a period's scores are coupled with
each other by the cells of that period, and an item's score with its neighbouring periods by the
jump prior, so every coupling lies within a band of width about the number of items; a handful of
global coordinates (a tie threshold) are coupled with everything and come last. With

    H = [[A, B], [Bᵀ, C]],   A banded (n × n, half-bandwidth p), B (n × g), C (g × g),

everything a Laplace approximation needs costs O(n p²) instead of the O(n³) of a dense matrix:
LAPACK's banded Cholesky factor of A (``pbtrf`` through :func:`scipy.linalg.cholesky_banded`), the
Schur complement S = C − Bᵀ A⁻¹ B of the globals, solves, the log-determinant, draws from
N(0, H⁻¹), and the entries of H⁻¹ inside the band by Takahashi's recursions (Takahashi, Fagan &
Chin, "Formation of a sparse bus impedance matrix and its application to short circuit study",
1973; Rue & Held, *Gaussian Markov Random Fields*, 2005, §2.3.1), which SciPy does not provide.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.linalg import cho_factor, cho_solve, cho_solve_banded, cholesky_banded, lapack, solve_banded


@dataclass(frozen=True)
class Arrowhead:
    """The factorisation of an arrowhead-banded SPD matrix (the module docstring).

    Build it with :meth:`from_parts`; :class:`numpy.linalg.LinAlgError` when the matrix is not positive
    definite.

    Attributes
    ----------
    upper : ndarray
        ``(p + 1, n)``: A's upper Cholesky factor U (A = UᵀU) in LAPACK's band storage.
    p, n, g : int
        Half-bandwidth, banded size and number of global coordinates.
    W : ndarray
        ``(n, g)``: A⁻¹ B.
    schur : tuple or None
        The Cholesky factor of S = C − BᵀA⁻¹B (``cho_factor`` form), None without globals.
    """

    upper: np.ndarray
    p: int
    n: int
    g: int
    W: np.ndarray
    schur: tuple | None

    @classmethod
    def from_parts(cls, band: np.ndarray, B: np.ndarray, C: np.ndarray) -> Arrowhead:
        """Factor H = [[A, B], [Bᵀ, C]] given A's upper band in LAPACK's storage, ``band[p + i − j, j] =
        A[i, j]`` for i ≤ j (what :func:`scipy.linalg.cholesky_banded` reads)."""
        p, n = band.shape[0] - 1, band.shape[1]
        try:
            upper = cholesky_banded(band, lower=False, check_finite=False)
        except np.linalg.LinAlgError as err:
            raise np.linalg.LinAlgError(f"not positive definite (banded part): {err}") from None
        g = C.shape[0]
        if g == 0:
            return cls(upper, p, n, 0, np.zeros((n, 0)), None)
        W = cho_solve_banded((upper, False), B, check_finite=False)
        S = C - B.T @ W
        try:
            schur = cho_factor(S, lower=False, check_finite=False)
        except np.linalg.LinAlgError as err:
            raise np.linalg.LinAlgError(f"not positive definite (global part): {err}") from None
        return cls(upper, p, n, g, W, schur)

    def solve(self, r: np.ndarray) -> np.ndarray:
        """H⁻¹ r."""
        r = np.asarray(r, dtype=float)
        x_a = cho_solve_banded((self.upper, False), r[:self.n], check_finite=False)
        if self.g == 0:
            return x_a
        x_g = cho_solve(self.schur, r[self.n:] - self.W.T @ r[:self.n], check_finite=False)
        return np.concatenate([x_a - self.W @ x_g, x_g])

    def logdet(self) -> float:
        """log det H."""
        out = 2.0 * float(np.sum(np.log(self.upper[-1])))
        if self.g:
            out += 2.0 * float(np.sum(np.log(np.abs(np.diag(self.schur[0])))))
        return out

    def draws(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``(count, n + g)`` draws from N(0, H⁻¹): the globals from N(0, S⁻¹), then the banded part from
        its conditional N(−A⁻¹B x_g, A⁻¹) (U⁻¹ z has covariance A⁻¹)."""
        z = rng.standard_normal((self.n + self.g, count))
        x_a = solve_banded((0, self.p), self.upper, z[:self.n], check_finite=False)
        if self.g == 0:
            return x_a.T
        R = self.schur[0]   # S = RᵀR: R⁻¹ z has covariance S⁻¹
        x_g = np.linalg.solve(np.triu(R), z[self.n:])
        return np.vstack([x_a - self.W @ x_g, x_g]).T

    @cached_property
    def inverse_band(self) -> np.ndarray:
        """``(p + 1, n)``: the entries of A⁻¹ inside the band, ``out[d, i] = (A⁻¹)[i, i + d]`` (zero past
        the end), by Takahashi's recursions (the module docstring).

        A block of p coordinates at a time, from the last block back. With A = UᵀU, Σ = A⁻¹ solves U Σ = U⁻ᵀ, whose
        right side is lower triangular; for a block I followed by the next p coordinates K (whose Σ_KK the step before
        gave),

            Σ_IK = −U_II⁻¹ U_IK Σ_KK,    Σ_II = U_II⁻¹ (U_II⁻ᵀ − U_IK Σ_IKᵀ),

        in dense products of p × p blocks."""
        p, n = self.p, self.n
        b = max(p, 1)
        out = np.zeros((p + 1, n))
        flat = self.upper.ravel()
        # U[s + i, s + j] sits at band[p − (j − i), s + j]: a fixed pattern shifted by s
        rows, cols = np.arange(b)[:, None], np.arange(b + p)[None, :]
        offset = cols - rows
        inside = (offset >= 0) & (offset <= p)
        base = np.where(inside, (p - offset) * n + cols, 0)
        sigma_next = np.zeros((0, 0))
        for s in range(((n - 1) // b) * b, -1, -b):
            e, k_end = min(s + b, n), min(s + b + p, n)
            width, K = e - s, k_end - e
            U = np.where(inside[:width, :width + K], flat[base[:width, :width + K] + s], 0.0)   # U[s:e, s:k_end]
            inverse, info = lapack.dtrtri(U[:, :width], lower=0)
            if info != 0:
                raise np.linalg.LinAlgError(f"trtri failed ({info})")
            U_IK = U[:, width:]
            sigma_IK = -inverse @ (U_IK @ sigma_next[:K, :K])
            sigma_II = inverse @ (inverse.T - U_IK @ sigma_IK.T)
            sigma_II = 0.5 * (sigma_II + sigma_II.T)
            padded = np.hstack([sigma_II, sigma_IK, np.zeros((width, p + 1))])
            # row r's entries at columns r .. r + p: a strided view of the padded rows
            stride = padded.strides
            diagonals = np.lib.stride_tricks.as_strided(padded, shape=(width, p + 1),
                                                        strides=(stride[0] + stride[1], stride[1]))
            out[:, s:e] = diagonals.T
            sigma_next = sigma_II
        return out

    def covariance_at(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Entries (rows[k], cols[k]) of H⁻¹ within the banded part and its band (|i − j| ≤ p): A⁻¹'s
        from :attr:`inverse_band` plus the globals' correction (A⁻¹B) S⁻¹ (A⁻¹B)ᵀ."""
        rows, cols = np.asarray(rows), np.asarray(cols)
        lo, hi = np.minimum(rows, cols), np.maximum(rows, cols)
        if np.any(hi - lo > self.p) or np.any(hi >= self.n):
            raise ValueError("entries outside the band of the banded part")
        out = self.inverse_band[hi - lo, lo]
        if self.g:
            V = cho_solve(self.schur, self.W.T, check_finite=False)   # S⁻¹ Wᵀ
            out = out + np.einsum("kj,jk->k", self.W[rows], V[:, cols])
        return out


__all__ = ["Arrowhead"]
