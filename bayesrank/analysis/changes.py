"""Why the board changed: two fits of one arena compared model by model, each score change
attributed to the battles that caused it.

:func:`diff` lines up two leaderboards — typically a fit and its update (:meth:`Fit.update
<bayesrank.results.fit.Fit.update>`) — and reports every model's rank and score on both, with
their intervals, the models that are new, and, for two MAP fits of one framework, where each
score change comes from.

Scores of different boards
    Each board's scores sum to zero over its own models, so a new model shifts every other score
    by a constant that says nothing about them. ``change`` is therefore measured with both boards
    centred on the models they share: s̃ᵢ = sᵢ − mean of the shared models' scores, change =
    s̃ᵢ(new) − s̃ᵢ(old). Without new or dropped models this is score_new − score_old.

How much change is noise
    When the new board's battles include the old board's (an update), the change a model's score
    shows when nothing about the model changed — only more battles were counted — has variance
    Var(old) − Var(new) of its centred score (the variance of the difference of nested efficient
    estimators, Hausman 1978). ``change_lower``/``change_upper`` is the change ± that spread at
    ``level``: an interval that excludes 0 marks a change larger than the new battles' sampling
    noise explains. It is exact, asymptotically, for Wald intervals of a correctly specified model
    and an approximation otherwise (sandwich, bootstrap, posterior intervals); it is not given
    when the boards' battles are not nested.

Attribution: an integrated influence decomposition
    Let ℓ₀ be the log-likelihood of the old board's cells and ℓ₁ the new board's, and follow the
    MLE θ(t) of ℓ₀ + t (ℓ₁ − ℓ₀) from t = 0 (the old fit) to t = 1 (the new one): every count
    moves linearly from its old value to its new value. Differentiating the first-order condition,
    dθ/dt = H(t)⁻¹ Σ_c Δn_c ∇ℓ_c(θ(t)), with H the observed information of the cells at t and
    Δn_c the cell's added (or removed) comparisons. So the change of any score is the integral of
    a sum over cells, and grouping the cells splits it exactly into parts that add up to it.
    For model i the cells with new battles are grouped as

    * ``own_battles``: battles of i against models on both boards;
    * ``rivals_battles``: battles between other models on both boards;
    * ``new_models``: battles in which a model new to the board took part — and what the new
      models' arrival changes in the model itself before any of their battles counts;
    * ``new_judges`` (only when judges are new): what the new judges' arrival changes in the model
      itself (their battles between models of both boards are own or rivals' battles); with new
      models too, this share is in ``new_models``.

    The arrivals' share is zero for most frameworks, but not for factored tie thresholds (Davidson,
    Rao–Kupper with k_tie ≥ 1), whose fixed basis Φ is a function of the set of models (the
    leaderbot paper's DCT-IV over the models), nor for judge-aware models, whose scale is fixed by
    Σ log γ = 0 over the set of judges: one more model or judge changes the model of every pair.
    It is the part of the change that the path of battles does not explain: the change minus the
    integral (with arrivals, the nodes double until the integral itself stops moving by more than
    :data:`ADD_UP`).

    With style control the style coefficients β are moved out of H: the score coordinates' part of
    dθ/dt is H_RR⁻¹ (g_R − H_Rβ dβ/dt), the first term split over the cells as above with β held
    fixed, and ``style`` = −∫ H_RR⁻¹ H_Rβ dβ/dt dt: the part of the change that the change of the
    style coefficients caused.

    The integral is taken by Gauss–Legendre quadrature on t ∈ (0, 1), the MLE at each node found
    from the previous one; without arrivals the nodes double (from :data:`NODES` up to
    :data:`MAX_NODES`) until the parts add up to the change within :data:`ADD_UP`
    (``attribution_residual`` reports the largest gap). The path is the same for every model and
    group — all new battles are counted in together — so the split does not depend on an order of
    adding groups (an Aumann–Shapley attribution of the counts). A model without new battles of
    its own gets exactly zero ``own_battles``; one whose rivals had none gets zero
    ``rivals_battles``.

    The attribution needs two MAP fits of one framework, of cells with the same layout, the new
    board having every model of the old, and a likelihood without reweighting or a continuous
    symmetry (HJA); otherwise it is left out and ``notes`` says why.

Examples
--------
>>> import bayesrank as br
>>> import numpy as np
>>> from bayesrank.data.simulate import battles
>>> rng = np.random.default_rng(3)
>>> old = br.fit(br.Davidson(), battles([1.0, 0.5, 0.0, -0.5], 3000, rng, eta=-1.0))
>>> new = old.update(battles([1.0, 0.5, 0.0, 1.5], 2000, rng, eta=-1.0))   # m03 got better
>>> changes = br.diff(old, new)
>>> moved = changes.items.query("rank_old != rank_new")
>>> moved[["name", "rank_old", "rank_new", "change", "own_battles"]].round(2)
  name  rank_old  rank_new  change  own_battles
2  m03         4         3    0.64         0.65
3  m02         3         4   -0.18        -0.20
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from scipy.linalg import cho_factor, cho_solve
from scipy.special import ndtri

from bayesrank.data.merge import align, check_compatible
from bayesrank.errors import BayesrankError, options_checked
from bayesrank.inference.backend import one_thread
from bayesrank.inference.information import Units, gradient, information, unit_effects
from bayesrank.inference.optimize import maximise
from bayesrank.inference.structure import structure_of
from bayesrank.inference.tree import plain
from bayesrank.inference.warm import starting_theta
from bayesrank.model.framework import STYLE
from bayesrank.results.estimates import check_level, draws, has_intervals, stored_covariance
from bayesrank.results.fit import Fit
from bayesrank.results.update import carried

#: Gauss–Legendre nodes of the first attempt at the attribution integral.
NODES = 8
#: Most nodes tried before the attribution is reported with its residual.
MAX_NODES = 64
#: The parts of every change must add up to it within this (score units, logit scale).
ADD_UP = 1e-6
#: Cells whose per-cell effects are computed at once (bounds the memory of large logs).
CELL_CHUNK = 20_000
#: The parts of an attribution, in order (``new_judges`` only with new judges, ``style`` only with
#: style control).
PARTS = ("own_battles", "rivals_battles", "new_models", "new_judges", "style")
#: The columns of :meth:`BoardDiff.shown` before the parts.
SHOWN = ("name", "status", "rank_old", "rank_new", "score_old", "score_new", "change", "change_lower", "change_upper")


@dataclass
class BoardDiff:
    """Two boards compared (see the module docstring).

    Attributes
    ----------
    items : DataFrame
        One row per model on either board, in the new board's order (dropped models last):
        ``name, status`` (``"new"``, ``"kept"`` or ``"dropped"``), ``rank_old, rank_new,
        rank_change`` (positive: up), ``rank_lower_old, rank_upper_old, rank_lower_new,
        rank_upper_new`` (rank intervals), ``score_old, lower_old, upper_old, score_new,
        lower_new, upper_new`` (each board's scores and intervals), ``change`` (centred; the
        module docstring), ``change_lower, change_upper`` (its interval) and, with an
        attribution, one column per part (:data:`PARTS`; ``style`` only with style control).
    style : DataFrame or None
        The style coefficients on both boards (``contrast, estimate_old, estimate_new, change``).
    summary : dict
        ``comparisons_old, comparisons_new, added, removed, nested, new_models, dropped_models,
        level`` and, with an attribution, ``attribution_nodes`` and ``attribution_residual``.
    notes : list of str
        What could not be computed, and why.
    """

    items: pd.DataFrame
    style: pd.DataFrame | None
    summary: dict
    notes: list[str] = field(default_factory=list)

    @property
    def attributed(self) -> bool:
        return "own_battles" in self.items

    def moved(self) -> pd.DataFrame:
        """The rows of models whose rank moved, and new and dropped models."""
        rows = self.items
        keep = (rows["status"] != "kept") | (rows["rank_old"] != rows["rank_new"]).fillna(False).astype(bool)
        return rows[keep].reset_index(drop=True)

    def shown(self, top: int = 0) -> pd.DataFrame:
        """:meth:`moved` with the columns a reader looks at first (the first ``top`` rows; 0: all)."""
        moved = self.moved()
        moved = moved[[*SHOWN, *[p for p in PARTS if p in moved]]]
        return moved.head(top) if top else moved

    def to_json(self) -> dict:
        """``{"items": [...], "new_models", "dropped_models", "style", "summary", "notes"}``:
        ``items`` holds every model whose rank moved (and new and dropped models), each with
        its ranks, scores, intervals, change and ``attribution`` (the parts)."""
        rows = []
        for row in self.moved().to_dict("records"):
            parts = {p: row.pop(p) for p in PARTS if p in row}
            rows.append({**row, **({"attribution": parts} if parts else {})})
        return plain({"items": rows, "new_models": self.summary["new_models"],
                      "dropped_models": self.summary["dropped_models"],
                      "style": None if self.style is None else self.style.to_dict("records"),
                      "summary": self.summary, "notes": self.notes})

    def to_frame(self) -> pd.DataFrame:
        """Every model's row (:attr:`items`)."""
        return self.items.copy()

    def describe(self) -> list[str]:
        """What the comparison covers and how to read it, in a few sentences."""
        s = self.summary
        pct = f"{100 * s['level']:g}%"
        lines = [f"comparisons: {s['comparisons_old']:,.0f} -> {s['comparisons_new']:,.0f} "
                 f"(+{s['added']:,.0f}" + (f", -{s['removed']:,.0f}" if s["removed"] else "") + ")",
                 f"new models: {', '.join(s['new_models']) or 'none'}"
                 + (f"; dropped: {', '.join(s['dropped_models'])}" if s["dropped_models"] else ""),
                 "change: score change with both boards centred on their shared models; "
                 + (f"[change_lower, change_upper]: its {pct} interval (excluding 0: more than the new battles' "
                    "noise)" if s.get("nested") else "no interval (the boards' battles are not nested)")]
        if self.attributed:
            lines.append("attribution (parts add up to change): own = the model's own new battles, rivals = "
                         "new battles between other models, new_models = battles and arrival of models new to the "
                         "board" + (", new_judges = the arrival of new judges" if "new_judges" in self.items else "")
                         + (", style = the change of the style coefficients" if "style" in self.items else ""))
        return lines

    def to_text(self, top: int = 30) -> str:
        """The models whose rank moved, with their changes and attribution, as a table in words."""
        lines = self.describe()
        shown = self.shown(top)
        if shown.empty:
            lines.append("\nno model changed rank.")
        else:
            lines += ["", _printable(shown).to_string(index=False)]
        if self.style is not None:
            lines += ["", "style coefficients:", self.style.to_string(index=False, float_format=lambda v: f"{v:.4f}")]
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _printable(table: pd.DataFrame) -> pd.DataFrame:
    """Numbers to four decimals, missing entries blank."""
    def cell(v):
        if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
            return ""
        return f"{v:.4f}" if isinstance(v, float) else v
    return table.astype(object).map(cell)


