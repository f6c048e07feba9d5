"""entropylaw's own tidy run table (``run_id, step, metric, value`` ...) read back, a hand-edited CSV too.

A row the table cannot hold is dropped and counted with its line (a CSV's line, a parquet's row), as the
other readers count theirs: a ``value`` that is text or not finite, a ``step`` that is missing, not an
integer, below 0 or past a 64-bit integer, a row without its ``run_id`` or ``metric``. The rest is read
as it is, validated (:func:`entropylaw.table.validate`).

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "runs.csv")
...     _ = open(p, "w").write("run_id,step,metric,value\\nr,1,entropy,0.5\\nr,2.5,entropy,0.4\\n,3,entropy,0.3\\n")
...     df, report = read_tidy(p)
>>> df["step"].tolist(), dict(report.dropped)
([1], {'missing or non-integer step': 1, 'missing run_id or metric': 1})
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError
from entropylaw.readers.accounts import IngestReport
from entropylaw.readers.common import NEGATIVE_STEP, STEP_LIMIT, STEP_RANGE, existing_file
from entropylaw.readers.compressed import inner_suffix
from entropylaw.terminal import count

NON_NUMERIC = "non-numeric value"
MISSING_STEP = "missing or non-integer step"
NO_NAME = "missing run_id or metric"


def read_tidy(path: str | os.PathLike) -> tuple[pd.DataFrame, IngestReport]:
    """entropylaw's own table, validated; the rows it cannot hold dropped and counted (the module's
    docstring)."""
    path = existing_file(path, "a run table")
    report = IngestReport(str(path))
    try:
        if inner_suffix(path) in (".csv", ".tsv"):
            df = pd.read_csv(path, sep="\t" if inner_suffix(path) == ".tsv" else ",", encoding_errors="replace")
        else:
            df = table._read_parquet(path)  # its dictionaries as categoricals
    except OSError as err:
        if err.errno is not None:  # the file system's error: said by the CLI as such
            raise
        raise EntropyLawError(f"{path}: cannot read as a run table ({type(err).__name__}: {err})") from None
    except Exception as err:  # pandas/pyarrow raise many types for a bad file
        raise EntropyLawError(f"{path}: cannot read as a run table ({type(err).__name__}: {err})") from None
    report.read(len(df))
    csv = inner_suffix(path) != ".parquet"
    if "value" in df.columns:
        df = _drop_bad_values(df, report, csv=csv)
    if {"run_id", "step", "metric"} <= set(df.columns):
        df = _drop_bad_keys(df, report, csv=csv)
    df = table.validate(df, where=str(path))
    report.keep(len(df))
    report.note(f"tidy run table with {count(df['run_id'].nunique(), 'run')}")
    return df, report


def _drop_bad_values(df: pd.DataFrame, report: IngestReport, csv: bool) -> pd.DataFrame:
    """Rows of a tidy table whose value is text or not finite: dropped, counted, located."""
    attrs = dict(df.attrs)
    values = pd.to_numeric(df["value"], errors="coerce").to_numpy(dtype=np.float64)
    present = df["value"].notna().to_numpy()
    text = present & np.isnan(values) & ~df["value"].astype(str).str.strip().str.lower().isin(
        ["nan", "-nan", "+nan"]).to_numpy()
    non_finite = ~np.isfinite(values) & ~text
    where = "line" if csv else "row"
    for mask, reason in ((text, NON_NUMERIC), (non_finite, "non-finite value")):
        _said(df, mask, reason, "'value'", report, where)
    keep = ~(text | non_finite)
    out = df[keep].assign(value=values[keep])
    out.attrs.update(attrs)
    return out


def _said(df: pd.DataFrame, mask: np.ndarray, reason: str, column: str, report: IngestReport, where: str) -> None:
    """Rows ``mask`` dropped for ``reason``: counted, and noted with their first lines (rows)."""
    if not mask.any():
        return
    rows = np.nonzero(mask)[0]
    shown = ", ".join(str(int(r) + (2 if where == "line" else 1)) for r in rows[:5])
    more = f", ... ({len(rows) - 5} more)" if len(rows) > 5 else ""
    report.drop(reason, len(rows))
    report.note(f"{reason} in column {column} at {where} {shown}{more} (dropped)")


def _drop_bad_keys(df: pd.DataFrame, report: IngestReport, csv: bool) -> pd.DataFrame:
    """Rows of a tidy table whose step is no run's step (missing, 2.5, -4, 1e30) or that name no run or
    no metric: dropped, counted, located. The steps kept as int64."""
    attrs = dict(df.attrs)
    where = "line" if csv else "row"
    steps = pd.to_numeric(df["step"], errors="coerce").to_numpy(dtype=np.float64)
    whole = np.isfinite(steps) & (np.floor(steps) == steps)
    far = whole & (np.abs(np.where(whole, steps, 0)) >= STEP_LIMIT)
    negative = whole & ~far & (steps < 0)
    unnamed = np.zeros(len(df), dtype=bool)
    for col in ("run_id", "metric"):
        names = df[col]
        blank = [v for v in pd.unique(names.dropna()) if not str(v).strip()]  # a parquet's categories: few
        unnamed |= (names.isna() | names.isin(blank)).to_numpy()
    bad = {MISSING_STEP: ~whole, STEP_RANGE: far, NEGATIVE_STEP: negative}
    taken = np.zeros(len(df), dtype=bool)
    for reason, mask in [*bad.items(), (NO_NAME, unnamed)]:
        mask = mask & ~taken  # one reason a row
        _said(df, mask, reason, "'run_id' or 'metric'" if reason == NO_NAME else "'step'", report, where)
        taken |= mask
    if not taken.any():
        return df
    out = df[~taken].assign(step=steps[~taken].astype(np.int64))
    out.attrs.update(attrs)
    return out
