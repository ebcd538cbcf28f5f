"""Every example of the docs site runs (docs/**/*.md, MyST pages: getting started, the user guide,
the index), so the docs cannot drift from the package: the Python cells of a page run in order in one
namespace (a cell tagged ``skip-execution`` is shown, not run), each shell block line by line as
``bash -e`` would run it (:func:`tests.test_readme.run_shell_block`), all in a temporary directory.
NUTS runs are shortened to a few draws as in tests/test_readme.py (the same code paths); the set-up
commands of getting started (``git clone``, ``cd bayesrank``, ``make ...``) are what CI itself runs,
so they are the only lines left out."""

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
#: Lines of a shell block that set a clone up rather than use the package.
SETUP = ("git clone", "cd bayesrank", "make ")


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


def shell_blocks(page: Path) -> list[str]:
    """The shell examples of a page that run: ``bash`` blocks without their set-up lines."""
    found = []
    for block in re.findall(r"```bash\n(.*?)```", page.read_text(), flags=re.S):
        lines = [line for line in block.splitlines() if line.strip() and not line.startswith(SETUP)]
        if lines:
            found.append("\n".join(lines))
    return found


PAGES = sorted(page for page in DOCS.rglob("*.md")
               if "_build" not in page.parts and (cells(page) or shell_blocks(page)))
PYTHON = [page for page in PAGES if cells(page)]


def test_the_pages_with_examples_are_found():
    names = {str(page.relative_to(DOCS)) for page in PAGES}
    assert {"index.md", "getting-started.md", "guide/data.md", "guide/frameworks.md"} <= names


@pytest.mark.parametrize("page", PYTHON, ids=[str(p.relative_to(DOCS)) for p in PYTHON])
def test_the_python_cells_of_a_docs_page_run(page, tmp_path, monkeypatch):
    from tests.test_readme import shorten_nuts

    monkeypatch.chdir(tmp_path)
    shorten_nuts(monkeypatch)  # (NUTS cut to a few draws: the same code paths)
    namespace: dict = {}
    code = cells(page)
    assert code, f"{page.name} has Python examples"
    for k, cell in enumerate(code):
        exec(compile(cell, f"{page.name} cell {k}", "exec"), namespace)


SHELL = [(page, block) for page in PAGES for block in shell_blocks(page)]


@pytest.mark.parametrize("page,block", SHELL,
                         ids=[f"{p.relative_to(DOCS)}: {b.strip().splitlines()[0][:50]}" for p, b in SHELL])
def test_the_shell_blocks_of_a_docs_page_run(page, block, tmp_path):
    from tests.test_readme import run_shell_block, shortened

    run_shell_block("\n".join(shortened(line) for line in block.splitlines()), tmp_path)  # (NUTS cut short)
