"""Benchmark tasks, each run by ``bench/run.py`` in its own subprocess.

``python bench/tasks.py TASK [--repeats N]`` prints one line ``BENCH_JSON {...}`` with the
measurements. A fresh process per task keeps "cold" truly cold (PyTensor compilation, numba
JIT) and keeps peak-memory numbers from mixing tasks.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import resource
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

T_PROCESS = time.perf_counter()

sys.path.insert(0, str(Path(__file__).resolve().parent))


def maxrss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def summary(times):
    return {
        "median": statistics.median(times),
        "min": min(times),
        "max": max(times),
        "n": len(times),
        "all": times,
    }


def profile_top(fn, n=25):
    """cProfile of one call: the top entries by cumulative and by own time, as text."""
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    out = {}
    for key in ("cumulative", "tottime"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(key).print_stats(n)
        out[key] = buf.getvalue()
    return out


def load_data():
    import bayesrank as br

    return br.load("arena-2024")


def _diag(fit):
    d = fit.diagnostics
    keys = ("converged", "grad_norm", "iterations", "function_evaluations", "compile_seconds", "seconds")
    return {k: d.get(k) for k in keys}


# ====================================================================== tasks
def task_cold(args):
    """Fresh process: import, load, then the first Davidson k_tie=1 MAP fit (compiles)."""
    t_import, br = timed(lambda: __import__("bayesrank"))
    t_load, data = timed(load_data)
    rss_before = maxrss_mib()
    t_fit, fit = timed(lambda: br.Davidson(k_tie=args.k_tie).fit(data, method="map"))
    return {
        "k_tie": args.k_tie,
        "import_seconds": t_import,
        "load_seconds": t_load,
        "fit_seconds": t_fit,
        "process_seconds": time.perf_counter() - T_PROCESS,
        "nll": fit.nll,
        "diagnostics": _diag(fit),
        "maxrss_mib_before_fit": rss_before,
        "maxrss_mib_after_fit": maxrss_mib(),
    }


def task_cold_tracemalloc(args):
    """Fresh process: tracemalloc peak of the first (compiling) fit, imports excluded."""
    import bayesrank as br

    data = load_data()
    tracemalloc.start()
    fit = br.Davidson(k_tie=args.k_tie).fit(data, method="map")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    tracemalloc.start()
    br.Davidson(k_tie=args.k_tie).fit(data, method="map")
    _, peak_warm = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "k_tie": args.k_tie,
        "tracemalloc_peak_mib_cold_fit": peak / 2**20,
        "tracemalloc_peak_mib_warm_fit": peak_warm / 2**20,
        "nll": fit.nll,
    }


def task_warm_k1(args):
    """One process: a compiling fit, then ``repeats`` warm Davidson k_tie=1 MAP fits."""
    import bayesrank as br

    data = load_data()
    t_first, fit = timed(lambda: br.Davidson(k_tie=1).fit(data, method="map"))
    times, opt = [], []
    for _ in range(args.repeats):
        t, fit = timed(lambda: br.Davidson(k_tie=1).fit(data, method="map"))
        times.append(t)
        opt.append(fit.diagnostics["seconds"])
    out = {
        "first_fit_seconds": t_first,
        "warm": summary(times),
        "warm_optimiser_seconds": summary(opt),
        "nll": fit.nll,
        "diagnostics": _diag(fit),
    }
    if args.profile:
        out["profile"] = profile_top(lambda: br.Davidson(k_tie=1).fit(data, method="map"))
    return out


def task_k0(args):
    """Davidson k_tie=0: ours (cold, then warm) interleaved with the plain scipy fit."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    import bayesrank as br
    import plain

    data = load_data()
    t_cold, fit = timed(lambda: br.Davidson(k_tie=0).fit(data))
    cold_diag = _diag(fit)
    t_plain_first, _ = timed(lambda: plain.fit_davidson(data))
    ours, ours_opt, peer, peer_default_threads = [], [], [], []
    for _ in range(args.repeats):
        t, fit = timed(lambda: br.Davidson(k_tie=0).fit(data))
        ours.append(t)
        ours_opt.append(fit.diagnostics["seconds"])
        # the peer gets the same single-threaded BLAS that bayesrank uses for small problems
        with threadpool_limits(1):
            t, (nll_plain, x_plain, eta_plain, res) = timed(lambda: plain.fit_davidson(data))
        peer.append(t)
        t, _ = timed(lambda: plain.fit_davidson(data))
        peer_default_threads.append(t)
    scores = fit.scores().to_numpy() if hasattr(fit.scores(), "to_numpy") else np.asarray(fit.scores())
    out = {
        "ours_cold_seconds": t_cold,
        "ours_cold_diagnostics": cold_diag,
        "ours_warm": summary(ours),
        "ours_warm_optimiser_seconds": summary(ours_opt),
        "plain_first_seconds": t_plain_first,
        "plain_warm_1thread": summary(peer),
        "plain_warm_default_threads": summary(peer_default_threads),
        "nll_ours": fit.nll,
        "nll_plain": nll_plain,
        "nll_abs_diff": abs(fit.nll - nll_plain),
        "plain_iterations": int(res.nit),
        "plain_message": str(res.message),
        "max_abs_score_diff": float(np.max(np.abs(np.sort(scores) - np.sort(x_plain)))),
        "diagnostics": _diag(fit),
    }
    out["per_evaluation"] = per_evaluation_k0(data)
    if args.profile:
        out["profile"] = profile_top(lambda: br.Davidson(k_tie=0).fit(data))
    return out


