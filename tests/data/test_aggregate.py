"""Typing and aggregation rules (bayesrank/data/aggregate.py) for every source: numeric names
keep their exact text, duplicates are said, tables that mix readings are refused; a time
column falls in calendar periods (ISO weeks, months, days) and an unreadable date is refused;
record ids are one digest per record counted, the same for the same id text whatever the source."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bayesrank as br
from bayesrank.cli import main
from bayesrank.data.aggregate import id_digest
from bayesrank.data.comparisons import Comparisons

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def ring(ids) -> dict[str, list]:
    """Battles in a ring over ``ids`` (each compared with the next), as columns."""
    ids = list(ids)
    return {"model_a": ids, "model_b": ids[1:] + ids[:1], "winner": ["model_a"] * len(ids)}


# ---------------------------------------------------------------------- numbers as names
@FAST
@given(ids=st.lists(st.integers(2**53, 2**63 - 1), min_size=3, max_size=8, unique=True))
def test_large_integer_ids_keep_every_digit(tmp_path_factory, ids):
    """Ids around 1e17 that one double cannot tell apart stay distinct items, in every source."""
    folder = tmp_path_factory.mktemp("ids")
    columns = ring(ids)
    frame = pd.DataFrame({k: (np.array(v, dtype=np.int64) if k != "winner" else v) for k, v in columns.items()})
    frame.to_parquet(folder / "r.parquet")
    lines = (json.dumps(dict(zip(columns, row))) + "\n" for row in zip(*columns.values()))
    (folder / "r.jsonl").write_text("".join(lines))
    frame.to_csv(folder / "r.csv", index=False)
    expected = tuple(sorted(str(i) for i in ids))
    for source in (frame, folder / "r.parquet", folder / "r.jsonl", folder / "r.csv", pa.table(frame)):
        assert br.load(source).items == expected, type(source)


@FAST
@given(values=st.lists(st.floats(width=32, min_value=-1e6, max_value=1e6, allow_nan=False, allow_subnormal=False),
                       min_size=3, max_size=8, unique=True))
def test_float32_names_are_written_in_their_own_precision(tmp_path_factory, values):
    values = np.unique(np.array(values, dtype=np.float32))
    if values.size < 3:
        return
    frame = pd.DataFrame({k: (np.array(v, dtype=np.float32) if k != "winner" else v)
                          for k, v in ring(list(values)).items()})
    path = tmp_path_factory.mktemp("f32") / "r.parquet"
    frame.to_parquet(path)
    for source in (frame, path):
        items = br.load(source).items
        assert len(items) == values.size  # none merged
        for name in items:
            value = np.float32(float(name))
            assert value in values  # reads back as the float32 written
            assert len(name) <= len(str(value)) + 2 or "e" in name  # shortest form, not float64's digits
            if value == int(value):
                assert "." not in name and "e" not in name


def test_float32_and_float64_examples():
    f32 = pd.DataFrame({"model_a": np.array([3.3, 0.1], dtype=np.float32),
                        "model_b": np.array([2.5, 3.3], dtype=np.float32),
                        "winner": ["model_a", "tie"]})
    assert br.load(f32).items == ("0.1", "2.5", "3.3")
    f64 = f32.astype({"model_a": np.float64, "model_b": np.float64})
    assert br.load(f64).items == ("0.10000000149011612", "2.5", "3.299999952316284")  # what float64 holds


def test_half_precision_names_and_numbers_keep_their_own_text():
    """float16 (pandas, Arrow) has no DuckDB type: names are its own shortest text, counts and
    covariates its numbers, and a missing value is missing — never float32's digits."""
    half = pd.DataFrame({"model_a": np.array([0.1, 0.2, 3.0], dtype=np.float16),
                         "model_b": np.array([0.2, 3.0, 0.1], dtype=np.float16),
                         "winner": ["model_a", "model_b", "tie"],
                         "length": np.array([1.5, 2.25, 0.5], dtype=np.float16)})
    for source in (half, pa.table(half)):
        data = br.load(source, covariates=["length"])
        assert data.items == ("0.1", "0.2", "3"), type(source)
        assert sorted(data.covariates.ravel()) == [0.5, 1.5, 2.25]
    gap = half.assign(model_a=np.array([np.nan, 0.2, 3.0], dtype=np.float16))
    for source in (gap, pa.table(gap)):
        with pytest.raises(br.DataError, match=r"record 0: column 'model_a' is missing or empty"):
            br.load(source)


