"""What a damaged region of a log cost, in rows, when the file itself no longer says.

Binary logs (TensorBoard event files, W&B ``.wandb`` files) are sequences of records
with checksums: a reader skips a damaged record and goes on. The rows the damaged
bytes held are gone, but the intact records around them tell how many there were:
a key logged every ``c`` steps (its *cadence*, the most common step difference between
its rows) that was at step ``s0`` before the damage and at ``s1`` after it lost the
steps ``s0 + c, s0 + 2c, ... < s1``. :func:`rows_lost_in_gaps` counts those, per key,
and gives each damaged region the rows lost across it. A region with no intact record
of a key after it (a cut tail) cannot be counted this way; the reader then counts
what the damaged bytes show, or says the count is unknown.

>>> import numpy as np
>>> # two keys logged every step 1..6; the records of step 4 were damaged
>>> steps = np.array([1, 1, 2, 2, 3, 3, 5, 5, 6, 6])
>>> keys = np.array(["H", "R"] * 5)
>>> positions = np.array([0, 1, 2, 3, 4, 5, 8, 9, 10, 11])  # record index of each row
>>> rows_lost_in_gaps(steps, keys, positions, [6])
[2]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from entropylaw.terminal import count

UNKNOWN = "rows unknown"


@dataclass
class Region:
    """One damaged stretch of a file.

    ``position`` is the number of intact records read before it; ``payload`` the damaged
    record's bytes when its extent is known (for the reader to look into); ``seen`` the
    rows those bytes still show (a record failing its checksum may still parse), None
    when they show nothing.
    """

    offset: int
    reason: str
    bytes_lost: int
    position: int
    payload: bytes | None = None
    seen: int | None = None
    estimate: int | None = None  # rows of the nearest intact record, used when nothing else tells


def cadence(steps: np.ndarray) -> int:
    """The most common positive step difference (1 when there is none).

    >>> cadence(np.array([0, 10, 20, 30, 35]))
    10
    """
    diffs = np.diff(np.asarray(steps, dtype=np.int64))
    diffs = diffs[diffs > 0]
    if not len(diffs):
        return 1
    values, counts = np.unique(diffs, return_counts=True)
    return int(values[np.argmax(counts)])


def rows_lost_in_gaps(steps, keys, positions, cuts) -> list[int]:
    """Rows missing across each cut (a damaged region after ``cut`` intact records).

    ``steps``, ``keys``, ``positions`` describe the rows read, in file order (``positions``:
    the index of the intact record each row came from, non-decreasing). A key whose
    consecutive rows straddle a cut lost the steps of its cadence strictly between them;
    a pair straddling several cuts is charged to the first. A step counter that goes back
    across a cut (a resumed run) is charged nothing.
    """
    cuts = np.asarray(sorted(cuts), dtype=np.int64)
    lost = np.zeros(len(cuts), dtype=np.int64)
    if not len(cuts) or not len(steps):
        return lost.tolist()
    frame = pd.DataFrame({"step": np.asarray(steps, dtype=np.int64), "pos": np.asarray(positions, dtype=np.int64),
                          "key": np.asarray(keys, dtype=object)})
    for _key, rows in frame.groupby("key", sort=False):
        s, p = rows["step"].to_numpy(), rows["pos"].to_numpy()
        if len(s) < 2:
            continue
        first = np.searchsorted(cuts, p[:-1], side="right")  # first cut after each row
        inside = first < len(cuts)
        straddles = np.zeros(len(first), dtype=bool)
        straddles[inside] = cuts[first[inside]] <= p[1:][inside]
        if not straddles.any():
            continue
        c = cadence(s)
        gap = s[1:] - s[:-1]
        missing = np.where(gap > 0, (gap - 1) // c, 0)
        np.add.at(lost, first[straddles], missing[straddles])
    return lost.tolist()


def nearest_record_rows(positions, position: int) -> int | None:
    """Rows of the intact record nearest a region at ``position``: the last one before it,
    else the first after it; None when no record holds rows.

    >>> nearest_record_rows([0, 0, 1, 1, 1, 4], 3), nearest_record_rows([5, 5], 0), nearest_record_rows([], 2)
    (3, 2, None)
    """
    positions = np.asarray(positions, dtype=np.int64)
    if not len(positions):
        return None
    i = np.searchsorted(positions, position, side="left")
    record = positions[i - 1] if i > 0 else positions[0]
    return int(np.count_nonzero(positions == record))


def charge(report, regions: list[Region], gap_rows: list[int], what: str) -> None:
    """Count each region's rows as read and dropped in ``report``, with one note.

    A region costs the larger of its gap count and the rows its bytes still show; when
    neither says anything, the rows of the nearest intact record (said so in the reason),
    else one row, with the reason saying the count is unknown.
    """
    if not regions:
        return
    unknown = 0
    for region, gap in zip(regions, gap_rows):
        n = max(gap, region.seen or 0)
        reason = f"damaged {what}: {region.reason}"
        if n == 0 and region.seen is None and region.estimate:
            n, reason = region.estimate, f"{reason} (rows estimated from the nearest record)"
        elif n == 0 and region.seen is None:
            n, reason = 1, f"{reason} ({UNKNOWN})"
            unknown += 1
        if n:
            report.read(n)
            report.drop(reason, n)
    where = ", ".join(f"byte {r.offset} ({r.reason})" for r in regions[:5])
    more = f" and {len(regions) - 5} more" if len(regions) > 5 else ""
    counted = "" if not unknown else f"; {count(unknown, 'region')} of unknown size counted as one row each"
    report.note(f"damaged file: {sum(r.bytes_lost for r in regions)} bytes unreadable in "
                f"{count(len(regions), 'region')} "
                f"at {where}{more}; every intact record before and after was read; rows lost counted from the "
                f"steps missing around each region{counted}")
