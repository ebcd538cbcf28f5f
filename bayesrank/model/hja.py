r"""HJA: heterogeneous judge-aware ranking — consensus, signed judge sensitivity and low-rank
judge disagreement (Yu, Wang, Chen, Li & Du, "Heterogeneous Judge-Aware Ranking with
Sensitivity, Disagreement, and Confidence", arXiv:2605.05073).

Every judge k has its own scores S_k over the N items, and the K×N score matrix is

.. math::

    S = γ μ^⊤ + U V^⊤, \qquad P(a ≻ b \mid k) = σ(S_{ka} − S_{kb} \;[+\, δ_k x]),

with the consensus μ (the row average of S), the signed consensus sensitivity γ_k (Σγ = K,
γ_k ≤ 0 allowed) and a rank-r disagreement UVᵀ orthogonal to the consensus (the paper's
Condition 1). Rank r runs from 0 (the signed judge-aware model) to min(K − 1, N − 2).

The free parameterisation
-------------------------
The likelihood sees S only, and {S = γμᵀ + UVᵀ} is exactly the set of row-centred K×N
matrices of rank ≤ q = r + 1 (μ lies in the row space of S, so S P⊥_μ has rank ≤ r). We
write S = A Bᵀ with free *judge factors* A (K×q) and zero-sum *item factors* B (N×q), so the
linear predictor is d = A_k · (B_a − B_b): a bilinear function of two variables that are
themselves affine in the free coordinates θ (the compiled-structure contract).

The factorisation has a symmetry its constraints do not remove: A Bᵀ = (AG)(BG⁻ᵀ)ᵀ for
G ∈ GL(q), a q²-dimensional orbit of θ's with the same likelihood. We do not pin it by
construction — every linear pin (say, q "anchor" judges with A_k = e_k) is a chart that
breaks down where the pinned rows are nearly dependent, which is where the weak trailing
components of an over-large rank live, and that is exactly what rank selection visits.
Instead the framework declares the symmetry (:meth:`HJA.gauge`: the directions (AX, −BXᵀ),
X ∈ ℝ^{q×q}) and the inference layer removes it: the MAP's Newton steps and its covariance
live in the complement of the orbit's tangent space at θ̂ (a chart of the quotient; the
covariance is T (Tᵀ I T)⁻¹ Tᵀ), and before each Newton phase the factors are moved to the
balanced representative A = P Σ^½, B = Q Σ^½ of the SVD S = P Σ Qᵀ (:meth:`HJA.canonical`),
where the chart is best conditioned. The free parameters are q(K + N − 1 − q) =
(K − 1) + (N − 1) + r(K + N − r − 3), the paper's dimension of Θ_r. Only quantities that are
functions of S are reported, so none depends on the representative.

Identified quantities: the canonical map
----------------------------------------
Every reported quantity is a function of S (Prop. 1, constructive): μ = Sᵀ1/K,
γ = Sμ/‖μ‖² (so Σγ = K), UVᵀ = S − γμᵀ (the *disagreement*), the leverage
h_k = ‖(UVᵀ)_k‖ and ρ_k = h_k/(|γ_k| ‖μ‖). They are model Deterministics
(:func:`consensus_split`, one definition for PyTensor and NumPy), so MAP's delta method and
draws and every NUTS draw go through the same canonical map, and the MAP's Wald intervals
are those of the identified tangent space (the paper's Theorem 3 in its
identified local parameterization, §5; the pseudo-inverse of the full information is not the
inverse on that tangent space). The factors U, V
(N⁻¹VᵀV = I, K⁻¹UᵀU = diag(d) decreasing, the sign rule) come from an SVD of UVᵀ
(:func:`canonical`), identified only when the singular strengths d_j are distinct.

Ties and position bias reuse the judge-aware pieces (:class:`~bayesrank.model.judge_aware.JudgeAware`):
``half`` (the paper's: a tie is half a win for each side), ``drop``, ``davidson`` or
``rao-kupper`` (that link, with a tie parameter η_k per judge), and ``position_bias`` (δ_k per
judge).

Priors for NUTS (:class:`HJAPriors`): ZeroSumNormal(``score``) on each column of the item
factors, Normal(e₁, ``loading``) on each judge's factor loadings (a priori every judge loads on
the first factor: the consensus), and a Gaussian shrinkage of the disagreement,
p ∝ exp(−‖UVᵀ‖²_F / (2 τ²)) = exp(−Σ_j σ_j² / (2 τ²)) with τ = ``disagreement``: a prior on
the singular strengths σ_j of UVᵀ alone (orthogonally invariant), which pulls unneeded
components to zero. Override with ``HJA(rank=1, priors=HJAPriors(disagreement=0.5))``.

Examples
--------
>>> import bayesrank as br
>>> fit = br.fit(br.HJA(rank=1), "mtbench-judges")
>>> fit.leaderboard()[["rank", "name", "score"]].round(2)
   rank             name  score
0     1        claude-v1   1.19
1     2            gpt-4   0.92
2     3    gpt-3.5-turbo   0.63
3     4       alpaca-13b  -0.44
4     5  vicuna-13b-v1.2  -0.63
5     6        llama-13b  -1.67
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import ModelSpecError, as_count
from bayesrank.model.framework import Findings, Local
from bayesrank.model.judge_aware import TIE_HANDLING, JudgeAware, JudgePriors
from bayesrank.model.links import TIE_LINKS
from bayesrank.model.structures import empirical_scores, free_real, zero_sum_scores
from bayesrank.runtime.lazy import lazy_module

pm = lazy_module("pymc")
special = lazy_module("scipy.special")
pt = lazy_module("pytensor.tensor")

#: Relative size below which a singular strength, ‖μ‖ or a leading entry counts as zero.
ZERO = 1e-8
#: √(95% point of χ² with 2 degrees of freedom): the gap of two equal singular values, in units
#: of √2 × their standard deviation, exceeds it with probability 5%. (χ²₂ is the exponential
#: distribution of mean 2, whose 95% point is −2 log 0.05.)
DISTINCT_CHI2 = float(np.sqrt(-2 * np.log(0.05)))


@dataclass(frozen=True)
class HJAPriors(JudgePriors):
    """Weakly informative priors of :class:`HJA` for ``method="nuts"`` (MAP: flat, = MLE).

    Attributes
    ----------
    score : float
        ``ZeroSumNormal(score)`` on each column of the item factors B (logit scale).
    loading : float
        ``Normal(e₁, loading)`` on each judge's loadings A_k (1 on the first factor, 0 on the
        others: a priori every judge follows the first factor).
    disagreement : float
        τ of the shrinkage p ∝ exp(−‖UVᵀ‖²_F/(2τ²)) on the disagreement (its singular
        strengths); smaller values shrink harder toward the rank-0 model.
    tie, position : float
        As :class:`~bayesrank.model.judge_aware.JudgePriors` (η_k, δ_k).
    """

    score: float = 3.0
    loading: float = 1.0
    disagreement: float = 1.0


def consensus_split(S):
    """The canonical consensus split of judge scores: γ, μ and the disagreement S − γμᵀ.

    μ = Sᵀ1/K (row average), γ = Sμ/‖μ‖² (so Σγ = K for row-centred S) and UVᵀ = S − γμᵀ
    (1ᵀUVᵀ = 0, UVᵀμ = 0). Written once for NumPy arrays (with any leading batch axes:
    draws) and PyTensor tensors (the model's Deterministics).

    Parameters
    ----------
    S : array or tensor
        ``(..., K, N)`` judge scores.

    Returns
    -------
    gamma : ``(..., K)``
    mu : ``(..., N)``
    disagreement : ``(..., K, N)``
    """
    mu = S.mean(axis=-2)
    gamma = (S * mu[..., None, :]).sum(axis=-1) / (mu * mu).sum(axis=-1)[..., None]
    return gamma, mu, S - gamma[..., :, None] * mu[..., None, :]


def leverage(disagreement):
    """h_k = ‖(UVᵀ)_k‖₂, the size of each judge's departure from the consensus (NumPy or PyTensor)."""
    return ((disagreement * disagreement).sum(axis=-1)) ** 0.5


@dataclass(frozen=True)
class Canonical:
    """(γ, μ, U, V) of Condition 1 for one S, or for a batch of draws (leading axis).

    Attributes
    ----------
    gamma : ``(..., K)``
    mu : ``(..., N)``
    U : ``(..., K, r)``
        K⁻¹UᵀU = diag(strengths), the first clearly nonzero entry of each column positive.
    V : ``(..., N, r)``
        N⁻¹VᵀV = I, Vᵀ1 = 0, μᵀV = 0.
    singular_values : ``(..., r)``
        σ_j of UVᵀ, decreasing (σ_j = √(K N d_j)).
    strengths : ``(..., r)``
        d_j = σ_j²/(KN), the diagonal of K⁻¹UᵀU.
    """

    gamma: np.ndarray
    mu: np.ndarray
    U: np.ndarray
    V: np.ndarray
    singular_values: np.ndarray
    strengths: np.ndarray

    @property
    def scores(self) -> np.ndarray:
        """S = γμᵀ + UVᵀ."""
        return self.gamma[..., :, None] * self.mu[..., None, :] + self.U @ np.swapaxes(self.V, -1, -2)


def canonical(S: np.ndarray, rank: int, reference: np.ndarray | None = None) -> Canonical:
    """The constructive canonical map S → (γ, μ, U, V) of Prop. 1 (paper §2.5).

    Steps 1–3 are :func:`consensus_split`; then the thin SVD of the disagreement
    S̃ = P Σ Rᵀ gives V = √N R_r and U = P_r Σ_r/√N. Column signs follow the paper's rule (the
    first clearly nonzero entry of each U column is positive) or, given ``reference`` U
    columns, agree with them (for draws: the rule is fragile when that entry is near 0).

    Parameters
    ----------
    S : ndarray
        ``(..., K, N)`` row-centred judge scores.
    rank : int
        r (columns of U and V kept).
    reference : ndarray, optional
        ``(K, r)`` U whose column signs the result should share.

    Returns
    -------
    Canonical
    """
    S = np.asarray(S, dtype=float)
    K, N = S.shape[-2:]
    gamma, mu, resid = consensus_split(S)
    P, sig, Rt = np.linalg.svd(resid, full_matrices=False)
    P, sig, R = P[..., :, :rank], sig[..., :rank], np.swapaxes(Rt[..., :rank, :], -1, -2)
    U = P * sig[..., None, :] / np.sqrt(N)
    V = np.sqrt(N) * R
    if reference is not None:
        sign = np.sign(np.einsum("...kj,kj->...j", U, np.asarray(reference, dtype=float)))
    else:
        scale = np.abs(U).max(axis=-2, keepdims=True)
        lead = np.argmax(np.abs(U) > ZERO * np.maximum(scale, 1e-300), axis=-2)
        sign = np.sign(np.take_along_axis(U, lead[..., None, :], axis=-2)[..., 0, :])
    sign = np.where(sign == 0, 1.0, sign)
    return Canonical(gamma, mu, U * sign[..., None, :], V * sign[..., None, :], sig, sig**2 / (K * N))


def judge_empirical_scores(data: Comparisons) -> np.ndarray:
    """``(K, N)`` centred empirical logits of every judge's verdicts
    (:func:`~bayesrank.model.structures.empirical_scores` judge by judge): a start for S."""
    return np.vstack([empirical_scores(data.subset(data.judge == k)) for k in range(data.n_judges)])


def balanced_factors(S: np.ndarray, q: int) -> dict[str, np.ndarray]:
    """A = P_q Σ_q^½ and B = Q_q Σ_q^½ from the thin SVD S = P Σ Qᵀ (the rank-q part of S)."""
    P, sig, Qt = np.linalg.svd(np.asarray(S, dtype=float), full_matrices=False)
    root = np.sqrt(sig[:q])
    return {"judge_factor": P[:, :q] * root, "item_factor": Qt[:q].T * root}


def judge_components(data: Comparisons) -> dict[int, list[list[str]]]:
    """Judges whose own comparison graph over the N items is disconnected: judge index → its
    groups of items (an item the judge never compared is a group of its own)."""
    out = {}
    for k in range(data.n_judges):
        sel = data.judge == k
        graph = coo_matrix((np.ones(int(sel.sum())), (data.a[sel], data.b[sel])), shape=(data.n_items,) * 2)
        n, labels = connected_components(graph, directed=False)
        if n > 1:
            groups = sorted((np.flatnonzero(labels == g) for g in range(n)), key=len, reverse=True)
            out[k] = [[data.items[i] for i in g] for g in groups]
    return out


def zero_test(x: np.ndarray, x_draws: np.ndarray) -> tuple[float, float]:
    """Wald test of x = 0 from draws of x̂: x̂ᵀ Σ̂⁺ x̂ with Σ̂ the covariance of the draws, against
    χ² with rank(Σ̂) degrees of freedom (N − 1 for a zero-sum vector: μ for Condition 2, or the
    difference of two judges' score rows). Returns (statistic, p-value)."""
    cov = np.atleast_2d(np.cov(x_draws, rowvar=False))
    w, vec = np.linalg.eigh(cov)
    keep = w > 1e-10 * max(w[-1], 1e-300)
    proj = vec[:, keep].T @ x
    stat = float(np.sum(proj**2 / w[keep]))
    return stat, float(special.chdtrc(int(keep.sum()), stat))


def max_rank(n_judges: int, n_items: int) -> int:
    """R_max = min(K − 1, N − 2)."""
    return min(n_judges - 1, n_items - 2)


@dataclass(frozen=True)
class HJA(JudgeAware):
    """Heterogeneous judge-aware BTL: S = γμᵀ + UVᵀ, σ(S_ka − S_kb [+ δ_k x]) (module docstring).

    Parameters
    ----------
    rank : int
        r, the rank of the disagreement UVᵀ: 0 (the signed judge-aware model) to
        min(K − 1, N − 2). The CLI's ``--rank auto`` chooses it by cross-validation
        (:func:`bayesrank.evaluation.selection.select_rank`).
    ties : {"half", "drop", "davidson", "rao-kupper"}
        As :class:`~bayesrank.model.judge_aware.JudgeAware` (``"half"``: the paper's).
    position_bias : bool
        A per-judge intercept δ_k for the answer shown first.
    priors : HJAPriors
        Prior scales for NUTS.

    Notes
    -----
    Reported (all identified): ``score`` (the consensus μ), ``gamma`` (γ), ``leverage``
    (h_k), ``relative_leverage`` (ρ_k), ``judge_score`` (S), ``disagreement`` (UVᵀ)
    [, ``delta``, ``eta``].
    """

    rank: int = field(default=1, metadata={"help": (
        "rank r of the judges' disagreement UV^T (0: signed judge-aware model; at most min(K-1, N-2)); "
        "'auto' chooses it by 5-fold cross-validation"), "auto": "cv"})
    ties: str = field(default="half", metadata={"choices": TIE_HANDLING, "help": (
        "half: a tie is half a win for each side (the paper's); drop: ties are ignored; "
        "davidson / rao-kupper: ties modelled by that link, with a tie parameter per judge")})
    priors: HJAPriors = field(default_factory=HJAPriors, kw_only=True)

    name = "hja"
    score_meaning = "consensus μ (the judges' average scores, logit scale)"
    discrimination = "signed"
    #: the paper's intervals use the plug-in (expected) Fisher information, eq. (10)
    default_information = "expected"

    def __post_init__(self):
        super().__post_init__()
        if (rank := as_count(self.rank)) is None:
            raise ModelSpecError(f"rank must be a non-negative integer, got {self.rank!r}.")
        object.__setattr__(self, "rank", rank)

    @property
    def n_factors(self) -> int:
        """q = r + 1, the rank of S."""
        return self.rank + 1

    # ------------------------------------------------------------------ data
    def prepare(self, data: Comparisons) -> Comparisons:
        """The judge-aware checks and tie convention, and the rank bound.

        Raises
        ------
        ModelSpecError
            ``rank`` above min(K − 1, N − 2).
        DataError
            As :meth:`JudgeAware.prepare` (no judges, one judge, a judge without comparisons).
        """
        data = super().prepare(data)
        top = max_rank(data.n_judges, data.n_items)
        if self.rank > top:
            raise ModelSpecError(
                f"rank {self.rank} is too large for {data.n_judges} judges and {data.n_items} items: "
                f"at most min(K − 1, N − 2) = {top}."
            )
        return data

    def coords(self, data):
        coords = super().coords(data)
        coords["factor"] = list(range(self.n_factors))
        return coords

    # ------------------------------------------------------------------ model
    def variables(self, data, prior):
        q = self.n_factors
        raw = zero_sum_scores("item_factor_raw", ("factor", "item"), prior, self.priors.score)
        B = pm.Deterministic("item_factor", raw.T, dims=("item", "factor"))
        A = free_real("judge_factor", prior, self.priors.loading, mu=np.eye(q)[0], dims=("judge", "factor"))
        S = pm.Deterministic("judge_score", A @ B.T, dims=("judge", "item"))
        gamma, mu, resid = consensus_split(S)
        pm.Deterministic("score", mu, dims="item")
        pm.Deterministic("gamma", gamma, dims="judge")
        pm.Deterministic("disagreement", resid, dims=("judge", "item"))
        h = pm.Deterministic("leverage", leverage(resid), dims="judge")
        pm.Deterministic("relative_leverage", h / (pt.abs(gamma) * pt.sqrt((mu * mu).sum())), dims="judge")
        if prior != "flat":
            pm.Potential("disagreement_shrinkage", -(resid * resid).sum() / (2 * self.priors.disagreement**2))
        self._judge_terms(data, prior)

    def _contrast_inputs(self):
        return {"A": Local("judge_factor", "judge_index"),
                "B_a": Local("item_factor", "item_a"), "B_b": Local("item_factor", "item_b")}

    @staticmethod
    def _contrast(u, cells):
        """S_ka − S_kb = A_k · (B_a − B_b)."""
        return (u["A"] * (u["B_a"] - u["B_b"])).sum(axis=-1)

    def initial_values(self, data):
        """The judges' empirical logits truncated to rank q, as balanced factors."""
        return balanced_factors(judge_empirical_scores(data), self.n_factors)

    def canonical(self, values):
        """The balanced factors of the same S (A = PΣ^½, B = QΣ^½), where the quotient chart of
        :meth:`gauge` is best conditioned; None when the factors are balanced already."""
        A, B = np.asarray(values["judge_factor"], float), np.asarray(values["item_factor"], float)
        gram_a, gram_b = A.T @ A, B.T @ B
        scale = max(np.abs(gram_a).max(), np.abs(gram_b).max(), 1e-300)
        off_diagonal = np.abs(gram_a - np.diag(np.diag(gram_a))).max()
        if np.abs(gram_a - gram_b).max() <= 1e-6 * scale and off_diagonal <= 1e-6 * scale:
            return None
        return balanced_factors(A @ B.T, self.n_factors)

    def gauge(self, values):
        """The GL(q) orbit's tangent at (A, B): (A E_ij, −B E_ijᵀ) for the q² unit matrices E_ij."""
        A, B = np.asarray(values["judge_factor"], float), np.asarray(values["item_factor"], float)
        q = self.n_factors
        units = np.eye(q * q).reshape(q * q, q, q)
        return {"judge_factor": A @ units, "item_factor": -B @ units.transpose(0, 2, 1)}

    def n_gauge(self, data):
        return self.n_factors**2

    def signed_counterpart(self):
        return None

    def covariances(self):
        return {"score": False, "judge_score": True}

    def findings(self, data, point, draws):
        """Say in words what the paper assumes away, and hide what these data leave unidentified.

        * a judge whose own comparison graph is disconnected (the paper's partial-sampling
          regime, App. D.4): its scores across the parts are identified only through the
          low-rank structure;
        * Condition 2 failing — no consensus direction: μ is not distinguishable from 0
          (μ̂ᵀ Σ̂⁺ μ̂ below the 95% point of χ²_{N−1}, Σ̂ from the draws), so γ, UVᵀ and the
          leverages are not identified and are reported as NaN;
        * singular strengths that are not distinct (the gap of adjacent σ̂_j below its 95% point
          under equal strengths, √2·s·χ₂ with s the sd of σ̂ from the draws): the matching
          columns of U and V are not identified (only their span, and UVᵀ, are); a last σ̂_r
          within two sd of 0 says the rank is too high.
        """
        out = Findings(diagnostics={"hja": {}})
        facts = out.diagnostics["hja"]
        split = judge_components(data)
        facts["disconnected_judges"] = {data.judges[k]: parts for k, parts in split.items()}
        for k, parts in split.items():
            shown = " | ".join("{" + ", ".join(p[:6]) + (", …" if len(p) > 6 else "") + "}" for p in parts[:4])
            out.warnings.append(
                f"judge '{data.judges[k]}' compares the items in {len(parts)} disconnected groups ({shown}): "
                "its scores across the groups are identified only through the low-rank structure shared "
                "with the other judges (the paper's partial-sampling regime, App. D.4); treat its "
                "cross-group contrasts with care"
            )
        mu, S = np.asarray(point["score"], float), np.asarray(point["judge_score"], float)
        mu_draws = np.asarray(draws["score"], float)
        if len(mu_draws) < 3 or not (np.all(np.isfinite(mu_draws)) and np.all(np.isfinite(mu))):
            return out  # the draw-based checks need draws
        chi2_stat, p_value = zero_test(mu, mu_draws)
        facts["consensus_chi2"], facts["consensus_p_value"] = chi2_stat, p_value
        if np.sqrt(mu @ mu) <= ZERO * np.sqrt((S * S).sum()) or p_value > 0.05:
            out.warnings.append(
                f"Condition 2 fails: the judges share no consensus direction (test of μ = 0: χ² = "
                f"{chi2_stat:.2f} on {mu.size - 1} degrees of freedom, p = {p_value:.3f}), so the "
                "sensitivities γ, the disagreement UVᵀ and the leverages are not identified and are not "
                "reported; the judges' own scores S are"
            )
            return Findings(out.warnings, ("gamma", "disagreement", "leverage", "relative_leverage"),
                            out.diagnostics)
        if self.rank == 0:
            return out
        sig = canonical(S, self.rank).singular_values
        sd = canonical(np.asarray(draws["judge_score"], float), self.rank).singular_values.std(axis=0, ddof=1)
        # equal strengths leave a gap √2·s·χ₂ between the estimates (s: sd of one σ̂): distinct
        # when the gap exceeds its 95% point under equality
        bound = DISTINCT_CHI2 * np.sqrt(2) * (sd[:-1] + sd[1:]) / 2
        distinct = [bool(g > b) for g, b in zip(sig[:-1] - sig[1:], bound)]
        facts.update(singular_values=sig.tolist(), singular_value_sd=sd.tolist(), distinct=distinct)
        for j, ok in enumerate(distinct):
            if not ok:
                out.warnings.append(
                    f"the singular strengths of disagreement components {j + 1} and {j + 2} are not distinct "
                    f"(σ = {sig[j]:.3f} and {sig[j + 1]:.3f}, sd {sd[j]:.3f} and {sd[j + 1]:.3f}): those columns "
                    "of U and V are not identified, only their span; UVᵀ, the leverages and S are"
                )
        if sig[-1] <= 2 * sd[-1]:
            out.warnings.append(
                f"the weakest disagreement component ({self.rank}) cannot be told from zero (σ = {sig[-1]:.3f}, "
                f"sd {sd[-1]:.3f}): the rank is probably too high (choose it with "
                "bayesrank.evaluation.selection.select_rank)"
            )
        return out

    def reported(self):
        names = ["score", "gamma", "leverage", "relative_leverage", "judge_score", "disagreement"]
        if self.position_bias:
            names.append("delta")
        if self.ties in TIE_LINKS:
            names.append("eta")
        return tuple(names)


__all__ = [
    "Canonical", "DISTINCT_CHI2", "HJA", "HJAPriors", "ZERO", "balanced_factors", "canonical", "consensus_split",
    "judge_components", "judge_empirical_scores", "leverage", "max_rank", "zero_test"
]
