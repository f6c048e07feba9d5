"""The bad-input corpus's work area and its way of running a command (see test_badinput_corpus).

The area is a world-traversable directory (``nobody`` must reach it) holding the corpus
(:mod:`badinput.build`), an ``out/`` directory with outputs that exist before a failing
command, and, on demand, a read-only and a full tmpfs.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from badinput.build import build

NOBODY = 65534
TEMP_NAME = re.compile(r"^\..*\.(tmp(\..*)?|check)$")


# ---- the work area ------------------------------------------------------------------------------

@contextlib.contextmanager
def make_area():
    """A world-traversable directory with the corpus (``nobody`` must reach it), removed after."""
    root = Path(tempfile.mkdtemp(prefix="entropylaw-badinput-", dir="/tmp"))
    os.chmod(root, 0o755)
    corpus = build(root / "in")
    for p in [root / "in", *(root / "in").rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    (root / "out").mkdir()
    os.chmod(root / "out", 0o777)
    os.mkfifo(root / "in" / "a.fifo")
    _write_existing_outputs(root / "out")
    mounts = _Mounts(root)
    try:
        yield Area(root, corpus, mounts)
    finally:
        mounts.release()
        shutil.rmtree(root, ignore_errors=True)


def _write_existing_outputs(out: Path) -> None:
    """An output that exists before a failing command: it must come out unchanged."""
    (out / "existing.csv").write_text("run_id,step,metric,value\nold,1,entropy,0.5\n")
    (out / "adir.csv").mkdir()
    (out / "report_file").write_text("a file where a directory is asked for\n")


class _Mounts:
    """A read-only and a full tmpfs under the area, when this process may mount."""

    def __init__(self, root: Path):
        self.root, self.done, self.ok = root, [], None

    def get(self, kind: str) -> Path:
        path = self.root / kind
        if path in self.done:
            return path
        path.mkdir(exist_ok=True)
        opts = "ro,size=64k" if kind == "ro" else "size=32k"
        ok = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)],
                            capture_output=True).returncode == 0 if shutil.which("mount") else False
        if not ok:
            pytest.skip(f"cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN): no {kind} file system")
        self.done.append(path)
        if kind == "full":  # fill it: the next write of any size fails with ENOSPC
            with contextlib.suppress(OSError):
                with open(path / "filler", "wb") as f:
                    while True:
                        f.write(b"\0" * 4096)
        return path

    def release(self) -> None:
        for path in self.done:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


@dataclass
class Area:
    root: Path
    corpus: object
    mounts: _Mounts

    def paths(self, case_id: str) -> dict[str, str]:
        d = {k: str(v.path) for k, v in self.corpus.inputs.items()}
        d.update(out=str(self.root / "out" / case_id), outdir=str(self.root / "out"),
                 fifo=str(self.root / "in" / "a.fifo"), missing=str(self.root / "in" / "missing.log"),
                 indir=str(self.root / "in"))
        return d


def snapshot(root: Path) -> dict[str, tuple]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if rel.split(os.sep)[0] in ("ro", "full"):
            continue
        if p.is_file():
            out[rel] = (p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest())
        elif p.is_dir():
            out[rel] = ("dir",)
    return out


def temp_files(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if TEMP_NAME.match(p.name)]


# ---- running one command in-process ---------------------------------------------------------------

@dataclass
class Outcome:
    code: int
    out: str
    err: str
    errors: list[str] = field(default_factory=list)


def run_main(argv: list[str], capsys) -> Outcome:
    from entropylaw.cli.main import main

    try:
        code = main(argv)
    except SystemExit as stop:  # argparse
        code = stop.code
    cap = capsys.readouterr()
    errors = [line for line in cap.err.splitlines() if line.startswith("entropylaw: error:")]
    return Outcome(code, cap.out, cap.err, errors)


@contextlib.contextmanager
def as_nobody():
    """Effective uid nobody: permission bits apply (root's bypass is gone), restored after."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to nobody")
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@contextlib.contextmanager
def file_size_limit(nbytes: int):
    """Writes past ``nbytes`` fail with EFBIG (SIGXFSZ ignored), as on a disk that fills up."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old)
