"""Record ids: one digest per record, the same in any process, and records without an id refused."""

import hashlib

import numpy as np
import pandas as pd
import pytest

import bayesrank as br


def digest(text: str) -> int:
    """The documented digest, written here with hashlib."""
    return int.from_bytes(hashlib.md5(text.encode("utf-8")).digest()[8:], "little")


def test_record_ids_are_md5_digests_in_record_order(tmp_path):
    frame = pd.DataFrame({"id": ["b-7", "b-3", 12, "é"], "model_a": ["x", "y", "x", "z"],
                          "model_b": ["y", "z", "z", "x"], "winner": ["model_a", "tie", "model_b", "model_a"]})
    path = tmp_path / "battles.jsonl"
    frame.to_json(path, orient="records", lines=True)
    for data in (br.load(frame), br.load(path)):
        assert data.record_ids.dtype == np.uint64
        assert list(data.record_ids) == [digest(t) for t in ("b-7", "b-3", "12", "é")]


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
