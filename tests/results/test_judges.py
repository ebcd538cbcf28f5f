"""The judges of a fit in every output: the Python API, the JSON and the CLI table."""

import json

import pytest

import bayesrank as br
from bayesrank.cli import main

GLM = "zai-org/GLM-4.5-Air-FP8"


@pytest.fixture(scope="module")
def fit(mtbench):
    return br.fit(br.JudgeAware(), mtbench)


def test_verdict_shares_of_the_bundled_judges(fit):
    """MT-Bench's judges saw the alphabetically first model first, always; GLM-4.5-Air answered "a"
    in 99 % of its records where the median judge is near 55 %."""
    shares = fit.verdict_shares().set_index("judge")
    assert len(shares) == 20 and shares.loc[GLM, "a"] > 0.98 and shares.loc[GLM, "follows_position"]
    assert fit.presentation_order().rule == "alphabetical"
    assert any(w.startswith(f"judge '{GLM}' chose the answer shown first in 99") for w in fit.warnings)


def test_json_carries_judges_verdict_shares_and_the_order(fit):
    out = fit.to_json()
    assert len(out["judges"]) == 20 and {"name", "gamma", "se", "lower", "upper"} <= set(out["judges"][0])
    row = {r["judge"]: r for r in out["verdict_shares"]}[GLM]
    assert row["follows_position"] is True and row["position"] == "first"
    order = out["presentation_order"]
    assert order["confounded"] and order["rule"] == "alphabetical" and len(order["items"]) == 6
    json.dumps(out)  # plain JSON


def test_cli_table_shows_the_judges_and_their_verdict_shares(capsys):
    assert main(["fit", "mtbench-judges", "--model", "judge-aware", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "judges: discrimination γ_k" in out and "verdict shares: a = the answer shown first" in out
    line = next(line for line in out.splitlines() if line.strip().startswith(GLM) and "True" in line)
    assert "0.990" in line
