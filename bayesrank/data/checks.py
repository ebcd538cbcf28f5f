"""Plain-English findings about data that no model can rank well, and whether an MLE exists.

The checks are cheap, look only at the counts, and run with every fit; their sentences end
up in the fit's ``warnings``.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from bayesrank.data.comparisons import Comparisons
from bayesrank.data.judges import near_duplicate_judges

#: Items listed per component before the list is shortened.
_MAX_LISTED = 8


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

        * the comparison graph is disconnected (scores are only comparable within a
          component);
        * an item never wins or never loses, so its maximum-likelihood score is infinite.
          Ties count as neither a win nor a loss.
    """
    return _disconnected(data) + _never_win_or_lose(data)


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


def _never_win_or_lose(data: Comparisons) -> list[str]:
    totals = data.item_totals()
    suspects = totals[(totals["losses"] == 0) | (totals["wins"] == 0)]
    out = []
    for name, row in suspects.iterrows():
        n = int(row["n_comparisons"])
        if row["losses"] == 0:
            out.append(
                f"'{name}' never loses (0 losses in {n} comparisons): its maximum-likelihood "
                "score is infinite; use a prior (method='nuts') or add data"
            )
        if row["wins"] == 0:
            out.append(
                f"'{name}' never wins (0 wins in {n} comparisons): its maximum-likelihood "
                "score is minus infinity; use a prior (method='nuts') or add data"
            )
    return out


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
    # order the groups: a group that is reached by no other group comes first
    beats = np.zeros((n, n), dtype=bool)
    beats[labels[rows], labels[cols]] = True
    np.fill_diagonal(beats, False)
    order = sorted(range(n), key=lambda g: (beats[:, g].sum(), -beats[g].sum()))
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


def judge_warnings(data: Comparisons) -> tuple[list[str], list[tuple[str, str, int, float]]]:
    """Warnings about the judges of the data: near-duplicate judges (from
    ``data.agreement``, available when the records carry question ids).

    Returns
    -------
    warnings : list of str
    near_duplicates : list of (judge, judge, shared, agreement)
    """
    if data.agreement is None:
        return [], []
    dups = near_duplicate_judges(data.agreement)
    out = [
        f"judges '{j1}' and '{j2}' agree on {agr:.1%} of {n} shared comparisons: they are probably the "
        "same model counted twice, which breaks the independence of judges"
        for j1, j2, n, agr in dups
    ]
    return out, dups
