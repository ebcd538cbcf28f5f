"""The single entry point (bayesrank/data/load.py): what a string names."""

from __future__ import annotations

import json

import pytest

import bayesrank as br
from bayesrank.cli import main


def test_a_local_file_with_a_bundled_name_is_read_and_said(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "arena-2024").write_text("model_a,model_b,winner\nx,y,model_a\ny,z,tie\nz,x,model_b\n")
    with pytest.raises(br.DataError, match="name of a bundled dataset.*so neither is read.*format="):
        br.load("arena-2024")
    data = br.load("arena-2024", format="csv")
    assert data.items == ("x", "y", "z")
    assert any("read the local file 'arena-2024', not the bundled dataset" in w for w in data.warnings)
    assert main(["fit", "arena-2024", "--data-format", "csv", "--model", "bt", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_items"] == 3 and any("read the local file" in w for w in out["warnings"])


def test_the_bundled_dataset_when_no_such_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert br.load("mtbench-judges").n_items == 6


def test_a_missing_name_is_neither(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(br.DataError, match="neither a bundled dataset .* nor an existing file"):
        br.load("arena-2025")


def test_a_mapping_of_columns_is_a_table():
    columns = {"model_a": ["a", "b", "c"], "model_b": ["b", "c", "a"], "winner": ["model_a", "tie", "model_b"]}
    import pandas as pd

    assert br.load(columns).counts().tolist() == br.load(pd.DataFrame(columns)).counts().tolist()
    with pytest.raises(br.DataError, match="all of one length"):
        br.load({"model_a": ["a", "b"], "model_b": ["b"], "winner": ["tie"]})
