"""TFRecord framing (TensorBoard event files), read defensively with both checksums checked.

A file is a sequence of records, each::

    uint64 length (little-endian) | uint32 masked_crc32c(length bytes) | data[length] | uint32 masked_crc32c(data)

where ``masked_crc32c(x) = rotate_right(crc32c(x), 15) + 0xA282EAD8`` (mod 2**32) and
crc32c is the Castagnoli CRC. :func:`read_records` returns every record whose two
checksums hold and a :class:`~entropylaw.readers.damage.Region` for each stretch that
does not: a record whose data fails its checksum is skipped on its (checked) length; a
length that fails its checksum is skipped by scanning for the next offset where a whole
record checks out; a record cut by the end of the file is a region too. Nothing after
a damaged record is lost.

crc32c comes from the ``crc32c`` or ``google-crc32c`` package when one is installed;
otherwise a table implementation, vectorised over records with numpy (event files hold
many small records).

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

import struct

import numpy as np

from entropylaw.readers.damage import Region

HEADER = struct.Struct("<QI")  # length, masked crc of the length
FOOTER = 4
MASK_DELTA = 0xA282EAD8
BAD_LENGTH_CRC = "bad length checksum"
BAD_DATA_CRC = "bad data checksum"
TRUNCATED = "truncated record at end of file"
FEW = 8  # below this many slices still running, finish them byte by byte


def _table() -> np.ndarray:
    poly = 0x82F63B78  # Castagnoli, reflected
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ poly, table >> 1).astype(np.uint32)
    return table


_TABLE = _table()
_TABLE_LIST = [int(v) for v in _TABLE]


def _crc_update(crc: int, data) -> int:
    table = _TABLE_LIST
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc


def _crc32c_python(data: bytes) -> int:
    return _crc_update(0xFFFFFFFF, data) ^ 0xFFFFFFFF


def _native():
    try:
        import crc32c as c  # the `crc32c` package

        return lambda data: c.crc32c(data)
    except ImportError:
        pass
    try:
        import google_crc32c as g

        return lambda data: g.value(bytes(data))
    except ImportError:
        return None


_NATIVE = _native()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of ``data``.

    >>> hex(crc32c(b"123456789"))  # the standard check value
    '0xe3069283'
    """
    return _NATIVE(data) if _NATIVE else _crc32c_python(data)


def masked_crc32c(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + MASK_DELTA) & 0xFFFFFFFF


def _unmask(masked: np.ndarray) -> np.ndarray:
    rot = (masked.astype(np.uint64) - MASK_DELTA) & 0xFFFFFFFF
    return (((rot << 15) | (rot >> 17)) & 0xFFFFFFFF).astype(np.uint32)


