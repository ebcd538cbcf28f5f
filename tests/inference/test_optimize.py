"""The optimiser ends at a stationary point from any start, including one within the rounding of
ℓ of the maximum (where no step can be certified by the function value)."""

import numpy as np
import pytest

import bayesrank as br
from bayesrank.inference.information import information
from bayesrank.inference.map import GRADIENT_TOL
from bayesrank.inference.optimize import GTOL, loglik_gradient, maximise
from bayesrank.inference.structure import structure_of
from tests.conftest import simulate_counts


@pytest.mark.parametrize("gradient", [3 * GTOL, 30 * GTOL, 0.3 * GRADIENT_TOL])
def test_a_start_next_to_the_maximum_ends_stationary(gradient):
    """Starts a Newton step away from the MLE whose largest per-comparison gradient entry is
    ``gradient`` (above the optimiser's stopping test, below the fit's KKT tolerance)."""
    data = simulate_counts(np.linspace(-1, 1, 7), 300, np.random.default_rng(3), eta=-0.5)
    framework = br.Davidson(k_tie=1)
    prepared = framework.prepare(data)
    bound = structure_of(framework, prepared).bind(prepared)
    best = maximise(bound, bound.x0)
    n = best.n
    H = information(bound, best.theta, "observed")
    direction = np.linalg.solve(H, np.random.default_rng(4).standard_normal(bound.n_free))
    step = direction * gradient * n / np.max(np.abs(H @ direction))
    start = best.theta + step
    assert np.max(np.abs(loglik_gradient(bound, start)[1])) / n > GTOL
    end = maximise(bound, start)
    assert np.all(np.isfinite(end.theta))
    assert end.grad_max < GRADIENT_TOL
    assert end.loglik >= best.loglik - 1e-9 * n


def test_a_start_at_the_maximum_of_a_model_with_a_flat_direction_ends_stationary():
    """An item whose cells hold no comparisons (the start of :func:`bayesrank.diff`'s path, where
    a new model has not played yet) leaves a direction without curvature: a start at the maximum
    of the others still ends at a stationary point, not in an error."""
    from dataclasses import replace

    data = simulate_counts(np.linspace(-1, 1, 7), 300, np.random.default_rng(3), eta=-0.5)
    framework = br.Davidson(k_tie=1)
    structure = structure_of(framework, framework.prepare(data))
    unplayed = (data.a == 6) | (data.b == 6)
    zero = np.where(unplayed, 0.0, 1.0)
    alone = replace(data, wins_a=data.wins_a * zero, wins_b=data.wins_b * zero, ties=data.ties * zero,
                    ties_bothbad=data.ties_bothbad * zero)
    bound = structure.bind(framework.prepare(alone))
    best = maximise(bound, bound.x0)
    H = information(bound, best.theta, "observed")
    values, vectors = np.linalg.eigh(H)
    flat, curved = vectors[:, 0], vectors[:, 1:] / values[1:]
    assert abs(values[0]) < 1e-8 * best.n
    nudge = curved @ np.random.default_rng(5).standard_normal(bound.n_free - 1)
    for along in (0.0, 0.8):  # at the maximum, and moved along the flat direction
        start = best.theta + along * flat + nudge * 2 * GTOL * best.n / np.max(np.abs(H @ nudge))
        assert np.max(np.abs(loglik_gradient(bound, start)[1])) / best.n > GTOL
        end = maximise(bound, start)
        assert np.all(np.isfinite(end.theta))
        assert end.grad_max < GRADIENT_TOL
