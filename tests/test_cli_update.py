"""``bayesrank update`` and ``bayesrank diff``: outputs written atomically, JSON contracts, and one-line
errors with exit code 2 that leave the saved fit as it was."""

import json

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.cli import main
from tests.conftest import simulate_battles

SCORES = np.array([1.0, 0.6, 0.2, 0.0, -0.3, -0.8, 0.4])


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """An old log of m0…m5, a day of new records (m6 new) and the board fitted to the old log."""
    where = tmp_path_factory.mktemp("board")
    rng = np.random.default_rng(0)
    simulate_battles(SCORES, 2000, rng, models=range(6)).to_csv(where / "old.csv", index=False)
    simulate_battles(SCORES, 500, rng, first_id=10**6).to_json(where / "day.jsonl", orient="records", lines=True)
    assert main(["fit", str(where / "old.csv"), "--model", "davidson", "--out", str(where / "board"),
                 "--format", "json"]) == 0
    return where


def test_update_writes_a_board_equal_to_a_batch_fit(logs, capsys, tmp_path):
    code, out, err = run(capsys, "update", logs / "board", logs / "day.jsonl", "--out", tmp_path, "--format", "json")
    assert code == 0, err
    res = json.loads(out)
    assert {"framework", "nll", "items", "update", "lineage"} <= set(res)
    assert res["update"]["new_models"] == ["m6"] and len(res["lineage"]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fit.nc", "leaderboard.csv", "summary.json"]
    batch = br.fit(br.Davidson(), pd.concat([pd.read_csv(logs / "old.csv"),
                                             pd.read_json(logs / "day.jsonl", lines=True)]))
    assert res["nll"] == pytest.approx(batch.nll, rel=1e-9)
    code, out, err = run(capsys, "update", tmp_path / "fit.nc", logs / "day.jsonl", "--out", tmp_path / "again")
    assert code == 2 and err.count("\n") == 1 and "counts already" in err


def test_update_refuses_what_differs_in_one_line(logs, capsys, tmp_path):
    saved = (logs / "board" / "fit.nc").read_bytes()
    for extra, message in ((("--contrasts", "len"), "read with contrasts"), (("--tune", "50"), "--tune applies")):
        code, out, err = run(capsys, "update", logs / "board", logs / "day.jsonl", "--out", tmp_path, *extra)
        assert code == 2 and message in err and err.count("\n") == 1, err
    code, out, err = run(capsys, "update", logs / "board", logs / "day.jsonl", "--out", logs / "board")
    assert code == 2 and "--force" in err
    assert (logs / "board" / "fit.nc").read_bytes() == saved
    assert not any(p.name.endswith(".tmp") for p in (logs / "board").iterdir())


def test_diff_json_and_report(logs, capsys, tmp_path):
    assert main(["update", str(logs / "board"), str(logs / "day.jsonl"), "--out", str(tmp_path / "new")]) == 0
    capsys.readouterr()
    code, out, err = run(capsys, "diff", logs / "board", tmp_path / "new", "--format", "json",
                         "--report", tmp_path / "changes.html")
    assert code == 0, err
    res = json.loads(out)
    assert res["new_models"] == ["m6"]
    for row in res["items"]:
        assert {"name", "rank_old", "rank_new", "score_old", "score_new", "attribution"} <= set(row)
    assert "What changed since the previous board" in (tmp_path / "changes.html").read_text()
    code, out, err = run(capsys, "diff", logs / "board", tmp_path / "new")
    assert code == 0 and "new models: m6" in out
