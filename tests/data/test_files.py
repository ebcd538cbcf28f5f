"""Reading files (bayesrank/data/files.py): a path is a path, keys are one key each, the first
bytes say what a file is, pipes and standard input are read, memory stays bounded."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bayesrank as br
from bayesrank.cli import main

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
HEADER = "model_a,model_b,winner\n"


def records(*names: str) -> str:
    """CSV battles among the given names (each pair once, the first wins)."""
    rows = [f"{a},{b},model_a\n" for a, b in zip(names, names[1:] + names[:1])]
    return HEADER + "".join(rows)


# ---------------------------------------------------------------------- a path is a path
#: Pieces of file names that globbing, brace expansion or home expansion would read.
SPECIAL = st.sampled_from(["[1]", "[ab]", "*", "?", "{a,b}", "~", "[!x]", "**"])


@FAST
@given(stem=st.text("abc", min_size=1, max_size=4), special=SPECIAL, fmt=st.sampled_from(["csv", "jsonl"]))
def test_file_names_with_pattern_characters_are_read_as_named(tmp_path_factory, stem, special, fmt):
    """The named file is read, not the files its name would match as a pattern."""
    folder = tmp_path_factory.mktemp("glob")
    name = f"{stem}{special}.{fmt}"
    decoys = [f"{stem}1.{fmt}", f"{stem}a.{fmt}", f"{stem}b.{fmt}", f"{stem}x.{fmt}", f"{stem}.{fmt}"]
    for k, decoy in enumerate(d for d in decoys if d != name):
        (folder / decoy).write_text(_as(records(f"decoy{k}a", f"decoy{k}b", f"decoy{k}c"), fmt))
    (folder / name).write_text(_as(records("p", "q", "r"), fmt))
    assert br.load(folder / name).items == ("p", "q", "r")
    assert br.load(str(folder / name)).items == ("p", "q", "r")


def _as(csv_text: str, fmt: str) -> str:
    if fmt == "csv":
        return csv_text
    rows = [line.split(",") for line in csv_text.splitlines()[1:]]
    return "".join(json.dumps({"model_a": a, "model_b": b, "winner": w}) + "\n" for a, b, w in rows)


def test_a_pattern_that_matches_nothing_is_a_missing_file(tmp_path, capsys):
    (tmp_path / "log1.jsonl").write_text(_as(records("a", "b", "c"), "jsonl"))
    assert main(["fit", str(tmp_path / "log*.jsonl"), "--model", "bt"]) == 2
    assert "nor an existing file" in capsys.readouterr().err


# ---------------------------------------------------------------------- keys
KEYS = st.sampled_from(["model_a", "model_b", "winner"])


@FAST
@given(key=KEYS, variant=st.sampled_from(["upper", "title", "space"]), same_record=st.booleans(),
       layout=st.sampled_from(["json", "jsonl"]), position=st.integers(0, 3))
def test_keys_that_differ_only_by_case_are_refused_naming_the_record(tmp_path_factory, key, variant, same_record,
                                                                     layout, position):
    folder = tmp_path_factory.mktemp("keys")
    other = {"upper": key.upper(), "title": key.title(), "space": f" {key}"}[variant]
    rows = [{"model_a": "x", "model_b": "y", "winner": "model_a"} for _ in range(4)]
    if same_record:
        rows[position][other] = "model_b" if key == "winner" else "z"
    else:
        rows[position] = {(other if k == key else k): v for k, v in rows[position].items()}
    path = folder / f"r.{layout}"
    text = json.dumps(rows) if layout == "json" else "".join(json.dumps(r) + "\n" for r in rows)
    path.write_text(text)
    with pytest.raises(br.DataError) as err:
        br.load(path)
    message = str(err.value)
    assert repr(other) in message and repr(key) in message
    assert f"record {position}" in message


@pytest.mark.parametrize("header", ["model_a,MODEL_A,model_b,winner", "model_a,model_b,Winner,winner"])
def test_csv_headers_differing_only_by_case_are_refused_without_sql(tmp_path, capsys, header):
    path = tmp_path / "c.csv"
    path.write_text(header + "\nx,x,y,tie\n")
    assert main(["fit", str(path), "--model", "bt"]) == 2
    err = capsys.readouterr().err
    assert "differ only by letter case" in err and "SELECT" not in err and "read_csv" not in err


def test_a_header_ending_in_a_comma_is_named(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("model_a,model_b,winner,\nx,y,tie,\n")
    assert main(["fit", str(path), "--model", "bt"]) == 2
    err = capsys.readouterr().err
    assert "the header ends with a comma" in err and "SELECT" not in err


def test_case_colliding_keys_of_a_json_document_are_refused(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"models": ["x", "y"], "X": [[0, 1]], "Y": [[1, 2, 0]], "x": [[0, 1]]}')
    with pytest.raises(br.DataError, match="differ only by letter case"):
        br.load(path, format="counts")


@pytest.mark.parametrize("other", ["Winner", "MODEL_A", " winner"])
def test_case_colliding_columns_of_a_parquet_file_are_refused(tmp_path, other):
    """DuckDB's Parquet reader renames the second spelling (``Winner_1``): the file's own names
    are checked, as every other source's are."""
    pa, pq = pytest.importorskip("pyarrow"), pytest.importorskip("pyarrow.parquet")
    frame = pd.DataFrame({"model_a": ["a", "b"], "model_b": ["b", "c"], "winner": ["model_a", "tie"],
                          other: ["model_b", "b"]})
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp_path / "t.parquet")
    with pytest.raises(br.DataError, match="differ only by letter case|duplicate column"):
        br.load(tmp_path / "t.parquet")


