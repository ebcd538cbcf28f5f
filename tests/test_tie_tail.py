"""Factored tie thresholds run into the tail: a compared pair without ties pushes its threshold towards
−∞ (its tie probability, of order e^h, towards 0), and only the factor structure of the thresholds holds it.
At paper model 30's MLE on arena-2024 (Davidson k_tie = 20, k_cov = 3) llama-13b / palm-2 sits at h = −250
(19 comparisons, no ties) and the tie factors' standard errors reach 1.7e3; the fit says so in words
(:func:`bayesrank.model.paired._tail_findings`).

The reference thresholds are written here in NumPy: h_ab = g_a·φ_b + g_b·φ_a (+ η₀).
"""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.model.paired import TAIL
from bayesrank.model.structures import dct_iv_basis


def compared_thresholds(prepared, G, intercept=0.0):
    """(a, b, h) of the compared pairs, by the reference formula."""
    compared = prepared.totals > 0
    a, b = prepared.a[compared], prepared.b[compared]
    phi = dct_iv_basis(prepared.n_items, G.shape[1])
    return a, b, (G[a] * phi[b]).sum(1) + (G[b] * phi[a]).sum(1) + intercept


@pytest.fixture(scope="module")
def davidson_k1(arena):
    fw = br.Davidson(k_tie=1)
    fit = br.fit(fw, arena)
    return fw, fw.prepare(arena), fit


def test_an_estimate_inside_says_nothing(davidson_k1):
    fw, prepared, fit = davidson_k1
    G = fit.tree["estimate"]["tie_factor"].values
    assert compared_thresholds(prepared, G)[2].min() > TAIL
    assert "tail_tie_thresholds" not in fit.diagnostics
    assert not any("into the tail" in w for w in fit.warnings)


def test_thresholds_below_the_tail_are_named_lowest_first(davidson_k1):
    fw, prepared, fit = davidson_k1
    G = fit.tree["estimate"]["tie_factor"].values.copy()
    item = list(prepared.items).index("llama-13b")
    G[item] = -600.0  # (every φ of the first DCT-IV column is positive: its pairs' thresholds fall)
    a, b, h = compared_thresholds(prepared, G)
    below = np.argsort(h)[: int(np.sum(h < TAIL))]
    assert 5 < below.size < h.size and np.all((a[below] == item) | (b[below] == item))
    found = fw.findings(prepared, {"tie_factor": G}, {})
    listed = found.diagnostics["tail_tie_thresholds"]
    assert [(x, y) for x, y, _ in listed] == [(prepared.items[a[j]], prepared.items[b[j]]) for j in below]
    np.testing.assert_allclose([v for *_, v in listed], h[below], rtol=1e-12)
    (said,) = [w for w in found.warnings if "into the tail" in w]
    first = below[0]
    assert said.startswith(f"the tie thresholds of {below.size} compared pairs ran far into the tail: "
                           f"{prepared.items[a[first]]} / {prepared.items[b[first]]} at h = {h[first]:.3g} "
                           f"({prepared.totals[prepared.totals > 0][first]:g} comparisons")
    assert f"and {below.size - 5} more" in said and "k_tie = 1" in said


def test_the_intercept_counts_and_the_paper_form_says_nothing(arena, davidson_k1):
    _, prepared, fit = davidson_k1
    G = np.zeros_like(fit.tree["estimate"]["tie_factor"].values)
    nested = br.Davidson(k_tie=1, tie_intercept=True)
    found = nested.findings(prepared, {"tie_factor": G, "eta_raw": np.array(TAIL - 1.0)}, {})
    assert len(found.diagnostics["tail_tie_thresholds"]) == int(np.sum(prepared.totals > 0))
    assert nested.findings(prepared, {"tie_factor": G, "eta_raw": np.array(TAIL + 1.0)}, {}).warnings == []
    # the paper-form Rao–Kupper threshold |h|: a very negative h gives more ties, not fewer
    G[list(prepared.items).index("llama-13b")] = -600.0
    paper = br.RaoKupper(k_tie=1, threshold="abs")
    assert paper.findings(paper.prepare(arena), {"tie_factor": G}, {}).warnings == []
    assert br.RaoKupper(k_tie=1).findings(prepared, {"tie_factor": G}, {}).warnings


@pytest.mark.slow
def test_paper_model_30_names_its_thresholds_in_the_tail(arena):
    from bayesrank.model.papers import leaderbot_model

    fit = br.fit(leaderbot_model(30), arena)
    listed = fit.diagnostics["tail_tie_thresholds"]
    assert listed[0][:2] == ["llama-13b", "palm-2"] and listed[0][2] < -100
    assert all(h < TAIL for *_, h in listed)
    assert any(w.startswith("the tie thresholds of ") and "llama-13b / palm-2" in w for w in fit.warnings)
