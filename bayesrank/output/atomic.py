"""The one writer of output files: atomic, exclusive, and safe from interruption.

Every file bayesrank writes — a saved fit, ``--out``'s ``fit.nc`` / ``summary.json`` /
``leaderboard.csv``, a report and its figures, a DML policy — goes through
:func:`write_files`, which guarantees:

* **Atomic.** Each file is written to a temporary file in its own folder, flushed to disk
  (``fsync``) and moved into place with one rename (``os.replace``), or, when it must not
  replace anything, linked into place (``os.link``, which fails if the name was taken
  meanwhile): a reader sees the old file or the whole new one, never part of one. Several
  files are all written before the first is moved into place.
* **Exclusive.** A run first *claims* each destination (:func:`claim`): it creates the
  lock file ``.<name>.<digest>.lock`` beside it with ``O_CREAT | O_EXCL``, which exactly
  one process can do. A second run that targets the same file fails at once, naming the
  process holding it, so two runs cannot both write ``--out`` without ``--force`` and both
  succeed. A claim left by a process that no longer exists (on this host) is taken over,
  with the temporary files it left. The CLI claims ``--out`` before fitting
  (:func:`reserve`), so a run is refused before its work, not after.
* **Never an input, never a special file.** A file this process read as input
  (:func:`mark_input`: the data files of the reader and of the CLI) and a file that is not a
  regular one (a device, a pipe, a socket) are never replaced, whatever the output's name and
  even with ``overwrite`` / ``--force``.
* **Interruptible.** While files are written, SIGINT, SIGTERM and SIGHUP are *deferred*:
  the handler only records the signal (so no exception lands inside a library writing
  HDF5, where it would be swallowed as "Exception ignored"). At the next step the write is
  abandoned — temporary files removed, nothing replaced, claims released — and the signal is
  then delivered again to the handler that was in place (Ctrl-C raises
  ``KeyboardInterrupt``; SIGTERM with the default handler ends the process), so the run
  exits non-zero. A process killed outright (SIGKILL) leaves a temporary file and a lock,
  which the next claim of the same destination removes. A program whose own handlers record
  the signals they get (:func:`note_signal`, as the CLI's do) writes nothing after one was
  received, even if a library swallowed it (a query or a sampler stopped early).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import signal
import socket
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from bayesrank.errors import OutputError

#: Signals deferred while files are written.
DEFERRED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))
#: A lock file whose owner cannot be read is taken over after this many seconds (its owner
#: died between creating it and writing its process id).
UNREADABLE_LOCK_SECONDS = 60.0
#: Characters of a target's name kept in its lock and temporary files' names (the rest is in
#: the digest), so that they fit the file system's limit on names.
_KEPT = 40

_HELD: dict[Path, int] = {}  # lock file -> how many claims of this process hold it
_NOTED: list[int] = []  # signals a program's handlers received (note_signal)
_RESERVED: list[Claim] = []  # claims held until release_reserved()
_INPUTS: set[tuple[int, ...]] = set()  # the identity (_identity) of every file this process read as input
_STATE = threading.local()


def _prefix(target: Path) -> str:
    digest = hashlib.sha1(os.fsencode(target.name)).hexdigest()[:10]
    return f".{target.name[:_KEPT]}.{digest}"


def mark_input(path: str | Path) -> None:
    """Record that this process read ``path`` as input: the writer never replaces it, whatever
    the output's name or ``overwrite`` (a data file given as ``--out``'s folder's
    ``leaderboard.csv``, a fit saved over its own records). A path that cannot be looked at is
    not recorded (it was not read either)."""
    with contextlib.suppress(OSError):
        found = os.stat(path)
        if stat.S_ISREG(found.st_mode):
            _INPUTS.add(_identity(found))


def _identity(found: os.stat_result) -> tuple[int, ...]:
    """A file as read: its device and inode under any name (a link, another spelling of the
    path), with its size and modification time, so that a later file that reuses a deleted
    input's inode is not taken for it."""
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns


def lock_path(target: str | Path) -> Path:
    """The lock file of a destination (module docstring)."""
    target = Path(target)
    return target.parent / (_prefix(target) + ".lock")


