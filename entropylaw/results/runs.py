"""Which runs can be used, the score each is fitted to, and each run's look.

>>> from entropylaw import table
>>> t = table.from_records([(0, "entropy", 0.5), (0, "score", 0.1)], run_id="r1")
>>> performance_metric(t, "r1"), usable_runs(t)
('score', ['r1'])
"""

from __future__ import annotations

import pandas as pd

import entropylaw.table as tt
from entropylaw.fit.pairing import fitted_score_key, no_entropy
from entropylaw.table.looks import RunStyles


def performance_metric(t: pd.DataFrame, run_id: str) -> str | None:
    """The score the law is fitted to (the fit's own rule, :func:`entropylaw.fit.pairing.score_key`),
    or None when the run has none."""
    return fitted_score_key(t, run_id) or None


def run_styles(t: pd.DataFrame) -> RunStyles:
    """One look per run of the table (colour, then line style and marker past 8 runs)."""
    return RunStyles(tt.run_ids(t))


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


def left_out_runs(t: pd.DataFrame | None) -> dict[str, str]:
    """The runs of ``t`` the law's tables and figures cannot use (not in :func:`usable_runs`), with why."""
    if t is None or not len(t):
        return {}
    usable = set(usable_runs(t))
    with_entropy = set(t.loc[t["metric"] == "entropy", "run_id"])
    out = {}
    for r in tt.run_ids(t):
        if r in usable:
            continue
        why = (no_entropy(t, r) if r not in with_entropy
               else "no score to pair the entropy with (no validation score, no training score)")
        source = t.loc[t["run_id"] == r, "source"].iloc[0] if "source" in t.columns else ""
        out[r] = f"{why} ({source})" if source else why
    return out
