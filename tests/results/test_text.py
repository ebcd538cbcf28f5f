"""A fit as text: what was fitted to what, the fit's own numbers, the leaderboard's top rows and every
warning, as a person reads them in a terminal."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.results.elo import Elo
from bayesrank.results.text import accounting_line, sampler_in_words
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def data():
    return simulate_counts(np.array([-0.5, 0.0, 0.2, 0.6]), 40, np.random.default_rng(12), eta=-0.4)


def test_the_text_states_the_fit_and_shows_the_top_rows(data):
    fit = br.fit(br.Davidson(), data)
    text = fit.to_text(top=2, level=0.9)
    lines = text.splitlines()
    ce = fit.cross_entropies()
    assert lines[0] == f"{fit.framework.label} by MAP on {data!r}"
    assert lines[1].startswith(f"nll {fit.nll:.5f} (win {ce['win']:.4f} + loss {ce['loss']:.4f} + tie {ce['tie']:.4f})")
    assert "Wald 90% interval" in lines[3]
    header = next(k for k, line in enumerate(lines) if line.split()[:2] == ["rank", "name"])
    shown = [line.split()[1] for line in lines[header + 1:header + 3]]
    assert shown == list(fit.leaderboard()["name"][:2]) and len(lines) == header + 3


def test_warnings_and_missing_elo_are_said(data):
    fit = br.fit(br.Davidson(k_cov=0), data, draws=50)
    text = fit.to_text(elo=Elo())
    assert f"no Elo ratings: {fit.framework.scale_note}" in text
    assert "elo" not in text.split("\n\n")[1].splitlines()[0]            # no Elo columns in the board
    said = [line[len("warning: "):] for line in text.splitlines() if line.startswith("warning: ")]
    assert said == fit.warnings   # (the fit's warnings include the draws' at 95 %, said once)
    assert "draws" in said[-1]


def test_accounting_line_names_what_was_dropped_and_why():
    acc = {"records_read": 1200, "comparisons_read": 1200, "dropped": {"unknown verdict": 150, "self": 50},
           "comparisons_used": 1000, "notes": {"both bad as ties": 30}}
    assert accounting_line(acc) == ("data: 1,200 records read (1,200 comparisons), 200 dropped "
                                    "(unknown verdict 150; self 50), 1,000 used; note: both bad as ties 30")
    counts = {"records_read": 0, "comparisons_read": 90, "dropped": {}, "comparisons_used": 90, "notes": {}}
    assert accounting_line(counts) == "data: 90 comparisons read, 0 dropped, 90 used"


@pytest.mark.parametrize("rhat", [None, float("nan")])
def test_a_single_chain_has_no_rhat_and_the_diagnostics_say_so(rhat):
    # one chain: r_hat is not defined (stored as missing); the sentence must not fail on it
    text = sampler_in_words({"max_rhat": rhat, "min_ess_bulk": 13.2, "min_ess_tail": None, "divergences": 0})
    assert text == ("r_hat not defined (it compares several chains), bulk ESS at least 13, tail ESS at least n/a, "
                    "0 divergent transitions")
    text = sampler_in_words({"max_rhat": 1.0042, "min_ess_bulk": 812, "min_ess_tail": 640.4, "divergences": 2})
    assert text.startswith("r_hat up to 1.004, bulk ESS at least 812, tail ESS at least 640")


def test_a_name_with_a_line_break_stays_on_its_line():
    """The provisional line lists names: a line break in one is shown as an escape, not obeyed."""
    import dataclasses

    data = simulate_counts(np.linspace(0.0, 0.07, 8), 3, np.random.default_rng(1))
    data = dataclasses.replace(data, items=tuple(f"m{i}\nX" if i == 0 else f"m{i}" for i in range(8)))
    lines = br.fit(br.BradleyTerry(), data).to_text().splitlines()
    provisional = [line for line in lines if line.startswith("provisional")]
    assert len(provisional) == 1 and "m0\\x0aX" in provisional[0]
    assert not any(line.startswith("X") for line in lines)
