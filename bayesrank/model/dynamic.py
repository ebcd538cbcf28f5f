"""Ratings over time: a paired framework whose scores move from period to period by sparse jumps.

:class:`Dynamic` wraps Bradley–Terry, Rao–Kupper or Davidson (:mod:`bayesrank.model.paired`) and
replaces its one score per item by a *score path*: item i's raw score r_it in every calendar period
t of the data (:attr:`~bayesrank.data.comparisons.Comparisons.period`). The link, the tie convention
and the tie threshold stay the base framework's; a cell of period t sees d = r_at − r_bt.

The path is a local-level model (Harvey, *Forecasting, Structural Time Series Models and the Kalman
Filter*, 1989, §2.3.1) whose increments are sparse: between two consecutive periods in which item i
has battles its score moves by a jump

    j ~ (1 − ρ) N(0, (κσ)²) + ρ N(0, σ²),

a continuous spike-and-slab mixture (George & McCulloch, "Variable selection via Gibbs sampling",
JASA 1993, §2): the *slab* N(0, σ²) is a change, of typical size σ; the *spike* N(0, (κσ)²), κ =
:attr:`Dynamic.spike` (0.1 by default), is no change but a drift below what a leaderboard resolves.
The slab scale σ and the change rate ρ are learned: by empirical Bayes on the MAP path
(:mod:`bayesrank.inference.dynamic`), with the priors of :class:`TimePriors` under NUTS. The posterior
probability that a jump came from the slab is the probability of a change
(:func:`change_probability`).

What exists where:

* an item has a score in every period from its first to its last period with battles; a jump sits
  between two consecutive periods *with battles* (a period without them carries the score on), so a
  change is dated to the first period with battles at the new level;
* outside that range the score is carried (constant) at its first or last level: such values enter
  only the centring below and are never reported;
* the reported ``score`` is centred in every period over all items (sum to zero in every period).
  When one item jumps by J the others' centred scores move by −J/m; the change reported is the
  item's own jump (raw scores, whose per-period offset the sparse prior fixes: a shift of every
  item together is not a change of any).

Free coordinates. MAP reads the raw scores r of the periods with battles directly (the first of
them fixed at 0: the likelihood and the jump prior only see differences), ordered by period, so
the Hessian of the log-posterior is banded (items within a period, an item with its neighbouring
periods); the jump prior enters on the inference side. NUTS samples each item's first level
(zero-sum) and the jumps, with the mixture prior in the PyMC model.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import DataError, ModelSpecError
from bayesrank.model.framework import Framework, Local, Predictor, Priors
from bayesrank.model.paired import BradleyTerry, Davidson, RaoKupper
from bayesrank.model.structures import free_real
from bayesrank.runtime.lazy import lazy_module

pm = lazy_module("pymc")
pt = lazy_module("pytensor.tensor")

#: The base frameworks a time structure applies to.
BASES = (BradleyTerry, RaoKupper, Davidson)
#: The model variable the predictors read: raw scores by (item, period).
PATH = "score_path"
#: The jump of each item between consecutive periods with battles, dims (item, period) (0 where none).
JUMP = "jump"
#: The posterior probability that a jump is a change (slab), dims (item, period) (0 where no jump).
CHANGE = "change_probability"
#: E(jump | change): the size of a change if the jump is one, dims (item, period) (0 where no jump).
CHANGE_SIZE = "change_size"


@dataclass(frozen=True)
class TimePriors(Priors):
    """Priors of a time fit under NUTS (the base framework's fields, and the jumps' hyperpriors).

    Attributes
    ----------
    slab : float
        The median of the LogNormal prior on the slab scale σ (logit units: 0.5 is a 1.65-fold change
        of the odds); its density vanishes at σ → 0, where the slab would be as narrow as the spike.
    slab_sd : float
        The standard deviation of log σ under that prior.
    rate_a, rate_b : float
        ``Beta(rate_a, rate_b)`` on the change rate ρ (mean 1/21 by default: a change in one of 21
        jumps a priori).
    """

    slab: float = 0.5
    slab_sd: float = 1.0
    rate_a: float = 1.0
    rate_b: float = 20.0


@dataclass(frozen=True)
class Grid:
    """Where an item has battles, and the coordinates of its score path (:meth:`Dynamic.grid`).

    Attributes
    ----------
    active : ndarray of bool
        ``(items, periods)``: the item has at least one comparison in the period.
    slot : ndarray of int
        ``(items, periods)``: the coordinate (slot) of the raw score r_it where ``active``; −1 elsewhere.
        Slots run through the periods in order, items in order within a period.
    carry : ndarray of int
        ``(items, periods)``: the slot whose value the score takes — its own where active, else
        that of the last period with battles before (the first one's before it).
    jump_from, jump_to : ndarray of int
        Slots of each jump: from an item's period with battles to its next one.
    jump_item, jump_period : ndarray of int
        The item and the period of each jump (the first period at the new level).
    """

    active: np.ndarray
    slot: np.ndarray
    carry: np.ndarray
    jump_from: np.ndarray
    jump_to: np.ndarray
    jump_item: np.ndarray
    jump_period: np.ndarray

    @property
    def n_slots(self) -> int:
        return int(self.active.sum())

    @property
    def n_jumps(self) -> int:
        return int(self.jump_from.size)

    @property
    def first(self) -> np.ndarray:
        """Each item's first period with battles."""
        return np.argmax(self.active, axis=1)

    @property
    def last(self) -> np.ndarray:
        """Each item's last period with battles."""
        return self.active.shape[1] - 1 - np.argmax(self.active[:, ::-1], axis=1)


def grid_of(active: np.ndarray) -> Grid:
    """The :class:`Grid` of an activity mask ``(items, periods)`` (every item active somewhere)."""
    m, T = active.shape
    slot = -np.ones((m, T), dtype=np.int64)
    order = np.flatnonzero(active.T.ravel())        # period-major
    slot.T.flat[order] = np.arange(order.size)
    carry = np.empty_like(slot)
    for i in range(m):
        seen = np.flatnonzero(active[i])
        position = np.searchsorted(seen, np.arange(T), side="right") - 1
        carry[i] = slot[i, seen[np.maximum(position, 0)]]
    jump_from, jump_to, jump_item, jump_period = [], [], [], []
    for i in range(m):
        seen = np.flatnonzero(active[i])
        jump_from.append(slot[i, seen[:-1]])
        jump_to.append(slot[i, seen[1:]])
        jump_item.append(np.full(seen.size - 1, i))
        jump_period.append(seen[1:])
    def cat(parts):
        return np.concatenate(parts).astype(np.int64)

    return Grid(active, slot, carry, cat(jump_from), cat(jump_to), cat(jump_item), cat(jump_period))


def activity(data: Comparisons) -> np.ndarray:
    """``(items, periods)``: whether each item has a comparison in each period."""
    used = data.totals > 0
    out = np.zeros((data.n_items, len(data.periods)), dtype=bool)
    out[data.a[used], data.period[used]] = True
    out[data.b[used], data.period[used]] = True
    return out


def pooled(data: Comparisons) -> Comparisons:
    """The cells summed over what the time structure does not read (position, judge, covariates): one cell
    per pair and period, the same likelihood in fewer cells."""
    key = (data.a * data.n_items + data.b) * len(data.periods) + data.period
    unique, inverse = np.unique(key, return_inverse=True)
    def total(x):
        return np.bincount(inverse, x, unique.size)

    return replace(data, a=unique // len(data.periods) // data.n_items, b=unique // len(data.periods) % data.n_items,
                   period=unique % len(data.periods), wins_a=total(data.wins_a), wins_b=total(data.wins_b),
                   ties=total(data.ties), ties_bothbad=total(data.ties_bothbad), first=None, judge=None,
                   judges=None, covariates=None, covariate_names=())


def change_probability(jump, slab, rate, spike):
    """P(change | j): the posterior probability that a jump j came from the slab N(0, σ²) rather than the
    spike N(0, (κσ)²) of the prior (1 − ρ) N(0, (κσ)²) + ρ N(0, σ²), σ = ``slab``, ρ = ``rate``, κ =
    ``spike``: σ(logit ρ + log κ + j²(1/κ² − 1)/(2σ²)). NumPy or PyTensor arguments (the same formula
    for the sampled model and for reporting)."""
    lib = pt if any(hasattr(x, "owner") for x in (jump, slab, rate)) else np
    log_odds = (lib.log(rate) - lib.log1p(-rate) + np.log(spike)
                + jump**2 * (1.0 / spike**2 - 1.0) / (2.0 * slab**2))
    return 1.0 / (1.0 + lib.exp(-log_odds))


def _on_path(local: Local) -> Local:
    """A base predictor's input as the time structure sees it: an item's score → its score in the cell's
    period."""
    if local.var == "score" and local.by in ("item_a", "item_b"):
        return Local(PATH, (local.by, "period_index"))
    return local


@dataclass(frozen=True)
class Dynamic(Framework):
    """A paired framework whose scores move over time by sparse jumps (the module docstring).

    Parameters
    ----------
    base : BradleyTerry, RaoKupper or Davidson
        The framework whose scores move: its link and tie convention apply in every period. Tie
        models need one global threshold (``k_tie=0``); a Thurstonian covariance (``k_cov``) and
        style contrasts are not available over time.
    spike : float
        κ: the spike's scale as a fraction of the slab's, in (0, 1). A jump of the spike is no change.

    Examples
    --------
    >>> import bayesrank as br
    >>> import numpy as np
    >>> from bayesrank.data.simulate import arena_over_time
    >>> arena = arena_over_time(6, 6, 2000, np.random.default_rng(1), change_share=0.3)
    >>> arena.changes.round(2)
      name      period  size
    0  m03  2024-01-22  0.70
    1  m05  2024-01-15 -0.59
    >>> data = br.load(arena.records, time_column="date", period="week")
    >>> fit = br.fit(br.Dynamic(br.BradleyTerry()), data)
    >>> fit.changes()[["name", "period"]]
      name      period
    0  m05  2024-01-15
    1  m03  2024-01-22
    """

    base: Framework = field(default_factory=BradleyTerry)
    spike: float = field(default=0.1, metadata={"help": "spike scale as a fraction of the slab scale (no change)"})
    priors: TimePriors = field(default_factory=TimePriors, kw_only=True)

    name = "dynamic"
    #: the generic MAP fit (flat priors: the MLE) does not apply; the fast path is
    #: :func:`bayesrank.inference.dynamic.fit_time`, which keeps the jump prior
    map_supported = False

    def __post_init__(self):
        if not isinstance(self.base, BASES):
            raise ModelSpecError(f"Dynamic(base=...) takes one of {', '.join(c.__name__ for c in BASES)}, "
                                 f"got {type(self.base).__name__}.")
        if getattr(self.base, "k_cov", None) is not None:
            raise ModelSpecError("a Thurstonian covariance (k_cov) is not available over time; use k_cov=None.")
        if getattr(self.base, "k_tie", 0):
            raise ModelSpecError("factored tie thresholds (k_tie > 0) are not available over time; use k_tie=0 "
                                 "(one global threshold).")
        if not (isinstance(self.spike, float | int) and 0.0 < float(self.spike) < 1.0):
            raise ModelSpecError(f"spike must be a number in (0, 1), got {self.spike!r}.")

    # ------------------------------------------------------------------ what the base decides
    @property
    def link(self) -> str:
        return self.base.link

    @property
    def scale_note(self) -> str:
        return self.base.scale_note + "; scores per period, centred in every period"

    @property
    def score_meaning(self) -> str:
        return self.base.score_meaning

    def outcome_map(self) -> np.ndarray:
        return self.base.outcome_map()

    def options(self) -> dict:
        return {"base": self.base.spec(), "spike": float(self.spike)}

    @property
    def label(self) -> str:
        return f"Dynamic({self.base.label}, spike={self.spike:g})"

    def reported(self) -> tuple[str, ...]:
        return ("score", *(n for n in self.base.reported() if n != "score"))

    def covariances(self) -> dict[str, bool]:
        return {}

    # ------------------------------------------------------------------ data
    def prepare(self, data: Comparisons) -> Comparisons:
        """The base framework's conventions, after checking that the cells carry periods and no style
        contrasts.

        Raises
        ------
        DataError
            Comparisons without periods (read them with ``time_column=``) or with contrasts.
        """
        if data.period is None:
            raise DataError("ratings over time need the period of each comparison: read the records with "
                            "time_column='<date column>' (CLI: --time-column COLUMN --period week).")
        if data.contrast_names:
            raise DataError("style contrasts are not available over time; read the records without contrasts.")
        return pooled(self.base.prepare(data))

    def grid(self, data: Comparisons) -> Grid:
        """The coordinates of the score paths of (prepared) ``data`` (:class:`Grid`)."""
        return _grid(activity(data).tobytes(), data.n_items, len(data.periods))

    def structure_key(self, data: Comparisons) -> tuple:
        return ("grid", hashlib.sha1(activity(data).tobytes()).hexdigest())

    def coords(self, data: Comparisons) -> dict:
        coords = self.base.coords(data)
        coords["period"] = list(data.periods)
        return coords

    # ------------------------------------------------------------------ model
    def variables(self, data: Comparisons, prior: str) -> None:
        """The score paths (the module docstring), the centred ``score`` and the base's tie threshold."""
        grid = self.grid(data)
        if prior == "flat":
            free = pm.Flat("score_free", shape=(grid.n_slots - 1,))
            slots = pt.concatenate([pt.zeros((1,)), free])
            path = pm.Deterministic(PATH, slots[grid.carry], dims=("item", "period"))
        else:
            path = self._sampled_path(grid)
        pm.Deterministic("score", path - path.mean(axis=0, keepdims=True), dims=("item", "period"))
        if self.link != "bt":   # the base's one global tie threshold (k_tie = 0)
            free_real("eta_raw", prior, self.base.priors.tie)

    def _sampled_path(self, grid: Grid):
        """The score paths under NUTS: first levels (zero-sum) plus the jumps σu, u from the spike-and-slab
        mixture of unit slab (the same prior on j = σu), with the hyperpriors; ``jump`` and
        ``change_probability`` as deterministics."""
        m, T = grid.active.shape
        level = pm.ZeroSumNormal("level", sigma=self.base.priors.score, dims="item")
        slab = pm.LogNormal("slab", mu=np.log(self.priors.slab), sigma=self.priors.slab_sd)
        rate = pm.Beta("rate", alpha=self.priors.rate_a, beta=self.priors.rate_b)
        kappa = float(self.spike)
        # non-centred: j = σ u with u from the mixture of unit slab, so NUTS does not meet a funnel in σ
        unit = pm.NormalMixture("jumps_unit", w=pt.stack([1.0 - rate, rate]), mu=np.zeros(2),
                                sigma=np.array([kappa, 1.0]), shape=(grid.n_jumps,))
        jumps = slab * unit
        steps = pt.zeros((m, T))[grid.jump_item, grid.jump_period].set(jumps) if grid.n_jumps else pt.zeros((m, T))
        pm.Deterministic(JUMP, steps, dims=("item", "period"))
        probability = change_probability(jumps, slab, rate, kappa)
        pm.Deterministic(CHANGE, pt.zeros((m, T))[grid.jump_item, grid.jump_period].set(probability)
                         if grid.n_jumps else pt.zeros((m, T)), dims=("item", "period"))
        return pm.Deterministic(PATH, level[:, None] + pt.cumsum(steps, axis=1), dims=("item", "period"))

    def predictors(self, data) -> dict[str, Predictor]:
        """The base framework's predictors, reading each item's score in the cell's period."""
        out = {}
        for name, pred in self.base.predictors(data).items():
            inputs = {key: _on_path(loc) for key, loc in pred.inputs.items()}
            out[name] = Predictor(inputs, pred.fn, pred.linear, pred.constants)
        return out


@lru_cache(maxsize=8)
def _grid(mask: bytes, m: int, T: int) -> Grid:
    """:func:`grid_of` of an activity mask given as bytes (kept for the few data sets of a session)."""
    return grid_of(np.frombuffer(mask, dtype=bool).reshape(m, T))


__all__ = [
    "BASES", "CHANGE", "CHANGE_SIZE", "Dynamic", "Grid", "JUMP", "PATH", "TimePriors", "activity",
    "change_probability", "grid_of", "pooled"
]
