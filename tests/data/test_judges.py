"""Judge helpers: near duplicates are the pairs at or above both thresholds, and the question-length
covariate is the standardised log length of the judge-aware paper (App. F.6)."""

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.data.judges import near_duplicate_judges, standardized_log_length


def test_near_duplicates_meet_both_thresholds():
    agreement = pd.DataFrame({"judge_1": ["a", "a", "b", "c"], "judge_2": ["b", "c", "c", "d"],
                              "shared": [40, 19, 20, 100], "agreement": [0.98, 1.0, 0.99, 0.97]})
    assert near_duplicate_judges(agreement) == [("a", "b", 40, 0.98), ("b", "c", 20, 0.99)]
    assert near_duplicate_judges(agreement, threshold=0.97, min_shared=50) == [("c", "d", 100, 0.97)]


def test_length_covariate_is_the_standardised_log_length():
    lengths = np.array([10, 200, 35, 1000, 64])
    z = standardized_log_length(lengths)
    ell = np.log(1 + lengths)
    np.testing.assert_allclose(z, (ell - ell.mean()) / np.std(ell, ddof=1))
    assert z.mean() == pytest.approx(0, abs=1e-12) and z.std(ddof=1) == pytest.approx(1)
    with pytest.raises(br.DataError, match="the covariate is constant"):
        standardized_log_length([50, 50, 50])
