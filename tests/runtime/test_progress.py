"""Progress bars: seen in a terminal (commands run under a pseudo-terminal), absent from JSON
pipelines unless asked for, and on every long job; compare refuses incomparable models before
it samples."""

import os
import re
import sys

import numpy as np
import pytest

import bayesrank as br
from bayesrank import gars
from bayesrank.cli import main
from bayesrank.data.simulate import judge_panel
from bayesrank.evaluation.compare import check_comparable, compare
from bayesrank.evaluation.selection import select_rank
from bayesrank.report import Report
from bayesrank.runtime import progress
from tests.conftest import simulate_counts, terminal_bytes

BAYESRANK = [sys.executable, "-m", "bayesrank.cli"]
NUTS = ["--method", "nuts", "--draws", "100", "--tune", "100", "--chains", "2", "--seed", "1"]
#: Escape sequences of a terminal (colours, cursor moves).
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def in_terminal(args, timeout=300) -> str:
    """Everything ``bayesrank ARGS`` writes to a pseudo-terminal (stdout and stderr both), as a
    terminal shows it without escape sequences. The terminal's size is left unset (0 × 0), as
    under ``script`` or a bare pty, the hardest case for a progress bar."""
    env = {**os.environ, "TERM": "xterm", "PYTHONUNBUFFERED": "1"}
    env.pop("CI", None)  # numpyro hides its bar under CI or pytest-xdist; a user's terminal has neither
    env.pop("PYTEST_XDIST_WORKER", None)
    returncode, written = terminal_bytes([*BAYESRANK, *args], env=env, timeout=timeout)
    text = ANSI.sub("", written.decode("utf-8", "replace")).replace("\r", "\n")
    assert returncode == 0, text[-2000:]
    return text


def test_nuts_progress_is_visible_in_a_terminal_for_the_default_sampler_and_numpyro():
    default = in_terminal(["fit", "mtbench-judges", "--model", "btl", *NUTS, "--top", "2"])
    assert "draws/s" in default and "sampler pymc" in default          # PyMC's bar; the table names the sampler
    numpyro = in_terminal(["fit", "mtbench-judges", "--model", "btl", *NUTS, "--sampler", "numpyro", "--top", "2"])
    assert re.search(r"Running chain \d+:\s+\d+%", numpyro) and "sampler numpyro" in numpyro


def test_json_pipelines_get_progress_only_when_asked():
    """A MAP bootstrap (a long job of its own): its bar in a terminal, none under --format json
    unless --progress asks."""
    boot = ["fit", "mtbench-judges", "--model", "bt", "--intervals", "bootstrap", "--n-boot", "40"]
    assert re.search(r"bootstrap: refitting resamples .*40/40", in_terminal([*boot, "--top", "2"]))
    quiet = in_terminal([*boot, "--format", "json"])
    assert "bootstrap: refitting" not in quiet and quiet.strip().startswith('{"framework"')
    assert "bootstrap: refitting" in in_terminal([*boot, "--format", "json", "--progress"])


@pytest.fixture(scope="module")
def small():
    return simulate_counts(np.array([-0.6, -0.1, 0.3, 0.5]), 100, np.random.default_rng(9), eta=-0.5)


def test_every_long_job_draws_a_bar_when_asked(small, capsys):
    """Rank selection, GARS of a saved fit, leave-one-out and report figures each say what they do."""
    panel = br.load(judge_panel(np.linspace(-1, 1, 5), 6, np.random.default_rng(0), gamma=np.ones(4)).records)
    kw = dict(method="nuts", draws=100, tune=100, chains=2, random_seed=2, progressbar=False)
    posts = {"davidson": br.fit(br.Davidson(), small, **kw), "rao-kupper": br.fit(br.RaoKupper(), small, **kw)}
    capsys.readouterr()
    with progress.showing(True):
        select_rank(br.HJA(), panel, criterion="bic", max_rank=1)
        gars.from_fit(br.fit(br.Davidson(), small), "borda")
        compare(posts, refit=None)
        Report(posts, top=4).html()
    err = capsys.readouterr().err
    for what in ("rank selection: a fit per rank (BIC)", "GARS borda: Jacobian of F per context",
                 "leave-one-out per model", "report: figures"):
        assert what in err
    with progress.showing(False):
        gars.from_fit(br.fit(br.Davidson(), small), "borda")
    assert capsys.readouterr().err == ""


def test_compare_refuses_incomparable_models_before_sampling(monkeypatch, capsys):
    def no_sampling(*args, **kwargs):
        raise AssertionError("compare sampled before checking its models")

    monkeypatch.setattr("bayesrank.results.fit.fit", no_sampling)
    code = main(["compare", "mtbench-judges", "--models", "btl", "btl:ties=davidson", *NUTS[2:]])
    assert code == 2 and "score different observations" in capsys.readouterr().err
    with pytest.raises(br.BayesrankError, match="needs a judge per comparison"):
        check_comparable({"ja": br.JudgeAware(), "bt": br.BradleyTerry()}, br.load("arena-2024"))
