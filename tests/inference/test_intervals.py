"""MAP interval methods: Wald, sandwich (per comparison) and the bootstrap; inverse pair-count
reweighting. References: a NumPy sandwich written here from the BT formulas, a NumPy weighted
BT likelihood maximised by SciPy, and LMArena's ``arena-rank`` (when installed)."""

import importlib.util

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

import bayesrank as br
from bayesrank.data.simulate import item_names
from bayesrank.data.weights import inverse_pair_count


def bt_sandwich_numpy(data, scores):
    """BT with ties as halves: I⁻¹ M I⁻¹ per comparison (a win scores 1 − p, a loss −p, a tie
    ½ − p in d = s_a − s_b), with the pseudo-inverse on the zero-sum scores."""
    m = data.n_items
    p = 1 / (1 + np.exp(-(scores[data.a] - scores[data.b])))
    w, l, t = data.wins_a, data.wins_b, data.ties
    meat = w * (1 - p) ** 2 + l * p**2 + t * (0.5 - p) ** 2
    info = (w + l + t) * p * (1 - p)
    H, M = np.zeros((m, m)), np.zeros((m, m))
    for X, v in ((H, info), (M, meat)):
        np.add.at(X, (data.a, data.a), v)
        np.add.at(X, (data.b, data.b), v)
        np.add.at(X, (data.a, data.b), -v)
        np.add.at(X, (data.b, data.a), -v)
    Hp = np.linalg.pinv(H)
    return Hp @ M @ Hp, Hp


@pytest.fixture(scope="module")
def ties_data():
    rng = np.random.default_rng(4)
    m = 7
    s = np.linspace(-1, 1, m)
    a, b = np.triu_indices(m, k=1)
    d = s[a] - s[b]
    w = np.column_stack([np.exp(d / 2), np.exp(-d / 2), np.full_like(d, np.exp(-0.3))])
    counts = np.array([rng.multinomial(rng.integers(40, 400), pi / pi.sum()) for pi in w])
    names = np.asarray(item_names(m), dtype=object)
    return br.Comparisons.from_cells(names[a], names[b], counts[:, 0], counts[:, 1], counts[:, 2])


def test_default_interval_methods(ties_data):
    assert br.BradleyTerry().default_intervals == "sandwich"          # ties as halves: pseudo-likelihood
    assert br.BradleyTerry(ties="drop").default_intervals == "wald"
    assert br.Davidson().default_intervals == "wald"
    assert br.JudgeAware().default_intervals == "wald"               # the paper's intervals
    fit = br.fit(br.BradleyTerry(), ties_data)
    attrs = fit.tree["estimate"].attrs
    assert (attrs["interval_method"], attrs["interval"], attrs["pseudo_likelihood"]) == ("sandwich", "wald", 1)
    assert "sandwich" in fit.to_json()["covariance"] and fit.to_json()["interval_method"] == "sandwich"
    assert br.fit(br.Davidson(), ties_data).interval_method == "wald"
    assert br.fit(br.Davidson(), ties_data, reweight=True).interval_method == "sandwich"
    with pytest.raises(br.ModelSpecError, match="intervals must be one of"):
        br.fit(br.Davidson(), ties_data, intervals="jackknife")


def test_sandwich_equals_numpy_reference(ties_data):
    fit = br.fit(br.BradleyTerry(), ties_data, intervals="sandwich")
    s = fit.scores().loc[list(ties_data.items)].to_numpy()
    cov, inv_info = bt_sandwich_numpy(ties_data, s)
    np.testing.assert_allclose(fit.tree["estimate"]["score_se"].values, np.sqrt(np.diag(cov)), rtol=1e-6)
    np.testing.assert_allclose(fit.tree["estimate"]["score_cov"].values, cov, rtol=1e-6, atol=1e-12)
    wald = br.fit(br.BradleyTerry(), ties_data, intervals="wald")
    np.testing.assert_allclose(wald.tree["estimate"]["score_se"].values, np.sqrt(np.diag(inv_info)), rtol=1e-6)
    # ties counted as halves score less than the model's own variance: the sandwich is narrower
    assert np.all(fit.tree["estimate"]["score_se"].values < wald.tree["estimate"]["score_se"].values)


