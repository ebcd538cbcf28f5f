"""Record ids: one digest per record, the same for the same id text whatever the source, and
records without an id refused."""

import subprocess
import sys

import duckdb
import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.data.aggregate import id_digest


def test_record_ids_are_digests_of_the_id_text_in_record_order(tmp_path):
    frame = pd.DataFrame({"id": ["b-7", "b-3", 12, "é"], "model_a": ["x", "y", "x", "z"],
                          "model_b": ["y", "z", "z", "x"], "winner": ["model_a", "tie", "model_b", "model_a"]})
    frame.to_json(tmp_path / "battles.jsonl", orient="records", lines=True)
    frame.astype({"id": str}).to_csv(tmp_path / "battles.csv", index=False)
    expected = [duckdb.sql(f"SELECT hash('{t}')").fetchall()[0][0] for t in ("b-7", "b-3", "12", "é")]
    con = duckdb.connect()
    relation = con.read_csv(str(tmp_path / "battles.csv"))
    for data in (br.load(frame), br.load(tmp_path / "battles.jsonl"), br.load(tmp_path / "battles.csv"),
                 br.load(relation)):
        assert data.record_ids.dtype == np.uint64
        assert list(data.record_ids) == expected
        assert data.reading["id_digest"] == id_digest()


def test_the_digest_is_the_same_in_another_process():
    code = "from bayesrank.data.aggregate import id_digest; print(id_digest())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == id_digest()


def test_ids_survive_saving_a_fit(tmp_path):
    frame = pd.DataFrame({"id": [f"r{k}" for k in range(6)], "model_a": list("xyzxyz"), "model_b": list("yzxzxy"),
                          "winner": ["model_a", "model_b", "tie", "model_a", "model_b", "model_a"]})
    fit = br.fit(br.BradleyTerry(), frame)
    fit.save(tmp_path / "fit.nc")
    assert np.array_equal(br.Fit.load(tmp_path / "fit.nc").data.record_ids, br.load(frame).record_ids)


def test_a_record_without_id_is_refused():
    frame = pd.DataFrame({"id": ["a", None, ""], "model_a": ["x", "y", "x"], "model_b": ["y", "x", "y"],
                          "winner": ["model_a", "model_b", "tie"]})
    with pytest.raises(br.DataError, match=r"record 1: column 'id' is missing or empty \(2 such records\)"):
        br.load(frame)


def test_records_without_id_column_have_none():
    frame = pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "winner": ["model_a"]})
    assert br.load(frame).record_ids is None
