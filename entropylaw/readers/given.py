"""Sources given more than once: the same file twice (a shell glob that overlaps another path),
or a file and the folder that holds it (``summary runs runs/a.csv``). Read twice, a file was two
runs, the second named ``-2``: each is read once, and that is said."""

from __future__ import annotations

import warnings
from pathlib import Path

from entropylaw.errors import EntropyLawWarning


def _resolved(source) -> str:
    text = str(source)
    return str(Path(text).resolve()) if "://" not in text and Path(text).exists() else text


def once(sources) -> list:
    """``sources`` with a path given twice read once, said."""
    seen, out = {}, []
    for source in sources:
        key = _resolved(source)
        if key in seen:
            warnings.warn(f"{source}: given twice (as {seen[key]}): read once", EntropyLawWarning, stacklevel=3)
            continue
        seen[key] = str(source)
        out.append(source)
    return out


def each_file_once(pieces: list, given: list) -> list:
    """``pieces`` (a table and its account each, read from the source given beside it in ``given``)
    without a file's second reading under another source given: a folder and a file inside it.
    Which files a folder reads only its reading knows, so the files are matched once read."""
    first: dict[str, str] = {}
    said: set[str] = set()
    out = []
    for piece, source in zip(pieces, given):
        report = piece[1]
        key = _resolved(report.source)
        if first.setdefault(key, str(source)) == str(source):
            out.append(piece)
        elif key not in said:
            said.add(key)
            warnings.warn(f"{report.source}: given twice (read from {first[key]} and from {source}): read once",
                          EntropyLawWarning, stacklevel=3)
    return out
