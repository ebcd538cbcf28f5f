"""``bayesrank fit --time-column``: the JSON contract of a fit over time and its one-line errors."""

import json
import subprocess
import sys

import numpy as np
import pytest

from bayesrank.data.simulate import arena_over_time


def run(*args):
    return subprocess.run([sys.executable, "-m", "bayesrank.cli", *args], capture_output=True, text=True)


@pytest.fixture(scope="module")
def battles(tmp_path_factory):
    sim = arena_over_time(8, 6, 1500, np.random.default_rng(2), eta=-1.0)
    path = tmp_path_factory.mktemp("time") / "battles.csv"
    sim.records.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("model", ["bt", "davidson"])
def test_json_has_periods_trajectories_and_changes(battles, model):
    done = run("fit", str(battles), "--model", model, "--time-column", "date", "--period", "week", "--format",
               "json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["framework"] == "dynamic" and out["spec"]["base"]["framework"] == model
    assert out["periods"] == ["2024-01-01", "2024-01-08", "2024-01-15", "2024-01-22", "2024-01-29", "2024-02-05"]
    for item in out["items"]:
        assert item["trajectory"] and set(item["trajectory"][0]) == {"period", "score", "lower", "upper"}
    for change in out["changes"]:
        assert set(change) == {"name", "period", "size", "probability"} and change["probability"] >= 0.5
        assert change["period"] in out["periods"][1:]


def test_table_names_the_period_and_the_changes(battles):
    done = run("fit", str(battles), "--model", "bt", "--time-column", "date")
    assert done.returncode == 0, done.stderr
    assert "leaderboard as of 2024-02-05" in done.stdout and "changes (posterior probability >= 0.5)" in done.stdout


@pytest.mark.parametrize("extra,words", [(["--time-column", "when"], "time column 'when' not found"),
                                         (["--time-column", "date", "--restarts", "2"], "--restarts does not apply"),
                                         (["--time-column", "date", "--period", "year"], "invalid choice")])
def test_errors_are_one_line_and_exit_2(battles, extra, words):
    done = run("fit", str(battles), "--model", "bt", *extra)
    assert done.returncode == 2
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1
