"""GARS: the functionals against the paper's closed forms (written here in NumPy), their
automatic Jacobians against the closed forms of App. D (with the digest's fix of eq. 36),
the projection property, the saturated model against the raw counts and its PyMC model, and
GARS of MAP, NUTS and judge-aware fits."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import bayesrank as br
from bayesrank import gars
from bayesrank.model.saturated import pair_counts, saturated_model
from tests.conftest import simulate_counts

K, C = 4, 3
W1, W2 = np.array([1, 0, 0.5]), np.array([0, 1, 0.5])


def random_mu(rng, n=None, K=K):
    shape = (K, K) if n is None else (n, K, K)
    mu = rng.dirichlet(np.full(C, 3.0), size=shape)
    mu[..., np.arange(K), np.arange(K), :] = 0
    return mu


# ---------------------------------------------------------------- the paper's forms, in NumPy
def edges(K):
    return [(a, b) for a in range(K) for b in range(a + 1, K)]


def projection_matrix(K):
    """P = H (Hᵀ L₀ H)⁻¹ Hᵀ Bᵀ of eq. (3) with the complete graph's incidence matrix B."""
    B = np.zeros((len(edges(K)), K))
    for e, (a, b) in enumerate(edges(K)):
        B[e, a], B[e, b] = 1, -1
    H = np.vstack([np.eye(K - 1), -np.ones((1, K - 1))])
    return H @ np.linalg.inv(H.T @ B.T @ B @ H) @ H.T @ B.T


def ssym(mu):
    S = 0.5 * (mu @ W1 + (mu @ W2).T)
    np.fill_diagonal(S, 0)
    return S


def paper_borda(mu):
    return ssym(mu).sum(1) / (len(mu) - 1)


def paper_bt(mu):
    logit = lambda p: np.log(p / (1 - p))  # noqa: E731
    s1, s2 = mu @ W1, mu @ W2
    ell = [0.5 * (logit(s1[j, k]) + logit(s2[k, j])) for j, k in edges(len(mu))]
    return projection_matrix(len(mu)) @ np.array(ell)


def paper_rc(mu):
    R = ssym(mu).T
    T = R / R.sum(1, keepdims=True)
    n = len(mu)
    return np.linalg.solve(np.eye(n) - T.T + np.ones((n, n)), np.ones(n))


def paper_jacobian(score, mu, j, k):
    """App. D closed forms, (K, C) block of ordered pair (j, k)."""
    n = len(mu)
    e = np.eye(n)
    if score == "borda":
        return (np.outer(e[j], W1) + np.outer(e[k], W2)) / (2 * (n - 1))
    if score == "bt":
        P = projection_matrix(n)
        if j < k:
            p = mu[j, k] @ W1
            return np.outer(P[:, edges(n).index((j, k))], 0.5 * W1 / (p * (1 - p)))
        p = mu[j, k] @ W2  # the digest's fix of eq. (36): <w2, mu_jk>
        return np.outer(P[:, edges(n).index((k, j))], 0.5 * W2 / (p * (1 - p)))
    R = ssym(mu).T
    d = R.sum(1)
    T = R / d[:, None]
    A = np.eye(n) - T.T + np.ones((n, n))
    F = np.linalg.solve(A, np.ones(n))
    out = np.zeros((n, C))
    for c in range(C):
        dR = np.zeros((n, n))
        dR[j, k], dR[k, j] = 0.5 * W2[c], 0.5 * W1[c]
        dT = (dR * d[:, None] - R * dR.sum(1)[:, None]) / d[:, None] ** 2
        out[:, c] = -np.linalg.solve(A, (-dT.T) @ F)
    return out


PAPER = {"borda": paper_borda, "bt": paper_bt, "rank-centrality": paper_rc}


@pytest.mark.parametrize("score", gars.SCORES)
def test_functionals_match_the_paper_and_sum_to_their_constants(score):
    rng = np.random.default_rng(1)
    mu = random_mu(rng, n=5)
    got = gars.functional(mu, score)
    want = np.array([PAPER[score](m) for m in mu])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    total = {"borda": K / 2, "bt": 0.0, "rank-centrality": 1.0}[score]
    np.testing.assert_allclose(got.sum(axis=1), total, atol=1e-12)


