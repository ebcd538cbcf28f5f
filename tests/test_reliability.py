"""Issue 13's catalogue of hostile and edge inputs, each through the CLI as a user runs it.

Every case is either refused cleanly (exit 2, one line on stderr naming the problem, no
traceback) or accepted with the right answer: ``REFUSED`` (hostile files), ``USAGE`` (bad
options), ``ACCEPTED_NAMES`` (valid input once refused) and the tests below them (outputs,
statistical checks, accounting).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayesrank as br
from bayesrank.cli import main
from bayesrank.errors import BayesrankError, DataError

HEADER = "model_a,model_b,winner\n"
ROWS = "x,y,model_a\ny,z,model_a\nz,x,model_a\nx,y,model_b\ny,z,tie\n"


def _write(tmp: Path, name: str, content) -> Path:
    path = tmp / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif name.endswith(".parquet"):
        content.to_parquet(path)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _parquet_with_a_name_that_is_not_utf8() -> bytes:
    """A Parquet file whose column name 'winner' became bytes that are not UTF-8 (what the
    fuzzer of tests/test_properties.py found: DuckDB's binding raised a RuntimeError)."""
    buffer = io.BytesIO()
    pd.DataFrame({"model_a": ["x", "y"], "model_b": ["y", "z"], "winner": ["model_a", "tie"]}).to_parquet(buffer)
    return buffer.getvalue().replace(b"winner", b"winn\xff\xfe")


def _deep_json() -> str:
    return "[" * 100_000 + "]" * 100_000


# (name, file name, content, extra CLI args, expected stderr fragment)
REFUSED = [
    ("column name not UTF-8 (Parquet)", "n.parquet", _parquet_with_a_name_that_is_not_utf8(), [], "not valid UTF-8"),
    ("columns collide after stripping", "c.csv", "model_a, model_a,model_b,winner\nx,x,y,tie\n", [], "duplicate column 'model_a'"),
    ("duplicate CSV columns", "d.csv", "model_a,model_b,winner,winner\nx,y,tie,tie\n", [], "duplicate column 'winner'"),
    ("corrupt .csv.gz", "g.csv.gz", b"\x1f\x8b\x08\x00garbage", [], "not a readable gzip file"),
    ("not gzip at all", "n.csv.gz", b"plain text", [], "not a readable gzip file"),
    ("deeply nested JSON", "deep.json", _deep_json(), [], "record 0"),
    ("deeply nested JSON count table", "deep2.json", '{"models": ' + _deep_json() + ', "X": [], "Y": []}', [], "nested too deeply"),
    ("integer count too large for a float", "big.json",
     json.dumps([{"model_a": "x", "model_b": "y", "wins_a": 10**400, "wins_b": 1}]), [], "is infinite"),
    ("count of 1.7e308", "huge.csv", "model_a,model_b,wins_a,wins_b\nx,y,1.7e308,1\n", [], "larger than 2^53"),
    ("counts adding up beyond 2^53", "sum.csv", "model_a,model_b,wins_a,wins_b\nx,y,4503599627370496,1\ny,x,4503599627370496,1\n", [], "more than 2^53"),
    ("NUL in a name", "nul.csv", "model_a,model_b,winner\nx\x00y,z,tie\n", [], "NUL character"),
    ("count table: string indices", "t1.json", json.dumps({"models": ["x", "y"], "X": [["0", "1"]], "Y": [[1, 2, 0]]}), [], "not a valid position"),
    ("count table: text in Y", "t2.json", json.dumps({"models": ["x", "y"], "X": [[0, 1]], "Y": [[1, "two", 0]]}), [], "'two' is not a number"),
    ("count table: ragged Y", "t3.json", json.dumps({"models": ["x", "y", "z"], "X": [[0, 1], [1, 2]], "Y": [[1, 2, 0], [1, 2]]}), [], "does not match the others"),
    ("count table: repeated model", "t4.json", json.dumps({"models": ["x", "x"], "X": [[0, 1]], "Y": [[1, 2, 0]]}), [], "names 'x' twice"),
    ("count table: models is a string", "t5.json", json.dumps({"models": "xy", "X": [[0, 1]], "Y": [[1, 2, 0]]}), [], "'models' must be a non-empty list"),
    ("count table: boolean indices", "t6.json", json.dumps({"models": ["x", "y"], "X": [[False, True]], "Y": [[1, 2, 0]]}), [], "not booleans"),
    ("count table: boolean counts", "t7.json", json.dumps({"models": ["x", "y"], "X": [[0, 1]], "Y": [[True, 2, 0]]}), [], "is a boolean"),
    ("booleans as counts (CSV)", "b.csv", "model_a,model_b,wins_a,wins_b\nx,y,true,1\n", [], "'true' is not a number"),
    ("booleans as counts (JSON)", "b.json", json.dumps([{"model_a": "x", "model_b": "y", "wins_a": True, "wins_b": 1}]), [], "is a boolean"),
    ("booleans as counts (Parquet)", "b.parquet", pd.DataFrame({"model_a": ["x"], "model_b": ["y"], "wins_a": [True], "wins_b": [1]}), [], "is a boolean"),
    ("duplicate JSON keys", "k.json", '[{"model_a": "x", "model_b": "y", "model_a": "z", "winner": "tie"}]', [], "repeats the key(s) 'model_a'"),
    ("duplicate JSON keys (JSON lines)", "k.jsonl", '{"model_a": "x", "model_b": "y", "winner": "tie", "winner": "model_a"}\n', [], "repeats the key(s) 'winner'"),
    ("name that is a list", "l.json", json.dumps([{"model_a": ["x"], "model_b": "y", "winner": "tie"}]), [], "is a list or an object"),
    ("name that is an object", "o.json", json.dumps([{"model_a": {"x": 1}, "model_b": "y", "winner": "tie"}]), [], "is a list or an object"),
    ("name that is a boolean", "bn.json", json.dumps([{"model_a": True, "model_b": "y", "winner": "tie"}]), [], "is a boolean, not a name"),
    ("NaN literal in a JSON document", "nan.json", '{"models": ["x", "y"], "X": [[0, 1]], "Y": [[NaN, 1, 0]]}', [], "non-standard JSON value NaN"),
    ("invalid UTF-8", "u.csv", b"model_a,model_b,winner\nx\xff,y,tie\n", [], "UTF-8"),
    ("ragged CSV line", "r.csv", HEADER + "x,y,tie,extra\n", [], "line 2 has 4 fields"),
    ("unknown outcome", "w.csv", HEADER + "x,y,won\n", [], "unknown outcome 'won'"),
    ("self-comparison", "s.csv", HEADER + "x,x,tie\n", [], "compares 'x' with itself"),
    ("a records file that is a JSON scalar", "sc.json", "3", [], "expected a list of records"),
    ("records that are not objects", "no.json", "[1, 2]", [], "record 0"),
    ("a record without model_a (JSON lines; found by the fuzzer)", "m.jsonl",
     '{"model_a": "x", "model_b": "y", "winner": "tie"}\n{"model_b": "y", "winner": "model_a"}\n', [],
     "record 1 in"),
    ("empty file", "e.csv", "", [], "empty"),
]
USAGE = [
    ("negative seed with NUTS", ["--method", "nuts", "--seed", "-1"], "argument --seed: expected a whole number of at least 0"),
    ("negative seed with MAP", ["--seed", "-1"], "argument --seed: expected a whole number of at least 0"),
    ("negative --top", ["--top", "-1"], "argument --top: expected a whole number of at least 0"),
    ("--level outside (0, 1)", ["--level", "1.5"], "--level must be in (0, 1)"),
    ("zero draws", ["--draws", "0"], "argument --draws: expected a whole number of at least 1, got 0"),
    ("a bad target_accept", ["--method", "nuts", "--target-accept", "1.5"], "target_accept must be in (0, 1)"),
    ("unknown data format", ["--data-format", "xlsx"], "unknown format='xlsx' (CLI: --data-format)"),
]
ACCEPTED_NAMES = ["NA", "None", "null", "nan", "NULL", "N/A", "#N/A", "1.0", "-", ""]


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _assert_clean_refusal(code, err, fragment):
    assert code == 2, err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert fragment in err, err


@pytest.mark.parametrize(("name", "file", "content", "args", "fragment"), REFUSED, ids=[r[0] for r in REFUSED])
def test_hostile_file_refused_in_one_line(capsys, tmp_path, name, file, content, args, fragment):
    path = _write(tmp_path, file, content)
    code, out, err = run(capsys, "fit", path, "--model", "bt", *args)
    _assert_clean_refusal(code, err, fragment)
    assert out == ""


@pytest.mark.parametrize(("name", "args", "fragment"), USAGE, ids=[u[0] for u in USAGE])
def test_bad_option_refused_in_one_line(capsys, tmp_path, name, args, fragment):
    path = _write(tmp_path, "ok.csv", HEADER + ROWS)
    code, _, err = run(capsys, "fit", path, "--model", "bt", *args)
    _assert_clean_refusal(code, err, fragment)


@pytest.mark.parametrize("name", [n for n in ACCEPTED_NAMES if n])
def test_names_that_look_missing_are_names(capsys, tmp_path, name):
    """"NA", "None", "null" and friends are model names, not missing values."""
    rows = ROWS.replace("x", name) if "," not in name else ROWS
    path = _write(tmp_path, "names.csv", HEADER + rows)
    code, out, err = run(capsys, "fit", path, "--model", "bt", "--format", "json")
    assert code == 0, err
    assert name in {item["name"] for item in json.loads(out)["items"]}


def test_empty_name_is_missing(capsys, tmp_path):
    path = _write(tmp_path, "names.csv", HEADER + ",y,tie\n")
    code, _, err = run(capsys, "fit", path, "--model", "bt")
    _assert_clean_refusal(code, err, "record 0")


def test_numbers_as_names_follow_one_rule(tmp_path):
    """1 and 1.0 are one item ("1"); 0.5 stays "0.5"; text names are kept as written."""
    records = [{"model_a": 1, "model_b": 0.5, "winner": "model_a"}, {"model_a": 1.0, "model_b": 0.5, "winner": "model_b"},
               {"model_a": "1", "model_b": "x", "winner": "tie"}, {"model_a": 0.5, "model_b": "x", "winner": "model_a"}]
    path = _write(tmp_path, "n.json", json.dumps(records))
    data = br.load(path)
    assert data.items == ("0.5", "1", "x")
    assert data.n_comparisons == 4
    frame = pd.DataFrame(records)  # the same rule for a pandas object column
    assert br.load(frame).items == data.items


def test_whitespace_merges_are_noted(tmp_path):
    path = _write(tmp_path, "ws.csv", HEADER + " x,y,model_a\nx ,y,model_b\n")
    data = br.load(path)
    assert data.items == ("x", "y")
    assert data.accounting()["notes"] == {"records with names stripped of surrounding whitespace": 2}


def test_accounting_in_cli_json_and_table(capsys):
    code, out, _ = run(capsys, "fit", "mtbench-judges", "--model", "btl", "--format", "json")
    assert code == 0
    acc = json.loads(out)["accounting"]
    assert acc == {"records_read": 10_000, "comparisons_read": 10_000, "dropped": {"unknown verdict": 294},
                   "comparisons_used": 9706, "notes": {}}
    code, out, _ = run(capsys, "fit", "mtbench-judges", "--model", "btl", "--top", "2")
    assert "10,000 records read" in out and "294 dropped (unknown verdict 294)" in out and "9,706 used" in out
    code, out, _ = run(capsys, "fit", "arena-2024", "--model", "bt", "--format", "json")
    acc = json.loads(out)["accounting"]
    assert acc["comparisons_read"] == 1_670_250 and acc["comparisons_used"] == 1_374_996
    assert sum(acc["dropped"].values()) == 1_670_250 - 1_374_996


# ---------------------------------------------------------------------- outputs
def test_out_refuses_to_overwrite_without_force(capsys, tmp_path):
    data = _write(tmp_path, "ok.csv", HEADER + ROWS)
    out = tmp_path / "run"
    assert run(capsys, "fit", data, "--model", "bt", "--out", out)[0] == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    code, _, err = run(capsys, "fit", data, "--model", "davidson", "--out", out)
    _assert_clean_refusal(code, err, "pass --force")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # untouched
    code, _, err = run(capsys, "fit", data, "--model", "davidson", "--out", out, "--force")
    assert code == 0 and "replaced" in err
    assert json.loads((out / "summary.json").read_text())["framework"] == "davidson"
    assert br.Fit.load(out / "fit.nc").framework.name == "davidson"


def test_out_naming_a_file_or_unwritable_place(capsys, tmp_path):
    data = _write(tmp_path, "ok.csv", HEADER + ROWS)
    afile = _write(tmp_path, "afile", "x")
    _assert_clean_refusal(*run(capsys, "fit", data, "--model", "bt", "--out", afile)[::2], "is a file, not a directory")
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        _assert_clean_refusal(*run(capsys, "fit", data, "--model", "bt", "--out", locked / "x")[::2], "not writable")


def test_csv_output_escapes_formulas(capsys, tmp_path):
    data = _write(tmp_path, "inj.csv", HEADER + "=cmd|' /C calc'!A0,@sum,model_a\n@sum,+x,tie\n+x,=cmd|' /C calc'!A0,model_b\n")
    code, out, _ = run(capsys, "fit", data, "--model", "bt", "--format", "csv")
    assert code == 0
    names = pd.read_csv(pd.io.common.StringIO(out))["name"].tolist()
    assert sorted(names) == ["'+x", "'=cmd|' /C calc'!A0", "'@sum"]
    run(capsys, "fit", data, "--model", "bt", "--out", tmp_path / "o")
    assert all(n.startswith("'") for n in pd.read_csv(tmp_path / "o" / "leaderboard.csv")["name"])
    # the JSON and the saved fit keep the names as they are
    assert "=cmd|' /C calc'!A0" in br.Fit.load(tmp_path / "o" / "fit.nc").items


def test_internal_error_is_one_line_asking_for_a_report(capsys, monkeypatch):
    import bayesrank.cli as cli

    def broken(args):
        raise ZeroDivisionError("boom")

    monkeypatch.setitem(cli.COMMANDS, "datasets", broken)
    code, _, err = run(capsys, "datasets")
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "internal error: ZeroDivisionError: boom" in err and "please report" in err and "--debug" in err
    code, _, err = run(capsys, "--debug", "datasets")
    assert code == 1 and "Traceback" in err


def _bayesrank(*args, **kw):
    return subprocess.run([sys.executable, "-m", "bayesrank.cli", *map(str, args)], capture_output=True, text=True, **kw)


def test_closed_stdout_is_quiet(tmp_path):
    """``bayesrank fit ... | head`` with the reader gone: no traceback, exit 141 (SIGPIPE)."""
    with subprocess.Popen([sys.executable, "-m", "bayesrank.cli", "fit", "arena-2024", "--model", "bt",
                           "--format", "json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=600) == 141
    assert err == ""


def test_no_temporary_files_left(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    data = _write(tmp_path, "ok.csv", HEADER + ROWS)
    proc = _bayesrank("fit", data, "--model", "davidson", "--out", tmp_path / "o", env=env)
    assert proc.returncode == 0, proc.stderr
    assert list(scratch.iterdir()) == []


# ---------------------------------------------------------------------- statistical checks
def _fit(framework, *cells, **kw):
    return br.fit(framework, br.Comparisons.from_cells(*cells, **kw))


def test_tie_model_item_that_never_wins_but_ties_has_an_mle():
    """A tie bounds a score from below in Davidson: no claim of −∞, and the MLE exists."""
    fit = _fit(br.Davidson(), ["a", "a", "b"], ["b", "c", "c"], [0, 0, 2], [3, 1, 1], [2, 1, 1])
    assert fit.diagnostics["mle_exists"] is True and fit.converged
    assert not any("infinit" in w for w in fit.warnings)
    assert np.isfinite(fit.scores()).all()


def test_tie_model_pair_with_wins_and_ties_only_has_no_mle():
    """'a' beat 'b' once and tied once: Ford's graph is strongly connected (a tie counts both
    ways), but the likelihood rises forever as the score gap and the threshold grow together."""
    fit = _fit(br.Davidson(), ["a"], ["b"], [1], [0], [1])
    assert fit.diagnostics["mle_exists"] is False and not fit.converged
    assert any("extended Ford condition" in w and "'a'" in w for w in fit.warnings)
    assert np.isnan(fit.scores()).all()
    same = _fit(br.RaoKupper(), ["a"], ["b"], [1], [0], [1])
    assert same.diagnostics["mle_exists"] is False
    # with a third item that beats and loses to both, the same pair is bounded: the MLE exists
    ok = _fit(br.Davidson(), ["a", "a", "b"], ["b", "c", "c"], [1, 2, 1], [0, 1, 1], [1, 1, 1])
    assert ok.diagnostics["mle_exists"] is True and ok.converged


@pytest.mark.parametrize("framework", [br.Davidson(), br.RaoKupper()], ids=["davidson", "rao-kupper"])
def test_all_ties_said_in_words(framework):
    fit = _fit(framework, ["a", "b", "a"], ["b", "c", "c"], [0, 0, 0], [0, 0, 0], [2, 3, 1])
    assert fit.diagnostics["mle_exists"] is False
    assert fit.warnings == [w for w in fit.warnings if "every comparison is a tie" in w] and len(fit.warnings) == 1


def test_mle_exists_and_warnings_agree_on_arena():
    fit = br.fit(br.Davidson(k_tie=1), "arena-2024")
    assert fit.diagnostics["mle_exists"] is True and fit.warnings == []


def _judge_data(always_first: bool, never_tie: bool):
    rng = np.random.default_rng(0)
    rows = []
    names = ["m0", "m1", "m2", "m3"]
    for judge in ("j0", "j1", "j2"):
        for _ in range(60):
            a, b = rng.choice(4, 2, replace=False)
            verdict = rng.choice(["a", "b", "c"], p=[0.45, 0.4, 0.15] if a < b else [0.4, 0.45, 0.15])
            if judge == "j2" and always_first:
                verdict = "a"
            if judge == "j1" and never_tie and verdict == "c":
                verdict = "b"
            rows.append({"question_id": str(rng.integers(5)), "model_a": names[a], "model_b": names[b],
                         "judge_model": judge, "judge_preferred_model": verdict})
    return br.load(pd.DataFrame(rows))


def test_judge_always_choosing_one_position():
    data = _judge_data(always_first=True, never_tie=False)
    fit = br.fit(br.BTL(position_bias=True), data)
    assert fit.diagnostics["mle_exists"] is False
    assert any("judge 'j2' chose the answer shown first" in w for w in fit.warnings)
    assert any("the position bias of judge 'j2' → +∞" in w for w in fit.warnings)
    plain = br.fit(br.BTL(), data)  # without a position term: the fact is still said
    assert any("judge 'j2' chose the answer shown first" in w for w in plain.warnings)


def test_judge_that_never_ties_under_a_tie_model():
    data = _judge_data(always_first=False, never_tie=True)
    fit = br.fit(br.BTL(ties="davidson"), data)
    assert fit.diagnostics["mle_exists"] is False
    assert any("judge 'j1' never ties" in w for w in fit.warnings)
    assert any("the tie parameter of judge 'j1' → −∞" in w for w in fit.warnings)
    assert br.fit(br.BTL(), data).diagnostics["mle_exists"] is True  # ties as halves: no tie parameter


def test_near_duplicate_judges_from_every_format(tmp_path):
    frame = pd.read_json(Path(br.data.bundled.dataset_path("mtbench-judges")), compression="gzip")
    frame = frame[frame["judge_model"].isin(frame["judge_model"].unique()[:3])]
    twin = frame[frame["judge_model"] == frame["judge_model"].iloc[0]].assign(judge_model="twin")
    records = pd.concat([frame, twin], ignore_index=True)
    paths = [tmp_path / "r.csv", tmp_path / "r.json", tmp_path / "r.jsonl", tmp_path / "r.parquet"]
    records.to_csv(paths[0], index=False)
    records.to_json(paths[1], orient="records")
    records.to_json(paths[2], orient="records", lines=True)
    records.to_parquet(paths[3])
    flagged = []
    for path in paths:
        fit = br.fit(br.BTL(), path)
        flagged.append([d[:2] for d in fit.diagnostics["near_duplicates"]])
    assert all(f == flagged[0] for f in flagged) and any("twin" in pair for pair in flagged[0])


def test_readers_raise_only_bayesrank_errors_on_junk(tmp_path):
    for k, junk in enumerate([b"", b"\x00\x01\x02", b"{", b"[{]", b'{"models": 1}', b"\xef\xbb\xbf", b"a,b\n1"]):
        for suffix in (".csv", ".json", ".jsonl", ".parquet", ".csv.gz"):
            path = tmp_path / f"junk{k}{suffix}"
            path.write_bytes(junk)
            with pytest.raises(BayesrankError):
                br.load(path)


def test_errors_are_documented():
    """The troubleshooting page names every error a user can cause and says files are never run."""
    page = (Path(__file__).parents[1] / "docs" / "guide" / "troubleshooting.md").read_text()
    for name in ("DataError", "ModelSpecError", "OutputError", "FitFileError"):
        assert f"| `{name}` |" in page
        assert issubclass(getattr(br, name), BayesrankError)
    assert "parsed, never executed" in page
    assert issubclass(DataError, ValueError)


def test_evaluate_reports_no_numbers_without_an_mle(capsys, tmp_path):
    """No NLL, AIC or fit metrics from wherever the optimiser stopped when the MLE does not exist."""
    data = _write(tmp_path, "sep.csv", HEADER + "x,y,model_a\ny,z,model_a\nx,z,model_a\n")
    code, out, _ = run(capsys, "evaluate", data, "--model", "bt", "--format", "json")
    assert code == 0
    res = json.loads(out)
    assert res["mle_exists"] is False and res["nll"] is None
    for key in ("rmse_win", "rmse_loss", "rmse_tie", "rmse_all", "kld", "jsd", "nll", "aic", "bic"):
        assert res["metrics"][key] is None, key
    fit = br.fit(br.BradleyTerry(), data)  # the API says the same
    assert np.isnan(fit.nll) and not fit.diagnostics["mle_exists"]
    from bayesrank.evaluation.goodness import information_criteria
    assert all(np.isnan(v) for k, v in information_criteria(fit).items() if k in ("aic", "bic"))


def test_nuts_divergence_advice_names_the_cli_flag():
    from bayesrank.inference.nuts import sampling_warnings

    text = sampling_warnings({"divergences": 3, "max_rhat": 1.0, "min_ess_bulk": 1000, "min_ess_tail": 1000})[0]
    assert "--target-accept" in text
