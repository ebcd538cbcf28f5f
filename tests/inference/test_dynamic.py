"""The fast path of a fit over time, on simulated arenas whose truth is known."""

import numpy as np
import pandas as pd
import pytest
from scipy.integrate import quad
from scipy.stats import norm

import bayesrank as br
from bayesrank.data.simulate import arena_over_time, battles
from bayesrank.inference.dynamic import fit_time, tilted_moments


@pytest.fixture(scope="module")
def planted():
    """16 items over 12 weeks, 3000 battles a week, two planted changes of ±0.8."""
    rng = np.random.default_rng(11)
    sim = arena_over_time(16, 12, 3000, rng, change_share=0.0, entering=0.0)
    scores = rng.normal(0, 1, 16)
    jumps = {(3, 5): 0.8, (9, 8): -0.8}
    frames = []
    for t in range(12):
        s = scores.copy()
        for (i, at), size in jumps.items():
            if t >= at:
                s[i] += size
        frame = battles(s, 3000, rng)
        frame["date"] = sim.periods[t]
        frames.append(frame)
    data = br.load(pd.concat(frames, ignore_index=True), time_column="date")
    return data, jumps, sim.periods


@pytest.fixture(scope="module")
def fitted(planted):
    data, _, _ = planted
    return br.fit(br.Dynamic(br.BradleyTerry()), data)


def test_planted_changes_are_found_and_nothing_else_is_sure(fitted, planted):
    data, jumps, periods = planted
    found = fitted.changes(0.9)
    expected = {(f"m{i:02d}", periods[t]) for (i, t) in jumps}
    assert set(zip(found["name"], found["period"])) == expected
    for (i, t), size in jumps.items():
        row = found[(found["name"] == f"m{i:02d}") & (found["period"] == periods[t])].iloc[0]
        assert row["probability"] > 0.95
        assert abs(row["size"] - size) < 3 * row["se"] + 0.15


def test_a_constant_item_stays_one_number_and_a_changed_one_steps(fitted):
    paths = fitted.trajectories()
    constant = paths[paths["name"] == "m00"]["score"]
    # the centred score of an unchanged item moves only by the others' jumps over m (0.8 / 16 = 0.05)
    assert constant.max() - constant.min() < 0.12
    for name, at, size in (("m03", 5, 0.8), ("m09", 8, -0.8)):
        moves = np.diff(paths[paths["name"] == name]["score"].to_numpy())
        assert np.argmax(np.abs(moves)) == at - 1
        assert moves[at - 1] == pytest.approx(size * 15 / 16, abs=0.25)


def test_fit_converges_and_says_what_it_learned(fitted):
    diagnostics = fitted.diagnostics
    assert fitted.converged and fitted.method == "map"
    assert 0.3 < diagnostics["slab"] < 2.0 and diagnostics["rate"] < 0.1
    assert diagnostics["half_bandwidth"] <= 16


def test_the_same_fit_gives_the_same_numbers(planted):
    data, _, _ = planted
    one = fit_time(br.Dynamic(br.BradleyTerry()), data, draws=200, random_seed=3)
    two = fit_time(br.Dynamic(br.BradleyTerry()), data, draws=200, random_seed=3)
    for name in ("score", "jump", "change_probability"):
        np.testing.assert_array_equal(one["estimate"][name].values, two["estimate"][name].values)
    np.testing.assert_array_equal(one["posterior"]["score"].values, two["posterior"]["score"].values)


