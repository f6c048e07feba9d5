"""Each run's rows of a tidy table, found in one pass: what per-run loops slice from.

A project's table holds 200 runs in 20 M rows; masking the whole table once per run (and
per figure) costs minutes. :func:`split_runs` finds every run's rows at once (a slice of
the table where a run's rows are one block, as :func:`entropylaw.table.stack` leaves
them); :func:`blocks` and :func:`first_values` serve :func:`entropylaw.table.runs`.
Nothing here knows the table's schema: only its ``run_id`` column.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd


def column_values(col: pd.Series) -> np.ndarray:
    return col.array.codes if isinstance(col.dtype, pd.CategoricalDtype) else col.to_numpy()


def first_values(pieces: list[np.ndarray], dtype) -> pd.Categorical | np.ndarray:
    """Each block's first non-missing value (groupby's ``first``), as a column of ``dtype``."""
    text = isinstance(dtype, pd.CategoricalDtype)
    out = []
    for block in pieces:
        value = block[0]
        if value < 0 if text else np.isnan(value):  # missing in the run's first row: its first row that has it
            value = block[int(np.argmin(block < 0 if text else np.isnan(block)))]
        out.append(value)
    if text:
        return pd.Categorical.from_codes(np.array(out, dtype=np.int64), dtype=dtype)
    return np.array(out, dtype=dtype)


def blocks(codes: np.ndarray):
    """``(code of each block, its start, its end)`` when each code's rows are one block, else None."""
    if not len(codes):
        return np.zeros(0, codes.dtype), np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.concatenate([[0], np.flatnonzero(codes[1:] != codes[:-1]) + 1])
    block_codes = codes[starts]
    if len(np.unique(block_codes)) != len(block_codes):
        return None
    return block_codes, starts, np.append(starts[1:], len(codes))


def split_runs(df: pd.DataFrame, run_ids: Iterable[str] | None = None) -> dict[str, pd.DataFrame]:
    """Each run's rows (of ``run_ids``, default all) as a table of its own, found in one pass.

    What a per-run loop should slice from instead of masking the whole table once per run
    (200 runs of 100,000 rows: 200 masks of 20 M rows each). Every part has the columns,
    dtypes, row order and index labels ``df[df["run_id"] == run_id]`` would have, so any
    per-run computation gives the same result on it. Where a run's rows are contiguous (as
    :func:`stack` and :func:`entropylaw.readers.dispatch.load` leave them) the part is a
    slice of ``df`` (no copy); otherwise it is taken.

    >>> t = pd.DataFrame({"run_id": ["a", "a", "b", "a"], "step": [1, 2, 1, 3], "metric": "x", "value": 0.0})
    >>> {k: v["step"].tolist() for k, v in split_runs(t).items()}
    {'a': [1, 2, 3], 'b': [1]}
    """
    col = df["run_id"]
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes, names = col.cat.codes.to_numpy(), col.cat.categories
    else:
        codes, names = pd.factorize(col.to_numpy(), use_na_sentinel=True)
    wanted = None if run_ids is None else {str(r) for r in run_ids}
    parts: dict[str, pd.DataFrame] = {}
    found = blocks(codes)
    if found is not None:  # one block per run: slices
        for code, start, end in zip(*(b.tolist() for b in found)):
            if code < 0:
                continue
            name = str(names[code])
            if wanted is None or name in wanted:
                parts[name] = df.iloc[start:end]
        return parts
    order = np.argsort(codes, kind="stable")  # rows of each run together, in table order
    sorted_codes = codes[order]
    bounds = np.flatnonzero(sorted_codes[1:] != sorted_codes[:-1]) + 1
    first_seen = {}
    for idx in np.split(order, bounds):
        code = int(codes[idx[0]])
        if code >= 0 and (wanted is None or str(names[code]) in wanted):
            first_seen[int(idx[0])] = (str(names[code]), idx)
    for _, (name, idx) in sorted(first_seen.items()):  # runs in first-seen order, as run_ids() gives them
        parts[name] = df.take(idx)
    return parts
