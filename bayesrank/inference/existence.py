"""Does the maximum-likelihood estimate exist? Checks that run with every MAP fit.

* For every framework, on the cells the likelihood sees: a connected comparison graph and
  Ford's condition (:func:`bayesrank.data.checks.mle_existence`).
* The *extended Ford condition* (:func:`recession`): is there a direction of the parameters
  along which the likelihood never decreases? Per cell and observed outcome, the link says
  which directions of its predictors (d, h) keep that outcome's log-probability from
  decreasing (:data:`bayesrank.model.links.RECESSION`); the predictors' Jacobians (the
  framework's own per-cell kernels) turn that into linear inequalities on the parameters, and
  one linear programme finds such a direction or proves there is none. It covers what Ford's
  graph cannot: tie models (an item that only ties or never wins, every comparison a tie and
  the tie parameter's MLE at +∞, a judge that never ties), a judge that always picks the
  same position under a position-bias model, and any framework declared later. Parameters
  that enter a predictor non-linearly (a judge's discrimination e^α, the Thurstonian
  variances) are held at the optimiser's point: a direction found is a true direction of
  non-existence; the judges' discriminations are checked next.
* For frameworks that declare a :meth:`~bayesrank.model.framework.Framework.signed_counterpart`
  (the judge-aware models): that counterpart is fitted by the same optimiser from the
  positive fit, and its signed judge sensitivities decide
  (:func:`bayesrank.model.judge_aware.judge_existence`).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix, vstack

from bayesrank.data.checks import mle_existence
from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.inference.information import SINGULAR, CellDerivatives, cell_matrix, extreme_eigenvalues, separate_blocks
from bayesrank.inference.optimize import maximise
from bayesrank.inference.structure import Bound, structure_of
from bayesrank.model.judge_aware import judge_existence
from bayesrank.model.links import RECESSION

#: A direction counts when the observed outcomes' slopes add up to more than this (the
#: Jacobian entries of the linear predictors are O(1)).
TOLERANCE = 1e-7
#: Entries of a direction smaller than this are treated as zero when it is described.
DESCRIBE = 1e-6
#: The score variables (plain, or the Thurstonian raw means): with the Bradley–Terry link alone,
#: their recession directions are exactly Ford's condition, checked on the graph.
SCORES = {"score", "score_raw"}
#: Names listed per group in a description.
_LISTED = 5


def check_existence(framework, bound: Bound, theta: np.ndarray, values: dict, maxiter: int) -> dict:
    """Existence of the MLE of ``framework`` on the bound cells, given the optimiser's point.

    Parameters
    ----------
    framework : Framework
    bound : Bound
        The compiled model with the prepared cells.
    theta : ndarray
        The optimiser's point.
    values : dict
        Model variables at that point.
    maxiter : int
        Iteration cap for the signed counterpart's fit.

    Returns
    -------
    dict
        ``mle_exists`` (bool), ``warnings`` (list of str), ``existence_check`` (what decided: ``"graph"``,
        ``"locked cells"``, ``"certificate"`` or ``"linear programme"``, :func:`recession`), ``diverging``
        (only when a direction of unbounded likelihood was found: its entries by variable) and, for judge-aware
        models, ``degenerate_judges``, ``signed_sensitivity`` and ``recommendation``.
    """
    prepared = bound.data
    exists, warnings = mle_existence(prepared)
    out = {"mle_exists": exists, "warnings": warnings, "existence_check": "graph"}
    if not exists:
        return out
    how: dict = {}
    found = recession(bound, theta, how)
    out["existence_check"] = how.get("check", "graph")
    if found is not None:
        out.update(mle_exists=False, warnings=[_sentence(found, prepared)],
                   diverging={name: part["moves"] for name, part in found.items()})
        return out
    separated = separated_judges(bound, theta)
    if separated:
        out.update(mle_exists=False, degenerate_judges=list(separated), recommendation=(
            f"drop the judge{'s' if len(separated) > 1 else ''} {', '.join(repr(n) for n in separated)} "
            "(Comparisons.without_judges), or fit with priors on log γ (method='nuts')"),
            warnings=warnings + [_separated_sentence(separated)])
        return out
    signed = framework.signed_counterpart()
    if signed is None:
        return out
    sbound = structure_of(signed, prepared).bind(prepared)
    gamma = np.asarray(values["gamma"], dtype=float)
    start = {name: values[name] for name in sbound.structure.natural.names if name in values}
    start["gamma"] = gamma * gamma.size / gamma.sum()
    x0 = sbound.structure.natural.theta_for(start, sbound.x0)
    stheta = maximise(sbound, x0, maxiter=maxiter).theta
    signed_gamma = sbound.structure.values(stheta)["gamma"]
    verdict = judge_existence(prepared.judges, gamma, signed_gamma)
    verdict["warnings"] = warnings + verdict["warnings"]
    return {**out, **verdict}


def separated_judges(bound: Bound, theta: np.ndarray) -> dict[str, int]:
    """Judges whose discrimination's maximum-likelihood estimate is +∞: judge → its verdicts.

    With γ_k = e^{log γ_k} multiplying the score differences of judge k's cells, raising
    log γ_k moves each cell's predictor d along ∂d/∂log γ_k = γ_k(s_a − s_b) (whatever the
    position bias and style terms add, which stay fixed). When every verdict of the judge
    agrees with the sign of its cell's score difference (each observed outcome's recession
    half-planes, :data:`~bayesrank.model.links.RECESSION`, hold for that move) and at least one
    difference is not zero, the judge's likelihood rises towards 1 as γ_k → ∞ while the other
    judges' is unchanged: the supremum is not attained and the MLE does not exist (a judge
    with one verdict, or a few that all follow the consensus, is enough). The constraint
    Σ log γ = 0 is a choice of scale that turns this into the other γ's falling and the scores
    growing, the same direction. A sufficient condition, checked at the optimiser's point.
    Empty for frameworks without ``log_gamma``.
    """
    structure = bound.structure
    nmap = structure.natural
    if "log_gamma" not in nmap.names or "d" not in structure.predictors:
        return {}
    cd = CellDerivatives.at(bound, theta)
    start = nmap.offsets["log_gamma"]
    size = int(np.prod(nmap.shapes["log_gamma"])) if nmap.shapes["log_gamma"] else 1
    rows, jac = cd.rows["d"], cd.jac["d"]
    inside = (rows >= start) & (rows < start + size)
    n = rows.shape[0]
    judge = np.full(n, -1)
    hit = inside.any(axis=1)
    judge[hit] = rows[hit, np.argmax(inside[hit], axis=1)] - start
    move = np.where(inside, jac, 0.0).sum(axis=1)
    link = structure.framework.link
    counts = bound.counts
    agrees = np.ones(n, dtype=bool)
    for o, outcome in enumerate(OUTCOMES):
        seen = counts[:, o] > 0
        for c_d, _ in RECESSION[link][outcome]:
            agrees &= ~seen | (c_d * move >= 0)
        if not RECESSION[link][outcome]:  # an outcome that allows no move of d (a Bradley–Terry tie)
            agrees &= ~seen | (move == 0)
    judges = bound.data.judges or ()
    out = {}
    for k, name in enumerate(judges):
        mine = judge == k
        if mine.any() and agrees[mine].all() and np.any(np.abs(move[mine]) > 0):
            out[name] = int(round(float(counts[mine].sum())))
    return out


def _separated_sentence(separated: dict[str, int]) -> str:
    """:func:`separated_judges`' finding, in words."""
    listed = list(separated.items())[:_LISTED]
    detail = ", ".join(f"'{name}' ({n:,} verdict{'s' if n != 1 else ''})" for name, n in listed)
    more = f" (+{len(separated) - _LISTED} more)" if len(separated) > _LISTED else ""
    return (f"the judge-aware maximum-likelihood estimate does not exist: every verdict of {detail}{more} agrees "
            "with the order of the scores, so that judge's discrimination γ → ∞ (with Σ log γ = 0: the other "
            "γ's → 0 and the scores grow without bound); no estimates are reported. Drop the judge "
            "(Comparisons.without_judges), or use method='nuts' (priors on log γ).")


