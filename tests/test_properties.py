"""Property-based tests (hypothesis): invariances, exact conservation of counts through every
reader and format, and readers that raise nothing but bayesrank errors on arbitrary input.

The fast tier runs a few dozen examples per property; ``-m slow`` runs many more, and a
fuzzing loop with a time budget (``BAYESRANK_FUZZ_SECONDS``, default 300) over mutated files
of every format.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import time
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bayesrank as br
from bayesrank.errors import BayesrankError

FAST = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])
SLOW = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                         HealthCheck.too_slow])

#: Names that stress the readers: spaces, quotes, commas, unicode, words read as missing elsewhere.
NAMES = st.sampled_from(["gpt-4", "claude v1", "NA", "None", "null", "a,b", 'say "hi"', "ünï", "=1+1", "-x", "1",
                         "0.5"])
OUTCOMES = ("model_a", "model_b", "tie", "tie (bothbad)")


#: Two different names: a compared item pair.
PAIRS = st.tuples(NAMES, NAMES).filter(lambda ab: ab[0] != ab[1])


@st.composite
def battles(draw, min_size=1, max_size=40):
    rows = draw(st.lists(st.tuples(PAIRS, st.sampled_from(OUTCOMES)), min_size=min_size, max_size=max_size))
    frame = pd.DataFrame([(a, b, w) for (a, b), w in rows], columns=["model_a", "model_b", "winner"])
    if (frame["winner"] == "tie (bothbad)").all():  # keep at least one comparison
        frame.loc[0, "winner"] = "tie"
    return frame


@st.composite
def count_rows(draw, min_size=1, max_size=25):
    counts = st.tuples(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6))
    rows = draw(st.lists(st.tuples(PAIRS, counts, st.sampled_from(["a", "b"])), min_size=min_size, max_size=max_size))
    frame = pd.DataFrame([(a, b, *c, f) for (a, b), c, f in rows],
                         columns=["model_a", "model_b", "wins_a", "wins_b", "ties", "first"])
    if frame[["wins_a", "wins_b", "ties"]].to_numpy().sum() == 0:
        frame.loc[0, "wins_a"] = 1
    return frame


def same(x: br.Comparisons, y: br.Comparisons) -> None:
    assert x.items == y.items
    np.testing.assert_array_equal(x.a, y.a)
    np.testing.assert_array_equal(x.b, y.b)
    np.testing.assert_array_equal(x.counts(), y.counts())
    np.testing.assert_array_equal(x.ties_bothbad, y.ties_bothbad)
    assert (x.first is None) == (y.first is None)
    if x.first is not None:
        np.testing.assert_array_equal(x.first, y.first)


def pair_totals(data: br.Comparisons) -> dict:
    """Counts per unordered pair of names, summed over positions (a, b oriented alphabetically)."""
    out = {}
    for a, b, wa, wb, t, bb in zip(data.a, data.b, data.wins_a, data.wins_b, data.ties, data.ties_bothbad):
        key = (data.items[a], data.items[b])
        prev = out.get(key, np.zeros(4))
        out[key] = prev + [wa, wb, t, bb]
    return {k: tuple(v) for k, v in out.items()}


# ---------------------------------------------------------------------- invariances
def _invariant_to_order_and_swap(frame, seed):
    data = br.load(frame)
    shuffled = frame.sample(frac=1, random_state=seed).reset_index(drop=True)
    same(br.load(shuffled), data)
    flip = {"model_a": "model_b", "model_b": "model_a", "tie": "tie", "tie (bothbad)": "tie (bothbad)"}
    swapped = frame.assign(model_a=frame["model_b"], model_b=frame["model_a"], winner=frame["winner"].map(flip))
    assert pair_totals(br.load(swapped)) == pair_totals(data)
    # positions: a battle's model_a is shown first, so swapping moves every record to the other position
    np.testing.assert_array_equal(np.sort(br.load(swapped).first), np.sort(1 - data.first))


@FAST
@given(battles(), st.integers(0, 2**16))
def test_record_order_and_sides_do_not_matter(frame, seed):
    _invariant_to_order_and_swap(frame, seed)


@pytest.mark.slow
@SLOW
@given(battles(max_size=200), st.integers(0, 2**16))
def test_record_order_and_sides_do_not_matter_many(frame, seed):
    _invariant_to_order_and_swap(frame, seed)


@FAST
@given(count_rows(), st.integers(0, 2**16))
def test_count_rows_swapped_with_position_give_the_same_cells(frame, seed):
    """A count row (a, b, wins_a, wins_b, first) is the row (b, a, wins_b, wins_a, other first)."""
    data = br.load(frame)
    swapped = frame.assign(model_a=frame["model_b"], model_b=frame["model_a"], wins_a=frame["wins_b"],
                           wins_b=frame["wins_a"], first=frame["first"].map({"a": "b", "b": "a"}))
    same(br.load(swapped.sample(frac=1, random_state=seed)), data)


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**16))
def test_fitted_scores_invariant_to_order_and_sides(seed):
    """The MLE itself (not only the cells) ignores record order and which side is called a."""
    rng = np.random.default_rng(seed)
    names = np.array(["p", "q", "r", "s"])
    a = rng.integers(0, 4, 300)
    b = (a + rng.integers(1, 4, 300)) % 4
    strength = np.array([0.8, 0.2, -0.3, -0.7])
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    winner = np.where(rng.random(300) < p, "model_a", "model_b")
    frame = pd.DataFrame({"model_a": names[a], "model_b": names[b], "winner": winner})
    base = br.fit(br.BradleyTerry(), frame).scores()
    swapped = frame.assign(model_a=frame["model_b"], model_b=frame["model_a"],
                           winner=frame["winner"].map({"model_a": "model_b", "model_b": "model_a"}))
    again = br.fit(br.BradleyTerry(), swapped.sample(frac=1, random_state=seed)).scores()
    np.testing.assert_allclose(again.to_numpy(), base.to_numpy(), atol=1e-9)


# ---------------------------------------------------------------------- conservation through readers
def _every_reader(frame: pd.DataFrame, tmp: Path) -> dict[str, br.Comparisons]:
    out = {"pandas": br.load(frame)}
    frame.to_csv(tmp / "r.csv", index=False)
    out["csv"] = br.load(tmp / "r.csv")
    with gzip.open(tmp / "r.csv.gz", "wt", encoding="utf-8") as fh:
        frame.to_csv(fh, index=False)
    out["csv.gz"] = br.load(tmp / "r.csv.gz")
    (tmp / "r.json").write_text(json.dumps(frame.to_dict("records")))
    out["json"] = br.load(tmp / "r.json")
    (tmp / "r.jsonl").write_text("\n".join(json.dumps(r) for r in frame.to_dict("records")) + "\n")
    out["jsonl"] = br.load(tmp / "r.jsonl")
    (tmp / "cols.json").write_text(json.dumps(frame.to_dict("list")))
    out["json columns"] = br.load(tmp / "cols.json")
    frame.to_parquet(tmp / "r.parquet")
    out["parquet"] = br.load(tmp / "r.parquet")
    out["polars"] = br.load(pl.from_pandas(frame))
    out["polars lazy"] = br.load(pl.from_pandas(frame).lazy())
    out["arrow"] = br.load(pa.Table.from_pandas(frame))
    con = duckdb.connect()
    con.register("records", frame)
    out["duckdb"] = br.load(con.sql("SELECT * FROM records"))
    data = out["pandas"]
    out["to_frame"] = br.load(data.to_frame())
    out["xarray"] = br.Comparisons.from_xarray(data.to_xarray())
    return out


def _conserved(frame, tmp_path, expected_total):
    """Every comparison is either used or dropped with a reason, and every reader agrees."""
    readers = _every_reader(frame, tmp_path)
    reference = readers["pandas"]
    for name, data in readers.items():
        same(data, reference)
        if name == "to_frame":  # cells only: what was dropped before is not in them
            continue
        acc = data.accounting()
        assert acc["comparisons_read"] == expected_total, name
        assert acc["comparisons_used"] + sum(acc["dropped"].values()) == expected_total, name
        assert acc["comparisons_used"] == data.n_comparisons, name
        assert acc["records_read"] == len(frame), name


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(battles())
def test_battles_conserved_through_every_reader(tmp_path_factory, frame):
    _conserved(frame, tmp_path_factory.mktemp("r"), len(frame))


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(count_rows())
def test_counts_conserved_through_every_reader(tmp_path_factory, frame):
    _conserved(frame, tmp_path_factory.mktemp("c"), int(frame[["wins_a", "wins_b", "ties"]].to_numpy().sum()))


@pytest.mark.slow
@SLOW
@given(battles(max_size=150))
def test_battles_conserved_through_every_reader_many(tmp_path_factory, frame):
    _conserved(frame, tmp_path_factory.mktemp("r"), len(frame))


def test_saved_fit_round_trip_keeps_the_accounting(tmp_path):
    fit = br.fit(br.BTL(), "mtbench-judges")
    fit.save(tmp_path / "f.nc")
    again = br.Fit.load(tmp_path / "f.nc")
    assert again.data.accounting() == fit.data.accounting()
    same(again.data, fit.data)


# ---------------------------------------------------------------------- readers never crash
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["model_a", "model_b", "winner", "wins_a", "wins_b", "ties", "first", "judge",
                         "judge_model", "judge_preferred_model", "question_id", "models", "X", "Y", "x"]),
        children, max_size=6),
    max_leaves=30,
)
SUFFIXES = (".csv", ".json", ".jsonl", ".parquet", ".csv.gz", ".json.gz", ".txt")


def _only_bayesrank_errors(path: Path, fmt=None):
    try:
        data = br.load(path, format=fmt) if fmt else br.load(path)
    except BayesrankError:
        return "refused"
    assert data.n_comparisons > 0 and np.isfinite(data.counts()).all()
    return "read"


def _bytes_file(tmp_path_factory, content: bytes, suffix: str):
    path = tmp_path_factory.mktemp("b") / f"f{suffix}"
    path.write_bytes(content)
    _only_bayesrank_errors(path)


@FAST
@given(st.binary(max_size=200), st.sampled_from(SUFFIXES))
def test_arbitrary_bytes_raise_only_bayesrank_errors(tmp_path_factory, content, suffix):
    _bytes_file(tmp_path_factory, content, suffix)


@FAST
@given(JSON, st.sampled_from(["json", "jsonl", "counts"]))
def test_arbitrary_json_raises_only_bayesrank_errors(tmp_path_factory, value, fmt):
    path = tmp_path_factory.mktemp("j") / "f.json"
    path.write_text(json.dumps(value))
    _only_bayesrank_errors(path, fmt)


@FAST
@given(st.lists(st.dictionaries(st.sampled_from(["model_a", "model_b", "winner", "wins_a", "wins_b", "ties",
                                                  "first", "question_id"]),
                                JSON, min_size=2, max_size=6), min_size=1, max_size=6))
def test_arbitrary_record_values_raise_only_bayesrank_errors(tmp_path_factory, records):
    tmp = tmp_path_factory.mktemp("v")
    (tmp / "r.json").write_text(json.dumps(records))
    _only_bayesrank_errors(tmp / "r.json")
    try:
        br.load(pd.DataFrame.from_records(records))
    except BayesrankError:
        pass


@pytest.mark.slow
@SLOW
@given(st.binary(max_size=2000), st.sampled_from(SUFFIXES))
def test_arbitrary_bytes_raise_only_bayesrank_errors_many(tmp_path_factory, content, suffix):
    _bytes_file(tmp_path_factory, content, suffix)


def _seeds(tmp: Path) -> list[tuple[str, bytes]]:
    """Valid files of every format, to be mutated."""
    frame = pd.DataFrame({"question_id": ["1", "1", "2"], "model_a": ["x", "y", "x"], "model_b": ["y", "z", "z"],
                          "judge_model": ["j", "j", "k"], "judge_preferred_model": ["a", "c", "b"]})
    battles_ = pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "x"], "winner": ["model_a", "tie"]})
    out = [(".csv", battles_.to_csv(index=False).encode()), (".csv", frame.to_csv(index=False).encode()),
           (".json", json.dumps(frame.to_dict("records")).encode()),
           (".jsonl", "\n".join(json.dumps(r) for r in battles_.to_dict("records")).encode()),
           (".json", json.dumps({"models": ["x", "y", "z"], "X": [[0, 1], [1, 2]],
                                 "Y": [[3, 1, 0], [1, 1, 2]]}).encode())]
    buffer = io.BytesIO()
    battles_.to_parquet(buffer)
    out.append((".parquet", buffer.getvalue()))
    out.append((".csv.gz", gzip.compress(out[0][1])))
    return out


@pytest.mark.slow
def test_fuzz_mutated_files_with_a_time_budget(tmp_path):
    """Random byte flips, insertions, deletions and truncations of valid files of every format,
    for ``BAYESRANK_FUZZ_SECONDS`` (default 300 s): every outcome is a read or a BayesrankError."""
    budget = float(os.environ.get("BAYESRANK_FUZZ_SECONDS", "300"))
    rng = np.random.default_rng(int(os.environ.get("BAYESRANK_FUZZ_SEED", "0")))
    seeds = _seeds(tmp_path)
    tally = {"read": 0, "refused": 0}
    start = time.perf_counter()
    k = 0
    while time.perf_counter() - start < budget:
        suffix, content = seeds[k % len(seeds)]
        data = bytearray(content)
        for _ in range(rng.integers(1, 6)):
            op = rng.integers(4)
            pos = int(rng.integers(0, max(len(data), 1)))
            if op == 0 and data:
                data[pos % len(data)] = int(rng.integers(256))
            elif op == 1:
                data[pos:pos] = bytes(rng.integers(0, 256, int(rng.integers(1, 8))).astype(np.uint8))
            elif op == 2 and data:
                del data[pos:pos + int(rng.integers(1, 8))]
            else:
                data = data[:pos]
        path = tmp_path / f"m{k}{suffix}"
        path.write_bytes(bytes(data))
        tally[_only_bayesrank_errors(path)] += 1
        path.unlink()
        k += 1
    print(f"fuzzing: {k} mutated files in {budget:.0f} s: {tally['read']} read, {tally['refused']} refused, "
          "0 other exceptions")
    assert k > 0