@options_checked
def diff(old: Fit, new: Fit, level: float = 0.95, attribution: bool = True) -> BoardDiff:
    """Compare two boards of one arena model by model (see the module docstring).

    Parameters
    ----------
    old, new : Fit
        The earlier and the later board (for example a fit and its update).
    level : float
        Interval level of the scores, ranks and changes.
    attribution : bool
        Attribute every score change to the new battles (MAP fits; see the module docstring).

    Returns
    -------
    BoardDiff

    Raises
    ------
    BayesrankError
        Boards of different layouts or with no model in common (:class:`~bayesrank.errors.DataError`),
        or fits that are not :class:`~bayesrank.results.fit.Fit` objects.
    """
    for name, value in (("old", old), ("new", new)):
        if not isinstance(value, Fit):
            raise BayesrankError(f"bayesrank.diff({name}=...) expects a Fit (bayesrank.fit, Fit.load), "
                                 f"got {type(value).__name__}.")
    check_level(level)
    check_compatible(old.data, new.data, old_name="the old board", new_name="the new board", ids=False)
    aligned = align(old.data, new.data)
    added = np.clip(aligned.new - aligned.old, 0, None)[:, :3].sum()
    removed = np.clip(aligned.old - aligned.new, 0, None)[:, :3].sum()
    nested = bool(removed == 0)
    notes: list[str] = []
    items = _boards(old, new, level, nested, notes)
    old_items, new_items = old.items, new.items
    shared = [n for n in old_items if n in set(new_items)]
    summary = {"comparisons_old": old.data.n_comparisons, "comparisons_new": new.data.n_comparisons,
               "added": float(added), "removed": float(removed), "nested": nested,
               "new_models": [n for n in new_items if n not in set(old_items)],
               "dropped_models": [n for n in old_items if n not in set(new_items)], "level": level}
    if attribution:
        why = _not_attributable(old, new)
        if why:
            notes.append(f"no attribution: {why}.")
        else:
            parts, nodes, residual = attribute(old, new, shared)
            items = items.join(parts, on="name")
            summary.update(attribution_nodes=nodes, attribution_residual=residual)
            if parts.empty:
                notes.append(f"no attribution: {old.framework.label} has no score the predictors read directly.")
            elif residual > ADD_UP:
                notes.append(f"the attribution's parts add up to the changes within {residual:.2g} only "
                             f"(after {nodes} quadrature nodes).")
    return BoardDiff(items, _style(old, new), summary, notes)


