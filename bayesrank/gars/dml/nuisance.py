"""DMLRank's nuisance models: outcome probabilities μ(x, j, k) and labelling propensities π(x, j, k).

Both are classifiers on the rows ``[x, j, k(, judge probabilities)]`` with the items j (shown
first) and k as categorical features: one multiclass model of the outcome category, trained
on the labelled comparisons (labelling is at random given the context, so these estimate μ),
and one binary model of "this ordered pair was labelled in this context". Learners:

``"spline-logistic"`` (default)
    Multinomial logistic regression on cubic B-splines of each feature, one smooth additive
    function per ordered pair; judge probabilities enter as log-probabilities (with the
    remainder 1 − Σ as one more when a category's column is left out); the design is
    sparse (a row has nonzeros only in its own pair's block). For a few smooth features it
    learns μ with far less data than trees: on the paper's NonlinearTie simulator (2 features,
    3600 labels) its error in μ̂ was 0.063 against 0.09 for boosted trees, which is what Rank
    Centrality's second-order remainder needs (debiased coverage 0.93–0.97 against 0.31–0.41,
    ``bench/results/gars.md``). It cannot learn interactions between features beyond the pair.
``"hist-gradient-boosting"``
    scikit-learn's ``HistGradientBoostingClassifier`` with native categorical features: for
    many features or interactions, given enough labels.
``"lightgbm"``
    ``lightgbm.LGBMClassifier`` (``pip install 'bayesrank[lightgbm]'``), the paper's choice.
``"cell-means"``
    Frequencies per ordered pair, ignoring the context: with no features this is the
    saturated model, and DMLRank equals its MLE with the delta method.
any scikit-learn classifier
    An estimator with ``fit`` / ``predict_proba`` (cloned for every fold).
"""

from __future__ import annotations

from importlib.util import find_spec

import numpy as np
from scipy.sparse import csr_matrix, hstack
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import SplineTransformer
from threadpoolctl import threadpool_limits

from bayesrank.errors import BayesrankError
from bayesrank.gars.dml.learners import LEARNERS
from bayesrank.gars.dml.records import Records

#: Rows of the propensity model beyond which unlabelled pairs are subsampled (and weighted up).
MAX_PROPENSITY_ROWS = 500_000
#: OpenMP / BLAS threads of the learners. One by default, because spinning OpenMP threads stall
#: on a machine whose cores are busy; raise it on a dedicated multi-core machine.
THREADS = 1


def check_learner(learner) -> None:
    """Refuse a learner that is neither a known name (:data:`LEARNERS`, installed) nor a classifier."""
    if isinstance(learner, str):
        if learner not in LEARNERS:
            raise BayesrankError(f"unknown learner {learner!r}; use one of {', '.join(LEARNERS)} or a scikit-learn "
                                 "classifier.")
        if learner == "lightgbm" and find_spec("lightgbm") is None:
            raise BayesrankError("learner 'lightgbm' needs lightgbm, which is not installed: "
                                 "pip install 'bayesrank[lightgbm]' (or use 'hist-gradient-boosting').")
    elif not (hasattr(learner, "fit") and hasattr(learner, "predict_proba")):
        raise BayesrankError(f"a learner needs fit and predict_proba; got {type(learner).__name__}.")


def rows(records: Records, ctx, first, second) -> np.ndarray:
    """Feature rows ``[x, j, k(, judge)]`` of (context, ordered pair) triples."""
    parts = [records.X[ctx], first[:, None], second[:, None]]
    if records.judge is not None:
        parts.append(records.judge[ctx, first, second])
    return np.column_stack(parts).astype(float)


