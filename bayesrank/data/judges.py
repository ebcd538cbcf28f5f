"""Agreement between LLM judges, from their verdicts on shared records.

Two judges that return the same verdict on nearly every record they share are probably the
same model counted twice, which breaks the independence of judges that judge-aware models
assume. The agreement table is computed once, in DuckDB, when judge records are read
(:func:`bayesrank.data.aggregate.aggregate`), so the check works for every input format.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.errors import DataError

#: Share of identical verdicts on shared records above which two judges are near duplicates.
DUPLICATE_AGREEMENT = 0.98
#: Fewest shared records for the near-duplicate check to speak.
DUPLICATE_MIN_SHARED = 20


def near_duplicate_judges(
    agreement: pd.DataFrame, threshold: float = DUPLICATE_AGREEMENT, min_shared: int = DUPLICATE_MIN_SHARED
) -> list[tuple[str, str, int, float]]:
    """Pairs of judges agreeing on at least ``threshold`` of at least ``min_shared`` shared records.

    Returns
    -------
    list of (judge, judge, shared, agreement)
    """
    hits = agreement[(agreement["agreement"] >= threshold) & (agreement["shared"] >= min_shared)]
    return [(r.judge_1, r.judge_2, int(r.shared), float(r.agreement)) for r in hits.itertuples()]


def standardized_log_length(lengths) -> np.ndarray:
    """z = (ℓ − mean ℓ) / sd ℓ with ℓ = log(1 + length): the judge-aware paper's question-length
    covariate (App. F.6; sample sd, ddof = 1).

    Raises
    ------
    DataError
        When the lengths are all equal (the covariate's effect is then not identified).
    """
    ell = np.log1p(np.asarray(lengths, dtype=float))
    sd = ell.std(ddof=1)
    if not np.isfinite(sd) or sd == 0:
        raise DataError("the covariate is constant: its effect is not identified (it needs two distinct values).")
    return (ell - ell.mean()) / sd


__all__ = ["DUPLICATE_AGREEMENT", "DUPLICATE_MIN_SHARED", "near_duplicate_judges", "standardized_log_length"]