@pytest.mark.parametrize("score", gars.SCORES)
def test_numpy_and_pytensor_evaluate_the_same_functional(score):
    mu = random_mu(np.random.default_rng(2), n=3)
    x = pt.tensor("mu", shape=(None, K, K, C), dtype="float64")
    fn = pytensor.function([x], gars.functional(x, score, graph=gars.Graph.complete(K), xp=pt))
    np.testing.assert_allclose(fn(mu), gars.functional(mu, score), rtol=1e-12)


@pytest.mark.parametrize("score", gars.SCORES)
def test_autodiff_jacobian_matches_appendix_d_and_finite_differences(score):
    rng = np.random.default_rng(3)
    mu = random_mu(rng, n=2)
    J = gars.jacobian(mu, score)  # (n, K, K, K, C)
    for m, Jm in zip(mu, J):
        for j, k in [(0, 2), (2, 0), (3, 1), (1, 3)]:
            np.testing.assert_allclose(Jm[:, j, k, :], paper_jacobian(score, m, j, k), atol=1e-10)
    h = 1e-6
    for c in range(C):
        step = np.zeros_like(mu)
        step[:, 1, 2, c] = h
        fd = (gars.functional(mu + step, score) - gars.functional(mu - step, score)) / (2 * h)
        np.testing.assert_allclose(J[:, :, 1, 2, c], fd, atol=1e-7)
    tangent = rng.normal(size=mu.shape)
    np.testing.assert_allclose(gars.jvp(mu, tangent, score), np.einsum("ndjkc,njkc->nd", J, tangent), atol=1e-10)


def test_binary_weights_drop_ties_and_position_bias_cancels_in_the_bt_projection():
    rng = np.random.default_rng(4)
    r = np.array([0.7, 0.1, -0.3, -0.5])
    bias = 0.4  # P(first wins) = σ(r_j − r_k + b): b cancels in ℓ_jk
    d = r[:, None] - r[None, :] + bias
    win = 1 / (1 + np.exp(-d))
    tie = rng.uniform(0.05, 0.2, size=(K, K))
    mu = np.stack([win * (1 - tie), (1 - win) * (1 - tie), tie], axis=-1)
    np.testing.assert_allclose(gars.functional(mu, "bt", "binary", eps=1e-12), r, atol=1e-12)


# ---------------------------------------------------------------- projection property
def test_gars_of_a_bt_fit_are_the_bt_scores_with_the_same_standard_errors():
    rng = np.random.default_rng(5)
    truth = np.array([-0.9, -0.3, 0.0, 0.4, 0.8])
    data = simulate_counts(truth, 300, rng)
    bt = br.fit(br.BradleyTerry(ties="drop"), data)
    g = gars.from_fit(bt, "bt", "binary")
    np.testing.assert_allclose(g.estimate, bt.scores().values, atol=1e-9)
    se = bt.leaderboard().set_index("name").loc[list(g.items), "se"].to_numpy()
    np.testing.assert_allclose(g.se, se, rtol=1e-6)
    # the model-free projection of the raw counts recovers the truth when BT holds
    raw = gars.from_counts(data, "bt", "binary")
    assert np.all(np.abs(raw.estimate - truth) < 4 * raw.se), (raw.estimate, truth, raw.se)
    np.testing.assert_allclose(raw.se, se, rtol=0.1)  # symmetric complete design: nearly efficient


# ---------------------------------------------------------------- the saturated model
def test_saturated_borda_on_mtbench_is_the_closed_form_of_the_raw_counts():
    data = br.load("mtbench-judges")
    g = gars.from_counts(data, "borda")
    m = data.n_items
    win, tie, n = np.zeros((m, m)), np.zeros((m, m)), np.zeros((m, m))
    np.add.at(win, (data.a, data.b), data.wins_a)
    np.add.at(win, (data.b, data.a), data.wins_b)
    np.add.at(tie, (data.a, data.b), data.ties)
    np.add.at(tie, (data.b, data.a), data.ties)
    n = win + win.T + tie
    np.fill_diagonal(n, 1)
    s = (win + tie / 2) / n
    np.fill_diagonal(s, 0)
    np.testing.assert_allclose(g.estimate, s.sum(1) / (m - 1), rtol=1e-12)
    # per comparison u = 1{win} + ½·1{tie}: Var(s_jk) = (E u² − s²)/N, shared by F_j and F_k
    v = (win / n + tie / (4 * n) - s**2) / n
    np.fill_diagonal(v, 0)
    cov = (np.diag(v.sum(1)) - v) / (m - 1) ** 2
    np.testing.assert_allclose(g.cov, cov, rtol=1e-10, atol=1e-16)
    assert g.complete and g.interval == "wald"


