"""MAP = MLE with exact asymptotic intervals, on the bundled arena data and simulated data."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import bayesrank as br
from bayesrank.inference.information import information
from bayesrank.inference.map import RESTART_AGREEMENT, chosen_run
from bayesrank.inference.optimize import Optimum
from bayesrank.inference.structure import structure_of
from bayesrank.model.papers import LEADERBOT_D1, leaderbot_model
from tests.conftest import around, reference_loglik, simulate_counts

#: Table D.1 rows fitted on the arena data in the fast suite (the 30-model grid: models/, checks).
FAST_MODELS = (1, 4, 7, 8, 19, 20)


@pytest.mark.parametrize("model_id", FAST_MODELS, ids=[f"model{m}" for m in FAST_MODELS])
def test_arena_nll_at_or_below_paper_table(arena, model_id):
    framework = leaderbot_model(model_id)
    fit = br.fit(framework, arena)
    assert fit.converged, fit.diagnostics
    assert fit.diagnostics["grad_norm"] < 1e-6
    assert fit.nll <= LEADERBOT_D1[model_id][1] + 1e-4
    assert fit.scores().sum() == pytest.approx(0.0, abs=1e-9)
    board = fit.leaderboard()
    assert list(board["name"][:2]) == ["chatgpt-4o-latest", "gemini-1.5-pro-exp-0801"]
    if framework.name == "bt" or framework.k_tie == 0:
        eta = float(fit.tree["estimate"]["eta_raw"]) if framework.name != "bt" else None
        used = fit.n_comparisons
        assert -reference_loglik(framework, arena, fit.scores().to_numpy(), eta) / used == pytest.approx(
            fit.nll, rel=1e-12)


def test_paper_cross_entropies_model19(arena):
    ce = br.fit(br.Davidson(k_tie=0), arena).cross_entropies()
    # Table D.1 row 19: H_win 0.3409, H_loss 0.3461, H_tie 0.3231 (the MLE is unique here)
    assert ce["win"] == pytest.approx(0.3409, abs=1e-4)
    assert ce["loss"] == pytest.approx(0.3461, abs=1e-4)
    assert ce["tie"] == pytest.approx(0.3231, abs=1e-4)


def test_nested_tie_intercept_fits_at_least_as_well_as_global(arena):
    base = br.fit(br.RaoKupper(k_tie=0), arena)
    nested = br.fit(br.RaoKupper(k_tie=1, tie_intercept=True), arena)
    assert nested.nll <= base.nll + 1e-9
    assert nested.n_params == base.n_params + arena.n_items


def _bt_information(data, scores):
    """Observed information of Bradley-Terry in numpy, written independently of the package."""
    m = data.n_items
    d = scores[data.a] - scores[data.b]
    p = 1 / (1 + np.exp(-d))
    w = data.totals * p * (1 - p)
    info = np.zeros((m, m))
    np.add.at(info, (data.a, data.a), w)
    np.add.at(info, (data.b, data.b), w)
    np.add.at(info, (data.a, data.b), -w)
    np.add.at(info, (data.b, data.a), -w)
    return info


def test_bt_map_is_mle_with_exact_wald_covariance():
    rng = np.random.default_rng(3)
    truth = np.linspace(-1, 1, 6)
    data = simulate_counts(truth, 200, rng)
    fit = br.fit(br.BradleyTerry(ties="drop"), data)
    s = fit.scores().to_numpy()
    # score equations of the MLE: observed wins = expected wins for every item
    d = s[data.a] - s[data.b]
    p = 1 / (1 + np.exp(-d))
    m = data.n_items
    observed = np.bincount(data.a, data.wins_a, m) + np.bincount(data.b, data.wins_b, m)
    expected = np.bincount(data.a, data.totals * p, m) + np.bincount(data.b, data.totals * (1 - p), m)
    np.testing.assert_allclose(observed, expected, atol=1e-6)
    # covariance of the centred scores = Moore-Penrose inverse of the information
    cov = np.linalg.pinv(_bt_information(data, s))
    np.testing.assert_allclose(fit.tree["estimate"]["score_cov"].values, cov, rtol=1e-6, atol=1e-12)
    diffs = fit.differences().set_index(["item_i", "item_j"])
    se01 = np.sqrt(cov[0, 0] + cov[1, 1] - 2 * cov[0, 1])
    assert diffs.loc[("m01", "m00"), "se"] == pytest.approx(se01, rel=1e-6)


def test_rank_intervals_and_leaderboard_columns(arena):
    fit = br.fit(br.Davidson(k_tie=0), arena)
    board = fit.leaderboard()
    expected = ["rank", "name", "score", "se", "lower", "upper", "rank_lower", "rank_upper", "provisional",
                "n_comparisons", "win_rate", "tie_rate", "loss_rate", "pred_win_rate", "pred_tie_rate",
                "pred_loss_rate"]
    assert list(board.columns) == expected
    assert (board["rank_lower"] <= board["rank"]).all() and (board["rank"] <= board["rank_upper"]).all()
    assert (board["lower"] < board["score"]).all() and (board["score"] < board["upper"]).all()
    assert board["n_comparisons"].sum() == 2 * arena.n_comparisons
    # Davidson score equations: per item, predicted net wins equal observed net wins;
    # the eta equation: predicted ties in total equal observed ties
    net_obs = board["win_rate"] - board["loss_rate"]
    net_pred = board["pred_win_rate"] - board["pred_loss_rate"]
    np.testing.assert_allclose(net_pred, net_obs, atol=1e-6)
    total_ties = (board["pred_tie_rate"] * board["n_comparisons"]).sum() / 2
    assert total_ties == pytest.approx(arena.ties.sum(), rel=1e-6)
    dist = fit.rank_distribution()
    np.testing.assert_allclose(dist.sum(axis=1), 1.0)
    np.testing.assert_allclose(dist.sum(axis=0), 1.0)
    assert list(dist.index) == list(board["name"])  # best first, as the leaderboard


def test_singular_information_is_reported_in_words():
    # one item beats everyone: its MLE is infinite; the optimiser cannot converge to a finite MLE
    names = np.array(["a", "b", "c"], dtype=object)
    data = br.Comparisons.from_cells(names[[0, 0, 1]], names[[1, 2, 2]], [10, 10, 5], [0, 0, 5])
    fit = br.fit(br.BradleyTerry(ties="drop"), data)
    text = " ".join(fit.warnings)
    assert "never lose to the groups after them ({a} > {b, c})" in text
    assert not fit.converged and fit.diagnostics["mle_exists"] is False


def test_save_load_roundtrip(tmp_path, arena):
    fit = br.fit(br.Davidson(k_tie=1), arena)
    path = fit.save(tmp_path / "fit.nc")
    again = br.Fit.load(path)
    pd.testing.assert_frame_equal(again.leaderboard(), fit.leaderboard())
    assert again.nll == pytest.approx(fit.nll, abs=1e-12)
    assert again.framework == fit.framework
    assert again.diagnostics == fit.diagnostics
    assert dict(again.data.dropped) == dict(fit.data.dropped)


def test_model_option_errors():
    with pytest.raises(br.ModelSpecError, match="ties must be 'half' or 'drop'"):
        br.BradleyTerry(ties="both")
    with pytest.raises(br.ModelSpecError, match="tie_intercept only applies"):
        br.Davidson(k_tie=0, tie_intercept=True)
    with pytest.raises(br.ModelSpecError, match="non-negative integer"):
        br.RaoKupper(k_tie=-1)


def test_tie_model_without_ties_is_refused():
    rng = np.random.default_rng(0)
    data = simulate_counts(np.array([0.0, 0.5, 1.0]), 50, rng)
    with pytest.raises(br.DataError, match="no ties"):
        br.fit(br.Davidson(), data)


def test_predict_with_wald_intervals_for_any_pair(arena):
    fit = br.fit(br.Davidson(k_tie=1), arena)
    pred = fit.predict(["chatgpt-4o-latest", "gpt-4-0314"], ["gemini-1.5-pro-exp-0801", "llama-13b"])
    p = pred[["p_win_a", "p_win_b", "p_tie"]].to_numpy()
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert (pred["p_win_a_lower"] < pred["p_win_a"]).all() and (pred["p_win_a"] < pred["p_win_a_upper"]).all()
    # agrees with the fitted cell probabilities for a compared pair
    items = list(arena.items)
    a, b = items.index("chatgpt-4o-latest"), items.index("gemini-1.5-pro-exp-0801")
    cell = np.flatnonzero((fit.model_data.a == min(a, b)) & (fit.model_data.b == max(a, b)))[0]
    cell_p = np.exp(fit.tree["estimate"]["cell_log_probs"].values[cell])
    if a > b:
        cell_p = cell_p[[1, 0, 2]]
    np.testing.assert_allclose(p[0], cell_p, rtol=1e-10)
    with pytest.raises(br.BayesrankError, match="unknown item"):
        fit.predict("gpt-5", "llama-13b")


def test_predict_from_draws_a_few_cells_at_a_time(arena, monkeypatch):
    """Predictions from draws (here bootstrap replicates) are made a bounded number of draw × cell
    rows at a time: three cells at a time give exactly the numbers all of them at once give, and
    each call of the per-cell kernels sees at most that many cells."""
    from bayesrank.inference.structure import Structure
    from bayesrank.results import predict as predict_module

    fit = br.fit(br.BradleyTerry(), arena, intervals="bootstrap", n_boot=40)
    items = list(arena.items)
    a, b = items[:7], items[7:14]
    monkeypatch.setattr(predict_module, "ROWS_AT_ONCE", 10**9)
    at_once = fit.predict(a, b)
    seen = []
    log_probs = Structure.log_probs

    def counted(self, nat, cells, draws=False):
        seen.append(len(cells["item_a"]))
        return log_probs(self, nat, cells, draws)

    monkeypatch.setattr(Structure, "log_probs", counted)
    monkeypatch.setattr(predict_module, "ROWS_AT_ONCE", 3 * 40)
    chunked = fit.predict(a, b)
    pd.testing.assert_frame_equal(chunked, at_once)
    assert max(n for n in seen[:-1]) == 3 and sum(seen[:-1]) == 7  # (the last call: the MLE's own)
    assert (chunked["p_win_a_lower"] < chunked["p_win_a_upper"]).all()


def _pymc_gradient(framework, data):
    """θ ↦ the gradient of the log-likelihood by PyMC's own graph of the model (flat priors), on
    the free coordinates in the model's order: an independent route to the derivatives."""
    model, _ = framework.build(data, "flat")
    dlogp = model.compile_dlogp(jacobian=False)
    start = model.initial_point()
    names = [v.name for v in model.value_vars]
    edges = np.cumsum([0] + [start[name].size for name in names])

    def gradient(theta):
        return dlogp({name: theta[edges[k]:edges[k + 1]].reshape(start[name].shape) for k, name in enumerate(names)})

    return gradient


