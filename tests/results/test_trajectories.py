"""Answers of a fit over time: trajectories, change points, the leaderboard as of a date, predictions."""

import json

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.data.simulate import arena_over_time, item_names


@pytest.fixture(scope="module")
def fitted():
    """10 items over 8 weeks, two of them entering late; the truth is kept."""
    sim = arena_over_time(10, 8, 2500, np.random.default_rng(5), entering=0.3, change_share=0.3)
    data = br.load(sim.records, time_column="date")
    return br.fit(br.Dynamic(br.BradleyTerry()), data, draws=400), sim


def test_trajectories_run_from_each_items_first_to_its_last_period(fitted):
    fit, sim = fitted
    paths = fit.trajectories()
    first_seen = {name: sim.periods[int(np.argmax(~np.isnan(row)))] for name, row in
                  zip(item_names(10), sim.scores)}
    for name, group in paths.groupby("name"):
        assert group["period"].iloc[0] == first_seen[name]
        assert group["period"].iloc[-1] == sim.periods[-1]
        assert (group["lower"] <= group["score"]).all() and (group["score"] <= group["upper"]).all()


def test_scores_sum_to_zero_in_every_period(fitted):
    fit, _ = fitted
    np.testing.assert_allclose(fit.tree["estimate"]["score"].values.sum(axis=0), 0.0, atol=1e-9)


def test_the_leaderboard_as_of_a_date_is_that_periods(fitted):
    fit, sim = fitted
    board = fit.leaderboard(at="2024-01-10T15:00:00Z")        # inside the week of 2024-01-08
    assert board.attrs["period"] == "2024-01-08"
    k = sim.periods.index("2024-01-08")
    shown = set(board["name"])
    entered = {name for name, row in zip(item_names(10), sim.scores) if not np.isnan(row[k])}
    assert shown == entered
    est = fit.tree["estimate"]["score"].sel(period="2024-01-08")
    assert board.set_index("name")["score"].to_dict() == pytest.approx({n: float(est.sel(item=n)) for n in shown})
    assert list(board["rank"]) == list(range(1, len(board) + 1))
    assert fit.leaderboard().attrs["period"] == sim.periods[-1]


def test_dates_outside_the_fit_or_not_dates_are_refused(fitted):
    fit, _ = fitted
    with pytest.raises(br.DataError, match="before the first period"):
        fit.leaderboard(at="2023-06-01")
    with pytest.raises(br.DataError, match="not a date"):
        fit.leaderboard(at="soon")
    with pytest.raises(br.ModelSpecError, match="elo is not available"):
        fit.leaderboard(elo=True)


def test_changes_threshold_and_fields(fitted):
    fit, _ = fitted
    every = fit.changes(0.0)
    sure = fit.changes(0.9)
    assert set(zip(sure["name"], sure["period"])) <= set(zip(every["name"], every["period"]))
    assert (sure["probability"] >= 0.9).all()
    assert list(sure.columns) == ["name", "period", "size", "se", "probability"]
    with pytest.raises(br.ModelSpecError, match="threshold must be a probability"):
        fit.changes(2.0)


def test_next_period_predictions_are_probabilities_of_the_link(fitted):
    fit, _ = fitted
    p = fit.predict_next(["m00", "m01"], ["m02", "m03"])
    np.testing.assert_allclose(p[["p_win_a", "p_win_b", "p_tie"]].sum(axis=1), 1.0)
    assert (p["p_tie"] == 0).all()    # Bradley–Terry has no tie outcome
    # the stronger item at the last period is favoured
    last = fit.leaderboard().set_index("name")["score"]
    assert (p["p_win_a"] > 0.5).tolist() == [last["m00"] > last["m02"], last["m01"] > last["m03"]]
    with pytest.raises(br.DataError, match="not in the fit's items"):
        fit.predict_next("m00", "nobody")


def test_json_contract_and_saved_fit(fitted, tmp_path):
    fit, _ = fitted
    out = fit.to_json()
    assert out["periods"] == fit.periods
    assert {"name", "period", "size", "probability"} == set(out["changes"][0]) if out["changes"] else True
    first = out["items"][0]
    assert set(first["trajectory"][0]) == {"period", "score", "lower", "upper"}
    json.dumps(out)
    again = br.Fit.load(fit.save(tmp_path / "fit.nc"))
    pd.testing.assert_frame_equal(again.trajectories(), fit.trajectories())
    pd.testing.assert_frame_equal(again.changes(), fit.changes())


def test_a_static_fit_has_no_trajectories():
    fit = br.fit(br.BradleyTerry(), br.load("mtbench-judges"))
    with pytest.raises(br.BayesrankError, match="needs a fit over time"):
        fit.trajectories()
    with pytest.raises(br.ModelSpecError, match="at= needs a fit over time"):
        fit.leaderboard(at="2024-01-01")
