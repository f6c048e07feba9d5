"""A run logged without a step: every value at one step (TensorBoard's ``add_scalar(tag, value)`` with no
``global_step`` writes step 0, as does ``mlflow.log_metric(key, value)`` with no ``step``).

Read as it stands, each key would keep one value of its whole curve and drop the rest as logged twice
at the same step. Instead each key's values are numbered in the order they were logged, 1, 2, ..., and
the row account says so: the n-th entropy and the n-th reward share step n.

>>> from entropylaw.readers.accounts import IngestReport
>>> df = pd.DataFrame({"step": [0] * 4, "key": ["H", "r", "H", "r"], "value": [0.9, 0.1, 0.8, 0.2]})
>>> report = IngestReport("tb")
>>> number_stepless(df, report)["step"].tolist()
[1, 1, 2, 2]
>>> report.notes[0][:58]
'every value is logged at step 0 (the run gives no step): e'
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.readers.accounts import IngestReport


def number_stepless(df: pd.DataFrame, report: IngestReport) -> pd.DataFrame:
    """``df`` (step, key, value[, line]) in source order, with each key's values numbered 1, 2, ... where
    every row is at one step and some key has more than one; else ``df`` unchanged."""
    steps = df["step"].to_numpy()
    # at step 0, where the trackers put a value logged with no step; a log's one step of several rows a step
    # (a first refresh of a live run, per micro-batch) is that step's rows, averaged as any step's are
    if len(steps) < 2 or "axis" in df.columns or (steps != 0).any() or not df["key"].duplicated().any():
        return df
    if "line" in df.columns:
        df = df.iloc[np.argsort(df["line"].to_numpy(), kind="stable")]
    numbered = df.groupby("key", sort=False, observed=True).cumcount().to_numpy() + 1
    report.note(f"every value is logged at step {int(steps[0])} (the run gives no step): each key's values are "
                f"read in the order logged, as steps 1 to {int(numbered.max())}", changed=True)
    return df.assign(step=numbered.astype(np.int64))
