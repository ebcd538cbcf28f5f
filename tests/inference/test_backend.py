"""The one evaluation path: functions compiled in the package's PyTensor mode give exact values of
softplus and log(1 − eˣ) over their whole range, and dense linear algebra runs on one BLAS thread
inside ``one_thread()`` and on the process's threads again after it."""

import numpy as np
import pytensor.tensor as pt
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