def test_saturated_pymc_model_has_its_map_at_the_frequencies_and_the_multinomial_covariance():
    data = br.load("mtbench-judges")
    pc = pair_counts(data, 3)
    assert (pc.counts > 0).all()
    model = saturated_model(pc)
    value = model.rvs_to_values[model["mu"]]
    transform = model.rvs_to_transforms[model["mu"]]
    freq = pc.frequencies()
    z = transform.forward(pt.as_tensor(freq)).eval()
    dlogp = model.compile_dlogp(jacobian=False)
    grad = dlogp({value.name: z})
    assert np.abs(grad).max() < 1e-6 * pc.totals.max()
    # Laplace in the unconstrained coordinates, pushed to the simplex: (Diag μ − μμᵀ)/N
    info = -model.compile_d2logp(jacobian=False, negate_output=False)({value.name: z})  # −∇² log p
    assert np.linalg.eigvalsh(info).min() > 0
    cov_z = np.linalg.inv(info)
    zz = pt.matrix("z")
    back = pytensor.function([zz], pytensor.gradient.jacobian(transform.backward(zz).ravel(), zz))
    D = back(z).reshape(freq.size, z.size)
    cov_mu = D @ cov_z @ D.T
    for p in range(3):
        block = cov_mu[3 * p:3 * p + 3, 3 * p:3 * p + 3]
        want = (np.diag(freq[p]) - np.outer(freq[p], freq[p])) / pc.totals[p]
        np.testing.assert_allclose(block, want, rtol=1e-6, atol=1e-12)


def test_saturated_posterior_agrees_with_the_map_and_per_judge_contexts_average_f():
    data = br.load("mtbench-judges")
    mle = gars.from_counts(data, "borda")
    post = gars.from_counts(data, "borda", method="posterior", draws=2000, random_seed=1)
    assert post.interval == "quantile"
    np.testing.assert_allclose(post.estimate, mle.estimate, atol=2 * mle.se.max())
    np.testing.assert_allclose(post.se, mle.se, rtol=0.15)
    per_judge = gars.from_counts(data, "borda", by_judge=True)
    pooled = [gars.from_counts(data.subset(data.judge == k), "borda").estimate for k in range(data.n_judges)]
    weights = np.bincount(data.judge, weights=data.totals) / data.n_comparisons
    np.testing.assert_allclose(per_judge.estimate, weights @ np.array(pooled), rtol=1e-12)


def test_incomplete_graph_is_said_in_words():
    rng = np.random.default_rng(6)
    data = simulate_counts(np.array([-0.5, 0.0, 0.2, 0.4]), 50, rng)
    sub = data.subset(~((data.a == 0) & (data.b == 3)))
    g = gars.from_counts(sub, "borda")
    assert not g.complete
    assert any("5 of 6 pairs" in w for w in g.warnings)


def test_gars_of_data_use_a_model_where_the_raw_counts_leave_pairs_uncompared():
    rng = np.random.default_rng(6)
    data = simulate_counts(np.array([-0.5, 0.0, 0.2, 0.4]), 50, rng)
    complete = gars.from_data(data, "borda")
    assert complete.source.startswith("saturated") and np.allclose(complete.estimate, gars.from_counts(data).estimate)
    sub = data.subset(~((data.a == 0) & (data.b == 3)))
    modelled = gars.from_data(sub, "borda")
    assert modelled.complete and "BradleyTerry" in modelled.source  # no ties: Bradley–Terry
    assert "5 of 6 pairs" in modelled.warnings[0] and "counts_only" in modelled.warnings[0]
    fitted = gars.from_fit(br.fit(gars.default_model(sub), sub), "borda")
    assert np.allclose(modelled.estimate, fitted.estimate) and np.allclose(modelled.se, fitted.se)
    raw = gars.from_data(sub, "borda", counts_only=True)
    assert np.allclose(raw.estimate, gars.from_counts(sub, "borda").estimate) and not raw.complete
    assert "ties=drop" in gars.from_data(sub, "bt", framework=br.BradleyTerry(ties="drop")).source
    with pytest.raises(br.BayesrankError, match="no posterior"):
        gars.from_data(sub, "borda", method="posterior")
    with pytest.raises(br.BayesrankError, match="exclude each other"):
        gars.from_data(sub, framework=br.BradleyTerry(), counts_only=True)