def _fd_hessian(framework, data, theta, step=1e-5):
    """Central differences of the PyMC graph's gradient (an independent route to the Hessian)."""
    gradient = _pymc_gradient(framework, data)
    cols = []
    for k in range(theta.size):
        e = np.zeros_like(theta)
        e[k] = step
        cols.append((gradient(theta + e) - gradient(theta - e)) / (2 * step))
    H = np.column_stack(cols)
    return (H + H.T) / 2


@pytest.mark.parametrize("framework", [br.BradleyTerry(), br.RaoKupper(k_tie=1),
                                       br.Davidson(k_tie=1, tie_intercept=True)],
                         ids=lambda f: f.label)
def test_exact_hessian_matches_finite_differences_even_at_zero_scores(framework):
    """The Hessian is exact everywhere, including the all-zero start where |d| has a kink if
    a link is written with abs(); the MAP preconditioner is taken there."""
    rng = np.random.default_rng(7)
    data = framework.prepare(simulate_counts(np.array([-0.5, 0.0, 0.2, 0.6]), 80, rng, eta=-0.4))
    bound = structure_of(framework, data).bind(data)
    for theta in (bound.x0, bound.x0 + 0.1):
        np.testing.assert_allclose(-information(bound, theta), _fd_hessian(framework, data, theta), rtol=1e-6,
                                   atol=1e-6)