def _linear_variables(structure, cd: CellDerivatives) -> set[str]:
    """Natural variables every predictor is affine in, jointly, given the others: the inputs
    whose second derivatives with each other vanish in every cell (chosen in declaration order)."""
    keep = set(structure.natural.names)
    n = len(cd.cells["item_a"])
    for name in cd.names:
        pred, kernel = structure.predictors[name], structure.kernels[name]
        if pred.linear:
            continue
        H = kernel.second(cd.u[name], cd.cells, np.ones(n))
        edges = np.cumsum((0, *kernel.sizes))
        slots = {key: slice(edges[i], edges[i + 1]) for i, key in enumerate(kernel.keys)}
        chosen: list[str] = []
        for key in kernel.keys:
            sl = slots[key]
            if np.any(H[:, sl, sl] != 0) or any(np.any(H[:, sl, slots[k]] != 0) for k in chosen):
                keep.discard(pred.inputs[key].var)
            else:
                chosen.append(key)
    return keep


def recession(bound: Bound, theta: np.ndarray, how: dict | None = None) -> dict | None:
    """A direction of the parameters along which the likelihood never decreases, if any.

    Only natural variables that the predictors read affinely (given the others, held at
    ``theta``) move. For the Bradley–Terry link with scores alone this is Ford's condition,
    already checked on the graph, so nothing is solved. Otherwise two certificates are tried
    first — cells whose outcomes pin every free coordinate (:func:`locked_cells_identify`), then
    the stationarity of ``theta`` (:func:`stiemke_certificate`) — and the linear programme runs
    only when both fail; ``how["check"]`` says which decided (``"locked cells"``,
    ``"certificate"`` or ``"linear programme"``; unset when the graph did).

    Returns
    -------
    dict or None
        Variable → ``{"moves": {label: ±1 direction entry}, "dims": dims}`` for the variables
        that move; None when the likelihood has no such direction.
    """
    structure = bound.structure
    nmap = structure.natural
    link = structure.framework.link
    if link == "bt" and set(nmap.names) <= SCORES:
        return None
    cd = CellDerivatives.at(bound, theta)
    linear = _linear_variables(structure, cd)
    if link == "bt" and linear <= SCORES:  # positive multiples of score differences: Ford's condition
        return None
    columns = -np.ones(nmap.size, dtype=np.int64)
    start = 0
    for name in nmap.names:
        if name in linear:
            size = int(np.prod(nmap.shapes[name])) if nmap.shapes[name] else 1
            columns[nmap.offsets[name]:nmap.offsets[name] + size] = np.arange(start, start + size)
            start += size
    if start == 0:
        return None
    how = {} if how is None else how
    if locked_cells_identify(bound, theta, cd, linear):  # before the rows of the programme are built
        how["check"] = "locked cells"
        return None
    n = len(cd.cells["item_a"])
    slope = {}
    for name in ("d", "h"):
        if name not in cd.names:
            slope[name] = coo_matrix((n, start)).tocsr()
            continue
        cols = columns[cd.rows[name]]
        mask = cols >= 0
        cells = np.broadcast_to(np.arange(n)[:, None], cols.shape)
        slope[name] = coo_matrix((cd.jac[name][mask], (cells[mask], cols[mask])), shape=(n, start)).tocsr()
    counts = bound.counts
    _, outcome_grad = structure.kernels["link"].outcome_gradients(cd.values)
    grad = {name: outcome_grad[:, :, cd.names.index(name)] if name in cd.names else np.zeros((n, 3))
            for name in ("d", "h")}
    blocks, weights = [], []
    for o, outcome in enumerate(OUTCOMES):
        seen = np.flatnonzero(counts[:, o] > 0)
        if not seen.size:
            continue
        rays = np.asarray(RECESSION[link][outcome], dtype=float).reshape(-1, 2)
        # ∂ log P_o/∂(d, h) of each cell as a combination of the outcome's rays (least norm)
        g = np.column_stack([grad["d"][seen, o], grad["h"][seen, o]])
        share = g @ np.linalg.pinv(rays)
        for k, (c_d, c_h) in enumerate(rays):
            blocks.append(c_d * slope["d"][seen] + c_h * slope["h"][seen])
            weights.append(counts[seen, o] * share[:, k])
    if not blocks:
        return None
    A = vstack(blocks).tocsr()
    if stiemke_certificate(A, np.concatenate(weights)):
        how["check"] = "certificate"
        return None
    how["check"] = "linear programme"
    objective = -np.asarray(A.sum(axis=0)).ravel()
    res = linprog(objective, A_ub=-A, b_ub=np.zeros(A.shape[0]), bounds=(-1, 1), method="highs")
    if res.status != 0 or -res.fun <= TOLERANCE:
        return None
    w = res.x
    found = {}
    model = structure.model
    data = bound.data
    for name in nmap.names:
        if name not in linear:
            continue
        size = int(np.prod(nmap.shapes[name])) if nmap.shapes[name] else 1
        part = w[columns[nmap.offsets[name]:nmap.offsets[name] + size]].reshape(nmap.shapes[name] or ())
        dims = model.named_vars_to_dims.get(name) or ()
        if dims and dims[0] == "item" and part.ndim == 1:  # scores: only differences matter
            part = part - np.median(part)
        if np.all(np.abs(part) <= DESCRIBE):
            continue
        labels = {d: list(model.coords[d]) for d in dims if d in model.coords}
        labels.update({"item": data.items, "judge": data.judges})
        moves = {}
        if part.ndim == 0:
            moves[name] = float(part)
            found[name] = {"moves": moves, "dims": ()}
            continue
        for index in zip(*np.nonzero(np.abs(part) > DESCRIBE)):
            label = ", ".join(str(labels[d][i]) if d in labels and labels[d] is not None else str(i)
                              for d, i in zip(dims, index)) or name
            moves[label] = float(part[index])
        found[name] = {"moves": moves, "dims": tuple(dims)}
    return found or None


