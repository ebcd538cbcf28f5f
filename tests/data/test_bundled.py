"""Bundled datasets: every declared file ships inside the package and loads by its name.

Each loads with its declared both-bad convention, and an unknown name lists the datasets. (Their
reference numbers are checked in test_records.py.)
"""

from importlib import resources

import pytest

import bayesrank as br
from bayesrank.data.bundled import DATASETS, dataset_path


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_every_dataset_ships_and_loads_with_its_convention(name):
    dataset = DATASETS[name]
    assert dataset.name == name
    path = dataset_path(name)
    assert path.is_file() and path.name == dataset.filename
    with resources.as_file(path) as local:
        assert local.stat().st_size > 0
    data = br.load(name)
    assert data.source == name and data.n_comparisons > 0
    declared = br.load(name, both_bad_as_ties=dataset.both_bad_as_ties)   # the declared convention is the default
    assert declared.n_cells == data.n_cells and (declared.counts() == data.counts()).all()


def test_an_unknown_dataset_lists_the_bundled_ones():
    with pytest.raises(br.DataError,
                       match="unknown dataset 'arena-2025'; bundled datasets: arena-2024, mtbench-judges"):
        dataset_path("arena-2025")
