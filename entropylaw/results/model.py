"""Each run's results, computed once: the rows the report's tables, the demo's screen and the
summary figures read.

:func:`run_results` fits every usable run (:func:`entropylaw.results.rows.summary_rows`) and
forecasts its final score from its first steps (:func:`entropylaw.results.rows.forecast_rows`);
what it returns is only read after that, never computed again by a renderer.

>>> import numpy as np
>>> from entropylaw import table
>>> steps = np.arange(0, 200, 10)
>>> H = 1.0 * np.exp(-steps / 60) + 0.1
>>> recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
>>> recs += [(int(s), "val/mean", float(0.8 - 0.2 * np.exp(h))) for s, h in zip(steps, H)]
>>> res = run_results(table.from_records(recs, run_id="r1"), n_boot=20)
>>> [r["run_id"] for r in res.rows], res.forecast("r1")["target_kind"], res.forecast("nope")
(['r1'], 'validation', {})
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from entropylaw.results.rows import forecast_rows, summary_rows

N_BOOT = 200  # the report's bootstrap draws for a forecast's interval


@dataclass
class RunResults:
    """``rows``: one per usable run, in family order (fit numbers, trust, label, look);
    ``forecasts``: one per row (the default forecast of its final score, or why none);
    ``notes``: the warnings the fits and forecasts raised, each tagged with its run."""

    rows: list = field(default_factory=list)
    forecasts: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    fit_frac: float = 0.15

    def forecast(self, run_id: str) -> dict:
        """The forecast row of ``run_id`` (``{}`` when it has none)."""
        return next((f for f in self.forecasts if f.get("run_id") == run_id), {})


def run_results(t: pd.DataFrame | None, fit_frac: float = 0.15, n_boot: int = N_BOOT, conf: float = 0.9,
                run_ids=None) -> RunResults:
    """The :class:`RunResults` of the runs of ``t`` (or of ``run_ids``); none for no table."""
    if t is None or not len(t):
        return RunResults(fit_frac=fit_frac)
    rows, fit_notes = summary_rows(t, run_ids)
    forecasts, forecast_notes = forecast_rows(t, rows, fit_frac=fit_frac, n_boot=n_boot, conf=conf)
    return RunResults(rows, forecasts, fit_notes + forecast_notes, fit_frac)
