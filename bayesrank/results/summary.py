"""Headline numbers of a fit and the CLI's JSON contract."""

from __future__ import annotations

import json

import xarray as xr

from bayesrank.inference.tree import plain
from bayesrank.results.elo import Elo
from bayesrank.results.estimates import cluster, dependence, interval_method, too_few_draws
from bayesrank.results.hja import disagreement_summary
from bayesrank.results.io import data_of, diagnostics_of, framework_of, method_of, model_data_of, warnings_of
from bayesrank.results.judges import judges, presentation_order, verdict_shares
from bayesrank.results.leaderboard import leaderboard
from bayesrank.results.likelihood import cross_entropies, loglik, n_comparisons, nll
from bayesrank.results.trajectories import is_time_fit, leaderboard_at, to_json_fields

#: Columns of each entry of ``items`` in :func:`to_json`.
ITEM_FIELDS = ("name", "rank", "score", "se", "lower", "upper", "rank_lower", "rank_upper", "provisional", "elo",
               "elo_lower", "elo_upper")


def whole(x: float) -> int | float:
    """A count as an int when it is a whole number (the counts of comparisons always are, unless
    reweighted), so that it prints as one."""
    return int(x) if float(x).is_integer() else float(x)


def has_elo(tree: xr.DataTree) -> bool:
    """Whether Elo ratings mean anything for the fit: not for a Thurstonian fit (``k_cov``), whose
    odds of a against b depend on their dispersion (its ``scale_note``)."""
    return getattr(framework_of(tree), "k_cov", None) is None


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
        "cluster": list(cluster(tree)),
        "dependence": dependence(tree),
        "covariance": tree["estimate"].attrs.get("covariance"),
        "pseudo_likelihood": bool(tree["estimate"].attrs.get("pseudo_likelihood", 0)),
        "reweighted": bool(tree["estimate"].attrs.get("reweighted", 0)),
        "scale_note": framework.scale_note,
        "n_items": model_data.n_items,
        "n_comparisons": whole(data.n_comparisons),
        "n_used": whole(n_comparisons(tree)),
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
    point estimates, ``intervals="none"``; no Elo fields and ``elo_scale`` None for a
    Thurstonian fit, where Elo has no meaning: :func:`has_elo`) and, for judge-aware fits,
    ``judges``; HJA fits' ``judges`` carry ``sensitivity`` and ``leverage`` and a
    ``disagreement`` summary (:func:`bayesrank.results.hja.disagreement_summary`) is added.
    Data with judges or positions add ``verdict_shares`` (per judge: shares of verdicts for the
    answer shown first ``a``, second ``b`` and ties, and whether it follows the position:
    :func:`bayesrank.data.positions.verdict_shares`), and data with positions
    ``presentation_order`` (:class:`bayesrank.data.positions.PresentationOrder`). When the fit
    has too few draws for intervals at ``level``, ``warnings`` says so
    (:func:`~bayesrank.results.estimates.too_few_draws`). A fit over time adds ``periods``
    (ISO start dates), each item's ``trajectory`` (``period, score, lower, upper``) and
    ``changes`` (``name, period, size, probability`` for every change of probability ≥ 0.5);
    its ``items`` are the leaderboard as of the last period
    (:mod:`bayesrank.results.trajectories`)."""
    if is_time_fit(tree):   # the board as of the last period, and the answers over time
        board = leaderboard_at(tree, None, level)
        items = [dict(row) for row in board[[f for f in ITEM_FIELDS if f in board]].to_dict("records")]
        fields = to_json_fields(tree, level)
        for item in items:
            item["trajectory"] = fields["trajectory"].get(item["name"], [])
        return plain({**summary(tree), "periods": fields["periods"], "items": items, "changes": fields["changes"]})
    elo = (elo or Elo()) if has_elo(tree) else None
    board = leaderboard(tree, level, elo if elo is not None else False)
    # a fit without intervals (intervals="none") has no se / interval / rank-interval fields
    items = [dict(row) for row in board[[f for f in ITEM_FIELDS if f in board]].to_dict("records")]
    out = {**summary(tree), "items": items,
           "elo_scale": None if elo is None else {"scale": elo.scale, "offset": elo.offset, "anchor": elo.anchor}}
    missing = too_few_draws(tree, level)
    if missing:
        out["warnings"] = [*out["warnings"], missing]
    framework = framework_of(tree)
    if "gamma" in framework.reported():
        out["judges"] = judges(tree, level).to_dict("records")
    data = data_of(tree)
    if data.judges is not None or data.first is not None:
        out["verdict_shares"] = verdict_shares(tree).to_dict("records")
    order = presentation_order(tree)
    if order is not None:
        out["presentation_order"] = order.to_json()
    if framework.name == "hja":
        out["disagreement"] = disagreement_summary(tree)
    return plain(out)


__all__ = ["ITEM_FIELDS", "has_elo", "summary", "to_json", "whole"]
