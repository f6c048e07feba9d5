"""How a printed log ends: in a Python traceback (``RuntimeError: CUDA out of memory``), a shell's
``Killed`` or another signal, or a scheduler's cancel, after the run's last logged step. Such a run
stopped where its log stops, not at its planned end: a forecast of "where the run ends" is read
otherwise. Said in the row account and by every command (:data:`ENDS_IN_ERROR` starts the note).
A run whose values turn NaN and stay so to its last step (``step 40 | loss nan | entropy nan``, the
log ending with no traceback) diverged there: said alike (:func:`say_nan`, :data:`TURNS_NAN`), where its own
loss, entropy or score turn so (a gradient norm NaN beside them finite, a skipped fp16 step's, is said apart).

Only what comes after the last line a value was read from counts (a traceback caught and printed
mid-run, the run going on, is no end), and an exception Python ignored at exit (``Exception ignored
in``) is none either. The file's last :data:`TAIL` bytes are looked at.

>>> import tempfile, os
>>> text = "step 1 | entropy 0.5\\nstep 2 | entropy 0.4\\nTraceback (most recent call last):\\n" \\
...        '  File "train.py", line 9, in <module>\\n    loss.backward()\\nRuntimeError: CUDA out of memory\\n'
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "train.log")
...     _ = open(p, "w").write(text)
...     error_at_end(p, after_line=2), error_at_end(p, after_line=6)
((3, 'RuntimeError: CUDA out of memory'), None)
"""

from __future__ import annotations

import os
import re
from collections import deque
from typing import Iterable

import numpy as np

from entropylaw.readers.accounts import ENDS_IN_ERROR, TURNS_NAN
from entropylaw.readers.compressed import compression, open_log

TAIL = 1 << 18  # bytes: a traceback of a deep stack, Ray's and torchrun's copies of it, fit in far less
TAIL_LINES = 4000  # a compressed log's last lines, kept while it is streamed
MESSAGE_CHARS = 160
TRACEBACK = "Traceback (most recent call last):"
# what launchers put before a worker's line: Ray's "(TaskRunner pid=7) ", "(wiQk:0 WorkerDict pid=9) ", torchrun's
# "[rank0]: " (one space: a stack frame's indent stays); colour codes are taken out first
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_PREFIX = re.compile(r"^(?:\((?:[\w.:]+ )*pid=\d+(?:, ip=[\d.]+)?\) ?|\[(?:rank|default)\d+\]: ?)*")
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:\([\w.]*\))?(?::\s?.*)?$")  # "RuntimeError: ...", "KeyboardInterrupt"
# a shell's word for a process ended by a signal: alone ("Killed"), or after its line and pid or a job's number, the
# command after it ("/bin/bash: line 1:  4242 Killed  python train.py", "[1]+  Killed  nohup python ..."); a
# message that starts with the word ("Killed 3 stale rollout workers", "Terminated ray cluster.") is none
_WORDS = r"(Killed|Segmentation fault|Aborted|Bus error|Terminated)(?:\s*\(core dumped\))?"
_SIGNAL = re.compile(r"^" + _WORDS + r"$|^(?:.*?:\s*line \d+:\s*\d+|\[\d+\][+-]?)\s+" + _WORDS + r"(?:\s+.*)?$")
_CANCELLED = re.compile(r"\*\*\* (?:JOB|STEP) \S+ (?:ON \S+ )?CANCELLED AT \S+(?: DUE TO ([A-Z ]+?))? \*\*\*")


