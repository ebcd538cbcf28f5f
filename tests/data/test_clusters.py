"""Cells that keep their clusters (bayesrank/data/clusters.py and the readers' ``cluster=``): the rows
by cell × cluster add up to the cells, equal a pandas count of the records written here, follow every
change of the cells, and bad cluster columns are refused in words."""

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.data.simulate import clustered_battles
from bayesrank.data.weights import inverse_pair_count, reweighted


@pytest.fixture(scope="module")
def votes():
    rng = np.random.default_rng(7)
    frame = clustered_battles(np.linspace(-1, 1, 6), 40, rng, eta=-0.5)
    frame["prompt"] = np.array([f"p{k}" for k in rng.integers(0, 12, len(frame))], dtype=object)
    return frame


def reference_rows(frame, column):
    """Comparisons of each (pair, cluster) counted with pandas, oriented by name (a < b)."""
    flip = frame["model_a"] > frame["model_b"]
    a = np.where(flip, frame["model_b"], frame["model_a"])
    b = np.where(flip, frame["model_a"], frame["model_b"])
    won_a = np.where(flip, frame["winner"] == "model_b", frame["winner"] == "model_a")
    won_b = np.where(flip, frame["winner"] == "model_a", frame["winner"] == "model_b")
    table = pd.DataFrame({"a": a, "b": b, "cluster": frame[column], "wins_a": won_a.astype(float),
                          "wins_b": won_b.astype(float), "ties": (frame["winner"] == "tie").astype(float)})
    return table.groupby(["a", "b", "cluster"]).sum().sort_index()


def rows_of(data, column):
    c = data.clusters
    k = c.names.index(column)
    frame = pd.DataFrame({"a": np.asarray(data.items, dtype=object)[data.a[c.cell]],
                          "b": np.asarray(data.items, dtype=object)[data.b[c.cell]],
                          "cluster": np.asarray(c.levels[k], dtype=object)[c.codes[:, k]],
                          "wins_a": c.counts[:, 0], "wins_b": c.counts[:, 1], "ties": c.counts[:, 2]})
    return frame.groupby(["a", "b", "cluster"]).sum().sort_index()


def test_rows_by_cell_and_cluster_count_the_records(votes):
    data = br.load(votes, cluster="user")
    plain = br.load(votes)
    assert np.array_equal(data.counts(), plain.counts()) and data.n_cells == plain.n_cells
    assert data.clusters.agrees_with(data.counts())
    pd.testing.assert_frame_equal(rows_of(data, "user"), reference_rows(votes, "user"), check_dtype=False)
    assert data.clusters.n_clusters() == {"user": 40}
    assert data.summary()["clusters"] == {"user": 40}


def test_two_columns_and_every_file_format(votes, tmp_path):
    data = br.load(votes, cluster=("user", "prompt"))
    assert data.clusters.names == ("user", "prompt")
    pd.testing.assert_frame_equal(rows_of(data, "prompt"), reference_rows(votes, "prompt"), check_dtype=False)
    for suffix in ("csv", "parquet", "jsonl"):
        path = tmp_path / f"votes.{suffix}"
        if suffix == "csv":
            votes.to_csv(path, index=False)
        elif suffix == "parquet":
            votes.to_parquet(path)
        else:
            votes.to_json(path, orient="records", lines=True)
        read = br.load(path, cluster=("user", "prompt"))
        assert np.array_equal(read.clusters.codes, data.clusters.codes)
        assert np.array_equal(read.clusters.counts, data.clusters.counts)


def test_judge_records_by_question_and_by_judge(mtbench):
    data = br.load("mtbench-judges", cluster=("question_id", "judge_model"))
    assert data.clusters.n_clusters() == {"question_id": 80, "judge_model": 20}
    assert np.array_equal(data.counts(), mtbench.counts())
    judge = data.clusters.codes[:, 1]
    assert np.array_equal(np.asarray(data.clusters.levels[1])[judge],
                          np.asarray(data.judges)[data.judge[data.clusters.cell]])


