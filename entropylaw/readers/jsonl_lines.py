"""What a JSON-lines log's lines say before they are read: whether a file is one (its first line
an object with a step), which keys are step axes, and how many values a broken line held.

>>> looks_like_jsonl(b'{"step": 1, "actor/entropy": 0.5}'), is_step_name("grpo_step")
(True, True)
"""

from __future__ import annotations

import json
import re

from entropylaw.readers.names import STEP_NAMES, names_a_step_axis

STEP_FIELDS = STEP_NAMES  # then any *_step or */step, then _step
TYPE_FIELDS = ("type", "kind", "split", "mode", "phase")


def is_step_name(key: str) -> bool:
    """``step``, ``grpo_step``, ``eval/step``: a step axis as trainers name them (as
    ``define_metric("eval/*", step_metric="eval/step")`` declares one to W&B).

    >>> [is_step_name(k) for k in ("eval/step", "eval_step", "timing_s/step", "val/steps_per_second")]
    [True, True, False, False]
    """
    return isinstance(key, str) and (key in STEP_FIELDS or names_a_step_axis(key))


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
    n = sum(1 for m in _KEY.finditer(line) if m.group(2) is None and not is_step_name(m.group(1))
            and m.group(1) not in TYPE_FIELDS)
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
            return any(f'"{s}"'.encode() in line for s in (*STEP_FIELDS, "_step"))
        return isinstance(obj, dict) and any(is_step_name(k) for k in obj)
    return False
