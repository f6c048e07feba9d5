"""The tidy run table: the one interface between reading logs and analysing them.

One long ``pandas.DataFrame``, one row per (run, step, metric), with the run's metadata
on each row (tbparse style). Every text column is a pandas ``Categorical``: the
metadata of a run is stored once, as a category, and each row holds a 1- or 2-byte
code, so a row costs about 50 bytes in memory (parquet stores the same dictionary).
Assigning a *new* text value into part of a column needs :func:`set_text` (a plain
``df.loc[mask, col] = "new"`` would be refused by the categorical); whole-column
assignment is fine, and :func:`conform` re-encodes whatever it is given.

==========================  ========  =====================================================
column                      dtype     meaning
==========================  ========  =====================================================
``run_id``                  category  unique name of the run inside the table
``step``                    int64     training step (gradient step) the value belongs to
``metric``                  string    canonical name (below) or the source key unchanged
``value``                   float64   finite number
``model``                   string    model name, e.g. ``Qwen2.5-7B`` ("" if unknown)
``n_params``                float64   total parameters (NaN if unknown)
``n_params_nonembedding``   float64   parameters without input/output embeddings (NaN)
``algorithm``               string    ``grpo``, ``ppo``, ``rloo`` ... ("" if unknown)
``dataset``                 string    training data, e.g. ``gsm8k`` ("")
``seed``                    float64   random seed (NaN if unknown)
``source``                  string    file, directory or URI the run was read from
``entropy_key``             string    source key that became ``entropy`` ("" if none)
``score_key``               string    source key that became ``score`` ("")
``val_keys``                string    JSON object ``{"val/<bench>": "<source key>"}``
``config``                  string    JSON object: the trainer's printed config ("{}")
==========================  ========  =====================================================

Canonical metric names:

- ``entropy``: policy entropy, token-mean over valid tokens (veRL ``actor/entropy``), nats
- ``score``: training reward / accuracy of the step's rollouts (veRL ``critic/score/mean``)
- ``val/<benchmark>``: validation accuracy on one benchmark; ``val/mean``: their mean at
  steps where every benchmark was evaluated
- ``response_length``: mean response length in tokens

Every other numeric key is kept under its own name.

>>> import pandas as pd
>>> t = from_records([(0, "entropy", 0.5), (0, "score", 0.1), (1, "entropy", 0.4)],
...                  run_id="r1", model="Qwen2.5-0.5B")
>>> list(t.columns[:4])
['run_id', 'step', 'metric', 'value']
>>> series(t, "r1", "entropy").tolist()
[0.5, 0.4]
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from entropylaw.table import blocks as _blocks
from entropylaw.errors import EntropyLawError
from entropylaw.table.text import categorical as _categorical, constant as _constant
from entropylaw.table.blocks import split_runs  # noqa: F401  (the table's API; one pass over its rows)
from entropylaw.fileio import atomic_write

ENTROPY = "entropy"
SCORE = "score"
VAL_PREFIX = "val/"
VAL_MEAN = "val/mean"
RESPONSE_LENGTH = "response_length"

METRIC_COLUMNS = ["run_id", "step", "metric", "value"]
META_DEFAULTS: dict[str, object] = {
    "model": "",
    "n_params": np.nan,
    "n_params_nonembedding": np.nan,
    "algorithm": "",
    "dataset": "",
    "seed": np.nan,
    "source": "",
    "entropy_key": "",
    "score_key": "",
    "val_keys": "{}",
    # what the trainer's printed config says of the data and the schedule (JSON; readers/verl_console.py):
    # train_files, shuffle, total_steps, lr schedule
    "config": "{}",
}
META_COLUMNS = list(META_DEFAULTS)
COLUMNS = METRIC_COLUMNS + META_COLUMNS
TEXT_COLUMNS = ["run_id", "metric", "model", "algorithm", "dataset", "source",
                "entropy_key", "score_key", "val_keys", "config"]
_STRING_COLUMNS = TEXT_COLUMNS
_FLOAT_COLUMNS = ["value", "n_params", "n_params_nonembedding", "seed"]


def empty() -> pd.DataFrame:
    """A table with the schema and no rows."""
    return conform(pd.DataFrame({c: [] for c in COLUMNS}))


def conform(df: pd.DataFrame) -> pd.DataFrame:
    """Return ``df`` with exactly the schema's columns, in order, with their dtypes.

    Missing metadata columns get their defaults; extra columns are an error.
    """
    extra = [c for c in df.columns if c not in COLUMNS]
    if extra:
        raise EntropyLawError(f"run table has unknown columns {extra} (expected {COLUMNS})")
    missing = [c for c in METRIC_COLUMNS if c not in df.columns]
    if missing:
        raise EntropyLawError(f"run table lacks columns {missing} (expected at least {METRIC_COLUMNS})")
    out = df.copy(deep=False)  # pandas copy-on-write: assigning columns below never touches df
    for col, default in META_DEFAULTS.items():
        if col not in out.columns:
            out[col] = default
    out = out[COLUMNS]
    for col in _STRING_COLUMNS:
        out[col] = _categorical(out[col])
    for col in _FLOAT_COLUMNS:
        if out[col].dtype != np.float64:  # a float64 column is what this makes of it: not copied again
            out[col] = pd.to_numeric(out[col], errors="coerce").astype("float64")
    if out["step"].dtype != np.int64:
        out["step"] = pd.to_numeric(out["step"], errors="raise").astype("int64")
    return out.reset_index(drop=True)


def is_conformed(df: pd.DataFrame) -> bool:
    """``df`` already has what :func:`conform` would give it: the columns in order, text as
    categoricals with sorted categories, numbers in their dtypes (no per-row check)."""
    if list(df.columns) != COLUMNS:
        return False
    for col in _STRING_COLUMNS:
        dtype = df[col].dtype
        if not isinstance(dtype, pd.CategoricalDtype) or not pd.api.types.is_string_dtype(dtype.categories) \
                or not dtype.categories.is_monotonic_increasing:
            return False
    return all(df[c].dtype == np.float64 for c in _FLOAT_COLUMNS) and df["step"].dtype == np.int64


def from_records(records: Iterable[tuple[int, str, float]], run_id: str, **meta) -> pd.DataFrame:
    """Build a one-run table from ``(step, metric, value)`` triples and metadata."""
    df = pd.DataFrame(list(records), columns=["step", "metric", "value"])
    df.insert(0, "run_id", run_id)
    for key, value in meta.items():
        if key not in META_DEFAULTS:
            raise TypeError(f"unknown metadata field {key!r} (expected one of {META_COLUMNS})")
        df[key] = value if not isinstance(value, Mapping) else json.dumps(dict(value), sort_keys=True)
    return conform(df)


def from_frame(df: pd.DataFrame, run_id: str, **meta) -> pd.DataFrame:
    """Build a one-run table from a frame with columns step, metric, value (vectorised).

    >>> f = pd.DataFrame({"step": [0, 1], "metric": ["entropy", "entropy"], "value": [0.5, 0.4]})
    >>> from_frame(f, "r1", algorithm="grpo")[["run_id", "step", "value", "algorithm"]].values.tolist()
    [['r1', 0, 0.5, 'grpo'], ['r1', 1, 0.4, 'grpo']]
    """
    n = len(df)
    metric = df["metric"]
    metric = metric.array.copy() if isinstance(metric.dtype, pd.CategoricalDtype) else pd.Categorical(metric.to_numpy())
    # every column a new array of its own, none copied again: not stacked into 2-D blocks (copy=False)
    columns = {"run_id": _constant(run_id, n), "step": df["step"].to_numpy(copy=True), "metric": metric,
               "value": df["value"].to_numpy(copy=True)}
    for key, value in meta.items():
        if key not in META_DEFAULTS:
            raise TypeError(f"unknown metadata field {key!r} (expected one of {META_COLUMNS})")
        value = json.dumps(dict(value), sort_keys=True) if isinstance(value, Mapping) else value
        columns[key] = _meta_column(key, value, n)
    columns.update((k, _meta_column(k, v, n)) for k, v in META_DEFAULTS.items() if k not in columns)
    return conform(pd.DataFrame(columns, copy=False))


def _meta_column(key: str, value, n: int):
    """A metadata value as its column in the table's dtype (text: one category, n int8 codes; no column
    of n strings made and encoded), or the value as it is where :func:`conform` converts it."""
    missing = value is None or (isinstance(value, float) and value != value)
    if key in _STRING_COLUMNS and (missing or isinstance(value, str)):
        return _constant("" if missing else value, n)
    if key in _FLOAT_COLUMNS and (missing or isinstance(value, float)):
        return np.full(n, np.nan if missing else value, dtype=np.float64)
    return value


def set_text(df: pd.DataFrame, column: str, value: str, rows=None) -> pd.DataFrame:
    """Set a text column to ``value`` on ``rows`` (a boolean mask; all rows when None), in place.

    >>> t = from_records([(0, "entropy", 0.5), (1, "entropy", 0.4)], run_id="r1")
    >>> _ = set_text(t, "model", "Qwen2.5-7B", rows=t["step"] == 1)
    >>> t["model"].tolist()
    ['', 'Qwen2.5-7B']
    """
    value = str(value)
    if rows is None:
        df[column] = _constant(value, len(df))
        return df
    col = df[column]
    if not isinstance(col.dtype, pd.CategoricalDtype):
        col = _categorical(col)
    if value not in col.cat.categories:
        col = col.cat.add_categories([value])
    col = col.copy()
    col[np.asarray(rows, dtype=bool)] = value
    df[column] = col
    return df


def unique_runs(df: pd.DataFrame, used: set) -> pd.DataFrame:
    """``df`` with every run id not yet in ``used`` kept, and the others renamed ID-2, ID-3 ...;
    ``used`` grows by the ids given out (several sources read into one table).

    >>> t = pd.DataFrame({"run_id": ["a", "a", "b"], "step": [1, 2, 1], "metric": "x", "value": 0.0})
    >>> used = {"a"}
    >>> list(unique_runs(t, used)["run_id"]), sorted(used)
    (['a-2', 'a-2', 'b'], ['a', 'a-2', 'b'])
    """
    return rename_runs(df, unique_names(pd.unique(df["run_id"]), used))


def unique_names(run_ids: Iterable[str], used: set) -> dict[str, str]:
    """The renames :func:`unique_runs` makes for these run ids (first-seen order); ``used`` grows."""
    renames = {}
    for run_id in run_ids:
        new, n = run_id, 1
        while new in used:
            n += 1
            new = f"{run_id}-{n}"
        used.add(new)
        if new != run_id:
            renames[run_id] = new
    return renames


def rename_runs(df: pd.DataFrame, mapping: Mapping[str, str]) -> pd.DataFrame:
    """A copy of ``df`` with run ids renamed (renaming a category: no per-row work)."""
    if not mapping:
        return df
    out = df.copy()
    col = _categorical(out["run_id"])
    new = [mapping.get(c, c) for c in col.cat.categories]
    if len(set(new)) < len(new):  # two runs renamed to one id: merge their categories
        out["run_id"] = col.astype(str).replace(dict(mapping)).astype("category")
    else:
        out["run_id"] = col.cat.rename_categories(new)
    return out


def stack(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate conformed tables, merging their categories (no per-row text work)."""
    from pandas.api.types import union_categoricals

    tables = [conform(t) if not all(isinstance(t[c].dtype, pd.CategoricalDtype) for c in _STRING_COLUMNS)
              else t for t in tables]
    if len(tables) == 1:
        return tables[0]
    cols = {}
    for col in COLUMNS:
        if col in _STRING_COLUMNS:
            cols[col] = union_categoricals([t[col].array for t in tables], ignore_order=True)
        else:
            cols[col] = np.concatenate([t[col].to_numpy() for t in tables])
    return conform(pd.DataFrame(cols))


