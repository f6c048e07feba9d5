"""CRC-32C (Castagnoli), the checksum of TFRecord framing (TensorBoard event files).

From the ``crc32c`` or ``google-crc32c`` package when one is installed; otherwise a table
implementation vectorised with numpy: :func:`crc32c_many` computes many short slices of one
buffer at once (one numpy step per byte position, event files hold many small records), and
a long slice (an image, a histogram) is cut into pieces whose CRCs are computed side by side
and joined two by two (a CRC is linear: shifting a CRC past ``n`` zero bytes is a fixed
32x32 bit matrix, applied with four byte tables), so a record of megabytes costs a few
dozen numpy steps instead of one Python step per byte.

>>> import numpy as np
>>> data = bytes(range(256)) * 40
>>> hex(crc32c(b"123456789"))  # the standard check value
'0xe3069283'
>>> buf = np.frombuffer(data, dtype=np.uint8)
>>> [int(c) == _crc32c_python(data[s:s + n])
...  for s, n in [(0, 10240), (3, 5000), (7, 9)] for c in crc32c_many(buf, np.array([s]), np.array([n]))]
[True, True, True]
"""

from __future__ import annotations

import numpy as np

FEW = 8  # below this many slices still running, finish them byte by byte
LONG = 1024  # a slice at least this long is computed piece by piece (:func:`_crc32c_long`)
PIECE = 64  # bytes per piece of a long slice


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


NATIVE = _native()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of ``data``."""
    return NATIVE(data) if NATIVE else _crc32c_python(data)


def _byte_tables(columns: np.ndarray) -> np.ndarray:
    """Four 256-entry tables applying the bit matrix whose column ``j`` is ``columns[j]``."""
    v = np.arange(256, dtype=np.uint32)
    tables = np.zeros((4, 256), dtype=np.uint32)
    for b in range(4):
        for i in range(8):
            tables[b] ^= np.where((v >> i) & 1, columns[8 * b + i], 0).astype(np.uint32)
    return tables


def _apply(tables: np.ndarray, x: np.ndarray) -> np.ndarray:
    return tables[0][x & 0xFF] ^ tables[1][(x >> 8) & 0xFF] ^ tables[2][(x >> 16) & 0xFF] ^ tables[3][x >> 24]


_SHIFTS: list[np.ndarray] = []  # [j]: the byte tables shifting a CRC past PIECE * 2**j zero bytes


def _shift_tables(level: int) -> np.ndarray:
    while len(_SHIFTS) <= level:
        if not _SHIFTS:  # past PIECE zero bytes, step by step from the unit vectors
            columns = np.left_shift(np.uint32(1), np.arange(32, dtype=np.uint32))
            for _ in range(PIECE):
                columns = _TABLE[columns & 0xFF] ^ (columns >> 8)
        else:  # twice as far: the last shift applied to its own columns
            last = _SHIFTS[-1]
            columns = _apply(last, _apply(last, np.left_shift(np.uint32(1), np.arange(32, dtype=np.uint32))))
        _SHIFTS.append(_byte_tables(columns))
    return _SHIFTS[level]


def _crc32c_long(seg: np.ndarray) -> int:
    """crc32c of a long byte array (at least 4 bytes): the initial all-ones register is the same
    as the first 4 bytes inverted with a zero register; leading zero bytes change nothing with a
    zero register, so the bytes are padded in front to a power-of-two number of pieces, each
    piece's CRC computed side by side, then neighbours joined (the left one shifted past the right
    one's bytes) until one is left."""
    n = len(seg)
    pieces = 1 << max(0, (-(-n // PIECE) - 1).bit_length())
    padded = np.zeros(pieces * PIECE, dtype=np.uint8)
    first = len(padded) - n
    padded[first:] = seg
    padded[first:first + 4] ^= 0xFF
    rows = padded.reshape(pieces, PIECE)
    crc = np.zeros(pieces, dtype=np.uint32)
    for i in range(PIECE):
        crc = _TABLE[(crc ^ rows[:, i]) & 0xFF] ^ (crc >> 8)
    level = 0
    while len(crc) > 1:
        crc = _apply(_shift_tables(level), crc[0::2]) ^ crc[1::2]
        level += 1
    return int(crc[0]) ^ 0xFFFFFFFF


def crc32c_many(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """crc32c of ``buf[start:start+length]`` for many slices at once: the long ones piece by piece;
    the others with one numpy step per byte position over the slices still that long, the last few
    long ones finished byte by byte."""
    starts, lengths = np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
    out = np.empty(len(starts), dtype=np.uint32)
    long = np.nonzero(lengths >= LONG)[0]
    for j in long:
        out[j] = _crc32c_long(buf[starts[j]:starts[j] + lengths[j]])
    short = np.nonzero(lengths < LONG)[0]
    order = short[np.argsort(-lengths[short], kind="stable")]
    s, n = starts[order], lengths[order]
    crc = np.full(len(s), 0xFFFFFFFF, dtype=np.uint32)
    longest = int(n[0]) if len(n) else 0
    active = len(n)
    for i in range(longest):
        while active and n[active - 1] <= i:
            active -= 1
        if active <= FEW:  # numpy's per-step cost no longer pays: finish these in Python
            for j in range(active):
                crc[j] = _crc_update(int(crc[j]), buf[int(s[j]) + i:int(s[j] + n[j])].tobytes())
            break
        byte = buf[s[:active] + i]
        crc[:active] = _TABLE[(crc[:active] ^ byte) & 0xFF] ^ (crc[:active] >> 8)
    out[order] = crc ^ np.uint32(0xFFFFFFFF)
    return out
