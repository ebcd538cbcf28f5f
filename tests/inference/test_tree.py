"""The one shape of a fit: the groups, variables and attributes the DataTree of a MAP fit (and, slow,
of a NUTS fit) carries, as the module docstring lists them, and JSON-able values by ``plain``."""

import json

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.inference.tree import RECORDED_VERSIONS, plain
from tests.conftest import simulate_counts


@pytest.fixture(scope="module")
def data():
    return simulate_counts(np.array([-0.5, 0.0, 0.5]), 30, np.random.default_rng(1), eta=-0.5)


def check_common_shape(tree, framework, data):
    prepared = framework.prepare(data)
    assert {"posterior", "estimate", "observed_data", "constant_data", "data"} <= set(tree.children)
    est, post = tree["estimate"], tree["posterior"]
    for name, draws in post.data_vars.items():
        assert draws.dims[:2] == ("chain", "draw")
        assert est[name].dims == draws.dims[2:] and est[f"{name}_se"].dims == draws.dims[2:]
    assert est["cell_log_probs"].shape == (prepared.n_cells, 3) and est["loglik"].shape == ()
    np.testing.assert_array_equal(tree["observed_data"]["counts"].values, prepared.counts())
    np.testing.assert_array_equal(tree["constant_data"]["item_a"].values, prepared.a)
    np.testing.assert_array_equal(tree["constant_data"]["item_b"].values, prepared.b)
    assert list(tree["constant_data"]["item"].values) == list(data.items)
    given = br.Comparisons.from_xarray(tree["data"].to_dataset())
    np.testing.assert_array_equal(given.counts(), data.counts())
    assert json.loads(tree.attrs["bayesrank_spec"]) == framework.spec()
    assert set(json.loads(tree.attrs["bayesrank_versions"])) == set(RECORDED_VERSIONS)
    assert isinstance(json.loads(tree.attrs["bayesrank_diagnostics"]), dict)
    assert isinstance(json.loads(tree.attrs["bayesrank_warnings"]), list)


def test_a_map_fit_has_the_documented_shape(data):
    framework = br.Davidson()
    tree = br.fit(framework, data, draws=300).tree
    check_common_shape(tree, framework, data)
    est = tree["estimate"]
    assert tree.attrs["bayesrank_method"] == "map" and est.attrs["interval"] == "wald"
    assert tree["posterior"].sizes["chain"] == 1 and tree["posterior"].sizes["draw"] == 300
    assert est["theta_cov"].shape == (est["theta"].size,) * 2 and est["score_cov"].shape == (3, 3)
    assert "log_likelihood" not in tree.children


def test_point_estimates_only_carry_no_draws_and_no_errors(data):
    tree = br.fit(br.Davidson(), data, intervals="none").tree
    assert "posterior" not in tree.children and tree["estimate"].attrs["interval"] == "none"
    assert not [name for name in tree["estimate"].data_vars if name.endswith(("_se", "_cov"))]


def test_plain_values_are_json():
    value = {1: np.float64(0.5), "b": [np.int64(3), np.bool_(True)], "c": np.array([1.0, np.inf]),
             "d": (np.nan, pd.NA, "text")}
    assert plain(value) == {"1": 0.5, "b": [3, True], "c": [1.0, None], "d": [None, None, "text"]}
    assert json.dumps(plain(value), allow_nan=False)


@pytest.mark.slow
def test_a_nuts_fit_has_the_same_shape_and_its_own_groups(data):
    framework = br.Davidson()
    tree = br.fit(framework, data, method="nuts", draws=100, tune=100, chains=1, random_seed=0).tree
    check_common_shape(tree, framework, data)
    assert tree.attrs["bayesrank_method"] == "nuts" and tree["estimate"].attrs["interval"] == "quantile"
    assert {"log_likelihood", "sample_stats"} <= set(tree.children)
    np.testing.assert_allclose(tree["estimate"]["score"].values, tree["posterior"]["score"].mean(("chain", "draw")))
