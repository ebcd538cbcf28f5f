"""Answers of a time fit (:class:`~bayesrank.model.dynamic.Dynamic`): trajectories, change points, the
leaderboard as of any date and one-step-ahead predictions — pure functions of the fit's DataTree.

A time fit's ``score`` has dims (item, period) and is centred in every period; ``jump`` and
``change_probability`` hold each item's jump into each of its periods with battles (the MAP path's
posterior means and EP probabilities, or NUTS's posterior means). Intervals are equal-tailed
quantiles of the draws (posterior, or of the MAP path's Gaussian q), so both methods answer alike.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from bayesrank.errors import BayesrankError, DataError, ModelSpecError
from bayesrank.inference.structure import structure_of
from bayesrank.model.dynamic import CHANGE, CHANGE_SIZE, JUMP, PATH, activity
from bayesrank.results.estimates import check_level, draws, point
from bayesrank.results.io import framework_of, model_data_of

#: The smallest posterior probability of a change that :func:`changes` lists by default.
CHANGE_THRESHOLD = 0.5


def is_time_fit(tree: xr.DataTree) -> bool:
    """Whether the fit has scores per period (a :class:`~bayesrank.model.dynamic.Dynamic` fit)."""
    return "period" in tree["estimate"]["score"].dims


def _require(tree: xr.DataTree, what: str) -> None:
    if not is_time_fit(tree):
        raise BayesrankError(f"{what} needs a fit over time: fit bayesrank.Dynamic(<framework>) on comparisons read "
                             "with time_column= (CLI: --time-column COLUMN --period week).")


def periods(tree: xr.DataTree) -> list[str]:
    """The start dates (ISO 8601) of the fit's periods."""
    _require(tree, "periods")
    return [str(x) for x in tree["estimate"]["period"].values]


def _span(tree: xr.DataTree) -> tuple[np.ndarray, np.ndarray]:
    """Each item's first and last period with battles."""
    active = activity(model_data_of(tree))
    return np.argmax(active, axis=1), active.shape[1] - 1 - np.argmax(active[:, ::-1], axis=1)


def trajectories(tree: xr.DataTree, level: float = 0.95) -> pd.DataFrame:
    """Every item's score in every period from its first to its last period with battles.

    Parameters
    ----------
    tree : DataTree
        A time fit.
    level : float
        Probability of the equal-tailed intervals.

    Returns
    -------
    DataFrame
        ``name, period, score, se, lower, upper`` (``period``: the ISO start date), by item, then period.
        Scores are centred in every period; a period without the item's battles between its first and
        last carries its score on.
    """
    _require(tree, "trajectories")
    check_level(level)
    names = [str(x) for x in tree["estimate"]["item"].values]
    dates = periods(tree)
    score, sample = point(tree, "score"), draws(tree, "score")
    alpha = (1 - level) / 2
    lower, upper = np.quantile(sample, [alpha, 1 - alpha], axis=0)
    first, last = _span(tree)
    rows = [(names[i], dates[t], score[i, t], sample[:, i, t].std(ddof=1), lower[i, t], upper[i, t])
            for i in range(len(names)) for t in range(first[i], last[i] + 1)]
    return pd.DataFrame(rows, columns=["name", "period", "score", "se", "lower", "upper"])


def changes(tree: xr.DataTree, threshold: float = CHANGE_THRESHOLD) -> pd.DataFrame:
    """The change points: every jump whose posterior probability of being a change is at least
    ``threshold``.

    Returns
    -------
    DataFrame
        ``name, period, size, se, probability``, by period then item: ``period`` is the ISO start date of
        the first period at the new level, ``size`` the posterior mean of the item's own jump given that it
        is a change (raw score; centred scores move by about size·(1 − 1/m)), ``se`` the jump's posterior
        sd, ``probability`` the posterior probability that it is a change (slab) rather than drift
        (spike).
    """
    _require(tree, "changes")
    if not 0.0 <= threshold <= 1.0:
        raise ModelSpecError(f"changes: threshold must be a probability in [0, 1], got {threshold!r}.")
    est = tree["estimate"]
    names = [str(x) for x in est["item"].values]
    dates = periods(tree)
    probability, sd = est[CHANGE].values, est[f"{JUMP}_se"].values
    size = _change_size(tree)
    slots = _jump_slots(tree)
    picked = slots & (probability >= threshold)
    i, t = np.nonzero(picked.T)[1], np.nonzero(picked.T)[0]
    return pd.DataFrame({"name": [names[k] for k in i], "period": [dates[k] for k in t], "size": size[i, t],
                         "se": sd[i, t], "probability": probability[i, t]})


