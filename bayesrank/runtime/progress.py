"""Progress bars on standard error for the jobs that take more than a few seconds.

Whether a bar is shown is decided in this order:

1. a function's own ``progressbar`` argument, when it is True or False;
2. the setting of :func:`showing` around the call (the CLI sets it from ``--progress`` /
   ``--no-progress``, and turns bars off under ``--format json`` unless ``--progress`` asks:
   a JSON pipeline reads stdout, and a script reading stderr gets no bar it did not ask for);
3. whether standard error is a terminal.

Bars are drawn with rich, the library PyMC draws its own sampling bars with (a dependency of
PyMC, so nothing more to install); numpyro draws its bars with tqdm. One bar is live at a time:
a job inside another (the fits of a report) adds its task to the live bar, and a sampler that
draws its own bar suspends ours while it runs (:func:`suspended`). Bars never change a result.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from bayesrank.runtime.lazy import lazy_module

rich_progress = lazy_module("rich.progress")
rich_console = lazy_module("rich.console")

#: The setting of :func:`showing` (None: decide by the terminal).
_SETTING: ContextVar[bool | None] = ContextVar("bayesrank_progress", default=None)
#: The live rich ``Progress`` of the bar being drawn, if any.
_LIVE: ContextVar[object | None] = ContextVar("bayesrank_progress_live", default=None)
#: Width and height tqdm draws at when the terminal reports none (a pseudo-terminal whose size
#: was never set reports 0 × 0, where tqdm draws nothing).
_FALLBACK_SIZE = (80, 24)


def enabled(progressbar: bool | None = None) -> bool:
    """Whether to show progress: ``progressbar`` when given, else the setting of
    :func:`showing`, else whether standard error is a terminal (module docstring)."""
    if progressbar is not None:
        return bool(progressbar)
    setting = _SETTING.get()
    if setting is not None:
        return setting
    return _stderr_is_terminal()


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


@contextmanager
def showing(show: bool | None) -> Iterator[None]:
    """Show (True), hide (False) or decide by the terminal (None) the progress of everything run
    inside, unless a function is told otherwise by its own ``progressbar`` argument."""
    token = _SETTING.set(show)
    try:
        yield
    finally:
        _SETTING.reset(token)


class Bar:
    """One task of a live bar: :meth:`advance` it, or :meth:`describe` what it is doing."""

    def __init__(self, progress=None, task=None):
        self._progress, self._task = progress, task

    def advance(self, steps: float = 1) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, steps)

    def describe(self, text: str) -> None:
        if self._progress is not None:
            self._progress.update(self._task, description=text)


def _new_progress():
    columns = (rich_progress.SpinnerColumn(), rich_progress.TextColumn("{task.description}"),
               rich_progress.BarColumn(), rich_progress.MofNCompleteColumn(),
               rich_progress.TimeElapsedColumn(), rich_progress.TimeRemainingColumn())
    return rich_progress.Progress(*columns, console=rich_console.Console(stderr=True), transient=False)


@contextmanager
def bar(description: str, total: float | None, progressbar: bool | None = None) -> Iterator[Bar]:
    """A bar of ``total`` steps (None: a spinner with the time elapsed) while the block runs.

    Parameters
    ----------
    description : str
        What the job is doing, shown before the bar.
    total : float or None
    progressbar : bool, optional
        Show it or not; None decides as :func:`enabled` says.

    Yields
    ------
    Bar
        Does nothing when no bar is shown.
    """
    live = _LIVE.get()
    if live is not None:  # inside another job's bar: one more task on it
        task = live.add_task(description, total=total)
        try:
            yield Bar(live, task)
        finally:
            live.remove_task(task)
        return
    if not enabled(progressbar):
        yield Bar()
        return
    progress = _new_progress()
    task = progress.add_task(description, total=total)
    progress.start()
    token = _LIVE.set(progress)
    try:
        yield Bar(progress, task)
    finally:
        _LIVE.reset(token)
        progress.stop()


def track(items: Iterable, description: str, total: float | None = None,
          progressbar: bool | None = None) -> Iterator:
    """The items of ``items``, one step of a :func:`bar` each."""
    items = list(items) if total is None and not hasattr(items, "__len__") else items
    with bar(description, len(items) if total is None else total, progressbar) as progress:
        for item in items:
            yield item
            progress.advance()


@contextmanager
def suspended() -> Iterator[None]:
    """Take the live bar off the screen while a sampler draws its own (rich allows one live
    display at a time, and tqdm's lines would interleave with it); put it back afterwards."""
    live = _LIVE.get()
    if live is None:
        yield
        return
    live.stop()
    token = _LIVE.set(None)
    try:
        yield
    finally:
        _LIVE.reset(token)
        live.start()


@contextmanager
def tqdm_sized(show: bool) -> Iterator[None]:
    """While numpyro samples with its tqdm bars: give tqdm a width and height when the terminal
    reports none (a pseudo-terminal whose size was never set), where tqdm would draw nothing.
    Only tqdm's defaults (``TQDM_NCOLS``, ``TQDM_NROWS``) are set, and only for the block."""
    try:
        columns = os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):  # not a terminal: tqdm draws without a width
        columns = None
    if not show or columns != 0:
        yield
        return
    saved = {k: os.environ.get(k) for k in ("TQDM_NCOLS", "TQDM_NROWS")}
    os.environ.setdefault("TQDM_NCOLS", str(_FALLBACK_SIZE[0]))
    os.environ.setdefault("TQDM_NROWS", str(_FALLBACK_SIZE[1]))
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


__all__ = ["Bar", "bar", "enabled", "showing", "suspended", "tqdm_sized", "track"]
