"""Choosing the rank r of an HJA model ("Heterogeneous Judge-Aware Ranking…",
App. C.1): K-fold cross-validation of
the held-out log-likelihood (the paper's method on real data), BIC, or PSIS-LOO of NUTS fits.

``cv``
    Every comparison (record) goes to one of ``folds`` folds at random (seeded; folds of equal
    size, as the paper's record-level KFold — drawn from the cells' counts, so no record file
    is needed). For each fold and candidate rank the MAP is fitted on the other folds and
    scored on the fold: the criterion is the mean negative log-likelihood per held-out
    comparison under the framework's tie convention (``half``: a tie costs
    −½[log p_a + log p_b], the paper's soft label). ``se`` is the standard error of that mean
    over comparisons and ``d_se`` the standard error of its paired difference to the chosen
    rank. A rank whose fit fails on any fold is discarded (the paper's rule); ties go to the
    smaller rank.
``bic``
    BIC(r) = −2 ℓ(θ̂_r) + d_r log n with d_r = r(K + N − r − 3), the heterogeneity part of the
    dimension of Θ_r (eq. C.1; the common (K − 1) + (N − 1) and any tie or position parameters
    are the same for every r), n the comparisons the likelihood counts. No standard error.
``loo``
    PSIS-LOO (ArviZ) of a NUTS fit per rank; one LOO point is one cell (a judge's verdicts on
    one pair of items in one position), not one record. ``value`` is elpd_loo (higher is
    better), ``se`` its standard error and ``d_se`` that of the pointwise difference to the
    chosen rank; ``pareto_k_bad`` counts cells with k > 0.7.

Examples
--------
>>> import bayesrank as br
>>> from bayesrank.evaluation.selection import select_rank
>>> sel = select_rank(br.HJA(), "mtbench-judges", criterion="bic", max_rank=2)
>>> sel.rank
1
>>> sel.criteria[["rank", "value", "d_r"]].round(1)
   rank    value  d_r
0     0  10009.2    0
1     1   8717.6   22
2     2   8873.2   42
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import Comparisons
from bayesrank.data.load import load
from bayesrank.errors import DataError, ModelSpecError, as_count, options_checked
from bayesrank.evaluation.compare import loo
from bayesrank.inference.tree import plain
from bayesrank.model.framework import Framework
from bayesrank.model.hja import HJA, max_rank as rank_bound
from bayesrank.results.fit import fit
from bayesrank.results.predict import cell_log_probs
from bayesrank.runtime import progress

CRITERIA = ("cv", "bic", "loo")
#: Pareto k above which a PSIS-LOO point is unreliable.
PARETO_K_BAD = 0.7


@dataclass(frozen=True)
class RankSelection:
    """The outcome of :func:`select_rank`.

    Attributes
    ----------
    criterion : {"cv", "bic", "loo"}
    rank : int
        The chosen rank.
    criteria : DataFrame
        One row per candidate rank: ``rank, value, se, d_se, d_r, failed`` (+ ``pareto_k_bad``
        for LOO); see the module docstring for what ``value`` is.
    settings : dict
        ``folds``, ``seed``, ``max_rank``, ``framework`` (the spec, rank aside) and the like.
    warnings : list of str
    """

    criterion: str
    rank: int
    criteria: pd.DataFrame
    settings: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)

    def to_json(self) -> dict:
        """The CLI's ``select-rank`` JSON: ``criterion, rank, criteria`` (records), settings, warnings."""
        return plain({"criterion": self.criterion, "rank": self.rank,
                      "criteria": self.criteria.to_dict("records"), **self.settings, "warnings": self.warnings})


def heterogeneity_dof(rank: int, n_judges: int, n_items: int) -> int:
    """d_r = r(K + N − r − 3): the dimension the rank-r disagreement adds (paper eq. C.1)."""
    return rank * (n_judges + n_items - rank - 3)


def record_folds(data: Comparisons, folds: int, random_seed: int) -> list[tuple[Comparisons, Comparisons]]:
    """Record-level K-fold split of ``data``: (training, held-out) comparisons per fold.

    Each record (a win of a, a win of b, a tie or a both-bad tie of a cell) is one unit,
    shuffled with ``numpy.random.default_rng(random_seed)`` and dealt out to the folds in turn, so the
    folds have (nearly) equal sizes, as a record-level KFold. Both parts keep the cells, items
    and judges of ``data`` (cells a part does not see are left out).
    """
    if (whole := as_count(folds, 2)) is None:
        raise ModelSpecError(f"folds must be an integer of at least 2, got {folds!r}.")
    folds = whole
    counts = np.column_stack([data.wins_a, data.wins_b, data.ties, data.ties_bothbad])
    units = counts.round().astype(np.int64)
    if not np.allclose(units, counts):
        raise ModelSpecError("record folds need whole counts per cell (the data have fractional counts).")
    kind = np.repeat(np.arange(units.size), units.ravel())  # one entry per record: its (cell, outcome)
    fold = np.empty(kind.size, dtype=np.int64)
    fold[np.random.default_rng(random_seed).permutation(kind.size)] = np.arange(kind.size) % folds
    out = []
    for f in range(folds):
        held = np.bincount(kind[fold == f], minlength=units.size).reshape(units.shape).astype(float)
        out.append((_with_counts(data, counts - held), _with_counts(data, held)))
    return out


