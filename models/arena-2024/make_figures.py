#!/usr/bin/env python3
"""Tiers, maps and ranking comparisons of paper Figs. 2, C.1, C.2, E.2, E.3 on arena-2024.

Refits model 18 (Rao–Kupper, k_cov=3, k_tie=20; ~1 min) for Z and reads the 30 rankings from
``d1-results.jsonl`` (``make_table_d1.py fit``). Writes ``figures/*.png`` and
``model18-tiers.csv`` next to this file and prints the tiers.
"""
from __future__ import annotations

import json
from pathlib import Path

from threadpoolctl import threadpool_limits

import bayesrank as br
from bayesrank import plots
from bayesrank.analysis.tiers import cluster_fits, kendall_tau, kernel_pca, mds, rank_table, tiers

HERE = Path(__file__).resolve().parent
OUT = HERE / "figures"


def main():
    OUT.mkdir(exist_ok=True)
    rows = {r["id"]: r for r in map(json.loads, (HERE / "d1-results.jsonl").read_text().splitlines())}
    with threadpool_limits(1):
        fit = br.fit(br.RaoKupper(k_tie=20, k_cov=3), br.load("arena-2024"))
    t = tiers(fit, top=100, n_tiers=5)
    t.to_csv(HERE / "model18-tiers.csv", index=False)
    for tier, grp in t.groupby("tier"):
        print(f"tier {tier}: ranks {grp['rank'].min()}-{grp['rank'].max()} ({len(grp)}): "
              + ", ".join(grp["name"].head(4)) + (" ..." if len(grp) > 4 else ""))
    plots.plot_dendrogram(t).savefig(OUT / "model18-tiers.png", dpi=110)
    plots.plot_map(kernel_pca(fit, n_components=3, gamma=1e-4), top=40).savefig(OUT / "model18-kpca.png", dpi=110)
    plots.plot_map(mds(fit, n_components=3), top=50).savefig(OUT / "model18-mds.png", dpi=110)
    bump_ids = [1, 4, 7, 19, 3, 6, 10, 22, 18, 30]  # paper Fig. E.2
    ranks = rank_table({f"model {i}": rows[i]["scores"] for i in bump_ids})
    plots.plot_bump(ranks, top=20).savefig(OUT / "bump-top20.png", dpi=110)
    tau = kendall_tau({i: rows[i]["scores"] for i in sorted(i for i in rows if isinstance(i, int))})  # Table D.1's 30
    plots.plot_kendall(tau, order=cluster_fits(tau)).savefig(OUT / "kendall-tau.png", dpi=110)
    print(f"figures in {OUT}")


if __name__ == "__main__":
    main()