@pytest.mark.parametrize("framework, reweight", [(br.BradleyTerry(), False), (br.Davidson(), True)])
def test_large_model_sandwich_is_a_factor_of_the_same_covariance(ties_data, monkeypatch, framework, reweight):
    """Beyond DENSE_COVARIANCE_MAX free coordinates the sandwich is kept as a factor (no n × n
    covariance stored): the same standard errors as the dense sandwich (and, for BT with ties as
    halves, as the NumPy reference), and rank intervals from its draws."""
    import bayesrank.inference.map as map_module

    dense = br.fit(framework, ties_data, intervals="sandwich", reweight=reweight)
    monkeypatch.setattr(map_module, "DENSE_COVARIANCE_MAX", 2)
    large = br.fit(framework, ties_data, intervals="sandwich", reweight=reweight)
    est = large.tree["estimate"]
    assert est.attrs["covariance_stored"] == 0 and est.attrs["interval_method"] == "sandwich"
    for name in [v for v in dense.tree["estimate"].data_vars if v.endswith("_se")]:
        np.testing.assert_allclose(est[name].values, dense.tree["estimate"][name].values, rtol=1e-6, atol=1e-12)
    if not reweight:
        s = large.scores().loc[list(ties_data.items)].to_numpy()
        np.testing.assert_allclose(est["score_se"].values, np.sqrt(np.diag(bt_sandwich_numpy(ties_data, s)[0])),
                                   rtol=1e-6)
    board = large.leaderboard()
    assert board["rank_lower"].notna().all() and (board["rank_lower"] <= board["rank_upper"]).all()


def test_sandwich_for_proper_likelihood_is_close_to_wald(ties_data):
    """Davidson is well specified for Davidson data: the sandwich agrees with Wald to sampling error."""
    sand = br.fit(br.Davidson(), ties_data, intervals="sandwich").tree["estimate"]["score_se"].values
    wald = br.fit(br.Davidson(), ties_data, intervals="wald").tree["estimate"]["score_se"].values
    np.testing.assert_allclose(sand, wald, rtol=0.15)


@pytest.mark.skipif(importlib.util.find_spec("arena_rank") is None, reason="arena-rank is not installed")
def test_sandwich_equals_arena_rank(arena):
    """On plain BT of arena-2024 our sandwich intervals equal arena-rank's within 1%, in the same run:
    every model against arena-rank's Hessian and score covariance at its own ratings, and the
    median against its reported intervals (which add a ridge of 1e-5 × N to its Hessian — it has
    no zero-sum constraint — and so shrink the intervals of the models with the fewest votes)."""
    import jax.numpy as jnp
    from arena_rank.models.bradley_terry import BradleyTerry as ArenaBT
    from arena_rank.utils.data_utils import PairDataset

    rows = [(y, col > 0, col) for y, col in ((1.0, arena.wins_a), (0.0, arena.wins_b), (0.5, arena.ties))]
    pairs = np.concatenate([np.column_stack([arena.a[k], arena.b[k]]) for _, k, _ in rows])
    outcomes = np.concatenate([np.full(k.sum(), y) for y, k, _ in rows])
    counts = np.concatenate([col[k] for _, k, col in rows])
    ds = PairDataset(competitors=list(arena.items), pairs=jnp.asarray(pairs, dtype=jnp.int32),
                     outcomes=jnp.asarray(outcomes), counts=jnp.asarray(counts), weights=jnp.ones(len(counts)),
                     opt_weights=jnp.asarray(counts))
    model = ArenaBT(arena.n_items)
    res = model.compute_ratings_and_cis(ds, ci_method="sandwich")
    fit = br.fit(br.BradleyTerry(), arena, intervals="sandwich")
    board = fit.leaderboard().set_index("name").loc[list(arena.items)]
    scale = 400 / np.log(10)
    ours = (board["upper"] - board["lower"]).to_numpy() * scale
    theirs = np.asarray(res["rating_upper"]) - np.asarray(res["rating_lower"])
    assert np.median(ours / theirs) == pytest.approx(1, abs=0.01)
    H, M = ArenaBT.compute_hessian_and_covariance(model.params["ratings"], ds.pairs, ds.outcomes, ds.counts,
                                                  ds.opt_weights, 0.0, arena.n_items)
    Hp = np.linalg.pinv(np.asarray(H))
    exact = 2 * 1.959963984540054 * np.sqrt(np.diag(Hp @ np.asarray(M) @ Hp)) * scale
    np.testing.assert_allclose(ours, exact, rtol=0.01)


