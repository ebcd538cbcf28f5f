"""The report's first sentence: who leads and whether the top is separated."""

import numpy as np

import bayesrank as br
from bayesrank.results.headline import headline
from tests.conftest import simulate_counts


def test_a_clear_leader_is_said_to_be_ahead_of_every_other_model():
    data = simulate_counts(np.array([2.0, 0.5, 0.0, -0.5, -2.0]), 400, np.random.default_rng(1))
    text = headline(br.fit(br.BradleyTerry(), data).tree)
    assert text.startswith("m00 leads, ahead of every other model at 95% (simultaneous rank sets)")


def test_a_leader_within_the_noise_is_said_to_lead_an_unseparated_top():
    data = simulate_counts(np.array([0.30, 0.28, 0.26, -0.4, -0.44]), 60, np.random.default_rng(2))
    fit = br.fit(br.BradleyTerry(), data)
    text = headline(fit.tree)
    top = fit.top_set(1)
    assert len(top) >= 2
    assert text == (f"{top[0]} leads, but the top {len(top)} are not separated: {', '.join(top)} may each be "
                    "first at 95% (simultaneous rank sets).")
    points = br.fit(br.BradleyTerry(), data, intervals="none")
    assert headline(points.tree).endswith("(point estimates only: no statement on how sure that is).")
