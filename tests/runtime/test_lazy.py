"""Lazily bound third-party modules: imported on first use, never earlier, and the module itself
once imported (each case in a fresh interpreter, whose ``sys.modules`` is the evidence)."""

import json
import subprocess
import sys

from bayesrank.runtime.lazy import is_imported, lazy_module


def run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_an_imported_module_is_returned_itself():
    assert lazy_module("json") is json and is_imported("json")


def test_listing_a_stand_in_imports_it_and_binding_does_not():
    code = ("import json, sys\nfrom bayesrank.runtime.lazy import lazy_module\n"
            "m = lazy_module('tomllib')\nbound = 'tomllib' in sys.modules\nnames = dir(m)\n"
            "print(json.dumps({'bound': bound, 'listed': 'tomllib' in sys.modules, 'has_loads': 'loads' in names,"
            " 'same': m.loads is sys.modules['tomllib'].loads}))")
    assert run(code) == {"bound": False, "listed": True, "has_loads": True, "same": True}


def test_a_missing_module_fails_on_first_use_not_at_binding():
    code = ("import json\nfrom bayesrank.runtime.lazy import lazy_module\nm = lazy_module('no_such_module_here')\n"
            "try:\n    m.anything\n    failed = None\nexcept ModuleNotFoundError as err:\n    failed = err.name\n"
            "print(json.dumps({'failed': failed}))")
    assert run(code) == {"failed": "no_such_module_here"}
