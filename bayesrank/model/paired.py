"""Framework 1: Bradley–Terry, Rao–Kupper and Davidson with factored tie thresholds.

Ameli, "A Statistical Framework for Ranking LLM-Based Chatbots" (ICLR 2025), §2 and App. C. Linear predictor
d_ab = x_a − x_b with Σx = 0; tie threshold per pair

* ``k_tie=0``: one global value η (paper models 7, 19);
* ``k_tie=k>0``: H = GΦᵀ + ΦGᵀ with the DCT-IV basis Φ (paper-exact, *not* nested in
  ``k_tie=0`` because Φ does not span the constant vector);
* ``k_tie=k>0, tie_intercept=True``: H = η₀J + GΦᵀ + ΦGᵀ, nested in ``k_tie=0``.

Thurstonian covariance (paper §2.4, eq. 9–13), option ``k_cov`` of all three frameworks:

* ``k_cov=None``: no covariance, the linear predictor is x_a − x_b;
* ``k_cov=0``: Σ = D, ``k_cov=K``: Σ = D + ΛΛᵀ with Λ of rank K; the linear predictor is
  z_ab = (μ_a − μ_b)/√s_ab with s_ab = d_a + d_b + ‖λ_a − λ_b‖². The tie threshold η is *not*
  divided by √s_ab. The constraints trace(PΣP) = 1, Λᵀ1 = 0 and the rotation of Λ are
  imposed by construction (:func:`bayesrank.model.structures.thurstonian`).

Rao–Kupper maps the raw threshold through softplus (η ≥ 0, smooth); Davidson uses it as is.

Examples
--------
>>> import bayesrank as br
>>> fit = br.fit(br.Davidson(k_tie=1), "arena-2024")
>>> list(fit.leaderboard()["name"][:3])
['chatgpt-4o-latest', 'gemini-1.5-pro-exp-0801', 'gpt-4o-2024-05-13']
>>> round(fit.nll, 4)
1.0077
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

import numpy as np

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError, ModelSpecError, as_count
from bayesrank.model.framework import (
    SCORE_PAIR,
    TIES_AS_HALVES,
    TIES_DROPPED,
    Findings,
    Framework,
    Local,
    Predictor,
    score_difference,
    style_variables,
    with_style,
)
from bayesrank.model.links import LOG_CONCAVE
from bayesrank.model.structures import (
    dct_iv_basis,
    dispersion_matrix,
    empirical_scores,
    free_real,
    in_row_space,
    pair_logit_scores,
    threshold_row_space,
    thurstonian,
    tie_coordinate_basis,
    tie_factors,
    tie_threshold_map,
    zero_sum_scores,
)
from bayesrank.runtime.lazy import lazy_module

pm = lazy_module("pymc")
pt = lazy_module("pytensor.tensor")

K_COV_HELP = ("Thurstonian covariance: none (default), 0 for a diagonal Σ = D, K for Σ = D + ΛΛᵀ with rank-K "
              "loadings; the scores are then the Thurstonian means μ")


def _check_k_cov(k_cov, data=None):
    if k_cov is not None and as_count(k_cov) is None:
        raise ModelSpecError(f"k_cov must be None or a non-negative integer, got {k_cov!r}.")
    if data is not None and k_cov is not None and k_cov > data.n_items - 2:
        raise ModelSpecError(
            f"k_cov={k_cov} is too large for {data.n_items} items (at most {max(data.n_items - 2, 0)}: "
            "the loadings live in the (m − 1)-dimensional zero-sum space)."
        )


def _thurstonian_z(u, cells):
    """z_ab = (μ̃_a − μ̃_b)/√s̃_ab, s̃_ab = t_a² + t_b² + ‖λ̃_a − λ̃_b‖²
    (:func:`bayesrank.model.structures.thurstonian`)."""
    s = u["t_a"] ** 2 + u["t_b"] ** 2
    if "lam_a" in u:
        s = s + pt.sum((u["lam_a"] - u["lam_b"]) ** 2, axis=-1)
    return (u["score_a"] - u["score_b"]) / pt.sqrt(s)


def _score_predictor(k_cov) -> Predictor:
    """d = x_a − x_b, or the Thurstonian z_ab when the model has a covariance."""
    if k_cov is None:
        return Predictor(SCORE_PAIR, score_difference, linear=True)
    inputs = {"score_a": Local("score_raw", "item_a"), "score_b": Local("score_raw", "item_b"),
              "t_a": Local("cov_t", "item_a"), "t_b": Local("cov_t", "item_b")}
    if k_cov:
        inputs.update(lam_a=Local("cov_raw_loading", "item_a"), lam_b=Local("cov_raw_loading", "item_b"))
    return Predictor(inputs, _thurstonian_z)


def _variables(framework, data, prior):
    """Scores (plain, or the Thurstonian raw coordinates) of a paired framework, and the style
    coefficients when the data carry contrasts (prior for NUTS: Normal(0, ``priors.score``))."""
    if framework.k_cov is None:
        zero_sum_scores("score", "item", prior, framework.priors.score)
    else:
        thurstonian(data.n_items, framework.k_cov, prior, framework.priors.score, framework.priors.cov)
    style_variables(data, prior, framework.priors.score)


def _initial_values(framework, data):
    """The MAP's start: the pair logits' least squares for the scores of a log-concave link (close
    to the MLE: Newton steps from there converge at once); the Thurstonian raw means from the
    empirical logits (μ̃ ≈ √2 × logit when s̃ ≈ 2), because at μ̃ = 0 every z is 0 and the covariance
    coordinates have no curvature."""
    if framework.k_cov is None:
        return {"score": pair_logit_scores(data)} if framework.link in LOG_CONCAVE else {}
    return {"score_raw": 2**0.5 * empirical_scores(data)}


def _nested(framework):
    """Σ = D (k_cov = 0) contains the model without covariance (D = I/2 reproduces its
    likelihood): its MLE is where the fit starts, so the fit ends no lower than that model. With
    loadings (k_cov ≥ 1) there is none: their gradient vanishes at Λ = 0, and from Σ = D's estimate
    the fits of Table D.1's k_cov = 3 models ended lower in all and converged less often than from
    their own starts (``bench/results/nested-starts.md``)."""
    return replace(framework, k_cov=None) if framework.k_cov == 0 else None


def _from_nested(framework, values):
    """The estimate of the model without covariance in Σ = D's variables: μ̃ = √2 x and t = 1,
    so that s̃_ab = 2 and z_ab = x_a − x_b (the same likelihood); tie and style variables as they
    are."""
    score = np.asarray(values["score"], dtype=float)
    out = {name: value for name, value in values.items() if name != "score"}
    out.update(score_raw=2**0.5 * score, cov_t=np.ones_like(score))
    return out


#: An item's raw Thurstonian dispersion R_a² = t_a² + ‖λ̃_a − λ̄‖² (:func:`_dispersions`) counts as run out
#: beyond this multiple of the median item's: then z_ab ≈ (μ̃_a − μ̃_b)/R_a hardly depends on the opponent
#: and the likelihood is flat in R_a.
RUNAWAY = 100.0


def _loading_centre(values) -> np.ndarray | None:
    """λ̄: the coordinate-wise median of the raw loadings' rows (a run-out item's row does not pull it,
    where it would pull their mean by 1/m of its own), or None without loadings."""
    if values.get("cov_raw_loading") is None:
        return None
    return np.median(np.asarray(values["cov_raw_loading"], dtype=float), axis=0)


def _dispersions(values) -> np.ndarray:
    """R_a² = t_a² + ‖λ̃_a − λ̄‖² (:func:`_loading_centre`): each item's share of the raw Thurstonian
    dispersions s̃_ab."""
    d = np.asarray(values["cov_t"], dtype=float) ** 2
    centre = _loading_centre(values)
    if centre is not None:
        d = d + ((np.asarray(values["cov_raw_loading"], dtype=float) - centre) ** 2).sum(axis=1)
    return d


def _runaway(framework, values) -> np.ndarray:
    """Items whose raw dispersion is beyond :data:`RUNAWAY` times the median item's (none without a
    Thurstonian covariance)."""
    if framework.k_cov is None:
        return np.zeros(0, dtype=int)
    R2 = _dispersions(values)
    return np.flatnonzero(R2 > RUNAWAY * np.median(R2))


#: Two items coincide in the Thurstonian latent space when their raw pair dispersion s̃_ab = t_a² + t_b² +
#: ‖λ̃_a − λ̃_b‖² is below this fraction of the median pair's.
COINCIDE = 1e-8


def _coinciding(framework, values) -> list:
    """Pairs of items whose raw dispersion s̃_ab ran to 0 (:data:`COINCIDE`): ``(a, b, ratio)``."""
    if framework.k_cov is None:
        return []
    a, b, pair = _pair_dispersions(values)
    small = np.flatnonzero(pair < COINCIDE * np.median(pair))
    return [(int(a[j]), int(b[j]), float(pair[j] / np.median(pair))) for j in small]


def _pair_dispersions(values) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(a, b, s̃_ab)`` over the pairs a < b: the raw dispersions t_a² + t_b² + ‖λ̃_a − λ̃_b‖²."""
    d = np.asarray(values["cov_t"], dtype=float) ** 2
    # (the loadings' part floored at 0: it is a squared distance, rounding may take it below)
    S = np.maximum(dispersion_matrix(d, values.get("cov_raw_loading")), d[:, None] + d[None, :])
    a, b = np.triu_indices(d.size, 1)
    return a, b, S[a, b]


