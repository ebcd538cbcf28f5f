"""Frequentist check of the Wald intervals: 95% intervals of score differences cover ≈ 95%."""

import numpy as np
import pytest

import bayesrank as br
from tests.conftest import simulate_counts


@pytest.mark.slow
def test_wald_intervals_of_differences_cover_95_percent():
    rng = np.random.default_rng(2024)
    truth = np.array([-1.0, -0.6, -0.3, 0.0, 0.2, 0.5, 0.7, 0.9])
    truth -= truth.mean()
    framework = br.Davidson(k_tie=0)
    hits, total, replicates = 0, 0, 200
    i, j = np.triu_indices(truth.size, k=1)
    for _ in range(replicates):
        data = simulate_counts(truth, 60, rng, eta=-0.5)
        fit = br.fit(framework, data, draws=10)
        assert fit.converged
        s = fit.tree["estimate"]["score"].values
        C = fit.tree["estimate"]["score_cov"].values
        diff = s[i] - s[j]
        se = np.sqrt(C[i, i] + C[j, j] - 2 * C[i, j])
        covered = np.abs(diff - (truth[i] - truth[j])) <= 1.959964 * se
        hits += covered.sum()
        total += covered.size
    coverage = hits / total
    print(f"coverage {coverage:.4f} over {replicates} data sets, {total} intervals")
    assert 0.93 <= coverage <= 0.97
