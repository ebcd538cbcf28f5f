"""Thurstonian items whose dispersion runs out (z_ab → μ̃_a/R_a against every opponent, the likelihood
flat in R_a), on arena-2024 itself.

* 15 items (every ninth of arena-2024), Rao–Kupper with Σ = D: RWKV-4-Raven-14B (3 opponents) and
  nous-hermes-2-mixtral-8x7b-dpo (5) win about the same share against strong and weak opponents, and the
  profile likelihood rises towards a limit as their variance grows: the supremum is on the boundary. The
  fit says so in words and names them.
* The optimiser's escape from such a plateau (:meth:`Framework.off_plateau`): from a point with one item's
  dispersion run out, a candidate shrunk back gains and lies in the chart.
* Two items on one point of the latent space (s_ab → 0, the boundary paper model 17 heads to) are named.
* Such a point traps the optimiser wherever it lies (every small move loses): one run from the pair parted
  (:meth:`Framework.parted`) is kept where it ends higher.
* Paper model 17 (slow): main stopped at NLL 1.0048439 with falcon-180b-chat and zephyr-7b-alpha run out.
"""

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import bayesrank as br
from bayesrank.inference.compiled import compiled
from bayesrank.model import paired
from tests.conftest import around, items_subset


def loglik(structure, bound, values):
    return float(np.where(bound.counts > 0, bound.counts * structure.log_probs(values, bound.cells), 0.0).sum())


RUN_OUT = {"RWKV-4-Raven-14B", "nous-hermes-2-mixtral-8x7b-dpo"}


@pytest.fixture(scope="module")
def every_ninth(arena):
    return items_subset(arena, set(range(0, arena.n_items, 9)))


def test_dispersion_on_the_boundary_is_said_in_words(every_ninth):
    fw = br.RaoKupper(k_cov=0)
    fit = br.fit(fw, every_ninth)
    ratio = fit.diagnostics["runaway_dispersion"]
    assert set(ratio) == RUN_OUT and min(ratio.values()) > paired.RUNAWAY
    assert not fit.converged
    said = [w for w in fit.warnings if "grows without bound" in w]
    assert len(said) == 1 and all(name in said[0] for name in RUN_OUT)
    # the evidence: the profile likelihood of each item's variance (its mean re-optimised, the rest at the
    # estimate) falls when it shrinks and is flat as it grows; the optimiser's restarts all lose
    prepared = fw.prepare(every_ninth)
    structure = compiled(fw, prepared)
    bound = structure.bind(prepared)
    values = {k: np.array(v, dtype=float) for k, v in bound.natural(fit.tree["estimate"]["theta"].values).items()}
    at = loglik(structure, bound, values)
    median = np.sqrt(np.median(values["cov_t"] ** 2))  # the median item's dispersion (Σ = D: R_a = |t_a|)
    for name in RUN_OUT:
        a = list(prepared.items).index(name)
        back = median / abs(values["cov_t"][a])  # the factor that brings it back among the others

        def profile(factor):
            def nll(mu):
                moved = {k: v.copy() for k, v in values.items()}
                moved["cov_t"][a] *= factor
                moved["score_raw"][a] = mu
                return -loglik(structure, bound, moved)
            centre = values["score_raw"][a] * factor
            return -minimize_scalar(nll, bracket=(centre - 1.0, centre + 1.0)).fun

        # (how far out along the plateau a run stops depends on its path — 3.7e3 to 6.5e3 times the median
        # in the runs traced —, so the dispersions it is shrunk to are multiples of the median item's)
        assert profile(back) < at - 1e-2
        assert profile(10.0 * back) < at
        assert abs(profile(np.exp(4.0)) - at) < 1e-3
    assert all(loglik(structure, bound, {**values, **c}) < at for c in fw.off_plateau(values))


@pytest.fixture(scope="module")
def around_falcon(arena):
    """20 items: falcon-180b-chat and the 19 it met most (the item model 17 ran out on the full data)."""
    return around(arena, "falcon-180b-chat", 19)


