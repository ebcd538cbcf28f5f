"""Plain-English findings about data that no model can rank well, and whether an MLE exists.

The checks are cheap, look only at the counts, and run with every fit; their sentences end
up in the fit's ``warnings``.
"""

from __future__ import annotations

import heapq

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from bayesrank.data.comparisons import Comparisons
from bayesrank.data.judges import near_duplicate_judges
from bayesrank.data.positions import position_warnings

#: Items listed per component before the list is shortened.
_MAX_LISTED = 8
#: Fewest verdicts for a judge-level pattern to be reported.
_MIN_VERDICTS = 5


def statistical_warnings(data: Comparisons) -> list[str]:
    """Warnings about the comparison data, as plain-English sentences.

    Parameters
    ----------
    data : Comparisons
        The data to check.

    Returns
    -------
    list of str
        One sentence per problem (empty when none is found):

        * how the records were read (``data.warnings``: names that several spellings
          became, names that only look alike, duplicate records, a local file read instead
          of a bundled dataset);
        * the comparison graph is disconnected (scores are only comparable within a
          component).

        Whether the maximum-likelihood estimate exists depends on the model's link (a tie
        bounds a score in a tie model, not in Bradley–Terry): MAP fits say it once, from
        :mod:`bayesrank.inference.existence`.
    """
    return list(data.warnings) + _disconnected(data)


def _disconnected(data: Comparisons) -> list[str]:
    components = data.components()
    if len(components) < 2:
        return []
    listed = " | ".join(_component(c) for c in components)
    return [
        f"the comparison graph has {len(components)} disconnected components: {listed}; "
        "scores are only comparable within a component — add comparisons between them or "
        "fit each separately"
    ]


def _component(names: list[str]) -> str:
    shown = ", ".join(names[:_MAX_LISTED])
    more = f", … (+{len(names) - _MAX_LISTED} more)" if len(names) > _MAX_LISTED else ""
    return "{" + shown + more + "}"


def separated_groups(data: Comparisons) -> list[list[str]]:
    """Strongly connected components of the "beat or tied" graph, best group first.

    An edge a → b means a beat or tied b at least once. Ford (1957): the Bradley–Terry MLE
    exists iff this graph is strongly connected (one component); otherwise the groups can be
    ordered so that no group ever loses to a later one, and the MLE diverges. A tie counts
    both ways because tie models penalise large score gaps between tied items.
    """
    m = data.n_items
    ab = (data.wins_a > 0) | (data.ties > 0)
    ba = (data.wins_b > 0) | (data.ties > 0)
    rows = np.concatenate([data.a[ab], data.b[ba]])
    cols = np.concatenate([data.b[ab], data.a[ba]])
    graph = coo_matrix((np.ones(rows.size), (rows, cols)), shape=(m, m)).tocsr()
    n, labels = connected_components(graph, directed=True, connection="strong")
    if n == 1:
        return [list(data.items)]
    # order the groups topologically (Kahn): each next group is one that no group left to place
    # beats (the groups form a DAG), the least beaten and most beating first among those
    beats = np.zeros((n, n), dtype=bool)
    beats[labels[rows], labels[cols]] = True
    np.fill_diagonal(beats, False)
    beaten_by, beating = beats.sum(axis=0), beats.sum(axis=1)
    waiting = beaten_by.copy()
    ready = [(beaten_by[g], -beating[g], g) for g in range(n) if waiting[g] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        g = heapq.heappop(ready)[2]
        order.append(g)
        for h in np.flatnonzero(beats[g]):
            waiting[h] -= 1
            if waiting[h] == 0:
                heapq.heappush(ready, (beaten_by[h], -beating[h], h))
    return [[data.items[k] for k in np.flatnonzero(labels == g)] for g in order]


def mle_existence(data: Comparisons) -> tuple[bool, list[str]]:
    """Does the maximum-likelihood estimate of the scores exist on these cells?

    It does iff the comparison graph is connected and every item can be reached from every
    other by "beat or tied" edges (Ford's condition, :func:`separated_groups`).

    Parameters
    ----------
    data : Comparisons
        The cells the likelihood sees (after a model's tie convention).

    Returns
    -------
    exists : bool
    warnings : list of str
        Why not, and what to do, in words.
    """
    if len(data.components()) > 1:
        return False, [
            "scores are not identified across disconnected parts of the comparison graph: "
            "no estimates are reported; fit each component separately or add comparisons between them."
        ]
    groups = separated_groups(data)
    if len(groups) <= 1:
        return True, []
    shown = " > ".join("{" + ", ".join(g[:5]) + (", …" if len(g) > 5 else "") + "}" for g in groups[:4])
    more = f" > … ({len(groups)} groups)" if len(groups) > 4 else ""
    return False, [
        f"the maximum-likelihood estimate does not exist: the items split into groups that never "
        f"lose to the groups after them ({shown}{more}), so score gaps between groups grow without "
        "bound; no estimates are reported. Use method='nuts' (proper priors) or add comparisons "
        "across the groups."
    ]


def judge_warnings(data: Comparisons, ties_modelled: bool = False
                   ) -> tuple[list[str], list[tuple[str, str, int, float]]]:
    """Warnings about the judges of the data, as facts in words.

    * near-duplicate judges (from ``data.agreement``, available when the records carry
      question ids, whatever the input format);
    * judges whose verdicts follow the position shown, and a presentation order that is a
      function of the items (when the data say which answer was shown first; the rule and
      what it means for each model: :mod:`bayesrank.data.positions`);
    * with ``ties_modelled`` (a model with a tie parameter per judge or per pair), a judge
      that never ties although the data have ties.

    Returns
    -------
    warnings : list of str
    near_duplicates : list of (judge, judge, shared, agreement)
    """
    out, dups = [], []
    if data.agreement is not None:
        dups = near_duplicate_judges(data.agreement)
        out += [
            f"judges '{j1}' and '{j2}' agree on {agr:.1%} of {n} shared comparisons: they are probably the "
            "same model counted twice, which breaks the independence of judges"
            for j1, j2, n, agr in dups
        ]
    out += position_warnings(data)
    if data.judge is None:
        return out, dups
    k = data.n_judges
    ties = np.bincount(data.judge, data.ties, k)
    if ties_modelled and data.ties.sum() > 0:
        totals = np.bincount(data.judge, data.totals, k)
        for j in np.flatnonzero((ties == 0) & (totals >= _MIN_VERDICTS)):
            out.append(
                f"judge '{data.judges[j]}' never ties (0 ties in {totals[j]:.0f} verdicts) while the data have ties: "
                "a tie parameter of its own has no finite estimate (−∞)"
            )
    return out, dups


__all__ = ["judge_warnings", "mle_existence", "separated_groups", "statistical_warnings"]