def _boards(old: Fit, new: Fit, level: float, nested: bool, notes: list[str]) -> pd.DataFrame:
    """Both leaderboards side by side, with the centred change and its noise interval."""
    columns = ["rank", "name", "score", "lower", "upper", "rank_lower", "rank_upper"]
    a = old.leaderboard(level).reindex(columns=columns).set_index("name")
    b = new.leaderboard(level).reindex(columns=columns).set_index("name")
    names = list(b.index) + [n for n in a.index if n not in b.index]
    table = pd.DataFrame({"name": names})
    table["status"] = ["kept" if n in a.index and n in b.index else "new" if n in b.index else "dropped"
                       for n in names]
    old_part, new_part = a.reindex(names), b.reindex(names)
    table["rank_old"], table["rank_new"] = _ranks(old_part["rank"]), _ranks(new_part["rank"])
    table["rank_change"] = table["rank_old"] - table["rank_new"]
    for suffix, part in (("old", old_part), ("new", new_part)):
        table[f"rank_lower_{suffix}"] = _ranks(part["rank_lower"])
        table[f"rank_upper_{suffix}"] = _ranks(part["rank_upper"])
    for suffix, part in (("old", old_part), ("new", new_part)):
        for col in ("score", "lower", "upper"):
            table[f"{col}_{suffix}"] = part[col].to_numpy(dtype=float)
    kept = set(new.items)
    shared = [n for n in old.items if n in kept]
    centred = {}
    for suffix, fitted in (("old", old), ("new", new)):
        score = fitted.scores()
        centred[suffix] = (score - score.reindex(shared).mean()).reindex(names).to_numpy(dtype=float)
    table["change"] = centred["new"] - centred["old"]
    table["change_lower"] = table["change_upper"] = np.nan
    if not nested:
        notes.append("the new board does not hold every battle of the old one: change intervals are left out.")
    elif has_intervals(old.tree) and has_intervals(new.tree):
        var = _centred_variance(old, shared).reindex(names) - _centred_variance(new, shared).reindex(names)
        z = ndtri(0.5 + level / 2)
        half = z * np.sqrt(np.clip(var.to_numpy(dtype=float), 0, None))
        table["change_lower"], table["change_upper"] = table["change"] - half, table["change"] + half
    return table