def _change_size(tree: xr.DataTree) -> np.ndarray:
    """E(jump | change) per (item, period): the MAP path's, or from NUTS's draws E(j P(change | j)) /
    E(P(change | j)) (each draw's jump weighted by its probability of being a change)."""
    est = tree["estimate"]
    if CHANGE_SIZE in est:
        return est[CHANGE_SIZE].values
    jump, weight = draws(tree, JUMP), draws(tree, CHANGE)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weight.sum(axis=0) > 0, (jump * weight).sum(axis=0) / weight.sum(axis=0), 0.0)


def _jump_slots(tree: xr.DataTree) -> np.ndarray:
    """``(items, periods)``: where an item has a jump (a period with battles after its first)."""
    active = activity(model_data_of(tree))
    return active & (np.cumsum(active, axis=1) > 1)


def period_of(tree: xr.DataTree, at) -> int:
    """The index of the period a date falls in: the last period starting on or before it.

    Raises
    ------
    DataError
        A date that is not one, or before the first period.
    """
    dates = periods(tree)
    try:
        moment = pd.Timestamp(at)
    except (ValueError, TypeError):
        raise DataError(f"at={at!r} is not a date; write it as ISO 8601 (2024-03-05).") from None
    if moment.tzinfo is not None:
        moment = moment.tz_convert("UTC").tz_localize(None)
    starts = pd.to_datetime(dates)
    k = int(np.searchsorted(starts.values, np.datetime64(moment), side="right")) - 1
    if k < 0:
        raise DataError(f"at={at!r} is before the first period of the fit ({dates[0]}).")
    return k


def leaderboard_at(tree: xr.DataTree, at=None, level: float = 0.95) -> pd.DataFrame:
    """The leaderboard as of a date (default: the last period), from the fit of every period.

    Parameters
    ----------
    tree : DataTree
        A time fit.
    at : str or date, optional
        A date; the board is that of the period it falls in (the last starting on or before it).
    level : float

    Returns
    -------
    DataFrame
        ``rank, name, score, se, lower, upper, rank_lower, rank_upper, first_period, last_period`` best
        first, for the items seen by then (first period on or before it); an item whose last period with
        battles is earlier stands at its carried score. The scores are those of the whole fit (smoothed:
        battles after the date inform them too). ``attrs["period"]`` is the period's start date.
    """
    check_level(level)
    k = len(periods(tree)) - 1 if at is None else period_of(tree, at)
    names = np.asarray([str(x) for x in tree["estimate"]["item"].values], dtype=object)
    dates = periods(tree)
    first, last = _span(tree)
    shown = np.flatnonzero(first <= k)
    score = point(tree, "score")[shown, k]
    sample = draws(tree, "score")[:, shown, k]
    alpha = (1 - level) / 2
    order = np.argsort(-sample, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, shown.size + 1)[None, :], axis=1)
    table = pd.DataFrame({
        "name": names[shown], "score": score, "se": sample.std(axis=0, ddof=1),
        "lower": np.quantile(sample, alpha, axis=0), "upper": np.quantile(sample, 1 - alpha, axis=0),
        "rank_lower": np.quantile(ranks, alpha, axis=0, method="lower").astype(int),
        "rank_upper": np.quantile(ranks, 1 - alpha, axis=0, method="higher").astype(int),
        "first_period": [dates[t] for t in first[shown]], "last_period": [dates[t] for t in last[shown]]})
    table = table.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    table.attrs["period"] = dates[k]
    table.attrs["scale_note"] = framework_of(tree).scale_note
    return table