def _tail(path) -> tuple[int, list[str]]:
    """The file's last lines, whole, and the line number of the first of them."""
    if compression(path):
        with open_log(path) as f:
            kept: deque = deque(maxlen=TAIL_LINES)
            n = 0
            for n, line in enumerate(f, 1):
                kept.append(line)
        return n - len(kept) + 1, [b.decode("utf-8", "replace") for b in kept]
    size = os.path.getsize(path)
    start = max(0, size - TAIL)
    with open(path, "rb") as f:
        before = 0
        while f.tell() < start:  # the lines before the tail, counted to number its lines
            before += f.read(min(1 << 20, start - f.tell())).count(b"\n")
        tail = f.read()
    first = before + 1
    if start:  # the tail's first line is cut: left out
        cut = tail.find(b"\n")
        tail, first = (b"", first) if cut < 0 else (tail[cut + 1:], first + 1)
    return first, tail.decode("utf-8", "replace").splitlines()


def error_at_end(path, after_line: int | None) -> tuple[int, str] | None:
    """``(line, what)`` of the error the log ``path`` ends in after its line ``after_line`` (the last a
    value was read from; None: anywhere in its last bytes), else None. ``what`` is the first error's line
    as Python printed it (the cause: a chained exception, a launcher's ``ChildFailedError``, Ray's copy
    come after it), or the shell's or scheduler's word."""
    try:
        first, lines = _tail(path)
    except OSError:
        return None
    found, at, ignored = None, None, False  # at: the line of the traceback whose error line is awaited
    for lineno, raw in enumerate(lines, first):
        if after_line is not None and lineno <= after_line:
            continue
        line = _PREFIX.sub("", _COLOUR.sub("", raw.rstrip("\r\n")))
        text = line.strip()
        if at is not None:
            if not text or line[:1].isspace() or text == TRACEBACK:
                continue  # the stack's frames
            if _EXCEPTION.match(text):
                if not ignored:
                    return at, text[:MESSAGE_CHARS]
                at, ignored = None, False
                continue
            at = None  # no error line: the traceback was cut
        if text == TRACEBACK:
            at = lineno
            if not ignored:
                found = found or (lineno, "a Python traceback, cut before its error line")
        elif text.startswith("Exception ignored in"):  # Python's note of an error it went past at exit: no end
            ignored = True
        elif (signal := _SIGNAL.match(text)) or (cancelled := _CANCELLED.search(text)):
            what = (f"{signal.group(1) or signal.group(2)} (a signal ended the process)" if signal else
                    "the scheduler cancelled the job" + (f" ({cancelled.group(1).lower()})" if cancelled.group(1)
                                                          else ""))
            return found or (lineno, what)
        elif text:
            ignored = False
    return found


def say_end(report, path, last_line: int | None, last_step: int | None, planned: int | None = None) -> None:
    """Note in ``report`` the error the printed log ``path`` ends in after ``last_line`` (see
    :func:`error_at_end`), with the run's last step ``last_step`` and, where the log prints it, its planned last
    step ``planned`` (reached: the error came after the run's end, a crash at exit, and the run is whole)."""
    end = error_at_end(path, last_line)
    if end is None:
        return
    if planned is not None and last_step is not None and last_step >= planned:
        report.note(f"{ENDS_IN_ERROR} at line {end[0]}, after its planned last step {planned}: {end[1]}; {AT_EXIT}")
        return
    step = f", after its last step {last_step}" if last_step is not None else ""
    report.note(f"{ENDS_IN_ERROR} at line {end[0]}{step}: {end[1]}; {STOPPED}")


MIN_NAN_STEPS = 2  # a key's values non-finite at this many steps to the end (or all values of its last step are)
KEYS_SAID = 6
MIN_NAN_KEYS = 2  # a last step all NaN is the run's where it holds this many keys, half the run's (no last eval's)


