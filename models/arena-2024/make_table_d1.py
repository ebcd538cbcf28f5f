#!/usr/bin/env python3
"""Reproduce leaderbot Tables D.1–D.3 (Ameli et al., ICLR 2025) on arena-2024: all 30 models by MAP.

Usage (from the repository root)::

    python models/arena-2024/make_table_d1.py fit            # full-data fits  -> d1-results.jsonl
    python models/arena-2024/make_table_d1.py split          # 90/10 split fits -> d3-results.jsonl
    python models/arena-2024/make_table_d1.py table          # -> table-d1.md
    B_MODELS=18,30 python models/arena-2024/make_table_d1.py fit   # a subset
    B_MODELS=8abs python models/arena-2024/make_table_d1.py fit    # paper-form Rao–Kupper of model 8

Fits are cached one JSON line per model (delete a line, or pass ``--force``, to refit), so
the expensive grid runs once. Each line holds the metrics and the full score vector, from
which the Kendall τ table and the rankings are computed. One BLAS thread per process (the
machine is shared; multi-threaded BLAS under contention made gradients ~1000x slower).
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import bayesrank as br
from bayesrank.evaluate import goodness_of_fit, information_criteria

HERE = Path(__file__).resolve().parent
FULL, SPLIT, TABLE = HERE / "d1-results.jsonl", HERE / "d3-results.jsonl", HERE / "table-d1.md"

# paper Table D.1 (digest seed-leaderbot.md §4.4): n_params, NLL, H_win, H_loss, H_tie, seconds
PAPER_D1 = {1: (129, 0.6554, 0.3177, 0.3376, None, 2.3), 2: (258, 0.6552, 0.3180, 0.3371, None, 3.8),
            3: (645, 0.6549, 0.3178, 0.3370, None, 34.1), 4: (129, 0.6351, 0.3056, 0.3295, None, 0.0),
            5: (258, 0.6346, 0.3059, 0.3287, None, 1.7), 6: (645, 0.6342, 0.3057, 0.3285, None, 27.5), 7: (130, 1.0095, 0.3405, 0.3462, 0.3227, 5.8), 8: (258, 1.0106, 0.3401, 0.3459, 0.3245, 6.9), 9: (1419, 1.0055, 0.3404, 0.3455, 0.3196, 208.1), 10: (2709, 1.005, 0.3403, 0.3455, 0.3192, 396.9), 11: (259, 1.0092, 0.3408, 0.3457, 0.3228, 8.4), 12: (387, 1.0103, 0.3404, 0.3454, 0.3245, 7.5), 13: (1548, 1.0052, 0.3407, 0.3449, 0.3196, 293.7), 14: (2838, 1.0048, 0.3406, 0.3449, 0.3193, 664.9), 15: (646, 1.0089, 0.3405, 0.3457, 0.3227, 36.0), 16: (774, 1.01, 0.34, 0.3454, 0.3245, 36.9), 17: (1935, 1.0049, 0.3403, 0.3449, 0.3196, 363.5), 18: (3225, 1.0044, 0.3403, 0.3449, 0.3193, 817.3), 19: (130, 1.01, 0.3409, 0.3461, 0.3231, 6.0), 20: (258, 1.0077, 0.3413, 0.3466, 0.3198, 10.5), 21: (1419, 1.0057, 0.3404, 0.3456, 0.3197, 253.2), 22: (2709, 1.0052, 0.3404, 0.3455, 0.3193, 602.8), 23: (259, 1.0098, 0.3411, 0.3455, 0.3231, 8.7), 24: (387, 1.0074, 0.3415, 0.346, 0.32, 8.3), 25: (1548, 1.0055, 0.3407, 0.3451, 0.3197, 286.9), 26: (2838, 1.005, 0.3407, 0.345, 0.3194, 665.1), 27: (646, 1.0094, 0.341, 0.3453, 0.3231, 34.6), 28: (774, 1.007, 0.3412, 0.346, 0.3199, 35.8), 29: (1935, 1.0051, 0.3407, 0.3448, 0.3197, 366.4), 30: (3225, 1.0047, 0.3405, 0.3448, 0.3194, 804.9)}
# Tables D.2 / D.3: RMSE win, loss, tie, all; KLD, JSD (x100)
PAPER_D2 = {1: (29.7, 29.7, None, 29.7, 1.49, 0.44), 2: (26.2, 26.2, None, 26.2, 1.42, 0.42), 3: (17.4, 17.4, None, 17.4, 1.3, 0.39), 4: (35.1, 35.1, None, 35.1, 1.82, 0.52), 5: (31.5, 31.5, None, 31.5, 1.71, 0.49), 6: (17.3, 17.3, None, 17.3, 1.58, 0.46), 7: (48.2, 69.9, 103.5, 77.3, 3.32, 0.92), 8: (46.4, 67.8, 99.2, 74.3, 3.45, 0.91), 9: (34.1, 34.2, 23.1, 30.9, 2.63, 0.73), 10: (34.3, 32.2, 16.8, 28.8, 2.35, 0.65), 11: (46.5, 67.9, 103.6, 76.4, 3.23, 0.9), 12: (43.5, 66.8, 99.4, 73.5, 3.36, 0.89), 13: (29.8, 31.6, 22.7, 28.3, 2.55, 0.7), 14: (30.4, 29.1, 16.7, 26.1, 2.26, 0.63), 15: (49.0, 61.7, 104.7, 75.6, 3.09, 0.86), 16: (48.6, 58.7, 100.9, 73.0, 3.18, 0.84), 17: (20.0, 21.2, 22.1, 21.1, 2.42, 0.67), 18: (18.7, 18.9, 15.8, 17.9, 2.12, 0.59), 19: (51.0, 71.8, 109.8, 81.3, 3.41, 0.94), 20: (44.4, 63.3, 90.1, 68.6, 2.99, 0.82), 21: (37.1, 39.6, 25.7, 34.7, 2.69, 0.75), 22: (37.7, 37.1, 17.2, 32.1, 2.5, 0.7), 23: (49.4, 70.5, 109.9, 80.6, 3.32, 0.92), 24: (41.1, 62.4, 91.4, 68.1, 2.94, 0.81), 25: (32.8, 37.7, 27.0, 32.8, 2.73, 0.76), 26: (35.7, 32.6, 18.8, 30.0, 2.56, 0.72), 27: (55.1, 61.1, 111.0, 79.8, 3.18, 0.89), 28: (46.5, 50.0, 90.6, 65.5, 2.8, 0.78), 29: (20.8, 22.0, 25.0, 22.7, 2.57, 0.72), 30: (19.1, 19.0, 17.1, 18.4, 2.43, 0.68)}
PAPER_D3 = {1: (27.4, 27.4, None, 27.4, 1.46, 0.41), 2: (27.6, 27.6, None, 27.6, 1.48, 0.41), 3: (27.1, 27.1, None, 27.1, 1.55, 0.43), 4: (30.0, 30.0, None, 30.0, 1.74, 0.48), 5: (30.3, 30.3, None, 30.3, 1.77, 0.48), 6: (30.4, 30.4, None, 30.4, 2.06, 0.54), 7: (54.5, 29.1, 67.4, 52.8, 3.16, 0.88), 8: (49.9, 41.9, 74.3, 57.0, 3.31, 0.87), 9: (26.3, 38.6, 32.1, 32.7, 3.17, 0.85), 10: (29.0, 56.3, 66.4, 53.0, 4.14, 1.0), 11: (52.9, 31.5, 67.8, 52.9, 3.19, 0.88), 12: (46.8, 45.5, 75.0, 57.4, 3.31, 0.87), 13: (25.9, 38.5, 31.6, 32.4, 3.1, 0.84), 14: (30.2, 54.3, 64.6, 51.7, 4.66, 1.06), 15: (50.3, 33.8, 68.1, 52.6, 3.31, 0.9), 16: (51.6, 42.1, 75.0, 57.9, 3.59, 0.93), 17: (28.5, 34.9, 32.3, 32.0, 3.25, 0.87), 18: (35.9, 59.6, 67.1, 55.8, 4.71, 1.07), 19: (54.7, 30.8, 70.0, 54.3, 3.28, 0.91), 20: (43.1, 24.6, 42.7, 37.8, 2.76, 0.77), 21: (27.6, 41.8, 31.4, 34.2, 2.95, 0.81), 22: (28.6, 65.5, 73.4, 59.1, 3.42, 0.93), 23: (54.0, 32.8, 70.2, 54.5, 3.31, 0.92), 24: (44.2, 26.2, 45.0, 39.4, 2.91, 0.81), 25: (26.9, 40.0, 28.6, 32.3, 3.06, 0.84), 26: (31.0, 68.3, 80.4, 63.5, 3.51, 0.96), 27: (52.5, 34.2, 70.2, 54.3, 3.4, 0.93), 28: (40.7, 28.2, 44.0, 38.2, 2.87, 0.79), 29: (33.6, 32.7, 28.5, 31.6, 3.31, 0.89), 30: (32.8, 71.6, 83.3, 66.2, 3.70, 1.00)}
# leaderbot 0.4.3 rerun (digest §4.9): BFGS reported convergence (MM for 1 and 4)
LEADERBOT_CONVERGED = {1, 2, 4, 5, 7, 8, 11, 19, 23}


#: paper-form Rao–Kupper variants (η = √(h² + 0.01²), leaderbot's |h| floored): ID -> k_cov
PAPER_FORM = {8: None, 12: 0, 16: 3}
PAPER_FORM_IDS = [f"{mid}abs" for mid in PAPER_FORM]


def paper_id(mid) -> int:
    """The Table D.1 row of a model ID ("8abs" -> 8)."""
    return int(str(mid).removesuffix("abs"))


def framework(mid):
    """Paper model ID (Table D.1) -> framework; "8abs", "12abs", "16abs" are the paper-form
    Rao–Kupper variants of models 8, 12, 16."""
    if isinstance(mid, str):
        return br.RaoKupper(k_tie=1, k_cov=PAPER_FORM[paper_id(mid)], threshold="abs")
    if paper_id(mid) <= 6:
        ties = "half" if mid <= 3 else "drop"
        return br.BradleyTerry(ties=ties, k_cov=[None, 0, 3][(mid - 1) % 3])
    cls = br.RaoKupper if mid <= 18 else br.Davidson
    off = (mid - 7) % 12
    return cls(k_tie=[0, 1, 10, 20][off % 4], k_cov=[None, 0, 3][off // 4])


def _read(path):
    if not path.exists():
        return {}
    return {r["id"]: r for r in map(json.loads, path.read_text().splitlines()) if r}


def _key(mid):
    """Sort key: paper IDs in order, each paper-form variant after its model."""
    return (paper_id(mid), isinstance(mid, str))


def _append(path, row):
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")


def _fit_row(mid, fit, seconds):
    return {"id": mid, "label": fit.framework.label, "spec": fit.framework.spec(), "nll": fit.nll,
            "cross_entropy": fit.cross_entropies(), "n_params": fit.n_params, "converged": fit.converged,
            "grad_norm": fit.diagnostics["grad_norm"], "iterations": fit.diagnostics["iterations"],
            "min_information_eigenvalue": fit.diagnostics["min_information_eigenvalue"], "seconds": seconds,
            "scores": dict(zip(fit.items, map(float, fit.scores().values))), "warnings": fit.warnings}


def _fit_restarting(fw, data, restarts=2):
    """MAP, restarted from its own estimate (fresh L-BFGS memory) when it stopped short."""
    fit = fw.fit(data)
    for _ in range(restarts):
        if fit.converged or fit.diagnostics["grad_norm"] < 1e-6:
            break
        fit = fw.fit(data, init=fit.tree["map"]["theta"].values)
    return fit


def run(kind, ids, force=False):
    data = br.load("arena-2024")
    path = FULL if kind == "fit" else SPLIT
    done = {} if force else _read(path)
    for mid in ids:
        if mid in done:
            continue
        fw = framework(mid)
        t = time.perf_counter()
        with threadpool_limits(1):
            if kind == "fit":
                fit = _fit_restarting(fw, data)
                seconds = time.perf_counter() - t
                row = _fit_row(mid, fit, seconds)
                row["gof"] = goodness_of_fit(fit)
                if paper_id(mid) <= 6:
                    row["gof_lb"] = goodness_of_fit(fit, leaderbot_compat=True)
                row["ic"] = information_criteria(fit)
            else:
                train, test = data.split(0.1, seed=20)
                fit = _fit_restarting(fw, train)
                metrics = goodness_of_fit(fit, test)
                if paper_id(mid) <= 6:
                    row_lb = goodness_of_fit(fit, test, leaderbot_compat=True)
                metrics.update({"train_nll": fit.nll, "n_train_cells": train.n_cells, "n_test_cells": test.n_cells})
                seconds = time.perf_counter() - t
                row = _fit_row(mid, fit, seconds)
                row["test"] = metrics
                if paper_id(mid) <= 6:
                    row["test_lb"] = row_lb
        _append(path, row)
        print(f"model {mid} {row['label']}: nll {row['nll']:.5f} (paper {PAPER_D1[paper_id(mid)][1]}) "
              f"converged={row['converged']} {seconds:.0f}s", flush=True)
    _rewrite(path, _read(path))  # one line per model (a forced refit appended a newer one)


def _rewrite(path, rows):
    path.write_text("".join(json.dumps(rows[k]) + "\n" for k in sorted(rows, key=_key)))


def kendall_matrix(rows):
    from bayesrank.tiers import kendall_tau

    return kendall_tau({mid: r["scores"] for mid, r in rows.items()})


def _conv(r):
    if r["converged"]:
        return "yes"
    if r["grad_norm"] < 1e-6:
        return f"grad ok, info singular ({r['min_information_eigenvalue']:.0e})"
    return f"NO (grad {r['grad_norm']:.0e})"


def _f(x, nd):
    return "—" if x is None or (isinstance(x, float) and not np.isfinite(x)) else f"{x:.{nd}f}"


def _add_compat(path, kind):
    """Add leaderbot-compatible BT metrics (floored half-ties) to cached rows 1-6 lacking them."""
    rows = _read(path)
    key = "gof_lb" if kind == "fit" else "test_lb"
    todo = [mid for mid in range(1, 7) if mid in rows and key not in rows[mid]]
    if not todo:
        return rows
    data = br.load("arena-2024")
    for mid in todo:
        with threadpool_limits(1):
            if kind == "fit":
                rows[mid][key] = goodness_of_fit(framework(mid).fit(data), leaderbot_compat=True)
            else:
                train, test = data.split(0.1, seed=20)
                rows[mid][key] = goodness_of_fit(framework(mid).fit(train), test, leaderbot_compat=True)
    _rewrite(path, rows)
    return rows


def table():
    full, split = _add_compat(FULL, "fit"), _add_compat(SPLIT, "split")
    L = ["# leaderbot Tables D.1–D.3 reproduced by bayesrank (arena-2024, MAP = MLE)", "",
         "Generated by `models/arena-2024/make_table_d1.py` from `d1-results.jsonl` / `d3-results.jsonl`.",
         "Paper values: digest `seed-leaderbot.md` §4.4–4.6 (authors' notebook). Our NLL is the "
         "per-comparison negative log-likelihood (multinomial constant dropped), as the paper's.", "",
         "Differences in form, by design: constraints are exact reparameterisations (no penalties); "
         "Rao–Kupper uses η = softplus(h) ≥ 0 instead of leaderbot's |h| clipped at 0.01 (this "
         "changes the factored models 8–10, 12–14, 16–18, whose NLLs are therefore lower, most "
         "visibly k_tie = 1: 8, 12, 16); parameter counts are *free* parameters after the "
         "constraints (leaderbot counts raw ones), for the tie factors also after removing the "
         "k(k−1)/2 null space of G ↦ GΦᵀ + ΦGᵀ and for the loadings the k(k−1)/2 rotations. "
         "`conv` = our optimiser's gradient < 1e-6 per comparison and non-singular observed information; "
         "`lb conv` = leaderbot's BFGS converged in the rerun (digest §4.9). Seconds: ours on a shared "
         "2-core machine with one BLAS thread; the paper's on 32 cores.", "",
         "## Table D.1 — model selection (full data)", "",
         "| ID | model | n_params ours (paper) | NLL ours | NLL paper | excess | H_win | H_loss | H_tie | paper H_win / H_loss / H_tie | conv | lb conv | AIC | BIC | seconds ours (paper) |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    worst = -np.inf
    for mid in range(1, 31):
        p = PAPER_D1[mid]
        r = full.get(mid)
        if r is None:
            L.append(f"| {mid} | {framework(mid).label} | ({p[0]}) | not run | {p[1]:.4f} | | | | | | | | | | ({p[5]}) |")
            continue
        ce = r["cross_entropy"]
        ex = r["nll"] - p[1]
        worst = max(worst, ex)
        tie = ce["tie"] if mid > 6 else None
        L.append(f"| {mid} | {r['label']} | {r['n_params']} ({p[0]}) | {r['nll']:.5f} | {p[1]:.4f} | {ex:+.5f} | "
                 f"{ce['win']:.4f} | {ce['loss']:.4f} | {_f(tie, 4)} | {p[2]:.4f} / {p[3]:.4f} / {_f(p[4], 4)} | "
                 f"{_conv(r)} | {'yes' if mid in LEADERBOT_CONVERGED else 'no'} | "
                 f"{r['ic']['aic']:.0f} | {r['ic']['bic']:.0f} | {r['seconds']:.0f} ({p[5]}) |")
    grid = [r for mid, r in full.items() if isinstance(mid, int)]
    n_done = len(grid)
    tot = sum(r["seconds"] for r in grid)
    L += ["", f"{n_done}/30 models fitted; worst excess over the paper's NLL {worst:+.5f}; "
          f"{sum(r['converged'] for r in grid)}/{n_done} converged (gradient < 1e-6 per comparison and "
          f"non-singular information); {sum(r['grad_norm'] < 1e-6 for r in grid)}/{n_done} reach the "
          f"gradient tolerance; total fit time {tot:.0f} s (one process per model run, restarts included).", "",
          "Why the k_tie = 20 models have a singular information: on arena-2024 the linear map from the "
          "2390 identified tie coordinates to the thresholds η_ab of the 3455 *observed* pairs has rank 2368 "
          "(computed with the DCT-IV basis and the comparison graph): 22 directions change η only on pairs "
          "never compared, so they are exactly flat in the likelihood (eigenvalues ~1e-17). The scores and the "
          "fitted probabilities are unaffected, but the MLE of the paper's k_tie = 20 parameterisation is not "
          "unique. For k_tie = 10 the map has full rank (1245)." + _stalled_text(full), "",
          "Generalisation (Table D.3): our training fits reach lower training NLLs than leaderbot's (which "
          "stopped at 1500 BFGS iterations for most k_tie ≥ 1 models); for k_tie = 10 this costs test accuracy "
          f"(e.g. model 9 test KLD {split[9]['test']['kld']:.2f} vs the paper's {PAPER_D3[9][4]}), i.e. part of the paper's 'k_tie = 10 generalises "
          "best' comes from early stopping acting as regularisation. One 346-pair split is noisy either way.", ""]
    L += _paper_form_section(full)
    L += _gof_section("## Table D.2 — goodness of fit on the training data (full data; converged fits)", full, "gof", PAPER_D2)
    if split:
        L += _gof_section("## Table D.3 — generalisation (fit on 90% of the pairs, seed 20, test on 10%; converged fits)",
                          split, "test", PAPER_D3)
    grid = {mid: r for mid, r in full.items() if isinstance(mid, int)}
    if len(grid) >= 2:
        tau = kendall_matrix(grid)
        vals = tau.values[np.triu_indices(len(tau), 1)]
        lo = np.unravel_index(np.nanargmin(np.where(np.eye(len(tau)) == 1, np.nan, tau.values)), tau.shape)
        L += ["## Rankings", "",
              f"Kendall τ-b between the rankings of the {len(tau)} fitted models of Table D.1: min {vals.min():.4f} "
              f"(models {tau.index[lo[0]]} vs {tau.columns[lo[1]]}), max {vals.max():.4f} (paper: 0.96–1).", ""]
    if 18 in full:
        s = full[18]["scores"]
        top = sorted(s, key=s.get, reverse=True)[:5]
        L += [f"Model 18 (RK, k_cov=3, k_tie=20) top five: " + ", ".join(f"{i + 1}. {n} ({s[n]:+.4f})" for i, n in enumerate(top)),
              f"Top two are chatgpt-4o-latest and gemini-1.5-pro-exp-0801: {top[:2] == ['chatgpt-4o-latest', 'gemini-1.5-pro-exp-0801']}.", ""]
    TABLE.write_text("\n".join(L) + "\n")
    print(f"wrote {TABLE}")


def _stalled_text(full):
    """The non-converged fits other than k_tie = 20, described from their own diagnostics."""
    parts = []
    for mid, what in ((16, "Model 16 (Rao–Kupper, softplus form, k_cov = 3, k_tie = 1)"),
                      (29, "Model 29 (Davidson, k_cov = 3, k_tie = 10)")):
        r = full.get(mid)
        if r is None or r["converged"]:
            continue
        parts.append(f" {what} stops at a gradient of {r['grad_norm']:.0e} per comparison where the information is "
                     f"{'indefinite' if r['min_information_eigenvalue'] < 0 else 'nearly singular'} (smallest "
                     f"eigenvalue {r['min_information_eigenvalue']:.0e}): a flat ridge of the likelihood, so no Wald "
                     "intervals are reported (NUTS with its priors is the way to quantify it).")
    if "16abs" in full and full["16abs"]["converged"]:
        parts.append(" The paper form of model 16 (`16abs`) converges.")
    return "".join(parts)


def _paper_form_section(full):
    rows = [full[mid] for mid in PAPER_FORM_IDS if mid in full]
    if not rows:
        return []
    L = ["## Paper-form Rao–Kupper (models 8, 12, 16 with `threshold=\"abs\"`)", "",
         "Our default Rao–Kupper threshold is η = softplus(h), a different (smooth, better-fitting) model from "
         "the paper's factored form. `RaoKupper(threshold=\"abs\")` / `--tie-threshold abs` uses "
         "η = √(h² + 0.01²), a smooth version of leaderbot's `max(|h|, 0.01)`, and reproduces the paper's "
         "numbers (rows `8abs`, `12abs`, `16abs` here and in Tables D.2 / D.3):", "",
         "| ID | model | NLL ours (abs form) | NLL paper | difference | conv | seconds |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        p = PAPER_D1[paper_id(r["id"])][1]
        L.append(f"| {r['id']} | {r['label']} | {r['nll']:.6f} | {p:.4f} | {r['nll'] - p:+.6f} | {_conv(r)} | {r['seconds']:.0f} |")
    return L + ["", "So every model where leaderbot converged (2, 5, 7, 8, 11, 19, 23) is matched within 1e-4: 8 in "
                "the paper's form, the others in the default form (for k_tie = 0 both forms have the same MLE).", ""]


def _gof_section(title, rows, key, paper):
    L = [title, "", "Bradley–Terry rows: exact metrics, and in brackets with leaderbot's integer-floored half-ties "
         "and kept empty pairs (`goodness_of_fit(..., leaderbot_compat=True)`), which is what the paper's BT rows report.", "",
         "| ID | model | RMSE win | loss | tie | all | KLD×10² | JSD×10² | paper RMSE win / loss / tie / all | paper KLD / JSD |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for mid in sorted(rows, key=_key):
        r = rows[mid]
        if not r["converged"]:
            continue
        g, p = r[key], paper[paper_id(mid)]
        lb = r.get(key + "_lb")
        if lb is not None:  # BT: exact metrics, then leaderbot's floored half-ties in brackets
            L.append(f"| {mid} | {r['label']} | {g['rmse_win']:.1f} ({lb['rmse_win']:.1f}) | {g['rmse_loss']:.1f} ({lb['rmse_loss']:.1f}) | — | "
                     f"{g['rmse_all']:.1f} ({lb['rmse_all']:.1f}) | {g['kld']:.2f} ({lb['kld']:.2f}) | {g['jsd']:.2f} ({lb['jsd']:.2f}) | "
                     f"{p[0]} / {p[1]} / — / {p[3]} | {p[4]} / {p[5]} |")
            continue
        L.append(f"| {mid} | {r['label']} | {g['rmse_win']:.1f} | {g['rmse_loss']:.1f} | {_f(g['rmse_tie'], 1)} | "
                 f"{g['rmse_all']:.1f} | {g['kld']:.2f} | {g['jsd']:.2f} | {p[0]} / {p[1]} / {p[2] or '—'} / {p[3]} | {p[4]} / {p[5]} |")
    return L + [""]


if __name__ == "__main__":
    args = sys.argv[1:]
    ids = [x if x.endswith("abs") else int(x) for x in os.environ.get("B_MODELS", "").split(",") if x]
    ids = ids or [*range(1, 31), *PAPER_FORM_IDS]
    cmd = args[0] if args else "table"
    if cmd in ("fit", "split"):
        run(cmd, ids, force="--force" in args)
    table()