def _coincide(data, a, b) -> str:
    """The words naming two coinciding items (:func:`_coinciding`)."""
    return f"{data.items[a]} and {data.items[b]} coincide in the Thurstonian latent space"


def _boundaries(framework, data, values) -> list[str]:
    """The Thurstonian covariance's boundaries at ``values`` (:meth:`Framework.boundaries`): coinciding
    items (:func:`_coinciding`) and run-out dispersions (:func:`_runaway`), in a few words each."""
    said = [f"{_coincide(data, a, b)} (s_ab → 0)" for a, b, _ in _coinciding(framework, values)]
    return said + [f"the Thurstonian dispersion of {data.items[a]} ran out" for a in _runaway(framework, values)]


def _thurstonian_findings(framework, data, values):
    """Boundaries of the Thurstonian covariance at the estimate, said in words: two items that
    coincide in the latent space (:func:`_coinciding`, s_ab → 0), and items whose dispersion ran out
    (:func:`_runaway`). Either way the likelihood's supremum may lie on that boundary, approached but
    not attained, or the optimiser's path may have stopped there: the words recommend what tells the
    two apart."""
    items = _runaway(framework, values)
    pairs = _coinciding(framework, values)
    warnings, diagnostics = [], {}
    for a, b, ratio in pairs:
        met = ((data.a == a) & (data.b == b)) | ((data.a == b) & (data.b == a))
        own = (f"their own {data.totals[met].sum():g} comparisons are fitted by z_ab = (μ_a − μ_b)/√s_ab alone "
               "(a ratio of two vanishing numbers)" if data.totals[met].sum() > 0 else "they never met")
        warnings.append(
            f"{_coincide(data, a, b)}: their dispersion s_ab = d_a + d_b + ‖λ_a − λ_b‖² ran to {ratio:.1e} of the "
            f"median pair's, so they are alike against every other item and {own}. The estimate sits at the "
            "boundary s_ab = 0 of the model (a degenerate covariance, Σ_aa + Σ_bb − 2Σ_ab = 0), where the "
            "information is singular and Wald intervals are not meaningful. Either the likelihood's supremum lies "
            "there (approached, not attained) or the optimiser's path stopped there: fit again with restarts=K "
            "(runs from K more starts; the highest maximum is kept), or use method='nuts', and compare with "
            "k_cov=0 or k_cov=None.")
    if pairs:
        diagnostics["coinciding_items"] = [[str(data.items[a]), str(data.items[b]), ratio] for a, b, ratio in pairs]
    if not items.size:
        return Findings(warnings=warnings, diagnostics=diagnostics)
    R2 = _dispersions(values)
    ratio = {str(data.items[a]): float(R2[a] / np.median(R2)) for a in items}
    listed = ", ".join(f"{name} ({r:.3g} times the median)" for name, r in ratio.items())
    return Findings(
        warnings=warnings + [
            f"the Thurstonian dispersion (variance t² + ‖λ − λ̄‖², raw scale) of {listed} ran out far beyond "
            "the other items', where the likelihood no longer depends on it (the item's odds against every "
            "opponent tend to one value, μ̃/√(dispersion)): the estimate sits near a boundary of the parameter "
            "space, where the supremum may be approached as that variance grows without bound, and under "
            "trace(PΣP) = 1 the other items' μ and d shrink towards 0 along it. The values reported are those at "
            "the point reached, and intervals, where given, are conditional on that dispersion. Fit again with "
            "restarts=K, or use method='nuts'; compare with k_cov=None, or with these items left out."],
        diagnostics={**diagnostics, "runaway_dispersion": ratio},
    )


