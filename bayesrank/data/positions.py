"""Where the answers were shown: judges whose verdicts follow the position, and presentation
orders that are a function of the items.

Pairwise verdicts of LLM judges (and of people) depend on which answer is shown first. Two
things can hide that from a leaderboard:

* **a judge that follows the position** — it picks the answer in one position far more often
  than the rest of the panel does on the same kind of pairs. Its verdicts then say little about
  the answers;
* **an order that is a function of the items** — every pair was shown in one order only (in
  public judge sets, often the alphabetically first model first). A preference for a position
  is then indistinguishable from a preference for the models shown there: it moves their
  scores, and no model of the verdicts can tell the two apart from the design.

:func:`verdict_shares` is the per-judge table of verdict shares (a = the answer shown first,
b = shown second, tie) with the rule below; :func:`presentation_order` describes the order and
what a position preference does to each model's score; :func:`position_warnings` says both in
words for every fit (:func:`bayesrank.data.checks.judge_warnings`).

The rule for a judge that follows the position (relative to the panel)
----------------------------------------------------------------------
For each judge k with at least :data:`MIN_VERDICTS` decisive verdicts (F_k for the answer shown
first, S_k for the one shown second), ℓ_k = log((F_k + ½) / (S_k + ½)) is its log-odds of
choosing the first position, with standard error se_k = √(1/(F_k + ½) + 1/(S_k + ½)). The
panel of judge k is every other judge with at least :data:`MIN_VERDICTS` decisive verdicts; m
is the median of their ℓ and s = 1.4826 × the median absolute deviation (a robust standard
deviation that one extreme judge cannot inflate). Judge k follows the position when, with at
least :data:`MIN_PANEL` judges in its panel,

* |ℓ_k − m| ≥ log :data:`POSITION_ODDS_RATIO` (its odds of picking that position are at least
  that many times the median judge's), and
* |ℓ_k − m| ≥ :data:`POSITION_Z` × √(s² + se_k²) (beyond the panel's own spread and the
  judge's sampling noise),

or — whatever the panel, the older absolute rule — when every one of its decisive verdicts went
to one position. Comparing a judge with the panel, not with 50 %, matters when the order is not
random: if the models shown first are the better ones, every judge picks the first answer more
often, and only a judge far beyond the others is following the position. The rule assumes the
judges of a panel judged comparable pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.linalg import lsqr

from bayesrank.data.comparisons import FIRST_A, Comparisons

#: Fewest decisive verdicts for a judge to be judged, or to sit in another judge's panel.
MIN_VERDICTS = 5
#: Fewest other judges for the relative rule (below: only the absolute rule applies).
MIN_PANEL = 3
#: Smallest odds ratio against the median judge for a judge to follow the position.
POSITION_ODDS_RATIO = 4.0
#: Robust z-score (panel spread and sampling noise) a judge must exceed.
POSITION_Z = 3.0
#: 1.4826 × MAD estimates a normal standard deviation.
_MAD_SCALE = 1.4826
#: Models named per sentence before the list is shortened.
_LISTED = 8
#: Label of the single row of data without judges.
ALL = "all verdicts"


def _position_counts(data: Comparisons) -> tuple[np.ndarray, np.ndarray]:
    """Per cell: verdicts for the answer shown first and for the one shown second."""
    first_a = data.first == FIRST_A
    return np.where(first_a, data.wins_a, data.wins_b), np.where(first_a, data.wins_b, data.wins_a)


def verdict_shares(data: Comparisons) -> pd.DataFrame:
    """Per judge, how its verdicts split between the answer shown first (a), the answer shown
    second (b) and ties, with the rule of the module docstring.

    Parameters
    ----------
    data : Comparisons
        Data with judges (one row per judge) or without (one row, :data:`ALL`).

    Returns
    -------
    DataFrame
        ``judge, n`` (verdicts, ties included), ``a, b, tie`` (shares of ``n``; ``a`` and ``b``
        NaN when the data do not say which answer was shown first), ``a_decisive`` (share of the
        decisive verdicts that went to the answer shown first), ``odds_ratio`` (the judge's odds
        of choosing the first position over the median of its panel's; NaN without a panel),
        ``follows_position`` (the rule; always False without positions) and ``position``
        (``"first"`` / ``"second"``: the position it follows, else ``""``).
    """
    k = max(data.n_judges, 1)
    judge = data.judge if data.judge is not None else np.zeros(data.n_cells, dtype=np.int64)
    names = list(data.judges) if data.judges is not None else [ALL]
    ties = np.bincount(judge, data.ties, k)
    if data.first is None:
        first = second = np.full(k, np.nan)
        decisive = np.bincount(judge, data.wins_a + data.wins_b, k)
    else:
        to_first, to_second = _position_counts(data)
        first, second = np.bincount(judge, to_first, k), np.bincount(judge, to_second, k)
        decisive = first + second
    n = decisive + ties
    with np.errstate(invalid="ignore", divide="ignore"):
        table = pd.DataFrame({"judge": names, "n": n.astype(np.int64) if np.all(n == np.round(n)) else n,
                              "a": first / n, "b": second / n, "tie": ties / n, "a_decisive": first / decisive})
    odds, follows, where = _follows_position(first, second)
    table["odds_ratio"] = odds
    table["follows_position"] = follows
    table["position"] = where
    return table


def _follows_position(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The odds ratio against each judge's panel and the rule of the module docstring."""
    k = first.size
    odds = np.full(k, np.nan)
    follows = np.zeros(k, dtype=bool)
    where = [""] * k
    if np.all(np.isnan(first)):
        return odds, follows, where
    decisive = first + second
    ell = np.log((first + 0.5) / (second + 0.5))
    se = np.sqrt(1 / (first + 0.5) + 1 / (second + 0.5))
    judged = decisive >= MIN_VERDICTS
    for j in np.flatnonzero(judged):
        if min(first[j], second[j]) == 0:  # every decisive verdict to one position: the absolute rule
            follows[j], where[j] = True, "first" if second[j] == 0 else "second"
        panel = ell[judged & (np.arange(k) != j)]
        if panel.size < MIN_PANEL:
            continue
        centre = np.median(panel)
        spread = _MAD_SCALE * np.median(np.abs(panel - centre))
        gap = ell[j] - centre
        odds[j] = np.exp(gap)
        if abs(gap) >= np.log(POSITION_ODDS_RATIO) and abs(gap) >= POSITION_Z * np.hypot(spread, se[j]):
            follows[j], where[j] = True, "first" if gap > 0 else "second"
    return odds, follows, where


@dataclass(frozen=True)
class PresentationOrder:
    """How the answers were ordered, pooled over judges.

    Attributes
    ----------
    n_pairs : int
        Compared pairs.
    one_order : int
        Pairs shown in one order only.
    swapped_share : float
        Share of the comparisons in pairs that were shown both ways.
    confounded : bool
        Every pair was shown in one order only: the order is a function of the items.
    rule : str
        ``"alphabetical"`` (the model shown first is always the alphabetically first of the pair),
        ``"reverse alphabetical"``, ``"per pair"`` (another fixed order) or ``""`` (not confounded).
    explained : float
        Share of the order (x = +1 when a was shown first, −1 otherwise; weighted by comparisons)
        that differences of item scores reproduce: the weighted R² of x on s_a − s_b. The rest is
        what a position effect can be estimated from in a model of scores. NaN (as ``shift``)
        when the order is not confounded with the items.
    items : DataFrame
        ``name, n_comparisons, shown_first`` (share of its comparisons in which the model was
        shown first) and ``shift`` (the change of its score, in logit units per logit of position
        preference δ, that a model without a position term absorbs: the weighted least-squares
        projection of δx on score differences), the models a first-position preference pushes up
        most first.
    """

    n_pairs: int
    one_order: int
    swapped_share: float
    confounded: bool
    rule: str
    explained: float
    items: pd.DataFrame

    def to_json(self) -> dict:
        """The summary, with the per-model table when the order is confounded with the items."""
        out = {"n_pairs": self.n_pairs, "pairs_in_one_order": self.one_order,
               "swapped_share": self.swapped_share, "confounded": self.confounded, "rule": self.rule,
               "explained": self.explained}
        if self.confounded:
            out["items"] = self.items.to_dict("records")
        return out


def presentation_order(data: Comparisons) -> PresentationOrder | None:
    """The presentation order of the data (:class:`PresentationOrder`); None when the data do
    not say which answer was shown first."""
    if data.first is None:
        return None
    m = data.n_items
    x = np.where(data.first == FIRST_A, 1.0, -1.0)
    n = data.totals
    pair = data.a * m + data.b
    codes, inverse = np.unique(pair, return_inverse=True)
    shown_a = np.bincount(inverse, np.where(x > 0, n, 0.0), codes.size)
    shown_b = np.bincount(inverse, np.where(x < 0, n, 0.0), codes.size)
    both = (shown_a > 0) & (shown_b > 0)
    total = n.sum()
    swapped = float(np.sum((shown_a + shown_b)[both]) / total) if total > 0 else 0.0
    confounded = bool(not both.any() and np.any(shown_a + shown_b > 1))
    names = np.asarray(data.items, dtype=object)
    first_name = np.where(x > 0, names[data.a], names[data.b])
    other_name = np.where(x > 0, names[data.b], names[data.a])
    rule = ""
    if confounded:
        rule = ("alphabetical" if np.all(first_name < other_name) else
                "reverse alphabetical" if np.all(first_name > other_name) else "per pair")
    # what a position preference does to the scores matters where the order follows the items
    shift, explained = _projection(data, x, n) if confounded else (np.full(m, np.nan), float("nan"))
    firsts = np.bincount(data.a, np.where(x > 0, n, 0.0), m) + np.bincount(data.b, np.where(x < 0, n, 0.0), m)
    per_item = np.bincount(data.a, n, m) + np.bincount(data.b, n, m)
    with np.errstate(invalid="ignore"):
        items = pd.DataFrame({"name": list(data.items), "n_comparisons": per_item, "shown_first": firsts / per_item,
                              "shift": shift})
    if np.all(per_item == np.round(per_item)):
        items["n_comparisons"] = per_item.astype(np.int64)
    if confounded:
        items = items.iloc[np.argsort(-shift, kind="stable")].reset_index(drop=True)
    return PresentationOrder(int(codes.size), int(np.sum(~both)), swapped, confounded, rule, explained, items)


def _projection(data: Comparisons, x: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, float]:
    """The zero-sum scores s minimising Σ_c n_c (x_c − (s_a − s_b))², and the weighted R²."""
    w = np.sqrt(n)
    rows = np.repeat(np.arange(data.n_cells), 2)
    cols = np.column_stack([data.a, data.b]).ravel()
    vals = (w[:, None] * np.array([1.0, -1.0])).ravel()
    design = coo_matrix((vals, (rows, cols)), shape=(data.n_cells, data.n_items)).tocsr()
    s = lsqr(design, w * x, atol=1e-12, btol=1e-12)[0]
    s = s - s.mean()
    fitted = s[data.a] - s[data.b]
    denominator = float(np.sum(n * x**2))
    explained = float(np.sum(n * fitted**2) / denominator) if denominator > 0 else 0.0
    return s, min(explained, 1.0)


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:_LISTED])
    return shown + (f", … (+{len(names) - _LISTED} more)" if len(names) > _LISTED else "")


