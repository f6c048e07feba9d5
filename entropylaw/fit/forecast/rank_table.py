"""``entropylaw rank``'s table: one line a run, at any width.

A run's name is what sets it apart in its id where the whole id does not fit, else cut (each
still told from the others: :func:`~entropylaw.table.labels.handles`).
Where even a name of 12 characters leaves the numbers no room (a narrow terminal), or the names
cut cannot be told apart, each run's name is on a line of its own, whole, and its numbers under
it: a table wrapped at its spaces loses its columns. Where the rows' notes do not fit beside their
numbers, a tag that most of many runs carry (every run of a sweep in take-off) leaves the rows and
is said once under the table with the rows that carry it (``take-off (rows 1-12, 14-27): ...``):
else every row takes two lines, and a sweep no longer fits a screen.

>>> rows_said([0, 1, 2, 4, 6, 7], 9)
'rows 1-3, 5, 7-8'
>>> rows_said([0, 1, 2], 3)
'every run'
"""

from __future__ import annotations

from collections import Counter

from entropylaw.table.labels import HANDLES_SAID, handles
from entropylaw.terminal import width as text_width

LIFT_FROM = 4  # rows from which a tag most of them carry is said once, not on each row
KEPT = "no*"  # the prune column of a row below the prune cut that is kept: why, under the table (.rank_keep)


def rows_said(indices, n: int) -> str:
    """The rows ``indices`` (from 0) of a table of ``n``, as the table numbers them (from 1)."""
    idx = sorted(indices)
    if len(idx) == n:
        return "every run"
    spans, start = [], None
    for k, i in enumerate(idx):
        start = i if start is None else start
        if k + 1 == len(idx) or idx[k + 1] != i + 1:
            spans.append(f"{start + 1}" if start == i else f"{start + 1}-{i + 1}")
            start = None
    return ("row " if len(idx) == 1 else "rows ") + ", ".join(spans)


def _tags(row) -> list[str]:
    return [t for t in (row.get("note") or "").split("; ") if t]


def _expected(row) -> str:
    """The row's expected final score; a run with no forecast, a dash as wide, its interval's brackets
    kept in line: its expected score is one the window cannot bound, and shown beside the ranked runs'
    it read as a final score to compare (the highest of a sweep, taken for the best run)."""
    said = f"{row['expected']:.3f}"
    return "-".rjust(len(said)) if row.get("no_forecast") else said


def _prune_cell(row) -> str:
    return "prune" if row.get("prune") else KEPT if row.get("keep_reason") and row.get("keep_mark") else ""


def rows_table(rows, pct: str) -> tuple[list[str], dict]:
    """The header and one row per run (module docstring); and the tags lifted off the rows:
    tag -> the rows that carry it, in words (:func:`rows_said`), for the lines under the table."""
    fins = ["-" if r.get("expected") is None else f"{_expected(r)} [{r['lo']:.3f}, {r['hi']:.3f}]" for r in rows]
    backtest = any(r.get("observed") is not None for r in rows)
    fw = max([22] + [len(f) for f in fins])  # a score below -1 is wider than the column's usual 22
    longest = max((len(r["run_id"]) for r in rows), default=12)
    # runs ranked at different steps (a backtest of runs of different lengths): each run's own, in a column
    ends = [None if r.get("to_step") is None else f"{r['to_step']:g}" for r in rows]
    ew = max(len("end"), *map(len, filter(None, ends))) if len({e for e, r in zip(ends, rows) if e and
                                                                  r.get("p_best") is not None}) > 1 else 0
    room = text_width() - (4 + fw + 2 + 8 + 8 + 7 + (10 if backtest else 0) + (ew + 2 if ew else 0))
    notes = ["; ".join(_tags(r)) for r in rows]
    lifted = {}
    if len(rows) >= LIFT_FROM and room - max(map(len, notes), default=0) - 2 < min(longest, 40):
        counts = Counter(t for r in rows for t in _tags(r))
        lifted = {t: rows_said([i for i, r in enumerate(rows) if t in _tags(r)], len(rows))
                  for t, k in counts.items() if 2 * k > len(rows)}
        notes = ["; ".join(t for t in _tags(r) if t not in lifted) for r in rows]
    narrow = room < 12  # not even a name of 12 characters beside the numbers
    widest = max(map(len, notes), default=0)
    if widest and room - widest - 2 >= min(longest, 40):
        room -= widest + 2  # the notes fit beside names of up to 40 characters; else they go under the rows
    name = max(12, min(longest, room))
    names, labelled = handles([r["run_id"] for r in rows], name)  # each run still told from the others
    name = max(len("run"), *map(len, names)) if labelled else name  # labels: the column as wide as they are
    stacked = narrow or len(set(names)) < len({r["run_id"] for r in rows})  # else whole, on lines of their own
    run = "" if stacked else f"{'run':<{name}}  "
    head = f"{'#':>2}  {run}{'final [' + pct + ']':<{fw}}  {'p_best':>6}  {'p_near':>6}  {'prune':<5}"
    lines = [head + (f"  {'end':>{ew}}" if ew else "") + ("  observed" if backtest else "")]
    for i, (r, fin, note) in enumerate(zip(rows, fins, notes), 1):
        pb = "-" if r.get("p_best") is None else f"{100 * r['p_best']:.0f} %"
        pn = "-" if r.get("p_near") is None else f"{100 * r['p_near']:.0f} %"
        obs = "" if not backtest else "  " + ("-" if r.get("observed") is None else f"{r['observed']:.3f}").rjust(8)
        if stacked:
            lines.append(f"{i:>2}  {r['run_id']}")
        lead = "    " if stacked else f"{i:>2}  {names[i - 1]:<{name}}  "
        end = f"  {ends[i - 1] or '-':>{ew}}" if ew else ""
        line = f"{lead}{fin:<{fw}}  {pb:>6}  {pn:>6}  {_prune_cell(r):<5}{end}{obs}"
        full = (line + ("  " + note if note else "")).rstrip()
        # a note that does not fit beside the numbers goes under them (wrapped, the row's columns stay)
        lines += [full] if len(full) <= text_width() or not note else [line.rstrip(), "    " + note]
    return lines + ([HANDLES_SAID] if labelled and not stacked else []), lifted
