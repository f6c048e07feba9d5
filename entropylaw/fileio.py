"""Writing files so that a reader never sees half of one, and JSON that always parses.

- :func:`atomic_write`: a context manager that gives a temporary path in the target's
  directory; on success the temporary file is renamed over the target (one ``rename``,
  atomic on POSIX), on any exception it is removed. A SIGTERM that arrives meanwhile
  (in the main thread) becomes ``SystemExit(143)``, so the temporary file is removed
  then too, and the process still ends as a terminated one.
- :func:`atomic_dir`: the same for a directory of outputs: everything is written into
  a temporary directory beside the target, which then appears whole or not at all.
- :func:`jsonable` / :func:`dumps`: NaN and inf become ``null``, numpy scalars and arrays
  become Python numbers and lists, tuples become lists; the text is strict JSON.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> with atomic_write(d / "a.txt") as tmp:
...     _ = tmp.write_text("hello")
>>> (d / "a.txt").read_text(), sorted(p.name for p in d.iterdir())
('hello', ['a.txt'])
>>> try:
...     with atomic_write(d / "b.txt") as tmp:
...         _ = tmp.write_text("half")
...         raise ValueError("disk full")
... except ValueError:
...     pass
>>> sorted(p.name for p in d.iterdir())  # no b.txt, no temporary file
['a.txt']
>>> import numpy as np
>>> dumps({"a": np.float64(0.5), "b": float("nan"), "c": (np.int64(3), np.inf)})
'{"a": 0.5, "b": null, "c": [3, null]}'
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import shutil
import signal
import tempfile
import threading
from pathlib import Path
from typing import Iterator

from entropylaw.errors import EntropyLawError

TERMINATED_EXIT = 128 + signal.SIGTERM  # what a shell reports for a process ended by SIGTERM


@contextlib.contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """Turn SIGTERM into ``SystemExit(143)`` for the duration, so ``finally`` blocks run.

    Only in the main thread (Python delivers signals there) and only when SIGTERM has its
    default action: a handler someone else installed is left alone.
    """
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def handler(signum, frame):
        raise SystemExit(TERMINATED_EXIT)

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _naming(err: OSError, target: Path, temporary: str) -> OSError:
    """``err`` naming ``target`` where it named our temporary file or directory (the user
    never typed that name) or nothing at all; its errno is recovered from the text where
    a library dropped it (pyarrow writes ``[errno 28]`` into its message).
    """
    name = err.filename2 if err.filename2 is not None else err.filename
    if name is not None and temporary not in os.fsdecode(name):
        return err
    code = err.errno
    if code is None:
        found = re.search(r"\[errno (\d+)\]", str(err), re.IGNORECASE)
        code = int(found.group(1)) if found else None
    return err if code is None else OSError(code, os.strerror(code), str(target))


def _check_target(path: Path, want_dir: bool) -> None:
    """Refuse before any work: an output whose parent is a file, or a file where a
    directory is (and the other way round)."""
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(parent))
            break
    if not want_dir and path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))


FILE_SUFFIXES = (".html", ".htm", ".json", ".png", ".pdf", ".svg", ".csv", ".txt", ".md")  # no directory's name


def check_out_dir(out: str | os.PathLike, option: str = "out") -> Path:
    """:func:`check_writable` of an output directory, a file in its place said as the option it is
    (``--out`` on the command line) rather than as the OS's "Not a directory (ENOTDIR)".

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "afile"
    >>> _ = f.write_text("")
    >>> check_out_dir(f)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    entropylaw.errors.EntropyLawError: `out` .../afile: a file; expected a directory to write into
    """
    if Path(out).exists() and not Path(out).is_dir():
        raise EntropyLawError(f"`{option}` {out}: a file; expected a directory to write into")
    if not Path(out).exists() and Path(out).suffix.lower() in FILE_SUFFIXES and not str(out).endswith(("/", os.sep)):
        # `--out report.html` made a directory of that name, the page inside it: not what was asked
        raise EntropyLawError(f"`{option}` {out}: a file's name ({Path(out).suffix}); expected a directory to write "
                              "into (its files are named inside it)")
    return check_writable(out, directory=True)


def check_writable(path: str | os.PathLike, directory: bool = False) -> Path:
    """Fail now, before the work, when ``path`` cannot be written (an output option).

    Catches a parent that is a file, a directory where a file goes (or a file where a
    directory goes), a read-only file system and a missing permission, by creating and
    removing a temporary file in the nearest existing parent (nothing is created there
    otherwise). A full disk shows only when writing: :func:`atomic_write` reports it.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> check_writable(d / "new" / "runs.parquet") == d / "new" / "runs.parquet", sorted(d.iterdir())
    (True, [])
    >>> check_writable(d)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    entropylaw.errors.EntropyLawError: cannot write the output file ...: Is a directory (EISDIR)
    >>> check_writable(d / "new" / "x" / "out", directory=True)  # doctest: +ELLIPSIS
    PosixPath('.../new/x/out')
    >>> _ = (d / "afile").write_text("")
    >>> check_writable(d / "afile" / "out", directory=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    entropylaw.errors.EntropyLawError: cannot create the output folder .../afile/out: Not a directory (ENOTDIR): .../afile is a file
    """
    path = Path(path)
    try:
        if directory and path.exists() and not path.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
        _check_target(path, want_dir=directory)
        parent = next((p for p in ([path] if directory else []) + list(path.parents) if p.exists()), Path("."))
    except OSError as err:  # the one place an output is checked: say what was being done, and where it failed
        raise EntropyLawError(f"{_what_output(path, directory)}: {_why_not(err, path)}") from None
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".check", dir=parent)
    except OSError as err:  # named where it failed: the folder written into (never our temporary name)
        why = _why_not(OSError(err.errno, err.strerror), path, "" if parent == path else f" in {parent}")
        raise EntropyLawError(f"{_what_output(path, directory)}: {why}") from None
    os.close(fd)
    os.unlink(name)
    return path


def _what_output(path: Path, directory: bool) -> str:
    return f"cannot create the output folder {path}" if directory else f"cannot write the output file {path}"


def _why_not(err: OSError, path: Path, where: str = "") -> str:
    """The OS's reason (``where``: the folder it failed in), a file above ``path`` where a folder
    should be named as such; the errno's name as :func:`describe_os_error` gives it."""
    name = f" ({errno.errorcode[err.errno]})" if err.errno in errno.errorcode else ""
    culprit = err.filename2 if err.filename2 is not None else err.filename
    if err.errno == errno.ENOTDIR and culprit is not None and Path(os.fsdecode(culprit)) != path:
        return f"{os.strerror(errno.ENOTDIR)}{name}: {os.fsdecode(culprit)} is a file"
    return f"{err.strerror or err}{name}{where}"


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, fsync: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` when the block succeeds.

    The temporary name keeps ``path``'s suffix (``.a.parquet.x1y2.tmp.parquet``), so writers
    that choose the format from the extension (matplotlib, pandas) still do the right thing.
    The file gets ordinary permissions (0666 less the umask). ``fsync=True`` also flushes
    the file and the directory entry to disk before returning. An OS error about the
    temporary file (no space, read-only file system) is re-raised naming ``path``.
    """
    path = Path(path)
    _check_target(path, want_dir=False)
    prefix = f".{path.name}."
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with _sigterm_as_exit():
            fd, name = tempfile.mkstemp(prefix=prefix, suffix=f".tmp{path.suffix}", dir=path.parent)
            os.close(fd)
            tmp = Path(name)
            try:
                umask = os.umask(0)
                os.umask(umask)
                os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600
                yield tmp
                if fsync:
                    with open(tmp, "rb+") as fh:
                        os.fsync(fh.fileno())
                os.replace(tmp, path)
                if fsync:
                    _fsync_dir(path.parent)
            finally:
                tmp.unlink(missing_ok=True)
    except OSError as err:
        raise _naming(err, path, os.sep + prefix) from None


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory beside ``path``; on success it becomes ``path``.

    A new ``path`` appears whole (one rename). When ``path`` is already a directory, each
    file written is moved into it with its own atomic rename, and files of the directory
    that were not rewritten are kept (``--out`` may be a directory the user shares).
    On any exception, or SIGTERM, the temporary directory is removed.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise EntropyLawError(f"{path}: exists and is not a directory")
    _check_target(path, want_dir=True)
    try:
        yield from _atomic_dir(path)
    except OSError as err:
        # a file inside our temporary directory is named as it will be inside ``path``
        name = os.fsdecode(err.filename) if err.filename is not None else ""
        inner = [i for i, part in enumerate(Path(name).parts) if part.startswith(f".{path.name}.")]
        target = path.joinpath(*Path(name).parts[inner[-1] + 1:]) if inner else path
        raise _naming(err, target, os.sep + f".{path.name}.") from None


def _atomic_dir(path: Path) -> Iterator[Path]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with _sigterm_as_exit():
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
        try:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes 0700
            yield tmp
            try:
                os.rename(tmp, path)  # fails when path exists (as a non-empty directory on Linux)
            except OSError:
                if not path.is_dir():
                    raise
                for item in sorted(tmp.rglob("*")):
                    target = path / item.relative_to(tmp)
                    if item.is_dir():
                        target.mkdir(exist_ok=True)
                    else:
                        os.replace(item, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def write_text(path: str | os.PathLike, text: str, fsync: bool = False) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns the path."""
    with atomic_write(path, fsync=fsync) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def jsonable(obj):
    """``obj`` with NaN/inf as None, numpy scalars/arrays as Python numbers/lists, tuples as lists.

    >>> import numpy as np
    >>> jsonable({"x": np.array([1.0, np.nan]), "ok": np.bool_(True), "n": np.int32(2)})
    {'x': [1.0, None], 'ok': True, 'n': 2}
    """
    if isinstance(obj, dict):
        return {(k if isinstance(k, str) else str(jsonable(k))): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, (bool, str)) or obj is None:
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):  # np.float64 is a float too
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    # numpy scalars and arrays (and torch tensors, pandas series) without importing them
    tolist = getattr(obj, "tolist", None)
    if callable(tolist):
        return jsonable(tolist())
    return obj


def _number(obj):
    """Last resort for ``json.dumps``: anything ``float()`` accepts (a Decimal, a 0-d tensor)."""
    try:
        value = float(obj)
    except (TypeError, ValueError):
        raise TypeError(f"{type(obj).__name__} is not JSON serialisable") from None
    return value if math.isfinite(value) else None


def dumps(obj, **kwargs) -> str:
    """Strict JSON text of ``jsonable(obj)`` (``allow_nan=False``: an inf that slipped through raises)."""
    return json.dumps(jsonable(obj), allow_nan=False, default=_number, **kwargs)


def write_json(path: str | os.PathLike, obj, fsync: bool = False, **kwargs) -> Path:
    """Write ``dumps(obj)`` to ``path`` atomically."""
    return write_text(path, dumps(obj, **kwargs), fsync=fsync)


def summary_in(out: str | os.PathLike) -> dict | None:
    """The ``summary.json`` an output folder already holds (a probe's, an audit's), read to be kept
    beside what is written next to it; None where there is none. A file there that is no JSON
    object is refused, never overwritten.

    >>> summary_in(tempfile.mkdtemp()) is None
    True
    """
    path = Path(out) / "summary.json"
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict):
        raise EntropyLawError(f"{path}: exists and is not an entropylaw summary (a JSON object); choose another "
                              "`out`, or move it")
    return doc