def order_sentence(order: PresentationOrder) -> str:
    """What an order confounded with the items means for each model and for ``position_bias``."""
    how = {"alphabetical": " (the model shown first is always the alphabetically first of the pair)",
           "reverse alphabetical": " (the model shown first is always the alphabetically last of the pair)",
           }.get(order.rule, "")
    moved = _moved(order)
    effects = _listed([f"{r.name} {r.shift:+.2f}δ (shown first in {r.shown_first:.0%})" for r in moved.itertuples()])
    rest = 1 - order.explained
    if rest < 1e-9:
        identified = ("position_bias=True cannot separate δ from the scores at all: the order is a difference of "
                      "item scores, so δ is not identified")
    else:
        identified = (f"position_bias=True separates δ from the scores only through the {rest:.0%} of the order that "
                      "no difference of scores reproduces, that is through the model's assumption that each pair's "
                      "preference is a difference of two scores, not from any pair shown both ways; the design "
                      "identifies only how much judges who saw the same pairs differ in δ")
    return (f"positions were never swapped: each of the {order.n_pairs} pairs was shown in one order only{how}, "
            "so a preference for a position cannot be told apart from a preference for the models shown there. "
            "A preference of δ (logit) for the answer shown first moves these scores (shown first: share of a "
            f"model's comparisons): {effects}. {identified}.")


