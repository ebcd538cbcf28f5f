"""Light entry points stay light: which heavy libraries a fresh interpreter has imported after
``import bayesrank``, ``bayesrank --help``, ``bayesrank datasets`` and a MAP fit.

Each case runs in a subprocess and reads ``sys.modules`` (no timing: timings live in the bench).
"""

import json
import subprocess
import sys

import pytest

HEAVY = ("pymc", "pytensor", "arviz", "arviz_stats", "numba", "matplotlib")

CASES = {
    "import": "import bayesrank",
    "help": "from bayesrank.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
    "fit-help": "from bayesrank.cli import main\ntry:\n    main(['fit', '--help'])\nexcept SystemExit:\n    pass",
    "datasets": "from bayesrank.cli import main\nassert main(['datasets']) == 0",
    "public-names": "import bayesrank as br\nbr.Davidson(k_tie=1); br.BradleyTerry(); br.load('arena-2024')",
    "map-fit": ("import bayesrank as br\nfit = br.fit(br.BradleyTerry(), 'arena-2024')\n"
                "fit.to_json(); fit.leaderboard()"),
}


def imported_after(code: str) -> list[str]:
    probe = (f"{code}\nimport json, sys\n"
             f"print('MODULES ' + json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    line = [x for x in out.stdout.splitlines() if x.startswith("MODULES ")][-1]
    return json.loads(line[len("MODULES "):])


@pytest.mark.parametrize("case", ["import", "help", "fit-help", "datasets", "public-names"])
def test_light_entry_points_do_not_import_the_pymc_stack(case):
    assert imported_after(CASES[case]) == []


def test_help_imports_neither_the_model_layer_nor_pandas():
    """``bayesrank --help`` builds no command's options, so it reads no framework."""
    code = CASES["help"] + ("\nimport sys\n"
                            "assert not {'pandas', 'scipy', 'bayesrank.model'} & set(sys.modules), sys.modules")
    assert imported_after(code) == []


@pytest.mark.parametrize("case", ["help", "fit-help", "datasets", "map-fit"])
def test_scipy_stats_is_not_imported(case):
    """scipy.stats costs about a second of imports (its docstrings are parsed): the normal and
    χ² functions bayesrank needs come from scipy.special."""
    assert imported_after(CASES[case] + "\nimport sys\nassert 'scipy.stats' not in sys.modules") is not None


def test_map_fit_does_not_import_arviz():
    loaded = imported_after(CASES["map-fit"])
    assert "pymc" in loaded  # the model is a PyMC model ...
    assert "arviz" not in loaded and "arviz_stats" not in loaded  # ... but MAP never needs ArviZ


def test_lazy_module_binds_on_first_attribute():
    code = ("from bayesrank.runtime.lazy import lazy_module, is_imported\n"
            "m = lazy_module('fractions')\nassert not is_imported('fractions')\n"
            "assert m.Fraction(1, 2) + m.Fraction(1, 2) == 1\nassert is_imported('fractions')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
