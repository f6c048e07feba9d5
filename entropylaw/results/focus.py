"""Which runs matter first in a project of many runs (more than :data:`MANY_RUNS`).

With 200 runs a reader first wants the few runs that matter: the best forecasts, the
worst collapses (the lowest ceilings: where the entropy runs out at the lowest score) and
the fits not to trust (:func:`picks`). The report's first screen lists them
(:mod:`entropylaw.page.project`), and a figure of one panel or line per run draws them
(:func:`project_focus`).

>>> rows = [{"run_id": f"r{i}", "ceiling": 0.5 + i / 100, "trust": "good fit" if i % 5 else "weak fit"}
...         for i in range(20)]
>>> forecasts = [{"run_id": f"r{i}", "forecast": 0.3 + i / 50} for i in range(20)]
>>> [len(p) for p in picks(rows, forecasts)], focus(rows, forecasts)[:3]
([5, 5, 4], ['r0', 'r1', 'r2'])
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import pandas as pd

from entropylaw.results.model import forecast_rows, summary_rows
from entropylaw.results.runs import usable_runs
from entropylaw.results.values import as_float

MANY_RUNS = 30  # up to here the per-run table fits the first screen (data/real: 20 runs in 900 px)
TOP = 5
GOOD = "good fit"


def _pick(rows, key, reverse: bool) -> list:
    usable = [r for r in rows if math.isfinite(as_float(r.get(key)))]
    return sorted(usable, key=lambda r: as_float(r[key]), reverse=reverse)[:TOP]


def picks(rows: Sequence[Mapping], forecasts: Sequence[Mapping]) -> tuple[list, list, list]:
    """The first screen's three lists: best forecasts, worst collapses (lowest ceilings of
    trusted fits), fits not to trust; at most :data:`TOP` rows each."""
    best = _pick(forecasts, "forecast", reverse=True)
    worst = _pick([r for r in rows if r.get("trust") == GOOD], "ceiling", reverse=False)
    untrusted = [r for r in rows if r.get("trust") != GOOD][:TOP]
    return best, worst, untrusted


def focus(rows: Sequence[Mapping], forecasts: Sequence[Mapping]) -> list[str]:
    """The run ids the first screen lists, once each, in the order of ``rows``: the runs a
    project's per-run figures draw (200 panels would be read by no one)."""
    listed = {r["run_id"] for group in picks(rows, forecasts) for r in group}
    return [r["run_id"] for r in rows if r["run_id"] in listed]


def project_focus(t: pd.DataFrame, run_ids=None, fit_frac: float = 0.15) -> tuple[list[str] | None, str]:
    """``(run ids, caption note)`` for a figure of one panel or line per run: ``run_ids`` as
    given, or all runs (None) up to :data:`MANY_RUNS`;
    past that, the runs the report's first screen lists, and a note saying so."""
    if run_ids is not None:
        return run_ids, ""
    ids = usable_runs(t)
    if len(ids) <= MANY_RUNS:
        return None, ""
    rows, _ = summary_rows(t, ids)
    chosen = focus(rows, forecast_rows(t, rows, fit_frac=fit_frac)[0])
    return chosen, (f" Drawn for {len(chosen)} of the {len(ids)} runs: those the report's first screen lists (best "
                    "forecasts, worst collapses, fits not to trust); every run's numbers are in its tables.")