def _crc32c_many(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """crc32c of ``buf[start:start+length]`` for many slices at once: one numpy step per byte
    position over the slices still that long; the last few long ones finish byte by byte."""
    order = np.argsort(-lengths, kind="stable")
    s, n = starts[order], lengths[order]
    crc = np.full(len(s), 0xFFFFFFFF, dtype=np.uint32)
    longest = int(n[0]) if len(n) else 0
    active = len(n)
    for i in range(longest):
        while active and n[active - 1] <= i:
            active -= 1
        if active <= FEW:  # numpy's per-step cost no longer pays: finish these in Python
            raw = buf.tobytes() if active else b""
            for j in range(active):
                crc[j] = _crc_update(int(crc[j]), raw[int(s[j]) + i:int(s[j] + n[j])])
            break
        byte = buf[s[:active] + i]
        crc[:active] = _TABLE[(crc[:active] ^ byte) & 0xFF] ^ (crc[:active] >> 8)
    out = np.empty(len(s), dtype=np.uint32)
    out[order] = crc ^ np.uint32(0xFFFFFFFF)
    return out


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
    head_crc = np.array([HEADER.unpack_from(data, int(o))[1] for o in offsets], dtype=np.uint32)
    foot_at = offsets + HEADER.size + lengths
    foot_crc = buf[(foot_at[:, None] + np.arange(4)).ravel()].reshape(-1, 4).astype(np.uint32)
    foot_crc = foot_crc[:, 0] | (foot_crc[:, 1] << 8) | (foot_crc[:, 2] << 16) | (foot_crc[:, 3] << 24)
    if _NATIVE:
        head_ok = np.array([masked_crc32c(data[o:o + 8]) == c for o, c in zip(offsets, head_crc)], dtype=bool)
        data_ok = np.array([masked_crc32c(data[o + 12:o + 12 + n]) == c
                            for o, n, c in zip(offsets, lengths, foot_crc)], dtype=bool)
        return head_ok, data_ok
    head_ok = _crc32c_many(buf, offsets, np.full(len(offsets), 8)) == _unmask(head_crc)
    data_ok = _crc32c_many(buf, offsets + HEADER.size, lengths) == _unmask(foot_crc)
    return head_ok, data_ok


def _whole_record_at(data: bytes, pos: int) -> bool:
    """True when a record with both checksums intact starts at ``pos``."""
    if pos + HEADER.size + FOOTER > len(data):
        return False
    length, head = HEADER.unpack_from(data, pos)
    end = pos + HEADER.size + length
    if end + FOOTER > len(data) or masked_crc32c(data[pos:pos + 8]) != head:
        return False
    return masked_crc32c(data[pos + 12:end]) == int.from_bytes(data[end:end + FOOTER], "little")


def _resync(data: bytes, pos: int) -> int:
    """The next offset after ``pos`` where a whole intact record starts (len(data) if none)."""
    for candidate in range(pos + 1, len(data) - HEADER.size - FOOTER + 1):
        if _whole_record_at(data, candidate):
            return candidate
    return len(data)


def read_records(data: bytes) -> tuple[list[tuple[int, bytes]], list[Region]]:
    """``([(offset, record data)], [damaged regions])`` for a whole file's bytes."""
    records: list[tuple[int, bytes]] = []
    regions: list[Region] = []
    pos = 0
    while pos < len(data):
        frames, stop = _frame(data, pos)
        head_ok, data_ok = _checks(data, frames)
        bad_head = np.nonzero(~head_ok)[0]
        usable = int(bad_head[0]) if len(bad_head) else len(frames)
        for (offset, length), ok in zip(frames[:usable], data_ok[:usable]):
            end = offset + HEADER.size + length + FOOTER
            if ok:
                records.append((offset, data[offset + HEADER.size:offset + HEADER.size + length]))
            else:
                regions.append(Region(offset, BAD_DATA_CRC, end - offset, len(records),
                                      payload=data[offset + HEADER.size:offset + HEADER.size + length]))
        if usable < len(frames):  # a length that fails its checksum: framing is lost here
            bad = frames[usable][0]
            nxt = _resync(data, bad)
            regions.append(Region(bad, BAD_LENGTH_CRC, nxt - bad, len(records)))
            pos = nxt
            continue
        if stop < len(data):  # the file ends inside a record (or garbage too short to be one)
            if stop + HEADER.size <= len(data) and masked_crc32c(data[stop:stop + 8]) != \
                    HEADER.unpack_from(data, stop)[1]:
                nxt = _resync(data, stop)
                regions.append(Region(stop, BAD_LENGTH_CRC, nxt - stop, len(records)))
                pos = nxt
                continue
            regions.append(Region(stop, TRUNCATED, len(data) - stop, len(records),
                                  payload=data[stop + HEADER.size:] if stop + HEADER.size <= len(data) else None))
        break
    return records, regions


def write_records(payloads: list[bytes]) -> bytes:
    """Frame ``payloads`` as TFRecords (for tests and examples)."""
    out = bytearray()
    for payload in payloads:
        head = struct.pack("<Q", len(payload))
        out += head + struct.pack("<I", masked_crc32c(head)) + payload + struct.pack("<I", masked_crc32c(payload))
    return bytes(out)
