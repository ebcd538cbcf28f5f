"""The two conventions for Chatbot Arena's "tie (bothbad)" verdicts, and which one data follow.

A "both bad" tie is a vote that neither answer was good. LMArena's leaderboard, FastChat's Elo
notebook and arena-rank count it as a tie: the **Arena convention**. The leaderbot paper
(Ameli et al., ICLR 2025) leaves it out: its Table D.1 is fitted to the 1,374,996 comparisons of
``arena-2024`` without them (1,670,250 with them), and on raw logs the two conventions move a
model's Elo by tens of points.

``both_bad_as_ties=None`` (the default of every reader; CLI: neither ``--both-bad-ties`` nor
``--no-both-bad-ties``) follows the convention of the input:

* **battle records** (raw Arena logs: a ``winner`` column) — the Arena convention;
* **count records** (``wins_a, wins_b, ties, ties_bothbad``, or a leaderbot count table
  ``models, X, Y``) — both-bad ties left out: their ``ties`` are already what whoever counted
  them called ties, and the count table is the leaderbot paper's format;
* a **bundled dataset** — its own explicit option (:class:`~bayesrank.data.bundled.BundledDataset`;
  ``arena-2024`` keeps the paper's convention, so the paper's numbers are reproduced exactly).

``True`` / ``False`` choose explicitly. Which convention a fit's data followed is recorded in its
diagnostics (``both_bad_ties``: :func:`convention`) and in the data's accounting: a reason in
``dropped`` when they were left out, a note when they were counted.
"""

from __future__ import annotations

from collections.abc import Mapping

#: The Arena convention, as :func:`convention` names it.
ARENA = "counted as ties (the Chatbot Arena convention)"
#: The leaderbot paper's convention, as :func:`convention` names it.
PAPER = "left out (the leaderbot paper's convention)"
#: Reason in ``Comparisons.dropped`` when both-bad ties were left out.
DROPPED = ("both-bad tie (left out: the leaderbot paper's convention; both_bad_as_ties=True / --both-bad-ties "
           "counts them as ties)")
#: Note in ``Comparisons.notes`` when both-bad ties were counted as ties.
COUNTED = ("both-bad ties counted as ties (the Chatbot Arena convention; both_bad_as_ties=False / "
           "--no-both-bad-ties leaves them out)")


def as_ties(shape: str, both_bad_as_ties: bool | None) -> bool:
    """Whether records of ``shape`` count their both-bad ties as ties: the explicit choice, else
    the convention of the input (module docstring: battles yes, counts no)."""
    return shape == "battles" if both_bad_as_ties is None else bool(both_bad_as_ties)


def convention(dropped: Mapping[str, int], notes: Mapping[str, int]) -> str | None:
    """:data:`ARENA` or :data:`PAPER` from a ``Comparisons``' ``dropped`` and ``notes``; None
    when the data had no both-bad ties."""
    if DROPPED in dropped:
        return PAPER
    if COUNTED in notes:
        return ARENA
    return None


__all__ = ["ARENA", "COUNTED", "DROPPED", "PAPER", "as_ties", "convention"]
