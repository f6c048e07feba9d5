"""The rows a JSON-lines reader keeps (:mod:`entropylaw.readers.verl_jsonl`), in typed arrays.

Each value kept is 8 bytes of ``values`` and a 4-byte code into ``names`` (its key); each line
kept once, its step, line number, count of values and step axis. :meth:`Rows.into` builds the
run's columns once: steps and line numbers repeated over each line's values, keys a
``Categorical`` of the codes (no string a row), axes one shared string an axis.

>>> rows = Rows()
>>> rows.values.extend([0.5, 0.7, 0.4]); rows.codes.extend([rows.code_of("a"), rows.code_of("b"), 0])
>>> rows.steps.extend([1, 2]); rows.lines.extend([1, 3]); rows.counts.extend([2, 1]); rows.on.extend([0, 0])
>>> rows.axes[("", "step")] = 0
>>> raw = RawRun("r", "x.jsonl")
>>> rows.into(raw, with_axes=True)
>>> raw.rows(), raw.lines.tolist(), raw.axes.tolist()
([(1, 'a', 0.5), (1, 'b', 0.7), (2, 'a', 0.4)], [1, 1, 3], ['@step', '@step', '@step'])
"""

from __future__ import annotations

from array import array

import numpy as np
import pandas as pd

from entropylaw.readers.codes import Codes
from entropylaw.readers.common import RawRun

BIG = 2 ** 63  # steps kept as int64: a step past it is kept in a list (RawRun.frame drops and counts it)


class Rows(Codes):
    """The rows kept, as read: each value in a typed array with its key as a code into ``names``
    (first kept first); each line's step, number, axis (a code into ``axes``) and count of values
    once a line. :meth:`into` builds the run's arrays once."""

    def __init__(self):
        super().__init__()
        self.values, self.codes = array("d"), array("i")
        self.steps, self.lines, self.counts, self.on = array("q"), array("q"), array("q"), array("i")
        self.axes: dict[tuple[str, str], int] = {}

    def distinct_steps(self) -> int:
        return len(set(self.steps)) if isinstance(self.steps, list) else len(np.unique(_numbers(self.steps, np.int64)))

    def into(self, raw: RawRun, with_axes: bool) -> None:
        counts = _numbers(self.counts, np.int64)
        if isinstance(self.steps, list):
            raw.steps = [s for s, n in zip(self.steps, self.counts) for _ in range(n)]
        else:
            raw.steps = np.repeat(_numbers(self.steps, np.int64), counts)
        raw.lines = np.repeat(_numbers(self.lines, np.int64), counts)
        raw.values = _numbers(self.values, np.float64)
        raw.keys = pd.Categorical.from_codes(_numbers(self.codes, np.int32),
                                             categories=pd.Index(self.names, dtype=object).astype(str))
        if with_axes:  # each row's "<type>@<step key>", one string an axis
            names = np.empty(len(self.axes), dtype=object)
            names[:] = [f"{kind}@{field}" for kind, field in self.axes]
            raw.axes = names[np.repeat(_numbers(self.on, np.int32), counts)]
        self.values = self.codes = self.steps = self.lines = self.counts = self.on = None


def _numbers(data: array, dtype) -> np.ndarray:
    return np.frombuffer(data, dtype=dtype) if len(data) else np.zeros(0, dtype=dtype)
