"""A printed log that prints no step at all, each line of numbers one record (``[Epoch 0.60]  loss=0.1234
reward=0.512±0.120  entropy=0.832``: a loop that counts fractional epochs): its lines are read as records 1, 2, 3,
... in the order printed, as :mod:`entropylaw.readers.stepless` numbers a tracker's values logged without a step.

Read so only where the shape is clear: no line prints a step, and at least :data:`MIN_RECORDS` lines print the
same set of at least :data:`MIN_KEYS` keys (a config echo's lines, each its own keys, are no such log). The lines
read are those that print at least :data:`MIN_KEYS` of that set's keys (a line with one more key, an evaluation's,
is a record too); the others stay lines of numbers not read, as in any printed log.

>>> loose = Loose()
>>> loose.add(1, {"lr": 1e-06, "batch": 8.0}, {})
>>> for n in (2, 3, 4):
...     loose.add(n, {"loss": 0.1, "reward": n / 10}, {})
>>> claims({frozenset({"lr", "batch"}): 1, frozenset({"loss", "reward"}): 3}), [n for n, _, _ in loose.records()]
(True, [2, 3, 4])
"""

from __future__ import annotations

from collections import Counter

MIN_RECORDS = 3
MIN_KEYS = 2


def claims(keysets: Counter) -> bool:
    """Whether lines of numbers without a step (``keysets``: how many lines print each set of keys) are a log's
    records: :data:`MIN_RECORDS` lines of one set of :data:`MIN_KEYS` keys or more."""
    return any(len(keys) >= MIN_KEYS and n >= MIN_RECORDS for keys, n in keysets.items())


class Loose:
    """The lines of numbers a printed log prints without a step, held until the whole log is read."""

    def __init__(self):
        self.lines: list[tuple[int, dict, dict]] = []
        self.keysets: Counter = Counter()

    def add(self, line: int, pairs: dict, said: dict) -> None:
        self.lines.append((line, pairs, said))
        self.keysets[frozenset(pairs)] += 1

    def records(self) -> list[tuple[int, dict, dict]]:
        """The lines read as records, in the order printed: those that print enough of the most printed set of
        keys (of :data:`MIN_KEYS` or more); none where :func:`claims` says no."""
        if not claims(self.keysets):
            return []
        common = max((k for k in self.keysets if len(k) >= MIN_KEYS), key=lambda k: (self.keysets[k], len(k)))
        return [got for got in self.lines if len(common.intersection(got[1])) >= MIN_KEYS]