def locked(link: str, counts: np.ndarray, n_predictors: int) -> np.ndarray:
    """The cells whose observed outcomes admit no direction of their predictors along which
    the cell's likelihood does not fall: the half-planes of :data:`RECESSION` of the observed
    outcomes meet only at 0.

    A closed cone cut out by half-planes of ℝ², if not {0}, has a ray on the boundary line of
    one of them (ℝ: ±1), so the boundary rays are the only candidates.

    Returns
    -------
    ndarray of bool
        ``(n_cells,)``.
    """
    out = np.zeros(len(counts), dtype=bool)
    seen = counts > 0
    # each cell's pattern of observed outcomes as one number (np.unique over rows would sort records)
    code = seen @ (1 << np.arange(seen.shape[1]))
    for value in np.unique(code):
        pattern = (value >> np.arange(seen.shape[1])) & 1
        normals = np.array([c[:n_predictors] for o in np.flatnonzero(pattern) for c in RECESSION[link][OUTCOMES[o]]])
        if not normals.size:
            continue
        rays = [np.array([1.0]), np.array([-1.0])] if n_predictors == 1 else \
            [s * np.array([-c[1], c[0]]) for c in normals for s in (1.0, -1.0)]
        if not any(np.all(normals @ r >= -1e-12) for r in rays if np.any(r)):
            out[code == value] = True
    return out


