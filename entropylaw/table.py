"""The tidy run table: the one interface between reading logs and analysing them.

One long ``pandas.DataFrame``, one row per (run, step, metric), with the run's metadata
repeated on each row (tbparse style; parquet stores the repeats as a dictionary, so
they cost nothing):

==========================  ========  =====================================================
column                      dtype     meaning
==========================  ========  =====================================================
``run_id``                  string    unique name of the run inside the table
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
import tempfile
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError

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
}
META_COLUMNS = list(META_DEFAULTS)
COLUMNS = METRIC_COLUMNS + META_COLUMNS
_STRING_COLUMNS = ["run_id", "metric", "model", "algorithm", "dataset", "source",
                   "entropy_key", "score_key", "val_keys"]
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
    out = df.copy()
    for col, default in META_DEFAULTS.items():
        if col not in out.columns:
            out[col] = default
    out = out[COLUMNS]
    for col in _STRING_COLUMNS:
        if isinstance(out[col].dtype, pd.StringDtype):  # already text: no round trip via objects
            out[col] = out[col].fillna("")
        else:
            out[col] = out[col].astype(object).where(out[col].notna(), "").astype(str)
    for col in _FLOAT_COLUMNS:
        out[col] = pd.to_numeric(out[col], errors="coerce").astype("float64")
    out["step"] = pd.to_numeric(out["step"], errors="raise").astype("int64")
    return out.reset_index(drop=True)


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
    out = pd.DataFrame({"run_id": _text(np.zeros(n, np.int32), [run_id]), "step": df["step"].to_numpy(),
                        "metric": _text(*pd.factorize(df["metric"].to_numpy())),
                        "value": df["value"].to_numpy()})
    for key, value in meta.items():
        if key not in META_DEFAULTS:
            raise TypeError(f"unknown metadata field {key!r} (expected one of {META_COLUMNS})")
        value = json.dumps(dict(value), sort_keys=True) if isinstance(value, Mapping) else value
        out[key] = _text(np.zeros(n, np.int32), [value]) if isinstance(value, str) else value
    return conform(out)


def _text(codes: np.ndarray, names) -> pd.Series:
    """A text column from integer codes into ``names``, built in Arrow (fast for repeats)."""
    import pyarrow as pa

    names = pa.array([str(x) for x in names], pa.large_string())
    arr = pa.DictionaryArray.from_arrays(pa.array(np.asarray(codes, dtype=np.int32)), names)
    return pd.Series(pd.array(arr.cast(pa.large_string()), dtype="str"))


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
    return conform(pd.concat(tables, ignore_index=True))


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
    """One row per run with its metadata and its number of steps, in first-seen order."""
    meta = df.groupby("run_id", sort=False)[META_COLUMNS].first()
    meta["n_steps"] = df.groupby("run_id", sort=False)["step"].nunique()
    return meta.reset_index()


def run_ids(df: pd.DataFrame) -> list[str]:
    return list(pd.unique(df["run_id"]))


def series(df: pd.DataFrame, run_id: str, metric: str) -> pd.Series:
    """The values of one metric of one run, indexed by step (sorted)."""
    rows = df[(df["run_id"] == run_id) & (df["metric"] == metric)]
    return rows.set_index("step")["value"].sort_index().rename(metric)


def wide(df: pd.DataFrame, run_id: str, metrics: Iterable[str] | None = None) -> pd.DataFrame:
    """One run as a step x metric frame (NaN where a metric was not logged at a step)."""
    rows = df[df["run_id"] == run_id]
    if metrics is not None:
        rows = rows[rows["metric"].isin(list(metrics))]
    return rows.pivot(index="step", columns="metric", values="value").sort_index()


def val_metrics(df: pd.DataFrame, run_id: str | None = None) -> list[str]:
    """Canonical validation metric names present (``val/<bench>``, ``val/mean``)."""
    rows = df if run_id is None else df[df["run_id"] == run_id]
    names = sorted(m for m in pd.unique(rows["metric"]) if m.startswith(VAL_PREFIX))
    return names


def write(df: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write a table to ``.parquet`` or ``.csv`` atomically (temp file, then rename)."""
    path = Path(path)
    out = validate(df, where=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; the table is an ordinary file
    try:
        if path.suffix == ".csv":
            out.to_csv(tmp, index=False)
        else:
            out.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def read(path: str | os.PathLike) -> pd.DataFrame:
    """Read a table written by :func:`write` (parquet or csv) and validate it."""
    path = Path(path)
    if not path.exists():
        raise EntropyLawError(f"{path}: no such file")
    try:
        df = pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)
    except Exception as err:  # pyarrow/pandas raise many types for a bad file
        raise EntropyLawError(f"{path}: cannot read as a run table ({type(err).__name__}: {err})") from None
    return validate(df, where=str(path))


def is_table(df: pd.DataFrame) -> bool:
    """True when ``df`` has the tidy table's metric columns."""
    return all(c in df.columns for c in METRIC_COLUMNS)
