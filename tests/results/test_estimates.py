"""Intervals from draws (bayesrank/results/estimates.py): none from too few draws."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bayesrank as br
from bayesrank.cli import main
from bayesrank.results.estimates import MIN_TAIL_DRAWS, min_draws


def test_the_documented_minimum():
    assert min_draws(0.95) == 200 and min_draws(0.9) == 100 and min_draws(0.5) == 20
    assert min_draws(0.95) * (1 - 0.95) / 2 == pytest.approx(MIN_TAIL_DRAWS)


@pytest.mark.parametrize("n_draws", [1, 10, 199])
def test_too_few_map_draws_give_no_rank_intervals(mtbench, n_draws):
    fit = br.fit(br.BradleyTerry(), mtbench, draws=n_draws)
    board = fit.leaderboard()
    assert board["rank_lower"].isna().all() and board["rank_upper"].isna().all()
    assert np.isfinite(board["lower"]).all()  # Wald intervals need no draws
    assert fit.leaderboard(level=0.5)["rank_lower"].notna().all() == (n_draws >= min_draws(0.5))
    assert any("rank intervals at 95% are not reported" in w for w in fit.to_json()["warnings"])
    said = [w for w in fit.warnings if "rank intervals at 95% are not reported" in w]   # in the API too, once
    assert len(said) == 1 and fit.to_text().count("rank intervals at 95% are not reported") == 1
    assert fit.rank_sets()["rank_set_lower"].notna().all()  # Wald rank sets simulate from the covariance


def test_enough_draws_give_rank_intervals(mtbench):
    fit = br.fit(br.BradleyTerry(), mtbench, draws=200)
    assert fit.leaderboard()["rank_lower"].notna().all()
    assert not any("not reported" in w for w in fit.to_json()["warnings"])
    assert not any("not reported" in w for w in fit.warnings)


def test_cli_n_draws_1_prints_no_certainty(capsys):
    assert main(["fit", "mtbench-judges", "--model", "bt", "--draws", "1", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all(item["rank_lower"] is None and item["rank_upper"] is None for item in out["items"])
    assert main(["fit", "mtbench-judges", "--model", "bt", "--draws", "1"]) == 0
    assert "warning: rank intervals at 95% are not reported: they come from the fit's 1 draws" in \
        capsys.readouterr().out


def test_too_few_posterior_draws_give_no_intervals(mtbench):
    fit = br.fit(br.BradleyTerry(), mtbench, method="nuts", draws=40, tune=100, chains=1, random_seed=1)
    board = fit.leaderboard()
    assert board["lower"].isna().all() and board["rank_lower"].isna().all()
    assert fit.leaderboard(level=0.5)["lower"].notna().all()
    assert fit.rank_sets()["rank_set_lower"].isna().all()  # from the draws: too few
    assert any("intervals, rank intervals at 95% are not reported" in w for w in fit.to_json()["warnings"])
    # one chain: r_hat is not defined, which the text says (it failed on the missing number)
    assert fit.convergence == "convergence unchecked (one chain)" and not fit.converged
    text = fit.to_text()
    assert "convergence unchecked (one chain)" in text and "r_hat not defined (it compares several chains)" in text
