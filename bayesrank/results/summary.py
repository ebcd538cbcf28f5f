"""Headline numbers of a fit and the CLI's JSON contract."""

from __future__ import annotations

import json

import xarray as xr

from bayesrank.inference.tree import plain
from bayesrank.results.elo import Elo
from bayesrank.results.estimates import interval_method
from bayesrank.results.io import data_of, diagnostics_of, framework_of, method_of, model_data_of, warnings_of
from bayesrank.results.hja import disagreement_summary
from bayesrank.results.judges import judges
from bayesrank.results.leaderboard import leaderboard
from bayesrank.results.likelihood import cross_entropies, loglik, n_comparisons, nll

#: Columns of each entry of ``items`` in :func:`to_json`.
ITEM_FIELDS = ("name", "rank", "score", "se", "lower", "upper", "rank_lower", "rank_upper", "provisional", "elo",
               "elo_lower", "elo_upper")


def summary(tree: xr.DataTree) -> dict:
    """Headline numbers (the CLI's JSON without the items)."""
    framework, method, diagnostics = framework_of(tree), method_of(tree), diagnostics_of(tree)
    data, model_data = data_of(tree), model_data_of(tree)
    return {
        "framework": framework.name,
        "spec": framework.spec(),
        "method": method,
        "interval": tree["estimate"].attrs["interval"],
        "interval_method": interval_method(tree),
        "covariance": tree["estimate"].attrs.get("covariance"),
        "pseudo_likelihood": bool(tree["estimate"].attrs.get("pseudo_likelihood", 0)),
        "reweighted": bool(tree["estimate"].attrs.get("reweighted", 0)),
        "scale_note": framework.scale_note,
        "n_items": model_data.n_items,
        "n_comparisons": data.n_comparisons,
        "n_used": n_comparisons(tree),
        "n_cells": model_data.n_cells,
        "nll": nll(tree),
        "loglik": loglik(tree),
        "cross_entropy": cross_entropies(tree),
        "n_params": int(tree.attrs["bayesrank_n_params"]),
        "converged": bool(diagnostics.get("converged", False)),
        "mle_exists": bool(diagnostics.get("mle_exists", True)) if method == "map" else None,
        "diagnostics": diagnostics,
        "warnings": warnings_of(tree),
        "versions": json.loads(tree.attrs["bayesrank_versions"]),
        "accounting": data.accounting(),
    }


def to_json(tree: xr.DataTree, level: float = 0.95, elo: Elo | None = None) -> dict:
    """The CLI contract: :func:`summary` plus ``items`` (best first, with Elo ratings on the
    scale of ``elo``, described by ``elo_scale``; only ``name, rank, score, elo`` for a fit of
    point estimates, ``intervals="none"``) and, for judge-aware fits, ``judges``; HJA
    fits' ``judges`` carry ``sensitivity`` and ``leverage`` and a ``disagreement`` summary
    (:func:`bayesrank.results.hja.disagreement_summary`) is added."""
    elo = elo or Elo()
    board = leaderboard(tree, level, elo)
    # a fit without intervals (intervals="none") has no se / interval / rank-interval fields
    items = [dict(row) for row in board[[f for f in ITEM_FIELDS if f in board]].to_dict("records")]
    out = {**summary(tree), "items": items,
           "elo_scale": {"scale": elo.scale, "offset": elo.offset, "anchor": elo.anchor}}
    framework = framework_of(tree)
    if "gamma" in framework.reported():
        out["judges"] = judges(tree, level).to_dict("records")
    if framework.name == "hja":
        out["disagreement"] = disagreement_summary(tree)
    return plain(out)
