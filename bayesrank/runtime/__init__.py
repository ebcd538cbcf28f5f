"""How the package runs, not what it computes: third-party modules imported on first use
(:mod:`bayesrank.runtime.lazy`), progress bars for long jobs (:mod:`bayesrank.runtime.progress`) and how a
run a signal stops ends (:mod:`bayesrank.runtime.signals`)."""
