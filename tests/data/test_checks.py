"""Checks of the comparison data: Ford's condition for the Bradley–Terry MLE, against a reachability
closure of the "beat or tied" graph written here in NumPy, and the order of the separated groups
(no group ever loses to a group after it), on random small graphs."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.data.checks import mle_existence, separated_groups, statistical_warnings


def beat_or_tied(data):
    """(m × m) a → b when a beat or tied b at least once."""
    A = np.zeros((data.n_items, data.n_items), dtype=bool)
    for a, b, wa, wb, t in zip(data.a, data.b, data.wins_a, data.wins_b, data.ties):
        A[a, b] |= wa > 0 or t > 0
        A[b, a] |= wb > 0 or t > 0
    return A


def reaches(A):
    """Transitive closure (reflexive) by repeated boolean products."""
    R = A | np.eye(len(A), dtype=bool)
    while True:
        nxt = R | ((R.astype(int) @ R.astype(int)) > 0)
        if np.array_equal(nxt, R):
            return R
        R = nxt


def random_data(rng, m=6):
    a, b = np.triu_indices(m, k=1)
    keep = rng.random(a.size) < 0.6
    keep[np.arange(m - 1) * m - np.arange(m - 1) * np.arange(1, m) // 2] = True   # the chain 0–1–…: connected
    counts = rng.integers(0, 2, size=(a.size, 3)) * (rng.random((a.size, 3)) < np.array([0.6, 0.4, 0.15]))
    counts[counts.sum(axis=1) == 0, 0] = 1
    names = np.array([f"m{k}" for k in range(m)], dtype=object)
    return br.Comparisons.from_cells(names[a[keep]], names[b[keep]], *counts[keep].T)


def test_a_chain_of_groups_is_ordered_by_who_beats_whom():
    """b beat c, but three items beat b and only b beat c: b still comes before c."""
    data = br.Comparisons.from_cells(["a", "d", "e", "b"], ["b", "b", "b", "c"], [1, 1, 1, 1], [0, 0, 0, 0])
    groups = [g[0] for g in separated_groups(data)]
    assert groups.index("b") < groups.index("c") and set(groups[:3]) == {"a", "d", "e"}
    exists, said = mle_existence(data)
    assert not exists and "} > {b} > {c}" not in said[0]
    assert "groups that never lose to the groups after them" in said[0]


@pytest.mark.parametrize("seed", range(40))
def test_existence_is_fords_condition_and_groups_never_lose_to_later_ones(seed):
    data = random_data(np.random.default_rng(seed))
    R = reaches(beat_or_tied(data))
    exists, said = mle_existence(data)
    assert exists == bool(R.all()) and (said == []) == exists
    groups = separated_groups(data)
    index = {name: k for k, name in enumerate(data.items)}
    assert sorted(n for g in groups for n in g) == sorted(data.items)
    for g, group in enumerate(groups):
        inside = [index[n] for n in group]
        assert R[np.ix_(inside, inside)].all()                       # one strongly connected group
        for later in groups[g + 1:]:
            after = [index[n] for n in later]
            assert not R[np.ix_(after, inside)].any()                # never beats or ties an earlier group


def test_disconnected_data_are_said_and_have_no_mle():
    data = br.Comparisons.from_cells(["a", "c"], ["b", "d"], [2, 1], [1, 2])
    exists, said = mle_existence(data)
    assert not exists and "disconnected parts of the comparison graph" in said[0]
    (sentence,) = statistical_warnings(data)
    assert sentence.startswith("the comparison graph has 2 disconnected components: {a, b} | {c, d}")