def per_evaluation_k0(data, n=300):
    """Seconds per log-likelihood + gradient evaluation: compiled PyTensor vs plain numpy.

    Isolates the cost of one objective call from the optimiser and the post-processing.
    """
    import numpy as np

    import bayesrank as br
    import plain
    from bayesrank.inference.compiled import compiled_model

    fw = br.Davidson(k_tie=0)
    compiled = compiled_model(fw, fw.prepare(data), prior="flat")
    theta = compiled.x0 + 0.01
    a, b, wa, wb, t, m = plain.cells(data)
    params = np.zeros(m + 1) + 0.01
    n_total = float((wa + wb + t).sum())

    def per_call(fn):
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            times.append((time.perf_counter() - t0) / n)
        return statistics.median(times)

    ours = per_call(lambda: compiled.logp_dlogp(theta))
    peer = per_call(lambda: plain.davidson_nll(params, a, b, wa, wb, t, m, n_total))
    return {"ours_seconds": ours, "plain_seconds": peer, "ratio": ours / peer}


def task_bt(args):
    """Bradley–Terry with half ties: ours (cold, warm) interleaved with the plain scipy fit."""
    from threadpoolctl import threadpool_limits

    import bayesrank as br
    import plain

    data = load_data()
    t_cold, fit = timed(lambda: br.BradleyTerry(ties="half").fit(data))
    ours, peer = [], []
    for _ in range(args.repeats):
        t, fit = timed(lambda: br.BradleyTerry(ties="half").fit(data))
        ours.append(t)
        with threadpool_limits(1):
            t, (nll_plain, _, res) = timed(lambda: plain.fit_bt_half_ties(data))
        peer.append(t)
    return {
        "ours_cold_seconds": t_cold,
        "ours_warm": summary(ours),
        "plain_warm_1thread": summary(peer),
        "nll_ours": fit.nll,
        "nll_plain": nll_plain,
        "nll_abs_diff": abs(fit.nll - nll_plain),
        "diagnostics": _diag(fit),
    }


def task_leaderbot(args):
    """leaderbot Davidson(k_cov=None, k_tie=1).train() with the paper defaults; data check."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    t_import, lb = timed(lambda: __import__("leaderbot"))
    t_load, d = timed(lambda: lb.data.load())
    out = {
        "version": getattr(lb, "__version__", None),
        "import_seconds": t_import,
        "load_seconds": t_load,
        "data_check": check_same_data(d),
        "runs": [],
    }
    rss_before = maxrss_mib()
    for i in range(args.repeats):
        threads = 1 if (args.one_thread_last and i == args.repeats - 1 and i > 0) else None
        m = lb.models.Davidson(d, k_cov=None, k_tie=1)
        with threadpool_limits(threads):
            t, _ = timed(lambda: m.train(method="BFGS", max_iter=1500, tol=1e-8))
        res = m._result
        out["runs"].append({
            "seconds": t,
            "blas_threads": "1" if threads == 1 else "default",
            "loss": float(m.loss()),
            "iterations": int(res.nit),
            "success": bool(res.success),
            "message": str(res.message),
            "n_param": int(m.n_param),
        })
    out["maxrss_mib_before_train"] = rss_before
    out["maxrss_mib_after_train"] = maxrss_mib()
    return out


def check_same_data(d):
    """Do leaderbot's bundled data and bayesrank's arena-2024 hold the same counts?"""
    import numpy as np

    ours = load_data()
    names = list(d["models"])
    X, Y = np.asarray(d["X"]), np.asarray(d["Y"])
    theirs = {}
    for (i, j), (w, l, t) in zip(X, Y):
        ni, nj = names[i], names[j]
        if ni > nj:
            ni, nj, w, l = nj, ni, l, w
        prev = theirs.get((ni, nj), (0, 0, 0))
        theirs[(ni, nj)] = (prev[0] + w, prev[1] + l, prev[2] + t)
    mine = {}
    items = list(ours.items)
    for a, b, wa, wb, t in zip(ours.a, ours.b, ours.wins_a, ours.wins_b, ours.ties):
        na, nb = items[a], items[b]
        if na > nb:
            na, nb, wa, wb = nb, na, wb, wa
        prev = mine.get((na, nb), (0, 0, 0))
        mine[(na, nb)] = (prev[0] + wa, prev[1] + wb, prev[2] + t)
    same_pairs = set(theirs) == set(mine)
    mismatched = [k for k in mine if k in theirs and tuple(map(float, mine[k])) != tuple(map(float, theirs[k]))]
    return {
        "leaderbot_models": len(names),
        "leaderbot_pairs": int(X.shape[0]),
        "leaderbot_comparisons": int(Y.sum()),
        "ours_models": int(ours.n_items),
        "ours_pairs": int(ours.n_cells),
        "ours_comparisons": int(round(float(ours.n_comparisons))),
        "same_model_names": sorted(names) == sorted(items),
        "same_pairs": same_pairs,
        "pairs_with_different_counts": len(mismatched),
        "identical": bool(sorted(names) == sorted(items) and same_pairs and not mismatched),
    }


TASKS = {
    "cold": task_cold,
    "cold-tracemalloc": task_cold_tracemalloc,
    "warm-k1": task_warm_k1,
    "k0": task_k0,
    "bt": task_bt,
    "leaderbot": task_leaderbot,
}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("task", choices=sorted(TASKS))
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--k-tie", type=int, default=1)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--one-thread-last", action="store_true")
    args = p.parse_args(argv)
    import warnings

    warnings.simplefilter("ignore")
    out = TASKS[args.task](args)
    out["task"] = args.task
    out["maxrss_mib"] = maxrss_mib()
    print("BENCH_JSON " + json.dumps(out, default=_default))


def _default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)


if __name__ == "__main__":
    main()
