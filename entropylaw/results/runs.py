"""Which runs can be used, the score each is fitted to, and each run's look.

>>> from entropylaw import table
>>> t = table.from_records([(0, "entropy", 0.5), (0, "score", 0.1)], run_id="r1")
>>> performance_metric(t, "r1"), usable_runs(t)
('score', ['r1'])
>>> t2 = table.from_records([(0, "val/acc", 0.1), (5, "val/acc", 0.3)], run_id="r2")
>>> forecast_only_runs(t2), left_out_runs(t2, forecasts=True)
(['r2'], {})
"""

from __future__ import annotations

import pandas as pd

import entropylaw.table as tt
from entropylaw.fit.pairing import fitted_score_key, no_entropy, run_keys
from entropylaw.table.looks import RunStyles


def performance_metric(t: pd.DataFrame, run_id: str) -> str | None:
    """The score the law is fitted to (the fit's own rule, :func:`entropylaw.fit.pairing.score_key`),
    or None when the run has none."""
    return fitted_score_key(t, run_id) or None


def run_styles(t: pd.DataFrame) -> RunStyles:
    """One look per run of the table (colour, then line style and marker past 8 runs)."""
    return RunStyles(tt.run_ids(t))


# what a page says where a run's law would be, for a run that logs a score and no entropy
NO_ENTROPY = ("logs no policy entropy: the law R = -a·exp(H) + b needs it; name it with `entropy_key` if it is logged "
              "under another name")
NO_SCORE = "no score to pair the entropy with (no validation score, no training score)"

_USABLE: list = []  # [(table, runs)]: the last few tables asked about (held, so ids stay unique)


def usable_runs(t: pd.DataFrame) -> list[str]:
    """Runs with an entropy series and a score to pair it with."""
    for table, runs in _USABLE:
        if table is t and len(table) == len(t):
            return list(runs)
    with_entropy = set(t.loc[t["metric"] == "entropy", "run_id"])
    parts = tt.split_runs(t, with_entropy)  # the score rule on each run's own rows, not the whole table's
    out = [r for r in tt.run_ids(t) if r in with_entropy and performance_metric(parts.get(r, t), r)]
    _USABLE.insert(0, (t, out))
    del _USABLE[4:]
    return list(out)


def forecast_only_runs(t: pd.DataFrame | None) -> list[str]:
    """Runs with a score and no entropy, in table order: their score can be forecast, the law has
    nothing to fit (a custom loop that prints its validation accuracy alone)."""
    if t is None or not len(t):
        return []
    with_entropy = set(t.loc[t["metric"] == "entropy", "run_id"])
    without = [r for r in tt.run_ids(t) if r not in with_entropy]
    parts = tt.split_runs(t, without)
    return [r for r in without if performance_metric(parts.get(r, t), r)]


def left_out_runs(t: pd.DataFrame | None, forecasts: bool = False) -> dict[str, str]:
    """The runs of ``t`` the law's tables and figures cannot use (not in :func:`usable_runs`), with
    why; ``forecasts=True``: those a page that also forecasts runs with no entropy leaves out (the
    runs with no score)."""
    if t is None or not len(t):
        return {}
    usable = set(usable_runs(t)) | (set(forecast_only_runs(t)) if forecasts else set())
    with_entropy = set(t.loc[t["metric"] == "entropy", "run_id"])
    out = {}
    for r in tt.run_ids(t):
        if r in usable:
            continue
        if r in with_entropy:
            why = NO_SCORE
        elif forecasts:  # neither: the score is what a page needs first
            why = (f"no score and no entropy (the run's keys: {run_keys(t, r)}; name them with `val_key` or "
                   "`score_key`, and `entropy_key`)")
        else:
            why = no_entropy(t, r)
        source = t.loc[t["run_id"] == r, "source"].iloc[0] if "source" in t.columns else ""
        out[r] = f"{why} ({source})" if source else why
    return out
