"""Exceptions and warnings a user can cause or needs to see.

Every error a user can trigger with their data or arguments is a :class:`BayesrankError`
whose message names the record / column at fault and what to do; the CLI turns these into
exit code 2 and one line on stderr.
"""


class BayesrankError(Exception):
    """Base class for errors caused by user input (data, arguments)."""


class DataError(BayesrankError, ValueError):
    """The comparison data cannot be read or is invalid."""


class ModelSpecError(BayesrankError, ValueError):
    """A model was asked for with options that do not fit together or do not fit the data."""


class StatisticalWarning(UserWarning):
    """The data or a fit has a statistical problem (disconnected graph, MLE does not exist, ...)."""