@pytest.mark.slow
def test_a_thurstonian_rank_three_model_converges_by_the_kkt_conditions(arena):
    """Davidson k_tie=1, k_cov=3 (paper model 28): a log-likelihood that is not concave, where the
    trust region follows negative curvature to a maximum: the gradient vanishes and the information
    is positive definite there, at or below the paper's NLL."""
    fit = br.fit(br.Davidson(k_tie=1, k_cov=3), arena)
    d = fit.diagnostics
    assert d["converged"] and d["grad_norm"] < 1e-8 and d["min_information_eigenvalue"] > 0
    assert fit.nll < LEADERBOT_D1[28][1] + 1e-4


def test_mle_that_does_not_exist_reports_no_estimates():
    """Ford's condition: {a, b} never lose to {c, d}; every item wins and loses somewhere."""
    names = np.array(["a", "b", "c", "d"], dtype=object)
    a, b = names[[0, 2, 0, 1]], names[[1, 3, 2, 3]]
    data = br.Comparisons.from_cells(a, b, [5, 5, 4, 6], [5, 5, 0, 0])
    fit = br.fit(br.BradleyTerry(ties="drop"), data)
    assert fit.diagnostics["mle_exists"] is False and not fit.converged
    text = " ".join(fit.warnings)
    assert "does not exist" in text and "{a, b} > {c, d}" in text
    assert fit.scores().isna().all()
    assert fit.leaderboard()["rank"].isna().all()
    assert fit.to_json()["mle_exists"] is False
    # a tie between the groups links them both ways: the Davidson MLE exists
    tied = br.Comparisons.from_cells(a, b, [5, 5, 4, 6], [5, 5, 0, 0], [1, 1, 1, 1])
    assert br.fit(br.Davidson(), tied).diagnostics["mle_exists"] is True