# ---------------------------------------------------------------------- claims
class Claim:
    """The process's exclusive claim on output destinations (see :func:`claim`).

    Attributes
    ----------
    targets : list of Path
    existing : list of Path
        The targets that existed when claimed (replaced only with ``overwrite``).
    """

    def __init__(self, targets: Iterable[str | Path], overwrite: bool = False):
        self.targets = [Path(t) for t in targets]
        self.overwrite = overwrite
        self.existing: list[Path] = []
        self._locks: list[Path] = []
        self._made: list[Path] = []

    def acquire(self) -> Claim:
        try:
            for target in self.targets:
                self._check_target(target)
                self._made += _make_folder(target)
            for target in self.targets:
                self._lock(target)
            self.existing = [t for t in self.targets if os.path.lexists(t)]
            if self.existing and not self.overwrite:
                names = ", ".join(str(p) for p in self.existing)
                raise OutputError(f"{names} already exist{'s' if len(self.existing) == 1 else ''}; pass --force "
                                  "(overwrite=True) to replace, or choose another output place.")
        except BaseException:
            self.release()
            raise
        return self

    def _check_target(self, target: Path) -> None:
        """Refuse a target that is a folder, not a regular file, or an input of this run (one stat)."""
        try:
            found = os.stat(target)
        except (FileNotFoundError, NotADirectoryError):  # nothing there yet (making its folder names what is in
            return                                         # the way: a file, a link to nothing)
        except OSError as err:
            raise output_error(target, err) from None
        if stat.S_ISDIR(found.st_mode):
            raise OutputError(f"{target} is a folder; choose another output name.")
        if not stat.S_ISREG(found.st_mode):
            raise OutputError(f"{target} is not a regular file (a device, a pipe or a socket); it is never "
                              "replaced, even with --force: choose another output name.")
        if _identity(found) in _INPUTS:
            raise OutputError(f"{target} is an input this run read; it is never replaced, even with --force: "
                              "choose another output name.")

    def _lock(self, target: Path) -> None:
        lock = lock_path(target)
        if lock in _HELD:
            _HELD[lock] += 1
            self._locks.append(lock)
            return
        for attempt in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                owner = _owner(lock)
                if attempt == 0 and owner is None:  # abandoned: take it over
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(lock)
                    continue
                raise OutputError(f"{target} is being written by another bayesrank run ({owner}); wait for it to "
                                  "finish, or choose another output place.") from None
            except OSError as err:
                raise output_error(target, err) from None
            try:
                os.write(fd, f"{os.getpid()} {socket.gethostname()}\n".encode())
            finally:
                os.close(fd)
            _HELD[lock] = 1
            self._locks.append(lock)
            _remove_temporaries(target)
            return

    def release(self) -> None:
        """Give the claim up: lock files removed, folders made for it removed when empty."""
        for lock in reversed(self._locks):
            _HELD[lock] -= 1
            if _HELD[lock] == 0:
                del _HELD[lock]
                with contextlib.suppress(OSError):
                    os.unlink(lock)
        self._locks = []
        for folder in reversed(self._made):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty
        self._made = []

    def keep_folders(self) -> None:
        """Keep the folders made for the claim (something was written into them)."""
        self._made = []

    def __enter__(self) -> Claim:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def claim(targets: Iterable[str | Path], overwrite: bool = False) -> Claim:
    """Claim output destinations for this process (a context manager).

    Folders are made as needed; each target gets its lock file. A destination this process
    holds already is claimed again (claims nest).

    Parameters
    ----------
    targets : iterable of path
        The files to be written.
    overwrite : bool
        Whether existing targets may be replaced.

    Raises
    ------
    OutputError
        Another live process holds a target; a target exists (without ``overwrite``) or is a
        folder; a folder cannot be made (a part of the path is a file, a dangling symbolic
        link, no permission, a name too long).
    """
    return Claim(targets, overwrite)


def reserve(targets: Iterable[str | Path], overwrite: bool = False) -> Claim:
    """Claim destinations until :func:`release_reserved` (the CLI claims its outputs before
    the work that makes them, and releases them when the command ends)."""
    held = Claim(targets, overwrite).acquire()
    _RESERVED.append(held)
    return held


def release_reserved() -> None:
    """Release every claim made by :func:`reserve`."""
    while _RESERVED:
        _RESERVED.pop().release()


