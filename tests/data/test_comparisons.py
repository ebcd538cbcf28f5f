"""Comparisons (bayesrank/data/comparisons.py): removing judges by name, the cells' digest."""

from __future__ import annotations

import pytest

import bayesrank as br


def test_without_judges_refuses_names_that_are_not_judges(mtbench):
    with pytest.raises(br.DataError, match="'gpt-4x' is not a judge of the data; the judges are 'Qwen/"):
        mtbench.without_judges(["gpt-4x"])
    with pytest.raises(br.DataError, match="are not judges"):
        mtbench.without_judges(["a", "b"])
    kept = mtbench.without_judges(mtbench.judges[0])  # one name as a string
    assert kept.n_judges == mtbench.n_judges - 1 and mtbench.judges[0] not in kept.judges
    assert mtbench.without_judges([]) is mtbench


def test_without_judges_on_data_without_judges(arena):
    with pytest.raises(br.DataError, match="the data have no judges"):
        arena.without_judges(["x"])


def test_cells_digest_tells_data_apart(arena, mtbench):
    assert arena.cells_digest() == br.load("arena-2024").cells_digest()
    other = br.Comparisons.from_cells(["a"], ["b"], [1], [2])
    same_items_other_counts = br.Comparisons.from_cells(["a"], ["b"], [2], [1])
    assert other.cells_digest() != same_items_other_counts.cells_digest()
    assert arena.cells_digest() != mtbench.cells_digest()
    roundtrip = br.Comparisons.from_xarray(mtbench.to_xarray())
    assert roundtrip.cells_digest() == mtbench.cells_digest()
