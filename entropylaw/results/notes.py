"""The warnings a computation raises, caught, each tagged with its run; a result's text in
another's words.

>>> tag("r1", ["only 4 points", "r1: a < 0", "only 4 points"])
['r1: only 4 points', 'r1: a < 0']
>>> reworded({"run_id": "`x`", "why": ["set `x`"], "n": 3}, str.upper)
{'run_id': '`x`', 'why': ['SET `X`'], 'n': 3}
"""

from __future__ import annotations

import warnings
from typing import Callable

# the keys whose text names a run or a key of the data: never reworded, whatever it holds
NAMES = frozenset({"run_id", "label", "family", "model", "algorithm", "score_key", "target_key", "source",
                   "color", "marker", "linestyle"})


def capture(fn: Callable, *args, **kwargs):
    """Call ``fn`` and return ``(result, [warning messages])`` (all warning categories)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args, **kwargs)
    return result, [str(w.message) for w in caught]


def tag(run_id: str, messages) -> list[str]:
    """Prefix each message with its run unless it already names it; drop repeats."""
    out = [m if f"'{run_id}'" in m or m.startswith(f"{run_id}:") else f"{run_id}: {m}" for m in messages]
    return list(dict.fromkeys(out))


def reworded(value, words: Callable[[str], str]):
    """``value`` (text, or mappings and sequences of it, at any depth) with each text passed
    through ``words`` (the command line's: an API parameter as its flag); the text under a key
    of :data:`NAMES`, a mapping's keys and what is not text are kept as they are."""
    if isinstance(value, str):
        return words(value)
    if isinstance(value, dict):
        return {k: v if k in NAMES else reworded(v, words) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(reworded(v, words) for v in value)
    return value
