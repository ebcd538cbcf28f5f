"""What a GARS functional is asked for: the score names and the tie weights of the outcome
categories (definitions only; :mod:`bayesrank.gars` computes). Kept apart so that the command
line can offer the choices without importing the computation."""

from __future__ import annotations

from dataclasses import dataclass

from bayesrank.errors import BayesrankError

#: GARS functionals.
SCORES = ("borda", "bt", "rank-centrality")


@dataclass(frozen=True)
class Scheme:
    """Credit of each outcome category to the first (``w1``) and second (``w2``) item, and the
    normaliser ``norm`` (categories that count; see :mod:`bayesrank.gars`)."""

    name: str
    w1: tuple[float, ...]
    w2: tuple[float, ...]
    norm: tuple[float, ...]

    @property
    def n_categories(self) -> int:
        return len(self.w1)


#: The paper's default weights (Frauen et al., App. C.1), over ``win_first, win_second, tie[, both_bad]``.
SCHEMES = {
    "binary": Scheme("binary", (1, 0, 0), (0, 1, 0), (1, 1, 0)),
    "win-loss-tie": Scheme("win-loss-tie", (1, 0, 0.5), (0, 1, 0.5), (1, 1, 1)),
    "win-loss-both-good-both-bad": Scheme("win-loss-both-good-both-bad", (1, 0, 1, 0), (0, 1, 1, 0), (1, 1, 1, 1)),
}


def scheme_of(scheme: str | Scheme) -> Scheme:
    """The :class:`Scheme` named ``scheme`` (one of :data:`SCHEMES`), or ``scheme`` itself."""
    if isinstance(scheme, Scheme):
        return scheme
    if scheme not in SCHEMES:
        raise BayesrankError(f"unknown tie weights {scheme!r}; use one of {', '.join(SCHEMES)}.")
    return SCHEMES[scheme]


__all__ = ["SCHEMES", "SCORES", "Scheme", "scheme_of"]