def _owner(lock: Path) -> str | None:
    """Who holds a lock, in words; None when it is abandoned (its process is gone from this
    host, or it was never written and is old)."""
    try:
        text = lock.read_text(encoding="utf-8", errors="replace").split()
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return None
    except OSError:
        return "a process whose lock cannot be read"
    if len(text) < 2 or not text[0].isdigit():
        return None if age > UNREADABLE_LOCK_SECONDS else "a process that is starting"
    pid, host = int(text[0]), text[1]
    if host == socket.gethostname() and not _alive(pid):
        return None
    return f"process {pid} on {host}"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_temporaries(target: Path) -> None:
    """Temporary files of ``target`` left by a process killed while writing (only the claim's
    holder writes them, so any found now are abandoned)."""
    prefix = _prefix(target) + "."
    with contextlib.suppress(OSError):
        for name in os.listdir(target.parent):
            if name.startswith(prefix) and name.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(target.parent / name)


def _make_folder(target: Path) -> list[Path]:
    """Make the folders of ``target`` (returned, deepest last); refuse what cannot hold it."""
    folder = target.parent
    missing = []
    probe = folder
    try:
        while not probe.exists():
            if probe.is_symlink():
                raise OutputError(f"cannot write {target}: {probe} is a symbolic link to {os.readlink(probe)}, which "
                                  "does not exist; create it or choose another output place.")
            missing.append(probe)
            if probe.parent == probe:
                break
            probe = probe.parent
        if not probe.is_dir():
            raise OutputError(f"cannot write {target}: {probe} is a file, not a folder; choose another output place.")
        if not os.access(probe, os.W_OK | os.X_OK):
            raise OutputError(f"cannot write to {target.parent}: {probe} is not writable; choose a writable folder.")
        for path in reversed(missing):
            path.mkdir()
    except OutputError:
        raise
    except OSError as err:
        raise output_error(target, err) from None
    return list(reversed(missing))


def output_error(target: Path, err: OSError) -> OutputError:
    """An operating-system error writing ``target``, in words."""
    if err.errno == errno.ENAMETOOLONG:
        longest = max((len(os.fsencode(p)) for p in target.parts), default=0)
        return OutputError(f"the output path is too long for the file system ({len(os.fsencode(str(target))):,} "
                           f"bytes; its longest name has {longest:,} bytes, most file systems allow 255): choose a "
                           "shorter name.")
    if err.errno == errno.ENOTDIR:
        return OutputError(f"cannot write {target}: a part of its path is a file, not a folder.")
    if err.errno == errno.ENOSPC:
        return OutputError(f"cannot write {target}: {err.strerror}; free space or choose another place.")
    return OutputError(f"cannot write {target}: {err.strerror or err}; choose a writable place.")


# ---------------------------------------------------------------------- signals
class _Deferred(BaseException):
    """Unwinds a write when a deferred signal arrived (never escapes :func:`deferred_signals`)."""


class _Pending:
    def __init__(self):
        self.signals: list[int] = []

    def check(self) -> None:
        """Abandon the work (raise) when a signal arrived."""
        if self.signals:
            raise _Deferred()


@contextlib.contextmanager
def deferred_signals() -> Iterator[_Pending]:
    """Record SIGINT / SIGTERM / SIGHUP instead of acting on them; on leaving, restore the
    handlers and deliver the first recorded signal to them (module docstring). Outside the
    main thread, and inside another deferral, nothing is deferred."""
    outer = getattr(_STATE, "pending", None)
    if outer is not None or threading.current_thread() is not threading.main_thread():
        yield outer or _Pending()
        return
    pending = _Pending()
    previous = {}
    for signum in DEFERRED:
        with contextlib.suppress(ValueError, OSError):
            previous[signum] = signal.signal(signum, lambda s, frame: pending.signals.append(s))
    _STATE.pending = pending
    try:
        yield pending
    except _Deferred:
        pass
    finally:
        _STATE.pending = None
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if pending.signals:
            signal.raise_signal(pending.signals[0])


def note_signal(signum: int) -> None:
    """Record that the program received ``signum`` (called by its signal handlers): no file
    is written after that, whatever swallowed the signal's exception."""
    _NOTED.append(signum)


def noted_signal() -> int | None:
    """The first signal recorded by :func:`note_signal`, or None."""
    return _NOTED[0] if _NOTED else None


