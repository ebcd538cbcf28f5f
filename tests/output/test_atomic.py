"""The one output writer (bayesrank/output/atomic.py), with real processes: concurrent writers,
writers interrupted by signals or killed mid-write, and the CLI's claims on its outputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bayesrank as br
from bayesrank.cli import main
from bayesrank.errors import OutputError
from bayesrank.output.atomic import claim, write_files, write_text

SOME = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

#: A process writing two files through write_files, slowly, saying when it has started.
WRITER = """
import sys, time
from pathlib import Path
from bayesrank.output.atomic import write_files
target, content, chunks, delay, overwrite = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), \\
    sys.argv[5] == "1"
def write(path):
    with open(path, "w") as fh:
        for k in range(chunks):
            fh.write(content)
            fh.flush()
            if k == 0:
                print("writing", flush=True)
            time.sleep(delay)
try:
    write_files({target: write, target.with_name(target.name + ".second"): write}, overwrite=overwrite)
except Exception as err:
    print(f"refused: {type(err).__name__}: {err}", flush=True)
    sys.exit(2)
print("done", flush=True)
"""


def writer(target: Path, content: str, chunks: int = 5, delay: float = 0.05, overwrite: bool = False):
    return subprocess.Popen([sys.executable, "-c", WRITER, str(target), content, str(chunks), str(delay),
                             "1" if overwrite else "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def started(proc) -> None:
    assert proc.stdout.readline().strip() == "writing"


def leftovers(folder: Path, keep=("out.txt", "out.txt.second")) -> list[str]:
    """Files other than the targets: temporary files and locks."""
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


# ---------------------------------------------------------------------- interrupted writes
@SOME
@given(signum=st.sampled_from([signal.SIGINT, signal.SIGTERM]), existed=st.booleans(), overwrite=st.booleans(),
       wait=st.floats(0, 0.15))
def test_a_write_interrupted_by_a_signal_replaces_nothing_and_leaves_nothing(tmp_path_factory, signum, existed,
                                                                            overwrite, wait):
    folder = tmp_path_factory.mktemp("signal")
    target = folder / "out.txt"
    if existed:
        target.write_text("old")
    proc = writer(target, "new", chunks=6, delay=0.05, overwrite=overwrite or existed)
    started(proc)
    time.sleep(wait)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode != 0, out + err
    assert "done" not in out and "Exception ignored" not in err
    assert (target.read_text() if target.exists() else None) == ("old" if existed else None)
    assert not (folder / "out.txt.second").exists()
    assert leftovers(folder) == []  # no temporary file, no lock


def test_sigterm_ends_the_writer_as_sigterm_does(tmp_path):
    proc = writer(tmp_path / "out.txt", "new", chunks=4)
    started(proc)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGTERM  # re-raised to the default handler after cleaning up


# ---------------------------------------------------------------------- concurrent writers
@SOME
@given(n=st.integers(2, 4), overwrite=st.booleans())
def test_concurrent_writers_never_mix_and_never_both_succeed_without_overwrite(tmp_path_factory, n, overwrite):
    folder = tmp_path_factory.mktemp("concurrent")
    target = folder / "out.txt"
    procs = [writer(target, f"<{k}>", chunks=4, delay=0.03, overwrite=overwrite) for k in range(n)]
    results = [(proc, *proc.communicate(timeout=60)) for proc in procs]
    winners = [k for k, (proc, _, _) in enumerate(results) if proc.returncode == 0]
    assert winners, results
    if not overwrite:
        assert len(winners) == 1, results
    for k, (proc, out, _) in enumerate(results):
        if proc.returncode != 0:
            assert proc.returncode == 2 and ("being written by another bayesrank run" in out or "already exist" in out)
    content = target.read_text()
    assert content in {f"<{k}>" * 4 for k in winners}  # one writer's whole file, never a mix
    assert (folder / "out.txt.second").read_text() == content
    assert leftovers(folder) == []


def test_two_concurrent_writers_and_one_killed_mid_write(tmp_path):
    """A holds the claim; B is refused naming A's process; A is killed mid-write (SIGKILL:
    its temporary file and lock stay behind); B then takes the abandoned claim over and
    writes, leaving nothing of A's."""
    target = tmp_path / "out.txt"
    a = writer(target, "A", chunks=200, delay=0.05)
    started(a)
    b = writer(target, "B")
    out, _ = b.communicate(timeout=60)
    assert b.returncode == 2 and f"being written by another bayesrank run (process {a.pid} on" in out
    a.kill()
    a.communicate(timeout=60)
    assert leftovers(tmp_path) != []  # what a killed process leaves
    assert not target.exists()
    b = writer(target, "B")
    out, _ = b.communicate(timeout=60)
    assert b.returncode == 0, out
    assert target.read_text() == "B" * 5 and leftovers(tmp_path) == []


