"""What every framework promises: its PyMC model's likelihood is the papers' (NumPy reference of
tests/conftest.py), one comparison enters the likelihood as its outcome map says (ties as halves,
dropped, or as observed) and only a pseudo-likelihood defaults to sandwich intervals; style control
adds βᵀz to the linear predictor and nothing without contrasts."""

import numpy as np
import pytensor.tensor as pt
import pytest

import bayesrank as br
from bayesrank.model.framework import (
    AS_OBSERVED,
    OBSERVED,
    SCORE_PAIR,
    STYLE,
    TIES_AS_HALVES,
    TIES_DROPPED,
    Local,
    Predictor,
    score_difference,
    with_style,
)
from tests.conftest import reference_loglik, simulate_counts


@pytest.fixture(scope="module")
def data():
    return simulate_counts(np.array([-0.6, -0.1, 0.3, 0.5]), 25, np.random.default_rng(3), eta=-0.3)


@pytest.mark.parametrize("framework", [br.BradleyTerry(ties="half"), br.BradleyTerry(ties="drop"), br.Davidson(),
                                       br.RaoKupper()], ids=["bt-half", "bt-drop", "davidson", "rao-kupper"])
def test_the_built_model_has_the_papers_likelihood(data, framework):
    model, _ = framework.build(framework.prepare(data), prior="flat")
    loglik = model.compile_logp(vars=[model[OBSERVED]], jacobian=False)
    transform = model.rvs_to_transforms[model["score"]]
    value = model.rvs_to_values[model["score"]].name
    rng = np.random.default_rng(0)
    for _ in range(3):
        z = rng.normal(0, 1, data.n_items - 1)
        point = {value: z}
        eta = None
        if "eta_raw" in model.named_vars:
            eta = float(rng.normal(-0.5, 0.5))
            point["eta_raw"] = np.array(eta)
        scores = transform.backward(pt.as_tensor(z)).eval()
        assert scores.sum() == pytest.approx(0, abs=1e-12)
        assert loglik(point) == pytest.approx(reference_loglik(framework, data, scores, eta), rel=1e-10)


def test_each_comparison_enters_as_its_outcome_map_says(data):
    for framework, Y, intervals in ((br.BradleyTerry(ties="half"), TIES_AS_HALVES, "sandwich"),
                                    (br.BradleyTerry(ties="drop"), TIES_DROPPED, "wald"),
                                    (br.Davidson(), AS_OBSERVED, "wald"), (br.RaoKupper(), AS_OBSERVED, "wald")):
        np.testing.assert_array_equal(framework.outcome_map(), Y)
        np.testing.assert_allclose(framework.prepare(data).counts(), data.counts() @ Y)
        assert framework.pseudo_likelihood == (intervals == "sandwich") and framework.default_intervals == intervals


def test_style_adds_the_weighted_contrasts_and_nothing_without_them(data):
    plain = Predictor(SCORE_PAIR, score_difference, True)
    assert with_style(plain, data) is plain
    styled_data = br.Comparisons.from_cells(["x", "y"], ["y", "z"], [3, 2], [1, 4],
                                            contrasts={"length": [1.5, -2.0], "bold": [0.0, 1.0]})
    styled = with_style(plain, styled_data)
    assert styled.inputs["style"] == Local(STYLE, None) and styled.linear
    beta = np.array([0.4, -0.7])
    u = {"score_a": np.array([1.0, 0.2]), "score_b": np.array([0.5, 0.9]), "style": np.tile(beta, (2, 1))}
    cells = {"contrasts": styled_data.contrasts}
    d = styled.fn(u, cells).eval()
    np.testing.assert_allclose(d, u["score_a"] - u["score_b"] + styled_data.contrasts @ beta)
