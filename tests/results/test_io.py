"""Saved fits: one NetCDF file that reads back identical (every group, variable and attribute), is
never silently replaced, and whose parts (framework, method, data as given, cells as modelled) are
read back as they were."""

import numpy as np
import pytest
import xarray as xr

import bayesrank as br
from bayesrank.results.io import data_of, framework_of, load, method_of, model_data_of, save


@pytest.fixture(scope="module")
def fit(mtbench):
    return br.fit(br.JudgeAware(ties="half"), mtbench, draws=200)


def test_a_saved_fit_reads_back_identical(fit, tmp_path):
    path = save(fit.tree, tmp_path / "fit.nc")
    back = load(path)
    assert back.attrs == fit.tree.attrs
    assert sorted(node.path for node in back.subtree) == sorted(node.path for node in fit.tree.subtree)
    for node in fit.tree.subtree:
        xr.testing.assert_identical(back[node.path].to_dataset(), node.to_dataset())


def test_an_existing_file_is_replaced_only_when_allowed(fit, tmp_path):
    path = tmp_path / "fit.nc"
    path.write_text("keep me")
    with pytest.raises(br.OutputError):
        save(fit.tree, path, overwrite=False)
    assert path.read_text() == "keep me"
    save(fit.tree, path, overwrite=True)
    assert method_of(load(path)) == "map"


def test_the_parts_of_a_fit_read_back(fit, mtbench):
    assert framework_of(fit.tree) == br.JudgeAware(ties="half")
    given = data_of(fit.tree)
    assert given.items == mtbench.items and given.judges == mtbench.judges
    for field in ("a", "b", "wins_a", "wins_b", "ties", "judge"):
        np.testing.assert_array_equal(getattr(given, field), getattr(mtbench, field))
    modelled = model_data_of(fit.tree)
    prepared = br.JudgeAware(ties="half").prepare(mtbench)
    np.testing.assert_allclose(modelled.counts(), prepared.counts())
    assert np.all(modelled.ties == 0)                    # ties as halves: none left as a category
    np.testing.assert_allclose(modelled.wins_a + modelled.wins_b, mtbench.totals)
