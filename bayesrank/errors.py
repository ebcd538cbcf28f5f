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

A public function decorated with :func:`options_checked` refuses a keyword it does not have with a
``ModelSpecError`` naming the function, its options and the nearest one, instead of Python's
``TypeError``.
"""

import difflib
import functools
import inspect

import numpy as np


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


def options_checked(function):
    """``function`` refusing unknown keywords with a :class:`ModelSpecError` that names it by its
    public path (``bayesrank.<name>``, or its subpackage's: ``bayesrank.gars.from_fit``), its
    options and the closest match to the wrong one. A function that
    takes ``**kwargs`` forwards them to a function that checks them, and is returned as it is."""
    parameters = inspect.signature(function).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return function
    options = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]

    @functools.wraps(function)
    def checked(*args, **kwargs):
        unknown = [k for k in kwargs if k not in options]
        if unknown:
            near = difflib.get_close_matches(unknown[0], options, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            import bayesrank

            name = function.__name__
            where = "bayesrank" if name in bayesrank.__all__ else function.__module__.rsplit(".", 1)[0]
            raise ModelSpecError(f"{where}.{name}() has no option {unknown[0]!r}{hint}; "
                                 f"its options: {', '.join(options)}.")
        return function(*args, **kwargs)

    return checked


def as_count(value, least: int = 0) -> int | None:
    """``value`` as a Python ``int`` when it is a whole number of at least ``least`` given as an
    integer — Python's or NumPy's (``numpy.int64`` from an array), never a bool —; None otherwise,
    for the caller to refuse in words that name its option. Every integer option of the package
    is read by this one rule."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < least:
        return None
    return int(value)


def column_names(names, option: str) -> tuple[str, ...]:
    """``names`` — one column name, a sequence of them, or None for none — as a tuple of
    non-empty text, each given once. Every option of the package that names columns
    (covariates, contrasts, clusters, GARS features and judge probabilities) is read by this one
    rule, so a single name is never split into its letters and a repeated one never counted twice.

    Raises
    ------
    DataError
        A name that is not text or is empty, or a name given more than once, with ``option``
        named.
    """
    if names is None:
        return ()
    given = (names,) if isinstance(names, str) else tuple(names)
    if not all(isinstance(n, str) and n.strip() for n in given):
        raise DataError(f"{option}= takes column names (text), got {names!r}.")
    repeated = sorted({n for n in given if given.count(n) > 1})
    if repeated:
        raise DataError(f"{option}= names the column(s) {', '.join(map(repr, repeated))} more than once; "
                        "give each column once.")
    return given


__all__ = ["BayesrankError", "DataError", "FitFileError", "ModelSpecError", "OutputError", "as_count",
           "column_names", "options_checked"]
