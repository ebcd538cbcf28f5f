"""Pairwise matrices of the raw counts (FastChat's battle counts and win fractions)."""

import numpy as np
import pandas as pd

import bayesrank as br
from bayesrank.data.matrices import battle_counts, win_fractions


def test_counts_and_win_fractions_of_a_few_battles():
    battles = pd.DataFrame([("x", "y", "model_a"), ("y", "x", "model_a"), ("x", "y", "model_a"), ("x", "y", "tie"),
                            ("x", "z", "model_b"), ("z", "x", "tie")], columns=["model_a", "model_b", "winner"])
    data = br.load(battles)
    counts = battle_counts(data)
    assert counts.loc["x", "y"] == counts.loc["y", "x"] == 4 and counts.loc["x", "z"] == 2 and counts.loc["y", "z"] == 0
    assert (np.diag(counts) == 0).all()
    np.testing.assert_array_equal(counts.sum(axis=1), data.item_totals()["n_comparisons"].reindex(counts.index))
    w = win_fractions(data, ["y", "x", "z"])       # any order of items
    assert w.loc["x", "y"] == 2 / 3 and w.loc["y", "x"] == 1 / 3 and w.loc["z", "x"] == 1.0
    assert np.isnan(w.loc["y", "z"]) and np.isnan(w.loc["x", "x"])
    both = w.to_numpy() + w.to_numpy().T
    np.testing.assert_allclose(both[np.isfinite(both)], 1.0)