def test_tilted_moments_match_quadrature():
    """The EP update's slab weight and moments against numerical integration of cavity × mixture."""
    slab, rate, kappa = 0.5, 0.1, 0.1
    tau, nu = np.array([3.0, 40.0, 3.0]), np.array([0.5, -2.0, 0.5])
    mean, var = np.array([0.9, -0.05, 0.4]), np.array([0.02, 0.01, 0.02])
    tilted = tilted_moments(mean, var, (tau, nu), slab, rate, kappa)
    # the third cavity sits between spike and slab: its tilted mixture is wider than the cavity, so the
    # matching site would have a negative precision and the site is kept
    assert (tilted.sites[0][2], tilted.sites[1][2]) == (3.0, 0.5)
    for k in range(2):
        v_c = 1 / (1 / var[k] - tau[k])
        m_c = (mean[k] / var[k] - nu[k]) * v_c

        def prior(j, part=None):
            spike, wide = (1 - rate) * norm.pdf(j, 0, kappa * slab), rate * norm.pdf(j, 0, slab)
            return {None: spike + wide, "slab": wide}[part]

        z = quad(lambda j: norm.pdf(j, m_c, np.sqrt(v_c)) * prior(j), -5, 5, points=[0, m_c], limit=200)[0]
        z_slab = quad(lambda j: norm.pdf(j, m_c, np.sqrt(v_c)) * prior(j, "slab"), -5, 5, points=[0, m_c])[0]
        mu = quad(lambda j: j * norm.pdf(j, m_c, np.sqrt(v_c)) * prior(j), -5, 5, points=[0, m_c], limit=200)[0] / z
        second = quad(lambda j: j**2 * norm.pdf(j, m_c, np.sqrt(v_c)) * prior(j), -5, 5, points=[0, m_c],
                      limit=200)[0] / z
        assert tilted.q[k] == pytest.approx(z_slab / z, rel=1e-6)
        new_tau, new_nu = tilted.sites[0][k], tilted.sites[1][k]
        assert 1 / (new_tau + 1 / v_c) == pytest.approx(second - mu**2, rel=1e-6)
        assert (new_nu + m_c / v_c) / (new_tau + 1 / v_c) == pytest.approx(mu, rel=1e-6, abs=1e-9)


def _three_items_and_a_solo(solo_outcome):
    rows = []
    for week in ("2024-01-01", "2024-01-08", "2024-01-29"):     # no battles on Jan 15 and 22
        for a, b, w in (("x", "y", "model_a"), ("y", "z", "model_b"), ("x", "z", "model_a"), ("z", "x", "model_a"),
                        ("y", "x", "model_a"), ("z", "y", "model_b")):
            rows.append((a, b, w, week))
    rows.append(("x", "solo", solo_outcome, "2024-01-29"))
    return br.load(pd.DataFrame(rows, columns=["model_a", "model_b", "winner", "date"]), time_column="date")


def test_gaps_and_single_battles_are_said_in_words():
    result = br.fit(br.Dynamic(br.BradleyTerry()), _three_items_and_a_solo("tie"))   # a tie bounds its level
    said = " ".join(result.warnings)
    assert "2024-01-15, 2024-01-22" in said and "solo was seen in one comparison only" in said
    assert np.isfinite(result.trajectories()["upper"]).all()


def test_an_item_whose_level_is_unbounded_is_refused_naming_it():
    # one loss and nothing else: its level goes to −∞ under the levels' flat prior, and with it every
    # period's centring; the fast path refuses rather than report intervals of thousands
    with pytest.raises(br.DataError, match=r"never lose to the groups after them \(\{x, y, z\} > \{solo\}\).*"
                                           "solo was seen in one comparison only"):
        br.fit(br.Dynamic(br.BradleyTerry()), _three_items_and_a_solo("model_a"))


def test_wrong_options_name_the_function():
    with pytest.raises(br.ModelSpecError, match="fit_time: draws must be a positive integer"):
        fit_time(br.Dynamic(br.BradleyTerry()), br.load("arena-2024"), draws=0)
    with pytest.raises(br.ModelSpecError, match=r"n_draws is not an option of bayesrank\.fit\(method='map'\); "
                                                "its options: draws, random_seed, maxiter"):
        br.fit(br.Dynamic(br.BradleyTerry()), br.load("arena-2024"), n_draws=10)
