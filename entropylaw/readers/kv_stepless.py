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
>>> claims({frozenset({"gpu_util", "mem_gb"}): 30})  # a GPU monitor's lines: no loop's records
False
"""

from __future__ import annotations

import re
from collections import Counter

from entropylaw.readers.key_names import is_candidate

MIN_RECORDS = 3
MIN_KEYS = 2


# a key a training loop prints: a set of keys with none is another tool's periodic line (vLLM's 'Avg generation
# throughput: 1234.5 tokens/s, Running: 64 reqs', a GPU monitor's 'gpu_util=87.5 mem_gb=70.1'), no run's records
_TRAINING = re.compile(r"loss|reward|entropy|score|acc|kl(?![a-z])|return|pass@?\d", re.IGNORECASE)


def a_loops_key(key: str) -> bool:
    """Whether ``key`` names what a training loop prints (a loss, a reward, an entropy, a score, an accuracy)."""
    return bool(_TRAINING.search(key)) or is_candidate(key)


def _records_of_a_run(keys: frozenset) -> bool:
    return len(keys) >= MIN_KEYS and any(map(a_loops_key, keys))


def claims(keysets: Counter) -> bool:
    """Whether lines of numbers without a step (``keysets``: how many lines print each set of keys) are a log's
    records: :data:`MIN_RECORDS` lines of one set of :data:`MIN_KEYS` keys or more, one of them a training loop's
    (a loss, a reward, an entropy, a score, an accuracy)."""
    return any(n >= MIN_RECORDS and _records_of_a_run(keys) for keys, n in keysets.items())


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
        common = max((k for k in self.keysets if _records_of_a_run(k)), key=lambda k: (self.keysets[k], len(k)))
        return [got for got in self.lines if len(common.intersection(got[1])) >= MIN_KEYS]
