"""How to get a forecast a run's window is too short for: the fraction of the run that holds
enough of its scores (a custom loop validating 9 times, every 5 steps, has 1 score in its first
15 %), as the page and the command say it under the run's "no forecast".

>>> from entropylaw import table
>>> t = table.from_records([(s, "val/acc", 0.3 + s / 100) for s in range(5, 50, 5)]
...                        + [(s, "entropy", 1 - s / 50) for s in range(1, 46)], run_id="r")
>>> window_hint(t, "r", 0.15)
'raise `fit_frac`: the first 15 % of this run holds 1 validation point; at 0.4 it holds 3, at 0.5 4'
>>> window_hint(t, "r", 0.5) is None   # 4 points: what stops a forecast there is not the window's length
True
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.data import RunData, window_end
from entropylaw.terminal import count

# the law's ceiling needs 3 (entropy, score) pairs, logit-drift and last-value 2 scores: with 3
# every default method can run, below it a short window is why a forecast is missing
ENOUGH = 3
FRACTIONS = (0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75)  # the fractions a hint names, the first that holds ENOUGH
HALF = 0.5


def window_hint(t: pd.DataFrame, run_id: str, fit_frac: float, y_key: str | None = None,
                longest: float | None = None) -> str | None:
    """What to change for a forecast of ``run_id`` where its first ``fit_frac`` holds fewer than
    :data:`ENOUGH` of its scores: the first fraction that holds enough, and what half the run
    holds; None where the window holds enough (its forecast failed for another reason), or the
    run has no score to forecast. Where no fraction holds enough, the cause: a run that ended
    early (its log stops before half of ``longest``, the last step any run of its sweep reaches,
    at the step ``t``'s runs reach where not given), else scores logged too rarely."""
    try:
        run = RunData.from_table(t, run_id, y_key=y_key)
    except EntropyLawError:
        return None

    def held(frac: float) -> int:
        return int(np.sum(run.target.steps <= window_end(run, fit_frac=frac)))

    have = held(fit_frac)
    if have >= ENOUGH:
        return None
    kind = "validation point" if run.target_kind == "validation" else "training-score point"
    said = f"the first {100 * fit_frac:g} % of this run holds {count(have, kind)}"
    enough = next((f for f in FRACTIONS if f > fit_frac and held(f) >= ENOUGH), None)
    if enough is None:
        said += (f", the first {100 * FRACTIONS[-1]:g} % {held(FRACTIONS[-1])}: a forecast from the first steps "
                 f"needs {ENOUGH}")
        longest = longest_step(t) if longest is None else float(longest)
        if np.isfinite(longest) and run.last - run.origin < HALF * (longest - run.origin):
            # a run that stopped early (10 steps of a sweep's 50, logging every 5) logs often enough: it is short
            return (f"{said}; the run ended early: its log stops at step {run.last:g}, where other runs go on to "
                    f"{longest:g} (its whole log holds {count(len(run.target.steps), kind)})")
        return f"{said} (log the score more often)"
    half = f", at {HALF:g} {held(HALF)}" if enough < HALF else ""
    return f"raise `fit_frac`: {said}; at {enough:g} it holds {held(enough)}{half}"


def longest_step(t: pd.DataFrame) -> float:
    """The last step any run of ``t`` reaches (NaN where ``t`` has no steps)."""
    steps = pd.to_numeric(t["step"], errors="coerce") if "step" in t else pd.Series(dtype=float)
    return float(steps.max()) if steps.notna().any() else float("nan")


def hinted(one, table_of, fit_frac: float | None, y_key: str | None = None, longest: float | None = None):
    """``one(run_id)`` whose error, where the window holds too few of the run's scores, ends with the fraction
    that would hold enough (:func:`window_hint`): a forecast refused for a short window says what to raise.
    ``longest``: the last step any run of the sweep reaches (``table_of`` gives one run's rows alone)."""
    def run(rid):
        try:
            return one(rid)
        except EntropyLawError as err:
            hint = window_hint(table_of(rid), rid, fit_frac, y_key, longest) if fit_frac else None
            if hint and hint not in str(err):
                raise EntropyLawError(f"{err}; {hint}") from None
            raise
    return run