def test_a_writer_terminated_mid_write_releases_its_claim_at_once(tmp_path):
    target = tmp_path / "out.txt"
    a = writer(target, "A", chunks=200, delay=0.05)
    started(a)
    a.send_signal(signal.SIGTERM)
    a.communicate(timeout=60)
    assert leftovers(tmp_path) == [] and not target.exists()
    b = writer(target, "B")
    assert b.communicate(timeout=60) and b.returncode == 0
    assert target.read_text() == "B" * 5


# ---------------------------------------------------------------------- the API
def test_a_failed_writer_leaves_old_files_and_no_temporary_file(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("old a")

    def fail(path):
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputError, match="cannot write .*b.txt: No space left on device"):
        write_files({a: lambda p: p.write_text("new a"), b: fail}, overwrite=True)
    assert a.read_text() == "old a" and sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_claims_nest_within_a_process_and_refuse_others(tmp_path):
    target = tmp_path / "f.txt"
    with claim([target]):
        write_text(target, "x")  # this process holds it already
        assert target.read_text() == "x"
    with pytest.raises(OutputError, match="already exists; pass --force"):
        write_text(target, "y")
    assert write_text(target, "y", overwrite=True) == [target] and target.read_text() == "y"


@pytest.mark.parametrize("where", ["under a file", "dangling link", "too long"])
def test_places_that_cannot_hold_a_file_are_named(tmp_path, where):
    (tmp_path / "afile").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    target = {"under a file": tmp_path / "afile" / "out.txt", "dangling link": tmp_path / "link" / "out.txt",
              "too long": tmp_path / ("x" * 300) / "out.txt"}[where]
    fragment = {"under a file": "afile is a file, not a folder", "dangling link": "symbolic link",
                "too long": "too long"}[where]
    with pytest.raises(OutputError, match=fragment):
        write_text(target, "x")


# ---------------------------------------------------------------------- the CLI
HEADER = "model_a,model_b,winner\n"
ROWS = "x,y,model_a\ny,z,model_a\nz,x,model_a\nx,y,model_b\ny,z,tie\n"


