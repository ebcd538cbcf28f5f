"""Reading and writing fits, and reading a fit's parts back out of its DataTree.

A fit is one NetCDF file: the DataTree of :mod:`bayesrank.inference.tree` with its attrs.
Files are parsed, never executed (no pickle, no eval). Everything a fit reports is stored in
it; nothing is re-derived from the code that reads it, so a saved fit gives the same
numbers under a later version of the package.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import xarray as xr

from bayesrank.data.comparisons import Comparisons
from bayesrank.errors import FitFileError, OutputError
from bayesrank.model.framework import Framework
from bayesrank.model.registry import framework_from_spec
from bayesrank.output.atomic import claim, write_files

__all__ = ["check_target", "load", "save", "write_files", "write_netcdf"]

#: Attributes every saved fit carries.
REQUIRED_ATTRS = ("bayesrank_spec", "bayesrank_method", "bayesrank_diagnostics", "bayesrank_warnings")
#: Groups every saved fit has.
REQUIRED_GROUPS = ("estimate", "observed_data", "constant_data", "data")


def framework_of(tree: xr.DataTree) -> Framework:
    """The framework a fit was made with (from its stored spec)."""
    return framework_from_spec(json.loads(tree.attrs["bayesrank_spec"]))


def method_of(tree: xr.DataTree) -> str:
    """``"map"`` or ``"nuts"``."""
    return tree.attrs["bayesrank_method"]


def diagnostics_of(tree: xr.DataTree) -> dict:
    return json.loads(tree.attrs["bayesrank_diagnostics"])


def warnings_of(tree: xr.DataTree) -> list[str]:
    return json.loads(tree.attrs["bayesrank_warnings"])


def data_of(tree: xr.DataTree) -> Comparisons:
    """The comparisons as given to the fit (before the framework's tie convention)."""
    return Comparisons.from_xarray(tree["data"].to_dataset())


def model_data_of(tree: xr.DataTree) -> Comparisons:
    """The cells the likelihood saw (after the framework's tie convention)."""
    const = tree["constant_data"].to_dataset()
    counts = tree["observed_data"]["counts"].values
    names = tuple(str(x) for x in const["covariate"].values) if "covariate" in const.coords else ()
    return Comparisons(
        items=tuple(str(x) for x in const["item"].values),
        a=const["item_a"].values.astype(np.int64),
        b=const["item_b"].values.astype(np.int64),
        wins_a=counts[:, 0], wins_b=counts[:, 1], ties=counts[:, 2],
        ties_bothbad=np.zeros(len(counts)),
        judges=tuple(str(x) for x in const["judge"].values) if "judge" in const.coords else None,
        judge=const["judge_index"].values.astype(np.int64) if "judge_index" in const else None,
        first=const["first"].values.astype(np.int64) if "first" in const else None,
        period=const["period_index"].values.astype(np.int64) if "period_index" in const else None,
        periods=tuple(str(x) for x in const["period_start"].values) if "period_start" in const.coords else (),
        period_unit=str(const.attrs.get("period_unit", "")),
        covariates=const["covariates"].values.astype(float) if "covariates" in const else None,
        covariate_names=names,
        contrasts=const["contrasts"].values.astype(float) if "contrasts" in const else None,
        contrast_names=tuple(str(x) for x in const["contrast"].values) if "contrast" in const.coords else (),
        source=tree.attrs.get("bayesrank_source", ""),
    )


def check_target(targets: Path | list[Path], overwrite: bool = False) -> list[Path]:
    """The output files that already exist, after refusing what the writer would refuse (a
    folder, a target claimed by another run, a place that cannot hold it, an existing target
    without ``overwrite``): :func:`bayesrank.output.atomic.claim`, taken and given back.

    Raises
    ------
    OutputError
    """
    targets = [Path(targets)] if isinstance(targets, (str, Path)) else [Path(p) for p in targets]
    with claim(targets, overwrite) as held:
        return held.existing


def save(tree: xr.DataTree, path: str | Path, overwrite: bool = True) -> Path:
    """Write a fit to one NetCDF file, atomically (a temporary file renamed into place).

    Names and text are stored as NetCDF strings (the data layer refuses NUL characters, which
    NetCDF cannot hold).

    Raises
    ------
    OutputError
        When the file cannot be written (the folder is not writable, the disk is full), or
        exists and ``overwrite`` is False.
    """
    path = Path(path)
    write_files({path: lambda tmp: write_netcdf(tree, tmp)}, overwrite=overwrite)
    return path


def write_netcdf(tree: xr.DataTree, path: Path) -> None:
    """Write the tree to ``path`` (compressed numeric variables)."""
    encoding = {
        node.path: {name: {"zlib": True, "complevel": 4} for name in node.data_vars if node[name].dtype.kind in "fiu"}
        for node in tree.subtree
    }
    try:
        tree.to_netcdf(path, engine="h5netcdf", encoding={k: v for k, v in encoding.items() if v})
    except ValueError as err:  # a value NetCDF cannot store
        raise OutputError(f"cannot store the fit as NetCDF ({err}).") from None


def load(path: str | Path) -> xr.DataTree:
    """Read a fit written by :func:`save`: the file, or a folder written by ``bayesrank fit
    ... --out DIR`` (its ``fit.nc``).

    Raises
    ------
    FitFileError
        When the file does not exist or is not a saved fit.
    """
    if not str(path).strip():   # (Path("") is the current folder)
        raise FitFileError("the fit's path is empty; pass a fit's .nc file or the folder bayesrank fit --out wrote.")
    path = Path(path)
    if path.is_dir():
        if not (path / "fit.nc").is_file():
            raise FitFileError(f"{path} holds no fit.nc; pass a folder written by 'bayesrank fit DATA ... --out DIR' "
                               "or a fit's .nc file.")
        path = path / "fit.nc"
    if not path.is_file():
        raise FitFileError(f"no saved fit at {path}.")
    try:
        tree = xr.open_datatree(path, engine="h5netcdf").load()
    except Exception as err:  # h5py / h5netcdf / xarray raise many types on foreign files
        raise FitFileError(f"{path} is not a readable NetCDF file ({type(err).__name__}); pass a file "
                           "written by Fit.save or bayesrank fit --out.") from None
    missing = [a for a in REQUIRED_ATTRS if a not in tree.attrs]
    if missing:
        raise FitFileError(f"{path} is not a bayesrank fit (missing {', '.join(missing)}).")
    absent = [g for g in REQUIRED_GROUPS if g not in tree.children]
    if absent:
        raise FitFileError(f"{path} is not a valid bayesrank fit: it lacks the group(s) {', '.join(absent)}; pass a "
                           "file written by Fit.save or bayesrank fit --out, unchanged.")
    return tree
