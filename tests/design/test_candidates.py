"""Candidate comparisons: every pair once (both orders with a position effect), for every judge
asked, and the shares of votes that are ties and that the likelihood sees (not "both bad"),
counted here per judge."""

import numpy as np

import bayesrank as br
from bayesrank.design.candidates import candidate_cells, vote_shares


def judged():
    """Two judges; j1 gives ties and both-bad verdicts, j2 neither; every pair shown both ways."""
    return br.Comparisons.from_cells(
        ["x", "y", "x", "y", "x", "x"], ["y", "x", "z", "z", "y", "z"], [3, 2, 1, 4, 5, 2], [1, 2, 3, 1, 0, 2],
        [2, 0, 1, 1, 0, 0], [1, 1, 0, 2, 0, 0], judge=["j1", "j1", "j1", "j1", "j2", "j2"],
        first=[0, 0, 0, 0, 0, 1], both_bad_as_ties=False)


def test_every_pair_once_per_judge_and_both_orders_only_when_ordered():
    data = judged()
    cells, table = candidate_cells(data, ordered=False, judges=[0, 1])
    pairs = list(zip(table["judge"], table["model_a"], table["model_b"]))
    assert sorted(pairs) == sorted((j, a, b) for j in ("j1", "j2") for a, b in (("x", "y"), ("x", "z"), ("y", "z")))
    assert "first" not in table and np.all(cells["first"] == 0)
    cells, table = candidate_cells(data, ordered=True, judges=[1])
    assert len(table) == 6 and set(table["judge"]) == {"j2"}
    assert set(zip(table["model_a"], table["model_b"])) == {(a, b) for a in "xyz" for b in "xyz" if a != b}
    assert (table["first"] == table["model_a"]).all()


def test_vote_shares_count_ties_and_both_bad_per_judge():
    data = judged()
    tie_share, kept = vote_shares(br.Davidson(), data, data.judges)
    j1 = data.judge == data.judges.index("j1")
    seen = data.totals[j1].sum()
    assert tie_share[0] == data.ties[j1].sum() / seen and tie_share[1] == 0
    assert kept[0] == seen / (seen + data.ties_bothbad[j1].sum()) and kept[1] == 1
    pooled_ties, pooled_kept = vote_shares(br.Davidson(), data, None)
    assert pooled_ties.shape == (1,) and pooled_ties[0] == data.ties.sum() / data.totals.sum()
    assert pooled_kept[0] == data.totals.sum() / (data.totals.sum() + data.ties_bothbad.sum())
