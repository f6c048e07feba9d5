"""SwanLab offline and local runs (veRL ``trainer.logger=['swanlab']`` with
``SWANLAB_MODE=offline`` or ``local``).

SwanLab writes each run to ``swanlog/run-<time>-<id>/``: one record file
``run-<id>.swanlab`` (a LevelDB-style log of ``swanlab.record.v1.Record`` protobufs: a
``start`` record with the run's name, then a ``scalar`` record per logged number, with its
key and step) and ``files/config.yaml`` (the run config, W&B-style ``{value: ...}``
wrapped). The records are read with SwanLab's own ``DataStoreReader`` and ``Record``
message (``swanlab/sdk/internal/core_python/store``, as ``swanlab sync`` reads them), one
record at a time: SwanLab's iterator stops quietly at a damaged record, so its ``scan``
is called directly and the damage is counted here (the records after it cannot be
located in this format, so the rest of the file is charged, estimated from its size).

``path`` may be the ``swanlog/`` directory (every run in it), one run directory, or one
``.swanlab`` file.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from entropylaw._optional import require
from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import RawRun
from entropylaw.readers.names import unique_run_ids
from entropylaw.readers.config_meta import meta_from_config
from entropylaw.terminal import count

DAMAGED = "damaged SwanLab record (rest of file unreadable)"


def run_files(path) -> list[Path]:
    """The ``run-*.swanlab`` files ``path`` stands for."""
    path = Path(path)
    if path.is_file():
        return [path] if path.suffix == ".swanlab" else []
    return sorted(p for p in path.glob("*.swanlab") if p.is_file()) or \
        sorted(p for p in path.glob("*/*.swanlab") if p.is_file())


def _modules(where: str):
    store = require("swanlab.sdk.internal.core_python.store", extra="swanlab", purpose=f"reading {where}")
    record_pb2 = require("swanlab.proto.swanlab.record.v1.record_pb2", extra="swanlab", purpose=f"reading {where}")
    exceptions = require("swanlab.exceptions", extra="swanlab", purpose=f"reading {where}")
    return store, record_pb2.Record, exceptions.DataStoreError


def _config(run_dir: Path) -> dict:
    config = run_dir / "files" / "config.yaml"
    if not config.is_file():
        return {}
    import yaml  # swanlab depends on PyYAML

    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
    except (yaml.YAMLError, OSError, UnicodeDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    # each top-level entry is wrapped as {desc, sort, value}
    return {k: v["value"] if isinstance(v, dict) and "value" in v and set(v) <= {"value", "desc", "sort"} else v
            for k, v in data.items()}


def _read_file(file: Path, store, record_class, store_error) -> tuple[str, float, RawRun]:
    reader = store.DataStoreReader()
    try:
        reader.open(file)
    except (store_error, AssertionError) as err:
        raise EntropyLawError(f"{file}: not a SwanLab run file ({err}; expected a run-<id>.swanlab "
                              "written by swanlab 0.10)") from None
    name, run_key, started, steps, keys, values = "", "", 0.0, [], [], []
    damaged_at = None
    try:
        while True:
            try:
                payload = reader.scan()
            except (store_error, AssertionError, ValueError):
                damaged_at = reader._index  # the record that failed starts here
                break
            if payload is None:
                break
            record = record_class()
            try:
                record.ParseFromString(payload)
            except Exception:  # noqa: BLE001 -- checksummed but not a Record: not ours
                continue
            if record.HasField("start") and not name:
                name, run_key = record.start.name, record.start.id
                started = record.start.started_at.seconds + record.start.started_at.nanos * 1e-9
            elif record.HasField("scalar"):
                steps.append(int(record.scalar.step))
                keys.append(record.scalar.key)
                values.append(float(record.scalar.value.number))
    finally:
        reader.close()
    raw = RawRun(name or file.parent.name, str(file), steps=np.asarray(steps, dtype=np.int64),
                 keys=np.asarray(keys, dtype=object), values=np.asarray(values, dtype=np.float64), ordered=True)
    raw.report.read(len(steps))
    if damaged_at is not None:
        rest = max(os.path.getsize(file) - damaged_at, 0)
        per_row = damaged_at / max(len(steps), 1) if steps else rest
        lost = max(1, round(rest / max(per_row, 1)))
        raw.report.read(lost)
        raw.report.drop(DAMAGED, lost)
        raw.report.note(f"damaged record at byte {damaged_at} of {file.name}: the last {rest} bytes could not be "
                        f"read (about {count(lost, 'value')}, estimated from the bytes per value before it)")
    raw.meta = meta_from_config(_config(file.parent))
    return run_key or str(file), started, raw


def _joined(pieces: list[RawRun]) -> RawRun:
    """The files of one resumed run (SwanLab starts a new run directory, same run id), in
    the order they were started: one run whose step counter goes back at the resume."""
    if len(pieces) == 1:
        return pieces[0]
    first = pieces[0]
    raw = RawRun(pieces[-1].run_id, f"{first.source} (+{len(pieces) - 1} resumed)",
                 steps=np.concatenate([p.steps for p in pieces]), keys=np.concatenate([p.keys for p in pieces]),
                 values=np.concatenate([p.values for p in pieces]), ordered=True, meta=pieces[-1].meta or first.meta)
    for p in pieces:
        raw.report.read(p.report.rows_read)
        for reason, n in p.report.dropped.items():
            raw.report.drop(reason, n)
        raw.report.notes.extend(p.report.notes)
    raw.report.note(f"one run in {len(pieces)} SwanLab run files (resumed): "
                    + ", ".join(Path(p.source).parent.name for p in pieces))
    return raw


def read_swanlab(path) -> list[RawRun]:
    """One :class:`RawRun` per SwanLab run file under ``path``."""
    files = run_files(path)
    if not files:
        raise EntropyLawError(f"{path}: no SwanLab run files (run-<id>.swanlab) found")
    store, record_class, store_error = _modules(str(path))
    by_run: dict[str, list] = {}
    for f in files:
        run_key, started, raw = _read_file(f, store, record_class, store_error)
        by_run.setdefault(run_key, []).append((started, raw.source, raw))
    runs = [_joined([raw for _s, _src, raw in sorted(group, key=lambda g: g[:2])]) for group in by_run.values()]
    for raw, name in zip(runs, unique_run_ids([r.run_id for r in runs])):
        raw.run_id = name
    if not any(len(r.steps) for r in runs):
        raise EntropyLawError(f"{path}: SwanLab runs hold no scalars (expected swanlab.log of numbers)")
    return runs
