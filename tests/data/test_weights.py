"""Inverse pair-count weights (as LMArena's ``arena-rank`` offers): one weight per pair, whatever
cells (judges, positions) split it, proportional to 1 / max(n_pair, floor), keeping the total count."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.data.weights import inverse_pair_count, reweighted


@pytest.fixture(scope="module")
def data():
    """Pair x–y in four cells (two judges × two positions, 120 comparisons), x–z in one (10),
    y–z in two (judges; 400)."""
    return br.Comparisons.from_cells(
        ["x", "x", "x", "x", "x", "y", "y"], ["y", "y", "y", "y", "z", "z", "z"],
        [10, 20, 5, 15, 4, 100, 150], [20, 10, 15, 5, 3, 50, 90], [5, 5, 5, 5, 3, 5, 5],
        judge=["j1", "j1", "j2", "j2", "j1", "j1", "j2"], first=[0, 1, 0, 1, 0, 0, 0])


def test_every_cell_of_a_pair_has_its_pairs_weight(data):
    w = inverse_pair_count(data, min_count=50)
    names = np.asarray(data.items)
    pair = [f"{names[a]}-{names[b]}" for a, b in zip(data.a, data.b)]
    totals = {p: data.totals[[q == p for q in pair]].sum() for p in set(pair)}
    assert totals == {"x-y": 120, "x-z": 10, "y-z": 400}
    raw = np.array([1 / max(totals[p], 50) for p in pair])
    np.testing.assert_allclose(w, raw * data.totals.sum() / np.sum(raw * data.totals), rtol=1e-12)
    assert np.sum(w * data.totals) == pytest.approx(data.totals.sum(), rel=1e-12)
    # each pair weighs its count divided by the floored count: x–z is floored, so counts less than the others
    weight = {p: np.sum((w * data.totals)[[q == p for q in pair]]) for p in totals}
    assert weight["x-y"] == pytest.approx(weight["y-z"], rel=1e-12)
    assert weight["x-z"] == pytest.approx(weight["x-y"] * 10 / 50, rel=1e-12)


def test_reweighted_cells_scale_every_count(data):
    w = inverse_pair_count(data)
    again = reweighted(data, w)
    for field in ("wins_a", "wins_b", "ties", "ties_bothbad"):
        np.testing.assert_allclose(getattr(again, field), getattr(data, field) * w)
    assert again.totals.sum() == pytest.approx(data.totals.sum())


def test_bad_weights_and_floors_are_refused(data):
    with pytest.raises(br.DataError, match="min_count must be positive"):
        inverse_pair_count(data, min_count=0)
    for bad in (np.ones(3), np.full(data.n_cells, -1.0), np.full(data.n_cells, np.nan)):
        with pytest.raises(br.DataError, match=f"weights must be {data.n_cells} finite non-negative numbers"):
            reweighted(data, bad)
