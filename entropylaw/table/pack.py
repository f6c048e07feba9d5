"""Run tables in a compact form for moving between processes, and stacking many of them.

A process pool reading a project returns one table per run. Pickled as DataFrames, 200
tables of 100,000 rows arrive as 1 GB of frames, and stacking them with pandas then holds
two more copies (the concatenated columns, and the frame that consolidates them): 4 GB
for a 1 GB table. :func:`pack` keeps each column exactly but small: a text column as its
category codes and names, a column holding one value (a run's metadata) as that value,
the step as 32-bit integers when it fits. :func:`stack_packed` writes the packs into the
final columns, allocated once, freeing each pack's column as it is copied: the result is
what :func:`entropylaw.table.stack` returns for the same tables, to the bit.

>>> import entropylaw.table as table
>>> a = table.from_records([(1, "entropy", 0.5), (2, "entropy", 0.4)], run_id="a", model="m")
>>> b = table.from_records([(1, "score", 0.1)], run_id="b")
>>> stack_packed([pack(a), pack(b)]).equals(table.stack([a, b]))
True
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

import entropylaw.table as table


class Packed:
    """One conformed run table, packed: ``n`` rows, and per column one of
    ``("text", codes, names)``, ``("one", value)`` or ``("array", values)``."""

    def __init__(self, n: int, columns: dict):
        self.n, self.columns = n, columns

    def run_ids(self) -> list[str]:
        """The run ids in first-seen order, as :func:`entropylaw.table.run_ids` gives them."""
        col = self.columns["run_id"]
        if col[0] == "one":
            return [col[1]] if self.n else []
        return [col[2][c] for c in pd.unique(col[1])]

    def rename_runs(self, mapping: Mapping[str, str]) -> None:
        col = self.columns["run_id"]
        if col[0] == "one":
            self.columns["run_id"] = ("one", mapping.get(col[1], col[1]))
        else:
            self.columns["run_id"] = ("text", col[1], [mapping.get(c, c) for c in col[2]])


def _same(values: np.ndarray) -> bool:
    """Every value bit-identical to the first (NaN and -0.0 included)."""
    if not len(values):
        return False
    bits = values.view(np.int64) if values.dtype == np.float64 else values
    return bool((bits == bits[0]).all())


def pack(df: pd.DataFrame) -> Packed:
    """``df`` (a table as :func:`entropylaw.table.conform` leaves it) packed; see the module."""
    df = table.conform(df) if not table.is_conformed(df) else df
    columns = {}
    for col in table.COLUMNS:
        s = df[col]
        if isinstance(s.dtype, pd.CategoricalDtype):
            names = [str(c) for c in s.cat.categories]
            codes = s.cat.codes.to_numpy()
            columns[col] = ("one", names[0]) if len(names) == 1 and len(codes) else ("text", codes, names)
            continue
        values = s.to_numpy()
        if _same(values):
            columns[col] = ("one", values[0])
        elif values.dtype == np.int64 and len(values) and values.min() >= -2**31 and values.max() < 2**31:
            columns[col] = ("array", values.astype(np.int32))  # widened back by stack_packed
        else:
            columns[col] = ("array", values)
    return Packed(len(df), columns)


def stack_packed(packs: list[Packed]) -> pd.DataFrame:
    """One table from the packs, in order (run ids must already be unique across them).

    Each pack's columns are released as they are copied, so the packs and the result
    together never hold much more than the result."""
    n = sum(p.n for p in packs)
    out = {}
    for col in table.COLUMNS:
        if col in table.TEXT_COLUMNS:
            names = sorted({name for p in packs for name in _names(p.columns[col])})
            index = pd.Index(names, dtype="str") if names else pd.Index([], dtype="str")
            codes = np.empty(n, dtype=np.int8 if len(names) < 2**7 else np.int16 if len(names) < 2**15
                             else np.int32)
            start = 0
            for p in packs:
                kind, *rest = p.columns.pop(col)
                where = index.get_indexer(_names((kind, *rest)))
                codes[start:start + p.n] = where[0] if kind == "one" else where[rest[0]]
                start += p.n
            out[col] = pd.Categorical.from_codes(codes, categories=index)
        else:
            dtype = np.int64 if col == "step" else np.float64
            values = np.empty(n, dtype=dtype)
            start = 0
            for p in packs:
                kind, data = p.columns.pop(col)
                values[start:start + p.n] = data
                start += p.n
            out[col] = values
    return pd.DataFrame(out, copy=False)  # copy=False: no consolidation into 2-D blocks (a copy)


def _names(column) -> list[str]:
    return [column[1]] if column[0] == "one" else list(column[2])
