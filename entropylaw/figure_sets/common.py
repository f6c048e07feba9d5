"""Small pieces the figure modules share: curve inputs, end-of-line labels, the law, the
rows of a forest plot (one row per run, grouped by family).

Plot functions take plain data. A set of curves is a mapping ``label -> pandas.Series``
indexed by step (what :func:`entropylaw.table.series` returns); :func:`as_curves` also
accepts a tidy run table plus a metric name.

>>> import pandas as pd
>>> from entropylaw import table
>>> t = table.from_records([(0, "entropy", 0.5), (1, "entropy", 0.4)], run_id="r1")
>>> {k: v.tolist() for k, v in as_curves(t, "entropy").items()}
{'r1': [0.5, 0.4]}
>>> float(law(0.0, a=0.2, b=0.9))
0.7
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

import entropylaw.table as tt
from entropylaw.draw.style import current, fig_width, fmt, fs, new_axes


def law(H, a: float, b: float):
    """The entropy-performance law R = -a exp(H) + b (SPEC section 3)."""
    return -a * np.exp(np.asarray(H, dtype=float)) + b


def as_curves(data, metric: str | None = None, labels: Mapping[str, str] | None = None) -> dict[str, pd.Series]:
    """``label -> Series(step -> value)`` from a mapping of Series or a tidy table + metric.

    Runs of a table that lack ``metric`` are left out; ``labels`` renames run ids.
    """
    labels = dict(labels or {})
    if isinstance(data, pd.DataFrame) and tt.is_table(data):
        if metric is None:
            raise ValueError("as_curves: a tidy table needs a metric name")
        out = {}
        for run_id in tt.run_ids(data):
            s = tt.series(data, run_id, metric)
            if len(s):
                out[labels.get(run_id, run_id)] = s
        return out
    out = {}
    for key, s in dict(data).items():
        s = pd.Series(s) if not isinstance(s, pd.Series) else s
        out[labels.get(key, key)] = s.dropna().sort_index()
    return out


def label_end(ax, x: float, y: float, text: str, color: str, dx_points: float = 4, dy_points: float = 0,
              fontsize: float = 8):
    """Write ``text`` just right of the point (x, y), in the line's colour."""
    return ax.annotate(text, (x, y), xytext=(dx_points, dy_points), textcoords="offset points",
                       va="center", ha="left", fontsize=fontsize, color=color)


def pm(value: float, err: float | None, digits: int = 3) -> str:
    """``value ± err`` for tables and boxes (``n/a`` pieces for missing numbers).

    >>> pm(0.51234, 0.0123)
    '0.512 ± 0.012'
    """
    if err is None or err != err:
        return fmt(value, digits)
    return f"{fmt(value, digits)} ± {fmt(err, digits)}"


def num(value: float, digits: int = 3) -> str:
    """Like :func:`~entropylaw.draw.style.fmt`, but whole numbers from 100 up (token counts).

    >>> num(512.25), num(0.4567)
    ('512', '0.457')
    """
    if value == value and 100 <= abs(value) < 1e5:
        return f"{value:.0f}"
    return fmt(value, digits)


def fixed(value: float, digits: int = 3) -> str:
    """Like :func:`num`, but never scientific: one legend's numbers in one format ("6.25e-03"
    beside "0.000" read as two kinds of number); a value that rounds to 0 is written as 0.

    >>> fixed(6.25e-03), fixed(1.12e-12), fixed(-1.0), fixed(512.25)
    ('0.006', '0.000', '-1.000', '512')
    """
    if value != value:
        return "n/a"
    if 100 <= abs(value) < 1e5:
        return f"{value:.0f}"
    return f"{value + 0.0:.{digits}f}".replace("-0." + "0" * digits, "0." + "0" * digits)


def pct(value: float, digits: int = 0) -> str:
    """A fraction as a percentage string: ``pct(0.734) == '73 %'``."""
    if value is None or value != value:
        return "n/a"
    return f"{100 * value:.{digits}f} %"


def forest_layout(rows: Sequence[Mapping]):
    """y position of each row (top to bottom), and the family headings' positions."""
    ys, headers, y = [], [], 0.0
    families = [r.get("family") for r in rows]
    several = len(set(families)) > 1
    for i, row in enumerate(rows):
        if several and (i == 0 or families[i] != families[i - 1]):
            headers.append((y, str(row.get("family") or "")))
            y += 1.0
        ys.append(y)
        y += 1.0
    return np.array(ys), headers, y


def forest_axes(rows, ax, extra_lines: int, row_height: float = 0.19):
    """``(axes, y of each row)``: run labels as y ticks, family headings in bold, first row at
    the top; a new figure (sized for ``extra_lines`` lines under it, ``row_height`` inches a row
    at the screen's small font) when ``ax`` is None."""
    ys, headers, total = forest_layout(rows)
    if ax is None:
        # on screen narrower than a column: it stands beside the report's table
        width = fig_width(1) if current().name == "paper" else 4.3
        # at least four rows' height: one run alone is no thin strip, its markers apart
        height = 0.95 + row_height * max(total, 4) * (fs("small") / 8.5) + 0.16 * extra_lines
        fig, ax = new_axes(figsize=(width, height))
    ticks = list(ys) + [y for y, _ in headers]
    names = [str(r.get("label", "")) for r in rows] + [h for _, h in headers]
    ax.set_yticks(ticks, names)
    for tick, y in zip(ax.get_yticklabels(), ticks):
        if y in {h for h, _ in headers}:
            tick.set_fontweight("bold")
    ax.set_ylim(total - 0.4, -0.6)  # first row at the top
    ax.grid(False, axis="y")
    ax.tick_params(axis="y", length=0, pad=8)  # a triangle at the left edge (a value below the axes) clears the names
    return ax, ys
