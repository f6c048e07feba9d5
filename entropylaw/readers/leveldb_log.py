"""Record framing of W&B ``.wandb`` transaction logs (a LevelDB-log variant), read defensively.

Layout (learned from the wandb SDK's writer and checked against files it writes):

- a 7-byte file header: ident ``:W&B``, magic ``0xBEE1`` (uint16 little-endian),
  format version (one byte; 0 in every SDK so far);
- then the file is cut into 32 KiB blocks (the header occupies the start of block 0);
  each logical record is split into *chunks* that never cross a block boundary. A chunk
  is ``crc: uint32 LE | length: uint16 LE | type: uint8 | data[length]``, type FULL (1),
  FIRST (2), MIDDLE (3) or LAST (4). When fewer than 7 bytes remain in a block they are
  zero padding.
- ``crc`` is the plain CRC-32 (IEEE, zlib's) of the type byte followed by the data. The
  wandb writer selects that instead of LevelDB's masked CRC-32C (``CRCAlgoIEEE`` in its
  Go source); a real file's first chunk matches zlib.crc32 and not CRC-32C (tested).

A crashed run leaves a truncated file; a bad disk leaves garbage. :func:`iter_records`
yields every record whose chunks are all intact. A chunk failing its checksum costs only
its record when its length leads to an intact chunk; otherwise reading resumes at the
next offset of the block where an intact chunk starts (or at the next block boundary:
chunks never cross one). Each damaged region is recorded in a :class:`Damage`, with the
number of intact records before it, instead of raising.

>>> import io
>>> data = write_log([b"hello", b"x" * 40000])
>>> damage = Damage()
>>> [len(p) for _, p in iter_records(io.BytesIO(data), damage)]
[5, 40000]
>>> damage.events
[]
>>> cut = data[:-10]                       # a crash in the middle of the last record
>>> [len(p) for _, p in iter_records(io.BytesIO(cut), damage)]
[5]
>>> damage.events[0].reason
'truncated record at end of file'
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from typing import BinaryIO, Iterator

from entropylaw.errors import EntropyLawError

BLOCK_SIZE = 32 * 1024
CHUNK_HEADER = 7
FILE_HEADER = struct.Struct("<4sHB")  # ident, magic, version: 7 bytes
IDENT, MAGIC = b":W&B", 0xBEE1
KNOWN_VERSIONS = (0, 1)
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4
_CHUNK = struct.Struct("<IHB")
# crc32(type byte + data) == crc32(data, seed[type]): precomputed so data is never copied
_SEED = {t: zlib.crc32(bytes([t])) for t in (FULL, FIRST, MIDDLE, LAST)}

BAD_CHECKSUM = "bad checksum"
BAD_LENGTH = "chunk length runs past its block"
BAD_TYPE = "unknown chunk type"
ORPHAN = "fragment without its first part"
INTERRUPTED = "record interrupted by a new record"
TRUNCATED = "truncated record at end of file"


@dataclass
class DamageEvent:
    """One damaged region: where it starts, why, how many bytes were skipped, how many
    intact records came before it, and (when the region is exactly one whole-record
    chunk) the damaged record's bytes, for the reader to look into."""

    offset: int
    reason: str
    bytes_lost: int
    records_before: int = 0
    payload: bytes | None = None


@dataclass
class Damage:
    """What :func:`iter_records` could not read. Each event costs at least one record."""

    events: list[DamageEvent] = field(default_factory=list)

    def add(self, offset: int, reason: str, bytes_lost: int, records_before: int = 0,
            payload: bytes | None = None) -> None:
        self.events.append(DamageEvent(offset, reason, bytes_lost, records_before, payload))

    @property
    def bytes_lost(self) -> int:
        return sum(e.bytes_lost for e in self.events)


def check_header(head: bytes, where: str) -> int:
    """Validate the 7-byte file header; return the format version or raise a one-line error."""
    if len(head) == 0:
        raise EntropyLawError(f"{where}: empty file (expected a .wandb header ':W&B')")
    if len(head) < FILE_HEADER.size:
        raise EntropyLawError(f"{where}: file is {len(head)} bytes, too short for a .wandb header")
    ident, magic, version = FILE_HEADER.unpack(head[:FILE_HEADER.size])
    if ident != IDENT or magic != MAGIC:
        raise EntropyLawError(f"{where}: bad header {head[:FILE_HEADER.size]!r} "
                              f"(expected ':W&B' and magic 0xBEE1: not a W&B .wandb file)")
    if version not in KNOWN_VERSIONS:
        raise EntropyLawError(f"{where}: .wandb format version {version} is not supported "
                              f"(known: {', '.join(map(str, KNOWN_VERSIONS))})")
    return version


def _chunk_end(block: bytes, pos: int) -> int:
    """End of an intact chunk starting at ``pos`` in ``block``, or -1."""
    if pos + CHUNK_HEADER > len(block):
        return -1
    crc, length, kind = _CHUNK.unpack_from(block, pos)
    seed = _SEED.get(kind)
    end = pos + CHUNK_HEADER + length
    if seed is None or end > len(block) or zlib.crc32(block[pos + CHUNK_HEADER:end], seed) != crc:
        return -1
    return end


def _clean_after(block: bytes, end: int) -> bool:
    """True when a chunk ending at ``end`` is followed by an intact chunk, zero padding, the
    end of the file, or (in a file's last, short block) a chunk the file's end cuts."""
    rest = block[end:]
    if not rest.strip(b"\0") or _chunk_end(block, end) >= 0:
        return True
    if len(block) < BLOCK_SIZE and len(rest) >= CHUNK_HEADER:
        _crc, length, kind = _CHUNK.unpack_from(block, end)
        return kind in _SEED and end + CHUNK_HEADER + length > len(block)
    return False


