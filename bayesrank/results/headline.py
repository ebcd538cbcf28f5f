"""The one sentence a reader wants first: who leads, and whether the top is separated.

Computed from the simultaneous rank sets (:func:`bayesrank.results.ranksets.rank_sets`): the
models that may be first at the stated level all at once, so the sentence holds for the whole
top together, not one model at a time.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayesrank.results.estimates import has_intervals
from bayesrank.results.leaderboard import scores
from bayesrank.results.ranksets import rank_sets

#: Models named before a list is shortened.
_NAMED = 6


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:_NAMED])
    return shown + (f" and {len(names) - _NAMED} more" if len(names) > _NAMED else "")


def headline(tree: xr.DataTree, level: float = 0.95) -> str:
    """"X leads; the top three are not separated", from the rank sets at ``level``.

    Returns
    -------
    str
        Who has the highest score, and either that no other model can be first at ``level``
        (simultaneous rank sets), or how many models may be first and which; for a fit without
        estimates or without intervals, what can be said instead.
    """
    s = scores(tree)
    if not np.all(np.isfinite(s.to_numpy())):
        return "No model leads: the fit has no estimates (see the warnings)."
    leader = str(s.idxmax())
    if not has_intervals(tree):
        return f"{leader} has the highest score (point estimates only: no statement on how sure that is)."
    sets = rank_sets(tree, level)
    first = [str(n) for n in sets.loc[sets["rank_set_lower"] <= 1, "name"]]
    pct = f"{100 * level:g}%"
    if len(first) <= 1:
        separated = sets["rank_set_lower"].to_numpy() == sets["rank_set_upper"].to_numpy()
        settled = int(np.argmin(separated)) if not separated.all() else len(separated)
        more = f"; the first {settled} places are settled" if settled > 1 else ""
        return f"{leader} leads, ahead of every other model at {pct} (simultaneous rank sets){more}."
    return (f"{leader} leads, but the top {len(first)} are not separated: {_names(first)} may each be first at "
            f"{pct} (simultaneous rank sets).")


__all__ = ["headline"]