class SplineLogistic(ClassifierMixin, BaseEstimator):
    """Multinomial logistic regression on [1, B-splines of each feature] ⊗ one-hot(ordered
    pair), plus log judge probabilities; the rows are ``[x (p), j, k, judge (q)]``.

    Parameters
    ----------
    p : int
        Number of context features (the pair is in columns p and p + 1).
    n_items : int
    n_knots : int
    C : float
        Inverse L2 penalty (default 1). Choosing it by held-out log-loss instead (among
        0.01…3, on a fifth of the rows) fitted μ better with five features on 1500 contexts
        (0.645 against 0.661) but smoothed μ̂ more than Rank Centrality's second-order remainder
        allows: its debiased coverage fell to 0.85 ± 0.05 at n = 1000 and 2000 on the paper's
        simulator (53 runs; 0.95 and 0.93 with C = 1 over 177 runs, ``bench/results/gars.md``).
        Pass ``SplineLogistic(p, n_items, C=...)`` as the learner to choose another.
    """

    def __init__(self, p: int = 0, n_items: int = 2, n_knots: int = 5, C: float = 1.0):
        self.p, self.n_items, self.n_knots, self.C = p, n_items, n_knots, C

    def _design(self, X):
        """Sparse ``[1, splines(x)] ⊗ one-hot(pair)`` (each row has nonzeros only in its own
        pair's block, so the design grows with rows × basis, not rows × basis × pairs), then the
        log judge probabilities."""
        X = np.asarray(X, dtype=float)
        p, K, n = self.p, self.n_items, len(X)
        # [1, splines] row by row, built in place (no COO intermediate: at 10⁶ rows it doubled the peak)
        splines = self.splines_.transform(X[:, :p]).tocsr() if p else csr_matrix((n, 0))
        splines.eliminate_zeros()
        per_row = np.diff(splines.indptr) + 1
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(per_row, out=indptr[1:])
        is_one = np.zeros(indptr[-1], dtype=bool)
        is_one[indptr[:-1]] = True
        width = 1 + splines.shape[1]
        pair = (X[:, p] * K + X[:, p + 1]).astype(np.int64)
        indices = np.empty(indptr[-1], dtype=np.int64)
        data = np.empty(indptr[-1])
        indices[is_one], data[is_one] = 0, 1.0
        indices[~is_one], data[~is_one] = splines.indices + 1, splines.data
        indices += np.repeat(pair * width, per_row)
        del splines, is_one
        design = csr_matrix((data, indices, indptr), shape=(n, width * K * K))
        judge = X[:, p + 2:]
        if judge.shape[1]:
            if self.remainder_:
                judge = np.hstack([judge, 1.0 - judge.sum(axis=1, keepdims=True)])
            design = hstack([design, csr_matrix(np.log(np.clip(judge, 1e-6, 1.0)))], format="csr")
        return design

    def fit(self, X, y, sample_weight=None):
        X = np.asarray(X, dtype=float)
        if self.p:
            self.splines_ = SplineTransformer(n_knots=self.n_knots, degree=3, sparse_output=True).fit(X[:, :self.p])
        # judge columns that do not sum to one leave a category out: its log-probability is the
        # remainder's, a column decided here so that every later design has the same width
        judge = X[:, self.p + 2:]
        self.remainder_ = bool(judge.shape[1]) and float(np.abs(1.0 - judge.sum(axis=1)).max()) > 1e-6
        self.model_ = LogisticRegression(C=self.C, max_iter=1000).fit(self._design(X), y, sample_weight=sample_weight)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(self._design(X))


def _classifier(learner, categorical: list[int], random_seed: int, n_items: int = 2):
    if not isinstance(learner, str):
        return clone(learner)
    if learner == "spline-logistic":
        return SplineLogistic(p=categorical[0], n_items=n_items)
    if learner == "lightgbm":
        from lightgbm import LGBMClassifier  # optional extra, checked by check_learner

        return LGBMClassifier(n_estimators=200, learning_rate=0.05, num_leaves=7, min_child_samples=40,
                              reg_lambda=1.0, random_state=random_seed, verbose=-1)
    # small trees and early stopping on a held-out fifth: without them the 200-round default
    # overfitted the paper's simulator (held-out log-loss 0.82 against 0.66 with them)
    return HistGradientBoostingClassifier(max_iter=500, learning_rate=0.05, max_leaf_nodes=7, min_samples_leaf=40,
                                          l2_regularization=1.0, categorical_features=categorical,
                                          early_stopping=True, validation_fraction=0.2, n_iter_no_change=10,
                                          random_state=random_seed)


def _fit(model, X, y, learner, categorical, sample_weight=None):
    with threadpool_limits(THREADS):
        if learner == "lightgbm":
            return model.fit(X, y, sample_weight=sample_weight, categorical_feature=categorical)
        return model.fit(X, y, sample_weight=sample_weight)


def _proba(model, X) -> np.ndarray:
    with threadpool_limits(THREADS):
        return model.predict_proba(X)


