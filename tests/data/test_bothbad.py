"""'tie (bothbad)' verdicts: the Arena convention for raw battle logs, the leaderbot paper's for the
bundled arena-2024 and count files, and the fit saying which one its data followed."""

import json

import pandas as pd
import pytest

import bayesrank as br
from bayesrank import gars
from bayesrank.cli import main
from bayesrank.data.bothbad import ARENA, PAPER


@pytest.fixture(scope="module")
def battles():
    rows = [("x", "y", "model_a")] * 5 + [("y", "x", "model_a")] * 3 + [("x", "z", "model_b")] * 4 \
        + [("z", "y", "tie")] * 2 + [("x", "y", "tie (bothbad)")] * 4 + [("z", "x", "model_b"), ("y", "z", "model_a")]
    return pd.DataFrame(rows, columns=["model_a", "model_b", "winner"])


def test_raw_battle_logs_count_both_bad_ties_as_ties(battles):
    data = br.load(battles)
    assert data.n_comparisons == len(battles) and data.ties.sum() == 6 and data.ties_bothbad.sum() == 4
    assert data.accounting()["dropped"] == {}
    assert any(note.startswith("both-bad ties counted as ties") for note in data.accounting()["notes"])
    fit = br.fit(br.Davidson(), data)
    assert fit.diagnostics["both_bad_ties"] == ARENA
    paper = br.load(battles, both_bad_as_ties=False)
    assert paper.n_comparisons == len(battles) - 4
    assert br.fit(br.Davidson(), paper).diagnostics["both_bad_ties"] == PAPER


def test_the_bundled_arena_keeps_the_papers_convention(arena):
    assert arena.n_comparisons == 1_374_996
    assert br.fit(br.BradleyTerry(), arena, intervals="none").diagnostics["both_bad_ties"] == PAPER
    assert br.load("arena-2024", both_bad_as_ties=True).n_comparisons == 1_670_250


def test_count_records_keep_their_both_bad_column_apart(tmp_path):
    counts = pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "z"], "wins_a": [3, 2], "wins_b": [1, 2],
                           "ties": [1, 0], "ties_bothbad": [2, 5]})
    assert br.load(counts).n_comparisons == 9 and br.load(counts, both_bad_as_ties=True).n_comparisons == 16


def test_cli_flags_and_json_say_the_convention(battles, tmp_path, capsys):
    path = tmp_path / "battles.csv"
    battles.to_csv(path, index=False)
    for flag, n, convention in (([], len(battles), ARENA), (["--no-both-bad-ties"], len(battles) - 4, PAPER)):
        assert main(["fit", str(path), "--model", "davidson", "--format", "json", *flag]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["n_comparisons"] == n and out["diagnostics"]["both_bad_ties"] == convention


def test_both_good_both_bad_weights_need_the_both_bad_ties_apart(battles, tmp_path, capsys):
    scheme = "win-loss-both-good-both-bad"
    with pytest.raises(br.BayesrankError, match="both_bad_as_ties=False"):
        gars.from_counts(br.load(battles), "borda", scheme)
    kept = gars.from_counts(br.load(battles, both_bad_as_ties=False), "borda", scheme)
    path = tmp_path / "battles.csv"
    battles.to_csv(path, index=False)
    assert main(["gars", str(path), "--ties", scheme, "--counts-only", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [item["score"] for item in out["items"]] == pytest.approx(list(kept.table()["score"]))
