"""Trackio projects (TRL ``report_to="trackio"``, veRL ``trainer.logger=['trackio']``).

Trackio keeps one SQLite database per project in its data directory (``TRACKIO_DIR``,
default ``~/.cache/huggingface/trackio``): ``<project>.db``. Its ``metrics`` table holds one
row per ``trackio.log`` call (``run_name``, ``step``, and the logged dict as JSON, NaN and
infinities as the strings ``"NaN"``/``"Infinity"``), its ``configs`` table each run's config
(``trackio/sqlite_storage.py``, ``SQLiteStorage.init_db``; schema version in
``PRAGMA user_version``). Trackio's own reader (``SQLiteStorage.get_logs``) only opens
projects inside its configured data directory and takes the project's lock file there,
so the file given is read with ``sqlite3``, read-only, and its values decoded by
trackio's own ``deserialize_values`` when trackio is installed.

Each run becomes a run of the table; rows are in write order, so a resumed run (a log
call at a step below one already logged) is resolved like a resumed console log. A
database that is locked, damaged, or of a schema newer than :data:`KNOWN_SCHEMA` stops
the read with one line; nothing is read from it.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import numpy as np

from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import RawRun
from entropylaw.readers.names import unique_run_ids
from entropylaw.readers.config_meta import meta_from_config
from entropylaw.terminal import count

KNOWN_SCHEMA = 2  # trackio 0.43's SQLiteStorage.SCHEMA_VERSION
NON_NUMERIC = "non-numeric value"
_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def is_trackio_db(tables: set[str]) -> bool:
    return {"metrics", "configs"} <= tables and "experiments" not in tables


def _decode(blob) -> dict:
    if not isinstance(blob, (bytes, bytearray, str)):
        raise ValueError(f"a {type(blob).__name__}, not JSON")
    data = json.loads(blob.decode("utf-8") if isinstance(blob, (bytes, bytearray)) else blob)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    try:
        from trackio.utils import deserialize_values
    except ImportError:  # the documented encoding, when trackio is not installed
        return {k: _SPECIAL.get(v, v) if isinstance(v, str) else v for k, v in data.items()}
    return deserialize_values(data)


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2)
    version = con.execute("PRAGMA user_version").fetchone()[0]
    if version > KNOWN_SCHEMA:
        con.close()
        raise EntropyLawError(f"{path}: Trackio database of schema version {version}, newer than this reader "
                              f"knows ({KNOWN_SCHEMA}); expected a database written by trackio <= 0.43 "
                              "(upgrade entropylaw)")
    return con


def _configs(con) -> dict[str, dict]:
    out = {}
    for run_name, config in con.execute("SELECT run_name, config FROM configs ORDER BY id"):
        try:
            out[run_name] = {k: v for k, v in _decode(config).items() if not k.startswith("_")}
        except (ValueError, UnicodeDecodeError):
            out[run_name] = {}
    return out


def read_trackio(path) -> list[RawRun]:
    """One :class:`RawRun` per run of a Trackio project database."""
    path = Path(path)
    try:
        con = _connect(path)
        try:
            rows = con.execute("SELECT id, run_name, step, metrics FROM metrics ORDER BY id").fetchall()
            configs = _configs(con)
        finally:
            con.close()
    except sqlite3.Error as err:
        raise EntropyLawError(f"{path}: cannot read the Trackio database ({err}; expected an intact, "
                              "unlocked trackio <project>.db)") from None
    by_run: dict[str, RawRun] = {}
    bad: dict[str, int] = {}
    for row_id, run_name, step, blob in rows:
        run_name = str(run_name)  # a damaged page can hold anything
        raw = by_run.get(run_name)
        if raw is None:
            raw = by_run[run_name] = RawRun(run_name, f"{path}#{run_name}", steps=[], keys=[], values=[],
                                            lines=[], ordered=True)
        try:
            if not isinstance(step, int) or isinstance(step, bool):
                raise ValueError("step is not an integer")
            data = _decode(blob)
        except (ValueError, UnicodeDecodeError):
            raw.report.read(1)
            raw.report.drop("unreadable metrics record", 1)
            bad[run_name] = bad.get(run_name, 0) + 1
            continue
        for key, value in data.items():
            if isinstance(value, dict):  # media, tables, histograms: not rows of ours
                continue
            raw.report.read(1)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raw.report.drop(NON_NUMERIC, 1)
                continue
            raw.steps.append(int(step))
            raw.keys.append(key)
            raw.values.append(float(value))
            raw.lines.append(int(row_id))
    if not by_run:
        raise EntropyLawError(f"{path}: Trackio database holds no logged metrics")
    names = unique_run_ids(list(by_run))
    runs = []
    for (run_name, raw), name in zip(by_run.items(), names):
        raw.run_id = name
        raw.steps = np.asarray(raw.steps, dtype=np.int64)
        raw.values = np.asarray(raw.values, dtype=np.float64)
        raw.keys = np.asarray(raw.keys, dtype=object)
        raw.lines = np.asarray(raw.lines, dtype=np.int64)
        if bad.get(run_name):
            n = bad[run_name]
            what = "is not a JSON object" if n == 1 else "are not JSON objects"
            raw.report.note(f"{count(n, 'metrics record')} {what}: dropped")
        raw.meta = meta_from_config(configs.get(run_name, {}))
        runs.append(raw)
    return runs