THURSTONIAN_NOTE = ("Thurstonian mean μ under trace(PΣP) = 1: the odds of a against b depend on their "
                    "dispersion s_ab, so a score difference has no fixed Elo meaning")


def _cov_reported(k_cov):
    if k_cov is None:
        return ()
    return ("cov_diag",) if k_cov == 0 else ("cov_diag", "cov_loading")


def _cov_coords(k_cov, coords):
    if k_cov:
        coords["cov_factor"] = list(range(1, k_cov + 1))
    return coords


class _Thurstonian:
    """What Bradley–Terry, Rao–Kupper and Davidson share about their scores' optional Thurstonian
    covariance: the start of the MAP, the boundaries a point sits at and the findings at the
    estimate. Listed before :class:`Framework` in their bases, so these override its defaults."""

    def initial_values(self, data):
        return _initial_values(self, data)

    def nested(self):
        return _nested(self)

    def from_nested(self, values):
        return _from_nested(self, values)

    def boundaries(self, data, values):
        return _boundaries(self, data, values)

    def findings(self, data, point, draws):
        return _thurstonian_findings(self, data, point)

    @property
    def score_meaning(self) -> str:
        return "logit scale" if self.k_cov is None else "Thurstonian mean μ (scale: trace(PΣP) = 1)"