def test_off_plateau_candidates_gain_and_stay_in_chart(around_falcon):
    data = around_falcon
    fw = br.RaoKupper(k_cov=1)
    fit = br.fit(fw, data)
    assert fit.converged and "runaway_dispersion" not in fit.diagnostics
    prepared = fw.prepare(data)
    structure = compiled(fw, prepared)
    bound = structure.bind(prepared)
    theta = fit.tree["estimate"]["theta"].values
    values = {k: np.array(v, dtype=float) for k, v in bound.natural(theta).items()}
    assert fw.off_plateau(values) == []
    a = list(prepared.items).index("falcon-180b-chat")
    out = {k: v.copy() for k, v in values.items()}
    grow = np.exp(8.0)
    out["score_raw"][a] *= grow
    out["cov_t"][a] *= grow
    centre = out["cov_raw_loading"].mean(axis=0)
    out["cov_raw_loading"][a] = centre + grow * (out["cov_raw_loading"][a] - centre)
    out = {**out, **paired._in_chart(fw, out)}
    lp_out = loglik(structure, bound, out)
    assert np.isclose(bound.logp_dlogp(structure.natural.theta_for(out, theta))[0], lp_out)
    assert list(paired._runaway(fw, out)) == [a]
    assert fw.boundaries(prepared, out) == ["the Thurstonian dispersion of falcon-180b-chat ran out"]
    candidates = fw.off_plateau(out)
    assert candidates
    for c in candidates:  # each in the chart: θ reproduces it exactly
        c = {**out, **c}
        assert np.isclose(bound.logp_dlogp(structure.natural.theta_for(c, theta))[0], loglik(structure, bound, c))
    best = max(loglik(structure, bound, {**out, **c}) for c in candidates)
    at = loglik(structure, bound, values)
    assert best > lp_out + 0.9 * (at - lp_out)  # (20.7 of the 21.0 lost)


def test_coinciding_items_are_said_in_words(around_falcon):
    """Two items of a real fit moved onto one point of the latent space (t = 0, the same loadings and
    nearly the same mean): the pair is named, and nothing is said of the fit itself."""
    fw = br.RaoKupper(k_cov=1)
    prepared = fw.prepare(around_falcon)
    fit = br.fit(fw, around_falcon)
    bound = compiled(fw, prepared).bind(prepared)
    values = {k: np.array(v, dtype=float) for k, v in bound.natural(fit.tree["estimate"]["theta"].values).items()}
    assert "coinciding_items" not in fw.findings(prepared, values, {}).diagnostics
    assert fw.boundaries(prepared, values) == []
    a, b = 1, 2
    values["cov_t"][[a, b]] = 0.0
    values["cov_raw_loading"][b] = values["cov_raw_loading"][a]
    values["cov_t"][a] = values["cov_t"][b] = 1e-9
    values["score_raw"][b] = values["score_raw"][a] + 1e-9
    found = fw.findings(prepared, values, {})
    assert [pair[:2] for pair in found.diagnostics["coinciding_items"]] == [[prepared.items[a], prepared.items[b]]]
    said = [w for w in found.warnings if "coincide in the Thurstonian latent space" in w]
    assert len(said) == 1 and prepared.items[a] in said[0] and "boundary s_ab = 0" in said[0]
    # the same pair in the few words a multi-start fit's warning names a run's end with (Framework.boundaries)
    assert fw.boundaries(prepared, values) == [
        f"{prepared.items[a]} and {prepared.items[b]} coincide in the Thurstonian latent space (s_ab → 0)"]


def test_coinciding_items_do_not_send_the_existence_check_to_the_linear_programme(around_falcon, monkeypatch):
    """At two coinciding items their cell's Jacobian in the means grows as 1/√s_ab (here 7e8 where the
    others' are O(1)); the locked cells still pin every linear coordinate once each cell's rows are at
    unit length (a positive row scaling keeps the rank), so no linear programme runs (paper model 17 on
    arena-2024: 224 s of CPU there) — and the programme, run anyway, agrees there is no direction."""
    from bayesrank.inference import existence
    from bayesrank.inference.information import CellDerivatives

    fw = br.RaoKupper(k_cov=1)
    prepared = fw.prepare(around_falcon)
    fit = br.fit(fw, around_falcon)
    structure = compiled(fw, prepared)
    bound = structure.bind(prepared)
    estimate = fit.tree["estimate"]["theta"].values
    values = {k: np.array(v, dtype=float) for k, v in bound.natural(estimate).items()}
    a, b = 1, 2
    values["cov_raw_loading"][b] = values["cov_raw_loading"][a]
    values["cov_t"][a] = values["cov_t"][b] = 1e-9
    values["score_raw"][b] = values["score_raw"][a] + 1e-9
    theta = structure.natural.theta_for(paired._in_chart(fw, values), estimate)
    assert fw.findings(prepared, bound.natural(theta), {}).diagnostics["coinciding_items"]
    assert np.abs(CellDerivatives.at(bound, theta).jac["d"]).max() > 1e8
    how = {}
    assert existence.recession(bound, theta, how) is None and how["check"] == "locked cells"
    monkeypatch.setattr(existence, "locked_cells_identify", lambda *args: False)
    monkeypatch.setattr(existence, "stiemke_certificate", lambda *args: False)
    how = {}
    assert existence.recession(bound, theta, how) is None and how["check"] == "linear programme"


