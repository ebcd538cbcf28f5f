"""Style control: contrasts in the data layer (sign flips, aggregation), style coefficients in
every framework's linear predictor, recovery on simulated battles with known effects."""

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.analysis.style import style_control, style_effects
from bayesrank.data.simulate import battles

BETA = np.array([0.4, -0.25])
SCORES = np.linspace(-1, 1, 8) - np.linspace(-1, 1, 8).mean()


def test_contrasts_flip_sign_and_aggregate():
    frame = pd.DataFrame({"model_a": ["y", "x", "x", "x"], "model_b": ["x", "y", "y", "y"],
                          "wins_a": [1, 0, 0, 1], "wins_b": [0, 1, 0, 0], "ties": [0, 0, 1, 0],
                          "len": [2.0, -2.0, 1.0, -2.0], "q": [5.0, 5.0, 5.0, 5.0]})
    data = br.load(frame, contrasts=["len"], covariates=["q"])
    cells = data.to_frame()
    # (y, x, +2) is (x, y, −2): it joins the two (x, y, −2) records; the covariate keeps its sign
    assert data.n_cells == 2 and data.contrast_names == ("len",)
    row = cells[cells["len"] == -2.0].iloc[0]
    assert (row["wins_a"], row["wins_b"], row["q"]) == (1.0, 2.0, 5.0)
    assert cells.loc[cells["len"] == 1.0, "ties"].item() == 1.0
    same = br.Comparisons.from_xarray(data.to_xarray())
    np.testing.assert_array_equal(same.contrasts, data.contrasts)
    with pytest.raises(br.DataError, match="contrast column"):
        br.load(frame, contrasts=["nope"])


def _data(seed, eta=None, n=4000):
    return br.load(battles(SCORES, n, np.random.default_rng(seed), beta=BETA, eta=eta), contrasts=["z0", "z1"])


@pytest.mark.parametrize("framework, eta", [(br.BradleyTerry(), None), (br.Davidson(), -0.5)])
def test_style_coefficients_recovered(framework, eta):
    fit = br.fit(framework, _data(0, eta))
    effects = style_effects(fit)
    assert list(effects["contrast"]) == ["z0", "z1"]
    assert ((effects["lower"] <= BETA) & (BETA <= effects["upper"])).all(), effects
    np.testing.assert_allclose(fit.scores().to_numpy(), SCORES, atol=0.15)
    assert "style_coef" in set(fit.parameters()["parameter"])


def test_style_likelihood_equals_numpy_reference():
    data = _data(1, eta=-0.5, n=600)
    fit = br.fit(br.Davidson(), data)
    est = fit.tree["estimate"]
    s, beta, eta = est["score"].values, est["style_coef"].values, float(est["eta_raw"].values)
    d = s[data.a] - s[data.b] + data.contrasts @ beta
    norm = np.log(np.exp(d / 2) + np.exp(-d / 2) + np.exp(eta))
    ref = np.sum(data.wins_a * (d / 2 - norm) + data.wins_b * (-d / 2 - norm) + data.ties * (eta - norm))
    assert fit.loglik == pytest.approx(ref, rel=1e-10)


def test_style_control_reports_rank_changes():
    """m06 is stronger than m07 at equal style, but m07's answers are longer: unadjusted, m07 leads."""
    rng = np.random.default_rng(5)
    s = np.array([-1.0, -0.6, -0.2, 0.0, 0.2, 0.5, 0.9, 0.7])
    frame = battles(s, 6000, rng, beta=[0.8])
    side = np.where(frame["model_a"] == "m07", 1, np.where(frame["model_b"] == "m07", -1, 0))
    frame["z0"] = np.abs(frame["z0"]) * side
    d = s[frame["model_a"].str[1:].astype(int)] - s[frame["model_b"].str[1:].astype(int)] + 0.8 * frame["z0"]
    frame["winner"] = np.where(rng.random(len(frame)) < 1 / (1 + np.exp(-d)), "model_a", "model_b")
    report = style_control(br.BradleyTerry(), br.load(frame, contrasts=["z0"]))
    board = report.leaderboard.set_index("name")
    assert board.loc["m06", "rank"] == 1 and board.loc["m06", "rank_unadjusted"] == 2
    assert board.loc["m06", "rank_change"] == 1 and board.loc["m07", "rank_change"] == -1
    assert report.effects.loc[0, "lower"] <= 0.8 <= report.effects.loc[0, "upper"]
    assert report.to_json()["style"]["rank_change"][0]["name"] == "m06"


def test_predict_holds_style_equal_unless_given():
    fit = br.fit(br.BradleyTerry(), _data(2, n=1500))
    beta = fit.tree["estimate"]["style_coef"].values
    s = fit.scores()
    equal = fit.predict("m07", "m00")
    styled = fit.predict("m07", "m00", contrasts={"z0": 1.0})
    assert equal["p_win_a"].item() == pytest.approx(1 / (1 + np.exp(-(s["m07"] - s["m00"]))))
    assert styled["p_win_a"].item() == pytest.approx(1 / (1 + np.exp(-(s["m07"] - s["m00"] + beta[0]))))


def test_judge_models_get_a_style_bias_per_judge():
    rng = np.random.default_rng(3)
    frame = battles(SCORES, 3000, rng, beta=[0.5])
    frame = frame.rename(columns={"winner": "verdict"})
    frame["judge_model"] = np.where(rng.random(len(frame)) < 0.5, "j1", "j2")
    frame["judge_preferred_model"] = frame["verdict"].map({"model_a": "a", "model_b": "b"})
    data = br.load(frame.drop(columns="verdict"), contrasts=["z0"])
    fit = br.fit(br.JudgeAware(), data)
    effects = style_effects(fit)
    assert list(effects["judge"]) == ["j1", "j2"] and effects.shape[0] == 2
    assert ((effects["lower"] <= 0.5) & (0.5 <= effects["upper"])).all(), effects


def test_style_control_by_nuts_agrees_with_map():
    data = _data(4, n=2000)
    mle = style_effects(br.fit(br.BradleyTerry(), data))
    post = style_effects(br.fit(br.BradleyTerry(), data, method="nuts", draws=300, tune=300, chains=2, random_seed=2))
    np.testing.assert_allclose(post["estimate"], mle["estimate"], atol=0.5 * mle["se"].max())


@pytest.mark.slow
@pytest.mark.parametrize("framework, eta", [(br.BradleyTerry(), None), (br.Davidson(), -0.5)])
def test_style_intervals_cover(framework, eta):
    covered = [((e["lower"] <= BETA) & (BETA <= e["upper"])).to_numpy()
               for e in (style_effects(br.fit(framework, _data(seed, eta))) for seed in range(60))]
    assert np.mean(covered) >= 0.88