@pytest.mark.parametrize("value", [2.0**53, 1e17, -2.0**60])
def test_floating_point_ids_beyond_2_53_are_refused(value):
    frame = pd.DataFrame({"model_a": [value, 1.0], "model_b": [2.0, 3.0], "winner": ["model_a", "tie"]})
    with pytest.raises(br.DataError, match=r"record 0.*floating-point \(double\) number beyond 2\^53"):
        br.load(frame)


def test_integer_ids_with_a_missing_value_are_refused_not_merged():
    """pandas stores an integer column with a missing value as floats: ids beyond 2^53 have
    already lost digits there, so they are refused rather than merged."""
    frame = pd.DataFrame({"model_a": [10**17, 10**17 + 1, None], "model_b": [10**17 + 2] * 3,
                          "winner": ["model_a", "tie", "tie"]})
    assert frame["model_a"].dtype.kind == "f"
    with pytest.raises(br.DataError, match="beyond 2\\^53"):
        br.load(frame)


def test_nan_in_a_float_name_column_is_a_missing_name():
    frame = pd.DataFrame({"model_a": [1.0, np.nan], "model_b": [2.0, 3.0], "winner": ["model_a", "tie"]})
    with pytest.raises(br.DataError, match="record 1.*missing or empty"):
        br.load(frame)


def test_decimal_and_big_json_integers_keep_their_digits(tmp_path):
    import decimal

    table = pa.table({"model_a": pa.array([decimal.Decimal("3.30"), decimal.Decimal("2.00")], pa.decimal128(5, 2)),
                      "model_b": pa.array([decimal.Decimal("1.50"), decimal.Decimal("3.30")], pa.decimal128(5, 2)),
                      "winner": ["model_a", "tie"]})
    pq.write_table(table, tmp_path / "d.parquet")
    assert br.load(tmp_path / "d.parquet").items == ("1.5", "2", "3.3")
    path = tmp_path / "big.jsonl"
    path.write_text('{"model_a": 123456789012345678901234567890, "model_b": 123456789012345678901234567891, '
                    '"winner": "tie"}\n')
    assert br.load(path).items == ("123456789012345678901234567890", "123456789012345678901234567891")


# ---------------------------------------------------------------------- duplicates
@FAST
@given(n=st.integers(3, 20), repeated=st.lists(st.integers(0, 19), min_size=1, max_size=10),
       layout=st.sampled_from(["frame", "jsonl", "csv"]))
def test_judge_records_exported_twice_are_counted_and_said(tmp_path_factory, n, repeated, layout):
    rng = np.random.default_rng(n)
    models = ["m1", "m2", "m3", "m4"]
    rows = [{"question_id": q, "model_a": models[q % 4], "model_b": models[(q + 1) % 4],
             "judge_model": ["j1", "j2"][q % 2], "judge_preferred_model": str(rng.choice(["a", "b", "c"]))}
            for q in range(n)]
    twice = [rows[k % n] for k in repeated]
    frame = pd.DataFrame(rows + twice)
    source = frame
    if layout != "frame":
        source = tmp_path_factory.mktemp("dup") / f"r.{layout}"
        if layout == "csv":
            frame.to_csv(source, index=False)
        else:
            source.write_text("".join(json.dumps(r) + "\n" for r in rows + twice))
    kept = br.load(source)
    assert kept.n_comparisons == n + len(twice)  # as given, but said
    assert kept.notes["records repeating an earlier record (duplicates)"] == len(twice)
    assert any(f"{len(twice):,} of {n + len(twice):,} records repeat an earlier record" in w for w in kept.warnings)
    once = br.load(source, drop_duplicates=True)
    assert once.n_comparisons == n
    assert once.accounting()["dropped"] == {"duplicate record (drop_duplicates=True / --drop-duplicates)": len(twice)}
    assert once.cells_digest() == br.load(pd.DataFrame(rows)).cells_digest()