def locked_cells_identify(bound: Bound, theta: np.ndarray, cd: CellDerivatives, linear: set[str]) -> bool:
    """Whether the locked cells alone (:func:`locked`) pin every free coordinate of the
    ``linear`` variables: then every direction of those moves some locked cell's predictors,
    where the likelihood falls without bound, so there is no direction of unbounded likelihood
    and the linear programme of :func:`recession` is not needed.

    The test: Σ_locked J_cᵀJ_c pulled back to θ (the free coordinates only the linear
    variables read; each cell's predictor rows, restricted to the linear variables, at unit
    length), scaled to a unit diagonal, is positive definite: its smallest eigenvalue
    above :data:`~bayesrank.inference.information.SINGULAR` of its largest (the criterion by which a
    fit's information counts as non-singular). The scaling decides the same rank and keeps
    the scores' curvature from swamping the tie coordinates'; the rows' scaling keeps the rank
    too, and the test from failing by rounding where a Thurstonian pair's dispersion runs to 0
    (its rows ∝ 1/√s_ab). Where it holds — nearly every compared pair of an arena has wins both
    ways and ties — it costs about one Hessian, where the linear programme can take minutes.
    False when the test does not apply or fails.
    """
    structure = bound.structure
    nmap = structure.natural
    P = len(cd.names)
    if P > 2 or set(cd.names) - {"d", "h"}:
        return False
    held = locked(structure.framework.link, bound.counts, P)
    if not held.any():
        return False
    index = np.arange(structure.n_free)
    free = np.unique(np.concatenate([index[cols] for name, (_, cols, _) in zip(nmap.names, nmap.blocks)
                                     if name in linear]))
    if any(np.intersect1d(free, index[cols]).size for name, (_, cols, _) in zip(nmap.names, nmap.blocks)
           if name not in linear):  # a coordinate that also moves a variable held fixed
        return False
    weights = np.zeros((held.size, P, P))
    weights[held] = np.eye(P)
    # each locked cell's rows at unit length: a positive row scaling keeps the rank, and the rows of a
    # Thurstonian pair whose dispersion runs to 0 grow without bound
    inside = np.zeros(nmap.size, dtype=bool)
    for name, (rows, _, _) in zip(nmap.names, nmap.blocks):
        inside[rows] = name in linear
    for q, name in enumerate(cd.names):
        length = np.sqrt(np.sum(np.where(inside[cd.rows[name]], cd.jac[name], 0.0) ** 2, axis=1))
        weights[:, q, q] /= np.where(length > 0, length, 1.0) ** 2
    # the dense tie blocks apart, the rest of the matrix without their predictors' terms: a
    # block-diagonal matrix's extreme eigenvalues are the extremes of its blocks'
    parts = []
    for k, r, A in separate_blocks(bound, cd):
        cols = index[nmap.blocks[k][1]]
        if np.intersect1d(free, cols).size != cols.size:
            return False
        parts.append(_extremes(A.T @ (held[:, None] * A)))
        weights[:, r, :] = weights[:, :, r] = 0.0
        free = np.setdiff1d(free, cols)
    if free.size:
        # only the linear variables move: their θ coordinates (``free``) move no other variable
        # (above), so the rows of the others drop out of this block of the matrix in θ
        parts.append(_extremes(cell_matrix(bound, cd, weights)[np.ix_(free, free)]))
    if any(part is None for part in parts):
        return False
    return bool(min(smallest for smallest, _ in parts) > SINGULAR * max(largest for _, largest in parts))


