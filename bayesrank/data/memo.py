"""Facts derived from comparison data, computed once per content of the data.

A fit derives several things from its cells that depend neither on the model's parameters nor
on the optimiser: the prepared cells (a framework's tie convention), the connectivity of the
comparison graph, Ford's condition, the groups of the fit's DataTree that hold the data.
Refitting the same data — another model, another interval method, a benchmark — recomputed
them every time (about 2 ms of a 17 ms Bradley–Terry fit of arena-2024).

:func:`canonical` maps comparisons to one object per *content* (a digest of every array and
of the metadata): a copy whose arrays are read-only, so what is remembered about it
(:func:`remembered`) can never go stale. Comparisons that did not come from :func:`canonical`
(or :func:`frozen`) are never remembered about — their arrays belong to the caller, who may
change them — and :func:`remembered` then simply computes.

Only facts about the data are kept here, never an estimate.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import fields, replace
from typing import Any, TypeVar

import numpy as np
import pandas as pd

#: The data remembered about: a dataclass of arrays and metadata — in the package,
#: :class:`bayesrank.data.comparisons.Comparisons`, which imports this module (so it is not named
#: here: the memo sits below the comparisons it serves).
Comparisons = TypeVar("Comparisons")

#: Distinct data contents kept at once (least recently used dropped first).
MEMO_SIZE = 8
_CANONICAL: OrderedDict[str, Comparisons] = OrderedDict()
#: What is remembered, per frozen comparisons object (it dies with its object).
_FACTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
#: Where a frozen object's facts keep its digest.
_DIGEST = ("digest",)


def digest(data: Comparisons) -> str:
    """A digest of everything in ``data``: every array (dtype, shape, bytes) and the metadata."""
    h = hashlib.sha1()
    meta = {}
    for f in fields(data):
        value = getattr(data, f.name)
        if isinstance(value, np.ndarray):
            h.update(f"{f.name}:{value.dtype.str}:{value.shape}".encode())
            h.update(np.ascontiguousarray(value).tobytes())
        elif isinstance(value, pd.DataFrame):
            h.update(f"{f.name}:{list(value.columns)}".encode())
            h.update(pd.util.hash_pandas_object(value, index=True).to_numpy().tobytes())
        else:
            meta[f.name] = value if not isinstance(value, dict) else dict(value)
    h.update(json.dumps(meta, sort_keys=True, default=repr).encode())
    return h.hexdigest()


def frozen(data: Comparisons) -> Comparisons:
    """``data`` with read-only copies of its arrays, registered for :func:`remembered` (``data``
    itself when it is such an object already)."""
    if data in _FACTS:
        return data
    arrays = {}
    for f in fields(data):
        value = getattr(data, f.name)
        if isinstance(value, np.ndarray):
            value = np.array(value, copy=True)
            value.flags.writeable = False
            arrays[f.name] = value
    out = replace(data, **arrays)
    _FACTS[out] = {}
    return out


def canonical(data: Comparisons) -> Comparisons:
    """The one frozen object (:func:`frozen`) with the content of ``data``, kept for the
    :data:`MEMO_SIZE` most recently used contents. A frozen object's digest is remembered with
    it (its arrays cannot change): the data :func:`bayesrank.load` returns, which are frozen,
    are hashed once, not at every fit."""
    facts = _FACTS.get(data)
    key = facts.get(_DIGEST) if facts is not None else None
    key = digest(data) if key is None else key
    found = _CANONICAL.get(key)
    if found is None:
        found = _CANONICAL[key] = frozen(data)
        while len(_CANONICAL) > MEMO_SIZE:
            _CANONICAL.popitem(last=False)
    else:
        _CANONICAL.move_to_end(key)
    _FACTS[found].setdefault(_DIGEST, key)
    return found


def remembered(data: Comparisons, key: Hashable, compute: Callable[[], Any]) -> Any:
    """``compute()`` — a fact about ``data`` — remembered under ``key`` when ``data`` is frozen
    (:func:`frozen`), computed every time otherwise. What is remembered is shared by every
    caller: ``compute`` must return something nobody changes (tuples, read-only arrays, or
    objects every caller copies)."""
    facts = _FACTS.get(data)
    if facts is None:
        return compute()
    if key not in facts:
        facts[key] = compute()
    return facts[key]
