"""The committed reference fits under models/ are what a fresh MAP fit gives today (timings aside).

``make models`` writes them through the CLI; here the same fits are made through the API and
compared field by field, so a change that moves a number shows up as a failing test and the
fits must be regenerated on purpose.
"""

import json
from pathlib import Path

import pytest

import bayesrank as br

MODELS = Path(__file__).resolve().parents[1] / "models"

#: (dataset, reference fit) → the framework ``models/regenerate.sh`` fits (a fast subset)
REFERENCE = {
    ("arena-2024", "bt-half"): br.BradleyTerry(ties="half"),
    ("arena-2024", "bt-drop"): br.BradleyTerry(ties="drop"),
    ("arena-2024", "dv-k0"): br.Davidson(k_tie=0),
    ("arena-2024", "dv-k1"): br.Davidson(k_tie=1),
    ("mtbench-judges", "judge-aware"): br.JudgeAware(),
    ("mtbench-judges", "btl"): br.BTL(),
}
#: diagnostics that measure the machine rather than the fit
TIMINGS = ("seconds",)


def approximately(value, rel=1e-9):
    """``value`` with every float replaced by ``pytest.approx`` (nested dicts and lists): the last
    bits of a fitted quantity may move with the installed libraries (another BLAS build)."""
    if isinstance(value, dict):
        return {k: approximately(v, rel) for k, v in value.items()}
    if isinstance(value, list):
        return [approximately(v, rel) for v in value]
    return pytest.approx(value, rel=rel, abs=1e-12) if isinstance(value, float) else value


def comparable(summary: dict) -> dict:
    out = {k: v for k, v in summary.items() if k != "versions"}
    out["diagnostics"] = {k: v for k, v in summary["diagnostics"].items() if k not in TIMINGS}
    return out


@pytest.mark.parametrize("dataset,name", sorted(REFERENCE), ids=lambda x: x)
def test_fresh_fit_reproduces_committed_summary(dataset, name):
    committed = comparable(json.loads((MODELS / dataset / name / "summary.json").read_text()))
    fresh = comparable(json.loads(json.dumps(br.fit(REFERENCE[dataset, name], dataset).to_json())))
    assert fresh["spec"] == committed["spec"]
    assert fresh["nll"] == pytest.approx(committed["nll"], rel=1e-9)
    assert fresh["n_params"] == committed["n_params"] and fresh["converged"] == committed["converged"]
    for got, want in zip(fresh["items"], committed["items"], strict=True):
        assert (got["name"], got["rank"], got["rank_lower"], got["rank_upper"]) == \
            (want["name"], want["rank"], want["rank_lower"], want["rank_upper"])
        for key in ("score", "se", "lower", "upper"):
            assert got[key] == pytest.approx(want[key], rel=1e-6, abs=1e-9), (got["name"], key)
    assert fresh["warnings"] == committed["warnings"]
    skip = ("grad_norm", "iterations", "optimiser", "min_information_eigenvalue")
    assert {k: v for k, v in fresh["diagnostics"].items() if k not in skip} == \
        approximately({k: v for k, v in committed["diagnostics"].items() if k not in skip})


def test_every_reference_fit_has_its_files():
    script = (MODELS / "regenerate.sh").read_text()
    for dataset, name in REFERENCE:
        assert name in script
        assert {"summary.json", "leaderboard.csv"} <= {p.name for p in (MODELS / dataset / name).iterdir()}
    for report in ("arena-2024/report.html", "mtbench-judges/report.html"):
        assert (MODELS / report).exists(), report