def forget_signals() -> None:
    """Forget recorded signals (a program starting a new run in the same process)."""
    _NOTED.clear()


# ---------------------------------------------------------------------- writing
def write_files(writers: Mapping[str | Path, Callable[[Path], None]], overwrite: bool = False) -> list[Path]:
    """Write several files as one step: atomic, exclusive and interruptible (module docstring).

    Parameters
    ----------
    writers : mapping of path to callable
        Target → a function writing the content to the path it is given (a temporary file in
        the target's folder; its suffix is not the target's, so pass a format explicitly,
        e.g. ``fig.savefig(path, format="png")``).
    overwrite : bool
        Replace existing targets; otherwise an existing target raises before anything is
        written, and a target created by someone else meanwhile is not replaced either.

    Returns
    -------
    list of Path
        The targets that existed before and were replaced.

    Raises
    ------
    OutputError
        A target exists (without ``overwrite``), is a folder, is claimed by another run, or
        cannot be written. Nothing is replaced and no temporary file is left.
    """
    targets = [Path(p) for p in writers]
    temps: dict[Path, Path] = {}
    placed: list[Path] = []
    target = targets[0] if targets else Path()
    with deferred_signals() as pending, claim(targets, overwrite) as held:
        if _NOTED:  # received before, swallowed since: write nothing, deliver it again
            pending.signals.append(_NOTED[0])
        try:
            pending.check()
            for target, write in zip(targets, writers.values()):
                temps[target] = _temporary(target)
                write(temps[target])
                _sync(temps[target])
                pending.check()
            for target, tmp in temps.items():  # noqa: B007 (target: named in an error)
                if overwrite:
                    os.replace(tmp, target)
                else:
                    _place_new(tmp, target)
                placed.append(target)
            for folder in {t.parent for t in targets}:
                _sync(folder)
            held.keep_folders()
        except OSError as err:
            if not overwrite:
                _remove(placed)
            raise (err if isinstance(err, OutputError) else output_error(target, err)) from None
        except BaseException:
            if not overwrite:
                _remove(placed)
            raise
        finally:
            _remove(p for p in temps.values())
        return held.existing
    # a deferred signal abandoned the write and its handler did not end the run
    raise OutputError(f"writing {', '.join(map(str, targets))} was interrupted by a signal; nothing was replaced.")


def write_text(path: str | Path, text: str, overwrite: bool = False) -> list[Path]:
    """Write one UTF-8 text file through :func:`write_files`."""
    return write_files({path: lambda tmp: tmp.write_text(text, encoding="utf-8")}, overwrite)


def _temporary(target: Path) -> Path:
    """A new empty file beside ``target`` with the permissions a plainly created file gets."""
    fd, tmp = tempfile.mkstemp(prefix=_prefix(target) + ".", suffix=".tmp", dir=target.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    return Path(tmp)


def _sync(path: Path) -> None:
    """Flush a file's (or a folder's) content to disk."""
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if path.is_dir() else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):  # some file systems cannot sync a folder
            os.fsync(fd)
    finally:
        os.close(fd)


def _place_new(tmp: Path, target: Path) -> None:
    """Move ``tmp`` to the name ``target`` only if that name is free (a hard link fails when
    it is taken; where links are not supported, an exclusive create reserves the name)."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise OutputError(f"{target} was created by someone else while bayesrank wrote it; it was left as it is "
                          "(pass --force / overwrite=True to replace it).") from None
    except OSError as err:
        if err.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        try:
            os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        except FileExistsError:
            raise OutputError(f"{target} was created by someone else while bayesrank wrote it; it was left as it "
                              "is (pass --force / overwrite=True to replace it).") from None
        os.replace(tmp, target)
        return
    os.unlink(tmp)


def _remove(paths: Iterable[Path]) -> None:
    for path in list(paths):
        with contextlib.suppress(FileNotFoundError, OSError):
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                os.unlink(path)


__all__ = [
    "Claim", "DEFERRED", "UNREADABLE_LOCK_SECONDS", "claim", "deferred_signals", "forget_signals", "lock_path",
    "mark_input",
    "note_signal", "noted_signal", "output_error", "release_reserved", "reserve", "write_files", "write_text"
]