def test_bootstrap_is_seeded_and_agrees_with_sandwich(ties_data):
    boot = br.fit(br.BradleyTerry(), ties_data, intervals="bootstrap", n_boot=400, random_seed=3)
    again = br.fit(br.BradleyTerry(), ties_data, intervals="bootstrap", n_boot=400, random_seed=3)
    sand = br.fit(br.BradleyTerry(), ties_data, intervals="sandwich")
    est = boot.tree["estimate"]
    assert (est.attrs["interval"], est.attrs["interval_method"], est.attrs["point"]) == ("quantile", "bootstrap", "mle")
    assert boot.tree["posterior"].sizes["draw"] == 400 and boot.diagnostics["bootstrap"]["n_failed"] == 0
    np.testing.assert_array_equal(est["score_se"].values, again.tree["estimate"]["score_se"].values)
    np.testing.assert_allclose(boot.scores(), sand.scores(), rtol=0, atol=0)   # the point is the MLE
    np.testing.assert_allclose(est["score_se"].values, sand.tree["estimate"]["score_se"].values, rtol=0.15)
    lower, upper = boot.leaderboard().set_index("name")[["lower", "upper"]].T.to_numpy()
    draws = boot.tree["posterior"]["score"].values[0]
    order = list(boot.leaderboard()["name"])
    idx = [list(ties_data.items).index(n) for n in order]
    np.testing.assert_allclose(lower, np.quantile(draws[:, idx], 0.025, axis=0))
    np.testing.assert_allclose(upper, np.quantile(draws[:, idx], 0.975, axis=0))
    # every replicate is the MLE of its resample: a random one refitted from scratch agrees
    assert boot.differences()["difference"].iloc[0] == pytest.approx(sand.differences()["difference"].iloc[0])


def test_bootstrap_refits_are_maxima(ties_data):
    """Replicates reproduce a direct fit of a resample drawn with the same generator."""
    from bayesrank.inference.intervals import bootstrap, comparison_units
    from bayesrank.inference.structure import structure_of

    fw = br.Davidson()
    prepared = fw.prepare(ties_data)
    bound = structure_of(fw, prepared).bind(prepared)
    fit = br.fit(fw, ties_data)
    theta = fit.tree["estimate"]["theta"].values
    units = comparison_units(fw, ties_data, prepared)
    thetas, info = bootstrap(bound, theta, units, 3, np.random.default_rng(0), maxiter=100)
    draw = np.random.default_rng(0).multinomial(int(units.n), units.counts.ravel() / units.n, size=3)[2]
    counts = draw.reshape(units.counts.shape)
    again = br.Comparisons.from_cells(np.asarray(ties_data.items)[ties_data.a],
                                      np.asarray(ties_data.items)[ties_data.b],
                                      counts[:, 0], counts[:, 1], counts[:, 2], items=ties_data.items)
    direct = br.fit(fw, again).tree["estimate"]["theta"].values
    np.testing.assert_allclose(thetas[2], direct, atol=1e-7)


def test_reweighting_equals_numpy_weighted_likelihood():
    rng = np.random.default_rng(2)
    m = 6
    s = np.linspace(-0.8, 0.8, m)
    a, b = np.triu_indices(m, k=1)
    n = rng.integers(20, 2000, a.size)
    wins = rng.binomial(n, 1 / (1 + np.exp(-(s[a] - s[b]))))
    names = np.asarray(item_names(m), dtype=object)
    data = br.Comparisons.from_cells(names[a], names[b], wins, n - wins)
    w = 1 / np.maximum(n, 50)
    w = w * n.sum() / np.sum(w * n)
    np.testing.assert_allclose(inverse_pair_count(data), w)

    def nll(x):
        x = x - x.mean()
        d = x[a] - x[b]
        return np.sum(w * (wins * np.logaddexp(0, -d) + (n - wins) * np.logaddexp(0, d)))

    ref = minimize(nll, np.zeros(m), method="BFGS", options={"gtol": 1e-10}).x
    fit = br.fit(br.BradleyTerry(ties="drop"), data, reweight=True)
    np.testing.assert_allclose(fit.scores().to_numpy(), ref - ref.mean(), atol=1e-6)
    assert fit.interval_method == "sandwich" and fit.to_json()["reweighted"]
    unweighted = br.fit(br.BradleyTerry(ties="drop"), data)
    assert not np.allclose(fit.scores(), unweighted.scores(), atol=1e-3)