def _extremes(gram: np.ndarray) -> tuple[float, float] | None:
    """The smallest and largest eigenvalues of ``gram`` scaled to a unit diagonal, or None when a
    diagonal entry is not positive (a coordinate no locked cell moves) or it is not positive
    definite."""
    diagonal = np.diag(gram)
    if not np.all(diagonal > 0):  # also a NaN entry: checked before the square root
        return None
    scale = np.sqrt(diagonal)
    gram = gram / np.outer(scale, scale)
    smallest, largest, _ = extreme_eigenvalues(0.5 * (gram + gram.T), definite_only=True)
    return None if not np.isfinite(smallest) else (smallest, largest)


def stiemke_certificate(A, y: np.ndarray) -> bool:
    """Whether positive row weights prove that no w in [−1, 1]ᵏ has A w ≥ 0 with a total slope
    1ᵀ A w above :data:`TOLERANCE` — the linear programme of :func:`recession` then has nothing
    to find, and is not run.

    Stiemke's alternative: no w has A w ≥ 0, A w ≠ 0 exactly when some y > 0 has Aᵀ y = 0. At
    the maximum the gradient of the log-likelihood vanishes; written as Σ_rows y_r A_r with
    y_r = count × the share of the outcome's ray r in ∂ log P/∂(d, h), it is such a y, up to the
    optimiser's tolerance. The candidate ``y`` is projected onto the null space of Aᵀ and then
    checked with the numbers themselves: for any w in the box with A w ≥ 0,
    min(y) 1ᵀ A w ≤ yᵀ A w = (Aᵀ y)ᵀ w ≤ ‖Aᵀ y‖₁, so 1ᵀ A w ≤ ‖Aᵀ y‖₁ / min(y). On a fit
    drifting along a flat ray no positive y exists and the check fails (the programme runs).
    """
    if not np.all(np.isfinite(y)) or np.min(y, initial=np.inf) <= 0:
        return False
    gram = (A.T @ A).toarray()
    y = y - A @ (np.linalg.pinv(gram, hermitian=True) @ (A.T @ y))
    if np.min(y) <= 0:
        return False
    # ‖Aᵀ y‖₁ with a bound on its rounding error (a few units in the last place of |A|ᵀ|y|)
    residual = float(np.abs(A.T @ y).sum() + 8 * np.finfo(float).eps * (abs(A).T @ y).sum())
    return residual / float(np.min(y)) <= TOLERANCE


