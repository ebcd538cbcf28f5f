"""Merging comparisons: the cells of two sets of records added are the cells of all the records,
and what cannot be one arena is refused in words."""

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.data.merge import align, merge
from tests.conftest import simulate_battles

FIELDS = ("items", "a", "b", "wins_a", "wins_b", "ties", "judges", "judge", "first", "contrasts", "contrast_names",
          "n_records", "record_ids", "reading")


def same(x, y) -> bool:
    if x is None or y is None:
        return x is y
    return np.array_equal(np.asarray(x), np.asarray(y)) if not isinstance(x, dict) else x == y


@pytest.mark.parametrize("kind", ["battles", "style", "judges"])
@pytest.mark.parametrize("cut", [300, 1500])
def test_merged_cells_are_the_cells_of_all_records(kind, cut):
    rng = np.random.default_rng(cut)
    scores = rng.normal(0, 1, 7)
    options = {"style": dict(beta=0.3), "judges": dict(judges={"j1": 1.0, "j2": 0.5, "j3": 2.0})}.get(kind, {})
    old = simulate_battles(scores, 2000, rng, models=range(6), **options)        # m6 appears later only
    new = simulate_battles(scores, 800, rng, first_id=10_000, **options)
    read = dict(contrasts=["len"]) if kind == "style" else {}
    together = br.load(pd.concat([old.iloc[:cut], new]), **read)
    merged = merge(br.load(old.iloc[:cut], **read), br.load(new, **read))
    for field in FIELDS:
        assert same(getattr(merged, field), getattr(together, field)), field


def test_counts_of_each_set_on_the_merged_cells():
    rng = np.random.default_rng(1)
    old = br.load(simulate_battles(np.zeros(5), 500, rng, models=range(4)))
    new = br.load(simulate_battles(np.zeros(5), 300, rng, first_id=1000))
    aligned = align(old, new)
    assert aligned.old.sum() == old.counts().sum() and aligned.new.sum() == new.counts().sum()
    assert list(aligned.old_items) == [True] * 4 + [False]
    assert np.allclose(aligned.old + aligned.new, np.column_stack([aligned.cells.counts(), aligned.cells.ties_bothbad]))


def test_records_already_counted_are_refused():
    rng = np.random.default_rng(2)
    records = simulate_battles(np.zeros(4), 400, rng)
    old = br.load(records.iloc[:300])
    with pytest.raises(br.DataError, match=r"record 0 .* counts already \(10 such records\)"):
        merge(old, br.load(records.iloc[290:]))
    twice = pd.concat([records.iloc[300:], records.iloc[[310]]])
    with pytest.raises(br.DataError, match=r"record 100 repeats the id of an earlier record"):
        merge(old, br.load(twice))
    with pytest.raises(br.DataError, match="no 'id' column"):
        merge(old, br.load(records.iloc[300:].drop(columns="id")))


@pytest.mark.parametrize("change, message", [
    (lambda f: f.assign(judge_model="j1", judge_preferred_model="a").drop(columns="winner"), "has judges"),
    (lambda f: f.assign(model_a="x" + f["model_a"], model_b="x" + f["model_b"]), "another arena"),
])
def test_another_layout_or_arena_is_refused(change, message):
    rng = np.random.default_rng(3)
    records = simulate_battles(np.zeros(4), 400, rng)
    old = br.load(records.iloc[:300])
    with pytest.raises(br.DataError, match=message):
        merge(old, br.load(change(records.iloc[300:])))


def test_other_reading_options_are_refused():
    rng = np.random.default_rng(4)
    records = simulate_battles(np.zeros(4), 400, rng, beta=0.2)
    old = br.load(records.iloc[:300], contrasts=["len"])
    with pytest.raises(br.DataError, match=r"contrasts \['len'\] and the new records none"):
        merge(old, br.load(records.iloc[300:]))
    # battle records count both-bad ties by default (the Arena convention): a fit read the other
    # way takes no records read the default way
    paper = br.load(records.iloc[:300], contrasts=["len"], both_bad_as_ties=False)
    with pytest.raises(br.DataError, match="both_bad_as_ties=False"):
        merge(paper, br.load(records.iloc[300:], contrasts=["len"]))
    with pytest.raises(br.DataError, match="drop_duplicates=False"):
        merge(old, br.load(records.iloc[300:], contrasts=["len"], drop_duplicates=True))


def test_ids_digested_otherwise_are_not_compared():
    from dataclasses import replace

    rng = np.random.default_rng(5)
    records = simulate_battles(np.zeros(4), 400, rng)
    old, new = br.load(records.iloc[:300]), br.load(records.iloc[300:])
    other = replace(new, reading={**new.reading, "id_digest": "duckdb hash 1"})
    with pytest.raises(br.DataError, match="another version of DuckDB"):
        merge(old, other)


def test_a_new_name_that_looks_like_a_known_one_is_said():
    """Each set's reading warns about look-alikes within it; a new model 'B' beside the known 'b'
    is only seen when the two meet."""
    old = br.load(pd.DataFrame({"model_a": ["a", "b"], "model_b": ["b", "c"], "winner": ["model_a", "tie"]}))
    new = br.load(pd.DataFrame({"model_a": ["a", "B"], "model_b": ["B", "c"], "winner": ["model_b", "model_a"]}))
    assert not old.warnings and not new.warnings
    said = [w for w in merge(old, new).warnings if "look alike" in w]
    assert len(said) == 1 and "'B' and 'b'" in said[0]
    assert not [w for w in merge(old, old.subset(np.array([True, False]))).warnings if "look alike" in w]