def test_per_comparison_units_follow_the_outcome_map(ties_data):
    from bayesrank.inference.intervals import comparison_units

    for fw in (br.BradleyTerry(), br.BradleyTerry(ties="drop"), br.Davidson(), br.RaoKupper()):
        prepared = fw.prepare(ties_data)
        units = comparison_units(fw, ties_data, prepared)
        np.testing.assert_allclose(units.cell_counts(), prepared.counts())
        assert units.n == ties_data.n_comparisons
    frame = pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "x"], "winner": ["tie", "model_a"]})
    half = br.BradleyTerry().prepare(br.load(frame))   # two cells: x shown first, y shown first
    assert half.counts().sum(axis=0).tolist() == [0.5, 1.5, 0.0]


# ---------------------------------------------------------------- intervals="none": point estimates only
@pytest.fixture(scope="module")
def arena_fits():
    data = br.load("arena-2024")
    fw = br.BradleyTerry()
    return br.fit(fw, data), br.fit(fw, data, intervals="none")


def test_point_estimates_only_match_the_default_fit(arena_fits):
    full, points = arena_fits
    assert points.converged and full.converged
    np.testing.assert_allclose(points.scores().to_numpy(), full.scores().to_numpy(), rtol=0, atol=1e-10)
    assert points.nll == pytest.approx(full.nll, rel=1e-12)
    assert points.diagnostics["min_information_eigenvalue"] == pytest.approx(
        full.diagnostics["min_information_eigenvalue"], rel=1e-9)
    assert points.diagnostics["mle_exists"] and points.interval_method == "none"
    tree = points.tree
    assert "posterior" not in tree.children and "posterior" in full.tree.children
    assert not any(name.endswith(("_se", "_cov")) for name in tree["estimate"].data_vars)
    assert tree["estimate"].attrs["interval"] == "none"


def test_results_without_intervals(arena_fits, tmp_path):
    full, points = arena_fits
    board = points.leaderboard(elo=True)
    assert not {"se", "lower", "upper", "rank_lower", "rank_upper", "elo_lower", "elo_upper"} & set(board)
    assert list(board["name"]) == list(full.leaderboard()["name"])
    np.testing.assert_allclose(board["elo"], full.leaderboard(elo=True)["elo"], atol=1e-8)
    assert list(points.parameters().columns) == ["parameter", "index", "estimate"]
    items = points.to_json()["items"]
    assert set(items[0]) == {"name", "rank", "score", "elo"}
    assert list(points.elo().columns) == ["rank", "elo"]
    for ask in (points.rank_sets, points.rank_distribution, points.top_set):
        with pytest.raises(br.BayesrankError):
            ask()
    with pytest.raises(br.BayesrankError, match="point estimates only .* refit with intervals="):
        points.differences()
    loaded = br.Fit.load(points.save(tmp_path / "points.nc"))
    pd.testing.assert_frame_equal(loaded.leaderboard(), points.leaderboard())


def test_cli_point_estimates_only(capsys):
    from bayesrank.cli import main

    assert main(["fit", "arena-2024", "--model", "bt", "--intervals", "none", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "point estimates only" in out and "rank_lower" not in out
    assert main(["fit", "arena-2024", "--model", "bt", "--intervals", "none", "--format", "json"]) == 0
    import json

    got = json.loads(capsys.readouterr().out)
    assert got["interval"] == "none" and got["converged"] and "se" not in got["items"][0]
    assert main(["fit", "arena-2024", "--model", "bt", "--intervals", "none", "--rank-sets"]) == 2
    assert "intervals='none'" in capsys.readouterr().err


def test_point_estimates_only_refused_for_a_symmetry():
    with pytest.raises(br.ModelSpecError, match="continuous symmetry"):
        br.fit(br.HJA(rank=1), "mtbench-judges", intervals="none")
