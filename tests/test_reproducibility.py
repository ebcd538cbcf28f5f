"""Nothing lost between runs: the same seed gives the same numbers in another process, and a
saved fit of every framework reloads in a fresh process with the same data, coords, spec,
versions and answers, bit for bit."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.model.registry import FRAMEWORKS

TIMINGS = ("seconds",)


def digest(tree) -> str:
    """SHA-256 of every value, coordinate and attribute of a fit's DataTree."""
    h = hashlib.sha256()
    for node in sorted(tree.subtree, key=lambda n: n.path):
        h.update(node.path.encode())
        h.update(json.dumps({k: str(v) for k, v in sorted(node.attrs.items())}).encode())
        ds = node.to_dataset()
        for name in sorted(ds.variables):
            values = ds[name].values
            h.update(name.encode())
            h.update(str(ds[name].dims).encode())
            text = values.dtype.kind in "OUS"
            h.update(values.astype(str).tobytes() if text else np.ascontiguousarray(values).tobytes())
    return h.hexdigest()


def fresh_process(code: str) -> dict:
    """Run ``code`` in a new interpreter; it prints one JSON object."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def without_timings(summary: dict) -> dict:
    out = dict(summary)
    out["diagnostics"] = {k: v for k, v in summary["diagnostics"].items() if k not in TIMINGS}
    return out


def covariate_records() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n = 1200
    i = rng.integers(0, 5, n)
    j = (i + rng.integers(1, 5, n)) % 5
    s = np.array([0.8, 0.3, 0.0, -0.4, -0.7])
    z = np.round(rng.normal(size=n), 0)
    k = rng.integers(0, 3, n)
    y = rng.random(n) < 1 / (1 + np.exp(-np.exp(0.3 * z * (k - 1)) * (s[i] - s[j])))
    return pd.DataFrame({"model_a": [f"m{x}" for x in i], "model_b": [f"m{x}" for x in j],
                         "judge_model": [f"j{x}" for x in k], "judge_preferred_model": np.where(y, "a", "b"), "z": z})


#: One fit of every framework (and the Thurstonian option), on bundled or simulated data: MAP,
#: except the NUTS-only per-category model.
CASES = {
    "bt": (lambda: br.BradleyTerry(), "mtbench-judges"),
    "rao-kupper": (lambda: br.RaoKupper(k_tie=1), "mtbench-judges"),
    "davidson": (lambda: br.Davidson(k_tie=1, tie_intercept=True), "mtbench-judges"),
    "davidson-thurstonian": (lambda: br.Davidson(k_cov=0), "mtbench-judges"),
    "judge-aware": (lambda: br.JudgeAware(), "mtbench-judges"),
    "btl": (lambda: br.BTL(ties="davidson", position_bias=False), "mtbench-judges"),
    "judge-aware-signed": (lambda: FRAMEWORKS["judge-aware-signed"](), "mtbench-judges"),
    "judge-aware-covariate": (lambda: br.JudgeAwareCovariate(), "covariates"),
    "hja": (lambda: br.HJA(rank=1), "mtbench-judges"),
    "by-category": (lambda: br.ByCategory(), "categories"),  # NUTS only: its hierarchy needs the prior
    "dynamic": (lambda: br.Dynamic(br.Davidson()), "periods"),
    "random-effects": (lambda: br.RandomEffects(br.BradleyTerry(ties="drop"), cluster="judge_model"), "clusters"),
}


def category_records() -> pd.DataFrame:
    from bayesrank.data.simulate import battles

    scores = np.array([[0.6, 0.2, -0.1, -0.7], [0.5, 0.3, -0.2, -0.6]])
    return battles(scores, 600, np.random.default_rng(5), categories=["en", "zh"])


def case_fit(name: str):
    make, source = CASES[name]
    if source == "covariates":
        return br.fit(make(), br.load(covariate_records(), covariates=["z"]))
    if source == "periods":
        from bayesrank.data.simulate import arena_over_time

        sim = arena_over_time(6, 4, 400, np.random.default_rng(8), eta=-1.0)
        return br.fit(make(), br.load(sim.records, time_column="date"), draws=200)
    if source == "clusters":
        return br.fit(make(), br.load("mtbench-judges", cluster="judge_model"))
    if source == "categories":
        return br.fit(make(), br.load(category_records(), by="category"), method="nuts", draws=100, tune=100,
                      chains=2, random_seed=3, progressbar=False)
    return br.fit(make(), source)


def test_every_registered_framework_is_covered():
    covered = {name.split("-thurstonian")[0] for name in CASES}
    assert set(FRAMEWORKS) <= covered


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fits")
    out = {}
    for name in CASES:
        fit = case_fit(name)
        path = fit.save(folder / f"{name}.nc")
        out[name] = (fit, path)
    return out


def test_saved_fits_reload_exactly_in_a_fresh_process(saved):
    paths = {name: str(path) for name, (_, path) in saved.items()}
    loaded = fresh_process(f"""
        import json, sys
        sys.path.insert(0, {str(__import__('pathlib').Path(__file__).parents[1])!r})
        import bayesrank as br
        from tests.test_reproducibility import digest
        out = {{}}
        for name, path in {paths!r}.items():
            fit = br.Fit.load(path)
            out[name] = {{"digest": digest(fit.tree), "json": fit.to_json(), "items": fit.items,
                         "spec": fit.framework.spec(), "versions": fit.summary()["versions"],
                         "accounting": fit.data.accounting(), "n_cells": fit.model_data.n_cells}}
        print(json.dumps(out))
    """)
    for name, (fit, path) in saved.items():
        got = loaded[name]
        assert got["digest"] == digest(fit.tree), name
        assert got["json"] == json.loads(json.dumps(fit.to_json())), name
        assert got["items"] == fit.items and got["spec"] == fit.framework.spec()
        assert got["versions"] == fit.summary()["versions"] and got["versions"]["bayesrank"]
        assert got["accounting"] == fit.data.accounting() and got["n_cells"] == fit.model_data.n_cells


def test_map_results_identical_across_processes():
    code = """
        import json
        import bayesrank as br
        fit = br.fit(br.JudgeAware(ties="davidson"), "mtbench-judges", random_seed=7)
        print(json.dumps(fit.to_json()))
    """
    first, second = fresh_process(code), fresh_process(code)
    assert without_timings(first) == without_timings(second)  # two fresh processes: bit for bit
    # and this process, whatever the tests fitted in it before
    here = json.loads(json.dumps(br.fit(br.JudgeAware(ties="davidson"), "mtbench-judges", random_seed=7).to_json()))
    assert without_timings(here) == without_timings(first)


@pytest.mark.slow
def test_nuts_draws_bit_identical_across_processes():
    code = """
        import hashlib, json
        import numpy as np
        import bayesrank as br
        fit = br.fit(br.BTL(), "mtbench-judges", method="nuts", draws=150, tune=150, chains=2, random_seed=3)
        post = fit.tree["posterior"]
        h = hashlib.sha256()
        for name in sorted(post.data_vars):
            h.update(np.ascontiguousarray(post[name].values).tobytes())
        print(json.dumps({"hash": h.hexdigest(), "first": float(post["score"].values.ravel()[0])}))
    """
    first, second = fresh_process(code), fresh_process(code)
    assert first == second
    # and after other fits in the process, of this model and others
    after = fresh_process(code.replace("        fit = br.fit(br.BTL(), ",
                                       "        br.fit(br.Davidson(k_tie=1), 'arena-2024')\n"
                                       "        br.fit(br.BTL(), 'mtbench-judges')\n        fit = br.fit(br.BTL(), "))
    assert after == first