def test_records_without_an_identifier_are_not_duplicates():
    frame = pd.DataFrame({"model_a": ["x"] * 5, "model_b": ["y"] * 5, "winner": ["model_a"] * 5})
    data = br.load(frame)
    assert data.n_comparisons == 5 and not data.warnings and not data.notes


def test_cli_drop_duplicates(tmp_path, capsys):
    path = tmp_path / "r.csv"
    path.write_text("id,model_a,model_b,winner\n1,x,y,model_a\n1,x,y,model_a\n2,y,z,tie\n3,z,x,model_b\n")
    assert main(["fit", str(path), "--model", "bt", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["accounting"]["comparisons_used"] == 4 and any("exported twice" in w for w in out["warnings"])
    assert main(["fit", str(path), "--model", "bt", "--format", "json", "--drop-duplicates"]) == 0
    assert json.loads(capsys.readouterr().out)["accounting"]["comparisons_used"] == 3


def test_a_count_table_with_a_winner_column_is_refused():
    frame = pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "z"], "wins_a": [50, 60], "wins_b": [30, 30],
                          "winner": ["model_a", "tie"]})
    with pytest.raises(br.DataError, match="both a 'winner' column.*remove 'winner' to read the counts"):
        br.load(frame)


# ---------------------------------------------------------------------- tables
def test_covariate_names_with_quotes_and_repeats():
    frame = pd.DataFrame({"model_a": ["x", "y", "z"], "model_b": ["y", "z", "x"], "winner": ["model_a"] * 3,
                          'len "a"': [1.0, 2.0, 3.0], "it's": [1.0, 1.0, 2.0]})
    data = br.load(frame, covariates=['len "a"', "it's"])
    assert data.covariate_names == ('len "a"', "it's") and data.covariates.shape == (3, 2)
    with pytest.raises(br.DataError, match=r"covariates= names the column\(s\) \"it's\" more than once"):
        br.load(frame, covariates=["it's", "it's"])
    with pytest.raises(br.DataError, match="both covariates and contrasts"):
        br.load(frame, covariates=["it's"], contrasts=["it's"])


@pytest.mark.parametrize("kind", ["covariates", "contrasts"])
def test_a_covariate_that_is_not_a_number_is_said_as_a_covariate(kind):
    """A covariate is any finite number (negative, fractional): its message names it as such, not
    by the rule of counts."""
    frame = pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "z"], "winner": ["model_a", "tie"],
                          "z": ["1.5", "two"]})
    with pytest.raises(br.DataError) as err:
        br.load(frame, **{kind: ["z"]})
    message = str(err.value)
    assert f"record 1: {kind[:-1]} 'z' = 'two' is not a finite number" in message
    assert "count" not in message and "whole numbers" not in message
    frame["z"] = [-1.5, 2.25]
    assert br.load(frame, **{kind: ["z"]}).n_comparisons == 2


@pytest.mark.parametrize(("frame", "fragment"), [
    (pd.DataFrame(), "has no columns"),
    (pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "wins_a": [1 + 2j], "wins_b": [1]}), "complex numbers"),
    (pd.DataFrame({"model_a": ["x"], "MODEL_A": ["z"], "model_b": ["y"], "winner": ["tie"]}),
     "differ only by letter case"),
])
def test_tables_that_cannot_be_read_say_why(frame, fragment):
    with pytest.raises(br.DataError, match=fragment):
        br.load(frame)


def test_category_columns_are_read_as_their_values():
    frame = pd.DataFrame({"model_a": pd.Categorical(["x", "y"]), "model_b": pd.Categorical(["y", "z"]),
                          "winner": pd.Categorical(["model_a", "tie"])})
    data = br.load(frame)
    assert data.items == ("x", "y", "z") and data.n_comparisons == 2
    assert br.load(pa.table(frame)).items == data.items  # Arrow dictionaries too


# ---------------------------------------------------------------------- a time column
def dated(dates):
    """Battles among x, y, z with a time column ``when``."""
    n = len(dates)
    return pd.DataFrame({"model_a": ["x", "y", "x", "z", "y", "x"][:n], "model_b": ["y", "z", "z", "x", "x", "y"][:n],
                         "winner": ["model_a", "tie", "model_b", "model_a", "model_b", "model_a"][:n], "when": dates})


