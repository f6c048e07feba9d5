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
import json
import math
import os
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


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, fsync: bool = False) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` when the block succeeds.

    The temporary name keeps ``path``'s suffix (``.a.parquet.x1y2.tmp.parquet``), so writers
    that choose the format from the extension (matplotlib, pandas) still do the right thing.
    The file gets ordinary permissions (0666 less the umask). ``fsync=True`` also flushes
    the file and the directory entry to disk before returning.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _sigterm_as_exit():
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp{path.suffix}", dir=path.parent)
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