def _sentence(found: dict, data: Comparisons) -> str:
    """The direction found, in words."""
    parts = []
    for name, part in found.items():
        moves = part["moves"]
        up = [k for k, v in sorted(moves.items(), key=lambda kv: -kv[1]) if v > 0]
        down = [k for k, v in sorted(moves.items(), key=lambda kv: kv[1]) if v < 0]
        if part["dims"][:1] == ("item",) and name in ("score", "score_raw"):
            parts.append(f"the scores of {_names(up)} grow without bound against {_names(down) or 'the rest'}")
            continue
        what = {"eta_raw": "the tie threshold", "tie_factor": "the tie factor of", "eta": "the tie parameter of judge",
                "delta": "the position bias of judge"}.get(name, f"'{name}' of")
        for group, sign in ((up, "+∞"), (down, "−∞")):
            if group:
                target = "" if part["dims"] == () else " " + _names(group)
                parts.append(f"{what}{target} → {sign}")
    if float(data.wins_a.sum() + data.wins_b.sum()) == 0:
        lead = ("every comparison is a tie, so the tie parameter's maximum-likelihood estimate is +∞ and the "
                "scores are not identified")
    else:
        lead = "the likelihood keeps increasing along a direction in which " + "; ".join(parts)
    return (f"the maximum-likelihood estimate does not exist: {lead} (extended Ford condition); no estimates "
            "are reported. Use method='nuts' (proper priors), a model without the diverging parameter, or add "
            "comparisons that break the pattern.")


def _names(group: list[str]) -> str:
    shown = ", ".join(f"'{g}'" for g in group[:_LISTED])
    return shown + (f" (+{len(group) - _LISTED} more)" if len(group) > _LISTED else "")


__all__ = [
    "DESCRIBE", "SCORES", "TOLERANCE", "check_existence", "locked", "locked_cells_identify", "recession",
    "separated_judges", "stiemke_certificate"
]