@dataclass(frozen=True)
class BradleyTerry(_Thurstonian, Framework):
    """Bradley–Terry: P(a ≻ b) = σ(x_a − x_b).

    Parameters
    ----------
    ties : {"half", "drop"}
        ``"half"`` counts a tie as half a win for each side (the Chatbot Arena convention,
        paper model 1); ``"drop"`` ignores ties (model 4).
    k_cov : int or None
        Thurstonian covariance: None (none, models 1 and 4), 0 (Σ = D, models 2 and 5) or
        K ≥ 1 (Σ = D + ΛΛᵀ, rank-K loadings; models 3 and 6 have K = 3). The score is then μ.
    """

    ties: str = field(default="half", metadata={"choices": ("half", "drop"), "help": (
        "half: a tie is half a win for each side (Chatbot Arena); drop: ties are ignored")})
    k_cov: int | None = field(default=None, metadata={"help": K_COV_HELP})
    name = "bt"
    link = "bt"

    @property
    def scale_note(self) -> str:
        if self.k_cov is not None:
            return THURSTONIAN_NOTE
        if self.ties == "drop":
            return "Bradley–Terry, ties dropped: 400 Elo points = odds 10:1 of winning a decisive comparison"
        return ("Bradley–Terry, ties as half wins (the Chatbot Arena Elo scale): 400 Elo points = "
                "odds 10:1 of winning, a tie counted as half a win")

    def __post_init__(self):
        if self.ties not in ("half", "drop"):
            raise ModelSpecError(f"ties must be 'half' or 'drop' for Bradley-Terry, got {self.ties!r}.")
        _check_k_cov(self.k_cov)
        object.__setattr__(self, "k_cov", None if self.k_cov is None else as_count(self.k_cov))

    def coords(self, data):
        return _cov_coords(self.k_cov, super().coords(data))

    def reported(self):
        return ("score", *_cov_reported(self.k_cov))

    def prepare(self, data: Comparisons) -> Comparisons:
        _check_k_cov(self.k_cov, data)
        return data.without_ties() if self.ties == "drop" else data.ties_as_halves()

    def outcome_map(self):
        return TIES_DROPPED if self.ties == "drop" else TIES_AS_HALVES

    def variables(self, data, prior):
        _variables(self, data, prior)

    def predictors(self, data):
        return {"d": with_style(_score_predictor(self.k_cov), data)}