def position_warnings(data: Comparisons) -> list[str]:
    """Sentences for every judge that follows the position (the rule of the module docstring)
    and for an order confounded with the items (:func:`order_sentence`)."""
    if data.first is None:
        return []
    order = presentation_order(data)
    out = []
    shares = verdict_shares(data)
    for row in shares[shares["follows_position"]].itertuples():
        share = row.a_decisive if row.position == "first" else 1 - row.a_decisive
        decisive = round(row.n * (1 - row.tie))
        panel = ""
        if np.isfinite(row.odds_ratio):
            odds = row.odds_ratio if row.position == "first" else 1 / row.odds_ratio
            panel = (f", {odds:,.0f} times the odds of the median judge of the panel" if odds >= 10 else
                     f", {odds:.1f} times the odds of the median judge of the panel")
        who = f"judge '{row.judge}'" if row.judge != ALL else "the verdicts"
        then = (" — with positions never swapped, its verdicts push up the models shown in that position"
                if order.confounded else "")
        if share == 1:  # the absolute rule: no finite position effect
            how = (f"in all {decisive:,} of its decisive verdicts ({round(row.n * row.tie):,} ties){panel}: its "
                   "verdicts follow the position, not the answers, and a position-bias model has no finite "
                   "estimate for it")
        else:
            how = (f"in {share:.1%} of {decisive:,} decisive verdicts{panel}: its verdicts follow the position, "
                   "not the answers")
        out.append(f"{who} chose the answer shown {row.position} {how}{then}; consider dropping it "
                   "(Comparisons.without_judges) and comparing the rankings with and without it")
    if order.confounded and len(_moved(order)):  # (an order no score difference reproduces moves no score)
        out.append(order_sentence(order))
    return out


def _moved(order: PresentationOrder) -> pd.DataFrame:
    """The models whose score a preference for the first position moves (``shift`` not 0)."""
    return order.items[np.abs(order.items["shift"]) > 1e-9]


__all__ = ["ALL", "MIN_PANEL", "MIN_VERDICTS", "POSITION_ODDS_RATIO", "POSITION_Z", "PresentationOrder",
           "order_sentence", "position_warnings", "presentation_order", "verdict_shares"]
