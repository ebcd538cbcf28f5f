"""Performance tiers, maps of competitors and agreement between rankings (paper §4.2, App. C, E)."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import bayesrank as br
from bayesrank import plots
from bayesrank.analysis.tiers import (
    cluster_fits,
    kendall_tau,
    kernel_pca,
    mds,
    order_distance,
    rank_table,
    tiers,
    z_matrix,
)


def test_kendall_tau_b():
    a = {"x": 3.0, "y": 2.0, "z": 1.0, "w": 0.0}
    b = {"x": 3.0, "y": 1.0, "z": 2.0, "w": 0.0}
    tau = kendall_tau({"A": a, "B": b, "C": pd.Series(a)})
    assert tau.loc["A", "B"] == pytest.approx(4 / 6)  # 5 concordant, 1 discordant pair
    assert tau.loc["A", "C"] == pytest.approx(1.0)
    assert np.allclose(tau.values, tau.values.T)
    assert set(cluster_fits(tau)) == {"A", "B", "C"}
    ranks = rank_table({"A": a, "B": b})
    assert list(ranks.index) == ["x", "y", "z", "w"] and ranks.loc["z", "B"] == 2


def test_tiers_maps_and_plots(small_fit):
    Z = z_matrix(small_fit)
    assert np.allclose(Z.values, -Z.values.T) and np.allclose(np.diag(Z), 0)
    t = tiers(small_fit, top=None, n_tiers=3)
    assert list(t.columns) == ["rank", "name", "score", "leaf", "tier"]
    assert t["tier"].iloc[0] == 1 and t["tier"].max() <= 3
    assert sorted(t["leaf"]) == list(range(len(t)))
    by_order = tiers(small_fit, top=5, n_tiers=2, by="order")
    assert len(by_order) == 5
    od = order_distance(small_fit)
    assert ((od.values >= 0) & (od.values <= 1)).all()
    k = kernel_pca(small_fit, n_components=3)
    assert {"pc1", "pc2", "pc3"} <= set(k.columns) and k["rank"].tolist() == list(range(1, 9))
    m = mds(small_fit, n_components=2)
    assert len(m) == 8 and {"dim1", "dim2"} <= set(m.columns)
    fig = plots.plot_dendrogram(t)
    labels = [x.get_text() for x in fig.axes[0].get_yticklabels()]
    assert sorted(labels) == sorted(f"{r}. {n}" for r, n in zip(t["rank"], t["name"]))
    for coords in (k, m):
        fig = plots.plot_map(coords)
        assert isinstance(fig, Figure) and len(fig.axes[0].collections[0].get_offsets()) == 8
    fig = plots.plot_bump(rank_table({"a": small_fit, "b": small_fit.scores()}))
    assert len(fig.axes[0].get_lines()) == 8                    # one line per item
    fig = plots.plot_kendall(kendall_tau({"a": small_fit, "b": small_fit}))
    np.testing.assert_allclose(fig.axes[0].images[0].get_array(), 1.0)   # a fit agrees with itself


def test_classical_mds_recovers_one_dimensional_scores(small_counts):
    bt = br.fit(br.BradleyTerry(ties="drop"), small_counts)
    m = mds(bt, n_components=1).set_index("name")
    x = bt.scores()
    d_mds = np.abs(m["dim1"].to_numpy()[:, None] - m["dim1"].to_numpy()[None])
    xs = x.loc[m.index].to_numpy()
    np.testing.assert_allclose(d_mds, np.abs(xs[:, None] - xs[None]), atol=1e-10)
