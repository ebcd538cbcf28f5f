"""bayesrank.diff: every change between two boards, and parts that add up to it."""

import json

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.analysis.changes import ADD_UP
from bayesrank.report import Report
from tests.conftest import simulate_battles

SCORES = np.array([1.2, 0.8, 0.3, 0.0, -0.2, -0.7, -1.1, 0.5])
PARTS = ["own_battles", "rivals_battles", "new_models"]


def records(models, n, seed, scores=SCORES, **options):
    return simulate_battles(scores, n, np.random.default_rng(seed), models=models, first_id=seed * 10**6, **options)


@pytest.fixture(scope="module")
def old_log():
    return records(range(7), 3000, 1)


def centred(fit):
    s = fit.scores()
    return s - s.reindex([f"m{k}" for k in range(7)]).mean()


def test_parts_add_up_to_each_change_and_are_zero_where_no_battle_was_added(old_log):
    entering = records([0, 7], 400, 2)                      # only m0 and the new m7 play
    old = br.fit(br.Davidson(k_tie=1), old_log)
    new = old.update(entering)
    changes = br.diff(old, new)
    kept = changes.items[changes.items["status"] == "kept"].set_index("name")
    assert np.max(np.abs(kept[PARTS].sum(axis=1) - kept["change"])) <= ADD_UP
    bystanders = kept.drop(index="m0")                      # no own battles, no rivals' battles among old models
    assert (bystanders["own_battles"] == 0).all() and (bystanders["rivals_battles"] == 0).all()
    assert np.allclose(bystanders["new_models"], bystanders["change"], atol=ADD_UP)
    assert np.abs(bystanders["change"]).max() > 1e-3      # they did move: through m0 and m7
    assert changes.summary["new_models"] == ["m7"] and changes.items.set_index("name").loc["m7", "status"] == "new"


def test_each_part_is_what_adding_that_group_alone_does(old_log):
    """The parts split a joint path, so they equal single-group refits to first order in the
    added battles (an independent reference: refits)."""
    drifted = SCORES + np.eye(8)[2] * 0.6                   # m2 got better
    own = records(range(7), 600, 3, scores=drifted)
    own = own[(own["model_a"] == "m2") | (own["model_b"] == "m2")]
    rivals = records([4, 5], 300, 4)
    fw = br.Davidson()
    base = br.fit(fw, old_log)
    changes = br.diff(base, br.fit(fw, pd.concat([old_log, own, rivals]))).items.set_index("name").loc["m2"]
    alone_own = centred(br.fit(fw, pd.concat([old_log, own]))) - centred(base)
    alone_rivals = centred(br.fit(fw, pd.concat([old_log, rivals]))) - centred(base)
    assert changes["own_battles"] == pytest.approx(alone_own["m2"], rel=0.05)
    assert changes["rivals_battles"] == pytest.approx(alone_rivals["m2"], rel=0.15)
    assert abs(changes["own_battles"]) > 10 * abs(changes["rivals_battles"])


def test_style_coefficients_get_their_own_part():
    old_log = records(range(7), 3000, 5, beta=0.4)
    more = records(range(8), 800, 6, beta=0.1)              # later battles: style matters less
    old = br.fit(br.BradleyTerry(), br.load(old_log, contrasts=["len"]))
    new = old.update(more)
    changes = br.diff(old, new)
    kept = changes.items[changes.items["status"] == "kept"].set_index("name")
    assert np.max(np.abs(kept[PARTS + ["style"]].sum(axis=1) - kept["change"])) <= ADD_UP
    assert np.abs(kept["style"]).max() > 1e-4
    assert changes.style["change"].iloc[0] < 0


def test_json_lists_every_model_whose_rank_moved_with_its_attribution(old_log):
    old = br.fit(br.Davidson(), old_log)
    new = old.update(records(range(8), 2000, 7, scores=SCORES[::-1]))
    changes = br.diff(old, new)
    out = json.loads(json.dumps(changes.to_json()))
    moved = changes.items[(changes.items["rank_old"] != changes.items["rank_new"]).fillna(True).astype(bool)]
    assert sorted(row["name"] for row in out["items"]) == sorted(moved["name"])
    assert len(out["items"]) > 2
    row = next(r for r in out["items"] if r["rank_old"] is not None)
    assert {"name", "rank_old", "rank_new", "score_old", "score_new", "change", "change_lower",
            "change_upper"} <= set(row)
    assert set(row["attribution"]) == set(PARTS)
    assert out["new_models"] == ["m7"]


def test_change_intervals_need_nested_boards(old_log):
    fw = br.Davidson()
    half, other = old_log.iloc[:1500], old_log.iloc[1500:]
    nested = br.diff(br.fit(fw, half), br.fit(fw, old_log), attribution=False)
    assert np.isfinite(nested.items["change_lower"]).all()
    items = nested.items
    inside = (items["change_lower"] <= items["change"]) & (items["change"] <= items["change_upper"])
    assert inside.all()
    apart = br.diff(br.fit(fw, half), br.fit(fw, other), attribution=False)
    assert apart.items["change_lower"].isna().all()
    assert any("not hold every battle" in n for n in apart.notes)


def test_what_cannot_be_attributed_is_said(old_log):
    fw = br.BradleyTerry()
    reweighted = br.diff(br.fit(fw, old_log.iloc[:2000], reweight=True), br.fit(fw, old_log, reweight=True))
    assert "own_battles" not in reweighted.items
    assert any(n.startswith("no attribution: reweighted") for n in reweighted.notes)
    other = old_log.assign(model_a="x" + old_log["model_a"], model_b="x" + old_log["model_b"])
    with pytest.raises(br.DataError, match="another arena"):
        br.diff(br.fit(fw, old_log), br.fit(fw, other))
    with pytest.raises(br.BayesrankError, match=r"bayesrank.diff\(new=...\) expects a Fit"):
        br.diff(br.fit(fw, old_log), "fit.nc")


def test_the_report_has_a_section_on_what_changed(old_log):
    old = br.fit(br.Davidson(), old_log)
    new = old.update(records(range(8), 500, 8))
    html = Report({"board": new}, changes=br.diff(old, new)).html()
    assert "What changed since the previous board" in html and "own_battles" in html


def test_a_new_judge_gets_the_arrival_share():
    judges = {"j1": 1.0, "j2": 0.6, "j3": 1.5}
    old_log = records(range(7), 3000, 9, judges=judges)
    day = records(range(7), 600, 10, judges={**judges, "j4": 2.0})
    old = br.fit(br.JudgeAware(), old_log)
    changes = br.diff(old, old.update(day))
    kept = changes.items.set_index("name")
    assert "new_judges" in kept and "new_models" in kept
    assert np.max(np.abs(kept[PARTS + ["new_judges"]].sum(axis=1) - kept["change"])) <= ADD_UP
    assert changes.summary["attribution_residual"] <= ADD_UP
    assert (kept["new_models"] == 0).all()
