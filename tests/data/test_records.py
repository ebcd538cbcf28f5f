"""Tests of the data layer: readers, validation messages, checks and bundled datasets."""

from __future__ import annotations

import gzip
import json
import re
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bayesrank.data import (
    DATASETS,
    Comparisons,
    from_battles,
    from_frame,
    from_judgements,
    load,
    load_dataset,
    read,
    statistical_warnings,
)
from bayesrank.data.bundled import dataset_path
from bayesrank.errors import DataError

HERE = Path(__file__).parent
BAD = HERE


def battles(rows) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])


# ---------------------------------------------------------------------- validation messages
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("missing_column.csv", [r"missing column\(s\) 'winner'", "battles", "judgements", "counts"]),
        ("bad_outcome.csv", ["record 2", "'winner'", "'model_c'", "'tie \\(bothbad\\)'"]),
        ("self_comparison.jsonl", ["record 1", "'gpt-4' with itself", "remove self-comparisons"]),
        ("empty_name.csv", ["record 3", "'model_b' is missing or empty"]),
        ("negative_count.csv", ["row 1", "'wins_b'", "is negative", "non-negative whole"]),
        ("nan_count.csv", ["row 1", "'ties'", r"is missing \(NaN\)"]),
        ("fractional_count.csv", ["row 0", "'wins_b' = 1.5", "not a whole number"]),
        ("text_count.csv", ["row 1", "'wins_a' = 'two'", "not a number"]),
        ("empty.csv", ["no comparisons", "empty"]),
        ("bad_verdict.json", ["record 1", "'judge_preferred_model'", "'d'", "'a', 'b', 'c', 'unknown'"]),
        ("broken.json", ["not valid JSON", "line 3"]),
        ("broken.jsonl", ["line 3 is not valid JSON"]),
        ("broken.csv", ["not a readable CSV", "line 4"]),
        ("bad_count_table.json", ["lacks key", "'Y'"]),
    ],
)
def test_bad_file_message_names_record_and_column(name, expected):
    with pytest.raises(DataError) as info:
        read(BAD / name)
    message = str(info.value)
    assert name in message  # the file is named
    for pattern in expected:
        assert re.search(pattern, message), (pattern, message)


def test_unknown_suffix_says_to_pass_format(tmp_path):
    path = tmp_path / "battles.txt"
    path.write_text((BAD / "bad_outcome.csv").read_text())
    with pytest.raises(DataError, match=r"'\.txt'.*pass format="):
        read(path)
    with pytest.raises(DataError, match="record 2"):  # the override reads it as CSV
        read(path, format="csv")


def test_unknown_format_value():
    with pytest.raises(DataError, match=r"unknown format=.xlsx. \(CLI: --data-format\); use one of csv, parquet"):
        read(BAD / "bad_outcome.csv", format="xlsx")


def test_missing_file():
    with pytest.raises(DataError, match="nope.csv does not exist"):
        read(BAD / "nope.csv")


def test_load_unknown_name_lists_datasets():
    with pytest.raises(DataError, match=r"'arena-2025' is neither a bundled dataset \(arena-2024, "):
        load("arena-2025")


def test_from_frame_without_any_shape_lists_accepted_columns():
    with pytest.raises(DataError) as info:
        from_frame(pd.DataFrame({"left": ["a"], "right": ["b"], "result": [1]}))
    message = str(info.value)
    assert "'model_a', 'model_b', 'winner'" in message
    assert "judgements: model_a, model_b, judge_model, judge_preferred_model" in message
    assert "counts: model_a, model_b, wins_a, wins_b [ties, ties_bothbad, judge, judge_model, first]" in message


def test_counts_shape_missing_wins_b_is_named():
    with pytest.raises(DataError, match=r"missing column\(s\) 'wins_b'.*counts records"):
        from_frame(pd.DataFrame({"model_a": ["a"], "model_b": ["b"], "wins_a": [1]}))


def test_nan_model_name_in_frame():
    df = battles([("a", "b", "model_a"), (np.nan, "b", "tie")])
    with pytest.raises(DataError, match="record 1: column 'model_a' is missing or empty"):
        from_battles(df)


def test_error_record_numbers_count_dropped_unknown_verdicts():
    df = pd.DataFrame(
        {
            "model_a": ["a", "a", "a"],
            "model_b": ["b", "b", "a"],
            "judge_model": ["j", "j", "j"],
            "judge_preferred_model": ["unknown", "a", "b"],
        }
    )
    with pytest.raises(DataError, match="record 2 compares 'a' with itself"):
        from_judgements(df)


def test_all_unknown_verdicts():
    df = pd.DataFrame(
        {"model_a": ["a"], "model_b": ["b"], "judge_model": ["j"], "judge_preferred_model": ["unknown"]}
    )
    with pytest.raises(DataError, match="all 1 records are 'unknown'"):
        from_judgements(df)


