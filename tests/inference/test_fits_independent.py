"""A fit answers for its own data only: fits of the same shape share compiled code, never data.

Regression test of a defect of the old design (a compiled model cached per shape held the
data of the last fit, so an earlier fit's NLL, rates and predictions changed when another
data set of the same shape was fitted): interleaved MAP fits, NUTS fits, and a fit reloaded
from disk, each checked against its own data with a likelihood written here in NumPy.
"""

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.inference import structure as compiled_module
from tests.conftest import reference_loglik

PAIRS = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 4), (1, 5), (2, 3), (2, 5), (3, 4), (3, 5), (4, 5), (0, 5)]


def six_items(seed):
    """6 items, the same 12 pairs, different counts (Davidson data with ties)."""
    rng = np.random.default_rng(seed)
    s = rng.normal(0, 0.8, 6)
    names = np.array([f"m{k}" for k in range(6)], dtype=object)
    a, b = np.array(PAIRS).T
    d = s[a] - s[b]
    w = np.column_stack([np.exp(d / 2), np.exp(-d / 2), np.full(d.size, np.exp(-0.4))])
    counts = np.array([rng.multinomial(60, p / p.sum()) for p in w])
    return br.Comparisons.from_cells(names[a], names[b], counts[:, 0], counts[:, 1], counts[:, 2])


def snapshot(fit):
    return {
        "nll": fit.nll,
        "cross_entropies": fit.cross_entropies(),
        "board": fit.leaderboard(),
        "predict": fit.predict(["m0", "m2"], ["m5", "m4"]),
    }


def assert_same(before, after):
    assert after["nll"] == before["nll"]
    assert after["cross_entropies"] == before["cross_entropies"]
    pd.testing.assert_frame_equal(after["board"], before["board"])
    pd.testing.assert_frame_equal(after["predict"], before["predict"])


def own_nll(fit, data):
    """The fit's NLL recomputed from its estimates and its own data, in NumPy."""
    eta = float(fit.tree["estimate"]["eta_raw"])
    return -reference_loglik(fit.framework, data, fit.scores().to_numpy(), eta) / data.n_comparisons


def test_interleaved_map_fits_answer_for_their_own_data():
    data_a, data_b = six_items(1), six_items(2)
    assert data_a.n_cells == data_b.n_cells == 12
    fit_a = br.fit(br.Davidson(k_tie=0), data_a)
    before = snapshot(fit_a)
    fit_b = br.fit(br.Davidson(k_tie=0), data_b)      # same shape: shares the compiled structure
    assert fit_b.nll != fit_a.nll
    assert_same(before, snapshot(fit_a))
    assert fit_a.nll == pytest.approx(own_nll(fit_a, data_a), rel=1e-12)
    assert fit_b.nll == pytest.approx(own_nll(fit_b, data_b), rel=1e-12)


def test_interleaved_nuts_fits_answer_for_their_own_data():
    kw = dict(method="nuts", draws=50, tune=50, chains=2, random_seed=4)   # independence, not convergence
    fit_a = br.fit(br.Davidson(k_tie=0), six_items(1), **kw)
    before = snapshot(fit_a)
    fit_b = br.fit(br.Davidson(k_tie=0), six_items(2), **kw)
    assert fit_b.nll != fit_a.nll
    assert_same(before, snapshot(fit_a))


def test_predict_after_load_answers_for_the_saved_fit(tmp_path):
    fit_a = br.fit(br.Davidson(k_tie=0), six_items(1))
    loaded = br.Fit.load(fit_a.save(tmp_path / "a.nc"))
    br.fit(br.Davidson(k_tie=0), six_items(2))
    pd.testing.assert_frame_equal(loaded.predict(["m0", "m2"], ["m5", "m4"]), fit_a.predict(["m0", "m2"], ["m5", "m4"]))
    assert_same(snapshot(fit_a), snapshot(loaded))


def test_compiled_structures_are_cached_by_structure_and_bounded(monkeypatch):
    monkeypatch.setattr(compiled_module, "CACHE_SIZE", 2)
    monkeypatch.setattr(compiled_module, "_CACHE", type(compiled_module._CACHE)())
    for k_tie in (0, 1, 2):
        br.fit(br.Davidson(k_tie=k_tie), six_items(3))
    assert len(compiled_module._CACHE) == 2
    first = next(iter(compiled_module._CACHE.values()))
    br.fit(br.Davidson(k_tie=1), six_items(4))   # another data set of a cached shape: no new structure
    assert len(compiled_module._CACHE) == 2 and first in compiled_module._CACHE.values()