class OutcomeModel:
    """μ̂(x, j, k): probabilities of the ``n_categories`` outcome categories."""

    def __init__(self, learner, n_categories: int, random_seed: int = 0):
        self.learner, self.n_categories, self.random_seed = learner, n_categories, random_seed

    def fit(self, records: Records, index: np.ndarray) -> OutcomeModel:
        """Train on the labelled comparisons ``index``."""
        C, K = self.n_categories, records.n_items
        y = records.label[index]
        first, second = records.first[index], records.second[index]
        counts = np.bincount(y, minlength=C).astype(float)
        self.pooled_ = counts / counts.sum()
        if self.learner == "cell-means":
            table = np.zeros((K, K, C))
            np.add.at(table, (first, second, y), 1.0)
            n = table.sum(axis=-1, keepdims=True)
            self.table_ = np.where(n > 0, table / np.where(n > 0, n, 1.0), self.pooled_)
            return self
        self.model_ = None
        if np.count_nonzero(counts) > 1:  # one class only: its frequency is the prediction
            p = records.X.shape[1]
            self.model_ = _classifier(self.learner, [p, p + 1], self.random_seed, K)
            _fit(self.model_, rows(records, records.ctx[index], first, second), y, self.learner, [p, p + 1])
        return self

    def predict(self, records: Records, ctx, first, second) -> np.ndarray:
        """``(m, C)`` probabilities for (context, ordered pair) triples."""
        if self.learner == "cell-means":
            return self.table_[first, second]
        if self.model_ is None:
            return np.broadcast_to(self.pooled_, (len(ctx), self.n_categories)).copy()
        proba = _proba(self.model_, rows(records, ctx, first, second))
        out = np.zeros((len(ctx), self.n_categories))
        out[:, np.asarray(self.model_.classes_, dtype=int)] = proba
        return out


class PropensityModel:
    """π̂(x, j, k): the probability that an ordered pair is labelled in a context."""

    def __init__(self, learner, random_seed: int = 0):
        self.learner, self.random_seed = learner, random_seed

    def fit(self, records: Records, contexts: np.ndarray) -> PropensityModel:
        """Train on every ordered pair of the given contexts (labelled = 1)."""
        K = records.n_items
        in_train = np.zeros(records.n_contexts, dtype=bool)
        in_train[contexts] = True
        labelled = np.flatnonzero(in_train[records.ctx])
        n_pairs = K * (K - 1)
        if self.learner == "cell-means":
            table = np.zeros((K, K))
            np.add.at(table, (records.first[labelled], records.second[labelled]), 1.0)
            self.table_ = table / len(contexts)
            return self
        rate = len(labelled) / (len(contexts) * n_pairs)
        self.model_ = None
        self.rate_ = rate
        if 0 < rate < 1:
            j, k = np.nonzero(~np.eye(K, dtype=bool))
            n_rows = len(contexts) * n_pairs
            keep = min(1.0, MAX_PROPENSITY_ROWS / n_rows)
            rng = np.random.default_rng(self.random_seed)
            if keep < 1:
                chosen = np.flatnonzero(rng.random(n_rows) < keep)
            else:
                chosen = np.arange(n_rows)
            ctx = contexts[chosen // n_pairs]
            first, second = j[chosen % n_pairs], k[chosen % n_pairs]
            selected = np.zeros((records.n_contexts, K, K), dtype=bool) if keep == 1 else None
            if selected is not None:
                selected[records.ctx[labelled], records.first[labelled], records.second[labelled]] = True
                y = selected[ctx, first, second]
                weight = None
            else:  # every labelled pair, and a weighted sample of the others
                key = (records.ctx[labelled] * K + records.first[labelled]) * K + records.second[labelled]
                y = np.isin((ctx * K + first) * K + second, key)
                ctx, first, second = (np.concatenate([v[~y], w]) for v, w in
                                      ((ctx, records.ctx[labelled]), (first, records.first[labelled]),
                                       (second, records.second[labelled])))
                y = np.r_[np.zeros(len(ctx) - len(labelled), dtype=bool), np.ones(len(labelled), dtype=bool)]
                weight = np.where(y, 1.0, 1.0 / keep)
            X = np.column_stack([records.X[ctx], first, second]).astype(float)
            p = records.X.shape[1]
            self.model_ = _classifier(self.learner, [p, p + 1], self.random_seed, K)
            _fit(self.model_, X, y.astype(int), self.learner, [p, p + 1], weight)
        return self

    def predict(self, records: Records, ctx, first, second) -> np.ndarray:
        if self.learner == "cell-means":
            return self.table_[first, second]
        if self.model_ is None:
            return np.full(len(ctx), self.rate_)
        X = np.column_stack([records.X[ctx], first, second]).astype(float)
        return _proba(self.model_, X)[:, list(self.model_.classes_).index(1)]


__all__ = [
    "MAX_PROPENSITY_ROWS", "OutcomeModel", "PropensityModel", "SplineLogistic", "THREADS", "check_learner", "rows"
]