# ---------------------------------------------------------------------- readers
def test_battles_counts_positions_and_both_bad():
    df = battles(
        [
            ("x", "y", "model_a"),
            ("x", "y", "model_a"),
            ("y", "x", "model_a"),  # y shown first, y wins
            ("x", "y", "tie"),
            ("y", "x", "tie (bothbad)"),
        ]
    )
    data = from_battles(df)
    assert data.items == ("x", "y")
    frame = data.to_frame().set_index("first")
    # x shown first: 2 x-wins and 1 tie; y shown first: one y-win and the both-bad tie, counted
    # as a tie by default (the Arena convention of raw battle logs) and kept in its own column
    assert frame.loc["a", ["wins_a", "wins_b", "ties", "ties_bothbad"]].tolist() == [2, 0, 1, 0]
    assert frame.loc["b", ["wins_a", "wins_b", "ties", "ties_bothbad"]].tolist() == [0, 1, 1, 1]
    assert data.n_comparisons == 5 and from_battles(df, both_bad_as_ties=True).n_comparisons == 5
    paper = from_battles(df, both_bad_as_ties=False)  # the leaderbot paper's convention, asked for
    assert paper.n_comparisons == 4 and sum(paper.dropped.values()) == 1


def test_orientation_canonicalised_b_a_rows_flip_wins():
    df = pd.DataFrame(
        {"model_a": ["b", "a"], "model_b": ["a", "b"], "wins_a": [5, 1], "wins_b": [2, 3], "ties": [1, 0]}
    )
    data = from_frame(df)
    assert data.items == ("a", "b")
    assert data.n_cells == 1
    assert (data.a[0], data.b[0]) == (0, 1)
    assert data.wins_a.tolist() == [1 + 2]  # a's wins: row 2 wins_a + row 1 wins_b
    assert data.wins_b.tolist() == [3 + 5]
    assert data.ties.tolist() == [1]


def test_duplicate_rows_are_aggregated():
    df = pd.DataFrame(
        {
            "model_a": ["a", "a", "b", "a"],
            "model_b": ["b", "b", "c", "b"],
            "wins_a": [1, 2, 4, 3],
            "wins_b": [0, 1, 1, 1],
        }
    )
    data = from_frame(df)
    assert data.n_cells == 2
    assert data.to_frame()[["model_a", "model_b", "wins_a", "wins_b"]].values.tolist() == [
        ["a", "b", 6, 2],
        ["b", "c", 4, 1],
    ]


def test_judgements_drop_unknown_and_keep_judges():
    df = pd.DataFrame(
        {
            "question_id": ["1", "1", "2", "2", "3"],
            "model_a": ["a", "a", "a", "b", "a"],
            "model_b": ["b", "b", "b", "c", "c"],
            "judge_model": ["j1", "j2", "j1", "j1", "j2"],
            "judge_preferred_model": ["a", "c", "unknown", "b", "b"],
        }
    )
    data = from_frame(df)
    assert data.dropped == {"unknown verdict": 1}
    assert data.judges == ("j1", "j2")
    assert data.n_cells == 4
    assert (data.first == 0).all()
    assert data.summary()["wins_a"] == 1 and data.summary()["wins_b"] == 2
    assert data.ties.sum() == 1


def test_round_trip_battles_csv(tmp_path):
    rng = np.random.default_rng(1)
    names = ["gpt-4", "claude-v1", "llama-13b", "vicuna-13b"]
    pairs = [rng.choice(names, 2, replace=False) for _ in range(500)]
    outcomes = rng.choice(["model_a", "model_b", "tie", "tie (bothbad)"], 500)
    df = battles([(a, b, w) for (a, b), w in zip(pairs, outcomes, strict=True)])
    direct = from_frame(df)
    df.to_csv(tmp_path / "battles.csv", index=False)
    df.to_json(tmp_path / "battles.jsonl", orient="records", lines=True)
    for path in (tmp_path / "battles.csv", tmp_path / "battles.jsonl"):
        again = read(path)
        assert again.items == direct.items
        np.testing.assert_array_equal(again.counts(), direct.counts())
        np.testing.assert_array_equal(again.ties_bothbad, direct.ties_bothbad)
        np.testing.assert_array_equal(again.first, direct.first)
    assert direct.n_comparisons == len(outcomes)  # both-bad ties counted as ties (the Arena convention)


def test_round_trip_parquet_and_to_frame(tmp_path):
    pytest.importorskip("pyarrow")
    df = battles([("a", "b", "model_a"), ("b", "a", "tie"), ("c", "a", "model_b")])
    data = from_frame(df)
    data.to_frame().to_parquet(tmp_path / "cells.parquet")
    again = read(tmp_path / "cells.parquet")
    np.testing.assert_array_equal(again.counts(), data.counts())
    np.testing.assert_array_equal(again.first, data.first)


