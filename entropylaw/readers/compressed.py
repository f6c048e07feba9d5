"""Compressed logs (``run.log.gz``, ``.zst``, ``.xz``, ``.bz2``), read as a stream.

:func:`open_log` opens a log for reading whether or not it is compressed; a compressed one
is decompressed block by block as the reader asks for lines (never whole in memory), so a
30 GB ``.log.zst`` costs what its plain log costs. A stream that is cut short, or that is
not what its suffix says, stops the read with one line naming the file and what was
expected; the reader never returns the part before the damage as if it were the run.

``.gz``, ``.xz`` and ``.bz2`` use the standard library; ``.zst`` needs ``zstandard``
(the ``zstd`` extra: it is the one compressor Python < 3.14 does not ship, and the
plain-log path should not pay for it).

>>> import gzip, tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "run.log.gz")
...     with gzip.open(p, "wb") as f:
...         _ = f.write(b"step:1 - actor/entropy:0.5\\n")
...     with open_log(p) as f:
...         lines = list(f)
>>> lines, inner_suffix(p), strip_compression("run.log.gz")
([b'step:1 - actor/entropy:0.5\\n'], '.log', 'run.log')
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zlib
from pathlib import PurePath

from entropylaw._optional import require
from entropylaw.errors import EntropyLawError

COMPRESSED = {".gz": "gzip", ".zst": "zstd", ".xz": "xz", ".bz2": "bzip2"}
_MAGIC = {".gz": b"\x1f\x8b", ".zst": b"\x28\xb5\x2f\xfd", ".xz": b"\xfd7zXZ\x00", ".bz2": b"BZh"}
_BLOCK = 1 << 20


def compression(path) -> str | None:
    """The compression suffix of ``path`` (``.gz`` ...) or None."""
    suffix = PurePath(str(path)).suffix.lower()
    return suffix if suffix in COMPRESSED else None


def strip_compression(name: str) -> str:
    """``run.log.zst`` -> ``run.log``; other names unchanged."""
    return name[: -len(compression(name))] if compression(name) else name


def inner_suffix(path) -> str:
    """The suffix of the log inside: ``.log`` for ``run.log.gz``."""
    return PurePath(strip_compression(PurePath(str(path)).name)).suffix.lower()


class _Checked(io.RawIOBase):
    """A decompressing stream whose errors become one line naming the file."""

    def __init__(self, inner, path: str, kind: str, file):
        self._inner, self._path, self._kind, self._file = inner, path, kind, file

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            data = self._inner.read(len(buffer))
        except EOFError:
            raise EntropyLawError(f"{self._path}: {self._kind} stream cut short (expected a complete "
                                  f"{self._kind} file; was it copied while still being written?)") from None
        except (OSError, zlib.error, lzma.LZMAError, ValueError) as err:
            if isinstance(err, OSError) and err.errno is not None:
                raise
            raise EntropyLawError(f"{self._path}: not a valid {self._kind} stream ({err}; expected a "
                                  f"{self._kind}-compressed log)") from None
        except Exception as err:  # noqa: BLE001 -- zstandard.ZstdError has no common base to name
            raise EntropyLawError(f"{self._path}: not a valid {self._kind} stream ({err}; expected a "
                                  f"{self._kind}-compressed log)") from None
        n = len(data)
        buffer[:n] = data
        return n

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._file.close()
            super().close()


def _zstd_stream(path: str, file):
    zstd = require("zstandard", extra="zstd", purpose=f"reading {path}")
    # decompressobj per frame rather than stream_reader: stream_reader ends quietly at a
    # frame cut short, and a log copied while being written is exactly that
    return _ZstdTail(zstd, file, os.fstat(file.fileno()).st_size)


class _ZstdTail:
    """Frame-by-frame zstd decompression that notices a frame cut short."""

    def __init__(self, zstd, file, size: int):
        self._zstd, self._file, self._size = zstd, file, size
        self._dobj = zstd.ZstdDecompressor().decompressobj()
        self._pending = b""
        self._done = False

    def read(self, n: int) -> bytes:
        while len(self._pending) < n and not self._done:
            chunk = self._file.read(_BLOCK)
            if not chunk:
                self._done = True
                if not self._dobj.eof and self._size:
                    raise EOFError
                break
            while chunk:
                if self._dobj.eof:  # the next frame of a multi-frame file
                    self._dobj = self._zstd.ZstdDecompressor().decompressobj()
                self._pending += self._dobj.decompress(chunk)
                chunk = self._dobj.unused_data if self._dobj.eof else b""
        out, self._pending = self._pending[:n], self._pending[n:]
        return out

    def close(self) -> None:
        pass


def open_log(path, text: bool = False, bom: bool = False):
    """Open a log, compressed or not, for streaming reads (binary, or UTF-8 text with
    undecodable bytes replaced). A compressed file's first bytes must be its format's
    magic number, else one line says what the file is not. A UTF-8 byte-order mark (a file a
    Windows tool wrote) is no text: read past in text, and in binary with ``bom`` (a text log
    read as bytes; a binary format's first bytes are its own)."""
    path = os.fspath(path)
    suffix = compression(path)
    if suffix is None:
        if text:
            return open(path, encoding="utf-8-sig", errors="replace")
        return _past_bom(open(path, "rb", buffering=_BLOCK)) if bom else open(path, "rb", buffering=_BLOCK)
    kind = COMPRESSED[suffix]
    file = open(path, "rb")
    try:
        magic = file.read(len(_MAGIC[suffix]))
        if magic != _MAGIC[suffix]:
            raise EntropyLawError(f"{path}: not a {kind} file (its first bytes are {magic[:6]!r}; expected the "
                                  f"{kind} magic {_MAGIC[suffix]!r} for a {suffix} name)")
        file.seek(0)
        if suffix == ".gz":
            inner = gzip.GzipFile(fileobj=file, mode="rb")
        elif suffix == ".xz":
            inner = lzma.LZMAFile(file, "rb")
        elif suffix == ".bz2":
            inner = bz2.BZ2File(file, "rb")
        else:
            inner = _zstd_stream(path, file)
    except BaseException:
        file.close()
        raise
    stream = io.BufferedReader(_Checked(inner, path, kind, file), buffer_size=_BLOCK)
    if text:
        return io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace")
    return _past_bom(stream) if bom else stream


def _past_bom(stream):
    """``stream`` past a UTF-8 byte-order mark at its start, where it has one."""
    try:
        if stream.peek(3)[:3] == b"\xef\xbb\xbf":
            stream.read(3)
    except BaseException:
        stream.close()
        raise
    return stream


def read_head(path, n: int) -> bytes:
    """The first ``n`` bytes of the log inside ``path`` (for format sniffing); a damaged
    stream gives what could be read before the damage (the reader will say the rest)."""
    try:
        with open_log(path) as f:
            return f.read(n)
    except EntropyLawError:
        if compression(path) is None:
            raise
        return b""