def turns_nan(df, ordered: bool = True) -> tuple[dict[str, int], int, str] | None:
    """``({key: the step its values turn non-finite from}, the run's last step, "NaN"/"infinite"/"NaN or infinite")``
    of a run's rows ``df`` (``step``, ``key``, ``value``; ``line`` where known: the rows in line order, else in the
    order given where ``ordered``, else by step), or None. A key turns so where it had a finite value, and its
    values from that step to the run's last step (after its last resume) are all non-finite, at
    :data:`MIN_NAN_STEPS` steps or more, or at the last step only where no value of that step is finite and it
    holds more than half the run's keys (a last evaluation's row that gave NaN is none). A NaN among finite values
    of that key after it is none: a stray one, not a run that diverged; nor is a key's last NaN no longer than the
    NaN it had between its finite values (an export's evaluation column, NaN where it was not logged), and such a
    key alone, with no other key turning, is no run that diverged.

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"step": [1, 1, 2, 2, 3, 3], "key": pd.Categorical(["loss", "entropy"] * 3),
    ...                      "value": [0.1, 0.5, float("nan"), 0.4, float("nan"), 0.3]})
    >>> turns_nan(rows), turns_nan(rows[:4])
    (({'loss': 2}, 3, 'NaN'), None)
    """
    values = df["value"].to_numpy(dtype=np.float64)
    if np.isfinite(values).all() or not len(df):
        return None
    steps, codes = df["step"].to_numpy(), df["key"].cat.codes.to_numpy()
    if "line" in df.columns:
        order = np.argsort(df["line"].to_numpy(), kind="stable")
    elif ordered and "axis" not in df.columns:  # several step axes: no resume read from their order
        order = np.arange(len(df))
    else:
        order = np.argsort(steps, kind="stable")
    steps, codes, values = steps[order], codes[order], values[order]
    bad = ~np.isfinite(values)
    n_keys = len(df["key"].cat.categories)
    had_finite = np.zeros(n_keys + 1, dtype=bool)
    had_finite[codes[~bad]] = True
    back = np.nonzero(steps[1:] < np.maximum.accumulate(steps)[:-1])[0]
    start = int(back[-1]) + 1 if len(back) else 0  # the run's last segment: a resume's
    steps, codes, values, bad = steps[start:], codes[start:], values[start:], bad[start:]
    last = int(steps.max())
    at_last_all_bad = bool(bad[steps == last].all())
    pos = np.arange(len(steps))
    last_finite = np.full(n_keys + 1, -1)
    np.maximum.at(last_finite, codes[~bad], pos[~bad])
    tail = bad & (pos > last_finite[codes]) & had_finite[codes]
    names = df["key"].cat.categories
    found, kinds = {}, set()
    keys_at_last = len(np.unique(codes[steps == last]))
    whole_last = at_last_all_bad and keys_at_last >= MIN_NAN_KEYS and 2 * keys_at_last > len(np.unique(codes))
    steady = False  # a key with no NaN between its finite values turns: a key logged now and then alone is none
    for code in np.unique(codes[tail]):
        mine = tail & (codes == code)
        if last_finite[code] >= 0:  # a NaN at the step of its last finite value (a filler) is none
            mine &= steps > steps[last_finite[code]]
        at = np.unique(steps[mine])
        if not len(at):
            continue
        if code < 0 or at[-1] != last or (len(at) < MIN_NAN_STEPS and not whole_last):
            continue
        gap = _longest_gap(bad[(codes == code) & ~mine])
        if int(mine.sum()) <= gap:
            continue  # a key logged now and then, NaN between (an evaluation's column): not logged since
        steady = steady or not gap
        found[str(names[code])] = int(at[0])
        kinds.update("NaN" if np.isnan(v) else "infinite" for v in values[mine])
    if not found or not steady and len(found) < MIN_NAN_KEYS:
        return None
    return dict(sorted(found.items(), key=lambda kv: kv[1])), last, " or ".join(sorted(kinds))


def _longest_gap(bad: np.ndarray) -> int:
    """The most non-finite values in a row among a key's values ``bad`` (True: non-finite) before its last finite
    one: a column of a key logged every k steps, NaN between (a W&B or pandas export's), has k - 1."""
    finite = np.flatnonzero(~bad)
    if not len(finite):
        return 0
    edges = np.diff(np.concatenate(([-1], finite)))
    return int(edges.max()) - 1