def _ranks(column: pd.Series) -> pd.array:
    """Ranks as whole numbers, missing where a board has none."""
    return pd.array(column.to_numpy(dtype=float, na_value=np.nan), dtype="Float64").astype("Int64")


def _centred_variance(fitted: Fit, shared: list[str]) -> pd.Series:
    """Var(sᵢ − mean of the shared models' scores) for every model of a fit: from its stored
    Wald covariance, or from its draws."""
    names = fitted.items
    position = [names.index(n) for n in shared]
    weights = np.zeros(len(names))
    weights[position] = 1.0 / len(position)
    contrasts = np.eye(len(names)) - weights[None, :]
    cov = stored_covariance(fitted.tree, "score_cov")
    if cov is None:
        cov = np.atleast_2d(np.cov(draws(fitted.tree, "score"), rowvar=False))
    return pd.Series(np.einsum("ij,jk,ik->i", contrasts, cov, contrasts), index=names)


def _style(old: Fit, new: Fit) -> pd.DataFrame | None:
    """The style coefficients of both boards (fits with contrasts)."""
    if STYLE not in old.tree["estimate"] or STYLE not in new.tree["estimate"]:
        return None
    a, b = old.tree["estimate"][STYLE].values.ravel(), new.tree["estimate"][STYLE].values.ravel()
    names = list(new.model_data.contrast_names)
    if a.size != b.size or a.size != len(names):
        return None
    return pd.DataFrame({"contrast": names, "estimate_old": a, "estimate_new": b, "change": b - a})