def test_a_run_is_told_to_leave_while_a_point_off_the_plateau_gains(monkeypatch):
    """maximise hands each run a ``leave`` test (checked after its first phase and before its L-BFGS-B
    restarts): true while a candidate off the plateau gains over θ and escapes remain, false at a point
    nothing beats. Toy: ℓ(θ) = −Σ (θ_i − 1)², the "plateau" proposing its maximum."""
    from bayesrank.inference import optimize

    def logp_dlogp(theta):
        return -float(np.sum((theta - 1) ** 2)), -2 * (theta - 1)

    def hessian(theta):
        return -2 * np.eye(theta.size)

    handed = []
    run = optimize.maximise_in_chart
    monkeypatch.setattr(optimize, "maximise_in_chart", lambda *a, **k: handed.append(k.get("leave")) or run(*a, **k))
    theta, _ = optimize.maximise(logp_dlogp, hessian, np.zeros(3), 1.0, plateau=lambda th: [np.ones(3)])
    np.testing.assert_allclose(theta, 1.0)
    leave = handed[0]
    assert leave(np.zeros(3)) and not leave(np.ones(3))
    handed.clear()
    optimize.maximise(logp_dlogp, hessian, np.zeros(3), 1.0)  # no plateau: nothing to leave for
    assert handed == [None]


def test_a_run_leaves_after_its_first_phase_where_a_point_across_an_edge_gains(monkeypatch):
    """The ``leave`` test covers the edge crossings too, and a run consults it already after its first
    phase: where a candidate across the edge gains, the run ends there, before any Newton step, and the
    next starts from the candidate (one crossing). Toy: a concave quadratic with coupled coordinates,
    a first phase of one L-BFGS-B iteration, the "edge" proposing the maximum while θ is elsewhere."""
    from bayesrank.inference import optimize

    A = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 2.0]])
    top = np.array([1.0, -2.0, 3.0])

    def logp_dlogp(theta):
        r = theta - top
        return -float(r @ A @ r), -2 * A @ r

    def hessian(theta):
        return -2 * A

    monkeypatch.setattr(optimize, "FIRST_PHASE", 1)
    runs, newton_calls = [], []
    run, newton = optimize.maximise_in_chart, optimize._newton
    monkeypatch.setattr(optimize, "_newton", lambda *a, **k: newton_calls.append(1) or newton(*a, **k))

    def recorded(*args, **kwargs):
        theta, info = run(*args, **kwargs)
        runs.append((theta, info, len(newton_calls)))
        return theta, info

    monkeypatch.setattr(optimize, "maximise_in_chart", recorded)

    asked = []

    def edge(theta):
        asked.append(theta.copy())
        return [] if np.allclose(theta, top) else [top.copy()]

    theta, info = optimize.maximise(logp_dlogp, hessian, np.zeros(3), 1.0, edge=edge)
    first_theta, first, newton_steps = runs[0]
    assert not np.allclose(first_theta, top)  # (the first phase alone does not reach the maximum)
    assert first["iterations"] == 1 and newton_steps == 0  # it left before Newton's method
    assert info["edge_crossings"] == 1 and len(runs) == 2
    np.testing.assert_allclose(theta, top, atol=1e-8)
    # the candidates where the run left are not asked for again when the next run starts
    assert sum(np.array_equal(a, first_theta) for a in asked) == 1


