"""A table's columns read into a run: integer steps (:func:`steps_of`), and each column's numbers
collected with every value it drops counted (:class:`Collector`): a row without a step, a cell that is
no number, a CSV row shorter than its header, a last line cut while being written."""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.readers.common import NEGATIVE_STEP, STEP_LIMIT, STEP_RANGE, RawRun
from entropylaw.readers.csv_fields import CUT_LAST, SHORT, numbers, numbers_said
from entropylaw.readers.resumes import per_micro_step
from entropylaw.readers.tidy import MISSING_STEP, NON_NUMERIC

NO_STEP, FAR_STEP = -2, -3  # steps_of: a row without an integer step, one past int64 (-1: a negative one)
MAX_NOTES = 5
SHORT_ROWS = "short_rows"  # a CSV frame's attrs: its rows with fewer fields than the header (csv_fields)


def steps_of(df: pd.DataFrame, step_col: str) -> np.ndarray:
    """Integer steps; ``NO_STEP`` where missing / not an integer, ``FAR_STEP`` past int64, and -1 where
    negative (no step of a run: dropped, as :func:`~entropylaw.readers.common.finalize` drops it from the
    other readers)."""
    values, present = numbers(df[step_col])
    ok = present & np.isfinite(values) & (np.floor(values) == values)
    far = ok & (np.abs(np.where(ok, values, 0)) >= STEP_LIMIT)  # 1e30: past int64
    ok &= ~far
    steps = np.maximum(np.where(ok, values, 0), -1).astype(np.int64)
    return np.where(ok, steps, np.where(far, FAR_STEP, NO_STEP))


class Collector:
    def __init__(self, raw: RawRun, first_line: int, df: pd.DataFrame | None = None):
        self.raw, self.first_line = raw, first_line
        self.short = None if df is None else df.attrs.get(SHORT_ROWS)
        self.position = {} if df is None else {c: i for i, c in enumerate(df.columns)}
        self.steps, self.keys, self.values, self.lines, self.axes = [], [], [], [], []
        self.bad: list[str] = []

    def column(self, key: str, steps: np.ndarray, column: pd.Series, rows: np.ndarray, axis: str = "") -> None:
        report = self.raw.report
        values, present, pct = numbers_said(column)
        if pct:  # "6.2%": the key a percent, whatever its values
            self.raw.percent.add(key)
        values, present, steps, rows = values[rows], present[rows], steps[rows], np.nonzero(rows)[0]
        report.read(int(present.sum()))
        no_step = present & (steps < 0)
        for reason, which in ((MISSING_STEP, steps == NO_STEP), (STEP_RANGE, steps == FAR_STEP),
                              (NEGATIVE_STEP, steps == -1)):
            report.drop(reason, int((no_step & which).sum()), rows[no_step & which] + self.first_line)
        bad = present & ~no_step & np.isnan(values)
        text = column.to_numpy()[rows]
        spelled_nan = np.array([str(t).strip().lower() in ("nan", "-nan") for t in text[bad]], dtype=bool)
        really_bad = np.nonzero(bad)[0][~spelled_nan] if bad.any() else np.zeros(0, dtype=int)
        report.drop(NON_NUMERIC, len(really_bad))
        for i in really_bad[:MAX_NOTES]:
            self.bad.append(f"{report.line_word} {int(rows[i]) + self.first_line}: key {key!r} has non-numeric value "
                            f"{str(text[i])!r:.40}")
        use = present & ~no_step
        use[really_bad] = False
        self._short(column.name, rows, use)
        self.steps.append(steps[use])
        self.values.append(values[use])
        self.keys.append(np.full(int(use.sum()), key, dtype=object))
        self.lines.append(rows[use] + self.first_line)
        self.axes.append(np.full(int(use.sum()), axis, dtype=object))

    def _short(self, name, rows: np.ndarray, use: np.ndarray) -> None:
        """A CSV row with fewer fields than the header: the fields it lacks are values lost
        (``short row``); a last line so cut, without its newline, loses every value it holds
        too: its last number may be cut (``cut-off last line``)."""
        if self.short is None or name not in self.position:
            return
        report, short = self.raw.report, self.short
        missing = short.fields[rows] <= self.position[name]
        lines = short.lines[rows]
        cut = (rows == len(short.fields) - 1) if short.cut else np.zeros(len(rows), dtype=bool)
        report.read(int(missing.sum()))
        report.drop(SHORT, int((missing & ~cut).sum()), lines[missing & ~cut])
        lost = cut & (missing | use)
        report.drop(CUT_LAST, int(lost.sum()), lines[lost])
        use[cut] = False

    def done(self) -> RawRun:
        raw = self.raw
        if self.bad:
            for message in self.bad[:MAX_NOTES]:
                raw.report.note(message + " (dropped)")
        cat = (lambda parts, dt: np.concatenate(parts) if parts else np.zeros(0, dtype=dt))
        raw.steps, raw.values = cat(self.steps, np.int64), cat(self.values, np.float64)
        raw.keys, raw.lines = cat(self.keys, object), cat(self.lines, np.int64)
        order = np.lexsort((raw.lines,))  # source order: row by row
        raw.steps, raw.values, raw.keys, raw.lines = (a[order] for a in (raw.steps, raw.values, raw.keys, raw.lines))
        axes = cat(self.axes, object)[order]
        if len(set(axes)) > 1:  # metrics on their own step columns: each restarts on its own
            raw.axes, raw.repeats = axes, "mean"
        elif per_micro_step(raw.steps, raw.keys):
            raw.repeats = "mean"
        return raw
