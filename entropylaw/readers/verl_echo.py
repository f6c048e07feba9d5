"""veRL's printed validation echoes: ``Initial/Final validation metrics: {...}``.

veRL prints the validation before training and after the last update with ``pprint``:
one quoted string, or, when long, a parenthesised run of string literals over several
lines, each behind a Ray prefix::

    (TaskRunner pid=7) ("Initial validation metrics: {'val-core/gsm8k/reward/mean@1': "
    (TaskRunner pid=7)  '0.221}')

Older veRL logs neither to its step lines: the validation before training (the
highest-entropy point a fit has) and the final one exist only in these echoes, under the
raw benchmark key (``test_score/openai/gsm8k``) while the step lines carry
``val/test_score/openai/gsm8k``. Newer veRL also prints them as ``step:0`` / last step
lines; then the echo adds nothing. :func:`echo_rows` decides which values an echo adds.

>>> lines = [b'(main_task pid=5) "Initial validation metrics: {\\'test_score/openai/gsm8k\\': 0.0007}"']
>>> parse_echo(lines)
('Initial', {'test_score/openai/gsm8k': 0.0007})
"""

from __future__ import annotations

import ast
import re

from entropylaw.readers.hf_console import parse_record

MARK = b"validation metrics:"
MAX_LINES = 400  # an echo longer than this is not one
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
_RAY = re.compile(rb"^\s*\([^()]*pid=\d+[^()]*\)\s?")
_HEAD = re.compile(r"^(Initial|Final) validation metrics:\s*(\{.*\})\s*$", re.S)


def _clean(line: bytes) -> str:
    line = _RAY.sub(b"", _ANSI.sub(b"", line.rstrip(b"\r\n")))
    return line.decode("utf-8", "replace")


def parse_echo(lines: list[bytes]) -> tuple[str, dict[str, float]] | None:
    """``("Initial"|"Final", {key: value})`` from an echo's lines; None while incomplete or
    when it is not one."""
    text = "\n".join(_clean(line) for line in lines).strip()
    start = min((i for i in (text.find('("'), text.find("('"), text.find('"'), text.find("'")) if i >= 0),
                default=-1)
    if start < 0:
        return None
    try:
        message = ast.literal_eval(text[start:])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(message, str):
        return None
    m = _HEAD.match(message.strip())
    record = parse_record(m.group(2)) if m else None
    if record is None:
        return None
    values = {k: float(v) for k, v in record.items()
              if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return m.group(1), values


class EchoCollector:
    """Feed every line; collects the echoes with the line each starts on."""

    def __init__(self):
        self.echoes: list[tuple[int, str, dict[str, float]]] = []
        self._lines: list[bytes] = []
        self.pending = self._lines  # the same list, never rebound: callers may skip feed() while it is empty
        self._start = 0
        self._wrapped = False

    def feed(self, line: bytes, lineno: int) -> None:
        if not self._lines:
            if MARK not in line:
                return
            self._start = lineno
            self._wrapped = _clean(line).lstrip().startswith("(")
        self._lines.append(line)
        # a wrapped echo can only end on a line ending in ")": parse only then (no quadratic work)
        if self._wrapped and not _clean(line).rstrip().endswith(")"):
            if len(self._lines) >= MAX_LINES:
                self._lines.clear()
            return
        parsed = parse_echo(self._lines)
        if parsed is not None:
            self.echoes.append((self._start, *parsed))
        if parsed is not None or not self._wrapped or len(self._lines) >= MAX_LINES:
            self._lines.clear()


def echo_rows(echo_line: int, kind: str, values: dict[str, float], line_steps, line_numbers,
              step_keys: dict[int, set[str]], all_keys: set[str]) -> tuple[int | None, dict[str, float], list[str]]:
    """Which values of one echo to add, and at which step.

    The echo before training belongs to the step of the first step line after it, the final
    one to the next step line when that line logs the same keys (newer veRL), else to the
    last step line before it. A key is added under the name the step lines use
    for it (older veRL prefixes ``val/``) when the step lines know that name but do not hold
    it at that step; keys no step line has are left out (e.g. metrics a cut line never
    reached), and so are values the step line already holds.
    Returns (step, {key: value}, keys left out).
    """
    import bisect

    names = {key: key if key in all_keys else f"val/{key}" if f"val/{key}" in all_keys else None for key in values}
    pos = bisect.bisect_right(line_numbers, echo_line)
    after = int(line_steps[pos]) if pos < len(line_steps) else None
    before = int(line_steps[pos - 1]) if pos > 0 else None
    # newer veRL prints the final echo and then logs the same values on the next step line
    echoed_next = after is not None and any(n in step_keys.get(after, ()) for n in names.values() if n)
    step = after if kind == "Initial" or echoed_next else before
    if step is None:
        return None, {}, sorted(values)
    have = step_keys.get(step, set())
    added, left_out = {}, []
    for key, value in values.items():
        if names[key] is None:
            left_out.append(key)
        elif names[key] not in have:
            added[names[key]] = value
    return step, added, left_out
