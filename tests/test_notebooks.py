"""The notebooks run top to bottom (code cells executed in one namespace, no Jupyter needed)."""

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path):
    cells = json.loads(path.read_text())["cells"]
    namespace = {}
    for k, cell in enumerate(cells):
        if cell["cell_type"] == "code":
            exec(compile("".join(cell["source"]), f"{path.name}[cell {k}]", "exec"), namespace)
