"""DMLRank's data: contexts (prompts) with features, and the comparisons labelled in them.

One table, one row per (context, ordered pair) that was labelled or that carries judge
probabilities, plus optionally one row per context with nothing labelled:

``context``
    Context (prompt) id; default column ``context``. Without it every row is its own context
    (the at-most-one-pair design of Chatbot Arena).
feature columns
    Numeric features of the context, the same on every row of a context.
``model_a``, ``model_b``
    The ordered pair: ``model_a`` was shown first. Empty on a context-only row.
``winner``
    ``model_a`` / ``a``, ``model_b`` / ``b``, ``tie`` / ``c``, ``tie (bothbad)`` / ``bothbad``;
    empty when the pair was not labelled by a human (a row that only carries judge
    probabilities). With three categories (``win-loss-tie``, ``binary``) a "both bad" tie is a
    tie: dropping labels by their value would make labelling depend on the outcome.
judge-probability columns
    An LLM judge's probabilities of the categories for this ordered pair (features of the
    outcome model); then every ordered pair of every context needs a row.
``propensity`` column (optional)
    The known probability that this pair was labelled in this context (a designed
    labelling policy); otherwise it is estimated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from bayesrank.data.aggregate import names_as_text
from bayesrank.data.bundled import DATASETS, dataset_path
from bayesrank.data.files import read_frame
from bayesrank.errors import DataError, column_names

#: Accepted spellings of each outcome category (index = category).
WINNERS = (("model_a", "a"), ("model_b", "b"), ("tie", "c"), ("tie (bothbad)", "bothbad", "both bad"))


@dataclass(frozen=True, eq=False)
class Records:
    """Contexts and labelled comparisons as arrays (see the module docstring).

    Attributes
    ----------
    items : tuple of str
    context_ids : ndarray
        Original id of each of the n contexts.
    X : ndarray
        ``(n, p)`` context features.
    feature_names : tuple of str
    ctx, first, second, label : ndarray of int
        Labelled comparisons: context index, item shown first and second, category.
    propensity : ndarray or None
        Known labelling probability of each labelled comparison.
    judge : ndarray or None
        ``(n, K, K, q)`` judge probabilities of every ordered pair.
    judge_names : tuple of str
    n_categories : int
    """

    items: tuple[str, ...]
    context_ids: np.ndarray
    X: np.ndarray
    feature_names: tuple[str, ...]
    ctx: np.ndarray
    first: np.ndarray
    second: np.ndarray
    label: np.ndarray
    propensity: np.ndarray | None
    judge: np.ndarray | None
    judge_names: tuple[str, ...]
    n_categories: int

    @property
    def n_contexts(self) -> int:
        return len(self.context_ids)

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def n_labels(self) -> int:
        return len(self.label)

    def one_hot(self) -> np.ndarray:
        """``(n_labels, C)`` labels as indicator vectors."""
        return np.eye(self.n_categories)[self.label]


def read_records(data, *, features: Sequence[str] = (), judge_probs: Sequence[str] = (), context: str = "context",
                 propensity: str | None = None, n_categories: int = 3, format: str | None = None) -> Records:
    """Parse a table of contexts and comparisons (module docstring) into :class:`Records`.

    Parameters
    ----------
    data : DataFrame, str or Path
        The table, a CSV / Parquet / JSON / JSONL file of it, or the name of a bundled dataset
        (:func:`bundled_records`).
    features, judge_probs : str or sequence of str
        Column names (one name or several, each once: :func:`bayesrank.errors.column_names`).
    context : str
        Context id column; when absent every row is its own context.
    propensity : str, optional
        Column of known labelling probabilities.
    n_categories : {3, 4}
        4 keeps "both bad" ties apart.

    Raises
    ------
    DataError
        Missing columns, unknown winners or items, non-numeric or varying features, repeated
        labels of one pair in one context, missing judge rows, propensities outside (0, 1].
    """
    if isinstance(data, str) and data in DATASETS:  # a bundled dataset, by name as every command takes it
        data, context = bundled_records(data), "context"
    frame = data if isinstance(data, pd.DataFrame) else read_frame(Path(data), format)
    source = "the records" if isinstance(data, pd.DataFrame) else str(data)
    features, judge_probs = list(column_names(features, "features")), list(column_names(judge_probs, "judge_probs"))
    wanted = ["model_a", "model_b", *features, *judge_probs] + ([propensity] if propensity else [])
    missing = [c for c in wanted if c not in frame.columns]
    if "winner" not in frame.columns and not judge_probs:
        missing.append("winner")
    if missing:
        raise DataError(f"{source} has no column(s) {missing}; it has {list(frame.columns)[:12]}.")
    if frame.empty:
        raise DataError(f"{source} is empty.")
    ids = frame[context].to_numpy() if context in frame.columns else np.arange(len(frame))
    codes, context_ids = pd.factorize(ids, sort=False)
    if (codes < 0).any():
        raise DataError(f"row {int(np.flatnonzero(codes < 0)[0])} of {source} has no '{context}'.")
    n = len(context_ids)
    X = _features(frame, features, codes, n, source, context)
    has_pair = frame["model_a"].notna().to_numpy() & frame["model_b"].notna().to_numpy()
    names_a, names_b = (_names(frame[c], has_pair, c, source) for c in ("model_a", "model_b"))
    items = tuple(sorted(set(names_a[has_pair]) | set(names_b[has_pair])))
    if len(items) < 2:
        raise DataError(f"{source} compares fewer than two items; pass rows with model_a and model_b.")
    index = {name: k for k, name in enumerate(items)}
    a = np.array([index.get(x, -1) if ok else -1 for x, ok in zip(names_a, has_pair)])
    b = np.array([index.get(x, -1) if ok else -1 for x, ok in zip(names_b, has_pair)])
    same = np.flatnonzero(has_pair & (a == b))
    if same.size:
        raise DataError(f"row {int(same[0])} of {source} compares '{names_a[same[0]]}' with itself.")
    label = _labels(frame, n_categories, source) if "winner" in frame.columns else np.full(len(frame), -1)
    bad = np.flatnonzero((label >= 0) & ~has_pair)
    if bad.size:
        raise DataError(f"row {int(bad[0])} of {source} has a winner but no model_a / model_b.")
    keep = label >= 0
    ctx, first, second = codes[keep], a[keep], b[keep]
    K = len(items)
    key = (ctx * K + first) * K + second
    dup = pd.Series(key).duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(keep)[np.flatnonzero(dup)[0]])
        raise DataError(f"row {i} of {source} labels the pair ({names_a[i]}, {names_b[i]}) a second time in context "
                        f"{ids[i]!r}; give each label its own context or keep one.")
    known = None
    if propensity:
        known = pd.to_numeric(frame[propensity], errors="coerce").to_numpy(float)[keep]
        off = np.flatnonzero(~((known > 0) & (known <= 1)))
        if off.size:
            i = int(np.flatnonzero(keep)[off[0]])
            raise DataError(f"row {i} of {source}: column '{propensity}' must be a probability in (0, 1] on every "
                            f"labelled row, got {frame[propensity].iloc[i]!r}.")
    judge = _judge(frame, judge_probs, codes, a, b, has_pair, items, context_ids, source) if judge_probs else None
    return Records(items=items, context_ids=np.asarray(context_ids), X=X, feature_names=tuple(features),
                   ctx=ctx.astype(np.int64), first=first.astype(np.int64), second=second.astype(np.int64),
                   label=label[keep].astype(np.int64), propensity=known, judge=judge,
                   judge_names=tuple(judge_probs), n_categories=n_categories)


def _names(column: pd.Series, present: np.ndarray, name: str, source: str) -> np.ndarray:
    """The names of the rows with a pair, by the one reading rule of names
    (:func:`bayesrank.data.aggregate.names_as_text`); None on the other rows."""
    out = np.full(len(column), None, dtype=object)
    if present.any():
        out[present] = names_as_text(column[present], name, source, what="labelled row")
    return out
def bundled_records(name: str) -> pd.DataFrame:
    """A bundled dataset as DMLRank records.

    ``mtbench-judges``: each (question, judge) is a context, each verdict the label of the pair
    shown in it (``model_a`` first; "unknown" verdicts are left out, as everywhere). No features,
    so DMLRank is the saturated model's estimate with the delta method.

    Raises
    ------
    DataError
        For ``arena-2024``: its pair counts have no contexts, no display order and leave most
        pairs never compared, so there is nothing to cross-fit; its GARS come from
        ``bayesrank gars arena-2024`` (the counts, or a model's probabilities for the pairs never
        compared).
    """
    spec = DATASETS[name]
    if spec.format == "counts":
        raise DataError(f"{name} is aggregated pair counts without contexts (prompts), display order or labels per "
                        "prompt, and most pairs were never compared: DMLRank has nothing to cross-fit there. Its GARS "
                        f"come from 'bayesrank gars {name}' (raw counts, or a model's probabilities for pairs never "
                        "compared); DMLRank takes records of labelled pairs per context (see 'bayesrank dml --help').")
    with resources.as_file(dataset_path(name)) as path:
        frame = read_frame(path, spec.format)
    frame = frame[frame["judge_preferred_model"] != "unknown"]
    winner = frame["judge_preferred_model"].map({"a": "model_a", "b": "model_b", "c": "tie"})
    return pd.DataFrame({"context": frame["question_id"].astype(str) + " | " + frame["judge_model"].astype(str),
                         "model_a": frame["model_a"], "model_b": frame["model_b"], "winner": winner}
                        ).reset_index(drop=True)


def _features(frame, features, codes, n, source, context) -> np.ndarray:
    if not features:
        return np.zeros((n, 0))
    values = frame[features].apply(pd.to_numeric, errors="coerce")
    bad = values.isna().to_numpy()
    if bad.any():
        i, j = (int(x[0]) for x in np.nonzero(bad))
        raise DataError(f"row {i} of {source}: feature '{features[j]}' must be a number, got "
                        f"{frame[features[j]].iloc[i]!r}.")
    values = values.to_numpy(float)
    X = np.zeros((n, len(features)))
    X[codes[::-1]] = values[::-1]  # each context's first row
    varying = np.flatnonzero(np.any(np.abs(X[codes] - values) > 1e-12 * (1 + np.abs(values)), axis=1))
    if varying.size:
        i = int(varying[0])
        raise DataError(f"row {i} of {source}: the features of context {str(frame[context].iloc[i])!r} differ "
                        "between its rows; features describe the context and must be the same on each of its rows.")
    return X


def _labels(frame, n_categories, source) -> np.ndarray:
    lookup = {}
    for c, spellings in enumerate(WINNERS):
        for s in spellings:
            lookup[s] = min(c, n_categories - 1) if c == 3 else c
    raw = frame["winner"]
    text = raw.astype("string").str.strip().str.lower()
    label = text.map(lookup)
    unknown = np.flatnonzero(raw.notna().to_numpy() & (text != "").fillna(False).to_numpy()
                             & label.isna().to_numpy())
    if unknown.size:
        i = int(unknown[0])
        raise DataError(f"row {i} of {source}: unknown winner {raw.iloc[i]!r}; use model_a, model_b, tie or "
                        "tie (bothbad), or leave it empty for an unlabelled pair.")
    return label.fillna(-1).to_numpy(np.int64)


def _judge(frame, columns, codes, a, b, has_pair, items, context_ids, source) -> np.ndarray:
    n, K = len(context_ids), len(items)
    given = frame[columns].notna().to_numpy()
    values = frame[columns].apply(pd.to_numeric, errors="coerce").to_numpy(float)
    bad = given & ~((values >= 0) & (values <= 1))   # text, a number outside [0, 1], an infinity
    if bad.any():
        r, k = (int(x[0]) for x in np.nonzero(bad))
        raise DataError(f"{source}: record {r}: judge probability {columns[k]!r} = {frame[columns[k]].iloc[r]!r} is "
                        "not a probability (a number in [0, 1]); --judge-probs names the columns of an LLM judge's "
                        "category probabilities.")
    rows = has_pair & ~np.isnan(values).any(axis=1)
    judge = np.full((n, K, K, len(columns)), np.nan)
    judge[codes[rows], a[rows], b[rows]] = values[rows]
    off = ~np.eye(K, dtype=bool)
    missing = np.isnan(judge[:, off]).any(axis=-1)
    if missing.any():
        c, p = (int(x[0]) for x in np.nonzero(missing))
        j, k = np.argwhere(off)[p]
        raise DataError(f"{source} has no judge probabilities {columns} for ({items[j]}, {items[k]}) in context "
                        f"{context_ids[c]!r}; the outcome model needs them for every ordered pair of every context.")
    judge[:, np.arange(K), np.arange(K)] = 0.0
    return judge


__all__ = ["Records", "WINNERS", "bundled_records", "read_records"]
