"""The one shape of a fit: an ArviZ DataTree that MAP and NUTS both produce.

Groups
------
``posterior``
    Draws of every model variable (dims ``chain, draw, …``). NUTS: the posterior. MAP: draws
    from the asymptotic normal of the MLE pushed through the model (one chain). Absent from a
    MAP fit of point estimates only (``intervals="none"``: ``attrs["interval"] = "none"``, and
    no ``<name>_se`` or covariances in ``estimate``).
``estimate``
    Per variable its point value ``<name>`` and uncertainty ``<name>_se`` (MAP: the MLE and
    its delta-method standard error; NUTS: posterior mean and sd); ``cell_log_probs`` (cell ×
    outcome: at the MLE, or the log posterior-mean probabilities) and ``loglik`` (at the MLE,
    or the posterior mean of the total). MAP adds ``theta`` and ``theta_cov`` (the free
    coordinates and their covariance) and ``score_cov`` — not beyond
    :data:`~bayesrank.inference.map.DENSE_COVARIANCE_MAX` free coordinates, where the
    covariance stays a factor (``attrs["covariance_stored"] = 0``). ``attrs["interval"]`` says how
    intervals are made: ``"wald"`` (point ± z·se) or ``"quantile"`` (of the draws), and
    ``attrs["covariance"]`` how the MAP covariance was computed.
``observed_data`` / ``constant_data``
    The cells the likelihood saw: counts after the framework's tie convention, and each
    cell's items (judge, position, covariates).
``data``
    The comparisons as given, before the tie convention (:meth:`Comparisons.to_xarray`).
``log_likelihood``, ``sample_stats``
    NUTS only: the pointwise log-likelihood per cell (for LOO) and the sampler's statistics.

The root ``attrs`` carry the package and library versions, the framework spec, the method,
the number of free parameters, diagnostics (with ``both_bad_ties``, the convention the data's
"tie (bothbad)" verdicts followed, when they had any: :mod:`bayesrank.data.bothbad`) and
warnings (JSON), so a saved fit is read back
without re-deriving anything from today's code.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import pandas as pd
import xarray as xr

from bayesrank.data import bothbad
from bayesrank.data.comparisons import OUTCOMES, Comparisons
from bayesrank.inference.structure import cell_arrays

#: Libraries whose versions are recorded in every fit.
RECORDED_VERSIONS = ("bayesrank", "pymc", "pytensor", "arviz", "numpy", "scipy", "xarray")


@cache
def versions() -> dict[str, str]:
    """Installed versions of the libraries a fit depends on."""
    out = {}
    for name in RECORDED_VERSIONS:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "unknown"
    return out


def variable_dims(model, name: str, shape: tuple) -> tuple[str, ...]:
    """Named dims of a model variable (``<name>_dim_k`` where the model names none)."""
    dims = model.named_vars_to_dims.get(name)
    if dims and len(dims) == len(shape) and all(d is not None for d in dims):
        return tuple(dims)
    return tuple(f"{name}_dim_{k}" for k in range(len(shape)))


def coords_of(framework, prepared: Comparisons) -> dict:
    """The fit's own coordinates (never those of a cached template model)."""
    coords = dict(framework.coords(prepared))
    coords.pop("cell", None)
    return coords


def cell_groups(prepared: Comparisons) -> dict[str, xr.Dataset]:
    """``observed_data`` and ``constant_data``: the cells the likelihood saw."""
    cells = np.arange(prepared.n_cells)
    observed = xr.Dataset({"counts": (("cell", "outcome"), prepared.counts())},
                          coords={"cell": cells, "outcome": list(OUTCOMES)})
    const = {}
    wide = {"covariates": ("cell", "covariate"), "contrasts": ("cell", "contrast")}
    for name, value in cell_arrays(prepared).items():
        const[name] = (wide.get(name, ("cell",)), value)
    constant = xr.Dataset(const, coords={"cell": cells, "item": list(prepared.items)})
    if prepared.covariate_names:
        constant = constant.assign_coords(covariate=list(prepared.covariate_names))
    if prepared.contrast_names:
        constant = constant.assign_coords(contrast=list(prepared.contrast_names))
    if prepared.judges is not None:
        constant = constant.assign_coords(judge=list(prepared.judges))
    if prepared.period is not None:
        constant = constant.assign_coords(period_start=list(prepared.periods))
        constant.attrs["period_unit"] = prepared.period_unit
    return {"observed_data": observed, "constant_data": constant}


def assemble(*, framework, data: Comparisons, prepared: Comparisons, method: str, posterior: xr.Dataset | None,
             estimate: xr.Dataset, n_params: int, diagnostics: dict, warnings: list[str],
             extra: dict | None = None) -> xr.DataTree:
    """Put the groups of a fit together with its attrs (see the module docstring)."""
    groups = {**({"posterior": posterior} if posterior is not None else {}), "estimate": estimate,
              **cell_groups(prepared), "data": data.to_xarray()}
    groups.update(extra or {})
    # attached to an empty root at once by the children setter, which neither copies the groups
    # (the constructor and from_dict copy every node) nor attaches them path by path
    tree = xr.DataTree()
    tree.children = {name: xr.DataTree(group) for name, group in groups.items()}
    convention = bothbad.convention(data.dropped, data.notes)
    if convention is not None:  # which "tie (bothbad)" convention the data followed
        diagnostics = {**diagnostics, "both_bad_ties": convention}
    tree.attrs.update({
        "bayesrank_spec": framework.spec_json(),
        "bayesrank_method": method,
        "bayesrank_n_params": int(n_params),
        "bayesrank_source": data.source,
        "bayesrank_diagnostics": json.dumps(plain(diagnostics)),
        "bayesrank_warnings": json.dumps(list(warnings)),
        "bayesrank_versions": json.dumps(versions()),
        "bayesrank_version": versions()["bayesrank"],
    })
    return tree


def plain(x):
    """NumPy scalars / arrays → JSON-able Python values; non-finite floats → None."""
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, np.ndarray):
        return plain(x.tolist())
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if np.isfinite(x) else None
    if x is pd.NA:
        return None
    return x


__all__ = ["RECORDED_VERSIONS", "assemble", "cell_groups", "coords_of", "plain", "variable_dims", "versions"]