def concat(tables: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Stack tables; run ids must stay unique across them."""
    tables = [t for t in tables if len(t)]
    if not tables:
        return empty()
    seen: dict[str, str] = {}
    for t in tables:
        for run_id, src in t.groupby("run_id", sort=False)["source"].first().items():
            if run_id in seen and seen[run_id] != src:
                raise EntropyLawError(
                    f"run id {run_id!r} appears in both {seen[run_id]} and {src} "
                    "(give one of them another run id)")
            seen[run_id] = src
    return stack(tables)


def validate(df: pd.DataFrame, where: str = "run table") -> pd.DataFrame:
    """Check schema and content; return the conformed table or raise a one-line error."""
    out = conform(df)
    if not np.isfinite(out["value"].to_numpy()).all():
        raise EntropyLawError(f"{where}: non-finite values in column 'value'")
    dup = out.duplicated(["run_id", "step", "metric"])
    if dup.any():
        row = out[dup].iloc[0]
        raise EntropyLawError(
            f"{where}: {int(dup.sum())} duplicate (run_id, step, metric) rows, "
            f"first {row.run_id!r} step {row.step} {row.metric!r}")
    return out


def runs(df: pd.DataFrame) -> pd.DataFrame:
    """One row per run with its metadata (each column's first non-missing value) and its
    number of steps, in first-seen order."""
    if not len(df) or not is_conformed(df) or df["run_id"].cat.codes.min() < 0:
        meta = df.groupby("run_id", sort=False)[META_COLUMNS].first()
        meta["n_steps"] = df.groupby("run_id", sort=False)["step"].nunique()
        return meta.reset_index()
    # the same frame from each run's rows: a groupby of 20 M rows costs seconds, and the
    # report asks for this once per figure
    cats = df["run_id"].cat.categories
    blocks = _blocks.blocks(df["run_id"].cat.codes.to_numpy())
    columns = META_COLUMNS + ["step"]
    if blocks is not None:  # each run one block: views of its rows
        block_codes, starts, ends = blocks
        spans = list(zip(starts.tolist(), ends.tolist()))
        pieces = {col: [values[i:j] for i, j in spans]
                  for col in columns for values in [_blocks.column_values(df[col])]}
    else:  # runs interleaved: each run's rows taken
        parts = split_runs(df)
        block_codes = np.array([cats.get_loc(r) for r in parts], dtype=np.int64)
        pieces = {col: [_blocks.column_values(p[col]) for p in parts.values()] for col in columns}
    cols = {"run_id": pd.Categorical.from_codes(block_codes, dtype=df["run_id"].dtype)}
    for col in META_COLUMNS:
        cols[col] = _blocks.first_values(pieces[col], df[col].dtype)
    cols["n_steps"] = np.array([len(pd.unique(steps)) for steps in pieces["step"]], dtype=np.int64)
    return pd.DataFrame(cols)


def run_ids(df: pd.DataFrame) -> list[str]:
    """The run ids in first-seen order."""
    col = df["run_id"]
    if isinstance(col.dtype, pd.CategoricalDtype) and len(col):
        codes = col.cat.codes.to_numpy()
        if codes.min() >= 0:  # the code of each block of equal codes, then unique: no 20 M-row hashing
            starts = np.concatenate([[0], np.flatnonzero(codes[1:] != codes[:-1]) + 1])
            return [col.cat.categories[c] for c in pd.unique(codes[starts])]
    return list(pd.unique(col))


def series(df: pd.DataFrame, run_id: str, metric: str) -> pd.Series:
    """The values of one metric of one run, indexed by step (sorted)."""
    rows = df[(df["run_id"] == run_id) & (df["metric"] == metric)]
    return rows.set_index("step")["value"].sort_index().rename(metric)


def wide(df: pd.DataFrame, run_id: str, metrics: Iterable[str] | None = None) -> pd.DataFrame:
    """One run as a step x metric frame (NaN where a metric was not logged at a step)."""
    rows = df[df["run_id"] == run_id]
    if metrics is not None:
        rows = rows[rows["metric"].isin(list(metrics))]
    rows = rows.assign(metric=rows["metric"].astype(str))  # no empty columns for unused categories
    return rows.pivot(index="step", columns="metric", values="value").sort_index()


def val_metrics(df: pd.DataFrame, run_id: str | None = None) -> list[str]:
    """Canonical validation metric names present (``val/<bench>``, ``val/mean``)."""
    rows = df if run_id is None else df[df["run_id"] == run_id]
    names = sorted(str(m) for m in pd.unique(rows["metric"]) if str(m).startswith(VAL_PREFIX))
    return names


def write(df: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write a table to ``.parquet`` or ``.csv`` atomically (temp file, then rename)."""
    path = Path(path)
    out = validate(df, where=str(path))
    with atomic_write(path) as tmp:
        if path.suffix.lower() == ".csv":
            out.to_csv(tmp, index=False)
        else:
            out.to_parquet(tmp, index=False)
    return path


def read(path: str | os.PathLike) -> pd.DataFrame:
    """Read a table written by :func:`write` (parquet or csv) and validate it."""
    path = Path(path)
    if not path.exists():
        raise EntropyLawError(f"{path}: no such file")
    try:
        df = pd.read_csv(path) if path.suffix.lower() == ".csv" else _read_parquet(path)
    except Exception as err:  # pyarrow/pandas raise many types for a bad file
        raise EntropyLawError(f"{path}: cannot read as a run table ({type(err).__name__}: {err})") from None
    return validate(df, where=str(path))


def _read_parquet(path: Path) -> pd.DataFrame:
    """Text columns come back as categoricals straight from parquet's dictionaries."""
    import pyarrow.parquet as pq

    names = set(pq.read_schema(path).names)
    return pq.read_table(path, read_dictionary=[c for c in _STRING_COLUMNS if c in names]).to_pandas()


def is_table(df: pd.DataFrame) -> bool:
    """True when ``df`` is a DataFrame with the tidy table's metric columns (anything else: False)."""
    return isinstance(df, pd.DataFrame) and all(c in df.columns for c in METRIC_COLUMNS)