def test_every_change_of_the_cells_changes_the_rows_alike(votes):
    data = br.load(votes, cluster="user")
    for changed in (data.ties_as_halves(), data.without_ties(), data.subset(np.arange(data.n_cells) % 3 > 0),
                    reweighted(data, inverse_pair_count(data)), data.split(0.3, random_seed=1)[1]):
        assert changed.clusters.agrees_with(changed.counts())
    assert data.without_ties().clusters.counts[:, 2].sum() == 0


def test_rows_are_saved_and_read_back_with_a_fit(votes, tmp_path):
    data = br.load(votes, cluster=("user", "prompt"))
    again = br.Comparisons.from_xarray(data.to_xarray())
    assert again.clusters.names == data.clusters.names and again.clusters.levels == data.clusters.levels
    assert np.array_equal(again.clusters.counts, data.clusters.counts)
    fit = br.fit(br.BradleyTerry(ties="drop"), data, cluster="user")
    loaded = br.Fit.load(fit.save(tmp_path / "fit.nc"))
    assert loaded.data.clusters.n_clusters() == data.clusters.n_clusters() and loaded.cluster == ("user",)


def test_a_record_without_its_cluster_is_refused_not_dropped(votes):
    bad = votes.copy()
    bad.loc[17, "user"] = None
    bad.loc[30, "user"] = "  "
    with pytest.raises(br.DataError, match=r"record 17: cluster column 'user' is missing or empty \(2 such records\)"):
        br.load(bad, cluster="user")


def test_bad_cluster_options_are_refused_in_words(votes, arena):
    with pytest.raises(br.DataError, match=r"cluster column\(s\) 'session' \(cluster=\) not found.*columns: "):
        br.load(votes, cluster="session")
    with pytest.raises(br.DataError, match="one column .* or two"):
        br.load(votes, cluster=("user", "prompt", "model_a"))
    with pytest.raises(br.DataError, match="single cluster"):
        br.load(votes.assign(user="everyone"), cluster="user")
    with pytest.raises(br.DataError, match="aggregated counts without record columns"):
        br.load("arena-2024", cluster="user")
    with pytest.raises(br.DataError, match="carry no cluster column"):
        br.load(arena, cluster="user")
    with pytest.raises(br.DataError, match=r"read with cluster column\(s\) 'user', not 'prompt'"):
        br.load(br.load(votes, cluster="user"), cluster="prompt")


def test_judge_verdicts_left_out_need_no_cluster():
    frame = pd.DataFrame({"model_a": ["x", "x", "y", "x"], "model_b": ["y", "z", "z", "y"],
                          "judge_model": ["j1", "j1", "j2", "j2"], "judge_preferred_model": ["a", "b", "a", "unknown"],
                          "question_id": ["q1", "q2", "q1", None]})
    data = br.load(frame, cluster="question_id")
    assert data.dropped == {"unknown verdict": 1} and data.clusters.n_clusters() == {"question_id": 2}


@pytest.mark.parametrize("drop", [False, True])
def test_clusters_count_duplicate_records_as_the_cells_do(votes, drop):
    """Records exported twice (an identifier column, every column read repeated) are counted once
    in the cells with drop_duplicates=True, and once in their cluster too; two records of one
    identifier but different clusters are not duplicates."""
    frame = votes.assign(id=np.arange(len(votes)).astype(str))
    twice = pd.concat([frame, frame.iloc[:25], frame.iloc[25:30].assign(user="someone else")], ignore_index=True)
    data = br.load(twice, cluster="user", drop_duplicates=drop)
    assert data.clusters.agrees_with(data.counts())
    expected = twice if not drop else pd.concat([frame, frame.iloc[25:30].assign(user="someone else")])
    pd.testing.assert_frame_equal(rows_of(data, "user"), reference_rows(expected, "user"), check_dtype=False)
    assert data.n_comparisons == len(expected)