@pytest.mark.parametrize(
    "framework",
    [br.BradleyTerry(), br.RaoKupper(k_tie=0), br.Davidson(k_tie=1), br.RaoKupper(k_tie=2, tie_intercept=True),
     br.Davidson(k_tie=3), br.BradleyTerry(k_cov=0), br.Davidson(k_tie=1, k_cov=0), br.RaoKupper(k_cov=1),
     # one covariance case per link in the default tier; the larger ones (a compilation each) in the slow tier
     *(pytest.param(f, marks=pytest.mark.slow, id=f.label) for f in (
         br.BradleyTerry(k_cov=2), br.Davidson(k_tie=2, k_cov=3),
         br.RaoKupper(k_tie=2, tie_intercept=True, k_cov=2, threshold="abs")))],
    ids=lambda f: f.label,
)
def test_structured_hessian_equals_finite_differences(framework):
    """The Hessian assembled from the per-cell kernels (chain rule through z = Δμ̃/√s̃ for the
    covariance models) equals finite differences of the PyMC graph's gradient away from the optimum."""
    rng = np.random.default_rng(5)
    data = framework.prepare(simulate_counts(np.array([-0.7, -0.1, 0.0, 0.3, 0.5]), 60, rng, eta=-0.3))
    bound = structure_of(framework, data).bind(data)
    theta = bound.x0 + rng.normal(0, 0.2, bound.n_free)
    np.testing.assert_allclose(-information(bound, theta), _fd_hessian(framework, data, theta), rtol=1e-6, atol=1e-5)