def _compared_key(data) -> str:
    """A digest of the compared pairs and their numbers of comparisons: what the identified tie
    coordinates (:func:`~bayesrank.model.structures.tie_coordinate_basis`) depend on in the data."""
    compared = data.totals > 0
    pairs = np.stack([data.a[compared], data.b[compared]]).astype(np.int64)
    return hashlib.sha1(pairs.tobytes() + np.asarray(data.totals[compared], float).tobytes()).hexdigest()


def _factored_threshold(u, cells):
    """h_ab = g_a·φ_b + g_b·φ_a (+ η₀)."""
    h = (u["g_a"] * u["phi_b"]).sum(-1) + (u["g_b"] * u["phi_a"]).sum(-1)
    return h + u["eta"] if "eta" in u else h


def _global_threshold(u, cells):
    """h = η for every cell."""
    return u["eta"]


#: A compared pair's factored tie threshold counts as run into the tail below this value: its tie probability,
#: of order e^h with Davidson's ν = e^h and Rao–Kupper's η = softplus(h), is then below 2e-9 — where pairs
#: without ties are pushed by the data, and only the factor structure holds them.
TAIL = -20.0


def _tail_findings(framework, data, point) -> Findings:
    """Compared pairs whose tie threshold ran below :data:`TAIL` at the point (factored thresholds whose
    tie probability vanishes as h → −∞), said in words: with no ties the data push such a threshold
    towards −∞, and only the factor structure holds it."""
    if framework.k_tie == 0 or not framework.ties_vanish_below:
        return Findings()
    a, b, totals, threshold = framework._compared_thresholds(data)
    G = np.asarray(point["tie_factor"], dtype=float)
    h = threshold(G[a], G[b]) + (float(point["eta_raw"]) if framework.tie_intercept else 0.0)
    ties = data.ties[data.totals > 0]
    tail = np.argsort(h)[: int(np.sum(h < TAIL))]
    if not tail.size:
        return Findings()
    named = [f"{data.items[a[j]]} / {data.items[b[j]]} at h = {h[j]:.3g} ({totals[j]:g} comparisons, "
             + (f"{ties[j]:g} ties)" if ties[j] else "no ties)") for j in tail[:5]]
    more = f" and {tail.size - 5} more" if tail.size > 5 else ""
    return Findings(
        warnings=[
            f"the tie thresholds of {tail.size} compared pair{'s' * (tail.size != 1)} ran far into the tail: "
            f"{', '.join(named)}{more} — a tie probability of order e^h, below {np.exp(TAIL):.0e}. Without ties "
            f"the data push such a threshold towards −∞ and only the factor structure of the thresholds "
            f"(k_tie = {framework.k_tie}) holds it, so the likelihood is nearly flat along it: intervals of the "
            "tie factors, and of the thresholds that move with them, carry little meaning there. Fewer tie "
            "factors (k_tie), or NUTS with its priors, keep the thresholds bounded."],
        diagnostics={"tail_tie_thresholds": [[str(data.items[a[j]]), str(data.items[b[j]]), float(h[j])]
                                             for j in tail]},
    )


