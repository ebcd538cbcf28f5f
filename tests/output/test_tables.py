"""The one CSV writer (bayesrank/output/tables.py): names that a spreadsheet would run as
formulas are defused in every CSV output — fit, --out, evaluate, gars, dml and its policy."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from bayesrank.cli import main
from bayesrank.output.tables import FORMULA_START, csv_text

SOME = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

#: Names a spreadsheet would run, with a tail that keeps them apart.
FORMULAS = st.tuples(st.sampled_from(["=", "+", "-", "@", "\t=", "\r="]),
                     st.sampled_from(["cmd|' /C calc'!A0", "HYPERLINK(\"http://x\")", "1+1", "SUM(A1:A2)", "x"]))


def formula_names(draw_tuples) -> list[str]:
    names = []
    for k, (start, body) in enumerate(draw_tuples):
        names.append(f"{start}{body}{k}")
    return names


def cells(text: str):
    for row in csv.reader(io.StringIO(text)):
        yield from row


def assert_defused(text: str, names) -> None:
    """No cell of the CSV starts like a formula unless it is a number; the names are there, quoted."""
    for cell in cells(text):
        try:
            float(cell)
        except ValueError:
            assert not cell.startswith(FORMULA_START), cell
    found = set(cells(text))
    for name in names:
        assert "'" + name.strip() in found, name


def battles(names) -> pd.DataFrame:
    names = list(names)
    rows = [(a, b, w) for a, b in zip(names, names[1:] + names[:1]) for w in ("model_a", "model_b", "tie")]
    rows += [(names[0], names[1], "model_a")]
    return pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])


@SOME
@given(st.lists(FORMULAS, min_size=3, max_size=4))
def test_every_csv_output_defuses_formulas(tmp_path_factory, capsys, tuples):
    folder = tmp_path_factory.mktemp("csv")
    names = formula_names(tuples)
    path = folder / "r.parquet"  # (a CSV written by pandas leaves a CR in a name unquoted)
    battles(names).to_parquet(path)
    outputs = {}
    for command in (["fit", str(path), "--model", "bt", "--format", "csv"],
                    ["evaluate", str(path), "--model", "bt", "--format", "csv"],
                    ["gars", str(path), "--format", "csv"]):
        assert main(command) == 0, capsys.readouterr().err
        outputs[command[0]] = capsys.readouterr().out
    assert main(["fit", str(path), "--model", "bt", "--out", str(folder / "out"), "--format", "json"]) == 0
    capsys.readouterr()
    outputs["leaderboard.csv"] = (folder / "out" / "leaderboard.csv").read_text()
    for what in ("fit", "gars", "leaderboard.csv"):
        assert_defused(outputs[what], names)
    assert_defused(outputs["evaluate"], [])


@pytest.fixture
def hostile_dml(tmp_path):
    from bayesrank.gars.dml.simulate import simulator

    records = simulator("bt_misspec", K=3, p=2, random_seed=0).records(200, random_seed=1)
    rename = {"llm0": "=cmd|' /C calc'!A0", "llm1": "@SUM(1)", "llm2": "+x"}
    records[["model_a", "model_b"]] = records[["model_a", "model_b"]].replace(rename)
    path = tmp_path / "records.parquet"
    records.to_parquet(path)
    return path, list(rename.values())


def test_dml_csv_and_policy_defuse_formulas(tmp_path, capsys, hostile_dml):
    path, names = hostile_dml
    args = ["dml", str(path), "--features", "x0,x1", "--ties", "binary", "--folds", "2"]
    assert main(args + ["--format", "csv"]) == 0
    assert_defused(capsys.readouterr().out, names)
    policy = tmp_path / "policy.csv"
    assert main(args + ["--budget", "50", "--policy-out", str(policy), "--format", "json"]) == 0
    capsys.readouterr()
    assert_defused(policy.read_text(), names)


def test_headers_numbers_and_carriage_returns(tmp_path):
    frame = pd.DataFrame({"=name": ["-x", "ok"], "score": [-0.5, 1.0]})
    text = csv_text(frame)
    assert text.splitlines() == ["'=name,score", "'-x,-0.5", "ok,1.0"]
    frame = pd.DataFrame({"name": ["\r=x", "a\rb"], "score": [-0.5, 1.0]})
    assert pd.read_csv(io.StringIO(csv_text(frame)))["name"].tolist() == ["'\r=x", "a\rb"]
