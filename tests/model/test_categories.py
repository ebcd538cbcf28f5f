"""Per-category leaderboards: records grouped by a category, the hierarchical ByCategory model."""

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.data.simulate import battles
from bayesrank.inference.structure import structure_of


@pytest.fixture(scope="module")
def records():
    rng = np.random.default_rng(0)
    m = 6
    mu = np.linspace(-1, 1, m)
    truth = {c: mu + 0.3 * rng.standard_normal(m) for c in ("en", "zh", "de")}
    frames = [battles(s - s.mean(), n, rng, categories=[c]) for (c, s), n in zip(truth.items(), (1500, 800, 100))]
    return pd.concat(frames, ignore_index=True), truth


def test_by_reads_a_category_column(records):
    frame, _ = records
    data = br.load(frame, by="category")
    assert data.judges == ("de", "en", "zh") and data.n_comparisons == len(frame)
    with pytest.raises(br.DataError, match="category column 'lang'"):
        br.load(frame, by="lang")
    judge_records = frame.assign(judge_model="j", judge_preferred_model="a").drop(columns="winner")
    with pytest.raises(br.DataError, match="grouped by their judge"):
        br.load(judge_records, by="category")


def test_by_category_needs_nuts_and_categories(records):
    frame, _ = records
    with pytest.raises(br.ModelSpecError, match="method='nuts'"):
        br.fit(br.ByCategory(), br.load(frame, by="category"))
    with pytest.raises(br.DataError, match="by=COLUMN"):
        br.ByCategory().prepare(br.load(frame))


def test_by_category_likelihood_equals_numpy_reference(records):
    frame, _ = records
    fw = br.ByCategory()
    data = fw.prepare(br.load(frame, by="category"))
    structure = structure_of(fw, data, "weak")
    rng = np.random.default_rng(1)
    mu = rng.standard_normal(data.n_items)
    offset = rng.standard_normal((data.n_judges, data.n_items))
    nat = {"score": mu - mu.mean(), "spread": np.array(0.7),
           "category_offset": offset - offset.mean(axis=1, keepdims=True)}
    lp = structure.log_probs(nat, {"item_a": data.a, "item_b": data.b, "judge_index": data.judge, "first": data.first})
    s = nat["score"][None] + 0.7 * nat["category_offset"]
    d = s[data.judge, data.a] - s[data.judge, data.b]
    np.testing.assert_allclose(lp[:, 0], -np.logaddexp(0, -d), rtol=1e-12)
    np.testing.assert_allclose(lp[:, 1], -np.logaddexp(0, d), rtol=1e-12)
    assert structure.n_free == (data.n_items - 1) * (1 + data.n_judges) + 1


@pytest.mark.slow
def test_hierarchical_beats_separate_fits_for_small_categories():
    """Two large and four small simulated categories: partial pooling gives a lower RMSE to the
    true per-category scores than separate fits, in the small categories."""
    rng = np.random.default_rng(0)
    m = 8
    mu = np.linspace(-1.2, 1.2, m)
    sizes = {"c0": 3000, "c1": 3000, "c2": 120, "c3": 120, "c4": 120, "c5": 120}
    truth = {c: mu + 0.35 * rng.standard_normal(m) for c in sizes}
    truth = {c: pd.Series(s - s.mean(), index=[f"m{k:02d}" for k in range(m)]) for c, s in truth.items()}
    frame = pd.concat([battles(truth[c].to_numpy(), n, rng, categories=[c]) for c, n in sizes.items()],
                      ignore_index=True)
    kw = dict(method="nuts", draws=500, tune=500, chains=2, random_seed=0)
    pooled = br.fit(br.ByCategory(), br.load(frame, by="category"), **kw)
    boards = pooled.categories()

    def rmse(got, want):
        got = got.reindex(want.index)
        return float(np.sqrt(np.mean((got - got.mean() - want) ** 2)))

    small = [c for c, n in sizes.items() if n < 1000]
    hier = [rmse(boards[boards["category"] == c].set_index("name")["score"], truth[c]) for c in small]
    separate = [rmse(br.fit(br.BradleyTerry(), br.load(frame[frame["category"] == c]), **kw).scores(), truth[c])
                for c in small]
    assert np.mean(hier) < np.mean(separate), (hier, separate)
