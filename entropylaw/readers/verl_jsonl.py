"""veRL's JSONL file logger: one JSON object per line, ``{"step": n, "data": {...}}``.

Flat objects (``{"step": n, "actor/entropy": 0.5}``) and ``_step`` / ``global_step`` are
accepted too; nested dicts are flattened with ``/``. A line that is not JSON, or has no
integer step, is dropped and counted (as many rows as the ``"key":`` values it still shows,
reason ``unparseable line``; the file's last line cut while being written, with no newline,
counts what the line before it held, reason ``cut-off last line``);
a value that is not a number (string, list, bool, null) is dropped and counted as
``non-numeric value``; ``NaN``/``Infinity`` tokens reach :func:`finalize` which drops them.

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "metrics.jsonl")
...     _ = open(p, "w").write('{"step": 1, "data": {"actor/entropy": 0.5, "note": "x"}}\\n'
...                            'garbage\\n{"step": 2, "data": {"actor/entropy": 0.4}}\\n')
...     [raw] = read_verl_jsonl(p)
>>> raw.rows()
[(1, 'actor/entropy', 0.5), (2, 'actor/entropy', 0.4)]
>>> raw.report.line().split(": ", 1)[1]
'read 4 rows, kept 0, dropped 2 (non-numeric value: 1, unparseable line: 1)'
"""

from __future__ import annotations

import json
import os
import re

from entropylaw.errors import EntropyLawError
from entropylaw.readers.compressed import open_log
from entropylaw.readers.common import RawRun, existing_file
from entropylaw.readers.names import model_from_filename, run_id_from_path

STEP_FIELDS = ("step", "_step", "global_step")
UNPARSEABLE = "unparseable line"
CUT_LAST = "cut-off last line"
NON_NUMERIC = "non-numeric value"
MAX_NOTES = 5


def _flatten(obj: dict, prefix: str = ""):
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten(value, name + "/")
        else:
            yield name, value


def _numeric(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def read_verl_jsonl(path: str | os.PathLike, run_id: str | None = None) -> list[RawRun]:
    """Read a veRL JSONL metrics file into one :class:`RawRun`."""
    path = existing_file(path, 'JSON lines like {"step": 1, "data": {...}}')
    source = str(path)
    raw = RawRun(run_id or run_id_from_path(path), source, ordered=True)
    report = raw.report
    steps, keys, values, lines = [], [], [], []
    notes = {UNPARSEABLE: 0, NON_NUMERIC: 0}

    def note(kind: str, message: str) -> None:
        notes[kind] += 1
        if notes[kind] <= MAX_NOTES:
            report.note(message)

    last_count = 0  # values of the last good line: what a cut last line probably held
    with open_log(path, text=True) as f:
        for lineno, line in enumerate(f, 1):
            unterminated = not line.endswith("\n")
            line = line.strip().replace("\x00", "")
            if not line:
                continue
            try:
                obj = json.loads(line)
                step_field = next((s for s in STEP_FIELDS if s in obj), None)
                step = obj[step_field]
                if isinstance(step, bool) or not float(step).is_integer():
                    raise ValueError
                step = int(step)
            except (ValueError, TypeError, KeyError, AttributeError, OverflowError):
                n = values_in_broken_line(line)
                if unterminated:  # the writer was cut off mid-line: it held what the lines before held
                    n = max(n, last_count)
                    report.read(n)
                    report.drop(CUT_LAST, n)
                    note(UNPARSEABLE, f"line {lineno}: the last line, cut while being written ({n} value(s) lost)")
                    continue
                report.read(n)
                report.drop(UNPARSEABLE, n)
                note(UNPARSEABLE, f"line {lineno}: not a JSON object with an integer step ({n} value(s) dropped)")
                continue
            data = obj["data"] if isinstance(obj.get("data"), dict) else \
                {k: v for k, v in obj.items() if k != step_field}
            last_count = 0
            for key, value in _flatten(data):
                last_count += 1
                report.read(1)
                number = _numeric(value)
                if number is None:
                    report.drop(NON_NUMERIC)
                    note(NON_NUMERIC, f"line {lineno}: key {key!r} has non-numeric value {value!r:.40} (dropped)")
                    continue
                steps.append(step)
                keys.append(key)
                values.append(number)
                lines.append(lineno)
    for kind, n in notes.items():
        if n > MAX_NOTES:
            report.note(f"... and {n - MAX_NOTES} more {kind}s")
    if not steps and not report.rows_read:
        raise EntropyLawError(f"{source}: no JSON metric lines found")
    raw.steps, raw.keys, raw.values, raw.lines = steps, keys, values, lines
    raw.meta = {"model": model_from_filename(path)}
    if "critic/vf_loss" in set(keys):
        raw.meta["algorithm"] = "ppo"
    return [raw]


_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*(\{)?')
_OPEN_KEY = re.compile(r'[,{]\s*"(?:[^"\\]|\\.)*$')


def values_in_broken_line(line: str) -> int:
    """Values a line that is not valid JSON held, from the ``"key":`` it still shows (not the
    step, not a ``{``-opening container), a key cut before its colon counting too; at least 1.

    >>> values_in_broken_line('{"step": 7, "data": {"actor/entropy": 0.5, "critic/score/mean": 0.7')
    2
    >>> values_in_broken_line('{"step": 7, "data": {"actor/entropy": 0.5, "critic/sc')
    2
    >>> values_in_broken_line("garbage")
    1
    """
    n = sum(1 for m in _KEY.finditer(line) if m.group(2) is None and m.group(1) not in STEP_FIELDS)
    n += bool(_OPEN_KEY.search(line))
    return max(n, 1)


def looks_like_jsonl(head: bytes) -> bool:
    """True when the first non-blank line of ``head`` is a JSON object with a step."""
    for line in head.splitlines():
        line = line.strip()
        if not line:
            continue
        if not line.startswith(b"{"):
            return False
        try:
            obj = json.loads(line)
        except ValueError:
            return any(f'"{s}"'.encode() in line for s in STEP_FIELDS)
        return isinstance(obj, dict) and any(s in obj for s in STEP_FIELDS)
    return False

