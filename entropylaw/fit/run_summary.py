"""What was read: one line per run (``entropylaw summary``, :func:`entropylaw.fit.run_summary`).

Columns: run id, number of steps, the model, data set and algorithm read (from the log, its
config or its name: what the forecast's priors and take-off rates go by), the source keys that
became entropy / score / validation, and the first and last value of entropy, score and the
validation score the law is fitted on (the same rule as the fit:
:func:`entropylaw.fit.pairing.score_key`).

>>> import pandas as pd
>>> from entropylaw import table
>>> t = table.from_records([(1, "entropy", 0.5), (2, "entropy", 0.25), (2, "val/gsm8k", 0.6)], run_id="r",
...                        entropy_key="actor/entropy", val_keys={"val/gsm8k": "val/test_score/gsm8k"})
>>> s = summarize(t)
>>> s[["run_id", "steps", "entropy_first", "entropy_last", "val", "val_last"]].values.tolist()
[['r', 2, 0.5, 0.25, 'val/gsm8k', 0.6]]
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.fit.pairing import fitted_score_key
from entropylaw.readers.no_number import said_of
from entropylaw.fit.text_table import fmt_table

COLUMNS = ["run_id", "steps", "model", "dataset", "algorithm", "entropy_key", "score_key", "val_keys",
           "entropy_first", "entropy_last",
           "score_first", "score_last", "val", "val_first", "val_last"]


def _ends(df: pd.DataFrame, run_id: str, metric: str) -> tuple[float, float]:
    s = table.series(df, run_id, metric) if metric else pd.Series(dtype=float)
    return (float(s.iloc[0]), float(s.iloc[-1])) if len(s) else (np.nan, np.nan)


def _metrics_by_run(df: pd.DataFrame) -> dict[str, set[str]]:
    """Each run's metrics, read once for every run (not a scan of the table per run and metric)."""
    return {str(rid): set(map(str, m.unique())) for rid, m in df.groupby("run_id", observed=True)["metric"]}


def _key(metrics: set[str], key: str, metric: str) -> str:
    """The source key that became ``metric``; a tidy table's own metric where no key is recorded (a
    hand-written table of ``entropy`` and ``score`` rows names no source key: the metric is its own);
    ``metrics``: the run's (:func:`_metrics_by_run`)."""
    if key:
        return key
    return metric if metric in metrics else ""


def _said(value) -> str:
    return "" if value is None or value != value else str(value)  # a missing one (None, NaN) is blank


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """The per-run summary as a frame (columns :data:`COLUMNS`)."""
    rows = []
    metrics = _metrics_by_run(df)
    for meta in table.runs(df).itertuples(index=False):
        run_id = meta.run_id
        mine = metrics.get(str(run_id), set())
        val = fitted_score_key(df, run_id)
        val = val if val.startswith(table.VAL_PREFIX) else ""
        val_keys = json.loads(meta.val_keys or "{}")
        rows.append({
            "run_id": run_id, "steps": int(meta.n_steps), "model": _said(meta.model),
            "dataset": _said(meta.dataset), "algorithm": _said(meta.algorithm),
            "entropy_key": _key(mine, meta.entropy_key, table.ENTROPY),
            "score_key": _key(mine, meta.score_key, table.SCORE), "val_keys": ", ".join(val_keys.values()),
            **dict(zip(["entropy_first", "entropy_last"], _ends(df, run_id, table.ENTROPY))),
            **dict(zip(["score_first", "score_last"], _ends(df, run_id, table.SCORE))),
            "val": val, **dict(zip(["val_first", "val_last"], _ends(df, run_id, val))),
        })
    return pd.DataFrame(rows, columns=COLUMNS)


# the text table's headers (two lines where a number is narrower than its name) and what a
# narrow terminal leaves out first; the frame and the JSON keep every column
SHOWN = [("run", "run_id"), ("steps", "steps"), ("model", "model"), ("data", "dataset"),
         ("algo-\nrithm", "algorithm"), ("entropy\nkey", "entropy_key"), ("score\nkey", "score_key"),
         ("validation keys", "val_keys"), ("entropy\nfirst", "entropy_first"), ("entropy\nlast", "entropy_last"),
         ("score\nfirst", "score_first"), ("score\nlast", "score_last"), ("val", "val"), ("val\nfirst", "val_first"),
         ("val\nlast", "val_last")]
OPTIONAL = ("validation keys", "score\nkey", "entropy\nkey", "algo-\nrithm", "data", "model", "score\nfirst",
            "entropy\nfirst", "val\nfirst")


def format_summary(summary: pd.DataFrame, width: int | None = None) -> str:
    """Plain-text table that fits ``width`` (the terminal's, else 120), numbers to 4 decimals,
    empty cells as '-'."""
    rows = summary.replace("", "-").to_dict(orient="records")
    return fmt_table(rows, SHOWN, width=width, optional=OPTIONAL,
                     wraps=("run", "model", "entropy\nkey", "score\nkey", "validation keys", "val"))


def not_found(df: pd.DataFrame) -> list[str]:
    """One line per kind of run whose entropy or score no key was found for (their cells in the
    summary are '-'): what is missing, the keys the runs have, and the option that names it.

    >>> t = table.from_records([(1, "loss", 0.5), (1, "my_ent", 0.9)], run_id="a")
    >>> not_found(t)
    ['a: no entropy and no score found among its keys (loss, my_ent): name them with `entropy_key` and `score_key`']
    """
    groups: dict[tuple, list[str]] = {}
    lost_lines: list[str] = []
    metrics = _metrics_by_run(df)
    for meta in table.runs(df).itertuples(index=False):
        own = metrics.get(str(meta.run_id), set())
        # a tidy table's own entropy, score or val/<bench> rows are found, whatever key columns it has
        has_val = any(m.startswith(table.VAL_PREFIX) for m in own)
        lacks = [(what, option) for what, option, found in
                 (("entropy", "entropy_key", meta.entropy_key or table.ENTROPY in own),
                  ("score", "score_key", meta.score_key or meta.val_keys not in ("", "{}")
                   or table.SCORE in own or has_val))
                 if not found]
        lost = [said_of(df, str(meta.run_id), what) for what, _ in lacks]
        if any(lost):  # logged, every value NaN: said of the run alone, not "no score found among its keys"
            lost_lines += [f"{meta.run_id}: {why}" for why in lost if why]
            lacks = [lack for lack, why in zip(lacks, lost) if not why]
        if lacks:
            keys = tuple(sorted(own))
            groups.setdefault((tuple(lacks), keys), []).append(str(meta.run_id))
    out = []
    for (lacks, keys), runs in groups.items():
        more = ", ..." if len(runs) > 3 else ""
        who = runs[0] if len(runs) == 1 else f"{len(runs)} runs ({', '.join(runs[:3])}{more})"
        shown = ", ".join(keys[:12]) + (f", ... ({len(keys) - 12} more)" if len(keys) > 12 else "")
        whose = "its" if len(runs) == 1 else "their"
        out.append(f"{who}: no {' and no '.join(w for w, _ in lacks)} found among {whose} keys ({shown}): name "
                   f"{'it' if len(lacks) == 1 else 'them'} with " + " and ".join(f"`{o}`" for _, o in lacks))
    return lost_lines + out