def test_paper_form_rao_kupper_reproduces_model_8(arena):
    """threshold='abs' (leaderbot's |h| floored at 0.01, smoothed) gives the paper's model 8 NLL;
    the default softplus form fits better (it is a different model)."""
    paper = br.fit(br.RaoKupper(k_tie=1, threshold="abs"), arena)
    assert paper.converged
    assert paper.nll == pytest.approx(LEADERBOT_D1[8][1], abs=1e-4)
    assert br.fit(br.RaoKupper(k_tie=1), arena).nll < paper.nll - 0.002
    with pytest.raises(br.ModelSpecError, match="threshold"):
        br.RaoKupper(threshold="clip")


def test_a_non_finite_information_at_the_estimate_is_said_in_words(monkeypatch):
    """Rao–Kupper k_tie=20 on arena-2024 (Table D.1) ends where tie thresholds of tie-free pairs
    make a cell's curvature overflow: the fit must say so, not stop with an internal error."""
    import bayesrank.inference.map as map_module

    real = map_module.information_matrix

    def information(bound, theta, kind="observed", **kwargs):
        out = real(bound, theta, kind, **kwargs)
        if kind == "observed" and not kwargs.get("diagonal"):
            out = out.copy()
            out[0, 0] = np.nan
        return out

    monkeypatch.setattr(map_module, "information_matrix", information)
    fit = br.fit(br.Davidson(k_tie=0), br.load("mtbench-judges"))
    assert fit.diagnostics["converged"] is False
    assert any("not finite at the estimate" in w for w in fit.warnings)
    board = fit.leaderboard()
    assert np.all(np.isnan(board["se"])) and np.all(np.isfinite(board["score"]))


def test_information_without_a_cholesky_factor_is_said_in_words(monkeypatch):
    """Beyond DENSE_EIGEN_MAX coordinates a failed Cholesky factor leaves the eigenvalues NaN
    (information.extreme_eigenvalues); the fit must say the information is not positive definite,
    not print "smallest eigenvalue nan"."""
    import bayesrank.inference.map as map_module

    monkeypatch.setattr(map_module, "extreme_eigenvalues", lambda info, **kw: (float("nan"), 1.0, None))
    fit = br.fit(br.BradleyTerry(), br.load("arena-2024"))
    assert not fit.converged
    said = " ".join(fit.warnings)
    assert "not positive definite" in said and "Cholesky" in said and "nan" not in said


def test_a_negative_information_eigenvalue_is_said_to_be_no_maximum(monkeypatch):
    """A clearly negative smallest eigenvalue is a saddle or ridge, not a singular information of
    unidentified parameters."""
    import bayesrank.inference.map as map_module

    real = map_module.extreme_eigenvalues
    monkeypatch.setattr(map_module, "extreme_eigenvalues",
                        lambda info, **kw: (-1e-3 * real(info, **kw)[1], *real(info, **kw)[1:]))
    fit = br.fit(br.BradleyTerry(), br.load("arena-2024"))
    assert not fit.converged
    said = " ".join(fit.warnings)
    assert "not positive definite" in said and "saddle" in said and "not identified" not in said


@pytest.mark.parametrize("framework", [br.BradleyTerry(), br.Davidson(k_tie=0), br.Davidson(k_tie=1)],
                         ids=["bt", "davidson", "davidson-tie-factor"])
