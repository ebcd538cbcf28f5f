"""The disk cache of rewritten PyTensor graphs (:mod:`bayesrank.inference.backend`): a second
process must find what the first stored, and a loaded function must behave like a compiled one."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytensor
import pytensor.tensor as pt

from bayesrank.inference import backend

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import pytensor.tensor as pt
    from bayesrank.inference import backend
    from bayesrank.inference.compiled import LIGHT_MODE

    x = pt.vector("x")
    key = ("test-graph-cache", sys.argv[1])
    report = {}
    for tier, mode in (("cheap", None), ("light", LIGHT_MODE)):
        path = backend._graph_path((*key, tier), backend.mode_for("cheap") if mode is None else mode)
        report[tier + "_on_disk"] = path.exists()
        fn = backend.build(lambda: ([x], (2 * x).sum()), key=(*key, tier), tier="cheap", mode=mode)
        out = fn(np.arange(3.0))
        report[tier + "_output"] = [np.shape(out), float(np.asarray(out))]
    print(json.dumps(report))
""")


def _run(tmp_path, tag):
    env = dict(os.environ, PYTENSOR_FLAGS=f"base_compiledir={tmp_path}")
    env.pop(backend.GRAPH_CACHE_ENV, None)
    out = subprocess.run([sys.executable, "-c", SCRIPT, tag], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_second_process_loads_the_stored_graph_and_gets_the_same_function(tmp_path):
    first = _run(tmp_path, "a")
    second = _run(tmp_path, "a")
    assert not first["cheap_on_disk"] and not first["light_on_disk"]
    assert second["cheap_on_disk"] and second["light_on_disk"], "the cache key differs between processes"
    for tier in ("cheap", "light"):  # a single output stays a bare array, not a one-element list
        assert second[f"{tier}_output"] == first[f"{tier}_output"] == [[], 6.0]


def test_rewrites_signature_has_no_memory_addresses():
    make = lambda: pytensor.compile.mode.Mode(linker="cvm", optimizer="fast_run")  # noqa: E731
    assert backend.rewrites_signature(make()) == backend.rewrites_signature(make())
    assert "0x" not in backend.rewrites_signature(make())
    other = pytensor.compile.mode.Mode(linker="cvm", optimizer="fast_compile")
    assert backend.rewrites_signature(other) != backend.rewrites_signature(make())


def test_stale_versions_are_pruned(tmp_path):
    root = tmp_path / "bayesrank-graphs"
    old = [root / f"old{i}" for i in range(backend.KEEP_VERSIONS + 2)]
    for i, folder in enumerate(old):
        folder.mkdir(parents=True)
        (folder / "x.pkl").write_bytes(b"")
        os.utime(folder, (1_000_000 + i, 1_000_000 + i))
    (root / "flat-entry-of-an-old-layout.pkl").write_bytes(b"")
    here = backend.version_folder(root)
    kept = sorted(p.name for p in root.iterdir())
    newest = [f"old{i}" for i in range(len(old) - backend.KEEP_VERSIONS, len(old))]
    assert kept == sorted(newest), kept
    assert here.parent == root and here.name not in kept
    x = pt.vector("x")
    assert json.dumps(float(backend.function([x], x.sum(), key=None)(np.ones(2)))) == "2.0"
