"""The one optimiser of the package: maximise a log-likelihood with its gradient and exact Hessian.

0. A log-likelihood known to be concave (``concave=True``: Bradley–Terry, Davidson) goes to
   Newton's method (2.) from the start: a few exact steps, where phase 1 spends a dozen
   gradient evaluations before Newton's method finishes anyway; the phases below follow only
   if it does not converge.
1. L-BFGS-B in coordinates scaled by √diag(information / n) at the start (items with 1k and
   130k comparisons differ 10× in curvature; the scaling cuts the iterations by an order of
   magnitude on the arena data), until the largest gradient entry is below
   :data:`NEWTON_START` per comparison or :data:`FIRST_PHASE` iterations.
2. Newton's method with the exact Hessian and a backtracking line search while the Hessian
   is negative definite, to :data:`FINAL_TOL` — quadratic convergence (steps solved by
   Cholesky, or by conjugate gradients beyond :data:`ITERATIVE_FROM` coordinates unless the
   log-likelihood is non-concave with at most :data:`DENSE_PRECONDITIONER_MAX` of them; from
   :data:`CHORD_FROM` coordinates on, after a Cholesky step, chord steps with the same factor
   while they gain, :data:`CHORD_STEPS`; on a concave log-likelihood corrected by BFGS updates,
   :data:`QUASI_NEWTON_MEMORY`). When no step length of Newton's own step gains,
   Levenberg–Marquardt steps (:data:`DAMPING`) are tried before giving up: they shorten the
   near-flat components that overshoot.
   For a model with a continuous symmetry its constraints do not remove (HJA's GL(r + 1)
   acting on its judge and item factors: ``gauge``), the log-likelihood is constant along the
   symmetry's orbits and its Hessian singular there; Newton's method then steps in the
   complement of the orbit's tangent space (:func:`gauge_complement`), a local chart of the
   quotient where the identified coordinates live.
3. Where the Hessian is indefinite after the first phase — the flat, non-convex likelihoods
   of the rank-3 Thurstonian covariance models — phases of :data:`WHITENED_PHASE` L-BFGS-B
   iterations in coordinates whitened by the exact Hessian at the phase's start
   (|eigenvalues| floored at 1e-5 of the largest; up to :data:`DENSE_PRECONDITIONER_MAX`
   coordinates, not counting those whitened by construction, ``apart``, which are scaled by their
   diagonal), each followed by up to :data:`NEWTON_TRIAL` Newton iterations (fewer where a whole
   step does not contract the gradient, :data:`TRIAL_CONTRACTION`), until Newton's method converges.
   Beyond that size (no model of the leaderbot paper's Table D.1),
   Levenberg–Marquardt steps shifted just enough to give an ascent direction (:data:`SHIFTS`)
   lead to where the information is positive definite, and Newton's method goes on from there.
4. Where Newton still stalls, L-BFGS-B resumes to its tight tolerance whitened (once more) and
   then with the diagonal scaling, each followed by one more Newton attempt. A whitened phase that
   takes no step (its first line search fails: the gain left is below the log-likelihood's
   resolution, as after paper model 18's saddle escapes) goes to the diagonal scaling at once.
5. Where a run stops at an edge of its chart (``edge``: a Thurstonian loading L_jj = e^θ run to
   0), the phases run again from an equivalent point across it where the likelihood is higher
   (:func:`maximise`); where it stops on a plateau (``plateau``: a Thurstonian item's dispersion
   run out, the likelihood flat in it), from the best gaining point off it. A run checks both
   already after its first phase, and leaves where either gains: Newton's and the whitened phases
   would polish a point the next run leaves anyway (paper model 18 on arena-2024: a plateau escape
   and an edge crossing after the first phases, 18.6 s instead of 32.3 s, the same maximum). A run
   that cannot finish by Newton's method checks them again before the L-BFGS-B restarts of 4.,
   which would crawl along a plateau (paper model 17: 5,401 diagonal iterations, 54 s, for 2.7e-6
   per comparison; leaving first, one plateau escape and one edge crossing reached 1.0048137 in
   40 s where the fit had stopped at 1.0048199 after 84 s).
6. Where a run of a non-concave log-likelihood stops short of Newton's tolerance at a point whose
   information has a negative eigenvalue (a saddle point: the gradient vanishes, so L-BFGS-B
   stops, and Newton's method cannot step), the phases run again from the best gaining point
   along that eigenvector (:func:`maximise`, :data:`SADDLE_ESCAPES`).
7. Where a run ends with two Thurstonian items on one point of the latent space (``part``: s_ab → 0,
   where every small move loses), one more run starts from the two parted and replaces the
   estimate only where it ends higher (:data:`PARTINGS`), and where they still coincide, one from a
   moved start of the run (:data:`MOVED_RUNS`): that point can be a trap the path fell into (paper
   model 6 from a start moved by 1e-9: 0.6341583 there, 0.6341570 from the parted pair; paper model
   17: 1.0048136 there after the parting, 1.0048109 from the moved start) or the supremum on the
   boundary.
8. A log-likelihood that is not concave may have several maxima, and which one a run reaches depends
   on its start — even on the rounding of it. On request (``restarts``), runs from starts moved at
   random (:func:`moved_starts`) follow the run from the model's own start (:func:`runs_from_starts`);
   the caller keeps the best end point.

The estimate returned is the ``canonical`` representative of its point (the signs of the
Thurstonian t).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.linalg import cho_factor, eigh, lapack
from scipy.optimize import minimize
from scipy.sparse.linalg import ArpackError, LinearOperator, cg, eigsh

#: L-BFGS-B hands over to Newton's method below this largest gradient entry per comparison.
NEWTON_START = 1e-6
#: Newton's method stops below this largest gradient entry per comparison.
FINAL_TOL = 1e-12
#: Iterations of the first L-BFGS-B phase before Newton's method is tried anyway: on the
#: ill-conditioned many-parameter models (the k_tie = 20 tie factors) L-BFGS-B crawls for
#: thousands of iterations where a few exact Newton steps finish; where Newton cannot take
#: over, the restarts below continue.
FIRST_PHASE = 1000
#: From this many free coordinates on, Newton's steps are solved by conjugate gradients (the
#: information of many items is well conditioned once scaled to a unit diagonal: tens of O(n²)
#: products instead of an O(n³) Cholesky per step).
ITERATIVE_FROM = 1000
#: Relative residual of those solves (Newton's quadratic convergence needs no more).
ITERATIVE_RTOL = 1e-10
#: Conjugate-gradient iterations before Cholesky takes over (an ill-conditioned information,
#: such as the k_tie = 20 tie factors', then pays at most this many O(n²) products extra;
#: 2,000 synthetic items need 17).
ITERATIVE_MAX = 100
#: Conjugate-gradient solves are used for the next Newton step only while they take at most this
#: many iterations: on the k_tie = 20 tie factors (arena-2024, Davidson) a Hessian-vector product
#: costs 9 ms and the operator 0.28 s to set up, the dense information with its Cholesky factor
#: 0.8 s, and the solves took 20, 24, 38, 61, 87, 98 and then over 100 iterations step by step.
ITERATIVE_KEEP = 50
#: Step lengths of Newton's line search, longest first.
BACKTRACKING = (1.0, 0.5, 0.25, 0.125, 0.0625)
#: Levenberg–Marquardt damping (relative to the unit diagonal of the scaled information) tried
#: in turn when Newton's own step finds no gain: on likelihoods with exponential tails (tie
#: thresholds of pairs without ties heading to −∞ in the k_tie = 20 models) the near-flat
#: directions make the full step overshoot by orders of magnitude into overflow; damping
#: shortens exactly those components, where backtracking shrinks all of them.
DAMPING = (0.0, 1e-8, 1e-6, 1e-4, 1e-2)
#: Chord steps (:func:`_chord_step`) tried after each accepted dense Newton step, with its
#: factored information, before the information is built again: on the k_tie = 20 tie factors
#: (2,458 free coordinates on arena-2024) an information and its Cholesky factor cost 0.6-0.8 s,
#: a chord step one gradient and two triangular solves (20-50 ms); near the maximum each
#: contracts the largest gradient entry by 0.6-0.8 (paper model 10: 2 informations instead of 7).
CHORD_STEPS = 30
#: Chord steps only from this many free coordinates: below, the information and its factor cost
#: about as much as the gradient a chord step needs, and a chord step contracts the gradient
#: linearly where Newton's step squares it (Bradley–Terry on arena-2024, 128 coordinates: a warm
#: fit 13.1 → 15.9 ms with them, the points-only fit 7.9 → 10.3 ms).
CHORD_FROM = 1000
#: Below :data:`CHORD_FROM`, one chord step finishes a run when Newton's last step predicts it
#: reaches the tolerance: after a step that took the largest gradient entry from g₋ to g, the
#: information's relative change along the next step is about g / g₋, so a chord step from g
#: lands near this factor × g² / g₋ (Bradley–Terry on arena-2024: Newton's third information and
#: factor skipped, 3.3e-5 → 1.6e-7 → 1.7e-11 → a chord step to ~1e-15 per comparison).
CHORD_FINISH = 2.0
#: The chord steps stop (the information is built again) after one that shrinks the largest
#: gradient entry by less than this factor (model 10 stalled at 0.999 a step, 8.4e-9 per comparison).
CHORD_CONTRACTION = 0.9
#: On a concave log-likelihood the chord steps are corrected by BFGS updates from the steps taken
#: since the information was factored (:func:`_two_loop`), keeping this many of them: paper model
#: 22 (Davidson k_tie = 20, arena-2024) then built 2 informations instead of 6 (51-54 chord steps
#: instead of 38), a warm fit 6.3-6.7 → 4.0-4.3 s CPU. Its plain chord steps contracted the
#: largest gradient entry by only 0.85-0.9 a step: the curvature changes along the path (its
#: flattest directions, eigenvalues 9e-10 and 2e-7 per comparison, are far from quadratic). On a
#: non-concave one (model 10, Rao-Kupper) the corrected steps walked out of the region where the
#: information is positive definite (4 → 5 informations): plain chord steps there.
QUASI_NEWTON_MEMORY = 10
#: Corrected chord steps stop (the information is built again) after this many in a row that do
#: not shrink the largest gradient entry below :data:`CHORD_CONTRACTION` × the smallest so far
#: (a BFGS path is not monotone in it); plain chord steps after one.
CHORD_PATIENCE = 10
#: Up to this many free coordinates, L-BFGS-B resumes with a dense preconditioner from the
#: exact Hessian where Newton's method cannot take over (an eigendecomposition per phase): the
#: rank-3 Thurstonian models with k_tie = 10 (1,882 coordinates) need it — paper model 29 on
#: arena-2024 converged with it (1014 L-BFGS-B + 8 Newton iterations, one edge crossing) where
#: the diagonal scaling alone stopped unconverged after 6394 + 11. The Rao–Kupper k_tie = 20 models
#: with a Thurstonian covariance (2,586 and 2,967 coordinates, their tie coordinates then whitened with
#: the rest; scaled apart since, as Davidson's: :meth:`Framework.whitened_by_construction`) gained
#: from it too: a single-precision whitening costs them 1.2-2 s, the shifted steps beyond this size
#: (:data:`SHIFTS`) an information each — second fits (cheap tier, two at a time) 14: 11.2 s against
#: 19.5 s, 18: 53.8 against 86.9 s CPU, the same NLLs (the Davidson model 30 then took 46.6 s against
#: 114.1 s; with its tie coordinates apart, 22.4 s).
DENSE_PRECONDITIONER_MAX = 3000
#: From this many free coordinates on, the whitening's eigendecomposition is in single precision
#: (:func:`_whitening`): paper model 29 (1,882 coordinates) 0.53-0.56 s against 1.2-1.3 s in double,
#: where a whitened L-BFGS-B iteration costs 5 ms on the compiled tier; below, double precision
#: costs little and the paths stay as they were (an unconverged fit's stopping point depends on them).
SINGLE_PRECISION_FROM = ITERATIVE_FROM
#: Iterations of each L-BFGS-B phase whitened by the exact Hessian at its start, where the
#: Hessian is indefinite after the first phase: the preconditioner follows the curvature of the
#: non-concave Thurstonian likelihoods (paper model 6: 979 iterations in all instead of 3,609).
WHITENED_PHASE = 300
#: Runs continued from across an edge of the chart (:func:`maximise`'s ``edge``): each gains, so
#: this only bounds the work (one run per loading column of a rank-3 Thurstonian model).
EDGE_CROSSINGS = 3
#: Runs continued from off a plateau (:func:`maximise`'s ``plateau``: a Thurstonian item's dispersion
#: run out, where the gradient vanishes): each gains. Paper model 17 on arena-2024 stopped at NLL
#: 1.0048439 with two items' dispersions run out; a run from both shrunk back by e^-4 reached 1.0048137.
PLATEAU_ESCAPES = 3
#: Runs from a point where coinciding items are parted (:func:`maximise`'s ``part``): unlike the moves above
#: the run starts lower and is kept only where it ends higher, so this bounds work that may be wasted (paper
#: model 17 on arena-2024, trapped where solar / dolphin coincide: 5 s for a run that ends 8e-9 per comparison
#: higher with them coinciding again; the moved start of :data:`MOVED_RUNS` then leaves the trap).
PARTINGS = 1
#: Runs from a moved start of the run (:func:`moved_starts`, seeded 0, 1, …) where items still coincide after
#: the partings: kept only where they end higher, as those. A point where items coincide can be a trap the
#: path from its start falls into, and a nearby start may not pass by it (paper model 17 on arena-2024, from
#: its own start and the parted pair, ended at NLL 1.0048136 with solar / dolphin coinciding; every one of
#: four moved starts converged at an interior maximum, 1.0048108-1.0048109).
MOVED_RUNS = 1
#: Runs continued from a saddle point along its direction of negative curvature (:func:`maximise`):
#: each gains. Paper model 16 on arena-2024 on the compiled tier stopped at a gradient of 8e-10
#: per comparison with the smallest eigenvalue −8.2e-10 per comparison; two escapes, then
#: converged at a strict maximum.
SADDLE_ESCAPES = 3
#: The information counts as singular when its smallest eigenvalue is below this fraction of its
#: largest: beyond a condition number of 1e12 a Wald interval keeps no digits and the smallest
#: eigenvalue's sign is rounding (so a saddle point needs one below −SINGULAR × the largest; the MAP
#: fit's identification uses the same line).
SINGULAR = 1e-12
#: Step lengths along that eigenvector (unit length in θ), both signs tried: the best that gains
#: starts the next run. (Model 16's escapes gained most at 1.0.)
ESCAPE_STEPS = (1e-3, 1e-2, 0.03, 0.1, 0.3, 1.0, 3.0)
#: Levenberg–Marquardt shifts of the unit-diagonal information tried, smallest first, where it is
#: not positive definite beyond :data:`DENSE_PRECONDITIONER_MAX` coordinates (no whitened phase
#: there; :func:`_shifted_newton`): each shift that factors gives an ascent direction, and the
#: search starts again one shift below the last that gained. Measured where these models took this path
#: (the whitened phases then stopped at 2,000 coordinates): paper model 14 (Rao–Kupper k_tie = 20,
#: k_cov = 0, 2,586 coordinates) left its first phase with two negative eigenvalues (−6.0e-5 and
#: −1.9e-5 of the unit-diagonal information); 12 shifted steps (with steps on their factors between,
#: :data:`SHIFTED_CHORD_GAIN`) and one Newton step then reached the NLL that 3,278 diagonal L-BFGS-B
#: iterations had reached, to all 16 digits: its second fit 19.9 s CPU instead of 53.0 s. Model 30
#: (Davidson k_tie = 20, k_cov = 3; smallest eigenvalue −1.2, nine negative) reaches the concave
#: region after 31 of them but still needs L-BFGS-B after :data:`NEWTON_TRIAL` Newton steps (first fit
#: 130.7 s CPU, 146.7 s without them); model 18 now converges (100.4 s; it stopped unconverged).
SHIFTS = (0.0, *(10.0**k for k in range(-6, 7)))
#: Shifted steps at most before the diagonal L-BFGS-B restart takes over.
SHIFTED_STEPS = 80
#: After a shifted step, steps with its factor (one gradient each, as :func:`_chord_step`) follow
#: while each gains at least this fraction of the one before it.
SHIFTED_CHORD_GAIN = 0.5
#: Newton iterations tried after each whitened phase (a Hessian each): Newton's method from a
#: point where the Hessian is positive definite but far from the maximum crawls (paper model 6:
#: 20 iterations without converging), the next whitened phase moves further for less.
NEWTON_TRIAL = 5
#: A Newton trial (:data:`NEWTON_TRIAL`) ends after a whole Newton step (unit length accepted: its
#: quadratic model was trusted) that leaves the largest gradient entry above this fraction of its value
#: before the step: Newton's method is not in its quadratic region yet, and the next whitened phase
#: moves further for less. Paper model 29 on arena-2024 (compiled tier) took its trial's gradient from
#: 3.5e-8 to 5.3e-8 per comparison on the third step (gains 2.7e-9, 2.2e-9, 8.5e-10 per comparison, an
#: information of 0.29 s each), where a whitened phase from there converges in 38 iterations: two
#: informations fewer than five steps. A shortened step does not count: model 30's trial started with
#: 1/8 of Newton's step, which raised the gradient sevenfold, and the next step gained 35 times as much
#: (ending the trial there took model 30 1,912 L-BFGS-B iterations instead of 1,117).
TRIAL_CONTRACTION = 0.5
#: The starts of a multi-start fit (:func:`moved_starts`) multiply each coordinate of the model's start by
#: 1 + RESTART_SCALE ε, ε standard normal: far enough for another path (starts moved by 1e-9 of themselves
#: already reach other maxima of the rank-3 Thurstonian models), near enough to stay in the start's region.
RESTART_SCALE = 0.1
#: Seed of the fixed start vector of every Lanczos iteration (:func:`lanczos_largest`).
LANCZOS_SEED = 0


def diagonal_scaling(information_diag: np.ndarray, n: float) -> np.ndarray:
    """√diag(information / n) as a preconditioner; any positive scaling is valid, this one
    equalises the curvature.

    Coordinates without curvature at the start are left unscaled: the judge-aware log γ has
    zero information while all scores are 0, and a scale near 0 there made L-BFGS overshoot
    into the γ_k → 0 boundary. A start with clearly negative curvature somewhere is not in a
    locally concave region (the Thurstonian covariance coordinates): no scaling at all there
    (scaling the remaining coordinates made the k_cov=3 models on the arena stop short of the
    tolerance).
    """
    info = np.asarray(information_diag, dtype=float) / n
    if not np.all(np.isfinite(info)) or np.any(info < -1e-8):
        return np.ones_like(info)
    return np.sqrt(np.where(info > 1e-8, info, 1.0))


def maximise(
    logp_dlogp: Callable[[np.ndarray], tuple[float, np.ndarray]],
    hessian: Callable[[np.ndarray], np.ndarray],
    x0: np.ndarray,
    n: float,
    maxiter: int = 20000,
    edge: Callable[[np.ndarray], list[np.ndarray]] | None = None,
    plateau: Callable[[np.ndarray], list[np.ndarray]] | None = None,
    part: Callable[[np.ndarray], list[np.ndarray]] | None = None,
    **options,
) -> tuple[np.ndarray, dict]:
    """Maximise a log-likelihood (see the module docstring), crossing the edges of its chart and
    leaving saddle points along their negative curvature (5. and 6.).

    Parameters
    ----------
    logp_dlogp, hessian, x0, n, maxiter
        As :func:`maximise_in_chart`.
    edge : callable, optional
        θ ↦ points equivalent to θ across an edge of the chart where the optimiser may stop
        falsely (:meth:`bayesrank.model.framework.Framework.across_edge`: a Thurstonian loading
        L_jj = e^θ run to 0, where the gradient in θ vanishes whatever the likelihood's slope in
        L_jj). After each run the best of them that gains over the point reached (at most
        :data:`EDGE_CROSSINGS` times) starts another run, so the maximum returned is never
        lower than the one where the run stopped. Saddle points (:func:`_saddle_escapes`) are
        left the same way, at most :data:`SADDLE_ESCAPES` times.
    plateau : callable, optional
        θ ↦ points off a plateau where the run may have stopped falsely
        (:meth:`bayesrank.model.framework.Framework.off_plateau`: a Thurstonian item's dispersion run
        out); the best that gains starts another run, at most :data:`PLATEAU_ESCAPES` times — checked
        also before a run's L-BFGS-B restarts (:func:`maximise_in_chart`'s ``leave``).
    part : callable, optional
        θ ↦ points where items that coincide at θ are parted
        (:meth:`bayesrank.model.framework.Framework.parted`). They may lose, and the point reached may be a
        trap rather than the supremum: when nothing else moves, a run from the first of them (at most
        :data:`PARTINGS` times) replaces θ only where it ends higher, and where items still coincide then,
        so does a run from a moved start of ``x0`` (:func:`moved_starts`, at most :data:`MOVED_RUNS` times).
    **options
        The other arguments of :func:`maximise_in_chart`.

    Returns
    -------
    theta : ndarray
    info : dict
        As :func:`maximise_in_chart`, summed over the runs, and ``edge_crossings``,
        ``plateau_escapes``, ``saddle_escapes``, ``partings`` (runs from parted items, kept or not) and
        ``moved_runs`` (likewise) when there were any (so fits that need none report what they did before).
    """
    crossings = escapes = plateaus = partings = moved = 0
    settled = False  # nothing but a trial run moves from θ (the trials so far ended lower)
    asked = []  # the last answer of gaining_move: [(θ it was asked at, its answer)]

    def gaining_move(theta):
        """``(kind, start)`` of the first of the edge crossing and the plateau escape (with escapes
        left) whose best candidate gains over θ, or None. Remembered for this θ: a run that leaves
        (``leave``) returns the θ the loop below then asks about, and the candidates' log-likelihoods
        are not evaluated twice."""
        if asked and np.array_equal(asked[0][0], theta):
            return asked[0][1]
        lp, answer = None, None
        for kind, moves, allowed in (("edge", edge, crossings < EDGE_CROSSINGS),
                                     ("plateau", plateau, plateaus < PLATEAU_ESCAPES)):
            if moves is not None and allowed and (candidates := moves(theta)):
                lp = logp_dlogp(theta)[0] if lp is None else lp  # (away from an edge it is not needed)
                if (start := _best_gain(logp_dlogp, candidates, lp)) is not None:
                    answer = (kind, start)
                    break
        asked[:] = [(theta.copy(), answer)]
        return answer

    def leave(theta):
        """A gaining point across an edge or off the plateau exists (the loop below starts the next
        run there)."""
        return gaining_move(theta) is not None

    if edge is not None or plateau is not None:
        options["leave"] = leave
    theta, info = maximise_in_chart(logp_dlogp, hessian, x0, n, maxiter, **options)
    # a concave log-likelihood has no saddle points; a symmetry's orbits are flat, not negative
    saddles = not options.get("concave") and options.get("gauge") is None
    while info["iterations"] < maxiter:
        start = None
        if not settled:
            move = gaining_move(theta)
            asked.clear()  # (the escapes left change below)
            kind, start = move if move is not None else (None, None)
            crossings += kind == "edge"
            plateaus += kind == "plateau"
            if start is None and saddles and escapes < SADDLE_ESCAPES:
                lp, grad = logp_dlogp(theta)
                candidates = _saddle_escapes(hessian, theta, grad, n)
                start = _best_gain(logp_dlogp, candidates, lp) if candidates else None
                escapes += start is not None
        # trials, where items coincide at θ: a run from them parted, then one from a moved start
        trial = start is None and part is not None and (partings < PARTINGS or moved < MOVED_RUNS) \
            and (parted := part(theta))
        if trial and partings < PARTINGS:
            start, partings = parted[0], partings + 1
        elif trial:
            start, moved = moved_starts(x0, 1, np.random.default_rng(moved))[0], moved + 1
        if start is None:
            break
        options.pop("start_hessian", None)  # (the approximate Hessian belongs to the first start)
        reached, more = maximise_in_chart(logp_dlogp, hessian, start, n, maxiter - info["iterations"], **options)
        info = {key: info[key] + more.get(key, 0) for key in info}
        if trial and not logp_dlogp(reached)[0] > logp_dlogp(theta)[0]:
            settled = True  # (the trial run ends lower: θ stays, and nothing else moved from it)
            continue
        theta, settled = reached, False
    return theta, {**info, **({"edge_crossings": crossings} if crossings else {}),
                   **({"plateau_escapes": plateaus} if plateaus else {}),
                   **({"saddle_escapes": escapes} if escapes else {}),
                   **({"partings": partings} if partings else {}), **({"moved_runs": moved} if moved else {})}


def moved_starts(x0: np.ndarray, count: int, rng: np.random.Generator,
                 scale: float = RESTART_SCALE) -> list[np.ndarray]:
    """``count`` starts θ₀ ⊙ (1 + ``scale`` ε), ε standard normal (:data:`RESTART_SCALE`): each
    coordinate moved in proportion to itself, so a coordinate the model starts at 0 (a score, a
    threshold) stays there and the others keep their sign and order of magnitude."""
    return [x0 * (1.0 + scale * rng.standard_normal(x0.shape)) for _ in range(count)]


def runs_from_starts(run: Callable[[np.ndarray], tuple[np.ndarray, dict]],
                     logp_dlogp: Callable[[np.ndarray], tuple[float, np.ndarray]],
                     starts: list[np.ndarray]) -> list[tuple[np.ndarray, dict, float, float]]:
    """Run the optimiser from each start.

    Parameters
    ----------
    run : callable
        start ↦ ``(θ, info)``, as :func:`maximise`.
    logp_dlogp : callable
        θ ↦ (log-likelihood, gradient).
    starts : list of ndarray

    Returns
    -------
    list of tuple
        For each start in turn, ``(θ, info, ℓ, largest gradient entry)`` at the run's end (ℓ = −inf where it
        is not finite).
    """
    ends = []
    for start in starts:
        theta, info = run(start)
        value, grad = logp_dlogp(theta)
        ends.append((theta, info, float(value) if np.isfinite(value) else -np.inf, float(np.max(np.abs(grad)))))
    return ends


def _best_gain(logp_dlogp, candidates: list[np.ndarray], lp: float) -> np.ndarray | None:
    """The candidate with the highest log-likelihood above ``lp``, or None."""
    gains = [(value, candidate) for candidate in candidates
             if np.isfinite(value := logp_dlogp(candidate)[0]) and value > lp]
    return max(gains, key=lambda pair: pair[0])[1] if gains else None


def _saddle_escapes(hessian, theta: np.ndarray, grad: np.ndarray, n: float) -> list[np.ndarray]:
    """Points θ ± t v along the eigenvector v of the information's most negative eigenvalue, for
    the steps t of :data:`ESCAPE_STEPS`, when the run stopped short of Newton's tolerance
    (``grad``: the gradient at θ) at a point whose information has one below −:data:`SINGULAR` ×
    its largest (a saddle point or the side of a ridge, where L-BFGS-B's gradient vanishes and
    Newton's method cannot step); else none. Up to :data:`DENSE_PRECONDITIONER_MAX` coordinates
    (a dense eigendecomposition)."""
    if theta.size > DENSE_PRECONDITIONER_MAX or np.max(np.abs(grad)) / n < FINAL_TOL:
        return []
    information = -hessian(theta) / n
    if not np.all(np.isfinite(information)):
        return []
    if _factors(information):
        return []  # positive definite: a strict local maximum nearby, which Newton's steps reach
    # the smallest eigenpair alone (LAPACK's MRRR on one index) and the largest eigenvalue by Lanczos:
    # on an information of paper model 18 (2,967 coordinates) 1.9 + 0.07 s where every eigenpair took 4.1 s
    w0, V = eigh(information, subset_by_index=[0, 0], check_finite=False)
    if w0[0] >= -SINGULAR * max(largest_eigenvalue(information), 0.0):
        return []
    return [theta + sign * t * V[:, 0] for t in ESCAPE_STEPS for sign in (1.0, -1.0)]


def largest_eigenvalue(matrix: np.ndarray) -> float:
    """The largest eigenvalue of a symmetric matrix: by Lanczos (:func:`lanczos_largest`), or by
    LAPACK on that one index where ARPACK breaks down."""
    largest = lanczos_largest(matrix)
    if largest is None:
        n = matrix.shape[0]
        largest = float(eigh(matrix, eigvals_only=True, subset_by_index=[n - 1, n - 1])[0])
    return largest


def lanczos_largest(operator) -> float | None:
    """The largest eigenvalue of a symmetric matrix or operator by Lanczos (ARPACK), or None when
    ARPACK breaks down or does not converge. The Lanczos start is fixed (:data:`LANCZOS_SEED`):
    ARPACK's own draws from a generator it keeps for the process, so the value (converged to
    1e-6) would depend on how many eigenproblems the process solved before."""
    n = operator.shape[0]
    start = np.random.default_rng(LANCZOS_SEED).standard_normal(n)
    try:
        return float(eigsh(operator, k=1, which="LA", return_eigenvectors=False, tol=1e-6, v0=start)[0])
    except ArpackError:  # ArpackNoConvergence is one
        return None


def maximise_in_chart(
    logp_dlogp: Callable[[np.ndarray], tuple[float, np.ndarray]],
    hessian: Callable[[np.ndarray], np.ndarray],
    x0: np.ndarray,
    n: float,
    maxiter: int = 20000,
    information_diagonal: Callable[[np.ndarray], np.ndarray] | None = None,
    canonical: Callable[[np.ndarray], np.ndarray] | None = None,
    gauge: Callable[[np.ndarray], np.ndarray] | None = None,
    start_hessian: Callable[[np.ndarray], np.ndarray] | None = None,
    information_product: Callable[[np.ndarray], tuple[Callable, np.ndarray]] | None = None,
    concave: bool = False,
    leave: Callable[[np.ndarray], bool] | None = None,
    apart: np.ndarray | None = None,
    screened: Callable[[np.ndarray], tuple[np.ndarray, Callable[[], np.ndarray]]] | None = None,
) -> tuple[np.ndarray, dict]:
    """Maximise a log-likelihood in one chart (see the module docstring).

    Parameters
    ----------
    logp_dlogp : callable
        θ ↦ (log-likelihood, gradient).
    hessian : callable
        θ ↦ ∇²ℓ(θ), exact.
    x0 : ndarray
        Starting point.
    n : float
        Number of comparisons: tolerances are per comparison.
    maxiter : int
        Iteration cap of L-BFGS-B over all its phases.
    information_diagonal : callable, optional
        θ ↦ diag(−∇²ℓ(θ)) for the preconditioner (default: from ``hessian``).
    canonical : callable, optional
        θ ↦ an equivalent θ (same log-likelihood) in well-conditioned coordinates, applied
        before each Newton phase (:meth:`bayesrank.model.framework.Framework.canonical`).
    gauge : callable, optional
        θ ↦ ``(len(θ), g)`` tangent directions of a symmetry of the log-likelihood at θ
        (:meth:`bayesrank.model.framework.Framework.gauge`); Newton's method steps orthogonally
        to them.
    start_hessian : callable, optional
        For a start next to the maximum (a refit of resampled data from the original MLE):
        Newton's method from ``x0`` with this approximate Hessian first (e.g. the original
        fit's, fixed: each step then costs one gradient), to the same tolerance; the usual
        phases follow only when it does not converge.
    information_product : callable, optional
        θ ↦ (v ↦ −∇²ℓ(θ) v, diag(−∇²ℓ(θ))), or None where products do not pay: from
        :data:`ITERATIVE_FROM` coordinates on (and without ``gauge``), Newton's steps are solved
        by conjugate gradients on these products, and the dense Hessian is built only when they
        fail.
    concave : bool
        The log-likelihood is concave: Newton's method from ``x0`` first (module docstring, 0.).
    leave : callable, optional
        θ ↦ whether a run from off the chart gains (:func:`maximise`'s edge crossings and plateau
        escapes): where it does, the run stops after its first phase (before Newton's and the whitened
        phases polish a point the next run leaves), or, where Newton's method has not finished, before
        the L-BFGS-B restarts.
    apart : ndarray of bool, optional
        Coordinates whitened by construction (the factored tie coordinates,
        :meth:`bayesrank.model.framework.Framework.whitened_by_construction`): the whitened phases
        scale them by their diagonal and whiten only the others densely (:func:`_whitening`).
    screened : callable, optional
        With ``apart``: θ ↦ ``(matrix, complete)``, −∇²ℓ(θ) exact but for the block of the ``apart``
        coordinates, of which it may hold the diagonal alone, and ``complete()`` ↦ the whole of it
        (in the matrix's memory). A whitening reads no more; Newton's method first factors the
        other coordinates' block — where that is not positive definite, neither is the whole
        (a principal block), and the rest is not built (:func:`_newton`).

    Returns
    -------
    theta : ndarray
    info : dict
        ``iterations`` (L-BFGS-B), ``newton_iterations``, ``function_evaluations``.
    """
    x0 = np.asarray(x0, dtype=float)
    newton = 0
    if start_hessian is not None:
        theta, newton, done, _ = _newton(logp_dlogp, start_hessian, x0, n, gauge, max_iter=60)
        if done:
            return theta, {"iterations": 0, "newton_iterations": newton, "function_evaluations": 0}
    if concave:
        theta, more_newton, done, _ = _newton(logp_dlogp, hessian, x0, n, gauge, product=information_product,
                                              quasi=True)
        newton += more_newton
        if done:
            return theta, {"iterations": 0, "newton_iterations": newton, "function_evaluations": 0}
        x0 = theta  # (never worse than the start: every accepted step gains)
    diag = information_diagonal(x0) if information_diagonal is not None else -np.diag(hessian(x0))
    scale = diagonal_scaling(diag, n)
    evaluations = [0]

    def lbfgs(theta, budget, stop_below=None, whitening=None):
        """L-BFGS-B in coordinates y with θ = y / scale (the diagonal preconditioner) or, given
        ``whitening = (T, T⁻¹)``, θ = T y — θ = θ₀ + T y from y = 0 where T⁻¹ is None; stops
        early once the largest gradient entry per comparison is below ``stop_below``."""
        if whitening is None:
            to_theta, y0, pull_back = (lambda y: y / scale), theta * scale, (lambda g: g / scale)
        elif whitening[1] is None:
            T, start = whitening[0], theta
            to_theta, y0, pull_back = (lambda y: start + T @ y), np.zeros(theta.size), (lambda g: T.T @ g)
        else:
            T, T_inv = whitening
            to_theta, y0, pull_back = (lambda y: T @ y), T_inv @ theta, (lambda g: T.T @ g)
        last = {}

        def objective(y):
            evaluations[0] += 1
            lp, grad = logp_dlogp(to_theta(y))
            last["y"], last["grad"] = y, grad
            return -lp / n, -pull_back(grad) / n

        def stop_early(intermediate_result):
            # L-BFGS-B accepts its last evaluated point, whose gradient is usually at hand
            if not np.array_equal(last.get("y"), intermediate_result.x):
                objective(intermediate_result.x)
            if np.max(np.abs(last["grad"])) / n < stop_below:
                raise StopIteration

        with np.errstate(over="ignore", invalid="ignore"):
            result = minimize(
                objective,
                y0,
                jac=True,
                method="L-BFGS-B",
                callback=None if stop_below is None else stop_early,
                options={"maxiter": budget, "maxcor": 30, "gtol": 1e-10, "ftol": 1e-15},
            )
        return to_theta(result.x), int(result.nit)

    settle = canonical if canonical is not None else (lambda th: th)
    # a non-concave likelihood within reach of the dense preconditioner: Newton's steps by Cholesky
    # (where its information is indefinite, conjugate gradients run ITERATIVE_MAX products before
    # failing, and the whitened phases need the dense information anyway; paper model 29 on
    # arena-2024: a futile Newton trial 1.3 s with them, 0.4 s without)
    iterative = concave or x0.size > DENSE_PRECONDITIONER_MAX
    # what a whitening decomposes densely (the coordinates whitened by construction are scaled apart)
    whitened = (x0.size if apart is None else np.count_nonzero(~apart)) <= DENSE_PRECONDITIONER_MAX
    # the informations Newton's method builds are screened first where a whitening would use them
    screen = (screened, ~apart) if screened is not None and apart is not None and whitened and gauge is None \
        else None

    def for_whitening(theta):
        """−∇²ℓ(θ) as far as :func:`_whitening` reads it."""
        return -hessian(theta) if screen is None else screened(theta)[0]
    theta, iterations = lbfgs(x0, min(maxiter, FIRST_PHASE), stop_below=NEWTON_START)
    if leave is not None and leave(theta):
        # a run from across an edge or off a plateau gains: it starts there before Newton's and the
        # whitened phases polish a point it leaves anyway (paper model 18 on arena-2024: 18.6 s instead of
        # 32.3 s, the same maximum)
        return settle(theta), {"iterations": iterations, "newton_iterations": newton,
                               "function_evaluations": evaluations[0]}
    theta, more_newton, done, information = _newton(logp_dlogp, hessian, settle(theta), n, gauge,
                                                    product=information_product, iterative=iterative, screen=screen)
    newton += more_newton
    stalled = False  # a whitened phase took no step: another whitening at that point would not either
    while (not done and information is not None and gauge is None and whitened
           and iterations < maxiter):
        # the Hessian is indefinite (non-concave likelihood): L-BFGS-B whitened by its |eigenvalues|
        # (floored), refreshed at the start of every phase, each followed by a few Newton steps
        theta, more = lbfgs(theta, min(WHITENED_PHASE, maxiter - iterations), whitening=_whitening(information, n, apart))
        iterations += more
        if more == 0:  # its first line search failed: no Newton trial (θ did not move), no whitened restart
            stalled = True
            break
        theta, more_newton, done, information = _newton(logp_dlogp, hessian, settle(theta), n, gauge,
                                                        product=information_product, max_iter=NEWTON_TRIAL,
                                                        iterative=iterative, trial=True, screen=screen)
        newton += more_newton
        if not done and more < WHITENED_PHASE:  # L-BFGS-B stopped short (a line search failed): the restarts below
            break
        if not done and information is None:  # Newton's method moved, not converged yet
            information = for_whitening(theta)
    if not done and information is not None and gauge is None and not whitened:
        # indefinite, and too large to whiten: shifted Newton steps up to the concave region
        theta, shifted, reached, information = _shifted_newton(logp_dlogp, hessian, theta, n, information)
        newton += shifted
        if reached:  # (a few Newton steps, as after a whitened phase: where they crawl, L-BFGS-B goes on)
            theta, more_newton, done, information = _newton(logp_dlogp, hessian, theta, n, gauge,
                                                            product=information_product, max_iter=NEWTON_TRIAL,
                                                            iterative=iterative, information=information)
            newton += more_newton
    if not done and iterations >= FIRST_PHASE and maxiter > FIRST_PHASE:  # Newton could not take over yet
        theta, more = lbfgs(theta, maxiter - iterations, stop_below=NEWTON_START)
        iterations += more
        theta, more_newton, done, information = _newton(logp_dlogp, hessian, settle(theta), n, gauge,
                                                        product=information_product, iterative=iterative, screen=screen)
        newton += more_newton
    if not done and leave is not None and leave(theta):
        # a restart off the chart gains (maximise's plateau): it goes on from there, not by L-BFGS-B here
        theta = settle(theta)
        return theta, {"iterations": iterations, "newton_iterations": newton, "function_evaluations": evaluations[0]}
    restarts = []
    if whitened and not stalled:
        restarts.append("whitened")
    restarts.append("diagonal")  # also after a whitened run that stalls on a flat ridge (paper model 16)
    for kind in restarts:
        if done or iterations >= maxiter:
            break
        if kind == "whitened":  # (_whitening says how)
            if information is None:
                information = for_whitening(theta)
            theta, more = lbfgs(theta, maxiter - iterations, whitening=_whitening(information, n, apart))
        else:
            theta, more = lbfgs(theta, maxiter - iterations)
        iterations += more
        theta, more_newton, done, information = _newton(logp_dlogp, hessian, settle(theta), n, gauge,
                                                        product=information_product, iterative=iterative, screen=screen)
        newton += more_newton
    # the canonical representative of the estimate (a Newton phase may end just across a sign)
    theta = settle(theta)
    return theta, {"iterations": iterations, "newton_iterations": newton, "function_evaluations": evaluations[0]}


def _whitening(information: np.ndarray, n: float, apart: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray | None]:
    """``(T, T⁻¹)`` with Tᵀ |I / n| T = 1: the exact information's |eigenvalues| floored at 1e-5 of
    the largest — the flat directions are stretched and the negative ones flipped, so L-BFGS-B
    sees a round problem.

    With ``apart`` (coordinates whitened by construction), T is block diagonal: those coordinates
    scaled by their |diagonal|, the others whitened as above by their own block, every scale floored
    at 1e-5 of the largest (:class:`_SplitWhitening`; T⁻¹ None). Paper model 30 (Davidson k_tie = 20,
    k_cov = 3; 2,330 of its 2,967 coordinates the tie factors') whitens a 637-coordinate block in
    0.04 s instead of the whole in 2 s, an iteration's two products with T cost 637² instead of
    2,967², and L-BFGS-B takes about as many iterations: a first fit 31.7 s CPU instead of 55.0 s,
    the same NLL; model 29 (k_tie = 10) 10.3 s instead of 16.6 s for a second fit.

    From :data:`SINGLE_PRECISION_FROM` coordinates on, the eigendecomposition is LAPACK's divide
    and conquer in single precision (where it does not overflow), and T⁻¹ is None (its
    eigenvectors are orthogonal only to ~1e-7): any full-rank T is a valid change of coordinates,
    and its eigenvalues' errors (4e-8 of the largest on paper model 29's information) are far
    below the floor.
    """
    if apart is not None:
        keep = ~apart
        w, V, _ = _eigen(information[np.ix_(keep, keep)] / n)
        d = np.abs(np.diag(information)[apart]) / n
        floor = 1e-5 * max(np.max(np.abs(w), initial=0.0), np.max(d, initial=0.0))
        return _SplitWhitening(keep, V / np.sqrt(np.maximum(np.abs(w), floor)), 1.0 / np.sqrt(np.maximum(d, floor))), None
    w, V, exact = _eigen(information / n)
    w = np.maximum(np.abs(w), 1e-5 * np.max(np.abs(w)))
    return V / np.sqrt(w), (V * np.sqrt(w)).T if exact else None


def _eigen(scaled: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
    """Eigenvalues and eigenvectors of a symmetric matrix for :func:`_whitening`, and whether they are
    exact: in single precision from :data:`SINGLE_PRECISION_FROM` rows on (where it does not overflow)."""
    with np.errstate(over="ignore"):
        single = scaled.astype(np.float32) if scaled.shape[0] >= SINGLE_PRECISION_FROM else None
    if single is not None and np.all(np.isfinite(single)):
        w, V = eigh(single, driver="evd", overwrite_a=True, check_finite=False)
        return w.astype(float), V.astype(float), False
    w, V = np.linalg.eigh(scaled)
    return w, V, True


class _SplitWhitening:
    """A block-diagonal whitening T (:func:`_whitening` with ``apart``) as an operator: ``T @ v`` and
    ``T.T @ v``, the dense block on the kept coordinates and a diagonal on the others."""

    def __init__(self, keep: np.ndarray, dense: np.ndarray, scale: np.ndarray, transposed: bool = False):
        self.keep, self.apart, self.dense, self.scale, self.transposed = keep, ~keep, dense, scale, transposed

    @property
    def T(self) -> _SplitWhitening:
        return _SplitWhitening(self.keep, self.dense, self.scale, not self.transposed)

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        out = np.empty_like(v)
        out[self.keep] = (self.dense.T if self.transposed else self.dense) @ v[self.keep]
        out[self.apart] = self.scale * v[self.apart]
        return out


def gauge_complement(directions: np.ndarray | None) -> np.ndarray | None:
    """An orthonormal basis ``(n, n − g)`` of the complement of the span of ``directions`` ``(n, g)``
    (the tangent space of a symmetry's orbit), or None without a symmetry."""
    if directions is None or directions.shape[1] == 0:
        return None
    U, s, _ = np.linalg.svd(directions, full_matrices=True)
    g = int(np.sum(s > 1e-10 * max(s[0], 1e-300)))
    return U[:, g:]


def _newton_step(scaled: np.ndarray, rhs: np.ndarray, iterative: bool = True, keep: list | None = None
                 ) -> np.ndarray | None:
    """Solve the unit-diagonal (Jacobi-scaled) information against ``rhs``: by conjugate
    gradients beyond :data:`ITERATIVE_FROM` coordinates unless ``iterative`` is False (O(n²) a
    step; accepted when the residual is below :data:`ITERATIVE_RTOL` and the step ascends),
    else — or when they do not converge — by Cholesky; None when the matrix is not positive
    definite. The Cholesky factor is appended to ``keep`` (when given) for :func:`_chord_step`."""
    if iterative and scaled.shape[0] >= ITERATIVE_FROM:
        x, info = cg(scaled, rhs, rtol=ITERATIVE_RTOL, maxiter=ITERATIVE_MAX)
        if info == 0 and float(x @ rhs) > 0 and \
                np.linalg.norm(scaled @ x - rhs) <= 10 * ITERATIVE_RTOL * np.linalg.norm(rhs):
            return x
    try:
        factor = cho_factor(scaled, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    if keep is not None:
        keep.append(factor)
    return _cholesky_solve(factor, rhs)


def _cholesky_solve(factor: tuple, rhs: np.ndarray) -> np.ndarray:
    """A⁻¹ rhs from A's Cholesky factor (``cho_factor`` form) by LAPACK's potrs on the factor's own
    memory: ``cho_solve`` copies a C-ordered factor to Fortran order on every call (60-140 ms for
    2,458 coordinates, against 6 ms for the two triangular solves)."""
    c, lower = factor
    c, lower = (c, lower) if c.flags.f_contiguous else (c.T, not lower)
    x, info = lapack.dpotrs(c, rhs, lower=lower)
    if info != 0:
        raise np.linalg.LinAlgError(f"potrs failed ({info})")
    return x


def _chord_step(logp_dlogp, chord, theta, lp, grad):
    """A Newton step with the information factored at an earlier point (a chord, or Shamanskii,
    step: one gradient and two triangular solves instead of an information and its Cholesky
    factor), accepted at full length when it gains (Armijo) without raising the largest gradient
    entry: ``(θ, ℓ, ∇ℓ)``, or None. With BFGS pairs (``chord``'s list; None: no corrections) the
    step corrected by them (:func:`_two_loop`) is tried first, accepted when it gains (a BFGS path
    is not monotone in the largest gradient entry), and an accepted step adds its pair."""
    factor, d, T, pairs = chord

    def solve(v):  # the factored information's inverse times v
        rv = v if T is None else T.T @ v
        x = _cholesky_solve(factor, rv / d) / d
        return x if T is None else T @ x

    accepted = _line_search(logp_dlogp, theta, lp, grad, _two_loop(solve, grad, pairs), (1.0,)) if pairs else None
    if accepted is None:  # the plain chord step
        accepted = _line_search(logp_dlogp, theta, lp, grad, solve(grad), (1.0,))
        if accepted is None or np.max(np.abs(accepted[2])) > np.max(np.abs(grad)):
            return None
    if pairs is not None:
        _add_pair(pairs, accepted[0] - theta, grad - accepted[2])
    return accepted


def _add_pair(pairs: list, s: np.ndarray, y: np.ndarray) -> None:
    """Keep the step s and the information's action on it y = ∇ℓ(θ) − ∇ℓ(θ + s) (the secant
    pair of a BFGS update) when its curvature yᵀs is positive."""
    curvature = float(s @ y)
    if curvature > 0 and np.isfinite(curvature):
        pairs.append((s, y, 1.0 / curvature))
        del pairs[:-QUASI_NEWTON_MEMORY]


def _two_loop(solve, g: np.ndarray, pairs: list) -> np.ndarray:
    """H⁻¹ g for the information H₀ (``solve``: v ↦ H₀⁻¹ v) updated by BFGS with the secant pairs
    ``(s, y, 1/yᵀs)``, oldest first (L-BFGS's two-loop recursion with H₀ for its initial matrix):
    the chord steps follow the curvature's change along the path, where the information at
    their start no longer matches it (near the maximum of the k_tie = 20 models the largest
    gradient entry contracted by only 0.85-0.9 a chord step)."""
    q = np.array(g, dtype=float)
    alphas = []
    for s, y, rho in reversed(pairs):
        alpha = rho * float(s @ q)
        alphas.append(alpha)
        q -= alpha * y
    r = solve(q)
    for (s, y, rho), alpha in zip(pairs, reversed(alphas)):
        r += (alpha - rho * float(y @ r)) * s
    return r


def _operator_step(product, theta: np.ndarray, grad: np.ndarray, iterations: list | None = None
                   ) -> np.ndarray | bool | None:
    """A Newton step by conjugate gradients on Hessian-vector products, Jacobi-scaled as
    :func:`_newton_step`: accepted on the same terms; else False when they ran and did not
    converge, True when they could not run (a diagonal entry not positive) — the dense solve
    then runs; None when ``product`` declines (returns None). The number of conjugate-gradient
    iterations is appended to ``iterations``."""
    products = product(theta)
    if products is None:
        return None
    matvec, diag = products
    if not np.all(np.isfinite(diag)) or np.any(diag <= 0):
        return True
    d = np.sqrt(diag)
    n = theta.size
    scaled = LinearOperator((n, n), matvec=lambda x: matvec(np.ravel(x) / d) / d, dtype=float)
    rhs = grad / d
    count = [0]
    x, info = cg(scaled, rhs, rtol=ITERATIVE_RTOL, maxiter=ITERATIVE_MAX,
                 callback=lambda _: count.__setitem__(0, count[0] + 1))
    if iterations is not None:
        iterations.append(count[0])
    if info == 0 and float(x @ rhs) > 0 and np.linalg.norm(scaled @ x - rhs) <= 10 * ITERATIVE_RTOL * np.linalg.norm(rhs):
        return x / d
    return False


def _line_search(logp_dlogp, theta, lp, grad, step, alphas):
    """The first step length of ``alphas`` that gains (Armijo, or — below the resolution of the
    log-likelihood — gives a smaller gradient) with a finite gradient: ``(θ, ℓ, ∇ℓ)``, or None."""
    slope = float(grad @ step)  # > 0: the predicted gain of a full step, doubled
    for alpha in alphas:
        candidate = theta + alpha * step
        lp_new, grad_new = logp_dlogp(candidate)
        gained = lp_new - lp
        if np.isfinite(lp_new) and np.all(np.isfinite(grad_new)) and (
            gained >= 1e-4 * alpha * slope
            or (gained >= -1e-12 * abs(lp) and np.max(np.abs(grad_new)) < np.max(np.abs(grad)))
        ):
            return candidate, lp_new, grad_new
    return None


def _shifted_newton(logp_dlogp, hessian, theta: np.ndarray, n: float, information: np.ndarray,
                    max_iter: int = SHIFTED_STEPS) -> tuple[np.ndarray, int, bool, np.ndarray | None]:
    """Levenberg–Marquardt steps from a point where the information is not positive definite.

    Each step solves the Jacobi-scaled information plus the smallest shift of :data:`SHIFTS`
    (from one below the last that gained) that factors and whose step gains; the information is
    built again at every point. Near a maximum of a non-concave likelihood few directions have
    negative curvature and a small shift covers them: the steps then follow the valley L-BFGS-B
    crawls along (:data:`SHIFTS` has the numbers).

    Parameters
    ----------
    logp_dlogp, hessian, theta, n
        As :func:`maximise_in_chart`.
    information : ndarray
        −∇²ℓ at ``theta`` (not positive definite).
    max_iter : int
        Steps at most.

    Returns
    -------
    theta : ndarray
    steps : int
    reached : bool
        The information factored without a shift at the last point: Newton's method can go on
        from there.
    information : ndarray or None
        −∇²ℓ at the returned θ (for :func:`_newton`'s first step), None where it is not finite.
    """
    lp, grad = logp_dlogp(theta)
    start = 1  # (the information given is not positive definite)
    for step_count in range(max_iter):
        d, scaled, rhs = _jacobi_scaled(information, grad)
        if np.max(np.abs(grad)) / n < FINAL_TOL:  # a maximum, or a saddle point (no step gains there)
            return theta, step_count, _factors(scaled), information
        for k in range(start, len(SHIFTS)):
            if k == 0:  # positive definite: Newton's own method from here
                if _factors(scaled):
                    return theta, step_count, True, information
                continue
            factor = []
            step = _newton_step(scaled + SHIFTS[k] * np.eye(len(d)), rhs, iterative=False, keep=factor)
            if step is None:
                continue
            accepted = _line_search(logp_dlogp, theta, lp, grad, step / d, BACKTRACKING[:3])
            if accepted is not None:
                gain = accepted[1] - lp
                theta, lp, grad = accepted
                start = max(k - 1, 0)
                for _ in range(CHORD_STEPS):  # the same factor again while it gains as much (chord steps)
                    chord = _line_search(logp_dlogp, theta, lp, grad, _cholesky_solve(factor[0], grad / d) / d, (1.0,))
                    if chord is None or chord[1] - lp < SHIFTED_CHORD_GAIN * gain:
                        break
                    gain = chord[1] - lp
                    theta, lp, grad = chord
                break
        else:  # no shift gains
            return theta, step_count, False, information
        information = -hessian(theta)
        if not np.all(np.isfinite(information)):
            return theta, step_count + 1, False, None
    return theta, max_iter, False, information


def _jacobi_scaled(matrix: np.ndarray, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(d, matrix / d dᵀ, vector / d)`` with d = √|diag(matrix)|: the unit-diagonal system Newton's
    steps solve. The scaled matrix is made in the memory of d dᵀ (one n × n array, not two: at 2,967
    coordinates each costs 70 MB and about 25 ms to fill)."""
    d = np.sqrt(np.maximum(np.abs(np.diag(matrix)), 1e-300))
    scaled = np.outer(d, d)
    return d, np.divide(matrix, scaled, out=scaled), vector / d


def _kept_definite(information: np.ndarray, keep: np.ndarray) -> bool:
    """Whether the block of ``information`` on the coordinates ``keep`` is positive definite, as
    :func:`_newton_step`'s Cholesky factor would find it (Jacobi-scaled): a principal block, so
    where it is not, the whole is not either."""
    block = information[np.ix_(keep, keep)]
    return bool(np.all(np.isfinite(block))) and _factors(_jacobi_scaled(block, np.zeros(len(block)))[1])


def _factors(matrix: np.ndarray) -> bool:
    """Whether Cholesky factors ``matrix`` (it is positive definite to rounding)."""
    try:
        cho_factor(matrix, check_finite=False)
    except np.linalg.LinAlgError:
        return False
    return True


def _newton(logp_dlogp, hessian, theta, n, gauge=None, max_iter: int = 20, product=None, quasi: bool = False,
            iterative: bool = True, information: np.ndarray | None = None, trial: bool = False, screen=None):
    """Newton's method with backtracking (then Levenberg–Marquardt damping, :data:`DAMPING`)
    while the log-likelihood is locally concave; ``quasi``: it is concave, and the chord steps
    are corrected by BFGS updates (:data:`QUASI_NEWTON_MEMORY`); ``iterative`` False: every step
    is solved by Cholesky on the dense information, without conjugate gradients (where the
    information is likely indefinite: they would run :data:`ITERATIVE_MAX` products, then fail).
    ``information``: −∇²ℓ at the starting θ when the caller has it, used for a dense step there.
    ``trial``: a trial after a whitened phase, which stops after a whole Newton step (not shortened
    by the line search or damped) that leaves the largest gradient entry above
    :data:`TRIAL_CONTRACTION` of its value before the step.
    ``screen``: ``(screened, keep)`` (:func:`maximise_in_chart`'s ``screened`` and the coordinates
    outside its ``apart``): each information is screened first, and completed only when its block on
    ``keep`` is positive definite.

    Returns ``(theta, iterations, converged, information)``; stops without moving when the
    Hessian is not negative definite (Newton's direction is then not an ascent direction).
    ``information`` is −∇²ℓ at the returned θ when Newton stopped there for that reason
    (the whitened restart reuses it; with ``screen``, possibly screened), else None.
    """
    lp, grad = logp_dlogp(theta)
    start, known = theta, information  # (the information given belongs to this θ only)
    # conjugate gradients until they fail once: an information they cannot solve within
    # ITERATIVE_MAX iterations at one step (the k_tie = 20 tie factors', condition ~1e8) they do
    # not solve at the next either, and each failure costs ITERATIVE_MAX products before Cholesky
    operator = product is not None and gauge is None and theta.size >= ITERATIVE_FROM
    chord = None  # the last dense step's factored information, tried again at the next points
    # chord steps allowed (until they once leave the positive definite region) where the information
    # and its factor cost many gradients (CHORD_FROM)
    chords = theta.size >= CHORD_FROM
    before_step = None  # the largest gradient entry where the last dense Newton step started
    for it in range(max_iter):
        if np.max(np.abs(grad)) / n < FINAL_TOL:
            return theta, it, True, None
        anchor = (theta, lp, grad)  # where the chord steps start (the last Newton step's point)
        best, slow, patience = np.max(np.abs(grad)), 0, CHORD_PATIENCE if quasi else 1
        finishing = chord is not None and before_step and CHORD_FINISH * best**2 / before_step < FINAL_TOL * n
        for _ in range(CHORD_STEPS if chord is not None and chords else int(finishing)):
            accepted = _chord_step(logp_dlogp, chord, theta, lp, grad)
            if accepted is None:
                break
            theta, lp, grad = accepted
            if np.max(np.abs(grad)) / n < FINAL_TOL:
                return theta, it, True, None
            slow = slow + 1 if np.max(np.abs(grad)) > CHORD_CONTRACTION * best else 0
            best = min(best, np.max(np.abs(grad)))
            if slow >= patience:  # too slow: a new information
                break
        chord = None
        used = []
        step = _operator_step(product, theta, grad, used) if operator and iterative else True
        # (a solve that needed many products is followed by harder ones as Newton's method moves
        # into the flat directions: the dense step is then the cheaper one; products that do not
        # pay, declined, make no iterative solve pay either)
        iterative = iterative and step is not False and step is not None and sum(used) <= ITERATIVE_KEEP
        step = True if step is None else step
        accepted = None if isinstance(step, bool) else _line_search(logp_dlogp, theta, lp, grad, step, BACKTRACKING)
        if accepted is not None:
            theta, lp, grad = accepted
            continue
        # no operator step, or it overshoots (near-flat directions): the dense step, damped if need be
        whole = True
        if known is not None and theta is start:
            information = known
        elif screen is None:
            information = -hessian(theta)
        else:
            information, complete = screen[0](theta)
            whole = _kept_definite(information, screen[1])
            information = complete() if whole else information
        if not np.all(np.isfinite(information)):  # e.g. a threshold overflowing far from the optimum
            return theta, it, False, None
        if not whole:  # not positive definite on the kept coordinates: nor as a whole (below)
            if theta is not anchor[0]:
                theta, lp, grad = anchor
                chords = False
                continue
            return theta, it, False, information
        before_step = np.max(np.abs(grad))
        T = gauge_complement(gauge(theta)) if gauge is not None else None
        reduced, rgrad = (information, grad) if T is None else (T.T @ information @ T, T.T @ grad)
        d, scaled, rhs = _jacobi_scaled(reduced, rgrad)
        moved = rolled_back = False
        for damping in DAMPING:  # Newton's step, then Levenberg–Marquardt steps if it fails
            factor = []
            step = _newton_step(scaled if damping == 0 else scaled + damping * np.eye(len(d)), rhs, iterative,
                                keep=factor)
            if step is None:
                if damping == 0 and theta is not anchor[0]:
                    # the chord steps left the region where the information is positive definite
                    # (a non-concave likelihood): back to where they started, Newton's own steps
                    theta, lp, grad = anchor
                    chords, rolled_back = False, True
                    break
                if damping == 0:
                    return theta, it, False, information
                continue
            step = step / d
            step = step if T is None else T @ step
            accepted = _line_search(logp_dlogp, theta, lp, grad, step, BACKTRACKING if damping == 0 else (1.0, 0.5))
            if accepted is not None:
                # the chord steps' BFGS pairs start with this step's (not in a symmetry's chart)
                pairs = [] if T is None and quasi else None
                if pairs is not None:
                    _add_pair(pairs, accepted[0] - theta, grad - accepted[2])
                full = damping == 0 and np.array_equal(accepted[0], theta + step)  # Newton's own step, whole
                theta, lp, grad = accepted
                moved = True
                chord = (factor[0], d, T, pairs) if factor and damping == 0 else None
                break
        if rolled_back:
            continue  # (the information again, at the anchor)
        if not moved:
            return theta, it + 1, False, information
        if trial and full and FINAL_TOL * n <= np.max(np.abs(grad)) > TRIAL_CONTRACTION * before_step:
            return theta, it + 1, False, None  # not quadratic yet: the next whitened phase goes on
    return theta, max_iter, np.max(np.abs(grad)) / n < FINAL_TOL, None
