"""fit() and Fit.load (bayesrank/results/fit.py): options checked before any work, and a saved
fit read back whole or refused as not a valid fit."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
import xarray as xr

import bayesrank as br
from bayesrank.errors import FitFileError, ModelSpecError


@pytest.fixture(scope="module")
def saved(tmp_path_factory, mtbench):
    path = tmp_path_factory.mktemp("fit") / "fit.nc"
    br.fit(br.BradleyTerry(), mtbench, draws=200).save(path)
    return path


@pytest.mark.parametrize(("kwargs", "fragment"), [
    (dict(chains=2), "chains is not an option of bayesrank.fit(method='map'); its options: "
                     "intervals, information, draws"),
    (dict(chains=2, tune=5), "chains, tune are not options"),
    (dict(draws="100"), "draws of bayesrank.fit(method='map') must be a whole number, got '100'"),
    (dict(draws=100.5), "must be a whole number"),
    (dict(reweight="yes"), "reweight of bayesrank.fit(method='map') must be true or false"),
    (dict(method="nuts", n_boot=10), "n_boot is not an option of bayesrank.fit(method='nuts'); its options: draws"),
    (dict(method="nuts", draws="10"), "draws of bayesrank.fit(method='nuts') must be a whole number"),
])
def test_options_of_the_other_method_or_of_the_wrong_kind_are_refused_first(kwargs, fragment):
    # (the data do not exist: the options are checked before anything is read)
    with pytest.raises(ModelSpecError) as err:
        br.fit(br.BradleyTerry(), "no-such-data", **kwargs)
    assert fragment in str(err.value)


def test_numpy_scalars_are_options_like_python_numbers(mtbench):
    fit = br.fit(br.BradleyTerry(), mtbench, draws=np.int64(200), random_seed=np.int32(3), reweight=np.bool_(False))
    assert fit.tree["posterior"].sizes["draw"] == 200


def test_a_saved_fit_reads_back(saved):
    assert br.Fit.load(saved).framework.name == "bt"


def _edited(saved, tmp_path, edit):
    path = tmp_path / "edited.nc"
    path.write_bytes(saved.read_bytes())
    with h5py.File(path, "r+") as f:
        edit(f)
    return path


EDITS = {
    "spec not JSON": lambda f: f.attrs.modify("bayesrank_spec", "{not json"),
    "unknown framework": lambda f: f.attrs.modify("bayesrank_spec", json.dumps({"framework": "nope"})),
    "warnings not a list of text": lambda f: f.attrs.modify("bayesrank_warnings", json.dumps([1, 2])),
    "diagnostics not JSON": lambda f: f.attrs.modify("bayesrank_diagnostics", "]"),
    "method unknown": lambda f: f.attrs.modify("bayesrank_method", "magic"),
    "versions not JSON": lambda f: f.attrs.modify("bayesrank_versions", "{"),
    "a group removed": lambda f: f.__delitem__("observed_data"),
    "a variable removed": lambda f: f["estimate"].__delitem__("score"),
    "item names removed": lambda f: f["constant_data"].__delitem__("item_a"),
    "options not JSON": lambda f: f.attrs.modify("bayesrank_options", "{"),
    "lineage not a list of entries": lambda f: f.attrs.modify("bayesrank_lineage", json.dumps("x")),
    "negative counts": lambda f: f["observed_data"]["counts"].__setitem__(..., -5.0),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_fit_is_not_a_valid_fit(saved, tmp_path, edit):
    path = _edited(saved, tmp_path, EDITS[edit])
    with pytest.raises(FitFileError, match=r"is not a (valid )?bayesrank fit|\.nc: the fit's"):
        br.Fit.load(path)


def test_an_estimate_of_another_model_is_not_a_valid_fit(saved, tmp_path):
    """A file whose free coordinates are not the model's (gars --fit, update and the design
    commands read them) is refused when it is loaded, not used."""
    tree = br.Fit.load(saved).tree.copy()
    estimate = tree["estimate"].to_dataset().drop_vars(["theta", "theta_cov"], errors="ignore")
    tree["estimate"] = xr.DataTree(estimate.assign(theta=("free", np.zeros(1))))
    tree.to_netcdf(tmp_path / "forged.nc", engine="h5netcdf")
    with pytest.raises(FitFileError, match="its estimate theta has 1 coordinates, where the model has"):
        br.Fit.load(tmp_path / "forged.nc")


def test_files_that_are_not_fits(tmp_path):
    (tmp_path / "text.nc").write_text("hello")
    with pytest.raises(FitFileError, match="not a readable NetCDF file"):
        br.Fit.load(tmp_path / "text.nc")
    xr.Dataset({"x": ("d", [1, 2])}).to_netcdf(tmp_path / "other.nc", engine="h5netcdf")
    with pytest.raises(FitFileError, match="is not a bayesrank fit"):
        br.Fit.load(tmp_path / "other.nc")
    with pytest.raises(FitFileError, match="no saved fit"):
        br.Fit.load(tmp_path / "missing.nc")


def test_a_fit_is_read_from_its_out_folder_and_an_empty_name_is_said(saved, tmp_path):
    assert br.Fit.load(saved.parent).framework.name == "bt"   # the folder holding fit.nc, as the CLI takes it
    with pytest.raises(FitFileError, match="holds no fit.nc"):
        br.Fit.load(tmp_path)
    with pytest.raises(FitFileError, match="path is empty"):
        br.Fit.load("")
    with pytest.raises(br.DataError, match="the data name is empty"):
        br.load("")
