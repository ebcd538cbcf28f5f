"""Every code block of the README (and every Python block of the user guide, docs/guide) runs, so
neither can drift from the package.

Python blocks run in order in one namespace; each shell block runs as one ``bash -e`` script
(as a user pastes it: later lines use the files earlier lines wrote) with the package's own
command on the PATH. Both run in a temporary directory. The two set-up commands (``make demo``,
``make test``) are what CI itself runs, so they are the only lines left out.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SETUP = ("make demo", "make test")


GUIDE = sorted((README.parent / "docs" / "guide").glob("*.md"))


def blocks(language: str, page: Path = README) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", page.read_text(), flags=re.S)


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    code = blocks("python")
    assert code, "the README has Python examples"
    for k, block in enumerate(code):
        exec(compile(block, f"README.md python block {k}", "exec"), namespace)
    # the README's posteriors are converged: an example teaches what a trustworthy fit looks like
    for name, fit in _nuts_fits(namespace):
        d = fit.diagnostics
        assert fit.converged, (f"README's NUTS example {name!r} is not converged (r_hat {d['max_rhat']:.4f}, ESS "
                               f"{d['min_ess_bulk']:.0f}/{d['min_ess_tail']:.0f}, {d['divergences']} divergences)")


@pytest.mark.parametrize("page", GUIDE, ids=[p.stem for p in GUIDE])
def test_guide_python_blocks_run(tmp_path, monkeypatch, page):
    """Each page of the user guide (docs/guide) runs as the README does: its Python blocks in order."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for k, block in enumerate(blocks("python", page)):
        exec(compile(block, f"{page.name} python block {k}", "exec"), namespace)


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


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=[b.strip().splitlines()[0][:60] for b in SHELL_BLOCKS])
def test_readme_shell_blocks_run(tmp_path, block):
    script = "\n".join(line for line in block.splitlines() if not line.startswith(SETUP))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
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