@pytest.mark.slow
def test_model_17_leaves_the_plateau_and_the_coinciding_pair_for_an_interior_maximum(arena):
    """Main stopped at NLL 1.0048439 with falcon-180b-chat and zephyr-7b-alpha run out and solar / dolphin
    coinciding; one plateau escape after the L-BFGS-B restarts reached 1.0048199, leaving the plateau
    before them (one escape and an edge crossing) 1.0048137, the pair still coinciding after the parted run.
    The run from a moved start (optimize.MOVED_RUNS) converges at an interior maximum, 1.0048109."""
    from bayesrank.papers import leaderbot_model

    fit = br.fit(leaderbot_model(17), arena)
    # (whether the first run stops on the plateau depends on the optimiser's path: the runs timed did)
    assert "runaway_dispersion" not in fit.diagnostics and fit.diagnostics["plateau_escapes"] >= 1
    assert fit.diagnostics["moved_runs"] == 1 and "coinciding_items" not in fit.diagnostics
    assert fit.converged and fit.nll < 1.004812
    assert all(np.isfinite(fit.tree["estimate"][f"{v}_se"].values).all() for v in ("score", "cov_diag"))


def test_coinciding_items_are_parted_and_the_run_kept_where_it_ends_higher(around_falcon, monkeypatch):
    """Two items put on one point of the latent space (s_ab ≈ 1e-18, their means 1e-9 apart) can trap the
    optimiser: every small move loses (their own comparisons lose their fitted odds), so the fit may stop there
    unconverged below the maximum (on this subset, for 54-61 of its 190 pairs, depending on the path's
    rounding). One run from the two parted (:meth:`Framework.parted`) goes on to a converged maximum, and the
    fit says it ran."""
    from bayesrank.inference import optimize

    fw = br.BradleyTerry(ties="drop", k_cov=3)
    prepared = fw.prepare(around_falcon)
    fit = br.fit(fw, around_falcon)
    assert fit.converged and "partings" not in fit.diagnostics
    structure = compiled(fw, prepared)
    bound = structure.bind(prepared)
    estimate = fit.tree["estimate"]["theta"].values
    reached = {k: np.array(v, dtype=float) for k, v in bound.natural(estimate).items()}
    assert fw.parted(reached) == []

    def together(a, b):
        values = {k: v.copy() for k, v in reached.items()}
        values["cov_raw_loading"][b] = values["cov_raw_loading"][a]
        values["cov_t"][a] = values["cov_t"][b] = 1e-9
        values["score_raw"][b] = values["score_raw"][a] + 1e-9
        return structure.natural.theta_for(paired._in_chart(fw, values), estimate)

    # the candidate: the pair parted (s̃_ab the median pair's), in the chart
    a, b = 8, 11
    at = bound.natural(together(a, b))
    (candidate,) = fw.parted(at)
    moved = {k: np.array(v, dtype=float) for k, v in {**at, **candidate}.items()}
    assert paired._coinciding(fw, at) and not paired._coinciding(fw, moved)
    first, second, pair = paired._pair_dispersions(moved)  # (in the chart: every s̃ scaled alike)
    assert 0.9 < pair[(first == a) & (second == b)][0] / np.median(pair) < 1.1
    assert np.isclose(bound.logp_dlogp(structure.natural.theta_for(candidate, together(a, b)))[0],
                      loglik(structure, bound, moved))

    # a trapped estimate: the first of these pairs (each trapped on both tiers in a scan) whose fit stops there
    # (neither parted nor moved runs; the parted run alone below)
    monkeypatch.setattr(optimize, "PARTINGS", 0)
    monkeypatch.setattr(optimize, "MOVED_RUNS", 0)
    tried = []
    for a, b in [(8, 11), (2, 5), (5, 6), (10, 11), (2, 8), (3, 16), (9, 10), (11, 16)]:
        trapped = br.fit(fw, around_falcon, init=together(a, b))
        tried.append((a, b, trapped.nll, trapped.converged))
        if not trapped.converged and trapped.diagnostics.get("coinciding_items"):
            break
    else:
        raise AssertionError(f"no start trapped the fit: {tried}")
    assert trapped.nll > fit.nll + 1e-5
    # the same start with one parting (the runs recorded: which ended with the pair coinciding)
    monkeypatch.setattr(optimize, "PARTINGS", 1)
    ends, run = [], optimize.maximise_in_chart

    def recorded(*args, **kwargs):
        theta, info = run(*args, **kwargs)
        ends.append(bool(paired._coinciding(fw, bound.natural(theta))))
        return theta, info

    monkeypatch.setattr(optimize, "maximise_in_chart", recorded)
    freed = br.fit(fw, around_falcon, init=together(a, b))
    assert freed.converged and "coinciding_items" not in freed.diagnostics and freed.nll < trapped.nll - 1e-5
    # (whether this path stops at the pair again depends on its rounding: where it did, the parted run freed it)
    assert freed.diagnostics.get("partings", 0) == int(any(ends)) and ends[-1] is False
    # without the parting, the run from a moved start (optimize.MOVED_RUNS) leaves the trap as well (where the
    # path stops at the pair: as above, that depends on its rounding)
    monkeypatch.setattr(optimize, "PARTINGS", 0)
    monkeypatch.setattr(optimize, "MOVED_RUNS", 1)
    ends.clear()
    left = br.fit(fw, around_falcon, init=together(a, b))
    assert left.converged and "coinciding_items" not in left.diagnostics
    assert left.diagnostics.get("moved_runs", 0) == int(any(ends)) and ends[-1] is False