def _with_counts(data: Comparisons, counts: np.ndarray) -> Comparisons:
    part = replace(data, wins_a=counts[:, 0], wins_b=counts[:, 1], ties=counts[:, 2], ties_bothbad=counts[:, 3])
    return part.subset(counts[:, :3].sum(axis=1) > 0)


def record_losses(framework, tree, test: Comparisons) -> tuple[np.ndarray, np.ndarray]:
    """Held-out negative log-likelihood of each kind of record of each test cell.

    Returns
    -------
    loss : ndarray
        ``(n_cells, 3)``: the loss of one a-win, one b-win and one tie of the cell under the
        framework's tie convention (derived by applying the convention to a single record).
    weight : ndarray
        ``(n_cells, 3)``: how many such records the cell holds (0 for ties the convention drops).
    """
    lp = cell_log_probs(tree, test)
    loss, weight = np.zeros((test.n_cells, 3)), np.zeros((test.n_cells, 3))
    raw = test.counts()
    for o in range(3):
        unit = np.zeros((test.n_cells, 3))
        unit[:, o] = 1.0
        try:
            one = framework.tie_convention(replace(test, wins_a=unit[:, 0], wins_b=unit[:, 1], ties=unit[:, 2]))
        except DataError:  # the convention drops every record of this kind (ties="drop")
            continue
        with np.errstate(invalid="ignore"):
            loss[:, o] = -np.where(one.counts() > 0, one.counts() * lp, 0.0).sum(axis=1)
        weight[:, o] = raw[:, o]
    return loss, weight


def _record_values(loss, weight):
    """Flattened (value, count) of every record kind with at least one record."""
    keep = weight.ravel() > 0
    return loss.ravel()[keep], weight.ravel()[keep]


def _mean_se(values, counts):
    n = counts.sum()
    mean = float((values * counts).sum() / n)
    var = float((counts * (values - mean) ** 2).sum() / (n - 1))
    return mean, float(np.sqrt(var / n))


@options_checked
def select_rank(framework: HJA, data, criterion: str = "cv", *, max_rank: int | None = None,
                folds: int = 5, random_seed: int = 0, nuts: dict | None = None) -> RankSelection:
    """Choose the rank of an HJA model (module docstring).

    Parameters
    ----------
    framework : HJA
        Ties, position bias and priors of the candidates (``bayesrank.HJA()`` for the paper's);
        its rank is ignored.
    data : Comparisons or anything :func:`bayesrank.load` accepts
    criterion : {"cv", "bic", "loo"}
    max_rank : int, optional
        Largest candidate (default and cap: min(K − 1, N − 2)); candidates are 0, …, max_rank.
    folds, random_seed : int
        Cross-validation folds and the random_seed of the record split.
    nuts : dict, optional
        Keyword arguments of the NUTS fits for ``loo`` (default: draws=1000, tune=1000,
        chains=4, random_seed=random_seed).

    Returns
    -------
    RankSelection
    """
    if criterion not in CRITERIA:
        raise ModelSpecError(f"unknown criterion {criterion!r}; use one of {', '.join(CRITERIA)} (the paper: cv).")
    if not isinstance(framework, HJA):   # (the data first, or another framework: say the order)
        what = framework.label if isinstance(framework, Framework) else type(framework).__name__
        raise ModelSpecError("select_rank(framework, data, ...) chooses the rank of an HJA model: its first argument "
                             f"is the framework, e.g. select_rank(bayesrank.HJA(), data); got {what}.")
    data = data if isinstance(data, Comparisons) else load(data)
    prepared = replace(framework, rank=0).prepare(data)
    top = rank_bound(prepared.n_judges, prepared.n_items)
    if max_rank is not None:
        if as_count(max_rank) is None:
            raise ModelSpecError(f"max_rank must be a non-negative integer, got {max_rank!r}.")
        top = min(top, max_rank)
    ranks = list(range(top + 1))
    settings = {"max_rank": top, "framework": {k: v for k, v in framework.spec().items() if k != "rank"}}
    if criterion == "cv":
        table, notes = _cross_validate(framework, data, ranks, folds, random_seed)
        settings.update(folds=folds, random_seed=random_seed)
        best = _best(table, lower=True)
    elif criterion == "bic":
        table, notes = _bic(framework, data, ranks, prepared)
        best = _best(table, lower=True)
    else:
        kwargs = {"draws": 1000, "tune": 1000, "chains": 4, "random_seed": random_seed, **(nuts or {})}
        table, notes = _loo(framework, data, ranks, kwargs)
        settings.update(nuts=kwargs)
        best = _best(table, lower=False)
    if best is None:
        raise ModelSpecError("every candidate rank failed to fit; see the warnings of the single fits.")
    if "pointwise" in table:
        chosen = table.loc[table["rank"] == best, "pointwise"].iloc[0]
        table["d_se"] = [np.nan if p is None else _paired_se(p, chosen) for p in table["pointwise"]]
        table = table.drop(columns="pointwise")
    else:  # BIC: a deterministic criterion, no standard errors
        table["d_se"] = np.nan
    return RankSelection(criterion, best, table.reset_index(drop=True), settings, notes)


