"""The runs still training among those a page or a screen shows as backtests: their log or config plans more
steps than they have logged, so the forecast from their first steps is no answer to "where does it end?", which
``entropylaw forecast`` gives from every step logged.

>>> live_line(["r (step 120 of 300 planned)"], 0.15, "the forecasts are")[:100]
"still training: r (step 120 of 300 planned): the forecasts are a backtest from the run's first 15%; "
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.decide import log_facts
from entropylaw.fit.forecast.finish import planned
from entropylaw.table import split_runs

SHOWN = 3


def still_training(df: pd.DataFrame, run_ids) -> list[str]:
    """``run (step N of M planned)`` for each run whose planned last step (its log's or its config's) lies
    past the last step it logged by more than the steps between its logs (a loop over range(300) printing every
    10th step ends at 290: finished)."""
    out, parts = [], split_runs(df, run_ids)  # each run sliced once, not the whole table masked 3 times a run
    for rid in (r for r in run_ids if r in parts):
        part = parts[rid]
        try:
            run = RunData.from_table(part, rid)
        except EntropyLawError:
            continue
        steps = np.unique(part["step"].to_numpy(dtype=float))
        plan, last = planned(run, log_facts(part, rid)), float(steps[-1])
        every = float(np.median(np.diff(steps))) if len(steps) > 1 else 1.0
        if plan is not None and plan > last + max(1.0, every, 0.02 * (last - float(steps[0]))):
            out.append(f"{rid} (step {last:g} of {plan:g} planned)")
    return out


def live_line(live: list[str], fit_frac: float, what: str) -> str:
    """The line that names the runs still training (:func:`still_training`) beside backtests (``what``)."""
    more = f" and {len(live) - SHOWN} more" if len(live) > SHOWN else ""
    return (f"still training: {', '.join(live[:SHOWN])}{more}: {what} a backtest from the run's first "
            f"{100 * fit_frac:g}%; 'entropylaw forecast RUN' forecasts where it ends from every step logged")
