"""The one evaluation path: functions compiled in the package's PyTensor mode give exact values of
softplus and log(1 − eˣ) over their whole range, and dense linear algebra runs on one BLAS thread
inside ``one_thread()`` and on the process's threads again after it; after the install step, fits
compile no C."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytensor.tensor as pt
import pytest
from threadpoolctl import threadpool_info

from bayesrank.inference.backend import function, one_thread


def test_softplus_and_log1mexp_are_exact_over_their_range():
    x = pt.dvector("x")
    softplus = function([x], pt.softplus(x))
    log1mexp = function([x], pt.log1mexp(x))
    wide = np.array([-np.inf, -800.0, -40.0, -1.0, 0.0, 1e-300, 1.0, 40.0, 800.0, np.inf])
    np.testing.assert_allclose(softplus(wide), np.logaddexp(0.0, wide), rtol=1e-15)
    negative = np.array([-np.inf, -800.0, -40.0, -1.0, -np.log(2.0), -0.5, -1e-10, -1e-300])
    # log(1 − eˣ) by the form that is exact on each side of −log 2 (each evaluated only where it applies)
    want = np.array([np.log(-np.expm1(v)) if v > -np.log(2.0) else np.log1p(-np.exp(v)) for v in negative])
    np.testing.assert_allclose(log1mexp(negative), want, rtol=1e-15)


def test_one_thread_is_one_blas_thread_and_is_undone():
    def blas_threads():
        return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]

    before = blas_threads()
    with one_thread():
        assert blas_threads() and set(blas_threads()) == {1}
    assert blas_threads() == before


@pytest.mark.slow
def test_after_the_install_step_no_fit_compiles_c(tmp_path):
    """The Makefile's ``compile-cache`` (one small fit) compiles every C module PyTensor links the
    engine's inner graphs with: later fits of other frameworks, on other data, compile none."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTENSOR_FLAGS": f"base_compiledir={tmp_path}"}
    subprocess.run(["make", "-s", "-C", str(root), "compile-cache"], env=env, check=True, capture_output=True)
    modules = sorted(tmp_path.rglob("*.so"))
    assert modules
    for args in (["arena-2024", "--model", "rao-kupper", "--k-tie", "1"], ["mtbench-judges", "--model", "hja"]):
        subprocess.run([sys.executable, "-m", "bayesrank.cli", "fit", *args, "--method", "map", "--format", "json"],
                       env=env, check=True, capture_output=True)
        assert sorted(tmp_path.rglob("*.so")) == modules
