"""The paper's synthetic simulators (Frauen et al., App. J), with their truth.

Contexts X ~ U[0, 1]^p. Item utilities
u_j(x) = W_jᵀx + b_j + W⁽q⁾_jᵀ x²_{1:q} + s·sin(2πx₀ + ϕ_j) with W ~ N(0, σ_ℓ² = 1), W⁽q⁾ ~ N(0, 0.6²),
s = 0.6, q = min(2, p); unspecified in the paper and chosen here: b_j ~ N(0, 1), ϕ_j ~ U(0, 2π),
b^π_j ~ N(0, 0.3²).

``nonlinear_tie`` (C = 3): d_jk = (u_j − u_k)/T + β_pos(x₀ − ½), tie logit
τ₀ − τ₁|d_jk| + τ_c cos(2πx₁), μ_jk = softmax(d, −d, tie logit), mixed with the uniform so that
every category has mass ≥ ε_μ.

``bt_misspec`` (binary): μ_jk1 = σ(d_jk + γ C_jk) with the cycle C_jk = +1 if k ≡ j + 1,
−1 if k ≡ j − 1 (mod K), else 0 (γ = 0: Bradley–Terry).

Selection, independently per ordered pair: π_jk(x) = (1 − λ_π)π_p + λ_π σ(logit π_p −
κ_π|d_jk| + η_π(x₀ − ½) + b^π_j + b^π_k), clipped to [π_min, π_max]; κ_π = 0.8, η_π = 0.4.

The truth θ = E[F(μ(X))] is a Monte-Carlo average over 10⁶ fresh contexts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.gars.scores import functional, scheme_of

WINNER_NAMES = np.array(["model_a", "model_b", "tie"])


def _sigmoid(x):
    return 0.5 * (1 + np.tanh(0.5 * x))


@dataclass(frozen=True, eq=False)
class Simulator:
    """One draw of a simulator's coefficients (see the module docstring)."""

    kind: str
    K: int
    p: int
    W: np.ndarray
    b: np.ndarray
    Wq: np.ndarray
    phase: np.ndarray
    b_pi: np.ndarray
    gamma: float = 0.0
    T: float = 1.0
    beta_pos: float = 0.0
    tau: tuple = (0.2, 1.2, 0.4)
    eps_mu: float = 0.05
    pi_p: float = 0.3
    lam_pi: float = 0.1
    pi_min: float = 0.01
    pi_max: float = 0.5
    kappa_pi: float = 0.8
    eta_pi: float = 0.4
    judge_sigma: float | None = None

    @property
    def items(self) -> tuple[str, ...]:
        return tuple(f"llm{j}" for j in range(self.K))

    @property
    def scheme(self) -> str:
        return "win-loss-tie" if self.kind == "nonlinear_tie" else "binary"

    def contexts(self, n: int, rng) -> np.ndarray:
        return rng.random((n, self.p))

    def utilities(self, X):
        q = min(2, self.p)
        return (X @ self.W.T + self.b + (X[:, :q] ** 2) @ self.Wq.T
                + 0.6 * np.sin(2 * np.pi * X[:, :1] + self.phase))

    def _d(self, X):
        u = self.utilities(X)
        d = (u[:, :, None] - u[:, None, :]) / self.T
        if self.kind == "nonlinear_tie":
            d = d + self.beta_pos * (X[:, 0, None, None] - 0.5)
        return d

    def mu(self, X) -> np.ndarray:
        """``(n, K, K, 3)`` true outcome probabilities (first wins, second wins, tie)."""
        d = self._d(X)
        K = self.K
        if self.kind == "nonlinear_tie":
            t0, t1, tc = self.tau
            x1 = X[:, 1] if self.p > 1 else X[:, 0]
            tie = t0 - t1 * np.abs(d) + tc * np.cos(2 * np.pi * x1)[:, None, None]
            logits = np.stack([d, -d, tie], axis=-1)
            mu = np.exp(logits - logits.max(axis=-1, keepdims=True))
            mu /= mu.sum(axis=-1, keepdims=True)
            mu = (1 - 3 * self.eps_mu) * mu + self.eps_mu
        else:
            j = np.arange(K)
            cycle = (((j[None, :] - j[:, None]) % K == 1).astype(float)
                     - ((j[:, None] - j[None, :]) % K == 1).astype(float))
            win = _sigmoid(d + self.gamma * cycle)
            mu = np.stack([win, 1 - win, np.zeros_like(win)], axis=-1)
        mu[:, np.arange(K), np.arange(K)] = 0
        return mu

    def propensity(self, X) -> np.ndarray:
        """``(n, K, K)`` labelling probabilities of the simulator's own (random) design."""
        d = self._d(X)
        logit = (np.log(self.pi_p / (1 - self.pi_p)) - self.kappa_pi * np.abs(d)
                 + self.eta_pi * (X[:, 0, None, None] - 0.5) + self.b_pi[:, None] + self.b_pi[None, :])
        pi = np.clip((1 - self.lam_pi) * self.pi_p + self.lam_pi * _sigmoid(logit), self.pi_min, self.pi_max)
        pi[:, np.arange(self.K), np.arange(self.K)] = 0
        return pi

    def judge(self, X, rng) -> np.ndarray:
        """A synthetic LLM judge: the true log-probabilities plus N(0, σ²) noise, renormalised."""
        mu = self.mu(X)
        logp = np.log(np.where(mu > 0, mu, 1.0)) + self.judge_sigma * rng.standard_normal(mu.shape)
        p = np.where(mu > 0, np.exp(logp - logp.max(axis=-1, keepdims=True)), 0.0)
        total = p.sum(axis=-1, keepdims=True)
        return p / np.where(total > 0, total, 1.0)

    def records(self, n: int, random_seed=None, policy=None, X=None) -> pd.DataFrame:
        """A table for :func:`bayesrank.gars.dml.dmlrank`: one row per labelled ordered pair (with its
        true ``propensity``) and one per context with no label; features ``x0 … x{p-1}``;
        with a judge, a row for every ordered pair with ``judge_a, judge_b[, judge_tie]``.

        ``policy``: a function X ↦ ``(n, K, K)`` labelling probabilities (default: the
        simulator's own design); ``X``: the contexts (default: n fresh ones).
        """
        rng = np.random.default_rng(random_seed)
        X = self.contexts(n, rng) if X is None else X
        n = len(X)
        K = self.K
        pi = self.propensity(X) if policy is None else policy(X)
        selected = rng.random(pi.shape) < pi
        mu = self.mu(X)
        judge = self.judge(X, rng) if self.judge_sigma is not None else None
        rows = selected | (judge is not None)
        rows[:, np.arange(K), np.arange(K)] = False
        c, j, k = np.nonzero(rows)
        cum = mu[c, j, k].cumsum(axis=-1)
        label = (rng.random(len(c))[:, None] > cum).sum(axis=-1)
        winner = np.where(selected[c, j, k], WINNER_NAMES[np.minimum(label, 2)], None)
        items = np.array(self.items, dtype=object)
        frame = pd.DataFrame({"context": c, "model_a": items[j], "model_b": items[k], "winner": winner,
                              "propensity": pi[c, j, k]})
        if judge is not None:
            names = ["judge_a", "judge_b", "judge_tie"][:3 if self.kind == "nonlinear_tie" else 2]
            for q, name in enumerate(names):
                frame[name] = judge[c, j, k, q]
        empty = np.setdiff1d(np.arange(n), c)
        if empty.size:
            frame = pd.concat([frame, pd.DataFrame({"context": empty})], ignore_index=True)
        for f in range(self.p):
            frame[f"x{f}"] = X[frame["context"].to_numpy(), f]
        return frame.sort_values("context", kind="stable").reset_index(drop=True)

    def truth(self, scores=("borda", "bt", "rank-centrality"), n_mc: int = 1_000_000, random_seed=12345,
              batch: int = 100_000) -> dict[str, np.ndarray]:
        """θ = E[F(μ(X))] of each score by Monte Carlo over ``n_mc`` fresh contexts."""
        rng = np.random.default_rng(random_seed)
        scores = (scores,) if isinstance(scores, str) else tuple(scores)
        total = {s: np.zeros(self.K) for s in scores}
        for start in range(0, n_mc, batch):
            mu = self.mu(self.contexts(min(batch, n_mc - start), rng))
            for s in scores:
                total[s] += functional(mu, s, scheme_of(self.scheme)).sum(axis=0)
        return {s: v / n_mc for s, v in total.items()}


def simulator(kind: str, K: int = 3, p: int = 2, random_seed=0, **options) -> Simulator:
    """Draw a simulator's coefficients: ``kind`` is ``"nonlinear_tie"`` or ``"bt_misspec"``;
    ``options`` override the defaults (``gamma``, ``pi_p``, ``lam_pi``, ``pi_min``, ``pi_max``,
    ``eps_mu``, ``judge_sigma``, ...)."""
    if kind not in ("nonlinear_tie", "bt_misspec"):
        raise ValueError(f"unknown simulator {kind!r}; use 'nonlinear_tie' or 'bt_misspec'.")
    rng = np.random.default_rng(random_seed)
    q = min(2, p)
    return Simulator(kind=kind, K=K, p=p, W=rng.normal(0, 1, (K, p)), b=rng.normal(0, 1, K),
                     Wq=rng.normal(0, 0.6, (K, q)), phase=rng.uniform(0, 2 * np.pi, K),
                     b_pi=rng.normal(0, 0.3, K), **options)


__all__ = ["Simulator", "WINNER_NAMES", "simulator"]
