"""Agreement between LLM judges, from their verdicts on shared records.

Two judges that return the same verdict on nearly every record they share are probably the
same model counted twice, which breaks the independence of judges that judge-aware models
assume. The agreement table is computed once, when judge records are read
(:func:`bayesrank.data.records.from_judgements`), so the check works for every file format.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from bayesrank.errors import DataError

#: Share of identical verdicts on shared records above which two judges are near duplicates.
DUPLICATE_AGREEMENT = 0.98
#: Fewest shared records for the near-duplicate check to speak.
DUPLICATE_MIN_SHARED = 20


def agreement_table(question_id, model_a, model_b, judge, verdict) -> pd.DataFrame:
    """Share of identical verdicts of each pair of judges on the records they share.

    Parameters
    ----------
    question_id, model_a, model_b, judge : sequence
        One entry per verdict. A *record* is a (question, unordered pair of models).
    verdict : sequence of {+1, 0, -1}
        +1 when ``model_a`` was preferred, −1 when ``model_b`` was, 0 for a tie. Verdicts are
        oriented to the alphabetically first model of the pair before they are compared.

    Returns
    -------
    DataFrame
        ``judge_1, judge_2, shared, agreement``: one row per pair of judges with shared
        records (a judge's repeated verdict on one record counts once, the first).
    """
    a = np.asarray(model_a, dtype=str)
    b = np.asarray(model_b, dtype=str)
    swap = a > b
    v = np.where(swap, -np.asarray(verdict, dtype=float), np.asarray(verdict, dtype=float))
    key = pd.Series(np.asarray(question_id, dtype=str)) + "\x1f" + np.where(swap, b, a) + "\x1f" + np.where(swap, a, b)
    frame = pd.DataFrame({"key": key, "judge": np.asarray(judge, dtype=str), "v": v})
    wide = frame.drop_duplicates(["key", "judge"]).pivot(index="key", columns="judge", values="v")
    judges = list(wide.columns)
    values = wide.to_numpy(dtype=float)
    present = ~np.isnan(values)
    rows = []
    for i in range(len(judges)):
        for j in range(i + 1, len(judges)):
            both = present[:, i] & present[:, j]
            shared = int(both.sum())
            if shared:
                rows.append((judges[i], judges[j], shared, float((values[both, i] == values[both, j]).mean())))
    return pd.DataFrame(rows, columns=["judge_1", "judge_2", "shared", "agreement"])


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
