"""The random-effects framework (bayesrank/model/random_effects.py): what it accepts, its cells by
cell × cluster, and a likelihood that is the base's with each cluster's own scores (NumPy reference
of Davidson and Bradley–Terry at the fit's estimate)."""

from dataclasses import replace

import numpy as np
import pytest

import bayesrank as br
from bayesrank.data.simulate import clustered_battles
from tests.conftest import reference_loglik

SCORES = np.linspace(-1, 1, 5)


@pytest.fixture(scope="module")
def votes():
    return clustered_battles(SCORES, 15, np.random.default_rng(3), share=0.0, spread=0.5, eta=-0.3,
                             pairs_per_cluster=5, votes_per_pair=6)


def test_what_it_accepts():
    with pytest.raises(br.ModelSpecError, match="BradleyTerry, RaoKupper or Davidson base"):
        br.RandomEffects(br.JudgeAware(), cluster="user")
    with pytest.raises(br.ModelSpecError, match="Thurstonian"):
        br.RandomEffects(br.Davidson(k_cov=0), cluster="user")
    with pytest.raises(br.ModelSpecError, match="cluster=COLUMN"):
        br.RandomEffects(br.Davidson())
    with pytest.raises(br.ModelSpecError, match="positive number"):
        br.RandomEffects(br.Davidson(), cluster="user", spread=-1.0)
    model = br.RandomEffects(br.Davidson(k_tie=1), cluster="user", spread=0.4)
    assert br.framework_from_spec(model.spec()) == model
    assert model.label == ("RandomEffects(Davidson(k_tie=1, tie_intercept=False, k_cov=None), cluster='user', "
                           "spread=0.4)")
    assert model.clusters() == ("user",) and model.random_effects() == {"cluster_effect": 0.4}


def test_its_cells_are_by_cell_and_cluster(votes):
    data = br.load(votes, cluster="user")
    prepared = br.RandomEffects(br.Davidson(), cluster="user").prepare(data)
    assert prepared.judges == data.clusters.levels[0] and prepared.n_cells == data.clusters.n_rows
    np.testing.assert_allclose(prepared.counts().sum(axis=0), data.counts().sum(axis=0))
    with pytest.raises(br.DataError, match=r"cluster='user'\) needs the records read with that column"):
        br.RandomEffects(br.Davidson(), cluster="user").prepare(br.load(votes))
    one_each = votes.assign(user=[f"v{k}" for k in range(len(votes))])
    with pytest.raises(br.DataError, match="holds a single comparison: a cluster's own deviation"):
        br.RandomEffects(br.Davidson(), cluster="user").prepare(br.load(one_each, cluster="user"))


@pytest.mark.parametrize("base", [br.Davidson(), br.BradleyTerry(ties="drop")], ids=lambda f: f.label)
def test_the_likelihood_is_the_base_one_with_each_clusters_scores(votes, base):
    fit = br.fit(br.RandomEffects(base, cluster="user"), votes)
    est = fit.tree["estimate"]
    own = est["cluster_score"].values                     # (cluster, item)
    eta = float(est["eta_raw"]) if "eta_raw" in est else None
    data = br.load(votes, cluster="user")
    total = 0.0
    for k in range(own.shape[0]):                          # each user's comparisons under the user's scores
        cells = data.clusters.codes[:, 0] == k
        part = data.subset(np.unique(data.clusters.cell[cells]))
        rows = data.clusters.subset(np.unique(data.clusters.cell[cells]), data.n_cells)
        mine = rows.codes[:, 0] == k
        counts = np.zeros((part.n_cells, 3))
        np.add.at(counts, rows.cell[mine], rows.counts[mine])
        part = replace(part, wins_a=counts[:, 0], wins_b=counts[:, 1], ties=counts[:, 2], clusters=None)
        total += reference_loglik(base, part, own[k], eta)
    assert fit.loglik == pytest.approx(total, rel=1e-10)
    assert fit.converged and fit.framework == br.RandomEffects(base, cluster="user")


@pytest.mark.slow
def test_nuts_samples_the_hierarchy(votes):
    fit = br.fit(br.RandomEffects(br.BradleyTerry(ties="drop"), cluster="user"), votes, method="nuts",
                 draws=500, tune=500, chains=2, random_seed=1, progressbar=False)
    post = fit.tree["posterior"]
    assert {"spread", "cluster_offset", "cluster_effect", "cluster_score"} <= set(post.data_vars)
    assert fit.cluster == ("user",) and fit.interval_method == "posterior"
    assert 0.1 < float(fit.tree["estimate"]["spread"]) < 1.5
