"""The command line options of issue 12: the CLI reports what the API reports."""

import json

import numpy as np
import pytest

import bayesrank as br
from bayesrank.cli import main
from bayesrank.data.simulate import battles


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def battle_file(tmp_path_factory):
    rng = np.random.default_rng(0)
    frame = battles(np.linspace(-1, 1, 6), 3000, rng, beta=[0.5], eta=-0.5)
    frame["lang"] = np.where(rng.random(len(frame)) < 0.5, "en", "zh")
    path = tmp_path_factory.mktemp("cli") / "battles.csv"
    frame.to_csv(path, index=False)
    return path


def test_intervals_elo_and_rank_sets_in_json(capsys, battle_file):
    code, out, _ = run(capsys, "fit", str(battle_file), "--model", "davidson", "--intervals", "sandwich",
                       "--rank-sets", "--elo-anchor", "m00", "--elo-offset", "1200", "--format", "json")
    assert code == 0
    got = json.loads(out)
    api = br.fit(br.Davidson(), br.load(battle_file, contrasts=()), intervals="sandwich")
    assert got["interval_method"] == "sandwich" and got["scale_note"] == br.Davidson().scale_note
    row = next(i for i in got["items"] if i["name"] == "m00")
    assert row["elo"] == pytest.approx(1200)
    names = [i["name"] for i in got["items"]]
    assert names == list(api.leaderboard()["name"])
    assert got["rank_sets"]["top_sets"]["1"] == api.top_set(1)


def test_contrasts_give_the_style_report(capsys, battle_file):
    code, out, _ = run(capsys, "fit", str(battle_file), "--model", "davidson", "--contrasts", "z0", "--format", "json")
    got = json.loads(out)
    assert code == 0 and got["style"]["effects"][0]["contrast"] == "z0"
    assert got["style"]["effects"][0]["lower"] <= 0.5 <= got["style"]["effects"][0]["upper"]
    code, out, _ = run(capsys, "fit", str(battle_file), "--model", "bt", "--contrasts", "z0", "--elo", "--top", "3")
    assert "style effects" in out and "rank_change" in out and "elo" in out


def test_bootstrap_reweight_and_fragility_options(capsys, battle_file):
    code, out, _ = run(capsys, "fit", str(battle_file), "--model", "bt", "--ties", "drop", "--intervals", "bootstrap",
                       "--n-boot", "50", "--reweight", "--fragility", "1", "--format", "json")
    got = json.loads(out)
    assert code == 0 and got["interval_method"] == "bootstrap" and got["reweighted"]
    assert got["diagnostics"]["bootstrap"]["n_boot"] == 50 and got["fragility"]["confirmed"]
    code, _, err = run(capsys, "fit", str(battle_file), "--model", "bt", "--method", "nuts", "--intervals", "wald")
    assert code == 2 and "--intervals applies to --method map" in err


def test_by_category_needs_nuts(capsys, battle_file):
    code, _, err = run(capsys, "fit", str(battle_file), "--model", "by-category", "--by", "lang")
    assert code == 2 and "method='nuts'" in err