def test_dates_timestamps_offsets_and_unix_seconds_fall_in_iso_weeks():
    # 2024-03-04 is a Monday; 2024-03-10T23:30-02:00 is 2024-03-11T01:30Z, the next week
    dates = ["2024-03-05", "2024-03-10T23:30:00-02:00", 1710000000, "2024-03-03 12:00:00", "2024-03-11T00:00:00Z",
             "2024-03-17"]
    data = br.load(dated(dates), time_column="when", period="week")
    assert data.periods == ("2024-02-26", "2024-03-04", "2024-03-11")
    assert data.period_unit == "week"
    frame = data.to_frame()
    assert frame.groupby("period")[["wins_a", "wins_b", "ties"]].sum().sum(axis=1).to_dict() == {
        "2024-02-26": 1.0, "2024-03-04": 2.0, "2024-03-11": 3.0}


@pytest.mark.parametrize("period,expected", [("month", ("2024-01-01", "2024-02-01")),
                                             ("day", ("2024-01-31", "2024-02-01"))])
def test_months_and_days(period, expected):
    data = br.load(dated(["2024-01-31", "2024-02-01T08:00:00Z"]), time_column="when", period=period)
    assert data.periods == expected


def test_an_unparseable_date_names_the_record_and_the_column():
    with pytest.raises(br.DataError, match=r"record 1: time column 'when' = 'next tuesday' is not a date"):
        br.load(dated(["2024-03-05", "next tuesday", "2024-13-01"]), time_column="when")


def test_missing_time_column_and_unknown_period_are_refused():
    with pytest.raises(br.DataError, match="time column 'date' not found"):
        br.load(dated(["2024-03-05"]), time_column="date")
    with pytest.raises(br.DataError, match="not a calendar period; use one of day, week, month"):
        br.load(dated(["2024-03-05"]), time_column="when", period="year")


def test_count_tables_have_no_dates():
    with pytest.raises(br.DataError, match="count table"):
        br.load({"models": ["a", "b"], "X": [[0, 1]], "Y": [[1, 2, 0]]}, time_column="when")
    with pytest.raises(br.DataError, match="aggregated counts"):
        br.load("arena-2024", time_column="when")


def test_periods_survive_the_saved_form():
    data = br.load(dated(["2024-03-05", "2024-03-12", "2024-03-19", "2024-03-26"]), time_column="when")
    again = Comparisons.from_xarray(data.to_xarray())
    assert again.periods == data.periods and again.period_unit == "week"
    np.testing.assert_array_equal(again.period, data.period)
    assert data.summary()["periods"] == {"unit": "week", "n_periods": 4, "first": "2024-03-04",
                                         "last": "2024-03-25"}


def test_the_machines_time_zone_does_not_move_a_date(monkeypatch):
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    data = br.load(dated(["2024-03-10 23:30:00"]), time_column="when")
    assert data.periods == ("2024-03-04",)


# ---------------------------------------------------------------------- record ids
def test_record_ids_are_digests_of_the_id_text_in_record_order(tmp_path):
    frame = pd.DataFrame({"id": ["b-7", "b-3", 12, "é"], "model_a": ["x", "y", "x", "z"],
                          "model_b": ["y", "z", "z", "x"], "winner": ["model_a", "tie", "model_b", "model_a"]})
    frame.to_json(tmp_path / "battles.jsonl", orient="records", lines=True)
    frame.astype({"id": str}).to_csv(tmp_path / "battles.csv", index=False)
    expected = [duckdb.sql(f"SELECT hash('{t}')").fetchall()[0][0] for t in ("b-7", "b-3", "12", "é")]
    con = duckdb.connect()
    relation = con.read_csv(str(tmp_path / "battles.csv"))
    for data in (br.load(frame), br.load(tmp_path / "battles.jsonl"), br.load(tmp_path / "battles.csv"),
                 br.load(relation)):
        assert data.record_ids.dtype == np.uint64
        assert list(data.record_ids) == expected
        assert data.reading["id_digest"] == id_digest()


def test_the_digest_is_the_same_in_another_process():
    code = "from bayesrank.data.aggregate import id_digest; print(id_digest())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == id_digest()