def _not_attributable(old: Fit, new: Fit) -> str:
    """Why the two fits cannot be attributed (empty when they can)."""
    if old.method != "map" or new.method != "map":
        return "it follows the maximum-likelihood path, so it needs two MAP fits"
    if old.framework.spec_json() != new.framework.spec_json():
        return f"the boards are fits of different models ({old.framework.label}, {new.framework.label})"
    if int(old.tree["estimate"].attrs.get("reweighted", 0)) or int(new.tree["estimate"].attrs.get("reweighted", 0)):
        return "reweighted pairs weigh every cell by its pair's total, so no battle's effect is its own"
    if old.framework.n_gauge(old.model_data):
        return "the model has a continuous symmetry (HJA's factors)"
    missing = set(old.items) - set(new.items)
    if missing:
        return f"models of the old board are missing from the new one ({', '.join(sorted(missing)[:3])})"
    return ""


def attribute(old: Fit, new: Fit, shared: list[str]) -> tuple[pd.DataFrame, int, float]:
    """The parts of every model's centred score change (the module docstring).

    Returns
    -------
    parts : DataFrame
        Indexed by name (the new board's models), one column per part; NaN for new models.
    nodes : int
        Quadrature nodes used.
    residual : float
        Largest |sum of parts − change| over the shared models.
    """
    framework = old.framework
    aligned = align(old.data, new.data)
    cells, n0, n1 = aligned.cells, aligned.old, aligned.new
    Y = framework.outcome_map()
    delta = (n1 - n0)[:, :3]
    keep = ((n0[:, :3] + n1[:, :3]) @ Y).sum(axis=1) > 0   # the cells some likelihood on the path sees
    names = list(cells.items)
    is_new = ~aligned.old_items
    common = np.array([n in set(shared) for n in names])

    def raw(t: float):
        counts = n0 + t * (n1 - n0)
        return replace(cells, wins_a=counts[:, 0], wins_b=counts[:, 1], ties=counts[:, 2],
                       ties_bothbad=counts[:, 3]).subset(keep)

    structure = structure_of(framework, framework.prepare(raw(0.5)))
    nat = structure.natural
    if "score" not in nat.names:
        return pd.DataFrame(index=pd.Index([], name="name")), 0, 0.0
    # scores centred on the shared models, as rows of θ-directions: G = P J
    J = nat.push_forward(np.eye(structure.n_free))[nat.offsets["score"]:nat.offsets["score"] + len(names)]
    centre = np.zeros(len(names))
    centre[common] = 1.0 / common.sum()
    G = J - centre[None, :] @ J
    style = np.zeros(structure.n_free, dtype=bool)
    if STYLE in structure.slices:
        style[structure.slices[STYLE][0]] = True
    exact = _centred(new.scores().reindex(names).to_numpy(float), centre) - \
        _centred(old.scores().reindex(names).to_numpy(float), centre)
    d = delta[keep]
    a, b = cells.a[keep], cells.b[keep]
    changed = np.flatnonzero(np.any(d != 0, axis=1))
    with one_thread():  # as every fit (inference/backend.py)
        # the path starts at the old cells' MLE in the new board's model (t = 0)
        bound = structure.bind(framework.prepare(raw(0.0)))
        start = maximise(bound, starting_theta(bound, carried(old.tree["estimate"].to_dataset(), cells))).theta
    new_judges = bool(set(cells.judges or ()) - set(old.data.judges or ()))
    arrivals = bool(is_new.any()) or new_judges
    nodes, previous = NODES, None
    while True:
        with one_thread():
            parts = _integrate(structure, framework, raw, nodes, start, G, style, d, a, b, changed, is_new, Y)
        total = parts.sum(axis=1)
        if not arrivals:
            residual = float(np.nanmax(np.abs(total - exact)[common])) if common.any() else 0.0
        else:  # what the path leaves unexplained is the arrivals' share: converge the path itself
            residual = np.inf if previous is None else float(np.max(np.abs(total - previous)[common]))
        if residual <= ADD_UP or nodes >= MAX_NODES:
            break
        previous, nodes = total, nodes * 2
    columns = ["own_battles", "rivals_battles", "new_models", "style"]
    if arrivals:
        columns.insert(3, "new_judges")
        arriving = exact - total
        parts = np.column_stack([parts[:, :3], np.zeros(len(names)), parts[:, 3]])
        parts[:, 2 if is_new.any() else 3] += arriving
    if not style.any():
        columns.remove("style")
        parts = parts[:, :-1]
    if arrivals and not new_judges:
        parts = np.delete(parts, columns.index("new_judges"), axis=1)
        columns.remove("new_judges")
    table = pd.DataFrame(parts, index=pd.Index(names, name="name"), columns=columns)
    table.loc[is_new] = np.nan
    return table, nodes, residual


