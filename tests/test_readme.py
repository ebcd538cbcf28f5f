"""Every code block of the README runs, so it cannot drift from the package (the user guide's
examples: tests/test_docs.py).

Python blocks run in order in one namespace; each shell block runs as one ``bash -e`` script
(as a user pastes it: later lines use the files earlier lines wrote) with the package's own
command on the PATH. Both run in a temporary directory. The two set-up commands (``make demo``,
``make test``) are what CI itself runs, so they are the only lines left out.

The default tier runs every block with NUTS shortened to :data:`SHORT` draws and tuning steps
(the code paths are the same; only the number of iterations differs); the slow tier runs them
as written and checks that every NUTS example converges.
"""

import contextlib
import functools
import io
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SETUP = ("make demo", "make test")


def blocks(language: str, page: Path = README) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", page.read_text(), flags=re.S)


#: Draws and tuning steps of every NUTS run in the default tier.
SHORT = 50
#: The tiers: (id, shortened) — the full runs are slow.
TIERS = [pytest.param(True, id="short"), pytest.param(False, id="as-written", marks=pytest.mark.slow)]


def shorten_nuts(monkeypatch) -> None:
    """Every ``br.fit(..., method="nuts")`` of this test runs :data:`SHORT` draws and tuning steps."""
    from bayesrank.results import fit as fit_module

    full = fit_module.METHODS["nuts"]

    @functools.wraps(full)
    def short(*args, **kwargs):
        return full(*args, **{**kwargs, "draws": min(kwargs.get("draws", 1000), SHORT),
                              "tune": min(kwargs.get("tune", 1000), SHORT)})

    monkeypatch.setitem(fit_module.METHODS, "nuts", short)


@pytest.mark.parametrize("short", TIERS)
def test_readme_python_blocks_run(tmp_path, monkeypatch, short):
    monkeypatch.chdir(tmp_path)
    if short:
        shorten_nuts(monkeypatch)
    namespace: dict = {}
    code = blocks("python")
    assert code, "the README has Python examples"
    for k, block in enumerate(code):
        exec(compile(block, f"README.md python block {k}", "exec"), namespace)
    if short:
        return
    # the README's posteriors are converged: an example teaches what a trustworthy fit looks like
    for name, fit in _nuts_fits(namespace):
        d = fit.diagnostics
        assert fit.converged, (f"README's NUTS example {name!r} is not converged (r_hat {d['max_rhat']:.4f}, ESS "
                               f"{d['min_ess_bulk']:.0f}/{d['min_ess_tail']:.0f}, {d['divergences']} divergences)")


def _nuts_fits(namespace: dict):
    """(name, fit) of every NUTS fit the README's Python blocks left in their namespace (also in dicts)."""
    from bayesrank.results.fit import Fit

    for name, value in namespace.items():
        found = value.items() if isinstance(value, dict) else [(name, value)]
        for key, fit in found:
            if isinstance(fit, Fit) and fit.method == "nuts":
                yield (key if isinstance(value, dict) else name), fit


SHELL_BLOCKS = [block for block in blocks("bash")
                if any(line.strip() and not line.startswith(SETUP) for line in block.splitlines())]


def shortened(line: str) -> str:
    """A command line with its NUTS run shortened to :data:`SHORT` draws and tuning steps (the
    options go before a ``> FILE`` redirection or a comment)."""
    if "--method nuts" not in line and not line.lstrip().startswith("bayesrank compare"):
        return line
    tail = re.search(r" > | +#", line)
    cut = tail.start() if tail else len(line)
    command = re.sub(r" --(draws|tune) \d+", "", line[:cut]).rstrip()
    return f"{command} --draws {SHORT} --tune {SHORT}{line[cut:]}"


#: Characters that make a line a shell program rather than one command (with an optional ``> FILE``).
_SHELL_SYNTAX = set("|<>;&$`(){}*?[]~\\")


def run_shell_block(block: str, cwd: Path) -> str:
    """Run a shell example line by line in ``cwd`` as ``bash -e`` would, and return its standard output.

    A line that is one ``bayesrank`` command (optionally ending in ``> FILE``) runs through the
    command line's own entry point, :func:`bayesrank.cli.main`, in this process: the same code a
    shell runs, without a new interpreter's start-up and compilation per line (the CLI as a
    separate process is tested in tests/test_cli.py and tests/test_reliability.py). Any other
    line runs in ``bash -e`` with the package's command on the PATH. The first line that exits
    with a non-zero code fails the test, with its standard error.
    """
    from bayesrank.cli import main

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    printed = []
    for line in block.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:  # not one command: the shell reads it
            words = None
        if words == []:  # a blank or comment line: nothing to run
            continue
        target = None
        if words and len(words) > 2 and words[-2] == ">":
            words, target = words[:-2], words[-1]
        if not words or words[0] != "bayesrank" or _SHELL_SYNTAX & set("".join(words)):
            proc = subprocess.run(["bash", "-e", "-c", line], cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=1800)
            assert proc.returncode == 0, f"{line}\n{proc.stderr[-2000:]}"
            printed.append(proc.stdout)
            continue
        out, err = io.StringIO(), io.StringIO()
        with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(words[1:])
            except SystemExit as stop:  # argparse's usage errors
                code = stop.code
        assert code == 0, f"{line}\n{err.getvalue()[-2000:]}"
        if target is None:
            printed.append(out.getvalue())
        else:
            (cwd / target).write_text(out.getvalue())
    return "".join(printed)


@pytest.mark.parametrize("short", TIERS)
@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=[b.strip().splitlines()[0][:60] for b in SHELL_BLOCKS])
def test_readme_shell_blocks_run(tmp_path, block, short):
    lines = [line for line in block.splitlines() if not line.startswith(SETUP)]
    stdout = run_shell_block("\n".join(shortened(line) if short else line for line in lines), tmp_path)
    if short:
        return
    for line in stdout.splitlines():  # the JSON of a NUTS fit says it converged
        if line.startswith('{"framework"') and '"method": "nuts"' in line:
            assert json.loads(line)["converged"], f"a NUTS example of the README is not converged: {line[:300]}"


def test_readme_names_the_setup_commands():
    text = README.read_text()
    assert all(cmd in text for cmd in SETUP)


def test_ci_runs_the_setup_commands():
    """CI's script runs both set-up commands itself (a missing install step fails CI, not a user)."""
    commands = [line.split("#")[0].strip() for line in (README.parent / ".ci" / "run").read_text().splitlines()]
    assert all(cmd in commands for cmd in SETUP)


def test_readme_is_read_in_minutes():
    """The README stays a front page (what, set-up, quick starts, links); the docs hold the rest."""
    lines = README.read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move detail into docs/"
    links = set(re.findall(r"\]\((docs/[^)#]+)", README.read_text()))
    missing = [link for link in links if not (README.parent / link).exists()]
    assert links and not missing, f"README links to missing docs pages: {missing}"