@dataclass(frozen=True)
class _TieFramework(_Thurstonian, Framework):
    """Shared code of Rao–Kupper and Davidson (global or factored tie thresholds)."""

    k_tie: int = field(default=0, metadata={"help": "rank of the factored tie threshold (0: one global threshold)"})
    tie_intercept: bool = field(default=False, metadata={
        "help": "add a global intercept to the factored tie threshold, so the model nests k_tie=0"})
    k_cov: int | None = field(default=None, metadata={"help": K_COV_HELP})

    def __post_init__(self):
        _check_k_cov(self.k_cov)
        object.__setattr__(self, "k_cov", None if self.k_cov is None else as_count(self.k_cov))
        if (k_tie := as_count(self.k_tie)) is None:
            raise ModelSpecError(f"k_tie must be a non-negative integer, got {self.k_tie!r}.")
        object.__setattr__(self, "k_tie", k_tie)
        if self.tie_intercept and self.k_tie == 0:
            raise ModelSpecError("tie_intercept only applies with k_tie > 0 (k_tie=0 is a single global threshold).")

    def prepare(self, data):
        if self.k_tie > data.n_items:
            raise ModelSpecError(f"k_tie={self.k_tie} exceeds the number of items ({data.n_items}).")
        _check_k_cov(self.k_cov, data)
        if data.ties.sum() == 0:
            raise DataError(
                f"the data have no ties, so the tie threshold of {type(self).__name__} is not "
                "estimable; use BradleyTerry or data with ties."
            )
        return data

    def coords(self, data):
        coords = super().coords(data)
        if self.k_tie:
            coords["factor"] = list(range(1, self.k_tie + 1))
        return _cov_coords(self.k_cov, coords)

    #: starting level of the raw threshold (0 unless the threshold map is flat at h = 0)
    start_level = 0.0
    #: the tie probability vanishes as the raw threshold h → −∞ (not with the paper-form |h|)
    ties_vanish_below = True

    def findings(self, data, point, draws):
        thurstonian, tail = super().findings(data, point, draws), _tail_findings(self, data, point)
        return Findings(warnings=thurstonian.warnings + tail.warnings, hidden=thurstonian.hidden,
                        diagnostics={**thurstonian.diagnostics, **tail.diagnostics})

    def variables(self, data, prior):
        _variables(self, data, prior)
        level = self.start_level
        if self.k_tie == 0:
            start = {"initval": level} if level and prior == "flat" else {}  # nutpie takes no initvals
            free_real("eta_raw", prior, self.priors.tie, **start)
            return
        _, phi = tie_factors(data.n_items, self.k_tie, prior, self.priors.tie, start_level=level,
                             basis=self._free_tie_basis(data))
        pm.Data("tie_basis", phi, dims=("item", "factor"))
        if self.tie_intercept:
            free_real("eta_raw", prior, self.priors.tie)

    def tie_basis(self, data):
        """An orthonormal basis of the tie coordinates the compared pairs identify and the curvature
        along it, from the threshold predictor itself evaluated in NumPy
        (:func:`~bayesrank.model.structures.tie_coordinate_basis`).

        Parameters
        ----------
        data : Comparisons
            As prepared by :meth:`prepare`.

        Returns
        -------
        tuple of ndarray or None
            ``(basis, curvature)``; None without tie factors (k_tie = 0).
        """
        if self.k_tie == 0:
            return None
        a, b, weights, threshold = self._compared_thresholds(data)
        return tie_coordinate_basis(data.n_items, self.k_tie, a, b, weights, threshold, _compared_key(data))

    def identified(self, data, cells):
        """Whether the compared pairs determine each cell's tie threshold (the base class says
        what this is for): always with a global threshold or when the compared pairs identify every
        tie coordinate; otherwise where the pair's row of :meth:`tie_threshold_map` lies in the
        span of the compared pairs' rows
        (:func:`~bayesrank.model.structures.threshold_row_space`, computed once per comparison
        graph, and only when a pair never compared is asked about). The leaderbot paper's
        k_tie = 20 on arena-2024: 1,442 of the 4,801 pairs never compared are not determined;
        with k_tie = 10, none."""
        a = np.asarray(cells["item_a"], dtype=np.int64)
        out = np.ones(a.shape, dtype=bool)
        basis = self.tie_basis(data)
        if basis is None or basis[0].shape[1] == basis[0].shape[0]:
            return out
        b = np.asarray(cells["item_b"], dtype=np.int64)
        ca, cb, _, threshold = self._compared_thresholds(data)
        compared = np.zeros((data.n_items,) * 2, dtype=bool)
        compared[ca, cb] = compared[cb, ca] = True
        never = ~compared[a, b]
        if never.any():
            space = threshold_row_space(data.n_items, self.k_tie, ca, cb, threshold, _compared_key(data))
            out[never] = in_row_space(self.tie_threshold_map(data, a[never], b[never]), space)
        return out

    def _compared_thresholds(self, data):
        """The compared pairs ``(a, b)``, their comparisons and the threshold predictor on NumPy
        loadings of those pairs (:meth:`_thresholds_of`)."""
        compared = data.totals > 0
        a, b = data.a[compared], data.b[compared]
        return a, b, data.totals[compared], self._thresholds_of(data.n_items, a, b)

    def _thresholds_of(self, m, a, b):
        """The threshold predictor on NumPy loadings ``(n, k)`` of the pairs ``(a, b)`` (linear in them)."""
        phi = dct_iv_basis(m, self.k_tie)

        def threshold(g_a, g_b):
            return _factored_threshold({"g_a": g_a, "g_b": g_b, "phi_a": phi[a], "phi_b": phi[b]}, None)

        return threshold

    def tie_threshold_map(self, data, a=None, b=None) -> np.ndarray:
        """The matrix of the linear map from the tie coordinates (C, upper S) to the thresholds of
        the pairs ``(a, b)`` (item indices; default: the compared pairs of ``data``)
        (:func:`~bayesrank.model.structures.tie_threshold_map`). On the compared pairs its rank is
        the number of tie coordinates the data identify; another pair's threshold is identified
        when its row is orthogonal to that map's null space. ``data`` as :meth:`tie_basis`.

        Returns
        -------
        ndarray
            ``(pairs, tie coordinates)``.
        """
        if self.k_tie == 0:
            raise ModelSpecError(f"{self.label} has no tie factors (k_tie = 0): there is no tie threshold map; "
                                 "use a model with k_tie ≥ 1")
        if a is None:
            a, b, _, threshold = self._compared_thresholds(data)
        else:
            a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
            threshold = self._thresholds_of(data.n_items, a, b)
        return tie_threshold_map(data.n_items, self.k_tie, a, b, threshold)

    def _free_tie_basis(self, data):
        """The basis the free tie coordinates use: :meth:`tie_basis`, except for a threshold map
        that needs a start away from h = 0 (the paper-form |h|, with its sign symmetry and local
        optima) when no direction is flat: it keeps the paper's own coordinates (C, S)."""
        basis = self.tie_basis(data)
        if basis is not None and self.start_level and basis[0].shape[1] == basis[0].shape[0]:
            return None
        return basis

    def structure_key(self, data):
        basis = self._free_tie_basis(data)
        # the basis is a function of the options (in the key already) and the compared pairs with
        # their counts: their digest names it
        return () if basis is None else ("tie_basis", _compared_key(data))

    def predictors(self, data):
        if self.k_tie == 0:
            h = Predictor({"eta": Local("eta_raw")}, _global_threshold, linear=True)
        else:
            inputs = {"g_a": Local("tie_factor", "item_a"), "g_b": Local("tie_factor", "item_b")}
            if self.tie_intercept:
                inputs["eta"] = Local("eta_raw")
            h = Predictor(inputs, _factored_threshold, linear=True,
                          constants={"phi_a": Local("tie_basis", "item_a"), "phi_b": Local("tie_basis", "item_b")})
        return {"d": with_style(_score_predictor(self.k_cov), data), "h": h}

    def reported(self):
        names = ["score"]
        if self.k_tie == 0 or self.tie_intercept:
            names.append("eta_raw")
        if self.k_tie:
            names.append("tie_factor")
        return (*names, *_cov_reported(self.k_cov))


