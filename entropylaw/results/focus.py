"""Which runs a project's figures of one panel or line per run draw: past :data:`MANY_RUNS`
runs, those the report's first screen lists (:func:`entropylaw.results.picks.picks`: the best
forecasts, the worst collapses, the fits not to trust).

>>> rows = [{"run_id": f"r{i}", "ceiling": 0.5 + i / 100, "trust": "good fit" if i % 5 else "weak fit"}
...         for i in range(20)]
>>> forecasts = [{"run_id": f"r{i}", "forecast": 0.3 + i / 50} for i in range(20)]
>>> focus(rows, forecasts)[:3]
['r0', 'r1', 'r2']
"""

from __future__ import annotations

from typing import Mapping, Sequence

import pandas as pd

from entropylaw.results.model import forecast_rows, summary_rows
from entropylaw.results.picks import MANY_RUNS, picks
from entropylaw.results.runs import usable_runs


def focus(rows: Sequence[Mapping], forecasts: Sequence[Mapping]) -> list[str]:
    """The run ids the first screen lists, once each, in the order of ``rows``: the runs a
    project's per-run figures draw (200 panels would be read by no one)."""
    listed = {r["run_id"] for group in picks(rows, forecasts).groups for r in group}
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