def _best(table: pd.DataFrame, lower: bool):
    ok = table[~table["failed"]]
    if ok.empty:
        return None
    values = ok["value"].to_numpy()
    return int(ok["rank"].iloc[int(np.argmin(values) if lower else np.argmax(values))])


def _paired_se(pointwise, chosen) -> float:
    """Standard error of the mean (cv) or total (loo) of a pointwise difference."""
    (a, n), (b, _) = pointwise, chosen
    if n is None:  # LOO: per-cell elpd, the se of a sum
        d = a - b
        return float(np.sqrt(d.size * d.var(ddof=1)))
    return _mean_se(a - b, n)[1]


def _cross_validate(framework, data, ranks, folds, random_seed):
    losses = {r: [] for r in ranks}
    failed = {r: False for r in ranks}
    notes = []
    splits = enumerate(record_folds(data, folds, random_seed))
    steps = [(f, train, test, r) for f, (train, test) in splits for r in ranks]
    for f, train, test, r in progress.track(steps, f"rank selection: {folds}-fold cross-validation of ranks "
                                                   f"{min(ranks)}-{max(ranks)}"):
        if failed[r]:
            continue
        result = fit(replace(framework, rank=r), train, draws=200, random_seed=random_seed)
        if not result.converged:
            failed[r] = True
            notes.append(f"rank {r} was discarded: its fit did not converge on fold {f + 1} "
                         f"({'; '.join(result.warnings[-1:]) or 'no further detail'})")
            continue
        losses[r].append(record_losses(result.framework, result.tree, test))
    rows = []
    for r in ranks:
        if failed[r]:
            rows.append({"rank": r, "value": np.nan, "se": np.nan, "d_r": None, "failed": True, "pointwise": None})
            continue
        values, counts = _record_values(np.vstack([l for l, _ in losses[r]]), np.vstack([w for _, w in losses[r]]))
        mean, err = _mean_se(values, counts)
        rows.append({"rank": r, "value": mean, "se": err, "d_r": heterogeneity_dof(r, data.n_judges, data.n_items),
                     "failed": False, "pointwise": (values, counts)})
    return pd.DataFrame(rows), notes


def _bic(framework, data, ranks, prepared):
    rows, notes = [], []
    for r in progress.track(ranks, "rank selection: a fit per rank (BIC)"):
        result = fit(replace(framework, rank=r), data, draws=200)
        d_r = heterogeneity_dof(r, prepared.n_judges, prepared.n_items)
        bad = not result.converged
        if bad:
            notes.append(f"rank {r} was discarded: its fit did not converge")
        rows.append({"rank": r, "value": np.nan if bad else -2 * result.loglik + d_r * np.log(result.n_comparisons),
                     "se": np.nan, "d_r": d_r, "failed": bad, "loglik": result.loglik})
    return pd.DataFrame(rows), notes


def _loo(framework, data, ranks, kwargs):
    rows, notes = [], []
    for r in progress.track(ranks, "rank selection: a NUTS fit per rank (PSIS-LOO)"):
        result = fit(replace(framework, rank=r), data, method="nuts", **kwargs)
        res = loo(result, refit=None, label=f"rank {r}")
        k = np.asarray(res.pareto_k).ravel()
        notes += [f"rank {r}: {w}" for w in result.warnings if "agree on" not in w]
        rows.append({"rank": r, "value": float(res.elpd), "se": float(res.se), "p_loo": float(res.p),
                     "d_r": heterogeneity_dof(r, data.n_judges, data.n_items), "failed": False,
                     "pareto_k_bad": int((k > PARETO_K_BAD).sum()),
                     "pointwise": (np.asarray(res.elpd_i).ravel(), None)})
    return pd.DataFrame(rows), notes


__all__ = ["CRITERIA", "RankSelection", "heterogeneity_dof", "record_folds", "select_rank"]
