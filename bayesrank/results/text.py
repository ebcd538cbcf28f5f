"""A fit as text: the leaderboard a person reads in a terminal, with what was fitted to what, the
state of the fit, the judges and the warnings (``bayesrank fit --format table`` and
:meth:`bayesrank.Fit.to_text` print the same)."""

from __future__ import annotations

import pandas as pd

from bayesrank.output.text import one_line
from bayesrank.results.estimates import dependence, too_few_draws
from bayesrank.results.io import warnings_of
from bayesrank.results.provisional import max_span
from bayesrank.results.summary import has_elo
from bayesrank.results.trajectories import is_time_fit

#: How each interval method is named in the table's header.
INTERVAL_NAMES = {"wald": "Wald", "sandwich": "sandwich (robust)", "bootstrap": "bootstrap percentile",
                  "posterior": "posterior", "laplace": "Laplace", "none": "no"}



def fit_text(result, top: int = 20, level: float = 0.95, elo=None, sections=None, styled=None) -> str:
    """A fit as a person reads it in a terminal (:meth:`bayesrank.Fit.to_text`): what was fitted to
    what, the state of the fit, the leaderboard, the judges, the warnings; a fit over time as its
    board at the last period and its change points.

    Parameters
    ----------
    result : Fit
    top : int
        Rows of the leaderboard (0: all).
    level : float
        Interval probability.
    elo : Elo, optional
        Show Elo ratings on this view (nothing when the framework has no Elo scale: said in words).
    sections : dict, optional
        Results of analyses to print after the board, as their ``to_json()`` forms: ``rank_sets``,
        ``fragility``, ``style``, ``categories`` (records), ``random_effects``.
    styled : DataFrame, optional
        The style-controlled board's ``rank_unadjusted`` and ``rank_change`` columns, by ``name``.
    """
    if is_time_fit(result.tree):
        return _time_text(result, top, level)
    extra = sections or {}
    no_elo = elo is not None and not has_elo(result.tree)
    elo = None if no_elo else elo
    board = result.leaderboard(level, elo if elo is not None else False)
    if styled is not None:
        board = board.join(styled.set_index("name")[["rank_unadjusted", "rank_change"]], on="name")
    if "rank_sets" in extra:
        sets = {row["name"]: row for row in extra["rank_sets"]["items"]}
        board["rank_set"] = [f"{sets[n]['rank_set_lower']}-{sets[n]['rank_set_upper']}" for n in board["name"]]
    if top:
        board = board.head(top)
    ce = result.cross_entropies()
    pct = f"{100 * level:g}%"
    kind = f"{INTERVAL_NAMES.get(result.interval_method, result.interval_method)} {pct} interval"
    if result.cluster:
        kind += f" ({dependence(result.tree)})"
    reported = result.framework.reported()
    hja = "leverage" in reported
    lines = [
        f"{result.framework.label} by {result.method.upper()} on {result.data!r}",
        f"nll {result.nll:.5f} (win {ce['win']:.4f} + loss {ce['loss']:.4f} + tie {ce['tie']:.4f}), "
        f"{result.n_params} free parameters, {result.convergence}",
        accounting_line(result.data.accounting()),
        f"score = {result.framework.score_meaning}"
        + (f", se and {kind}; rank interval from the "
           + {"bootstrap": "bootstrap replicates", "posterior": "posterior"}.get(result.interval_method,
                                                                                "asymptotic normal")
           if result.interval_method != "none" else "; point estimates only (--intervals none): no se or intervals"),
        "",
    ]
    if elo is not None:
        anchor = f", {elo.anchor} = {elo.offset:g}" if elo.anchor else f", average model = {elo.offset:g}"
        lines.insert(-1, f"Elo = {elo.scale:.1f} x score{anchor}; {result.framework.scale_note}")
    if no_elo:
        lines.insert(-1, f"no Elo ratings: {result.framework.scale_note}")
    if result.method == "nuts":
        d = result.diagnostics
        lines.insert(-1, f"sampler {d.get('sampler')}: {d.get('chains')} chains x {d.get('draws')} draws, "
                         f"{sampler_in_words(d)}")
    cols = ["rank", "name", "score", "se", "lower", "upper", *(["elo", "elo_lower", "elo_upper"] if elo else []),
            "rank_lower", "rank_upper", *(["rank_set"] if "rank_set" in board else []),
            *(["rank_unadjusted", "rank_change"] if styled is not None else []), "n_comparisons",
            "win_rate", "pred_win_rate", "tie_rate", "pred_tie_rate"]
    cols = [c for c in cols if c in board]  # (no interval columns without intervals)
    lines.append(board[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if "provisional" in board and board["provisional"].fillna(False).any():
        shown = board.loc[board["provisional"].fillna(False).astype(bool), "name"]
        lines.append(f"provisional (rank interval wider than {max_span(len(result.items))} ranks): "
                     f"{', '.join(map(one_line, shown))}; 'bayesrank provisional' says which battles would settle them")
    if hja:
        judges = result.judges(level)[["name", "sensitivity", "se", "lower", "upper", "leverage", "relative_leverage"]]
        summary = result.disagreement()
        lines += ["", f"judges: signed consensus sensitivity γ ({kind}) and leverage h = ‖(UVᵀ)_k‖, "
                  f"rank {summary['rank']}, disagreement {100 * summary['disagreement_share']:.0f}% of ‖S‖²",
                  judges.to_string(index=False, float_format=lambda v: f"{v:.3f}"), summary["outlier_sentence"]]
    if "gamma" in reported and not hja:
        lines += ["", f"judges: discrimination γ_k ({kind}; lower_log/upper_log: the interval on the log scale)",
                  result.judges(level).to_string(index=False, float_format=lambda v: f"{v:.3f}")]
    if result.data.judges is not None:
        shares = result.verdict_shares()[["judge", "n", "a", "b", "tie", "odds_ratio", "follows_position"]]
        lines += ["", "verdict shares: a = the answer shown first, b = shown second; odds_ratio = the judge's odds "
                      "of picking the first answer over the median other judge's",
                  shares.to_string(index=False, float_format=lambda v: f"{v:.3f}")]
    if "rank_sets" in extra:
        rs = extra["rank_sets"]
        lines.append(f"\nrank_set: simultaneous {pct} rank sets (every rank covered at once; critical value "
                     f"{rs['critical_value']:.2f} se)")
        lines += [f"top-{k} set at {pct}: {', '.join(names)}" for k, names in rs["top_sets"].items()]
    if "fragility" in extra:
        lines.append("\n" + extra["fragility"]["sentence"])
    if "style" in extra:
        lines.append("\nstyle effects (logit per unit of each contrast; rank_change > 0: up once style is "
                     "accounted for):")
        for e in extra["style"]["effects"]:
            who = f" [{e['judge']}]" if "judge" in e else ""
            if e["estimate"] is None or e.get("se") is None:
                lines.append(f"  {e['contrast']}{who}: not estimated (see the warnings)")
                continue
            lines.append(f"  {e['contrast']}{who}: {e['estimate']:.4f} (se {e['se']:.4f}, "
                         f"{pct} {e['lower']:.4f} to {e['upper']:.4f})")
    if "categories" in extra:
        cats = pd.DataFrame(extra["categories"])
        for category, group in cats.groupby("category", sort=False):
            lines.append(f"\ncategory {category} (partially pooled):")
            shown = group.head(top) if top else group
            lines.append(shown.drop(columns="category").to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if "random_effects" in extra:
        lines.append("\n" + result.random_effects(level).to_text(top))
    lines += [f"warning: {w}" for w in warnings_of(result.tree)]   # (the fit's own, and the draws' at this level:)
    missing = too_few_draws(result.tree, level)
    lines += [f"warning: {missing}"] if missing else []
    return "\n".join(lines)


def sampler_in_words(d: dict) -> str:
    """r_hat, the effective sample sizes and the divergences of a NUTS fit's diagnostics ``d``, in
    words. A quantity that is not defined — r_hat of a single chain, stored as missing — says so
    instead of showing a number."""
    def number(key: str, digits: int) -> str | None:
        value = d.get(key)
        return None if value is None or value != value else f"{value:.{digits}f}"

    rhat = number("max_rhat", 3)
    return ", ".join([
        f"r_hat up to {rhat}" if rhat is not None else "r_hat not defined (it compares several chains)",
        f"bulk ESS at least {number('min_ess_bulk', 0) or 'n/a'}",
        f"tail ESS at least {number('min_ess_tail', 0) or 'n/a'}",
        f"{d.get('divergences')} divergent transitions"])


def accounting_line(acc: dict) -> str:
    """What was read, dropped (and why) and used, in one line."""
    read = f"{acc['records_read']:,} records read ({acc['comparisons_read']:,} comparisons)" \
        if acc["records_read"] else f"{acc['comparisons_read']:,} comparisons read"
    dropped = sum(acc["dropped"].values())
    why = "; ".join(f"{k} {v:,}" for k, v in acc["dropped"].items())
    notes = "".join(f"; note: {k} {v:,}" for k, v in acc["notes"].items())
    why = f" ({why})" if why else ""
    return f"data: {read}, {dropped:,} dropped{why}, {acc['comparisons_used']:,} used" + notes


def _time_text(result, top: int, level: float) -> str:
    """A fit over time as text: the leaderboard as of its last period and its change points."""
    board = result.leaderboard(level)
    shown = board if top == 0 else board.head(top)
    cols = ["rank", "name", "score", "lower", "upper", "rank_lower", "rank_upper", "last_period"]
    lines = [f"{result.framework.label} by {result.method}: {len(result.periods)} periods "
             f"({result.periods[0]} to {result.periods[-1]}); leaderboard as of {board.attrs['period']}",
             shown[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"), ""]
    found = result.changes()
    lines.append(f"changes (posterior probability >= 0.5): {len(found)}")
    if len(found):
        lines.append(found.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    lines += [f"warning: {w}" for w in result.warnings]
    return "\n".join(lines)


__all__ = ["INTERVAL_NAMES", "accounting_line", "fit_text", "sampler_in_words"]
