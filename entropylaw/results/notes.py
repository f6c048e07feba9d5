"""The warnings a computation raises, caught, each tagged with its run.

>>> tag("r1", ["only 4 points", "r1: a < 0", "only 4 points"])
['r1: only 4 points', 'r1: a < 0']
"""

from __future__ import annotations

import warnings
from typing import Callable


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
