"""TFRecord framing (TensorBoard event files), read defensively with both checksums checked.

A file is a sequence of records, each::

    uint64 length (little-endian) | uint32 masked_crc32c(length bytes) | data[length] | uint32 masked_crc32c(data)

where ``masked_crc32c(x) = rotate_right(crc32c(x), 15) + 0xA282EAD8`` (mod 2**32) and
crc32c is the Castagnoli CRC. :func:`read_records` returns every record whose two
checksums hold and a :class:`~entropylaw.readers.damage.Region` for each stretch that
does not; :func:`iter_records` does the same reading a file a few megabytes at a time (an
event file of gigabytes, mostly histograms and images, is never held whole): a record whose data fails its checksum is skipped on its (checked) length; a
length that fails its checksum is skipped by scanning for the next offset where a whole
record checks out; a record cut by the end of the file is a region too. Nothing after
a damaged record is lost.

crc32c comes from :mod:`entropylaw.readers.crc32c` (a package when one is installed, else
numpy, vectorised over records).

>>> data = write_records([b"hello", b"", b"x" * 300])
>>> records, regions = read_records(data)
>>> [len(r) for _, r in records], regions
([5, 0, 300], [])
>>> bad = bytearray(data); bad[12] ^= 1            # flip a bit of the first record's data
>>> records, regions = read_records(bytes(bad))
>>> [len(r) for _, r in records], [(g.reason, g.position) for g in regions]
([0, 300], [('bad data checksum', 0)])
>>> records, regions = read_records(data[:-7])      # cut inside the last record
>>> [len(r) for _, r in records], regions[0].reason
([5, 0], 'truncated record at end of file')
"""

from __future__ import annotations

import io
import struct
from typing import BinaryIO, Iterator

import numpy as np

from entropylaw.readers.crc32c import NATIVE, crc32c, crc32c_many
from entropylaw.readers.damage import Region

HEADER = struct.Struct("<QI")  # length, masked crc of the length
FOOTER = 4
MASK_DELTA = 0xA282EAD8
BAD_LENGTH_CRC = "bad length checksum"
BAD_DATA_CRC = "bad data checksum"
TRUNCATED = "truncated record at end of file"
CHUNK = 1 << 22  # bytes read at a time
SCAN = 1 << 16  # offsets looked at together when searching for the next intact record

__all__ = ["crc32c", "iter_records", "masked_crc32c", "read_records", "write_records"]


def masked_crc32c(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + MASK_DELTA) & 0xFFFFFFFF


def _unmask(masked: np.ndarray) -> np.ndarray:
    rot = (masked.astype(np.uint64) - MASK_DELTA) & 0xFFFFFFFF
    return (((rot << 15) | (rot >> 17)) & 0xFFFFFFFF).astype(np.uint32)


