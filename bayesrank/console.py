"""The ``bayesrank`` console script: a signal while Python imports the command line ends the run
as the command line itself ends it.

Importing :mod:`bayesrank.cli` and the libraries it needs takes a moment; Ctrl-C or SIGTERM in
that moment would otherwise print a Python traceback from whatever module was being imported.
Until :func:`bayesrank.cli.main` installs its own handlers, these end the run with the CLI's
words and exit codes (``bayesrank: interrupted``, 130; ``bayesrank: terminated``, 143).
"""

from __future__ import annotations

import signal
import sys

from bayesrank.runtime.signals import ENDINGS


def _end(signum, frame):
    code, word = ENDINGS[signum]
    print(f"bayesrank: {word}", file=sys.stderr)
    raise SystemExit(code)


def quiet_until_started() -> None:
    """Handle SIGINT and SIGTERM by :func:`_end` (the module docstring)."""
    for signum in ENDINGS:
        signal.signal(signum, _end)


def main() -> int:
    """The console script: quiet signals, then the command line."""
    quiet_until_started()
    from bayesrank.cli import main as run

    return run()


if __name__ == "__main__":
    sys.exit(main())