def test_non_ascii_keys_of_json_records_are_read(tmp_path):
    frame = pd.DataFrame({"model_a": ["x", "y", "z"], "model_b": ["y", "z", "x"], "winner": ["model_a"] * 3,
                          "längd": [1.0, 2.0, 3.0]})
    path = tmp_path / "r.json"
    frame.to_json(path, orient="records")  # writes "l\u00e4ngd"
    data = br.load(path, covariates=["längd"])
    assert sorted(data.covariates[:, 0]) == [1.0, 2.0, 3.0]


# ---------------------------------------------------------------------- what a file is
@pytest.mark.parametrize(("magic", "what"), [
    (b"\x28\xb5\x2f\xfd" + b"\x00" * 12, "zstd-compressed"), (b"\xfd7zXZ\x00" + b"\x00" * 10, "xz-compressed"),
    (b"BZh91AY&SY" + b"\x00" * 6, "bzip2-compressed"), (b"PK\x03\x04" + b"\x00" * 12, "zip archive"),
    (b"\xff\xfem\x00o\x00", "UTF-16"), (b"PAR1" + b"\x00" * 12, "a Parquet file"),
])
def test_files_that_are_not_text_are_named_by_their_first_bytes(tmp_path, capsys, magic, what):
    path = tmp_path / "records.csv"
    path.write_bytes(magic)
    assert main(["fit", str(path), "--model", "bt"]) == 2
    err = capsys.readouterr().err
    assert f"is {what}" in err or f"is an {what}" in err or f"is a {what}" in err, err
    assert what == "UTF-16" or "save it as UTF-8" not in err


def test_gzip_content_is_read_whatever_its_name(tmp_path):
    path = tmp_path / "records.csv"  # no .gz suffix
    path.write_bytes(gzip.compress(records("a", "b", "c").encode()))
    assert br.load(path).items == ("a", "b", "c")


def test_mixed_line_endings_name_the_line(tmp_path, capsys):
    path = tmp_path / "m.csv"
    path.write_bytes(b"model_a,model_b,winner\r\nx,y,tie\r\ny,z,model_a\nz,x,tie\r\n")
    assert main(["fit", str(path), "--model", "bt"]) == 2
    err = capsys.readouterr().err
    assert "mixes line endings" in err and "line 3" in err


def test_a_huge_name_is_called_a_huge_name(tmp_path, capsys):
    for name, text in (("h.csv", HEADER + "x" * 3_000_000 + ",y,tie\ny,z,tie\n"),
                       ("h.jsonl", json.dumps({"model_a": "x" * 20_000, "model_b": "y", "winner": "tie"}) + "\n")):
        path = tmp_path / name
        path.write_text(text)
        assert main(["fit", str(path), "--model", "bt"]) == 2
        err = capsys.readouterr().err
        assert "malformed" not in err and ("bytes" in err or "characters" in err), err


