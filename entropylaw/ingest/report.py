"""Row accounting for every reader: rows read = rows kept + rows dropped (by reason).

>>> r = IngestReport("run.log")
>>> r.read(5); r.drop("non-finite value", 2); r.keep(3)
>>> r.balanced()
True
>>> r.line()
'run.log: read 5 rows, kept 3, dropped 2 (non-finite value: 2)'
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class IngestReport:
    """What one reader did to one source: counts, drop reasons, notes for the user.

    A *row* is one (step, key, value) number as the source stored it.
    """

    source: str
    rows_read: int = 0
    rows_kept: int = 0
    dropped: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def read(self, n: int = 1) -> None:
        self.rows_read += n

    def keep(self, n: int = 1) -> None:
        self.rows_kept += n

    def drop(self, reason: str, n: int = 1) -> None:
        if n:
            self.dropped[reason] += n

    def note(self, message: str) -> None:
        self.notes.append(message)

    @property
    def rows_dropped(self) -> int:
        return sum(self.dropped.values())

    def balanced(self) -> bool:
        return self.rows_read == self.rows_kept + self.rows_dropped

    def line(self) -> str:
        text = f"{self.source}: read {self.rows_read} rows, kept {self.rows_kept}, dropped {self.rows_dropped}"
        if self.dropped:
            reasons = ", ".join(f"{k}: {v}" for k, v in sorted(self.dropped.items()))
            text += f" ({reasons})"
        return text

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "rows_read": self.rows_read,
            "rows_kept": self.rows_kept,
            "rows_dropped": self.rows_dropped,
            "dropped": dict(self.dropped),
            "notes": list(self.notes),
        }
