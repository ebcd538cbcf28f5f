"""The API reference of the docs site (docs/api/index.md) covers the public API exactly: every name
of ``bayesrank.__all__`` has its own page, written as ``bayesrank.<name>``, and every name the
reference lists exists. A name added to ``__all__`` without a page fails here."""

import re
from pathlib import Path

import bayesrank

API = Path(__file__).resolve().parents[2] / "docs" / "api" / "index.md"


def autosummaries(text: str) -> list[tuple[bool, list[str]]]:
    """(has its own pages, names) of every ``autosummary`` directive of a page."""
    found = []
    for block in re.findall(r"\.\. autosummary::\n(.*?)(?:\n```|\Z)", text, flags=re.S):
        lines = block.splitlines()
        options = [line.strip() for line in lines if line.strip().startswith(":")]
        names = [line.strip() for line in lines if line.strip() and not line.strip().startswith(":")]
        found.append((any(option.startswith(":toctree:") for option in options), names))
    return found


def listed(text: str) -> tuple[list[str], list[str]]:
    """The names with pages of their own, and every name listed."""
    blocks = autosummaries(text)
    paged = [name for own, names in blocks if own for name in names]
    return paged, [name for _, names in blocks for name in names]


def test_every_public_name_has_its_own_api_page():
    paged, _ = listed(API.read_text())
    missing = sorted(set(bayesrank.__all__) - set(paged))
    assert not missing, f"names of bayesrank.__all__ without a page in {API.name}: {missing}"
    assert len(paged) == len(set(paged)), "a name is listed twice"


def test_every_listed_name_exists_at_the_top_level():
    _, names = listed(API.read_text())
    assert names
    for name in names:
        head, *rest = name.split(".")
        assert head in bayesrank.__all__, f"{name}: the API reference lists top-level names only"
        value = getattr(bayesrank, head)
        for part in rest:
            assert hasattr(value, part), f"{name} does not exist"
            value = getattr(value, part)


def test_the_reference_is_written_from_the_top_level():
    text = API.read_text()
    assert text.count(".. currentmodule:: bayesrank\n") == len(autosummaries(text))
    assert not re.search(r"bayesrank\.[a-z_]+\.[A-Za-z_]", text), "no module paths on the API page"


def test_a_name_added_without_a_page_is_caught():
    paged, _ = listed(API.read_text().replace("   select_rank\n", ""))
    assert "select_rank" not in paged
