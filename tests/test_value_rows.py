"""Structure.value_rows for a subset of the variables: the same values as the full function at
those variables' entries, zeros elsewhere (the delta method's differences ask only for the
variables not affine in θ)."""

import numpy as np

import bayesrank as br
from bayesrank.inference.compiled import compiled


def test_subset_rows_are_the_full_rows_at_their_entries():
    rng = np.random.default_rng(2)
    m = 6
    a, b = np.array([(i, j) for i in range(m) for j in range(i + 1, m)]).T
    counts = rng.integers(1, 15, size=(a.size, 3))
    names = np.array([f"m{k}" for k in range(m)], dtype=object)
    data = br.Comparisons.from_cells(names[a], names[b], counts[:, 0], counts[:, 1], counts[:, 2])
    framework = br.Davidson(k_tie=1, k_cov=0)
    structure = compiled(framework, framework.prepare(data), prior="flat")
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
