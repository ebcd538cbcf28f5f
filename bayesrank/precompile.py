"""Compile the standard models once, so that a fresh install's first fit does not wait on a compiler.

A fit compiles its model's log-density and the per-cell kernels of the information
(:mod:`bayesrank.inference.backend`): the rewritten graphs (run on PyTensor's NumPy
thunks, nothing to compile), and for the log-density of repeated fits numba's machine code,
both cached on disk under PyTensor's ``base_compiledir``. :func:`precompile` fits the standard models on the
bundled datasets once and compiles their hot tier, which fills those caches; every later
process, including the very first ``bayesrank fit`` of a fresh install, loads code instead
of compiling it. ``make install`` runs it (``bayesrank precompile``); a ``pip install`` user
runs it once by hand.

The rewritten graphs are per model *structure* (framework options, numbers of items and judges), so a new
shape spends its rewrites once and is cached from then on. ``fit.diagnostics
["compile_seconds"]`` says how much of a fit was compiling.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bayesrank.data.load import load_dataset
from bayesrank.inference.backend import compile_seconds
from bayesrank.inference.compiled import compiled
from bayesrank.model.framework import Framework
from bayesrank.model.judge_aware import BTL, JudgeAware
from bayesrank.model.paired import BradleyTerry, Davidson, RaoKupper
from bayesrank.results.fit import fit

#: (bundled dataset, framework) pairs compiled by :func:`precompile`: the CLI's defaults and
#: the models of the README, on the bundled data.
STANDARD: tuple[tuple[str, Framework], ...] = (
    ("arena-2024", Davidson(k_tie=1)),
    ("arena-2024", Davidson(k_tie=0)),
    ("arena-2024", BradleyTerry(ties="half")),
    ("arena-2024", BradleyTerry(ties="drop")),
    ("arena-2024", RaoKupper(k_tie=0)),
    ("arena-2024", RaoKupper(k_tie=1)),
    ("mtbench-judges", JudgeAware()),
    ("mtbench-judges", BTL()),
)


def precompile(models=STANDARD, report: Callable[[str], None] | None = print) -> list[dict]:
    """Fit each (dataset, framework) once by MAP so that its compiled code is cached on disk.

    Parameters
    ----------
    models : sequence of (str, Framework)
        Bundled dataset names and frameworks (default :data:`STANDARD`).
    report : callable, optional
        Called with one line per model (default ``print``; None for silence).

    Returns
    -------
    list of dict
        Per model: ``dataset``, ``framework`` (label), ``seconds`` and ``compile_seconds``.
    """
    out = []
    for dataset, framework in models:
        t0, c0 = time.perf_counter(), compile_seconds()
        data = load_dataset(dataset)
        result = fit(framework, data)
        result.to_json()
        # the hot tier's machine code of the log-density, for repeated fits (inference/backend.py)
        compiled(framework, framework.prepare(data), "flat").promote(force=True)
        row = {"dataset": dataset, "framework": framework.label, "seconds": time.perf_counter() - t0,
               "compile_seconds": compile_seconds() - c0}
        out.append(row)
        if report is not None:
            report(f"{framework.label} on {dataset}: {row['seconds']:.1f} s ({row['compile_seconds']:.1f} s compiling)")
    return out
