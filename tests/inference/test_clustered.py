"""Intervals that allow for dependent comparisons (bayesrank/inference/clustered.py): the one-way and
two-way cluster-robust sandwich against a NumPy reference written here from the Bradley–Terry scores,
the same meat as the engine's per-cell scores when every cell is its own cluster, the per-comparison
sandwich when every comparison is, the cluster bootstrap, and what a fit says in words."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.data.simulate import clustered_battles, item_names
from bayesrank.inference.clustered import FEW_CLUSTERS, cluster_meat
from bayesrank.inference.information import information
from bayesrank.inference.structure import structure_of

SCORES = np.linspace(-1, 1, 6)


@pytest.fixture(scope="module")
def votes():
    rng = np.random.default_rng(11)
    frame = clustered_battles(SCORES, 60, rng)
    frame["prompt"] = np.array([f"p{k:02d}" for k in rng.integers(0, 35, len(frame))], dtype=object)
    frame["vote"] = np.arange(len(frame)).astype(str)
    return frame


def bt_clustered_cov(frame, scores, columns):
    """Cluster-robust sandwich of Bradley–Terry (no ties) in NumPy, vote by vote: the score of a vote
    for a over b is (y − σ(s_a − s_b))(e_a − e_b); the meat sums them within each cluster, times
    G/(G − 1), and two columns give M₁ + M₂ − M₁₂ (Cameron, Gelbach & Miller 2011)."""
    names = item_names(len(scores))
    index = {n: k for k, n in enumerate(names)}
    a = frame["model_a"].map(index).to_numpy()
    b = frame["model_b"].map(index).to_numpy()
    y = (frame["winner"] == "model_a").to_numpy(float)
    p = 1 / (1 + np.exp(-(scores[a] - scores[b])))
    m = len(scores)
    X = np.zeros((len(frame), m))
    X[np.arange(len(frame)), a] = 1.0
    X[np.arange(len(frame)), b] = -1.0
    S = (y - p)[:, None] * X
    H = (X * (p * (1 - p))[:, None]).T @ X

    def meat(keys):
        key = pd.Series(list(zip(*(frame[c] for c in keys)))).factorize()[0]
        G = key.max() + 1
        summed = np.zeros((G, m))
        np.add.at(summed, key, S)
        return G / (G - 1) * summed.T @ summed

    M = meat(columns[:1]) if len(columns) == 1 else meat(columns[:1]) + meat(columns[1:]) - meat(columns)
    Hp = np.linalg.pinv(H)
    return Hp @ M @ Hp


@pytest.mark.parametrize("columns", [("user",), ("prompt",), ("user", "prompt")])
def test_the_cluster_robust_sandwich_is_the_numpy_one(votes, columns):
    data = br.load(votes, cluster=("user", "prompt"))
    fit = br.fit(br.BradleyTerry(ties="drop"), data, cluster=columns)
    board = fit.leaderboard().set_index("name").reindex(item_names(SCORES.size))
    cov = bt_clustered_cov(votes, board["score"].to_numpy(), columns)
    assert fit.tree["estimate"].attrs["covariance_stored"] == 1
    if np.linalg.eigvalsh(cov).min() > -1e-12:   # (two-way: no eigenvalue clipped)
        np.testing.assert_allclose(board["se"].to_numpy(), np.sqrt(np.diag(cov)), rtol=1e-6)
    assert fit.cluster == columns and fit.interval_method == "sandwich"
    assert "cluster" in fit.to_json()["covariance"] and fit.to_json()["cluster"] == list(columns)


@pytest.mark.parametrize("columns", [("user",), ("user", "prompt")])
def test_a_large_model_keeps_the_cluster_robust_sandwich_as_a_factor(votes, monkeypatch, columns):
    """Beyond DENSE_COVARIANCE_MAX free coordinates the cluster-robust sandwich is kept as a factor
    (no n × n covariance stored): the same standard errors, clusters and description as the dense one,
    and rank intervals from its draws."""
    import bayesrank.inference.map as map_module

    data = br.load(votes, cluster=("user", "prompt"))
    dense = br.fit(br.BradleyTerry(ties="drop"), data, cluster=columns)
    monkeypatch.setattr(map_module, "DENSE_COVARIANCE_MAX", 2)
    large = br.fit(br.BradleyTerry(ties="drop"), data, cluster=columns)
    est = large.tree["estimate"]
    assert est.attrs["covariance_stored"] == 0 and large.cluster == columns
    assert est.attrs["covariance"] == dense.tree["estimate"].attrs["covariance"]
    assert large.diagnostics["clusters"] == dense.diagnostics["clusters"]
    if large.diagnostics["clusters"].get("clipped_eigenvalues", 0) == 0:   # (two-way: nothing clipped)
        np.testing.assert_allclose(est["score_se"].values, dense.tree["estimate"]["score_se"].values, rtol=1e-6)
    board = large.leaderboard()
    assert board["rank_lower"].notna().all() and (board["rank_lower"] <= board["rank_upper"]).all()


def test_every_comparison_its_own_cluster_is_the_per_comparison_sandwich(votes):
    data = br.load(votes, cluster="vote")
    per_vote = br.fit(br.BradleyTerry(ties="drop"), data)
    plain = br.fit(br.BradleyTerry(ties="drop"), data, intervals="sandwich", cluster=())
    n = data.n_comparisons
    np.testing.assert_allclose(per_vote.leaderboard()["se"], plain.leaderboard()["se"] * np.sqrt(n / (n - 1)),
                               rtol=1e-8)
    assert any("holds a single comparison" in w for w in per_vote.warnings)
    assert plain.cluster == () and "independent" in plain.to_json()["dependence"]


@pytest.mark.parametrize("framework", [br.Davidson(k_tie=1), br.RaoKupper(), br.BradleyTerry()],
                         ids=lambda f: f.label)
def test_cells_as_clusters_give_the_per_cell_score_meat(mtbench, framework):
    """Clustered by judge, the judge records' cells (pair × judge) split only by the judge, so the meat
    of clusters = judges, each a sum of its cells' scores, equals the per-cell meat of the engine when
    every cell is a cluster: compared through the same θ on Davidson, Rao–Kupper and Bradley–Terry."""
    data = br.load("mtbench-judges", cluster="judge_model")
    prepared = framework.prepare(data)
    bound = structure_of(framework, prepared).bind(prepared)
    fit = br.fit(framework, data, intervals="sandwich")
    theta = fit.tree["estimate"]["theta"].values
    clusters = prepared.clusters
    as_cells = type(clusters)(("cell",), (tuple(map(str, range(prepared.n_cells))),), clusters.cell,
                              clusters.cell[:, None], clusters.counts)
    meat, info = cluster_meat(bound, theta, as_cells, ("cell",))
    g = info["n_clusters"]["cell"]
    np.testing.assert_allclose(meat * (g - 1) / g, information(bound, theta, "scores"), rtol=1e-9, atol=1e-9)


def test_the_cluster_bootstrap_resamples_clusters(votes):
    data = br.load(votes, cluster="user")
    boot = br.fit(br.BradleyTerry(ties="drop"), data, intervals="bootstrap", n_boot=150, random_seed=4)
    robust = br.fit(br.BradleyTerry(ties="drop"), data)
    naive = br.fit(br.BradleyTerry(ties="drop"), data, intervals="wald")     # comparisons taken as independent
    once, again = (br.fit(br.BradleyTerry(ties="drop"), data, intervals="bootstrap", n_boot=20, random_seed=4)
                   for _ in range(2))
    assert np.array_equal(once.leaderboard()["se"], again.leaderboard()["se"])   # (too few draws for tails)
    assert boot.diagnostics["clusters"]["n_clusters"] == {"user": 60} and boot.cluster == ("user",)
    ratio = boot.leaderboard()["se"] / robust.leaderboard()["se"]
    assert ratio.between(0.7, 1.4).all()                      # the same dependence, two ways
    assert (boot.leaderboard()["se"] > 1.5 * naive.leaderboard()["se"]).all()   # the votes of a user agree
    assert "cluster bootstrap" in boot.to_json()["covariance"]


def test_what_a_clustered_fit_says(votes, arena):
    data = br.load(votes, cluster=("user", "prompt"))
    assert br.fit(br.BradleyTerry(ties="drop"), data).cluster == ("user", "prompt")   # the data's clusters
    wald = br.fit(br.BradleyTerry(ties="drop"), data, intervals="wald")
    assert wald.cluster == () and any("Wald intervals treat the comparisons as independent" in w for w in wald.warnings)
    few = br.load(votes[votes["user"] < "u0010"], cluster="user")
    assert any("only 10 clusters of 'user'" in w and str(FEW_CLUSTERS) in w
               for w in br.fit(br.BradleyTerry(ties="drop"), few).warnings)
    with pytest.raises(br.ModelSpecError, match="cluster bootstrap resamples the clusters of one column"):
        br.fit(br.BradleyTerry(ties="drop"), data, intervals="bootstrap")
    with pytest.raises(br.DataError, match="carry no cluster column"):
        br.fit(br.Davidson(), arena, cluster="user")
    with pytest.raises(br.DataError, match=r"not 'session'; read them again with cluster='session'"):
        br.fit(br.Davidson(), data, cluster="session")
    with pytest.raises(br.ModelSpecError, match="posterior allows for them only through the model"):
        br.fit(br.Davidson(), data, method="nuts", cluster="user")
    changed = replace(data, wins_a=data.wins_a + 1)
    with pytest.raises(br.ModelSpecError, match="no longer add up to their clusters' comparisons"):
        br.fit(br.BradleyTerry(ties="drop"), changed)


def test_clusters_read_by_fit_itself_and_shown_in_the_leaderboard(votes):
    fit = br.fit(br.BradleyTerry(ties="drop"), votes, cluster="user")
    board = fit.leaderboard()
    assert board.attrs["cluster"] == ["user"] and "clusters of 'user'" in board.attrs["dependence"]
    assert fit.to_json()["diagnostics"]["clusters"]["n_clusters"] == {"user": 60}


@pytest.mark.slow
@pytest.mark.parametrize("framework", [br.BradleyTerry(ties="drop"), br.Davidson()], ids=lambda f: f.label)
def test_cluster_robust_intervals_cover_where_naive_ones_do_not(framework):
    """Users whose votes on a pair repeat one verdict with probability 0.8, 100 users: the naive Wald
    intervals of the population scores cover far below 95%, the cluster-robust ones near it."""
    truth = SCORES - SCORES.mean()
    hits = {"naive": [], "robust": []}
    eta = None if framework.name == "bt" else -0.5
    for rep in range(100):
        data = br.load(clustered_battles(SCORES, 100, np.random.default_rng([5, rep]), eta=eta), cluster="user")
        for name, options in (("naive", dict(intervals="wald", cluster=())), ("robust", {})):
            board = br.fit(framework, data, **options).leaderboard().set_index("name").reindex(item_names(6))
            hits[name].append((board["lower"] <= truth) & (truth <= board["upper"]))
    assert np.mean(hits["naive"]) < 0.8
    assert 0.9 <= np.mean(hits["robust"]) <= 0.99
