"""Every example of the user guide runs (docs/guide/*.md, MyST pages), so the guide cannot drift from
the package: the Python cells of a page run in order in one namespace (a cell tagged
``skip-execution`` is shown, not run: a NUTS fit), each shell block as one ``bash -e`` script with the
package's own command on the PATH, all in a temporary directory."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide"
PAGES = sorted(GUIDE.glob("*.md"))


def cells(page: Path) -> list[str]:
    """The Python examples of a page that run: MyST code cells (not tagged ``skip-execution``)
    and ``python`` blocks, except doctest-style displays (``>>>``) and blocks whose first line
    says ``# template:`` (a job on the reader's own files)."""
    text = page.read_text()
    found = [cell for cell in re.findall(r"```\{code-cell\} python\n(.*?)```", text, flags=re.S)
             if "skip-execution" not in cell.split("\n\n")[0]]
    found += [block for block in re.findall(r"```python\n(.*?)```", text, flags=re.S)
              if not block.lstrip().startswith((">>>", "# template:"))]
    return found


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_the_python_cells_of_a_guide_page_run(page, tmp_path, monkeypatch):
    from tests.test_readme import shorten_nuts

    monkeypatch.chdir(tmp_path)
    shorten_nuts(monkeypatch)  # (NUTS cut to a few draws: the same code paths)
    namespace: dict = {}
    code = cells(page)
    assert code, f"{page.name} has Python examples"
    for k, cell in enumerate(code):
        exec(compile(cell, f"{page.name} cell {k}", "exec"), namespace)


SHELL = [(page, block) for page in PAGES for block in re.findall(r"```bash\n(.*?)```", page.read_text(), flags=re.S)]


@pytest.mark.parametrize("page,block", SHELL, ids=[f"{p.stem}: {b.strip().splitlines()[0][:50]}" for p, b in SHELL])
def test_the_shell_blocks_of_a_guide_page_run(page, block, tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-e", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stderr[-2000:]