def test_affine_draws_equal_the_pass_through_the_models_map(arena, framework):
    """Variables affine in θ take their asymptotic-normal draws as θ̂'s values + (B L) z; the same
    draws, to rounding, as θ̂ + L z pushed through the model's value map one draw at a time (with a
    tie factor: its free coordinates ``tie_coord`` are θ's own, B = 1)."""
    from bayesrank.inference import asymptotics

    structure = structure_of(framework, framework.prepare(arena), prior="flat")
    assert set(structure.layout()) <= set(asymptotics.affine_blocks(structure))
    est = br.fit(framework, arena).tree["estimate"]
    theta, factor = est["theta"].values, asymptotics.covariance_factor(est["theta_cov"].values)
    drawn = asymptotics.draws(structure, theta, factor, 500, np.random.default_rng(3))
    z = np.random.default_rng(3).standard_normal((500, factor.shape[1]))
    rows = structure.value_rows(theta + z @ factor.T)
    for name, (sl, shape) in structure.layout().items():
        np.testing.assert_allclose(drawn[name], rows[:, sl].reshape(500, *shape), rtol=0, atol=1e-12)
    # and their standard errors are exact: the directional differences agree to their truncation
    se, _ = asymptotics.delta_method(structure, theta, factor, {})
    for name, value in est.data_vars.items():
        if name.endswith("_se") and name[:-3] in se:
            np.testing.assert_allclose(se[name[:-3]], np.sqrt(np.sum(
                ((structure.value_rows(theta + 1e-4 * factor.T) - structure.value_rows(theta - 1e-4 * factor.T))
                 [:, structure.layout()[name[:-3]][0]] / 2e-4) ** 2, axis=0)).reshape(se[name[:-3]].shape),
                rtol=1e-8)


def test_map_draws_are_made_when_first_read(arena):
    """A fit of an affine model (Bradley–Terry) makes its asymptotic-normal draws when they are
    first read: none before; then the numbers an eager fit with the seed makes, whatever ran in
    between; a pickled fit that had not read them gives the same; the draws' covariance is
    the stored one's."""
    import pickle

    from bayesrank.inference.asymptotics import LazyDraws

    fw = br.BradleyTerry()
    fit = br.fit(fw, arena, random_seed=5)
    lazy = fit.tree["posterior"]["score"].variable._data.array
    assert isinstance(lazy, LazyDraws) and lazy.source._rows is None
    copied = pickle.loads(pickle.dumps(fit.tree))
    br.fit(fw, arena, random_seed=6).tree["posterior"]["score"].values  # another fit's draws in between
    drawn = fit.tree["posterior"]["score"].values[0]
    assert lazy.source._rows is not None
    np.testing.assert_array_equal(copied["posterior"]["score"].values[0], drawn)
    np.testing.assert_array_equal(br.fit(fw, arena, random_seed=5).tree["posterior"]["score"].values[0], drawn)
    est = fit.tree["estimate"]
    centred = drawn - est["score"].values
    np.testing.assert_allclose(np.cov(centred, rowvar=False), est["score_cov"].values,
                               atol=0.15 * np.abs(est["score_cov"].values).max())
    np.testing.assert_allclose(centred.sum(axis=1), 0.0, atol=1e-10)  # zero-sum, draw by draw
    assert lazy.source.moved is None  # B L is let go once the draws are made
    # few draws of many coordinates: B L (129 × 128) is larger than the draws (5 × 129), so they are
    # made at once and the fit keeps them, not B L
    few = br.fit(fw, arena, random_seed=5, draws=5).tree["posterior"]["score"].variable._data.array
    assert few.source._rows is not None and few.source.moved is None


def test_mapped_draws_are_made_when_first_read(arena, monkeypatch):
    """A model with variables not affine in θ (Davidson with a diagonal Thurstonian covariance: its
    dispersions are t²/C) passes its asymptotic-normal draws through the model's map when they are
    first read, not in the fit: none before; then θ̂ + L z through the map, z from the fit's seed;
    a pickled fit that had not read them carries the same draws; the factor L and the compiled map
    are let go once they are made."""
    import pickle

    from bayesrank.inference import asymptotics

    fw = br.Davidson(k_cov=0)
    structure = structure_of(fw, fw.prepare(arena), prior="flat")
    assert not set(structure.layout()) <= set(asymptotics.affine_blocks(structure))
    fit = br.fit(fw, arena, random_seed=11, draws=300)
    lazy = fit.tree["posterior"]["score"].variable._data.array
    assert isinstance(lazy.source, asymptotics.MappedDraws) and lazy.source._rows is None
    copied = pickle.loads(pickle.dumps(fit.tree))  # (pickling makes them)
    est = fit.tree["estimate"]
    theta, factor = est["theta"].values, asymptotics.covariance_factor(est["theta_cov"].values)
    z = np.random.default_rng(11).standard_normal((300, factor.shape[1]))
    rows = structure.value_rows(theta + z @ factor.T)
    for name, (sl, shape) in structure.layout().items():
        np.testing.assert_allclose(fit.tree["posterior"][name].values[0], rows[:, sl].reshape(300, *shape),
                                   rtol=0, atol=1e-10)
        np.testing.assert_array_equal(copied["posterior"][name].values, fit.tree["posterior"][name].values)
    assert lazy.source.factor is None and lazy.source.structure is None
    # a factor above LAZY_FACTOR_MAX is not kept: the same draws, made at once
    monkeypatch.setattr(asymptotics, "LAZY_FACTOR_MAX", 0)
    eager = br.fit(fw, arena, random_seed=11, draws=300).tree["posterior"]["score"]
    assert isinstance(eager.variable._data, np.ndarray)
    np.testing.assert_array_equal(eager.values, fit.tree["posterior"]["score"].values)