def _centred(score: np.ndarray, centre: np.ndarray) -> np.ndarray:
    return score - np.nansum(centre * np.nan_to_num(score))


def _integrate(structure, framework, raw, nodes: int, start, G, style, d, a, b, changed, is_new, Y) -> np.ndarray:
    """∫₀¹ of every part of every model's centred score derivative, by Gauss–Legendre with
    ``nodes`` nodes: ``(models, 4)`` (own, rivals, new models, style)."""
    x, w = np.polynomial.legendre.leggauss(nodes)
    t_nodes, weights = (x + 1) / 2, w / 2
    m = G.shape[0]
    rest = ~style
    out = np.zeros((m, 4))
    theta = None
    touches_new = is_new[a] | is_new[b]
    for t, weight in zip(t_nodes, weights):
        prepared = framework.prepare(raw(t))
        bound = structure.bind(prepared)
        theta = maximise(bound, start if theta is None else theta).theta
        H = information(bound, theta, "observed")
        factor = cho_factor(H[np.ix_(rest, rest)])
        directions = np.zeros((structure.n_free, m))
        directions[rest] = cho_solve(factor, G[:, rest].T)       # H_RR⁻¹ G_Rᵀ: β held fixed
        own, rivals, entering = np.zeros(m), np.zeros(m), np.zeros(m)
        for first in range(0, changed.size, CELL_CHUNK):
            rows = changed[first:first + CELL_CHUNK]
            sub = structure.bind(prepared.subset(rows))
            units = Units(counts=d[rows], pseudo=np.broadcast_to(Y, (rows.size, 3, 3)))
            effect = np.einsum("ck,ckr->cr", d[rows], unit_effects(sub, theta, units, directions))
            ca, cb, new_cell = a[rows], b[rows], touches_new[rows]
            entering += effect[new_cell].sum(axis=0)
            old_cell = ~new_cell
            every = effect[old_cell].sum(axis=0)
            mine = np.zeros(m)
            np.add.at(mine, ca[old_cell], effect[old_cell, ca[old_cell]])
            np.add.at(mine, cb[old_cell], effect[old_cell, cb[old_cell]])
            own += mine
            rivals += every - mine
        shift = np.zeros(m)
        if style.any():
            moved = replace(prepared, **_counts(d @ Y))
            slope = np.linalg.solve(H, gradient(structure.bind(moved), theta))   # dθ/dt
            coupling = H[np.ix_(rest, style)] @ slope[style]
            shift = -G[:, rest] @ cho_solve(factor, coupling)
        out += weight * np.column_stack([own, rivals, entering, shift])
    return out


def _counts(counts: np.ndarray) -> dict:
    """Likelihood counts ``(n, 3)`` as the count fields of comparisons."""
    return {"wins_a": counts[:, 0], "wins_b": counts[:, 1], "ties": counts[:, 2],
            "ties_bothbad": np.zeros(len(counts))}


__all__ = ["ADD_UP", "BoardDiff", "MAX_NODES", "NODES", "PARTS", "attribute", "diff"]
