"""Plain-English warnings about data that no model can rank well.

The checks are cheap and run before fitting: the CLI prints them and the fitting API
raises them as :class:`~bayesrank.errors.StatisticalWarning`.
"""

from __future__ import annotations

from bayesrank.data.comparisons import Comparisons

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