@dataclass(frozen=True)
class RaoKupper(_TieFramework):
    """Rao–Kupper: a tie when ``|x_a − x_b| < η``, η = softplus(h) ≥ 0.

    With ``threshold="abs"`` η = √(h² + 0.01²), a smooth version of the leaderbot paper's
    ``max(|h|, 0.01)``: the paper's exact model, for replication (its factored models 8, 12, 16
    fit worse than ``k_tie=0``, and ``|h|`` has the sign symmetry h ↦ −h, so prefer the default
    for new work and for NUTS).

    Parameters
    ----------
    k_tie : int
        0 for one global threshold (paper model 7), k > 0 for the factored H (models 8–10).
    tie_intercept : bool
        Add a global intercept η₀ to the factored H so the model nests ``k_tie=0``.
    k_cov : int or None
        Thurstonian covariance: None (none), 0 (Σ = D) or K ≥ 1 (Σ = D + ΛΛᵀ of rank K);
        the scores are then the Thurstonian means μ, and η is not standardised.
    threshold : {"softplus", "abs"}
        Map from the raw threshold h to η ≥ 0 (see above).
    """

    threshold: str = field(default="softplus", metadata={"choices": ("softplus", "abs"), "help": (
        "eta = softplus(h) (default) or the leaderbot paper's |h| floored at 0.01, smoothed (replication)")})
    name = "rao-kupper"

    @property
    def scale_note(self) -> str:
        if self.k_cov is not None:
            return THURSTONIAN_NOTE
        return ("Rao–Kupper: P(a wins) = σ(d − η), P(b wins) = σ(−d − η); the odds of a win against a loss "
                "are not e^d, so 400 points is not odds 10:1 and the scale is not the Bradley–Terry Elo scale")

    def __post_init__(self):
        super().__post_init__()
        if self.threshold not in ("softplus", "abs"):
            raise ModelSpecError(f"threshold must be 'softplus' or 'abs', got {self.threshold!r}.")

    @property
    def link(self) -> str:
        return "rao-kupper" if self.threshold == "softplus" else "rao-kupper-abs"

    @property
    def start_level(self) -> float:
        # √(h² + ε²) is flat at h = 0: start every threshold positive
        return 0.0 if self.threshold == "softplus" else 1.5

    @property
    def ties_vanish_below(self) -> bool:
        return self.threshold == "softplus"  # (|h| → ∞ both ways gives more ties)


