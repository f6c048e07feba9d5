"""A plain-text table of result rows, as every command prints them.

>>> rows = [{"run": "r1", "ceiling": 0.81234, "ci": (0.8, 0.83)}]
>>> fmt_table(rows, [("run", "run"), ("ceiling", "ceiling"), ("ceiling_ci", "ci")]).splitlines()
['run  ceiling  ceiling_ci      ', 'r1   0.8123   [0.8000, 0.8300]']
"""

from __future__ import annotations

import numpy as np


def fmt_table(rows: list[dict], columns: list[tuple[str, str]]) -> str:
    """``columns`` are (header, key); floats to 4 decimals, a missing or non-finite value as ``-``."""
    def cell(v):
        if v is None or (isinstance(v, float) and not np.isfinite(v)):
            return "-"
        if isinstance(v, float):
            return f"{v:.4f}"
        if isinstance(v, (list, tuple)) and len(v) == 2:
            return f"[{cell(v[0])}, {cell(v[1])}]"
        return str(v)
    body = [[cell(r.get(k)) for _, k in columns] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, (h, _) in enumerate(columns)]
    lines = ["  ".join(h.ljust(w) for (h, _), w in zip(columns, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(b, widths)) for b in body]
    return "\n".join(lines)
