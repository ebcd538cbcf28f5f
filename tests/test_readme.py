"""Every code block of the README runs, so the README cannot drift from the package.

Python blocks run in order in one namespace; shell blocks line by line with the package's
own command on the PATH. Both run in a temporary directory. The two set-up commands
(``make demo``, ``make test``) are what CI itself runs, so they are the only lines skipped.
"""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
SETUP = ("make demo", "make test")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    code = blocks("python")
    assert code, "the README has Python examples"
    for k, block in enumerate(code):
        exec(compile(block, f"README.md python block {k}", "exec"), namespace)


@pytest.mark.parametrize("line", [line for block in blocks("bash") for line in block.splitlines()
                                  if line.strip() and not line.startswith(SETUP)])
def test_readme_shell_lines_run(tmp_path, line):
    command = line.split("#")[0].strip()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(shlex.split(command), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_readme_names_the_setup_commands():
    text = README.read_text()
    assert all(cmd in text for cmd in SETUP)
