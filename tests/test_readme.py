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

import functools
import json
import os
import re
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
    """A command line with its NUTS run shortened to :data:`SHORT` draws and tuning steps."""
    if "--method nuts" not in line and not line.lstrip().startswith("bayesrank compare"):
        return line
    line = re.sub(r"--(draws|tune) \d+", "", line)
    return f"{line.rstrip()} --draws {SHORT} --tune {SHORT}"


@pytest.mark.parametrize("short", TIERS)
@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=[b.strip().splitlines()[0][:60] for b in SHELL_BLOCKS])
def test_readme_shell_blocks_run(tmp_path, block, short):
    lines = [line for line in block.splitlines() if not line.startswith(SETUP)]
    script = "\n".join(shortened(line) if short else line for line in lines)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
    if short:
        return
    for line in proc.stdout.splitlines():  # the JSON of a NUTS fit says it converged
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