def test_json_formats_detected_from_content(tmp_path):
    table = {"models": ["a", "b"], "X": [[0, 1]], "Y": [[3, 1, 2]]}
    (tmp_path / "table.json").write_text(json.dumps(table))
    assert read(tmp_path / "table.json").counts().tolist() == [[3, 1, 2]]
    records = [{"model_a": "a", "model_b": "b", "winner": "model_b"}] * 2
    # JSON lines behind a .json suffix are recognised from the content
    (tmp_path / "lines.json").write_text("\n".join(json.dumps(r) for r in records))
    assert read(tmp_path / "lines.json").counts().tolist() == [[0, 2, 0]]
    (tmp_path / "counts.dat").write_text(json.dumps(table))
    assert read(tmp_path / "counts.dat", format="counts").n_comparisons == 6


def test_load_dispatch(tmp_path):
    df = battles([("a", "b", "model_a")])
    data = load(df)
    assert isinstance(data, Comparisons)
    assert load(data) is data
    df.to_csv(tmp_path / "b.csv", index=False)
    assert load(str(tmp_path / "b.csv")).n_comparisons == 1
    assert load(tmp_path / "b.csv").n_comparisons == 1
    assert load({"models": ["a", "b"], "X": [[0, 1]], "Y": [[1, 2, 0]]}).n_comparisons == 3
    with pytest.raises(DataError, match="cannot load data of type int"):
        load(3)


# ---------------------------------------------------------------------- checks
def test_disconnected_graph_warning():
    df = battles([("a", "b", "model_a"), ("b", "a", "model_a"), ("c", "d", "model_a"), ("d", "c", "model_a")])
    warnings = statistical_warnings(from_battles(df))
    assert warnings == [
        "the comparison graph has 2 disconnected components: {a, b} | {c, d}; scores are only "
        "comparable within a component — add comparisons between them or fit each separately"
    ]


def test_never_win_or_lose_is_left_to_the_existence_check():
    """Whether an item that never wins has a finite MLE depends on the link (a tie bounds it in a
    tie model), so the data-only warnings make no claim about it."""
    df = battles([("a", "b", "model_a"), ("a", "c", "model_a"), ("b", "c", "model_a"), ("c", "b", "model_a"),
                  ("a", "b", "tie")])
    assert statistical_warnings(from_battles(df)) == []


def test_no_warnings_on_well_connected_data():
    df = battles([("a", "b", "model_a"), ("b", "c", "model_a"), ("c", "a", "model_a")])
    assert statistical_warnings(from_battles(df)) == []


# ---------------------------------------------------------------------- bundled and real data
def test_arena_2024_reference_numbers():
    data = load_dataset("arena-2024")
    s = data.summary()
    assert (s["n_items"], s["n_cells"], s["n_comparisons"]) == (129, 3455, 1_374_996)
    assert (s["wins_a"], s["wins_b"], s["ties"]) == (595_570, 498_305, 281_121)
    both = load("arena-2024", both_bad_as_ties=True)
    assert (both.n_cells, both.n_comparisons) == (3460, 1_670_250)
    assert statistical_warnings(data) == []


def test_mtbench_bundled_dataset():
    data = load_dataset("mtbench-judges")
    assert data.source == "mtbench-judges"
    assert data.n_items == 6 and data.n_judges == 20
    assert data.dropped == {"unknown verdict": 294}
    assert (data.n_cells, data.n_comparisons) == (300, 9706)
    assert (data.wins_a.sum(), data.wins_b.sum(), data.ties.sum()) == (5127, 3823, 756)
    assert "Apache-2.0" in DATASETS["mtbench-judges"].licence


def test_mtbench_records_counted_from_the_raw_file():
    """The bundled judge records, read as plain JSON, against what the reader makes of them."""
    with resources.as_file(dataset_path("mtbench-judges")) as path:
        records = json.loads(gzip.decompress(path.read_bytes()))
        data = read(path)
    assert len(records) == 10_000
    verdicts = pd.Series([r["judge_preferred_model"] for r in records]).value_counts()
    assert data.dropped == {"unknown verdict": int(verdicts["unknown"])} == {"unknown verdict": 294}
    assert (data.wins_a.sum(), data.wins_b.sum(), data.ties.sum()) == (verdicts["a"], verdicts["b"], verdicts["c"])
    assert data.n_judges == len({r["judge_model"] for r in records}) == 20


def test_bundled_readme_covers_every_dataset():
    readme = (resources.files("bayesrank.data") / "datasets" / "README.md").read_text()
    for ds in DATASETS.values():
        assert ds.filename in readme


def test_to_frame_round_trip_keeps_judges_and_positions():
    data = load_dataset("mtbench-judges")
    again = from_frame(data.to_frame())
    assert again.judges == data.judges
    np.testing.assert_array_equal(again.counts(), data.counts())
    np.testing.assert_array_equal(again.judge, data.judge)
    np.testing.assert_array_equal(again.first, data.first)


def test_first_column_values():
    df = pd.DataFrame({"model_a": ["a", "a"], "model_b": ["b", "b"], "wins_a": [1, 2],
                       "wins_b": [0, 1], "first": [0, 1]})
    assert from_frame(df).first.tolist() == [0, 1]
    with pytest.raises(DataError, match="row 1: column 'first' is 'left'; use 'a' or 0"):
        from_frame(df.assign(first=["a", "left"]))
