"""Small pieces the figure modules share: curve inputs, end-of-line labels, the law.

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

from typing import Mapping

import numpy as np
import pandas as pd

import entropylaw.table as tt
from entropylaw.plots.style import fmt


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
    """Like :func:`~entropylaw.plots.style.fmt`, but whole numbers from 100 up (token counts).

    >>> num(512.25), num(0.4567)
    ('512', '0.457')
    """
    if value == value and 100 <= abs(value) < 1e5:
        return f"{value:.0f}"
    return fmt(value, digits)


def pct(value: float, digits: int = 0) -> str:
    """A fraction as a percentage string: ``pct(0.734) == '73 %'``."""
    if value is None or value != value:
        return "n/a"
    return f"{100 * value:.{digits}f} %"