def two_bumps(theta):
    """A toy log-likelihood with two concave bumps, the lower at −3 and the higher at +3, and its gradient."""
    low, high = np.exp(-np.sum((theta + 3) ** 2)), 2 * np.exp(-np.sum((theta - 3) ** 2))
    return float(np.log(low + high)), (-2 * (theta + 3) * low - 2 * (theta - 3) * high) / (low + high)


def two_bumps_hessian(theta, h=1e-5):
    return np.array([(two_bumps(theta + h * e)[1] - two_bumps(theta - h * e)[1]) / (2 * h) for e in np.eye(theta.size)])


def test_a_run_from_parted_items_is_dropped_where_it_ends_lower():
    """The run from a parted point replaces θ only where it ends higher, and runs at most PARTINGS times.
    Toy: two concave bumps, θ at the top of the higher one, ``part`` proposing the lower one's side."""
    from bayesrank.inference import optimize

    asked = []

    def part(theta):
        asked.append(theta.copy())
        return [np.full(2, -2.5)]

    theta, info = optimize.maximise(two_bumps, two_bumps_hessian, np.full(2, 2.5), 1.0, part=part)
    np.testing.assert_allclose(theta, 3.0, atol=1e-4)  # the higher bump kept
    # (the pair "still coincides": one run from a moved start follows, and reaches the same top)
    assert info["partings"] == 1 and info["moved_runs"] == 1 and len(asked) == 2
    # from the lower bump's side, the run from the parted point ends higher and replaces θ
    theta, info = optimize.maximise(two_bumps, two_bumps_hessian, np.full(2, -2.5), 1.0,
                                    part=lambda th: [np.full(2, 2.5)] if th[0] < 0 else [])
    np.testing.assert_allclose(theta, 3.0, atol=1e-4)
    assert info["partings"] == 1 and "moved_runs" not in info


def test_a_run_from_a_moved_start_follows_where_the_parted_run_ends_lower(monkeypatch):
    """Where the items still coincide after the parting, one run starts from a moved start of the run
    (optimize.moved_starts, seeded 0) and replaces θ where it ends higher. Toy: the two bumps above, the run
    starting on the lower one, its parting staying there; the moved start (patched) on the higher one's side."""
    from bayesrank.inference import optimize

    moved_from = []

    def moved_starts(x0, count, rng):
        moved_from.append((x0.copy(), count, rng.integers(1 << 30)))
        return [np.full(2, 2.5)]

    monkeypatch.setattr(optimize, "moved_starts", moved_starts)
    start = np.full(2, -2.5)
    theta, info = optimize.maximise(two_bumps, two_bumps_hessian, start, 1.0,
                                    part=lambda th: [np.full(2, -2.4)] if th[0] < 0 else [])
    np.testing.assert_allclose(theta, 3.0, atol=1e-4)
    assert info["partings"] == 1 and info["moved_runs"] == 1
    (x0, count, drawn), = moved_from
    assert np.array_equal(x0, start) and count == 1 and drawn == np.random.default_rng(0).integers(1 << 30)
