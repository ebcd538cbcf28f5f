"""Evaluation metrics (paper App. D.2–D.4) and the evaluate CLI."""

import json

import numpy as np
import pytest

import bayesrank as br
from bayesrank.cli import main
from bayesrank.evaluation.goodness import gof_metrics, goodness_of_fit, information_criteria
from bayesrank.model.papers import LEADERBOT_D1
from tests.conftest import reference_loglik


def test_metrics_against_hand_computed_values():
    counts = np.array([[6.0, 2.0, 2.0], [1.0, 3.0, 0.0]])
    probs = np.array([[0.5, 0.3, 0.2], [0.25, 0.5, 0.25]])
    out = gof_metrics(counts, probs, ties=True)
    # n = (10, 4), weights (10/14, 4/14); predicted counts (5, 3, 2) and (1, 2, 1)
    w = np.array([10, 4]) / 14
    e_win = np.sqrt(w[0] * 1.0 + w[1] * 0.0)
    e_loss = np.sqrt(w[0] * 1.0 + w[1] * 1.0)
    e_tie = np.sqrt(w[0] * 0.0 + w[1] * 1.0)
    assert out["rmse_win"] == pytest.approx(e_win)
    assert out["rmse_loss"] == pytest.approx(e_loss)
    assert out["rmse_tie"] == pytest.approx(e_tie)
    assert out["rmse_all"] == pytest.approx(np.sqrt((e_win**2 + e_loss**2 + e_tie**2) / 3))
    kl1 = 0.6 * np.log(0.6 / 0.5) + 0.2 * np.log(0.2 / 0.3) + 0.2 * np.log(0.2 / 0.2)
    kl2 = 0.25 * np.log(0.25 / 0.25) + 0.75 * np.log(0.75 / 0.5)  # 0 log 0 = 0
    assert out["kld"] == pytest.approx(100 * (kl1 + kl2) / 2)  # unweighted mean over cells

    def kl(p, q):
        p, q = np.asarray(p), np.asarray(q)
        seen = p > 0  # 0 log 0 = 0
        return float(np.sum(p[seen] * np.log(p[seen] / q[seen])))

    e1, e2 = np.array([0.6, 0.2, 0.2]), np.array([0.25, 0.75, 0.0])
    js = [0.5 * (kl(e, (e + p) / 2) + kl(p, (e + p) / 2)) for e, p in zip((e1, e2), probs)]
    assert out["jsd"] == pytest.approx(100 * np.mean(js))
    # two classes (Bradley–Terry): the tie column is ignored, RMSE_all over win and loss
    bt = gof_metrics(np.array([[6.0, 4.0, 0.0]]), np.array([[0.5, 0.5, 0.0]]), ties=False)
    assert bt["rmse_win"] == bt["rmse_loss"] == pytest.approx(1.0)
    assert np.isnan(bt["rmse_tie"]) and bt["rmse_all"] == pytest.approx(1.0)


def test_goodness_of_fit_of_a_fit_and_information_criteria(small_counts, small_fit):
    g = goodness_of_fit(small_fit)
    assert g["nll"] == pytest.approx(small_fit.nll, rel=1e-12)
    # predictions on the same cells through the prediction path agree with the fit's own
    again = goodness_of_fit(small_fit, small_counts)
    assert again["kld"] == pytest.approx(g["kld"], rel=1e-9)
    assert again["nll"] == pytest.approx(g["nll"], rel=1e-12)
    # AIC / BIC of a Davidson fit from a log-likelihood computed here in NumPy; 8 items:
    # 7 score coordinates + 1 threshold
    fit = br.fit(br.Davidson(k_tie=0), small_counts)
    eta = float(fit.tree["estimate"]["eta_raw"])
    loglik = reference_loglik(fit.framework, small_counts, fit.scores().to_numpy(), eta)
    ic = information_criteria(fit)
    assert ic["n_params"] == 8
    assert ic["aic"] == pytest.approx(2 * 8 - 2 * loglik, rel=1e-12)
    assert ic["bic"] == pytest.approx(8 * np.log(small_counts.n_comparisons) - 2 * loglik, rel=1e-12)


def test_paper_split_sizes(arena):
    train, test = arena.split(0.1, random_seed=20)
    assert (train.n_cells, test.n_cells) == (3109, 346)


def test_evaluate_cli_json(capsys):
    code = main(["evaluate", "arena-2024", "--model", "bt", "--test-fraction", "0.1", "--seed", "20", "--format",
                 "json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    res = json.loads(out)
    assert res["evaluation"] == "generalization" and res["framework"] == "bt"
    met = res["metrics"]
    assert (met["n_train_cells"], met["n_test_cells"]) == (3109, 346)
    assert met["rmse_all"] == pytest.approx(27.4, abs=0.05)  # paper Table D.3, model 1
    assert met["rmse_tie"] is None  # NaN serialises as null
    code = main(["evaluate", "arena-2024", "--model", "rao-kupper", "--format", "json"])
    res = json.loads(capsys.readouterr()[0])
    met = res["metrics"]
    # paper Table D.2, model 7: 48.2 / 69.9 / 103.5 / 77.3, KLD 3.32, JSD 0.92
    assert [round(met[k], 1) for k in ("rmse_win", "rmse_loss", "rmse_tie", "rmse_all")] == [48.2, 69.9, 103.5, 77.3]
    assert (round(met["kld"], 2), round(met["jsd"], 2)) == (3.32, 0.92)
    assert met["aic"] == pytest.approx(2 * 129 + 2 * 1374996 * res["nll"])


def test_evaluate_cli_leaderbot_compat_reproduces_paper_bt_rows(capsys):
    main(["evaluate", "arena-2024", "--model", "bt", "--leaderbot-compat", "--format", "json"])
    met = json.loads(capsys.readouterr()[0])["metrics"]
    assert (round(met["rmse_all"], 1), round(met["kld"], 2), round(met["jsd"], 2)) == (29.7, 1.49, 0.44)


def test_fit_cli_k_cov(capsys):
    code = main(["fit", "arena-2024", "--model", "bt", "--k-cov", "0", "--format", "json"])
    res = json.loads(capsys.readouterr()[0])
    assert code == 0 and res["n_params"] == 256 and res["nll"] <= LEADERBOT_D1[2][1] + 1e-4
    assert res["spec"]["k_cov"] == 0
    assert main(["fit", "arena-2024", "--model", "judge-aware", "--k-cov", "1"]) == 2
