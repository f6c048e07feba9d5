"""The runs still training among those a page or a screen shows as backtests: their log or config plans more
steps than they have logged (and their log does not end in an error: a run that crashed, or diverged to NaN,
is not training), so the forecast from their first steps is no answer to "where does it end?", which
``entropylaw forecast`` gives from every step logged.

>>> live_line(["r (step 120 of 300 planned)"], 0.15, "the forecasts are")[:100]
"still training: r (step 120 of 300 planned): the forecasts are a backtest from the run's first 15%; "
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.log_facts import log_facts
from entropylaw.fit.forecast.finish import planned
from entropylaw.readers.accounts import ACCOUNTS, ENDS_IN_ERROR, SAID, TURNS_NAN, source_files
from entropylaw.readers.log_end import AT_EXIT
from entropylaw.table import split_runs

SHOWN = 3


def live_runs(df: pd.DataFrame, run_ids) -> dict[str, tuple[float, float]]:
    """``{run: (its last step logged, its planned last step)}`` for each run whose planned last step (its log's or
    its config's) lies past the last step it logged by more than the steps between its logs (a loop over
    range(300) printing every 10th step ends at 290: finished), and whose log does not end in an error or in NaN
    (:func:`stopped_files`)."""
    out, parts = {}, split_runs(df, run_ids)  # each run sliced once, not the whole table masked 3 times a run
    ended = stopped_files(df)
    for rid in (r for r in run_ids if r in parts):
        part = parts[rid]
        files = source_files(part["source"].iloc[0]) if "source" in part and len(part) else []
        if files and files[-1] in ended:  # its (last) log ends in an error or its values turned NaN: not training
            continue
        try:
            run = RunData.from_table(part, rid)
        except EntropyLawError:
            continue
        steps = np.unique(part["step"].to_numpy(dtype=float))
        plan, last = planned(run, log_facts(part, rid)), float(steps[-1])
        every = float(np.median(np.diff(steps))) if len(steps) > 1 else 1.0
        if plan is not None and plan > last + max(1.0, every, 0.02 * (last - float(steps[0]))):
            out[rid] = (last, plan)
    return out


def still_training(df: pd.DataFrame, run_ids) -> list[str]:
    """``run (step N of M planned)`` for each run of :func:`live_runs`."""
    return [f"{rid} (step {last:g} of {plan:g} planned)" for rid, (last, plan) in live_runs(df, run_ids).items()]


def stopped_files(df: pd.DataFrame) -> set[str]:
    """The files whose row account says the run stopped in them before its end: the log ends in an error (not one
    at exit, after its planned last step), or its values turn NaN to its last step (it diverged)."""
    out = set()
    for account in df.attrs.get(ACCOUNTS, []):
        notes = account.get("notes") or []
        if any(n.startswith(TURNS_NAN) or (n.startswith(ENDS_IN_ERROR) and AT_EXIT not in n) for n in notes):
            out.add(str(account.get("source", "")).split(" (read into ")[0])
    return out


def read_said(df: pd.DataFrame) -> str:
    """One line of the notes every command says of what was read (:data:`~entropylaw.readers.accounts.SAID`: a
    log that ends in an error, values turning NaN, a damaged file, two files not joined): the first, and how many
    more ('' where none is)."""
    said = [f"{str(a.get('source', '')).split(' (read into ')[0]}: {n}" for a in df.attrs.get(ACCOUNTS, [])
            for n in a.get("notes") or [] if n.startswith(SAID)]
    if not said:
        return ""
    more = f"; and {len(said) - 1} more of what was read ('entropylaw summary' says each)" if len(said) > 1 else ""
    return f"read: {said[0]}{more}"


def live_line(live: list[str], fit_frac: float, what: str, where: str = "") -> str:
    """The line that names the runs still training (:func:`still_training`) beside backtests (``what``), and
    ``where`` their forecasts from every step logged are (default: `entropylaw forecast RUN`)."""
    more = f" and {len(live) - SHOWN} more" if len(live) > SHOWN else ""
    where = where or "'entropylaw forecast RUN' forecasts where it ends from every step logged"
    return f"still training: {', '.join(live[:SHOWN])}{more}: {what} a backtest from the run's first " \
           f"{100 * fit_frac:g}%; {where}"
