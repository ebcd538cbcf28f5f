"""How a run that a signal stops ends: the exit code and the word of each signal the command
line handles (Ctrl-C: 130, ``interrupted``; SIGTERM: 143, ``terminated``), shared by the
console script's first moment (:mod:`bayesrank.console`) and the command line
(:mod:`bayesrank.cli`)."""

from __future__ import annotations

import signal

#: Exit code and word of each signal a run ends by.
ENDINGS = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}

__all__ = ["ENDINGS"]
