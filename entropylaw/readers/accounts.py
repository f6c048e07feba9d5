"""Row accounting for every reader: rows read = rows kept + rows dropped (by reason).

>>> r = IngestReport("run.log")
>>> r.read(5); r.drop("non-finite value", 2); r.keep(3)
>>> r.balanced()
True
>>> r.line()
'run.log: read 5 values, kept 3, dropped 2 (non-finite value: 2)'
>>> bad = IngestReport("x.log"); bad.read(3); bad.drop("duplicate", 5)
>>> bad.holds()
False
>>> cut = IngestReport("run.wandb"); cut.note("damaged file: 61 bytes unreadable in 1 region (truncated)")
>>> cut.drop_line()  # no row lost, but the file is damaged: still said
'run.wandb: damaged file: 61 bytes unreadable in 1 region (truncated)'
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

from entropylaw.terminal import count

ACCOUNTS = "row_accounts"  # the table's attrs key holding every source's account (as dicts)
# drop reasons that lose no number: rows folded into their step's mean (readers.resumes.AVERAGED)
MERGED = "averaged"
MAX_LINES_SAID = 3
SOURCES_JOINED = ", "  # a run read from several files names them all: a resumed run's segments, a W&B run's processes
# notes every command says, with no row lost: the log's end is an error (readers.log_end), two files not joined
ENDS_IN_ERROR = "the log ends in an error"
TURNS_NAN = "the run's values turn"  # a run whose values turn NaN to its last step (readers.log_end): it diverged
NOT_JOINED, JOINED_UNSURE = "not joined with", "joined with"  # a run folder's two files: of two runs, or unsure
NO_STEP = "the log prints no step"  # a printed log read as records 1 to N (readers.kv_stepless): no steps to join at
SAID = ("damaged file", ENDS_IN_ERROR, TURNS_NAN, NOT_JOINED, JOINED_UNSURE)


def source_files(source) -> list[str]:
    """The files a run's ``source`` names: itself, or the files it joins (:data:`SOURCES_JOINED`:
    :mod:`~entropylaw.readers.merge`'s segments of a resumed run, :mod:`~entropylaw.readers.wandb_processes`'
    processes of one W&B run); a path that exists is one file, even with ", " in its name.

    >>> source_files("a/run-1.wandb, b/run-1.wandb"), source_files("")
    (['a/run-1.wandb', 'b/run-1.wandb'], [])
    """
    text = "" if source is None else str(source)
    if not text or os.path.exists(text):
        return [text] if text else []
    return [part for part in text.split(SOURCES_JOINED) if part]


class Accounts(tuple):
    """The row accounts of a table's sources (:meth:`IngestReport.to_dict`), as a table keeps
    them in ``df.attrs[ACCOUNTS]``: written once, when the table is read, and only read after.

    pandas deep-copies a frame's ``attrs`` in every operation that makes a new frame (3,500
    copies of the accounts in one ``forecast`` of data/real, half of its time); what is never
    changed needs no copy, so a deep copy is the same object.

    >>> import copy
    >>> a = Accounts([{"source": "run.log"}])
    >>> copy.deepcopy(a) is a, a[0]["source"]
    (True, 'run.log')
    """

    __slots__ = ()

    def __deepcopy__(self, memo):
        return self


@dataclass
class IngestReport:
    """What one reader did to one source: counts, drop reasons, notes for the user.

    A *row* is one (step, key, value) number as the source stored it: said as a *value* to the
    user, who takes a row for a line of a CSV (one CSV row of 3 metrics is 3 of these).
    """

    source: str
    rows_read: int = 0
    rows_kept: int = 0
    dropped: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None  # the whole source was left out (``--skip-bad``): why
    format: str = ""  # the reader that read it (``verl_console``, ``trl`` ...)
    # metrics the reader computed rather than read (``val/mean``): their rows are in no count
    derived: tuple = ()
    # the run's score keys as logged: {key: (factor read with, lo, hi)} (readers.units)
    score_units: dict = field(default_factory=dict)
    # the first value of each score key as logged: {key: (step, value)} (readers.units.first_scores)
    score_starts: dict = field(default_factory=dict)
    # the notes that say a value was changed as read (a percent read as a fraction, rows sorted
    # by step): ``summary`` prints them; every note is in ``notes``
    changed: list[str] = field(default_factory=list)
    # per drop reason that loses whole lines: [lines, first line numbers] ("unparseable line" on
    # 8 lines holding 16 values is no "16 unparseable lines"), and the lines still being counted
    at: dict = field(default_factory=dict)
    # the source's own key names, first seen first: a message about a key the user named lists
    # these (the table's metrics are entropylaw's names: ``score`` for the log's ``reward``)
    keys: tuple = ()
    # what a position in the source is called: a text file's "line", a parquet table's "row" (from 1)
    line_word: str = "line"
    # the run names the source wrote ({key: names}: a JSON line's "run_name"): two files of one folder that name
    # their runs apart are two runs' (readers.merge)
    run_names: dict = field(default_factory=dict, repr=False, compare=False)
    _lines: dict = field(default_factory=dict, repr=False, compare=False)

    def skip(self, reason: str) -> None:
        self.skipped = reason

    def read(self, n: int = 1) -> None:
        self.rows_read += n

    def keep(self, n: int = 1) -> None:
        self.rows_kept += n

    def drop(self, reason: str, n: int = 1, lines=None) -> None:
        """``lines``: the source's line numbers the ``n`` rows were on, where a whole line was lost."""
        if n:
            self.dropped[reason] += n
            if lines is not None:
                self._lines.setdefault(reason, set()).update(int(x) for x in lines)

    def where(self) -> dict:
        """{reason: [lines, first line numbers]} for the reasons that lost whole lines."""
        out = {k: list(v) for k, v in self.at.items()}
        for reason, seen in self._lines.items():
            n, first = out.get(reason, [0, []])
            out[reason] = [n + len(seen), sorted(set(first) | seen)[:MAX_LINES_SAID]]
        return out

    def absorb(self, other: "IngestReport") -> None:
        """Add ``other``'s account of the same source (another run of one file) to this one."""
        where = self.where()
        for reason, (n, lines) in other.where().items():
            had, seen = where.get(reason, [0, []])
            where[reason] = [had + n, sorted(set(seen) | set(lines))[:MAX_LINES_SAID]]
        self.at, self._lines = where, {}
        self.rows_read += other.rows_read
        self.rows_kept += other.rows_kept
        self.dropped.update(other.dropped)
        self.notes += [n for n in other.notes if n not in self.notes]

    def _reasons(self, reasons: dict) -> str:
        where = self.where()

        def one(reason: str, n: int) -> str:
            if reason not in where:
                return f"{reason}: {n}"
            lines, first = where[reason]
            word = self.line_word
            head = str(n) if lines == n else f"{count(n, 'value')} on {count(lines, word)}"
            at = ("first at " if lines > len(first) else "at ") + (f"{word}s " if len(first) > 1 else f"{word} ")
            return f"{reason}: {head}, {at}{', '.join(map(str, first))}"
        return ", ".join(one(k, v) for k, v in sorted(reasons.items()))

    def note(self, message: str, changed: bool = False) -> None:
        self.notes.append(message)
        if changed:
            self.changed.append(message)

    @property
    def rows_dropped(self) -> int:
        return sum(self.dropped.values())

    def balanced(self) -> bool:
        return self.rows_read == self.rows_kept + self.rows_dropped

    def holds(self) -> bool:
        """No count below zero and no more rows dropped than read: what a file can have lost."""
        return self.rows_kept >= 0 and 0 <= self.rows_dropped <= self.rows_read

    def _check(self) -> None:
        # an account that says "dropped 148734 of 11312 rows" is a bug in the counting, not
        # news about the file: refuse to say it rather than mislead
        if not self.holds():
            raise RuntimeError(f"row account of {self.source} does not hold: read {self.rows_read}, "
                               f"kept {self.rows_kept}, dropped {self.rows_dropped}")

    def drop_line(self) -> str | None:
        """One line for the user when anything was lost from this source, else None."""
        if self.skipped:
            return f"{self.source}: skipped ({self.skip_reason()})"
        self._check()
        damage = self.said()
        if not self.rows_dropped and not damage:
            return None
        parts = []
        lost = {k: v for k, v in self.dropped.items() if not k.startswith(MERGED)}
        merged = self.rows_dropped - sum(lost.values())
        if lost:
            parts.append(self.lost_text())
        if merged:
            parts.append(f"averaged {merged} of {count(self.rows_read, 'value')} into their step's mean (several "
                         "values of one metric at one step)")
        return f"{self.source}: " + "; ".join(parts + damage)

    def skip_reason(self) -> str:
        """Why the source was skipped, without its path where the reason starts with it (it is said before)."""
        head = f"{self.source}: "
        return self.skipped[len(head):] if self.skipped and self.skipped.startswith(head) else (self.skipped or "")

    def lost_text(self, ignore=()) -> str | None:
        """"dropped N of M values (reason: n, ...)": the values lost, with why (not those averaged into
        their step's mean, nor the reasons in ``ignore``), or None.

        >>> r = IngestReport("log", rows_read=10)
        >>> r.drop("non-finite value", 2); r.drop("cut-off last line")
        >>> r.lost_text(), r.lost_text(ignore=("cut-off last line",))
        ('dropped 3 of 10 values (cut-off last line: 1, non-finite value: 2)', 'dropped 2 of 10 values (non-finite value: 2)')
        """
        lost = {k: v for k, v in self.dropped.items() if not k.startswith(MERGED) and k not in ignore}
        if not lost:
            return None
        return f"dropped {sum(lost.values())} of {count(self.rows_read, 'value')} ({self._reasons(lost)})"

    def damage(self) -> list[str]:
        """The damaged regions a reader found (a file can lose bytes without losing a counted row:
        a record cut at the end), in the words the reader noted them."""
        return [n for n in self.notes if n.startswith("damaged file")]

    def said(self) -> list[str]:
        """The notes every command says with the rows lost (:data:`SAID`): a damaged region, an error the
        log ends in."""
        return [n for n in self.notes if n.startswith(SAID)]

    def line(self) -> str:
        if self.skipped:
            return f"{self.source}: skipped ({self.skip_reason()})"
        self._check()
        text = (f"{self.source}: read {count(self.rows_read, 'value')}, kept {self.rows_kept}, "
                f"dropped {self.rows_dropped}")
        if self.dropped:
            text += f" ({self._reasons(self.dropped)})"
        return text

    @classmethod
    def from_dict(cls, d: dict) -> "IngestReport":
        """Inverse of :meth:`to_dict` (the accounts travel in ``df.attrs`` as dicts)."""
        out = cls(d["source"], d["rows_read"], d["rows_kept"], Counter(d.get("dropped", {})),
                  list(d.get("notes", [])), d.get("skipped"), d.get("format", ""))
        out.score_units = {k: tuple(v) for k, v in (d.get("score_units") or {}).items()}
        out.changed = list(d.get("changed", []))
        out.at = {k: list(v) for k, v in (d.get("at") or {}).items()}
        out.line_word = d.get("line_word", "line")
        return out

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "rows_read": self.rows_read,
            "rows_kept": self.rows_kept,
            "rows_dropped": self.rows_dropped,
            "dropped": dict(self.dropped),
            "notes": list(self.notes),
            "changed": list(self.changed),
            "skipped": self.skipped,
            "format": self.format,
            **({"at": self.where()} if self.at or self._lines else {}),
            **({"line_word": self.line_word} if self.line_word != "line" else {}),
            # a score read from percent (factor 0.01): a target given in percent is read alike
            **({"score_units": {k: list(v) for k, v in self.score_units.items() if v[0] != 1.0}}
               if any(v[0] != 1.0 for v in self.score_units.values()) else {}),
        }


