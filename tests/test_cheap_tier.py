"""The two tiers of :mod:`bayesrank.inference.backend`. The cheap tier runs NumPy code: every
elementwise operation of the link kernels must have a vectorised NumPy form, and the forms it
substitutes must be exact. A model's log-density moves to the hot tier only once the model has
been reused ``JIT_AFTER`` times (the move costs a second even with numba's code on disk)."""

import numpy as np
import pytensor.tensor as pt
import pytest
from pytensor.scalar.basic import Add, Cast, Mul
from pytensor.tensor.elemwise import Elemwise

import bayesrank as br
from bayesrank.inference import backend
from bayesrank.inference import compiled as compiled_module
from bayesrank.inference.compiled import LIGHT_MODE, compiled
from bayesrank.inference.kernels import link_kernel
from bayesrank.model.links import PREDICTORS

EXTREMES = np.array([-np.inf, -800.0, -40.0, -37.5, -1.0, -np.log(2.0), -1e-8, -1e-300, 0.0, 1e-12, 3.0, 33.5, 800.0,
                     np.inf])


def _per_element(fn) -> list[str]:
    """Elementwise nodes of a compiled function that NumPy thunks would run element by element
    in Python (``np.frompyfunc`` on the scalar implementation)."""
    slow = []
    for node in fn.maker.fgraph.toposort():
        op = node.op
        if not isinstance(op, Elemwise) or isinstance(op.scalar_op, (Add, Mul, Cast)):
            continue
        spec = getattr(op, "nfunc_spec", None)
        if not spec or spec[1] != len(node.inputs):
            slow.append(str(op.scalar_op))
    return slow


@pytest.mark.parametrize("mode", ["cheap", "light"])
def test_softplus_and_log1mexp_are_vectorised_and_exact(mode):
    x = pt.dvector("x")
    fn = backend.function([x], [pt.softplus(x), pt.log1mexp(-pt.abs(x))], tier="cheap",
                          mode=LIGHT_MODE if mode == "light" else None)
    assert _per_element(fn) == []
    softplus, log1mexp = fn(EXTREMES)
    np.testing.assert_allclose(softplus, np.logaddexp(0.0, EXTREMES), rtol=1e-15, atol=0)
    a = -np.abs(EXTREMES)
    with np.errstate(divide="ignore"):
        reference = np.array([np.log(-np.expm1(v)) if v > -np.log(2.0) else np.log1p(-np.exp(v)) for v in a])
    np.testing.assert_array_equal(np.isfinite(log1mexp), np.isfinite(reference))
    finite = np.isfinite(reference)
    np.testing.assert_allclose(log1mexp[finite], reference[finite], rtol=1e-15, atol=0)
    assert log1mexp[~finite].tolist() == reference[~finite].tolist()


@pytest.mark.parametrize("link", sorted(PREDICTORS))
def test_link_kernels_have_no_per_element_python(link):
    kernel = link_kernel(link)
    for fn in (kernel.probs_fn, kernel.derivatives_fn, kernel.outcome_fn):
        assert _per_element(fn) == [], link


def test_always_moves_a_model_from_its_first_fit(monkeypatch):
    monkeypatch.setenv(backend.JIT_ENV, "always")
    data = br.load("mtbench-judges")
    framework = br.BTL()
    key = compiled_module.structure_key(framework, framework.prepare(data), "flat")
    monkeypatch.delitem(compiled_module._CACHE, key, raising=False)  # as in a new process
    monkeypatch.setattr(compiled_module.Structure, "promote", lambda self, force=False: pytest.fail("reused"))
    fit = br.fit(framework, data)
    assert compiled_module._CACHE[key].hot and fit.converged


@pytest.mark.parametrize("policy, hot_after", [("cached", backend.JIT_AFTER), ("always", 1), ("never", None)])
def test_the_log_density_moves_to_the_hot_tier_after_the_policys_reuses(monkeypatch, policy, hot_after):
    monkeypatch.setenv(backend.JIT_ENV, policy)
    data = br.load("mtbench-judges")
    framework = br.BTL()
    prepared = framework.prepare(data)
    structure = compiled(framework, prepared, "flat")
    structure.hot, structure.reuses = False, 0  # as if built just now (the process cache may hold it)
    fits, states = [], []
    for _ in range(backend.JIT_AFTER + 1):  # the k-th fit reuses the structure for the k-th time
        fits.append(br.fit(framework, data))
        states.append(structure.hot)
    assert structure.reuses == backend.JIT_AFTER + 1
    assert states == [hot_after is not None and k >= hot_after for k in range(1, backend.JIT_AFTER + 2)]
    np.testing.assert_allclose(fits[-1].scores().to_numpy(), fits[0].scores().to_numpy(), rtol=1e-9, atol=1e-12)
