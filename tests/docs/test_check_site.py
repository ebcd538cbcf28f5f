"""``docs/check_site.py`` (run by ``make docs``) fails on a page with a console error and passes a
clean page, writing its screenshot either way."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "check_site.py"


@pytest.fixture(scope="module")
def check_site():
    spec = importlib.util.spec_from_file_location("check_site", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page(tmp_path: Path, script: str) -> Path:
    path = tmp_path / "page.html"
    path.write_text(f"<!doctype html><html><body><h1>a page</h1><script>{script}</script></body></html>")
    return path


def test_a_clean_page_passes_and_leaves_a_screenshot(check_site, tmp_path):
    shot = tmp_path / "shot.png"
    assert check_site.main([str(page(tmp_path, 'console.log("informational");')), str(shot)]) == 0
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("script", ['console.error("broken");', "missing();",
                                    'document.body.append(Object.assign(document.createElement("img"), '
                                    '{src: "absent.png"}));'],
                         ids=["console.error", "uncaught", "failed load"])
def test_a_console_error_fails_the_check(check_site, tmp_path, capsys, script):
    assert check_site.main([str(page(tmp_path, script)), str(tmp_path / "shot.png")]) == 1
    assert "check_site:" in capsys.readouterr().err