# ---------------------------------------------------------------- from fits
def test_davidson_and_judge_aware_fits_give_borda_on_one_scale():
    data = br.load("mtbench-judges")
    fit = br.fit(br.Davidson(k_tie=0), data)
    dav = gars.from_fit(fit, "borda")
    _, mu = gars.implied_probabilities(fit)
    a, b = fit.items[1], fit.items[4]
    pred = fit.predict(a, b, judge=data.judges[0])  # Davidson ignores the judge: one context
    np.testing.assert_allclose(mu[0, 1, 4], pred[["p_win_a", "p_win_b", "p_tie"]].to_numpy()[0], rtol=1e-10)
    ja = gars.from_fit(br.fit(br.JudgeAware(ties="davidson"), data), "borda")
    raw = gars.from_counts(data, "borda")
    for g in (dav, ja):
        assert g.estimate.sum() == pytest.approx(data.n_items / 2)
        assert g.interval == "wald" and np.all(g.se > 0)
        # the models and the raw counts estimate one quantity: within a few standard errors
        assert np.all(np.abs(g.estimate - raw.estimate) < 4 * raw.se + 0.02), (g.estimate, raw.estimate)
    assert ja.n_contexts == data.n_judges and dav.n_contexts == 1
    assert list(dav.table()["name"][:3]) == list(raw.table()["name"][:3])


def test_gars_of_a_nuts_fit_are_a_posterior_close_to_the_map_delta_method():
    rng = np.random.default_rng(7)
    data = simulate_counts(np.array([-0.8, -0.2, 0.1, 0.4, 0.5]), 300, rng, eta=-0.3)
    post = br.fit(br.Davidson(k_tie=0), data, method="nuts", draws=200, tune=200, chains=2, random_seed=3)
    mle = br.fit(br.Davidson(k_tie=0), data)
    for score in gars.SCORES:
        g, h = gars.from_fit(post, score), gars.from_fit(mle, score)
        assert g.interval == "quantile" and g.draws.shape == (400, 5)
        np.testing.assert_allclose(g.estimate, h.estimate, atol=h.se.max())
        np.testing.assert_allclose(g.se, h.se, rtol=0.3)
        table = g.table()
        assert (table["rank_lower"] <= table["rank"]).all() and (table["rank"] <= table["rank_upper"]).all()
        dist = g.rank_distribution()
        np.testing.assert_allclose(dist.sum(axis=0), 1)
        np.testing.assert_allclose(dist.sum(axis=1), 1)
        assert list(dist.index) == list(table["name"])


def test_both_good_both_bad_weights_on_raw_counts():
    rng = np.random.default_rng(9)
    m = 4
    a, b = np.triu_indices(m, 1)
    counts = rng.integers(5, 40, size=(len(a), 4)).astype(float)  # win, loss, tie (both good), both bad
    names = np.array([f"m{k}" for k in range(m)], dtype=object)
    data = br.Comparisons.from_cells(names[a], names[b], *counts.T)
    g = gars.from_counts(data, "borda", "win-loss-both-good-both-bad")
    s = np.zeros((m, m))
    n = counts.sum(1)
    s[a, b] = (counts[:, 0] + counts[:, 2]) / n  # a good tie is a win for both, a bad one for neither
    s[b, a] = (counts[:, 1] + counts[:, 2]) / n
    np.testing.assert_allclose(g.estimate, s.sum(1) / (m - 1), rtol=1e-12)
    with pytest.raises(br.BayesrankError, match="need 4 outcome categories"):
        gars.from_fit(br.fit(br.Davidson(k_tie=0), "mtbench-judges"), "borda", "win-loss-both-good-both-bad")