def predict_next(tree: xr.DataTree, item_a, item_b, random_seed: int = 0) -> pd.DataFrame:
    """One-step-ahead outcome probabilities: pairs meeting in the period after the fit's last.

    Each item's score moves on from its last period by a jump of the fitted spike-and-slab prior
    (slab σ and rate ρ: the MAP path's empirical Bayes values, or each posterior draw's under NUTS),
    and the probabilities are averaged over the draws and those jumps (the framework's link).

    Parameters
    ----------
    tree : DataTree
        A time fit.
    item_a, item_b : str or sequence of str
        The pairs.
    random_seed : int
        Seed of the next period's jumps.

    Returns
    -------
    DataFrame
        ``item_a, item_b, p_win_a, p_win_b, p_tie``.

    Raises
    ------
    DataError
        An item the fit has not seen.
    """
    _require(tree, "predict_next")
    a_names, b_names = np.atleast_1d(np.asarray(item_a, dtype=object)), np.atleast_1d(np.asarray(item_b, dtype=object))
    if a_names.shape != b_names.shape:
        raise DataError("predict_next: item_a and item_b must have the same length.")
    names = [str(x) for x in tree["estimate"]["item"].values]
    index = {n: k for k, n in enumerate(names)}
    unknown = sorted({str(x) for x in (*a_names, *b_names)} - set(index))
    if unknown:
        raise DataError(f"predict_next: {unknown[:5]} not in the fit's items; only items with battles can be "
                        "predicted.")
    framework = framework_of(tree)
    data = model_data_of(tree)
    sample = draws(tree, "score")
    n_draws, m, T = sample.shape
    rng = np.random.default_rng(random_seed)
    slab, rate = _hyper(tree, n_draws)
    spike = float(framework.spike)
    slab_draw = rng.random((n_draws, m)) < rate[:, None]
    steps = rng.standard_normal((n_draws, m)) * np.where(slab_draw, 1.0, spike) * slab[:, None]
    moved = sample[:, :, -1] + steps
    nat = {PATH: np.repeat(moved[:, :, None], T, axis=2)}
    post = tree["posterior"]
    if "eta_raw" in post:
        nat["eta_raw"] = draws(tree, "eta_raw")
    a = np.array([index[str(x)] for x in a_names])
    b = np.array([index[str(x)] for x in b_names])
    cells = {"item_a": a, "item_b": b, "period_index": np.full(a.size, T - 1)}
    structure = structure_of(framework, data, "flat")
    probs = np.exp(structure.log_probs(nat, cells, draws=True)).mean(axis=0)
    return pd.DataFrame({"item_a": a_names, "item_b": b_names, "p_win_a": probs[:, 0], "p_win_b": probs[:, 1],
                         "p_tie": probs[:, 2]})


def _hyper(tree: xr.DataTree, n_draws: int) -> tuple[np.ndarray, np.ndarray]:
    """The slab scale and change rate for each draw: posterior draws (NUTS) or the fitted values."""
    post = tree["posterior"]
    if "slab" in post and "rate" in post:
        return draws(tree, "slab"), draws(tree, "rate")
    est = tree["estimate"]
    return np.full(n_draws, float(est["slab"])), np.full(n_draws, float(est["rate"]))


def to_json_fields(tree: xr.DataTree, level: float = 0.95) -> dict:
    """The CLI's JSON fields of a time fit: ``periods``, each item's ``trajectory`` (by name) and
    ``changes`` (probability ≥ :data:`CHANGE_THRESHOLD`)."""
    paths = trajectories(tree, level)
    out = {"periods": periods(tree),
           "trajectory": {name: group[["period", "score", "lower", "upper"]].to_dict("records")
                          for name, group in paths.groupby("name", sort=False)},
           "changes": changes(tree)[["name", "period", "size", "probability"]].to_dict("records")}
    return out


__all__ = ["CHANGE_THRESHOLD", "changes", "is_time_fit", "leaderboard_at", "period_of", "periods", "predict_next",
           "to_json_fields", "trajectories"]