@pytest.mark.parametrize("triangle", [np.triu, np.tril, lambda F: F], ids=["upper", "lower", "full"])
def test_linear_variances_of_a_dense_block_skip_a_triangular_factors_zero_rows(arena, triangle):
    """The tie factors' block of B is dense: their delta-method variances multiply it with the factor's
    rows a chunk of columns at a time, on the band of rows that is not zero (half the product for a
    triangular factor); the same as the whole product."""
    from bayesrank.inference import asymptotics

    fw = br.Davidson(k_tie=1)
    structure = structure_of(fw, fw.prepare(arena), prior="flat")
    n = structure.n_free
    factor = triangle(np.random.default_rng(0).standard_normal((n, n)))
    blocks = asymptotics.affine_blocks(structure)
    assert any(B.u is None and not sp.issparse(B.S) for _, B in blocks.values())  # a dense block is covered
    got = asymptotics.linear_variances(structure, factor)
    for name, (cols, B) in blocks.items():
        full = B.S.toarray() if sp.issparse(B.S) else np.asarray(B.S)
        if B.u is not None:
            full = full + np.outer(B.u, B.v)
        np.testing.assert_allclose(got[name], np.sum((full @ factor[cols]) ** 2, axis=1), rtol=1e-12)


def _run(loglik, grad_max, n=1000.0):
    return Optimum(theta=np.zeros(1), loglik=loglik, n=n, grad_max=grad_max, iterations=1, method="trust-exact")


def test_the_estimate_is_the_first_stationary_run_at_the_highest_maximum():
    """The documented rule of a multi-start fit (:func:`chosen_run`): among the runs that reached a
    stationary point, the first within RESTART_AGREEMENT per comparison of the highest — so runs
    that reached one maximum tie, whatever their last digits, and the earliest (the model's own
    start first) gives the estimate."""
    n = 1000.0
    tie = RESTART_AGREEMENT * n / 2
    # runs 0 and 3 reach one maximum; run 3 is higher by rounding: run 0 keeps it
    assert chosen_run([_run(-500.0, 1e-12), _run(-501.0, 1e-12), _run(-502.0, 1e-12), _run(-500.0 + tie, 1e-12)]) == 0
    # a higher maximum by more than the agreement wins, wherever it comes
    assert chosen_run([_run(-500.0, 1e-12), _run(-499.0, 1e-12)]) == 1
    # a higher end short of a stationary point does not
    assert chosen_run([_run(-500.0, 1e-12), _run(-498.0, 1e-3)]) == 0
    # no run stationary (a supremum on a boundary): the highest
    assert chosen_run([_run(-500.0, 1e-3), _run(-499.0, 1e-3)]) == 1


def test_a_concave_log_likelihood_runs_once(arena):
    once, asked = br.fit(br.BradleyTerry(), arena), br.fit(br.BradleyTerry(), arena, restarts=3)
    assert "restarts" not in asked.diagnostics and asked.nll == once.nll