# ---------------------------------------------------------------------- pipes
def test_standard_input_is_read_with_a_format(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "bayesrank.cli", "fit", "-", "--model", "bt", "--data-format", "csv",
                           "--format", "json"], input=records("a", "b", "c"), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert sorted(i["name"] for i in json.loads(proc.stdout)["items"]) == ["a", "b", "c"]
    proc = subprocess.run([sys.executable, "-m", "bayesrank.cli", "fit", "-", "--model", "bt"],
                          input=records("a", "b", "c"), capture_output=True, text=True)
    assert proc.returncode == 2 and "standard input ('-')" in proc.stderr and "does not exist" not in proc.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_named_pipe_is_read(tmp_path):
    fifo = tmp_path / "records.csv"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(records("a", "b", "c")))
    writer.start()
    try:
        assert br.load(fifo).items == ("a", "b", "c")
    finally:
        writer.join(timeout=10)


def test_a_path_too_long_and_a_dangling_link_are_said(tmp_path, capsys):
    assert main(["fit", str(tmp_path / ("x" * 300 + ".csv")), "--model", "bt"]) == 2
    assert "too long" in capsys.readouterr().err
    (tmp_path / "gone.csv").symlink_to(tmp_path / "nowhere.csv")
    assert main(["fit", str(tmp_path / "gone.csv"), "--model", "bt"]) == 2
    assert "symbolic link" in capsys.readouterr().err


# ---------------------------------------------------------------------- bounded memory
def test_one_long_line_is_refused_in_bounded_memory(tmp_path):
    """A JSON-lines file of one 256 MB line: refused, without holding the line in memory."""
    path = tmp_path / "one.jsonl"
    with open(path, "w") as fh:
        fh.write('{"model_a": "x", "model_b": "y", "winner": "tie", "pad": "')
        for _ in range(256):
            fh.write("p" * (1 << 20))
        fh.write('"}\n')
    code = ("import resource, sys\nimport bayesrank as br\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "try:\n    br.load(sys.argv[1])\nexcept br.DataError as err:\n    print(err)\n"
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=300)
    message, grown = proc.stdout.strip().splitlines()
    assert "holds more than 16 MB" in message
    assert int(grown) < 200, f"{grown} MB"  # the line is 256 MB


def test_a_large_json_document_is_refused_saying_what_to_do(tmp_path):
    path = tmp_path / "big.json"
    path.write_text('{"models": ["x", "y"], "X": [[0, 1]], "Y": [[1, 2, 0]], "pad": "' + "p" * (40 << 20) + '"}')
    with pytest.raises(br.DataError, match="larger than 32 MB for one JSON document.*JSON lines"):
        br.load(path)


def test_read_frame_follows_the_same_rules(tmp_path):
    from bayesrank.data.files import read_frame

    path = tmp_path / "run[1].csv"
    path.write_text("model_a,model_b,winner,x\na,b,model_a,1\n")
    (tmp_path / "run1.csv").write_text("model_a,model_b,winner,x\nq,r,model_a,1\n")
    assert read_frame(path)["model_a"].tolist() == ["a"]
    (tmp_path / "k.jsonl").write_text('{"model_a": "a", "MODEL_A": "b", "winner": "tie"}\n')
    with pytest.raises(br.DataError, match="differ only by letter case"):
        read_frame(tmp_path / "k.jsonl")


def test_readers_leave_no_temporary_files(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    path = tmp_path / "r[1].csv"
    path.write_text(records("a", "b", "c"))
    code = "import sys, bayesrank as br; br.load(sys.argv[1]); br.load('-', format='csv')"
    proc = subprocess.run([sys.executable, "-c", code, str(path)], input=records("a", "b", "c"), text=True,
                          capture_output=True, env={**os.environ, "TMPDIR": str(scratch)})
    assert proc.returncode == 0, proc.stderr
    assert list(scratch.iterdir()) == []


def test_paths_keep_working_as_path_objects(tmp_path):
    path = Path(tmp_path) / "a b [c].csv"
    path.write_text(records("a", "b", "c"))
    assert br.load(path).source == str(path)


def test_a_csv_record_longer_than_the_readers_buffer_is_said_in_words(tmp_path):
    """40 MB in one field: beyond DuckDB's buffer its parallel reader gives up with advice about
    an option bayesrank does not have; the message says what the file holds instead."""
    path = tmp_path / "long.csv"
    with open(path, "w") as f:
        f.write("model_a,model_b,winner\na,b,")
        f.write("z" * (40 << 20))
        f.write("\nb,a,model_a\n")
    with pytest.raises(br.DataError, match="holds a CSV record longer than the reader's buffer") as err:
        br.load(path)
    assert "parallel" not in str(err.value)
