"""Random effects on the MAP path (bayesrank/inference/laplace.py): the fit is the penalised mode
(optimality in NumPy), its marginal likelihood is the Laplace approximation written here in NumPy
and is highest at τ̂, τ is recovered from users whose scores deviate, and a fit of clusters that do
not disagree says so."""

import numpy as np
import pandas as pd
import pytest
from scipy.linalg import null_space

import bayesrank as br
from bayesrank.data.simulate import clustered_battles, item_names

SCORES = np.linspace(-1, 1, 5)


@pytest.fixture(scope="module")
def users():
    return br.load(clustered_battles(SCORES, 25, np.random.default_rng(2), share=0.0, spread=0.6,
                                     pairs_per_cluster=6, votes_per_pair=6), cluster="user")


def bt_arrays(data):
    """Per cell: items, the user, wins of a and of b (Bradley–Terry, no ties)."""
    c = data.clusters
    return data.a[c.cell], data.b[c.cell], c.codes[:, 0], c.counts[:, 0], c.counts[:, 1]


def penalised(data, s, u, tau):
    """ℓ(s, u) − ½ Σ‖u_g‖²/τ², its gradient in (s, u) projected on the zero-sum vectors, and the
    Laplace marginal ℓ − ½ Σ‖u‖²/τ² − ½ log det(I + τ² H_uu) in orthonormal zero-sum coordinates."""
    a, b, g, w, l = bt_arrays(data)
    m, G = s.size, u.shape[0]
    d = s[a] + u[g, a] - s[b] - u[g, b]
    p = 1 / (1 + np.exp(-d))
    loglik = float(np.sum(w * np.log(p) + l * np.log1p(-p)))
    r = w - (w + l) * p                                           # ∂ℓ/∂d per cell
    grad_s, grad_u = np.zeros(m), np.zeros((G, m))
    np.add.at(grad_s, a, r), np.add.at(grad_s, b, -r)
    np.add.at(grad_u, (g, a), r), np.add.at(grad_u, (g, b), -r)
    grad_u -= u / tau**2
    Q = null_space(np.ones((1, m)))                               # orthonormal zero-sum basis
    H = np.zeros((G, m, m))                                       # −∂²ℓ/∂u_g² per user
    v = (w + l) * p * (1 - p)
    for i, j, sign in ((a, a, 1), (b, b, 1), (a, b, -1), (b, a, -1)):
        np.add.at(H, (g, i, j), sign * v)
    logdet = sum(np.linalg.slogdet(np.eye(m - 1) + tau**2 * Q.T @ H[k] @ Q)[1] for k in range(G))
    marginal = loglik - 0.5 * np.sum(u**2) / tau**2 - 0.5 * logdet
    return grad_s @ Q, grad_u @ Q, marginal


def effects_of(fit):
    est = fit.tree["estimate"]
    return est["score"].values, est["cluster_effect"].values


def test_the_fit_is_the_penalised_mode_and_its_marginal_the_laplace_one(users):
    fit = br.fit(br.RandomEffects(br.BradleyTerry(ties="drop"), cluster="user", spread=0.6), users)
    s, u = effects_of(fit)
    grad_s, grad_u, marginal = penalised(users, s, u, 0.6)
    assert np.max(np.abs(grad_s)) < 1e-6 and np.max(np.abs(grad_u)) < 1e-6
    assert np.allclose(u.sum(axis=1), 0) and fit.converged
    assert fit.diagnostics["random_effects"]["marginal_loglik"] == pytest.approx(marginal, rel=1e-9)
    np.testing.assert_allclose(fit.tree["estimate"]["cluster_score"].values, s + u, atol=1e-12)


def test_spread_is_at_its_maximum_marginal_likelihood(users):
    learnt = br.fit(br.RandomEffects(br.BradleyTerry(ties="drop"), cluster="user"), users)
    tau = learnt.diagnostics["random_effects"]["spread"]
    best = learnt.diagnostics["random_effects"]["marginal_loglik"]
    for moved in (tau * 0.8, tau * 1.25):
        other = br.fit(br.RandomEffects(br.BradleyTerry(ties="drop"), cluster="user", spread=moved), users)
        assert other.diagnostics["random_effects"]["marginal_loglik"] < best
    assert 0.35 < tau < 0.9                                        # simulated with τ = 0.6
    assert learnt.interval_method == "laplace" and learnt.cluster == ("user",)
    se = float(learnt.tree["estimate"]["spread_se"])
    assert 0 < se < tau and "Laplace" in learnt.to_json()["covariance"]


def test_clusters_that_do_not_disagree_give_the_pooled_board():
    """Thirty users casting the very same votes: nothing varies between them, τ̂ is at the lower end
    of its search, the fit says so and its population board is the pooled one."""
    one = clustered_battles(SCORES, 1, np.random.default_rng(9), share=0.0, pairs_per_cluster=10, votes_per_pair=8)
    frame = pd.concat([one.assign(user=f"u{k}") for k in range(30)], ignore_index=True)
    fit = br.fit(br.RandomEffects(br.BradleyTerry(ties="drop"), cluster="user"), frame)
    pooled = br.fit(br.BradleyTerry(ties="drop"), frame, intervals="wald")
    assert any("no disagreement" in w for w in fit.warnings)
    assert fit.diagnostics["random_effects"]["spread"] < 0.01 and np.isnan(float(fit.tree["estimate"]["spread_se"]))
    np.testing.assert_allclose(fit.scores(), pooled.scores(), atol=1e-4)
    np.testing.assert_allclose(fit.leaderboard()["se"], pooled.leaderboard()["se"], rtol=1e-3)


def test_a_population_without_a_maximum_is_said(users):
    frame = clustered_battles(SCORES, 20, np.random.default_rng(4), share=0.0, spread=0.3)
    best = item_names(SCORES.size)[-1]
    frame.loc[frame["model_a"] == best, "winner"] = "model_a"
    frame.loc[frame["model_b"] == best, "winner"] = "model_b"
    fit = br.fit(br.RandomEffects(br.BradleyTerry(ties="drop"), cluster="user"), frame)
    assert not fit.converged and not fit.diagnostics["mle_exists"]


def test_options_a_random_effects_fit_refuses(users):
    model = br.RandomEffects(br.BradleyTerry(ties="drop"), cluster="user")
    for options, words in ((dict(intervals="sandwich"), "Laplace ones"), (dict(cluster="user"), "itself"),
                           (dict(reweight=True), "unweighted")):
        with pytest.raises(br.ModelSpecError, match=words):
            br.fit(model, users, **options)


def test_too_many_random_effects_for_the_map_path_are_refused_before_any_model_is_built():
    frame = clustered_battles(SCORES, 1300, np.random.default_rng(1), share=0.0, pairs_per_cluster=2, votes_per_pair=2)
    with pytest.raises(br.ModelSpecError, match=r"1,300 clusters × 4 free scores = 5,200 random effects.*"
                                                r"intervals='sandwich', cluster='user'"):
        br.fit(br.RandomEffects(br.BradleyTerry(ties="drop"), cluster="user"), frame)