def test_ids_survive_saving_a_fit(tmp_path):
    frame = pd.DataFrame({"id": [f"r{k}" for k in range(6)], "model_a": list("xyzxyz"), "model_b": list("yzxzxy"),
                          "winner": ["model_a", "model_b", "tie", "model_a", "model_b", "model_a"]})
    fit = br.fit(br.BradleyTerry(), frame)
    fit.save(tmp_path / "fit.nc")
    assert np.array_equal(br.Fit.load(tmp_path / "fit.nc").data.record_ids, br.load(frame).record_ids)


def test_a_record_without_id_is_refused():
    frame = pd.DataFrame({"id": ["a", None, ""], "model_a": ["x", "y", "x"], "model_b": ["y", "x", "y"],
                          "winner": ["model_a", "model_b", "tie"]})
    with pytest.raises(br.DataError, match=r"record 1: column 'id' is missing or empty \(2 such records\)"):
        br.load(frame)


def test_records_without_id_column_have_none():
    frame = pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["model_a"]})
    assert br.load(frame).record_ids is None


def test_ids_follow_the_records_counted_and_the_reading_is_kept():
    """With drop_duplicates=True a record repeated in every column read leaves one id (it is
    counted once); without, every record keeps its id. The reading options are recorded, the
    both-bad convention as resolved for the records' shape."""
    frame = pd.DataFrame({"id": ["r0", "r1", "r1", "r2"], "model_a": ["x", "y", "y", "x"],
                          "model_b": ["y", "z", "z", "z"], "winner": ["model_a", "tie", "tie", "model_b"]})
    digests = [duckdb.sql(f"SELECT hash('{t}')").fetchall()[0][0] for t in ("r0", "r1", "r1", "r2")]
    kept = br.load(frame, drop_duplicates=True)
    assert list(kept.record_ids) == digests[:2] + digests[3:]
    assert kept.n_comparisons == 3
    assert kept.reading["drop_duplicates"] is True and kept.reading["both_bad_as_ties"] is True
    counted = br.load(frame)
    assert list(counted.record_ids) == digests and counted.n_comparisons == 4
    assert counted.reading["drop_duplicates"] is False
    counts = br.Comparisons.from_cells(["x"], ["y"], [1], [0])
    assert counts.reading["both_bad_as_ties"] is False  # count records leave both-bad ties out


@pytest.mark.parametrize("column", ["count", "num_votes", "Weight"])
def test_a_column_of_counts_beside_battle_records_is_said_not_read(column):
    """Battle records count each record once; a column whose name says a record stands for
    several comparisons is not read, and the data say so (not read as a covariate either)."""
    frame = pd.DataFrame({"model_a": ["a", "b"], "model_b": ["b", "c"], "winner": ["model_a", "model_b"],
                          column: [5, 3]})
    data = br.load(frame)
    assert data.n_comparisons == 2
    assert any(w.startswith(f"column(s) {column!r} not read") for w in data.warnings)
    assert not any("not read" in w for w in br.load(frame, covariates=[column]).warnings)


def test_a_count_table_takes_its_judges_from_judge_model_too():
    frame = pd.DataFrame({"model_a": ["a", "a", "b"], "model_b": ["b", "b", "c"], "wins_a": [5, 0, 3],
                          "wins_b": [0, 5, 1], "judge_model": ["j1", "j2", "j1"]})
    assert br.load(frame).judges == ("j1", "j2")
    assert br.load(frame.rename(columns={"judge_model": "judge"})).judges == ("j1", "j2")


@pytest.mark.parametrize("drop", [False, True])
def test_an_id_repeated_with_other_content_is_said(drop):
    """Record 2 twice with two verdicts (a conflict), record 3 twice alike (a duplicate): only the
    conflict is said as such, whether duplicates are dropped or not."""
    frame = pd.DataFrame({"id": [1, 2, 2, 3, 3], "model_a": ["a", "b", "b", "c", "c"],
                          "model_b": ["b", "c", "c", "a", "a"],
                          "winner": ["model_a", "model_a", "model_b", "tie", "tie"]})
    said = [w for w in br.load(frame, drop_duplicates=drop).warnings if "repeat the 'id'" in w]
    assert len(said) == 1 and said[0].startswith("1 record(s) repeat the 'id' of an earlier record")
    assert not [w for w in br.load(frame.iloc[[0, 1, 3, 4]]).warnings if "repeat the 'id'" in w]
