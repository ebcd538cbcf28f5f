"""Exceptions a user can cause.

Every error a user can trigger with their data, arguments or files is a
:class:`BayesrankError` whose message names the record / column / file at fault and what to
do; the CLI turns these into exit code 2 and one line on stderr. Statistical problems (a
disconnected graph, an MLE that does not exist, a sampler that did not converge) are not
exceptions: every fit carries them as sentences in ``fit.warnings``.

=================  =========================================================================
class              raised when
=================  =========================================================================
``DataError``      the comparison data cannot be read or are invalid (a file, a table, a
                   record, a count table)
``ModelSpecError`` a model or method was asked for with options that do not fit together or
                   do not fit the data
``OutputError``    an output cannot be written (an unwritable place, an existing file that
                   would be replaced without ``--force`` / ``overwrite=True``)
``FitFileError``   a file given as a saved fit does not exist or is not a bayesrank fit
=================  =========================================================================
"""


class BayesrankError(Exception):
    """Base class for errors caused by user input (data, arguments, files)."""


class DataError(BayesrankError, ValueError):
    """The comparison data cannot be read or is invalid."""


class ModelSpecError(BayesrankError, ValueError):
    """A model was asked for with options that do not fit together or do not fit the data."""


class OutputError(BayesrankError, OSError):
    """An output cannot be written, or would replace an existing file without permission."""


class FitFileError(BayesrankError, ValueError):
    """A saved fit cannot be read: the file is missing, unreadable or not a bayesrank fit."""
