"""Comparisons of one arena read at different times, put together cell by cell.

The cells are sufficient statistics of every likelihood: a cell's counts are sums over its
records, so the cells of two sets of records, added cell by cell, are the cells of all the
records together. :func:`merge` does exactly that, in the order and orientation the readers
give (items and judges by sorted name, the lower index as "a", cells sorted by their keys), so
a fit of the merged cells is a fit of one file holding every record. :func:`align` keeps the
two sets apart on the merged cells (:func:`bayesrank.diff` attributes a change to them).

Before anything is added, :func:`check_compatible` refuses what cannot be one arena: records
with another layout (judges, positions, covariates or contrasts on one side only, read with
other options), records that share no model with the fit, and records whose ids were counted
already.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayesrank.data.comparisons import Comparisons
from bayesrank.data.names import look_alike, name_warnings
from bayesrank.errors import DataError

#: Count columns added cell by cell.
COUNTS = ("wins_a", "wins_b", "ties", "ties_bothbad")


@dataclass(frozen=True)
class Aligned:
    """Two sets of comparisons on the cells of both.

    Attributes
    ----------
    cells : Comparisons
        The merged cells (counts: the sum of both).
    old, new : ndarray
        ``(n_cells, 4)`` counts of each set on those cells: wins_a, wins_b, ties, ties_bothbad.
    old_items : ndarray of bool
        Per merged item, whether the first set has it.
    """

    cells: Comparisons
    old: np.ndarray
    new: np.ndarray
    old_items: np.ndarray


def check_compatible(old: Comparisons, new: Comparisons, *, old_name: str = "the fit",
                     new_name: str = "the new records", ids: bool = True) -> None:
    """Refuse two sets of comparisons that cannot be cells of one arena (with ``ids``, also
    records of ``new`` that ``old`` counts already: ``new`` is to be added to ``old``).

    Raises
    ------
    DataError
        One side has judges (or positions, covariates, contrasts) and the other has not or
        names others; they were read with other options (``both_bad_as_ties``, ``by``); no
        model is on both sides; or a record of ``new`` has an id that ``old`` counts already
        (or that ``new`` repeats), or ``old`` has ids and ``new`` has none.
    """
    for what, field, hint in (
            ("judges", "judges", "a judge column (judge_model, judge, or a --by category)"),
            ("positions (which model was shown first)", "first", "battle or judge records, or a 'first' column")):
        has_old, has_new = getattr(old, field) is not None, getattr(new, field) is not None
        if has_old != has_new:
            side, other = (old_name, new_name) if has_old else (new_name, old_name)
            raise DataError(f"{side} has {what} and {other} has none: they are not records of one arena "
                            f"layout; give {new_name} the same columns ({hint}).")
    for what, field, option in (("covariates", "covariate_names", "covariates"),
                                ("contrasts", "contrast_names", "contrasts")):
        a, b = set(getattr(old, field)), set(getattr(new, field))
        if a != b:
            raise DataError(f"{old_name} has {what} {sorted(a) or 'none'} and {new_name} {sorted(b) or 'none'}; "
                            f"read {new_name} with {option}={sorted(a)} (CLI: --{option} {','.join(sorted(a))}).")
    for key in sorted((set(old.reading) & set(new.reading)) - {"id_digest"}):
        if old.reading[key] != new.reading[key]:
            raise DataError(f"{old_name} was read with {key}={old.reading[key]!r} and {new_name} with "
                            f"{key}={new.reading[key]!r}; read {new_name} with {key}={old.reading[key]!r}.")
    shared = set(old.items) & set(new.items)
    if not shared:
        raise DataError(f"none of the {new.n_items} models of {new_name} ({_names(new.items)}) is among the "
                        f"{old.n_items} of {old_name} ({_names(old.items)}): these records come from another "
                        "arena; update a fit of the same arena.")
    if ids:
        _check_ids(old, new, old_name, new_name)


def _names(items) -> str:
    return ", ".join(items[:3]) + (", ..." if len(items) > 3 else "")


def _check_ids(old: Comparisons, new: Comparisons, old_name: str, new_name: str) -> None:
    """Refuse records whose ids were counted already (:attr:`Comparisons.record_ids`)."""
    if old.record_ids is None:
        return
    if new.record_ids is None:
        raise DataError(f"{old_name} counts its records by id, and {new_name} have no 'id' column: repeated "
                        f"records could not be recognised; give every record its id.")
    if old.reading.get("id_digest") != new.reading.get("id_digest"):
        raise DataError(f"the ids of {old_name} were digested as '{old.reading.get('id_digest')}' and those of "
                        f"{new_name} as '{new.reading.get('id_digest')}' (another version of DuckDB): they cannot be "
                        "compared; install the DuckDB version that read the fit's records, or refit from every record.")
    ids = np.asarray(new.record_ids, dtype=np.uint64)
    known = np.sort(np.asarray(old.record_ids, dtype=np.uint64))
    counted = known[np.minimum(np.searchsorted(known, ids), max(known.size - 1, 0))] == ids if known.size else \
        np.zeros(ids.size, dtype=bool)
    order = np.argsort(ids, kind="stable")
    repeated = np.zeros(ids.size, dtype=bool)
    repeated[order[1:]] = ids[order[1:]] == ids[order[:-1]]   # every occurrence after the first
    where = f" of {new.source}" if new.source else ""
    if counted.any():
        first = int(np.flatnonzero(counted)[0])
        raise DataError(f"record {first}{where} has an id that {old_name} counts already ({int(counted.sum())} "
                        f"such records): these battles were added before; leave them out of {new_name}.")
    if repeated.any():
        first = int(np.flatnonzero(repeated)[0])
        raise DataError(f"record {first}{where} repeats the id of an earlier record of {new_name} "
                        f"({int(repeated.sum())} such records); keep each battle once.")


def align(old: Comparisons, new: Comparisons) -> Aligned:
    """Both sets of comparisons on the cells of both (see the module docstring); no checks
    beyond those of a common layout (:func:`check_compatible` checks more)."""
    items = tuple(sorted(set(old.items) | set(new.items)))
    judges = None if old.judges is None else tuple(sorted(set(old.judges) | set(new.judges or ())))
    covariates, contrasts = tuple(old.covariate_names), tuple(old.contrast_names)
    frames = [_keyed(data, items, judges, covariates, contrasts, part) for part, data in enumerate((old, new))]
    table = pd.concat(frames, ignore_index=True)
    keys = [c for c in table.columns if c not in COUNTS and c != "part"]
    for part in (0, 1):
        for col in COUNTS:
            table[f"{col}_{part}"] = np.where(table["part"] == part, table[col], 0.0)
    table = table.drop(columns=[*COUNTS, "part"]).groupby(keys, sort=True, as_index=False).sum()
    old_counts = table[[f"{c}_0" for c in COUNTS]].to_numpy(float)
    new_counts = table[[f"{c}_1" for c in COUNTS]].to_numpy(float)
    total = old_counts + new_counts
    cells = Comparisons(
        items=items,
        a=table["a"].to_numpy(np.int64), b=table["b"].to_numpy(np.int64),
        wins_a=total[:, 0], wins_b=total[:, 1], ties=total[:, 2], ties_bothbad=total[:, 3],
        judges=judges,
        judge=table["judge"].to_numpy(np.int64) if "judge" in table else None,
        first=table["first"].to_numpy(np.int64) if "first" in table else None,
        covariates=table[[f"covariate:{c}" for c in covariates]].to_numpy(float) if covariates else None,
        covariate_names=covariates,
        contrasts=table[[f"contrast:{c}" for c in contrasts]].to_numpy(float) if contrasts else None,
        contrast_names=contrasts,
        reading=dict(old.reading or new.reading),
    )
    present = set(old.items)
    return Aligned(cells, old_counts, new_counts, np.array([name in present for name in items]))


def _keyed(data: Comparisons, items, judges, covariates, contrasts, part: int) -> pd.DataFrame:
    """The cells of ``data`` keyed on the merged items and judges, oriented as the readers
    orient them (the lower index as "a"; positions and contrasts follow the orientation)."""
    index = {name: k for k, name in enumerate(items)}
    merged = np.array([index[name] for name in data.items], dtype=np.int64)   # data's item → merged
    ia, ib = merged[np.asarray(data.a)], merged[np.asarray(data.b)]
    flip = ia > ib
    out = {"a": np.where(flip, ib, ia), "b": np.where(flip, ia, ib)}
    if judges is not None:
        jindex = {name: k for k, name in enumerate(judges)}
        out["judge"] = np.array([jindex[name] for name in data.judges], dtype=np.int64)[np.asarray(data.judge)]
    if data.first is not None:
        out["first"] = np.where(flip, 1 - data.first, data.first)
    for name in covariates:
        out[f"covariate:{name}"] = data.covariates[:, data.covariate_names.index(name)]
    for name in contrasts:
        out[f"contrast:{name}"] = np.where(flip, -1.0, 1.0) * data.contrasts[:, data.contrast_names.index(name)]
    out["wins_a"] = np.where(flip, data.wins_b, data.wins_a)
    out["wins_b"] = np.where(flip, data.wins_a, data.wins_b)
    out["ties"] = np.asarray(data.ties, dtype=float)
    out["ties_bothbad"] = np.asarray(data.ties_bothbad, dtype=float)
    out["part"] = np.full(data.n_cells, part)
    return pd.DataFrame(out)


def merge(old: Comparisons, new: Comparisons, *, source: str | None = None, old_name: str = "the fit",
          new_name: str = "the new records") -> Comparisons:
    """The comparisons of ``old`` and ``new`` together: the cells a reader makes of all their
    records at once (see the module docstring).

    Parameters
    ----------
    old, new : Comparisons
    source : str, optional
        Provenance of the result (default: ``old``'s).
    old_name, new_name : str
        How the two are called in messages.

    Returns
    -------
    Comparisons
        Counts, records, dropped records and reading notes added, the reading warnings of both (each once); record ids
        kept when both have them; judge agreement pooled over the two (each side's shared records: verdicts on one
        record split across the two sets are not paired).

    Raises
    ------
    DataError
        See :func:`check_compatible`.
    """
    check_compatible(old, new, old_name=old_name, new_name=new_name)
    cells = align(old, new).cells
    ids = None if old.record_ids is None or new.record_ids is None else \
        np.concatenate([np.asarray(old.record_ids, np.uint64), np.asarray(new.record_ids, np.uint64)])
    return Comparisons(
        **{name: getattr(cells, name) for name in ("items", "a", "b", "wins_a", "wins_b", "ties", "ties_bothbad",
                                                  "judges", "judge", "first", "covariates", "covariate_names",
                                                  "contrasts", "contrast_names", "reading")},
        agreement=_pooled_agreement(old.agreement, new.agreement),
        dropped=_added(old.dropped, new.dropped), notes=_added(old.notes, new.notes),
        source=old.source if source is None else source, n_records=int(old.n_records) + int(new.n_records),
        record_ids=ids, warnings=tuple(dict.fromkeys((*old.warnings, *new.warnings, *_alike_across(old, new)))),
    )


def _alike_across(old: Comparisons, new: Comparisons) -> list[str]:
    """Sentences about model and judge names of ``new`` that look like another name of ``old``
    (:func:`~bayesrank.data.names.look_alike`): each side's reading said those within it."""
    out = []
    sides = (("model name", old.items, new.items), ("judge name", old.judges or (), new.judges or ()))
    for what, ours, theirs in sides:
        groups: dict[str, set[str]] = {}
        for name in {*ours, *theirs}:
            groups.setdefault(look_alike(name), set()).add(name)
        across = [g for g in groups.values() if len(g) > 1 and not g <= set(ours) and not g <= set(theirs)]
        out += name_warnings({name: [name] for group in across for name in group}, what)
    return out


def _added(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    return {k: int(a.get(k, 0)) + int(b.get(k, 0)) for k in {**a, **b}}


def _pooled_agreement(a: pd.DataFrame | None, b: pd.DataFrame | None) -> pd.DataFrame | None:
    """Judge agreement of both sets: shared records added, agreement weighted by them."""
    if a is None or b is None:
        return a if b is None else b
    both = pd.concat([a, b], ignore_index=True)
    both = both.assign(same=both["agreement"] * both["shared"])
    out = both.groupby(["judge_1", "judge_2"], sort=True, as_index=False)[["shared", "same"]].sum()
    out["agreement"] = out["same"] / out["shared"]
    out["shared"] = out["shared"].astype(np.int64)
    return out.drop(columns="same")[["judge_1", "judge_2", "shared", "agreement"]]


__all__ = ["Aligned", "align", "check_compatible", "merge"]