def say_nan(report, df, ordered: bool = True, signals: Iterable[str] = ()) -> None:
    """Note in ``report`` the step the run's values turn NaN from (:func:`turns_nan`), the keys that do with it: the
    run diverged where one of its own training ``signals`` (its loss, entropy, score) turns so, or where it logs
    none of them. Keys turning NaN beside signals that stay finite (a skipped fp16 step's ``grad_norm=nan`` on the
    last lines) are no divergence: said in a note of their own, their values dropped as non-finite."""
    got = turns_nan(df, ordered)
    if got is None:
        return
    found, last, what = got
    first = min(found.values())
    said = [k if s == first else f"{k} from step {s}" for k, s in list(found.items())[:KEYS_SAID]]
    more = f" and {len(found) - KEYS_SAID} more" if len(found) > KEYS_SAID else ""
    where = f"at its last step {last}" if first == last else f"from step {first} to its last step {last}"
    logged = [k for k in dict.fromkeys(signals) if k and k in set(df["key"].cat.categories)]
    if logged and not set(logged) & set(found):
        where = where.replace("its last step", "the run's last step")
        report.note(f"{', '.join(said)}{more} {'turns' if len(found) == 1 else 'turn'} {what} {where}, the run's own "
                    f"training values ({', '.join(logged[:KEYS_SAID])}) finite to the end: no divergence, "
                    f"{'its' if len(found) == 1 else 'their'} values there dropped as non-finite")
        return
    report.note(f"{TURNS_NAN} {what} {where} ({', '.join(said)}{more}): the run diverged")



def resumed_after_nan(report, start: int, source: str) -> None:
    """The run whose file ``report`` said its values turn NaN (:func:`say_nan`) resumed at step ``start`` in the
    later file ``source``: the run went on, the NaN is that file's alone (said in its account, by no command)."""
    head = f"{TURNS_NAN} "
    report.notes = [f"the file's values turn {n[len(head):].rsplit(': the run diverged', 1)[0]}; the run resumed at "
                    f"step {start} in {source}" if n.startswith(head) else n for n in report.notes]

STOPPED = "the run stopped there, not at its planned end"
AT_EXIT = "the run had reached its planned end (an error at exit)"
# a run folder's console output beside its metrics file (``metrics.jsonl`` + ``output.log`` or ``stderr``)
_CONSOLE = re.compile(r"^(?:std(?:out|err)|output|out|err|console|nohup|log|train|slurm-\d+(?:_\d+)?)"
                      r"(?:\.(?:log|txt|out|err))?$", re.IGNORECASE)
CONSOLE_LINES = 200  # a console output that prints no value: its error must lie among its last lines


def console_files(folder, aside=()) -> list[str]:
    """A run folder's console outputs: the files of it no reader read (``aside``), and the files named as
    a trainer's output is (``stderr``, ``output.log``, ``slurm-42.out``) that are no run file."""
    from pathlib import Path

    found = [str(p) for p in aside]
    try:
        names = sorted(Path(folder).iterdir())
    except OSError:
        return found
    return found + [str(p) for p in names if p.is_file() and _CONSOLE.match(p.name) and str(p) not in found
                    and not p.suffix]


def say_console_end(folder, aside, reports) -> None:
    """Note in the first of ``reports`` (the run files read from the run folder ``folder``) the error that
    a console output of the folder (:func:`console_files`) ends in: a metrics file stops at the last step
    written, its traceback is in the trainer's output beside it."""
    if not reports:
        return
    for path in console_files(folder, aside):
        try:
            with open_log(path) as f:
                n = sum(1 for _ in f)
        except (OSError, ValueError):
            continue
        end = error_at_end(path, max(0, n - CONSOLE_LINES))
        if end is not None:
            name = os.path.basename(path)
            reports[0].note(f"{ENDS_IN_ERROR} ({name} beside it, line {end[0]}): {end[1]}; {STOPPED}")
            return
