"""Records with a time column: calendar periods (ISO weeks, months, days), and refused dates."""

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.data.comparisons import Comparisons


def records(dates):
    n = len(dates)
    return pd.DataFrame({"model_a": ["x", "y", "x", "z", "y", "x"][:n], "model_b": ["y", "z", "z", "x", "x", "y"][:n],
                         "winner": ["model_a", "tie", "model_b", "model_a", "model_b", "model_a"][:n], "when": dates})


def test_dates_timestamps_offsets_and_unix_seconds_fall_in_iso_weeks():
    # 2024-03-04 is a Monday; 2024-03-10T23:30-02:00 is 2024-03-11T01:30Z, the next week
    dates = ["2024-03-05", "2024-03-10T23:30:00-02:00", 1710000000, "2024-03-03 12:00:00", "2024-03-11T00:00:00Z",
             "2024-03-17"]
    data = br.load(records(dates), time_column="when", period="week")
    assert data.periods == ("2024-02-26", "2024-03-04", "2024-03-11")
    assert data.period_unit == "week"
    frame = data.to_frame()
    assert frame.groupby("period")[["wins_a", "wins_b", "ties"]].sum().sum(axis=1).to_dict() == {
        "2024-02-26": 1.0, "2024-03-04": 2.0, "2024-03-11": 3.0}


@pytest.mark.parametrize("period,expected", [("month", ("2024-01-01", "2024-02-01")),
                                             ("day", ("2024-01-31", "2024-02-01"))])
def test_months_and_days(period, expected):
    data = br.load(records(["2024-01-31", "2024-02-01T08:00:00Z"]), time_column="when", period=period)
    assert data.periods == expected


def test_an_unparseable_date_names_the_record_and_the_column():
    with pytest.raises(br.DataError, match=r"record 1: time column 'when' = 'next tuesday' is not a date"):
        br.load(records(["2024-03-05", "next tuesday", "2024-13-01"]), time_column="when")


def test_missing_time_column_and_unknown_period_are_refused():
    with pytest.raises(br.DataError, match="time column 'date' not found"):
        br.load(records(["2024-03-05"]), time_column="date")
    with pytest.raises(br.DataError, match="not a calendar period; use one of day, week, month"):
        br.load(records(["2024-03-05"]), time_column="when", period="year")


def test_count_tables_have_no_dates():
    with pytest.raises(br.DataError, match="count table"):
        br.load({"models": ["a", "b"], "X": [[0, 1]], "Y": [[1, 2, 0]]}, time_column="when")
    with pytest.raises(br.DataError, match="aggregated counts"):
        br.load("arena-2024", time_column="when")


def test_periods_survive_the_saved_form():
    data = br.load(records(["2024-03-05", "2024-03-12", "2024-03-19", "2024-03-26"]), time_column="when")
    again = Comparisons.from_xarray(data.to_xarray())
    assert again.periods == data.periods and again.period_unit == "week"
    np.testing.assert_array_equal(again.period, data.period)
    assert data.summary()["periods"] == {"unit": "week", "n_periods": 4, "first": "2024-03-04",
                                         "last": "2024-03-25"}


def test_the_machines_time_zone_does_not_move_a_date(monkeypatch):
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")
    data = br.load(records(["2024-03-10 23:30:00"]), time_column="when")
    assert data.periods == ("2024-03-04",)
