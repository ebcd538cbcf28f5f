"""Exceptions a user can cause.

Every error a user can trigger with their data or arguments is a :class:`BayesrankError`
whose message names the record / column at fault and what to do; the CLI turns these into
exit code 2 and one line on stderr. Statistical problems (a disconnected graph, an MLE that
does not exist, a sampler that did not converge) are not exceptions: every fit carries them
as sentences in ``fit.warnings``.
"""


class BayesrankError(Exception):
    """Base class for errors caused by user input (data, arguments)."""


class DataError(BayesrankError, ValueError):
    """The comparison data cannot be read or is invalid."""


class ModelSpecError(BayesrankError, ValueError):
    """A model was asked for with options that do not fit together or do not fit the data."""
