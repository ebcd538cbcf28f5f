"""Structure.value_rows for a subset of the variables: the same values as the full function at
those variables' entries, zeros elsewhere (the delta method's differences ask only for the
variables not affine in θ)."""

import numpy as np

import bayesrank as br
from bayesrank.inference.structure import structure_of
from tests.conftest import random_cells


def test_subset_rows_are_the_full_rows_at_their_entries():
    rng = np.random.default_rng(2)
    data = random_cells(6, rng, 15)
    framework = br.Davidson(k_tie=1, k_cov=0)
    structure = structure_of(framework, framework.prepare(data), prior="flat")
    thetas = structure.x0 + 0.2 * rng.standard_normal((5, structure.n_free))
    full = structure.value_rows(thetas)
    layout = structure.layout()
    wanted = {"score", "cov_diag"}
    assert wanted <= set(layout)
    part = structure.value_rows(thetas, names=wanted)
    inside = np.zeros(full.shape[1], dtype=bool)
    for name in wanted:
        inside[layout[name][0]] = True
    np.testing.assert_allclose(part[:, inside], full[:, inside], rtol=1e-12)
    assert np.all(part[:, ~inside] == 0)
    assert np.any(full[:, ~inside] != 0)
    np.testing.assert_array_equal(structure.value_rows(thetas, names=set(layout)), full)
    assert not structure.value_rows(thetas, names=()).any()


def test_the_delta_method_along_the_coordinates_a_variable_reads_is_the_one_along_the_factor():
    """The variables not affine in θ of a Thurstonian model with a tie factor read the score and
    Thurstonian coordinates only (:meth:`Structure.theta_columns`): along the others their values
    do not move, and the delta method from their Jacobian in those coordinates gives the standard
    errors and covariances of the differences along every column of the covariance factor."""
    from bayesrank.inference import asymptotics

    rng = np.random.default_rng(5)
    data = random_cells(6, rng, 15)
    framework = br.Davidson(k_tie=3, k_cov=0)
    structure = structure_of(framework, framework.prepare(data), prior="flat")
    layout = structure.layout()
    left = [n for n in layout if n not in asymptotics.affine_blocks(structure)]
    reads = structure.theta_columns(left)
    tie = np.arange(structure.n_free)[structure.slices["tie_coord"][0]]
    assert left and 2 * reads.size <= structure.n_free and not np.isin(tie, reads).any()
    theta = structure.x0 + 0.3 * rng.standard_normal(structure.n_free)
    entries = np.concatenate([np.arange(layout[n][0].start, layout[n][0].stop) for n in left])
    moved = structure.value_rows(theta + np.isin(np.arange(theta.size), tie))
    np.testing.assert_array_equal(moved[0, entries], structure.value_rows(theta)[0, entries])

    factor = np.tril(rng.standard_normal((theta.size, theta.size))) * 0.05
    se, _ = asymptotics.delta_method(structure, theta, factor, {})
    _, cross = asymptotics.delta_method(structure, theta, factor, {"score": False}, factor @ factor.T)
    step = 1e-4 * factor.T
    JL = (structure.value_rows(theta + step) - structure.value_rows(theta - step)) / 2e-4
    for name in left:
        sl, shape = layout[name]
        np.testing.assert_allclose(se[name], np.sqrt(np.sum(JL[:, sl] ** 2, axis=0)).reshape(shape), rtol=1e-7)
    np.testing.assert_allclose(cross["score"], JL[:, layout["score"][0]].T @ JL[:, layout["score"][0]],
                               rtol=1e-7, atol=1e-12)
