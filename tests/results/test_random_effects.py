"""What a random-effects fit says about its clusters (bayesrank/results/random_effects.py): τ with an
interval on the log scale, and each cluster's board, the cluster's own scores best first."""

import numpy as np
import pytest
from scipy.special import ndtri

import bayesrank as br
from bayesrank.data.simulate import clustered_battles


@pytest.fixture(scope="module")
def fit():
    votes = clustered_battles(np.linspace(-1, 1, 4), 12, np.random.default_rng(5), share=0.0, spread=0.7,
                              pairs_per_cluster=4, votes_per_pair=8)
    return br.fit(br.RandomEffects(br.BradleyTerry(ties="drop"), cluster="user"), votes)


def test_spread_and_the_clusters_boards(fit):
    summary = fit.random_effects(0.9)
    est = fit.tree["estimate"]
    tau, se = float(est["spread"]), float(est["spread_se"])
    z = ndtri(0.95)
    assert summary.spread == tau and summary.cluster == "user" and summary.n_clusters == 12
    assert summary.spread_lower == pytest.approx(tau * np.exp(-z * se / tau))
    assert summary.spread_upper == pytest.approx(tau * np.exp(z * se / tau))
    first = summary.boards[summary.boards["cluster"] == "u0000"]
    own = est["cluster_score"].sel(cluster="u0000").values
    assert first["score"].tolist() == sorted(own, reverse=True) and first["rank"].tolist() == [1, 2, 3, 4]
    assert (first["lower"] < first["score"]).all() and (first["score"] < first["upper"]).all()
    out = summary.to_json()
    assert out["n_clusters"] == 12 and len(out["boards"]) == 48 and out["method"] == "laplace"
    text = summary.to_text(top=2, clusters=3)
    assert "τ = " in text and "(+9 more clusters" in text


def test_a_fit_without_random_effects_has_none(fit):
    plain = br.fit(br.BradleyTerry(ties="drop"), fit.data)
    with pytest.raises(br.BayesrankError, match="no random effects"):
        plain.random_effects()