@pytest.mark.parametrize("restarts", [-1, 1.5, True, "2"])
def test_restarts_must_be_a_non_negative_integer(arena, restarts):
    with pytest.raises(br.ModelSpecError, match="restarts"):
        br.fit(br.BradleyTerry(), arena, restarts=restarts)


def test_restarts_of_a_non_concave_model_are_reported(arena):
    """A multi-start fit of a log-likelihood that is not concave records every run's end, the model's
    own start first, and keeps the one the rule chooses."""
    data = around(arena, "gpt-4-0314", 11)
    fit = br.fit(br.RaoKupper(k_tie=0, k_cov=0), data, restarts=2, random_seed=3)
    d = fit.diagnostics
    assert d["restarts"] == 2 and len(d["start_nlls"]) == 3 and len(d["start_boundaries"]) == 3
    assert fit.nll == pytest.approx(d["start_nlls"][d["best_start"]], rel=1e-12)
    same = br.fit(br.RaoKupper(k_tie=0, k_cov=0), data, restarts=2, random_seed=3)
    assert same.diagnostics["start_nlls"] == d["start_nlls"]


_FRESH = """
import json, sys
import bayesrank as br
from tests.conftest import items_subset
data = items_subset(br.load("arena-2024"), set(range(int(sys.argv[2]))))
for spec in json.loads(sys.argv[1]):
    fit = br.fit(br.framework_from_spec(spec), data)
print(json.dumps({"nll": fit.nll, "scores": fit.scores().tolist()}))
"""


def _fit_in_a_process(specs, n_items):
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _FRESH, json.dumps(specs), str(n_items)], capture_output=True,
                         text=True, check=True, cwd=str(__import__("pathlib").Path(__file__).parents[2]))
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("framework", [br.Davidson(k_tie=1), br.RaoKupper(k_tie=1, k_cov=2)], ids=lambda f: f.label)
def test_a_fit_is_the_same_in_a_fresh_process_and_after_other_fits(framework):
    """Determinism is a contract: the same specification, data and options give the same numbers in a
    fresh process, after five fits of itself and after fits of other models (slow tier, beside every
    Table D.1 model; the default tier's fresh-process checks are in tests/test_reproducibility.py)."""
    spec = framework.spec()
    fresh = _fit_in_a_process([spec], 20)
    others = [br.BradleyTerry().spec(), br.Davidson(k_tie=2, k_cov=0).spec(), br.RaoKupper(k_tie=0, k_cov=1).spec()]
    after = _fit_in_a_process(others + [spec] * 5, 20)
    assert after["nll"] == pytest.approx(fresh["nll"], rel=1e-12)
    np.testing.assert_allclose(after["scores"], fresh["scores"], rtol=0, atol=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("model_id", list(range(1, 31)), ids=[f"model{m}" for m in range(1, 31)])
def test_every_table_d1_model_is_the_same_in_a_fresh_process_and_after_other_fits(model_id):
    from bayesrank.model.papers import leaderbot_model

    spec = leaderbot_model(model_id).spec()
    fresh = _fit_in_a_process([spec], 129)
    after = _fit_in_a_process([leaderbot_model(1 + model_id % 30).spec(), spec, spec], 129)
    assert after["nll"] == pytest.approx(fresh["nll"], rel=1e-12)
    np.testing.assert_allclose(after["scores"], fresh["scores"], rtol=0, atol=1e-8)


@pytest.mark.slow
def test_paper_model_16_is_the_same_in_a_fresh_process_and_after_five_fits_of_itself_and_others():
    from bayesrank.model.papers import leaderbot_model

    spec = leaderbot_model(16).spec()
    fresh = _fit_in_a_process([spec], 129)
    after = _fit_in_a_process([leaderbot_model(17).spec(), leaderbot_model(1).spec()] + [spec] * 5, 129)
    assert after["nll"] == pytest.approx(fresh["nll"], rel=1e-12)
    np.testing.assert_allclose(after["scores"], fresh["scores"], rtol=0, atol=1e-8)
