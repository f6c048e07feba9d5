"""A row's values as numbers: what is not a number (None, JSON null, text) is NaN.

>>> as_float("0.5"), as_float(None) != as_float(None)
(0.5, True)
>>> row_float({"ceiling": 0.7}, "ceiling"), row_float({}, "ceiling") != row_float({}, "ceiling")
(0.7, True)
"""

from __future__ import annotations

from typing import Mapping


def as_float(value) -> float:
    """``value`` as a float, NaN when it is not a number (None, JSON null, text)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def row_float(row: Mapping, key: str) -> float:
    """``row[key]`` as a float, NaN when missing or not a number."""
    return as_float(row.get(key))