def _resync(block: bytes, pos: int) -> int:
    """The next offset after ``pos`` in ``block`` where an intact chunk starts (len(block) if none)."""
    for candidate in range(pos + 1, len(block) - CHUNK_HEADER + 1):
        if block[candidate + 6] in _SEED and _chunk_end(block, candidate) >= 0:
            return candidate
        if not block[candidate:].strip(b"\0"):
            break
    return len(block)


def iter_records(stream: BinaryIO, damage: Damage, where: str = "<stream>") -> Iterator[tuple[int, bytes]]:
    """Yield ``(offset, payload)`` for each intact record of a ``.wandb`` stream, reading block by block.

    ``offset`` is where the record's first chunk starts. The header is checked first
    (:func:`check_header`). Damage is appended to ``damage``; nothing is raised after
    the header. A chunk failing its checksum costs its own record only when its length
    still leads to an intact chunk; otherwise reading resumes at the next offset in the
    block where an intact chunk starts (chunks never cross a block boundary).
    """
    block = stream.read(BLOCK_SIZE)
    check_header(block, where)
    block_start, pos = 0, FILE_HEADER.size
    pending: list[bytes] | None = None   # chunks of a record started with FIRST
    pending_start = 0
    skipping = False                     # after damage: orphan fragments belong to it
    yielded = 0
    unpack, crc32 = _CHUNK.unpack_from, zlib.crc32

    def lose(offset: int, reason: str, nbytes: int, payload: bytes | None = None) -> None:
        nonlocal skipping
        if skipping and damage.events and reason == ORPHAN:
            damage.events[-1].bytes_lost += nbytes
            damage.events[-1].payload = None
        else:
            damage.add(offset, reason, nbytes, yielded, payload)
        skipping = True

    while block:
        size = len(block)
        while pos + CHUNK_HEADER <= size:
            crc, length, kind = unpack(block, pos)
            if kind == 0 and not block[pos:].strip(b"\0"):  # zero padding / preallocated space
                pos = size
                break
            end = pos + CHUNK_HEADER + length
            if end > size and size < BLOCK_SIZE and _SEED.get(kind) is not None:
                break                                    # the file ends inside this chunk
            seed = _SEED.get(kind)
            if seed is None or end > size or crc32(block[pos + CHUNK_HEADER:end], seed) != crc:
                reason = BAD_TYPE if seed is None else BAD_LENGTH if end > size else BAD_CHECKSUM
                lost = _pending_bytes(pending)
                start = pending_start if pending is not None else block_start + pos
                if seed is not None and end <= size and _clean_after(block, end):
                    # only this chunk is bad: its record is lost, framing goes on after it
                    whole = kind == FULL and pending is None
                    lose(start, reason, lost + end - pos, block[pos + CHUNK_HEADER:end] if whole else None)
                    nxt = end
                else:
                    nxt = _resync(block, pos)
                    lose(start, reason, lost + nxt - pos)
                pending = None
                pos = nxt
                continue
            data = block[pos + CHUNK_HEADER:end]
            if kind == FULL or kind == FIRST:
                if pending is not None:
                    lose(pending_start, INTERRUPTED, _pending_bytes(pending))
                skipping = False
                if kind == FULL:
                    yielded += 1
                    yield block_start + pos, data
                    pending = None
                else:
                    pending, pending_start = [data], block_start + pos
            elif pending is None:
                lose(block_start + pos, ORPHAN, end - pos)
            elif kind == MIDDLE:
                pending.append(data)
            else:
                pending.append(data)
                yielded += 1
                yield pending_start, b"".join(pending)
                pending = None
            pos = end
        if size < BLOCK_SIZE:
            tail = block[pos:]
            if tail.strip(b"\0") or pending is not None:  # a cut chunk or an unfinished record
                start = pending_start if pending is not None else block_start + pos
                # what is left of the cut record, for the reader to look into
                partial = b"".join(pending) if pending is not None else None
                if len(tail) > CHUNK_HEADER and (pending is not None or tail[6] in (FULL, FIRST)):
                    partial = (partial or b"") + tail[CHUNK_HEADER:]
                damage.add(start, TRUNCATED, _pending_bytes(pending) + len(tail), yielded, partial)
            return
        block_start += size
        pos = 0
        block = stream.read(BLOCK_SIZE)
    if pending is not None:  # the file ends exactly on a block boundary inside a record
        damage.add(pending_start, TRUNCATED, _pending_bytes(pending), yielded, b"".join(pending))


def _pending_bytes(pending: list[bytes] | None) -> int:
    return sum(len(p) for p in pending) if pending else 0


def write_log(payloads: list[bytes], version: int = 0) -> bytes:
    """Frame ``payloads`` the way the wandb writer does (for tests and benchmarks).

    >>> len(write_log([b"ab"]))  # header + chunk header + data
    16
    """
    out = bytearray(FILE_HEADER.pack(IDENT, MAGIC, version))
    for payload in payloads:
        view, first = memoryview(payload), True
        while True:
            room = BLOCK_SIZE - len(out) % BLOCK_SIZE
            if room < CHUNK_HEADER:
                out += b"\0" * room
                continue
            piece = view[:room - CHUNK_HEADER]
            view = view[len(piece):]
            last = len(view) == 0
            kind = (FULL if last else FIRST) if first else (LAST if last else MIDDLE)
            out += _CHUNK.pack(zlib.crc32(piece, _SEED[kind]), len(piece), kind) + piece
            first = False
            if last:
                break
    return bytes(out)