def _bayesrank(*args):
    return subprocess.Popen([sys.executable, "-m", "bayesrank.cli", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_two_concurrent_cli_runs_on_one_out_cannot_both_succeed(tmp_path):
    data = tmp_path / "ok.csv"
    data.write_text(HEADER + ROWS)
    out = tmp_path / "run"
    runs = [_bayesrank("fit", data, "--model", model, "--out", out, "--format", "json") for model in ("bt", "davidson")]
    results = [(p.returncode, o, e) for p in runs for o, e in [p.communicate(timeout=600)]]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 2], results
    loser = next(e for code, _, e in results if code == 2)
    assert "being written by another bayesrank run" in loser or "already holds" in loser
    winner = json.loads(next(o for code, o, _ in results if code == 0))
    assert json.loads((out / "summary.json").read_text())["framework"] == winner["framework"]
    assert sorted(p.name for p in out.iterdir()) == ["fit.nc", "leaderboard.csv", "summary.json"]


@SOME
@given(signum=st.sampled_from([signal.SIGTERM, signal.SIGINT]), after=st.floats(0.5, 8))
def test_a_cli_run_interrupted_at_any_time_leaves_all_or_nothing(tmp_path_factory, signum, after):
    folder = tmp_path_factory.mktemp("cli")
    out = folder / "run"
    run = _bayesrank("fit", "mtbench-judges", "--model", "davidson", "--out", out, "--format", "json")
    time.sleep(after)
    run.send_signal(signum)
    _, err = run.communicate(timeout=600)
    written = sorted(p.name for p in out.iterdir()) if out.exists() else []
    assert written in ([], ["fit.nc", "leaderboard.csv", "summary.json"])  # no temporary file, no lock
    if written:  # the signal came after the outputs were in place: all of them, whole
        assert json.loads((out / "summary.json").read_text())["framework"] == "davidson"
        assert br.Fit.load(out / "fit.nc").framework.name == "davidson"
    if run.returncode == 0:  # finished before the signal
        assert written
        return
    if run.returncode in (-signum, 1):  # still starting Python, before bayesrank's handlers: nothing to clean
        return
    assert run.returncode == {signal.SIGTERM: 143, signal.SIGINT: 130}[signum], err
    assert "Traceback" not in err and "Exception ignored" not in err


def test_a_dangling_link_or_a_file_as_out_is_refused_before_reading_data(tmp_path, capsys):
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    (tmp_path / "afile").write_text("x")
    for out, fragment in ((tmp_path / "link", "symbolic link"), (tmp_path / "afile" / "sub", "is a file, not a folder"),
                          (tmp_path / ("x" * 300), "too long")):
        assert main(["fit", str(tmp_path / "missing.csv"), "--model", "bt", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert fragment in err and "missing.csv" not in err  # refused before the data are read


@pytest.fixture
def dml_records(tmp_path):
    from bayesrank.gars.dml.simulate import simulator

    path = tmp_path / "records.csv"
    simulator("bt_misspec", K=3, p=2, random_seed=0).records(300, random_seed=1).to_csv(path, index=False)
    return path


def test_policy_out_never_replaces_the_input_nor_a_file_without_force(tmp_path, capsys, dml_records):
    before = dml_records.read_bytes()
    args = ["dml", str(dml_records), "--features", "x0,x1", "--ties", "binary", "--folds", "2", "--budget", "100",
            "--format", "json", "--policy-out"]
    for extra in ([], ["--force"]):
        assert main(args + [str(dml_records), *extra]) == 2
        assert "is an input this run read; it is never replaced, even with --force" in capsys.readouterr().err
    assert dml_records.read_bytes() == before
    policy = tmp_path / "policy.csv"
    policy.write_text("keep me")
    assert main(args + [str(policy)]) == 2
    assert "already exists; pass --force" in capsys.readouterr().err and policy.read_text() == "keep me"
    assert main(args + [str(policy), "--force"]) == 0
    assert policy.read_text().startswith("context,") and sorted(os.listdir(tmp_path)) == ["policy.csv", "records.csv"]


# ---------------------------------------------------------------------- every output through the writer
def test_every_file_a_command_writes_goes_through_the_writer(tmp_path, capsys, monkeypatch, dml_records):
    """Each file that appears is one the atomic writer made (its temporary file is where every
    write starts): fit --out, a Markdown report with its figures, an HTML report, a saved fit,
    a DML policy."""
    import bayesrank.output.atomic as atomic

    written = []
    temporary = atomic._temporary
    monkeypatch.setattr(atomic, "_temporary", lambda target: written.append(Path(target)) or temporary(target))
    data = tmp_path / "ok.csv"
    data.write_text(HEADER + ROWS)
    out = tmp_path / "out"
    out.mkdir()
    commands = [["fit", str(data), "--model", "bt", "--out", str(out / "run")],
                ["report", str(data), "--models", "bt", "--out", str(out / "r.md")],
                ["report", str(data), "--models", "bt", "--out", str(out / "r.html")],
                ["dml", str(dml_records), "--features", "x0,x1", "--ties", "binary", "--folds", "2", "--budget", "50",
                 "--policy-out", str(out / "policy.csv")]]
    for command in commands:
        assert main(command) == 0, capsys.readouterr().err
    br.fit(br.BradleyTerry(), data).save(out / "fit.nc")
    made = sorted(p for p in out.rglob("*") if p.is_file())
    assert len(made) > 8  # 3 --out files, report.md and its figures, report.html, policy.csv, fit.nc
    assert made == sorted(written)


def test_an_input_is_never_an_output_even_with_force(tmp_path, capsys):
    """The data file of a run cannot become one of its outputs, under any name (a hard link), from
    the CLI (refused when --out is claimed, before the fit) or the API (a fit saved over its own
    records)."""
    import bayesrank as br

    out = tmp_path / "board"
    out.mkdir()
    data = out / "leaderboard.csv"
    data.write_text("model_a,model_b,winner\na,b,model_a\nb,c,tie\nc,a,model_b\na,b,model_b\n")
    before = data.read_bytes()
    assert main(["fit", str(data), "--model", "bt", "--out", str(out), "--force"]) == 2
    assert "is an input this run read; it is never replaced, even with --force" in capsys.readouterr().err
    os.link(data, tmp_path / "same.csv")
    fit = br.fit(br.BradleyTerry(), str(tmp_path / "same.csv"))
    with pytest.raises(br.OutputError, match="is an input this run read"):
        fit.save(data)
    assert data.read_bytes() == before
    data.unlink()   # gone: a new file in its place is not it
    (tmp_path / "same.csv").unlink()
    fit.save(tmp_path / "fit.nc")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_special_file_is_never_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match="is not a regular file"):
        write_text(fifo, "x", overwrite=True)
    assert fifo.is_fifo()
