"""Per-cell kernels: a link's cell log-likelihood, its gradient and Hessian in the predictors (d, h)
and each outcome's log-probability gradient, against the papers' formulas written in NumPy (tests/conftest.py) and
their central differences; a non-linear predictor's Jacobian and weighted second derivatives against
central differences of its own values."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.inference.kernels import link_kernel
from bayesrank.inference.structure import structure_of
from tests.conftest import reference_cell_loglik, reference_log_probs, simulate_counts


@pytest.mark.parametrize("link", ["bt", "davidson", "rao-kupper"])
def test_link_derivatives_are_those_of_the_papers_formulas(link):
    rng = np.random.default_rng(1)
    n = 7
    d, h = rng.normal(0, 1.5, n), rng.normal(-0.5, 1, n)
    counts = rng.integers(0, 20, (n, 3)).astype(float)
    if link == "bt":
        counts[:, 2] = 0
    kernel = link_kernel(link)
    out = kernel.derivatives({"d": d, "h": h}, counts)
    np.testing.assert_allclose(out["log_probs"][:, :2 if link == "bt" else 3],
                               reference_log_probs(link, d, h)[:, :2 if link == "bt" else 3], rtol=1e-12)
    np.testing.assert_allclose(out["loglik"], reference_cell_loglik(link, d, h, counts), rtol=1e-12)
    P = kernel.n_predictors
    step = 1e-5
    for q in range(P):
        e = np.zeros((2, n))
        e[q] = step
        up = reference_cell_loglik(link, d + e[0], h + e[1], counts)
        down = reference_cell_loglik(link, d - e[0], h - e[1], counts)
        np.testing.assert_allclose(out["grad"][:, q], (up - down) / (2 * step), rtol=1e-7, atol=1e-7)
        gu = kernel.derivatives({"d": d + e[0], "h": h + e[1]}, counts)["grad"]
        gd = kernel.derivatives({"d": d - e[0], "h": h - e[1]}, counts)["grad"]
        np.testing.assert_allclose(out["hess"][:, :, q], (gu - gd) / (2 * step), rtol=1e-6, atol=1e-7)
    lp, outcome = kernel.outcome_gradients({"d": d, "h": h})
    assert outcome.shape == (n, 3, P)
    e = np.zeros((2, n))
    e[0] = step
    with np.errstate(invalid="ignore"):   # Bradley–Terry's tie column is −∞ on both sides: −∞ − (−∞)
        fd = (reference_log_probs(link, d + step, h) - reference_log_probs(link, d - step, h)) / (2 * step)
    keep = np.isfinite(fd)
    np.testing.assert_allclose(outcome[:, :, 0][keep], fd[keep], rtol=1e-7, atol=1e-8)
    if link == "bt":
        assert np.all(outcome[:, 2] == 0)     # no tie outcome: no gradient
    with pytest.raises(ValueError, match="unknown link 'elo'"):
        link_kernel("elo")


def test_a_nonlinear_predictors_derivatives_are_its_own_differences():
    """Davidson with a diagonal Thurstonian covariance: d = (s_a − s_b) / √(σ_a² + σ_b²)-like, not
    linear in its local values."""
    framework = br.Davidson(k_cov=0)
    data = simulate_counts(np.array([-0.6, 0.0, 0.7]), 20, np.random.default_rng(2), eta=-0.5)
    structure = structure_of(framework, framework.prepare(data), prior="flat")
    nonlinear = [name for name, pred in structure.predictors.items() if not pred.linear]
    assert nonlinear
    rng = np.random.default_rng(3)
    nat = {name: rng.normal(0, 0.5, shape) for name, shape in structure.natural.shapes.items()}
    cells = structure.cast_cells({"item_a": np.array([0, 0, 1]), "item_b": np.array([1, 2, 2])})
    for name in nonlinear:
        kernel = structure.kernels[name]
        u = structure.locals(nat, cells)[name]
        value, jac = kernel.jacobian(u, cells)
        np.testing.assert_allclose(value, kernel.value(u, cells))
        flat = np.concatenate([np.asarray(u[k], float).reshape(3, -1) for k in kernel.keys], axis=1)

        def unflat(x):
            out, at = dict(u), 0
            for k, size in zip(kernel.keys, kernel.sizes):
                out[k] = x[:, at:at + size].reshape(np.shape(u[k]))
                at += size
            return out

        step, weight = 1e-5, np.array([0.5, -1.0, 2.0])
        second = kernel.second(u, cells, weight)
        for j in range(kernel.width):
            e = np.zeros_like(flat)
            e[:, j] = step
            up, down = kernel.jacobian(unflat(flat + e), cells), kernel.jacobian(unflat(flat - e), cells)
            np.testing.assert_allclose(jac[:, j], (up[0] - down[0]) / (2 * step), rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(second[:, :, j], weight[:, None] * (up[1] - down[1]) / (2 * step),
                                       rtol=1e-5, atol=1e-7)
