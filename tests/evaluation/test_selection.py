"""Rank selection for HJA: record-level folds, the held-out loss against a NumPy reference,
BIC's d_r against the fits' own parameter counts, choices on simulated panels, LOO, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

import bayesrank as br
from bayesrank.cli import main
from bayesrank.errors import ModelSpecError
from bayesrank.evaluation.selection import heterogeneity_dof, record_folds, record_losses, select_rank
from bayesrank.model.papers import hja_comparisons, hja_truth


@pytest.fixture(scope="module")
def panel():
    """The paper's design with the true rank 1 and plenty of comparisons."""
    truth = hja_truth(n_items=8, n_judges=4, rank=1, random_seed=7000)
    return hja_comparisons(truth["S"], 6000, random_seed=7001)


def test_record_folds_partition_the_records(mtbench):
    folds = record_folds(mtbench, 5, random_seed=3)
    held = np.zeros((mtbench.n_cells, 3))
    index = {(a, b, j): c for c, (a, b, j) in enumerate(zip(mtbench.a, mtbench.b, mtbench.judge))}
    sizes = []
    for train, test in folds:
        assert train.n_comparisons + test.n_comparisons == mtbench.n_comparisons
        rows = [index[key] for key in zip(test.a, test.b, test.judge)]
        held[rows] += test.counts()
        sizes.append(test.n_comparisons)
    np.testing.assert_array_equal(held, mtbench.counts())  # every record in exactly one fold
    assert max(sizes) - min(sizes) <= 1  # a record-level KFold: equal sizes
    again = record_folds(mtbench, 5, random_seed=3)
    np.testing.assert_array_equal(again[2][1].counts(), folds[2][1].counts())  # seeded


def test_held_out_loss_is_the_per_record_nll_with_soft_ties(mtbench):
    """−[y log σ(Δ) + (1 − y) log σ(−Δ)] per held-out record, y = ½ for a tie (paper §4)."""
    train, test = record_folds(mtbench, 5, random_seed=0)[1]
    fit = br.fit(br.HJA(rank=1), train, draws=50)
    loss, weight = record_losses(fit.framework, fit.tree, test)
    S = fit.tree["estimate"]["judge_score"].values
    judges = list(fit.tree["constant_data"]["judge"].values)
    k = np.array([judges.index(j) for j in np.asarray(test.judges)[test.judge]])
    delta = S[k, test.a] - S[k, test.b]
    soft = np.logaddexp(0, -delta), np.logaddexp(0, delta)
    ref = (test.wins_a * soft[0] + test.wins_b * soft[1] + test.ties * (soft[0] + soft[1]) / 2).sum()
    assert (loss * weight).sum() == pytest.approx(ref, rel=1e-10)
    np.testing.assert_array_equal(weight, test.counts())


def test_held_out_loss_without_ties(mtbench):
    """With ties="drop" a tie record is not scored and a win costs −log σ(±Δ).

    GLM-4.5-Air picks the answer shown first in every decisive verdict: without ties its judge factor
    has no finite MLE, which the fit says, so the check runs on the other judges.
    """
    always_first = ["zai-org/GLM-4.5-Air-FP8"]
    train, test = record_folds(mtbench.without_judges(always_first), 5, random_seed=0)[2]
    fit = br.fit(br.HJA(rank=1, ties="drop"), train, draws=50)
    assert fit.converged and np.isfinite(fit.nll), "the fit the losses are read from"
    loss, weight = record_losses(fit.framework, fit.tree, test)
    assert np.all(weight[:, 2] == 0) and np.all(weight[:, :2] == test.counts()[:, :2])
    S = fit.tree["estimate"]["judge_score"].values
    judges = list(fit.tree["constant_data"]["judge"].values)
    k = np.array([judges.index(j) for j in np.asarray(test.judges)[test.judge]])
    delta = S[k, test.a] - S[k, test.b]
    np.testing.assert_allclose(loss[:, 0], np.logaddexp(0, -delta), rtol=1e-10)
    np.testing.assert_allclose(loss[:, 1], np.logaddexp(0, delta), rtol=1e-10)


def test_bic_penalty_counts_the_parameters_the_rank_adds(mtbench):
    base = br.fit(br.HJA(rank=0), mtbench, draws=10).n_params
    for r in (1, 2, 3):
        added = br.fit(br.HJA(rank=r), mtbench, draws=10).n_params - base
        assert heterogeneity_dof(r, mtbench.n_judges, mtbench.n_items) == added


@pytest.mark.parametrize("criterion", [pytest.param("cv", marks=pytest.mark.slow), "bic"])   # cv: 5 folds × 3 ranks
def test_true_rank_chosen_on_a_clear_panel(panel, criterion):
    sel = select_rank(br.HJA(), panel, criterion=criterion, max_rank=2)
    assert sel.rank == 1
    table = sel.criteria.set_index("rank")
    assert list(table.index) == [0, 1, 2]
    if criterion == "cv":
        assert (table["se"] > 0).all() and table.loc[1, "d_se"] == 0
        assert table.loc[0, "value"] - table.loc[1, "value"] > 3 * table.loc[0, "d_se"]


def test_mtbench_cv_prefers_rank_one(mtbench):
    """The author note: CV picks r = 1 on the real data sets."""
    sel = select_rank(br.HJA(), mtbench, "cv", max_rank=2)
    assert sel.rank == 1
    assert sel.to_json()["criteria"][1]["rank"] == 1


@pytest.mark.slow
def test_loo_runs_on_nuts_fits():
    truth = hja_truth(n_items=5, n_judges=3, rank=1, random_seed=4)
    data = hja_comparisons(truth["S"], 3 * 10 * 60, random_seed=5)
    sel = select_rank(br.HJA(), data, criterion="loo", max_rank=1,
                      nuts={"draws": 200, "tune": 300, "chains": 2, "random_seed": 1})
    table = sel.criteria.set_index("rank")
    assert np.isfinite(table["value"]).all() and (table["se"] > 0).all()
    assert sel.rank == int(table["value"].idxmax())
    assert "pareto_k_bad" in table


def test_bad_arguments(mtbench):
    with pytest.raises(ModelSpecError, match="unknown criterion"):
        select_rank(br.HJA(), mtbench, criterion="aic")
    with pytest.raises(ModelSpecError, match="folds"):
        record_folds(mtbench, 1, 0)
    with pytest.raises(ModelSpecError, match="HJA"):
        select_rank(br.JudgeAware(), mtbench)
    with pytest.raises(ModelSpecError,
                       match=r"select_rank\(framework, data, \.\.\.\).*select_rank\(bayesrank.HJA\(\), data\)"):
        select_rank(mtbench, br.HJA())   # the data first: the error says the order


def test_cli_select_rank_json(capsys):
    assert main(["select-rank", "mtbench-judges", "--model", "hja", "--criterion", "bic", "--max-rank", "2",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["criterion"] == "bic" and out["rank"] == 1
    assert [row["rank"] for row in out["criteria"]] == [0, 1, 2]
    assert {"value", "se"} <= set(out["criteria"][0])
    assert main(["select-rank", "mtbench-judges", "--model", "btl"]) == 2


@pytest.mark.slow   # cross-validates every rank on mtbench-judges; select_rank's cv is tested on the folds above
def test_cli_fit_rank_auto(capsys):
    assert main(["fit", "mtbench-judges", "--model", "hja", "--rank", "auto", "--format", "json", "--draws", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["spec"]["rank"] == out["rank_selection"]["rank"] == 1
    assert out["rank_selection"]["criterion"] == "cv"
