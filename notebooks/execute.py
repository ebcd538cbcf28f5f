"""Execute the notebooks in place with a real Jupyter kernel (``make notebooks``), so they are
committed with their outputs and read well on the web."""

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent


def execute(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}).execute()
    nbformat.write(nb, path)
    print(f"executed {path.name}")


if __name__ == "__main__":
    for name in sys.argv[1:] or sorted(p.name for p in HERE.glob("*.ipynb")):
        execute(HERE / name)