@dataclass(frozen=True)
class Davidson(_TieFramework):
    """Davidson: P(a ≻ b) : P(b ≻ a) : P(tie) = π_a : π_b : ν√(π_aπ_b), ν = e^η, η ∈ ℝ.

    Parameters
    ----------
    k_tie : int
        0 for one global threshold (paper model 19), k > 0 for the factored H (models 20–22).
    tie_intercept : bool
        Add a global intercept η₀ to the factored H so the model nests ``k_tie=0``.
    k_cov : int or None
        Thurstonian covariance: None (none), 0 (Σ = D) or K ≥ 1 (Σ = D + ΛΛᵀ of rank K);
        the scores are then the Thurstonian means μ, and η is not standardised.
    """

    name = "davidson"
    link = "davidson"

    @property
    def scale_note(self) -> str:
        if self.k_cov is not None:
            return THURSTONIAN_NOTE
        return ("Davidson: P(a wins)/P(b wins) = e^d, so 400 points = odds 10:1 of a win against a loss, ties "
                "apart; not the Bradley–Terry ties-as-halves Elo scale (a tie there pulls both sides together)")


__all__ = ["BradleyTerry", "COINCIDE", "Davidson", "K_COV_HELP", "RUNAWAY", "RaoKupper", "TAIL", "THURSTONIAN_NOTE"]