def _u32(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The little-endian uint32 at each offset ``at`` of ``buf``."""
    b = buf[(at[:, None] + np.arange(4)).ravel()].reshape(-1, 4).astype(np.uint32)
    return b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16) | (b[:, 3] << 24)


class _Window:
    """The bytes of a stream from offset ``base`` on, read ``CHUNK`` at a time up to ``size``
    (the stream's size when reading began: a file still being written is read as it was)."""

    def __init__(self, stream: BinaryIO, size: int):
        self.stream, self.size = stream, size
        self.data, self.base = b"", 0

    def cover(self, start: int, stop: int) -> bool:
        """Hold the bytes ``[start, stop)``, letting those before ``start`` go when reading more;
        False when the stream ends before ``stop``."""
        end = self.base + len(self.data)
        if end >= stop or end >= self.size:
            return end >= stop
        want = min(self.size, max(stop, start + CHUNK)) - end
        more = self.stream.read(want)
        if len(more) < want:  # shorter than it said it was
            self.size = end + len(more)
        self.data = self.data[start - self.base:] + more
        self.base = start
        return self.base + len(self.data) >= stop


def _frame(data: bytes, start: int) -> tuple[list[tuple[int, int]], int]:
    """Walk headers from ``start`` trusting lengths; (offset, length) of each record that fits
    and the offset where the walk stopped (end of data or a record running past it)."""
    size, out, pos = len(data), [], start
    while pos + HEADER.size <= size:
        length, _ = HEADER.unpack_from(data, pos)
        end = pos + HEADER.size + length + FOOTER
        if end > size:
            break
        out.append((pos, length))
        pos = end
    return out, pos


def _checks(data: bytes, frames: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(length checksum ok, data checksum ok) for each framed record."""
    if not frames:
        return np.zeros(0, bool), np.zeros(0, bool)
    buf = np.frombuffer(data, dtype=np.uint8)
    offsets = np.array([f[0] for f in frames], dtype=np.int64)
    lengths = np.array([f[1] for f in frames], dtype=np.int64)
    head_crc = _u32(buf, offsets + 8)
    foot_crc = _u32(buf, offsets + HEADER.size + lengths)
    if NATIVE:
        head_ok = np.array([masked_crc32c(data[o:o + 8]) == c for o, c in zip(offsets, head_crc)], dtype=bool)
        data_ok = np.array([masked_crc32c(data[o + 12:o + 12 + n]) == c
                            for o, n, c in zip(offsets, lengths, foot_crc)], dtype=bool)
        return head_ok, data_ok
    head_ok = crc32c_many(buf, offsets, np.full(len(offsets), 8)) == _unmask(head_crc)
    data_ok = crc32c_many(buf, offsets + HEADER.size, lengths) == _unmask(foot_crc)
    return head_ok, data_ok


def _whole_record_at(win: _Window, pos: int) -> bool:
    """True when a record with both checksums intact starts at ``pos`` (held by ``win``)."""
    if pos + HEADER.size + FOOTER > win.size:
        return False
    rel = pos - win.base
    length, head = HEADER.unpack_from(win.data, rel)
    end = pos + HEADER.size + length
    if end + FOOTER > win.size or masked_crc32c(win.data[rel:rel + 8]) != head:
        return False
    if not win.cover(pos, end + FOOTER):
        return False
    rel, end = pos - win.base, end - win.base
    return masked_crc32c(win.data[rel + 12:end]) == int.from_bytes(win.data[end:end + FOOTER], "little")


def _resync(win: _Window, pos: int) -> int:
    """The next offset after ``pos`` where a whole intact record starts (the size if none): the
    length checksums of ``SCAN`` offsets at a time first, then the records whose length holds."""
    last = win.size - HEADER.size - FOOTER  # the last offset a record fits at
    at = pos + 1
    while at <= last:
        stop = min(last + 1, at + SCAN)
        win.cover(at, stop + HEADER.size)
        rel = at - win.base
        buf = np.frombuffer(win.data, dtype=np.uint8)
        offsets = np.arange(rel, rel + (stop - at), dtype=np.int64)
        if NATIVE:
            ok = np.array([masked_crc32c(win.data[o:o + 8]) == int.from_bytes(win.data[o + 8:o + 12], "little")
                           for o in offsets], dtype=bool)
        else:
            ok = crc32c_many(buf, offsets, np.full(len(offsets), 8)) == _unmask(_u32(buf, offsets + 8))
        del buf
        for candidate in (np.nonzero(ok)[0] + at).tolist():
            if _whole_record_at(win, candidate):
                return candidate
        at = stop
    return win.size


def iter_records(stream: BinaryIO, regions: list[Region], size: int | None = None) -> Iterator[tuple[int, bytes]]:
    """``(offset, record data)`` of each intact record of ``stream``, read ``CHUNK`` bytes at a
    time; each damaged region is appended to ``regions`` when met. ``size``: the bytes to read
    (the stream's size by default)."""
    if size is None:
        here = stream.tell()
        size = stream.seek(0, io.SEEK_END) - here
        stream.seek(here)
    win = _Window(stream, size)
    pos, n = 0, 0
    while pos < win.size:
        if not win.cover(pos, pos + HEADER.size):  # the file ends within a record's header
            regions.append(Region(pos, TRUNCATED, win.size - pos, n))
            break
        frames, stop = _frame(win.data, pos - win.base)
        head_ok, data_ok = _checks(win.data, frames)
        bad_head = np.nonzero(~head_ok)[0]
        usable = int(bad_head[0]) if len(bad_head) else len(frames)
        base = win.base
        for (offset, length), ok in zip(frames[:usable], data_ok[:usable]):
            payload = win.data[offset + HEADER.size:offset + HEADER.size + length]
            if ok:
                yield base + offset, payload
                n += 1
            else:
                regions.append(Region(base + offset, BAD_DATA_CRC, HEADER.size + length + FOOTER, n, payload=payload))
        if usable < len(frames):  # a length that fails its checksum: framing is lost here
            bad = base + frames[usable][0]
            pos = _resync(win, bad)
            regions.append(Region(bad, BAD_LENGTH_CRC, pos - bad, n))
            continue
        pos = base + stop
        if pos >= win.size:
            break
        if not win.cover(pos, pos + HEADER.size):  # the next record's header runs past the end
            regions.append(Region(pos, TRUNCATED, win.size - pos, n))
            break
        rel = pos - win.base
        length, head = HEADER.unpack_from(win.data, rel)
        if masked_crc32c(win.data[rel:rel + 8]) != head:
            nxt = _resync(win, pos)
            regions.append(Region(pos, BAD_LENGTH_CRC, nxt - pos, n))
            pos = nxt
            continue
        if win.cover(pos, pos + HEADER.size + length + FOOTER):
            continue  # the record is held whole now: framed at the next turn
        regions.append(Region(pos, TRUNCATED, win.size - pos, n, payload=win.data[pos - win.base + HEADER.size:]))
        break


def read_records(data: bytes) -> tuple[list[tuple[int, bytes]], list[Region]]:
    """``([(offset, record data)], [damaged regions])`` for a whole file's bytes."""
    regions: list[Region] = []
    records = list(iter_records(io.BytesIO(data), regions, len(data)))
    return records, regions


def write_records(payloads: list[bytes]) -> bytes:
    """Frame ``payloads`` as TFRecords (for tests and examples)."""
    out = bytearray()
    for payload in payloads:
        head = struct.pack("<Q", len(payload))
        out += head + struct.pack("<I", masked_crc32c(head)) + payload + struct.pack("<I", masked_crc32c(payload))
    return bytes(out)
