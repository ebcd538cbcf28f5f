"""How the package runs, not what it computes: third-party modules imported on first use
(:mod:`bayesrank.runtime.lazy`) and progress bars for long jobs (:mod:`bayesrank.runtime.progress`)."""
