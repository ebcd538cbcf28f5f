"""Updating a fit with new comparisons: its saved cells plus the new ones, refitted from its estimate.

The cells a fit stores (the ``data`` group: the comparisons as given) are sufficient statistics
of its likelihood, so the fit of the old records and the new is the fit of the saved cells
merged with the new records' cells (:func:`bayesrank.data.merge.merge`): the records behind the
saved fit need not exist any more. An update is that fit, made as any fit of the merged cells
is — the same framework, options and seed — and started from the saved estimate instead of the
model's own start:

* **MAP**: the optimiser starts at the saved MLE (new models at the battle-weighted mean score
  of the models they met, new judges and whatever else is new at the model's own start;
  :func:`~bayesrank.inference.warm.starting_theta`). A log-likelihood with one maximum is then
  maximised to the same point as from the model's start, to the optimiser's tolerance; the
  intervals are computed at it exactly as for a batch fit, and the draws use the same seed.
* **NUTS**: the whitening's MLE starts at the saved posterior means, each chain starts at the
  last draw of a saved chain and the mass matrix comes from the saved draws
  (:class:`~bayesrank.inference.warm.WarmStart`); the warm-up is :data:`WARM_TUNE` steps per
  chain unless ``tune`` says otherwise. The chains are judged by r̂, ESS and divergences as
  any others.

What an update needs is recorded in every fit made by :func:`bayesrank.fit`: the options of the
fit (``attrs["bayesrank_options"]``; the framework is the spec) and its *lineage*
(``attrs["bayesrank_lineage"]``): one entry per set of records added — where from, how many
records and comparisons, whether they carried ids, which models and judges were new, and when
(a timestamp, which no number depends on). The record ids themselves are kept with the cells
(:attr:`~bayesrank.data.comparisons.Comparisons.record_ids`).
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone

import numpy as np
import xarray as xr

from bayesrank.data.comparisons import Comparisons
from bayesrank.data.load import load
from bayesrank.data.merge import merge
from bayesrank.errors import DataError, FitFileError, ModelSpecError
from bayesrank.inference.tree import plain
from bayesrank.inference.warm import WarmStart
from bayesrank.model.framework import Framework
from bayesrank.results.io import data_of, diagnostics_of, framework_of

#: Warm-up steps per chain of a NUTS update unless ``tune`` is given: its chains start in the
#: saved posterior's typical set, with the saved posterior's mass matrix.
WARM_TUNE = 100
#: Options of a fit that an update may change: they say how to run, not what to fit.
RUNNING = {"map": frozenset(), "nuts": frozenset({"tune", "progressbar", "cores"})}
#: Arguments of a fitting method that are starting points, not options.
STARTS = ("init", "warm")
#: Options saved under an earlier name → today's name (fits saved before the API's one vocabulary).
RENAMED_OPTIONS = {"n_draws": "draws"}
#: Estimate variables that are not model variables.
NOT_VARIABLES = ("theta", "theta_cov", "cell_log_probs", "loglik")


# ---------------------------------------------------------------------- what a fit records
def recorded(tree: xr.DataTree, method: str, options: Mapping, lineage: list[dict]) -> xr.DataTree:
    """``tree`` with the options it was fitted with and its lineage in its attrs."""
    kept = {k: v for k, v in options.items() if k not in STARTS}
    tree.attrs["bayesrank_options"] = json.dumps(plain({"method": method, **kept}), sort_keys=True)
    tree.attrs["bayesrank_lineage"] = json.dumps(plain(lineage))
    return tree


def options_of(tree: xr.DataTree) -> dict:
    """The method and options a fit was made with (:func:`recorded`).

    Raises
    ------
    FitFileError
        The fit does not record them (made by ``fit_map`` / ``fit_nuts`` directly, or by an
        earlier version of bayesrank).
    """
    if "bayesrank_options" not in tree.attrs:
        raise FitFileError("this fit does not record the options it was made with (it was made by fit_map or "
                           "fit_nuts directly, or by an earlier version), so it cannot be updated; fit the data "
                           "once with bayesrank.fit (CLI: bayesrank fit ... --out DIR) and update that fit.")
    saved = _stored(tree, "bayesrank_options", "{}", dict)
    return {RENAMED_OPTIONS.get(k, k): v for k, v in saved.items()}


def lineage_of(tree: xr.DataTree) -> list[dict]:
    """The sets of records behind a fit, oldest first (see the module docstring); empty when
    the fit does not record them.

    Raises
    ------
    FitFileError
        The record is not a list of entries (an edited file).
    """
    lineage = _stored(tree, "bayesrank_lineage", "[]", list)
    if not all(isinstance(entry, dict) for entry in lineage):
        raise FitFileError("the fit's record of its sets of records (bayesrank_lineage) is not a list of entries: "
                           "the file was edited; pass a file written by Fit.save or bayesrank fit --out, unchanged.")
    return lineage


def _stored(tree: xr.DataTree, name: str, default: str, kind: type):
    """The JSON attribute ``name`` of a fit, of type ``kind`` (an edited one: FitFileError)."""
    try:
        value = json.loads(tree.attrs.get(name, default))
    except (TypeError, ValueError):
        value = None
    if not isinstance(value, kind):
        raise FitFileError(f"the fit's {name} is not the JSON {kind.__name__} a fit stores: the file was edited; "
                           "pass a file written by Fit.save or bayesrank fit --out, unchanged.")
    return value


def lineage_entry(data: Comparisons, known: Comparisons | None = None) -> dict:
    """One lineage entry: where ``data`` came from, how many records and comparisons it holds,
    whether its records carry ids, the models and judges ``known`` did not have, and the time."""
    entry = {"source": data.source, "records": int(data.n_records) or None,
             "comparisons": data.n_comparisons, "cells": data.n_cells, "ids": data.record_ids is not None}
    if known is not None:
        entry["new_models"] = sorted(set(data.items) - set(known.items))
        entry["new_judges"] = sorted(set(data.judges or ()) - set(known.judges or ()))
    entry["added"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return entry


# ---------------------------------------------------------------------- the update
def update(tree: xr.DataTree, new_data, methods: Mapping[str, Callable], *, framework: Framework | None = None,
           format: str | None = None, both_bad_as_ties: bool | None = None, covariates=None, contrasts=None,
           by: str | None = None, drop_duplicates: bool | None = None, **options) -> xr.DataTree:
    """The fit of ``tree``'s cells and ``new_data``'s, started from ``tree``'s estimate (the
    module docstring); ``tree`` itself is not changed.

    Parameters
    ----------
    tree : DataTree
        A fit made by :func:`bayesrank.fit` (or by an earlier update).
    new_data : Comparisons, table, str or Path
        The new records: anything :func:`bayesrank.load` reads, read with the saved fit's reading
        options; or comparisons read already (they must have been read alike).
    methods : mapping
        Method name → fitting function (:data:`bayesrank.results.fit.METHODS`).
    framework : Framework, optional
        Must be the saved fit's when given.
    format : str, optional
        File format of ``new_data`` (as :func:`bayesrank.load`).
    both_bad_as_ties, covariates, contrasts, by, drop_duplicates : optional
        Reading options (:func:`bayesrank.load`); when given they must be the saved fit's
        (:attr:`~bayesrank.data.comparisons.Comparisons.reading`), which the new records are
        read with.
    **options
        The fit's options; when given they must equal the saved ones, except those that only say
        how to run (:data:`RUNNING`: a NUTS update's ``tune``, ``progressbar``, ``cores``).

    Returns
    -------
    DataTree
        The new fit, with ``diagnostics["update"]``: the records added, the models and judges
        that are new, and the seconds spent reading (the saved cells and the new records),
        merging the cells and fitting.

    Raises
    ------
    FitFileError
        ``tree`` does not record its options.
    ModelSpecError
        A framework or option that differs from the saved fit's, or an unknown option; a fit
        whose cells carry what merged cells cannot keep yet (clusters of dependent comparisons,
        calendar periods): such a fit is refitted on all its records.
    DataError
        New records that cannot be added (:func:`bayesrank.data.merge.check_compatible`: another
        layout or reading, another arena, ids already counted), or that cannot be read.
    """
    saved = options_of(tree)
    method = saved.pop("method")
    old_framework = framework_of(tree)
    _check_framework(old_framework, framework)
    _check_updatable(data_of(tree), old_framework, saved, options)
    fit_options = _checked_options(method, saved, options, methods[method])
    t0 = time.perf_counter()
    old = data_of(tree)
    new = _read(new_data, old, format, both_bad_as_ties, covariates, contrasts, by, drop_duplicates)
    t_read = time.perf_counter()
    lineage = lineage_of(tree)
    first = lineage[0]["source"] if lineage else old.source
    merged = merge(old, new, source=f"{first} + {len(lineage)} update{'s' if len(lineage) > 1 else ''}"
                   if lineage else None)
    t_merge = time.perf_counter()
    if method == "nuts":
        fit_options["tune"] = options.get("tune", WARM_TUNE)
        fit_options["warm"] = _warm_start(tree, merged)
    else:
        fit_options["init"] = carried(tree["estimate"].to_dataset(), merged)
    out = methods[method](old_framework, merged, **fit_options)
    t_fit = time.perf_counter()
    entry = lineage_entry(new, known=old)
    diagnostics = diagnostics_of(out)
    diagnostics["update"] = {"records": entry["records"], "comparisons": entry["comparisons"],
                             "new_models": entry["new_models"], "new_judges": entry["new_judges"],
                             "seconds": {"read": t_read - t0, "merge": t_merge - t_read, "fit": t_fit - t_merge}}
    out.attrs["bayesrank_diagnostics"] = json.dumps(plain(diagnostics))
    return recorded(out, method, {**saved, **options}, lineage + [entry])


def _check_updatable(old: Comparisons, framework: Framework, saved: Mapping, given: Mapping) -> None:
    """Refuse the fits whose cells carry per-cell structure that :func:`~bayesrank.data.merge.merge`
    does not carry over: the comparisons of each cell by cluster (``cluster=``, random effects)
    and the calendar period of each cell (a fit over time)."""
    asked = [c for c in (saved.get("cluster"), given.get("cluster")) if c]
    if old.clusters is not None or framework.clusters() or asked:
        raise ModelSpecError("this fit allows for clusters of dependent comparisons (cluster=, random effects), "
                             "whose per-cluster counts an update does not carry over: fit all the records again "
                             "with the same cluster column.")
    if old.period is not None:
        raise ModelSpecError("this is a fit over time (time_column=): an update does not add periods to it; fit all "
                             "the records again with the same time column.")


def _check_framework(saved: Framework, given: Framework | None) -> None:
    if given is None:
        return
    if not isinstance(given, Framework):
        raise ModelSpecError(f"Fit.update(framework=...) expects a framework such as bayesrank.Davidson(k_tie=1), "
                             f"got {type(given).__name__}.")
    if given.spec_json() == saved.spec_json():
        return
    old, new = saved.spec(), given.spec()
    differ = [f"{k}={old.get(k)!r} (saved) vs {new.get(k)!r}" for k in sorted(set(old) | set(new))
              if old.get(k) != new.get(k)]
    raise ModelSpecError(f"the saved fit is {saved.label} and the update asks for {given.label} "
                         f"({'; '.join(differ)}): an update keeps the fit's model; fit the data with the new "
                         "model instead.")


def _checked_options(method: str, saved: dict, given: Mapping, fitter: Callable) -> dict:
    """The options to fit the update with: the saved ones, with those that only say how to run
    replaced by ``given``'s."""
    valid = sorted(p.name for p in inspect.signature(fitter).parameters.values()
                   if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in STARTS)
    unknown = sorted(set(given) - set(valid))
    if unknown:
        raise ModelSpecError(f"Fit.update() got unknown option(s) {', '.join(map(repr, unknown))} for a "
                             f"{method.upper()} fit; its options: {', '.join(valid)}.")
    differ = [f"{k}={saved.get(k)!r} (saved) vs {v!r}" for k, v in given.items()
              if k not in RUNNING[method] and plain(v) != saved.get(k)]
    if differ:
        raise ModelSpecError(f"an update keeps the options of the fit it updates, and these differ: "
                             f"{'; '.join(differ)}; fit all the data with the new options instead.")
    return {**saved, **{k: v for k, v in given.items() if k in RUNNING[method]}}


def _read(new_data, old: Comparisons, format, both_bad_as_ties, covariates, contrasts, by,
          drop_duplicates) -> Comparisons:
    """The new records, read as the saved fit's were (reading options given must agree): the
    same both-bad convention (as resolved for the fit's records, so that count records added to
    a fit of battle records follow the battles' convention), category column, duplicate rule,
    covariates and contrasts."""
    saved_ties = old.reading.get("both_bad_as_ties")
    reading = {"both_bad_as_ties": both_bad_as_ties if saved_ties is None else bool(saved_ties),
               "by": old.reading.get("by"), "drop_duplicates": bool(old.reading.get("drop_duplicates", False)),
               "covariates": tuple(old.covariate_names), "contrasts": tuple(old.contrast_names)}
    given = {"both_bad_as_ties": both_bad_as_ties, "by": by, "drop_duplicates": drop_duplicates,
             "covariates": None if covariates is None else tuple([covariates] if isinstance(covariates, str)
                                                                  else covariates),
             "contrasts": None if contrasts is None else tuple([contrasts] if isinstance(contrasts, str)
                                                               else contrasts)}
    differ = [f"{k}={v!r} where the fit was read with {reading[k]!r}" for k, v in given.items()
              if v is not None and (sorted(v) if isinstance(v, tuple) else v) !=
              (sorted(reading[k]) if isinstance(reading[k], tuple) else reading[k])]
    if differ:
        raise DataError(f"the new records would be read with {'; '.join(differ)}; an update reads them as the "
                        "fit's records were read (leave these options out).")
    if isinstance(new_data, Comparisons):
        return new_data
    return load(new_data, format=format, **reading)


# ---------------------------------------------------------------------- warm starts
def carried(estimate: xr.Dataset, merged: Comparisons) -> dict[str, np.ndarray]:
    """The saved point values of every model variable on the merged models and judges: NaN for
    models and judges the saved fit did not have, except the scores of new models, which start
    at the battle-weighted mean score of the saved models they met (a new model entering
    against the leaders starts among them)."""
    labels = {"item": list(merged.items), "judge": list(merged.judges or ())}
    out = {}
    for name, da in estimate.data_vars.items():
        if name in NOT_VARIABLES or name.endswith(("_se", "_cov")):
            continue
        out[name] = _reindexed(da, labels)
    if "score" in out and out["score"].ndim == 1 and np.isnan(out["score"]).any():
        out["score"] = _entering_scores(out["score"], merged)
    return out


def _reindexed(da: xr.DataArray, labels: dict) -> np.ndarray:
    """``da`` with its item and judge axes on the merged labels (NaN where it has none)."""
    indexers = {dim: labels[dim] for dim in da.dims if dim in labels}
    if indexers:
        da = da.reindex({dim: [str(x) for x in values] for dim, values in indexers.items()})
    return np.asarray(da.values, dtype=float)


def _entering_scores(score: np.ndarray, data: Comparisons) -> np.ndarray:
    """Scores of new models (NaN) set to the battle-weighted mean score of the known models they
    met; NaN still for those that met none."""
    score = score.copy()
    known = np.isfinite(score)
    totals = data.totals
    weight = np.zeros(data.n_items)
    level = np.zeros(data.n_items)
    for new, other in ((data.a, data.b), (data.b, data.a)):
        met = ~known[new] & known[other]
        np.add.at(weight, new[met], totals[met])
        np.add.at(level, new[met], totals[met] * score[other[met]])
    entering = ~known & (weight > 0)
    score[entering] = level[entering] / weight[entering]
    return score


def _warm_start(tree: xr.DataTree, merged: Comparisons) -> WarmStart:
    """What a NUTS update reuses: the saved posterior means, the last draw of every saved chain
    and the saved draws, on the merged models and judges."""
    posterior = tree["posterior"].to_dataset()
    labels = {"item": list(merged.items), "judge": list(merged.judges or ())}
    names = [n for n in posterior.data_vars]
    last = posterior.isel(draw=-1)
    chains = [{n: _reindexed(last[n].isel(chain=c), labels) for n in names} for c in range(posterior.sizes["chain"])]
    stacked = posterior.stack(sample=("chain", "draw")).transpose("sample", ...)
    draws = {n: _reindexed(stacked[n], labels) for n in names}
    return WarmStart(point=carried(tree["estimate"].to_dataset(), merged), chains=chains, draws=draws)


__all__ = ["RUNNING", "WARM_TUNE", "carried", "lineage_entry", "lineage_of", "options_of", "recorded", "update"]
