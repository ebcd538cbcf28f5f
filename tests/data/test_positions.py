"""A judge that follows the position, and a presentation order fixed by the items: what the data
layer says (bayesrank.data.positions), on simulated judge panels whose truth is known."""

import re

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.data.positions import presentation_order, verdict_shares
from bayesrank.data.simulate import judge_panel

#: True scores: m00, the model always shown first, is the second worst (it wins about 40 %).
SCORES = np.array([-0.5, 0.9, 0.7, 0.5, 0.3, 0.1, -0.1, -0.3])


@pytest.fixture(scope="module")
def panel():
    """Six judges, positions never swapped (model_a always the alphabetically first), and j5
    answering "a" whatever the answers (δ = 5: about 98.5 % of its decisive verdicts)."""
    return judge_panel(SCORES, 20, np.random.default_rng(1), delta=[0, 0, 0, 0, 0, 5.0], eta=-1.5)


@pytest.fixture(scope="module")
def data(panel):
    return br.load(panel.records)


def test_the_position_judge_is_named_with_its_verdict_shares(data):
    shares = verdict_shares(data).set_index("judge")
    assert shares.loc["j5", "a"] > 0.97 and shares.loc["j5", "follows_position"]
    assert shares.loc["j5", "position"] == "first" and shares.loc["j5", "odds_ratio"] > 50
    assert not shares.drop(index="j5")["follows_position"].any()
    np.testing.assert_allclose(shares[["a", "b", "tie"]].sum(axis=1), 1.0)
    warnings = br.fit(br.BTL(), data).warnings
    said = [w for w in warnings if w.startswith("judge 'j5' chose the answer shown first in 9")]
    assert len(said) == 1 and "times the odds of the median judge" in said[0]


def test_an_order_fixed_by_the_items_is_said_for_each_model(data):
    order = presentation_order(data)
    m = len(SCORES)
    assert order.confounded and order.rule == "alphabetical" and order.swapped_share == 0
    # every pair in every order the same number of times: the projection of the order on score
    # differences is (m − 1 − 2k)/m for the k-th name, and explains 2(m + 1) / (3m) of it
    shift = order.items.set_index("name")["shift"]
    np.testing.assert_allclose(shift[[f"m{k:02d}" for k in range(m)]], (m - 1 - 2 * np.arange(m)) / m, atol=1e-8)
    assert order.explained == pytest.approx(2 * (m + 1) / (3 * m))
    first = order.items.set_index("name")["shown_first"]
    assert first["m00"] == 1 and first["m07"] == 0
    sentence = [w for w in br.fit(br.BTL(), data).warnings if w.startswith("positions were never swapped")]
    assert len(sentence) == 1
    assert re.search(r"m00 \+0\.8[78]δ \(shown first in 100%\)", sentence[0])       # 7/8, rounded
    assert re.search(r"m07 -0\.8[78]δ \(shown first in 0%\)", sentence[0])
    assert "position_bias=True separates δ from the scores only through the 25% of the order" in sentence[0]


def test_dropping_the_position_judge_restores_the_ranking(panel, data):
    """With j5 the judge-aware model ranks m00 (true rank 8) first; without it, every rank is true."""
    truth = panel.true_ranks()
    ranks = {}
    for name, d in (("with", data), ("without", data.without_judges(["j5"]))):
        ranks[name] = br.fit(br.JudgeAware(), d).leaderboard().set_index("name")["rank"]
    assert truth["m00"] == 8 and ranks["with"]["m00"] == 1
    pd.testing.assert_series_equal(ranks["without"].reindex(truth.index).astype(int), truth, check_names=False)


def test_an_order_of_the_items_alone_cannot_identify_a_position_effect():
    """Pairs chained m0 → m1 → m2 → m3, each shown in one order: the order is a difference of
    scores, so position_bias=True is not identified at all, and the sentence says so."""
    rows = [("m0", "m1"), ("m1", "m2"), ("m2", "m3")]
    frame = pd.DataFrame([{"model_a": a, "model_b": b, "wins_a": 6, "wins_b": 4, "first": "a"} for a, b in rows])
    data = br.load(frame)
    order = presentation_order(data)
    assert order.confounded and order.explained == pytest.approx(1.0)
    assert any("cannot separate δ from the scores at all" in w for w in br.fit(br.BradleyTerry(), data).warnings)


def test_a_random_order_and_a_shared_bias_are_not_flagged():
    """Positions drawn at random, every judge with the same mild preference for the first answer:
    nothing is confounded and nobody follows the position beyond the others."""
    panel = judge_panel(SCORES, 20, np.random.default_rng(2), delta=np.full(6, 0.6), eta=-1.5, order="random")
    data = br.load(panel.records)
    order = presentation_order(data)
    assert not order.confounded and order.swapped_share == 1 and order.rule == ""
    shares = verdict_shares(data)
    assert not shares["follows_position"].any() and (shares["a_decisive"] > 0.55).all()
    assert not any("position" in w for w in br.fit(br.BTL(), data).warnings)


def test_a_judge_far_beyond_a_random_order_panel_is_flagged_whatever_the_threshold():
    """The rule is relative: a judge at 88 % first answers (δ = 2) in a panel near 50 % is named,
    though no verdict share is near 98.5 %."""
    panel = judge_panel(SCORES, 20, np.random.default_rng(3), delta=[0, 0, 0, 0, 2.0], order="random")
    shares = verdict_shares(br.load(panel.records)).set_index("judge")
    assert shares.loc["j4", "follows_position"] and shares.loc["j4", "a"] < 0.95
    assert not shares.drop(index="j4")["follows_position"].any()


def test_an_order_in_a_cycle_moves_no_score_and_is_not_a_warning():
    """Each pair shown in one order only, but around a cycle (a before b, b before c, c before a):
    no difference of scores reproduces that order, so a preference for the first position moves
    no score, and the fit does not warn that it might."""
    frame = pd.DataFrame({"model_a": ["a", "b", "c"] * 2, "model_b": ["b", "c", "a"] * 2,
                          "winner": ["model_a", "model_a", "model_b", "model_b", "model_b", "model_a"]})
    data = br.load(frame)
    order = presentation_order(data)
    assert order.confounded and order.explained == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(order.items["shift"], 0.0, atol=1e-12)
    assert not [w for w in br.fit(br.BradleyTerry(), data).warnings if w.startswith("positions were never swapped")]