def loss_lines(attrs: dict) -> list[str]:
    """One line per source of a table that lost rows or bytes (its ``attrs``), as every command
    prints; the sources that only averaged several values a step into their mean (and lost
    nothing) in one line, where there are several: a sweep of 14 run folders printed 14 such lines.

    >>> a = [IngestReport(f"r{i}/m.jsonl", 30, 20, Counter({"averaged with its step's other rows": 10}))
    ...      for i in range(3)]
    >>> print(*loss_lines({ACCOUNTS: [r.to_dict() for r in a]}))  # doctest: +NORMALIZE_WHITESPACE
    3 sources: averaged 30 of 90 values into their step's mean (several values of one metric at one step):
    r0/m.jsonl, r1/m.jsonl, ...
    """
    reports = _per_source([IngestReport.from_dict(d) for d in attrs.get(ACCOUNTS, [])])
    lines = [(r, line) for r in reports if (line := r.drop_line())]
    out, grouped = [], set()
    skips: dict[tuple[str, str], list[IngestReport]] = {}  # the same file in several run folders, skipped alike
    for r, _ in lines:
        if r.skipped:
            name = r.source.replace("\\", "/").rsplit("/", 1)[-1]
            skips.setdefault((name, r.skip_reason().replace(r.source, name)), []).append(r)
    for (name, why), group in skips.items():
        if len(group) >= 2:
            out.append(f"{len(group)} files named {name} skipped ({why}): {_some(group)}")
            grouped.update(map(id, group))
    only = [r for r, _ in lines if not r.skipped and r.lost_text() is None and not r.said()]
    if len(only) >= 2:
        merged, read = sum(r.rows_dropped for r in only), sum(r.rows_read for r in only)
        out.append(f"{len(only)} sources: averaged {merged} of {count(read, 'value')} into their step's mean "
                   f"(several values of one metric at one step): {_some(only)}")
        grouped.update(map(id, only))
    return [line for r, line in lines if id(r) not in grouped] + out


def _per_source(reports: list[IngestReport]) -> list[IngestReport]:
    """One account per source file: the runs of one file (a CSV's ``run`` column, a W&B chart export's
    ``<run> - <key>`` columns) each hold their own, and each said apart printed the same line twice
    (``runs.csv: dropped 1 of 6 values`` for each run: the file's 2 of 12 never said).

    >>> a, b = IngestReport("runs.csv", 6, 5), IngestReport("runs.csv", 6, 5)
    >>> a.drop("non-numeric value"); b.drop("non-numeric value")
    >>> [r.line() for r in _per_source([a, b])]
    ['runs.csv: read 12 values, kept 10, dropped 2 (non-numeric value: 2)']
    """
    out: dict[str, IngestReport] = {}
    for r in reports:
        if r.skipped:
            out[f"\0{id(r)}"] = r
            continue
        if r.source in out:
            out[r.source].absorb(r)
        else:
            out[r.source] = r
    return list(out.values())


def _some(reports) -> str:
    return ", ".join(r.source for r in reports[:2]) + (", ..." if len(reports) > 2 else "")
