"""The tie basis stored in single precision (:mod:`bayesrank.model.fixed_basis`): every backend computes
the same exactly linear map — the basis rounded to float32, products summed in float64 —, its gradient
is the transposed product, the log-density reads it on the hot tier through numba's loops (not
PyTensor's object-mode fallback), NUTS samples through it with nutpie (numba) and numpyro (JAX), and the callbacks of :func:`bayesrank.lazy.after_import` run when
their module is imported.

The reference is NumPy's float64 product with the rounded basis.
"""

import importlib
import subprocess
import sys
import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.graph.replace import vectorize_graph

import bayesrank as br
from bayesrank.lazy import after_import
from bayesrank.model.fixed_basis import FixedBasisProduct, fixed_basis_times

MODES = ["vm", "numba", "jax"]


@pytest.fixture(scope="module")
def basis():
    rng = np.random.default_rng(7)
    return np.linalg.qr(rng.standard_normal((300, 260)))[0] * rng.uniform(1, 30, 260)  # stretched columns


def rounded(basis):
    return basis.astype(np.float32).astype(np.float64)


def compile_in(mode, inputs, outputs):
    if mode == "jax":
        pytest.importorskip("jax")  # (the dev extra installs it: a clean clone runs this)
    linker = {"vm": pytensor.compile.mode.Mode(linker="vm", optimizer="fast_run"),
              "numba": pytensor.compile.mode.Mode(linker="numba", optimizer="fast_run"),
              "jax": "JAX"}[mode]
    return pytensor.function(inputs, outputs, mode=linker)


@pytest.mark.parametrize("mode", MODES)
def test_product_and_gradient_are_the_rounded_basis_in_double_precision(basis, mode):
    x, w = pt.vector("x"), pt.vector("w")
    y = fixed_basis_times(basis, x)
    objective = pt.dot(w, y) + 0.5 * pt.sum(y ** 2)
    f = compile_in(mode, [x, w], [y, pytensor.grad(objective, x)])
    rng = np.random.default_rng(0)
    xv, wv = rng.standard_normal(260), rng.standard_normal(300)
    value, grad = f(xv, wv)
    B = rounded(basis)
    expected = B @ xv
    np.testing.assert_allclose(value, expected, rtol=1e-13, atol=1e-13 * np.abs(expected).max())
    expected_grad = B.T @ (wv + expected)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-12, atol=1e-12 * np.abs(expected_grad).max())
    # the rounding is float32's, not a coarser one (the map differs from the float64 basis's)
    assert 0 < np.abs(value - basis @ xv).max() < 1e-6 * np.abs(expected).max()


@pytest.mark.parametrize("mode", ["vm", "numba"])
def test_rows_of_coordinates_are_the_batch(basis, mode):
    x = pt.vector("x")
    rows = pt.matrix("rows")
    batched = vectorize_graph(fixed_basis_times(basis, x), {x: rows})
    assert isinstance(batched.owner.op, FixedBasisProduct)  # no Blockwise loop of one product a row
    f = compile_in(mode, [rows], batched)
    values = np.random.default_rng(1).standard_normal((5, 260))
    np.testing.assert_allclose(f(values), values @ rounded(basis).T, rtol=1e-12, atol=1e-12)


def test_the_operation_rejects_what_it_does_not_compute(basis):
    with pytest.raises(TypeError, match="float32 matrix and float64"):
        FixedBasisProduct()(pt.constant(basis), pt.vector("x"))  # a float64 basis


def test_shapes_are_inferred_without_pytensors_deprecated_signature(basis):
    # PyTensor 3.3 warns at the class's definition when its infer_shape still takes fgraph
    subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", "import bayesrank.model.fixed_basis"],
                   check=True)
    rows = pt.matrix("rows")
    shape = pytensor.function([rows], fixed_basis_times(basis, rows).shape)
    assert tuple(shape(np.zeros((4, 260)))) == (4, 300)


def test_a_large_basis_leaves_the_hot_tier_cacheable():
    # numba embeds an array constant above PyTensor's NUMBA_CONSTANT_SIZE_LIMIT (1 MB) as a dynamic
    # global, and a function with one cannot be cached on disk: every process compiled the log-density
    # of paper model 18 (a 2,390 x 2,330 float32 basis) again, 6.8 s, where it now loads it in 0.5 s
    from pytensor.link.numba.dispatch.basic import NUMBA_CONSTANT_SIZE_LIMIT

    large = np.random.default_rng(2).standard_normal((800, 400))
    assert large.astype(np.float32).nbytes > NUMBA_CONSTANT_SIZE_LIMIT
    x = pt.vector("x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = compile_in("numba", [x], fixed_basis_times(large, x))(np.ones(400))
    assert not [w for w in caught if "dynamic globals" in str(w.message)]
    np.testing.assert_allclose(value, rounded(large) @ np.ones(400), rtol=1e-12)


def test_the_hot_tier_uses_numbas_loops_not_the_object_mode_fallback():
    from pytensor.link.numba.dispatch import basic

    implementation = basic.numba_funcify.dispatch(FixedBasisProduct)
    assert implementation is not basic.numba_funcify.dispatch(object)


def test_after_import_runs_the_callbacks_once_the_module_is_imported(tmp_path, monkeypatch):
    (tmp_path / "bayesrank_waited_module.py").write_text("VALUE = 41\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    after_import("bayesrank_waited_module", lambda module: seen.append(module.VALUE + 1))
    assert seen == []
    module = importlib.import_module("bayesrank_waited_module")
    assert seen == [42] and module.VALUE == 41
    after_import("bayesrank_waited_module", lambda module: seen.append(module.VALUE))  # already imported: now
    assert seen == [42, 41]
    sys.modules.pop("bayesrank_waited_module")


def test_a_first_fit_of_a_tie_basis_model_does_not_import_numba():
    code = ("import sys, bayesrank as br; "
            "fit = br.fit(br.Davidson(k_tie=2), br.load('arena-2024')); "
            "print(fit.converged and 'numba' not in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True", out.stderr


@pytest.mark.parametrize("sampler", ["nutpie", "numpyro"])
def test_nuts_samples_a_tie_basis_model_with_numba_and_jax(sampler):
    """nutpie compiles the log-density with numba, numpyro with JAX: both read the basis through this
    operation (Davidson k_tie = 1 has a tie basis)."""
    from tests.conftest import simulate_counts

    small = simulate_counts(np.linspace(-1.2, 1.2, 8), 250, np.random.default_rng(5), eta=-0.4)
    framework = br.Davidson(k_tie=1)
    post = br.fit(framework, small, method="nuts", sampler=sampler, draws=300, tune=300, chains=2, random_seed=3)
    assert post.diagnostics["sampler"] == sampler and post.diagnostics["max_rhat"] <= 1.02
    np.testing.assert_allclose(post.scores(), br.fit(framework, small).scores(), atol=0.06)
