"""Read W&B runs from local ``.wandb`` files (offline runs, or the local copy of online runs).

``path`` may be a ``run-<id>.wandb`` file, a run directory (``offline-run-*`` or
``run-*``) or a ``wandb/`` directory holding several runs (one :class:`RawRun` each).
The file is streamed block by block (:mod:`entropylaw.ingest.leveldb_log`) and each
record is a ``wandb.proto.wandb_internal_pb2.Record``:

- ``history`` records are the rows. A value's key is its ``nested_key`` path joined
  with ``"."`` (``{"train": {"acc": 1}}`` becomes ``train.acc``, the name the W&B server
  and ``Run.scan_history`` give it), or its plain ``key`` in old files; dict values from
  old files are flattened the same way. Keys starting with ``_`` (``_step``,
  ``_runtime``, ``_timestamp``, ``_wandb``) are W&B bookkeeping, not rows. Values that
  are not numbers (strings, booleans, media objects) are counted as dropped rows
  (reason ``non-numeric value``). ``summary`` records are not history and are ignored.
- The step. veRL calls ``wandb.log(data, step=global_step)``, so W&B's ``_step`` *is*
  the trainer step. Hugging Face (TRL) and OpenRLHF call ``wandb.log`` without ``step=``
  (``_step`` then counts log calls, and train and eval rows get different ``_step``
  values for the same trainer step); they log ``train/global_step`` and declare it with
  ``define_metric("*", step_metric="train/global_step")``. The file records those
  declarations, so a key's step is the value of its declared step metric in the same
  row (or its last value, as W&B's ``step_sync`` does), else ``_step``. ``step_key``
  overrides this for every key. Newer SDKs write no ``_step`` for rows logged without
  ``step=``; those get the previous step + 1, as the W&B backend numbers them.
- ``run`` and ``config`` records give the metadata (:func:`meta_from_config`).

Damage (a crashed run's cut tail, a bad block) is never fatal: every intact record is
read and each damaged region is counted in the report (one dropped row per region, as
its size in rows is unknowable) with a note saying how many bytes were lost.

>>> import tempfile, pathlib
>>> from entropylaw.ingest.leveldb_log import write_log
>>> from wandb.proto import wandb_internal_pb2 as pb
>>> recs = [pb.Record(run=pb.RunRecord(run_id="abc", display_name="demo"))]
>>> for step in range(3):
...     h = pb.Record(history=pb.HistoryRecord())
...     _ = h.history.item.add(nested_key=["_step"], value_json=str(step))
...     _ = h.history.item.add(nested_key=["actor/entropy"], value_json=repr(1.0 / (step + 1)))
...     recs.append(h)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "run-abc.wandb"
>>> _ = path.write_bytes(write_log([r.SerializeToString() for r in recs]))
>>> [raw] = read_wandb_offline(path)
>>> raw.run_id, raw.steps.tolist(), raw.keys.tolist(), raw.values.tolist()
('demo', [0, 1, 2], ['actor/entropy', 'actor/entropy', 'actor/entropy'], [1.0, 0.5, 0.3333333333333333])
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path, PurePosixPath

from entropylaw._optional import require
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.ingest.common import RawRun, unique_run_ids
from entropylaw.ingest.leveldb_log import Damage, iter_records
from entropylaw.ingest.wandb_history import (  # noqa: F401 (NON_NUMERIC is re-exported)
    HISTORY_TAG, NON_NUMERIC, SKIPPED_TAGS, FastHistory, HistoryReader, first_tag)

DAMAGED = "damaged .wandb region (rows unknown)"


def read_wandb_offline(path: str | Path, step_key: str | None = None) -> list[RawRun]:
    """All runs under ``path`` (a ``.wandb`` file, a run directory or a ``wandb/`` directory).

    A single file or run without usable history raises :class:`EntropyLawError`; in a
    directory of several runs such a run is skipped with an :class:`EntropyLawWarning`.
    """
    files = find_wandb_files(path)
    if len(files) == 1:
        return [read_wandb_file(files[0], step_key)]
    runs = []
    for file in files:
        try:
            runs.append(read_wandb_file(file, step_key))
        except EntropyLawError as err:
            warnings.warn(f"skipped: {err}", EntropyLawWarning, stacklevel=2)
    if not runs:
        raise EntropyLawError(f"{path}: none of its {len(files)} .wandb files has usable history")
    for raw, name in zip(runs, unique_run_ids(r.run_id for r in runs)):
        raw.run_id = name
    return runs


def find_wandb_files(path: str | Path) -> list[Path]:
    """The ``.wandb`` files a path names, each once, in name order (``latest-run`` links skipped)."""
    path = Path(path).expanduser()
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise EntropyLawError(f"{path}: no such file or directory")
    found = sorted(path.glob("*.wandb")) or sorted(
        p for p in path.glob("*/*.wandb") if not p.parent.is_symlink())
    unique = list({p.resolve(): p for p in found}.values())
    if not unique:
        raise EntropyLawError(f"{path}: no .wandb files (expected run-<id>.wandb here or in "
                              "offline-run-*/ or run-*/ subdirectories)")
    return unique


def read_wandb_file(path: str | Path, step_key: str | None = None) -> RawRun:
    """One ``.wandb`` file -> :class:`RawRun` (see the module docstring)."""
    # heavy import, needed only here (the [wandb] extra)
    pb = require("wandb.proto.wandb_internal_pb2", extra="wandb", purpose=f"reading {path}")

    path = Path(path)
    source = str(path)
    reader = HistoryReader(step_key)
    config: dict = {}
    run_info: dict = {}
    damage = Damage()
    unparsed = 0
    new_record = pb.Record
    fast = FastHistory(pb.HistoryItem)
    with open(path, "rb") as stream:
        for _offset, payload in iter_records(stream, damage, where=source):
            tag = first_tag(payload)
            if tag in SKIPPED_TAGS:
                continue
            if tag == HISTORY_TAG:
                decoded = fast.decode(payload)
                if decoded is not None:
                    reader.add_row(*decoded)
                    continue
            try:
                record = new_record()  # reusing one message would grow its upb arena without bound
                record.ParseFromString(payload)
            except Exception:  # protobuf's DecodeError; a framing-valid but corrupt payload
                unparsed += 1
                continue
            kind = record.WhichOneof("record_type")
            if kind == "history":
                reader.add_row(*reader.decode(record.history))
            elif kind == "config":
                _apply_config(config, record.config)
            elif kind == "metric":
                reader.define(record.metric)
            elif kind == "run":
                run = record.run
                run_info.update({k: v for k, v in (("run_id", run.run_id), ("name", run.display_name),
                                                   ("project", run.project), ("entity", run.entity)) if v})
                _apply_config(config, run.config)
    raw = reader.to_raw(run_info.get("name") or run_info.get("run_id") or path.stem.removeprefix("run-"), source)
    raw.meta.update(meta_from_config(config))
    raw.meta.update({f"wandb_{k}": v for k, v in run_info.items()})
    report = raw.report
    if damage.events:
        report.read(len(damage.events))
        for event in damage.events:
            report.drop(f"{DAMAGED}: {event.reason}", 1)
        where = ", ".join(f"byte {e.offset} ({e.reason})" for e in damage.events[:5])
        more = f" and {len(damage.events) - 5} more" if len(damage.events) > 5 else ""
        report.note(f"damaged file: {damage.bytes_lost} bytes unreadable in {len(damage.events)} "
                    f"region(s) at {where}{more}; every intact record before and after was read")
    if unparsed:
        report.read(unparsed)
        report.drop(f"{DAMAGED}: record is not a valid protobuf", unparsed)
        report.note(f"{unparsed} record(s) passed their checksum but could not be decoded")
    if len(raw.steps) == 0:
        what = "no numeric history"
        if damage.events:
            what += f" (damaged: {damage.events[0].reason} at byte {damage.events[0].offset})"
        raise EntropyLawError(f"{source}: {what}; nothing to read from this W&B run")
    return raw


def _apply_config(config: dict, record) -> None:
    """Apply a ConfigRecord's updates and removals to ``config`` (nested dict)."""
    for item in record.update:
        path = list(item.nested_key) or [item.key]
        try:
            value = json.loads(item.value_json)
        except ValueError:
            value = item.value_json
        node = config
        for part in path[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[path[-1]] = value
    for item in record.remove:
        path = list(item.nested_key) or [item.key]
        node = config
        for part in path[:-1]:
            node = node.get(part, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            node.pop(path[-1], None)


# config paths, first found wins (SPEC section 6 trainers; "a.b" also matches a flat "a.b" key)
MODEL_KEYS = ["actor_rollout_ref.model.path", "model_name_or_path", "model_name", "model.path",
              "model.name", "model", "pretrain"]
ALGORITHM_KEYS = ["algorithm.adv_estimator", "adv_estimator", "algorithm"]
SEED_KEYS = ["seed", "data.seed", "actor_rollout_ref.rollout.seed"]
DATASET_KEYS = ["dataset", "dataset_name", "data.train_files", "prompt_data"]


def meta_from_config(config: dict) -> dict:
    """Run metadata (model, algorithm, seed, dataset) from a W&B run config.

    Works on nested configs (veRL's ``{"actor_rollout_ref": {"model": {"path": ...}}}``)
    and flat ones (``{"model_name_or_path": ...}``); W&B's ``{"value": ...}`` wrappers
    (as in ``config.yaml``) are unwrapped.

    >>> meta_from_config({"actor_rollout_ref": {"model": {"path": "/ckpt/Qwen2.5-7B"}},
    ...                   "algorithm": {"adv_estimator": "GRPO"}, "data": {"seed": 1,
    ...                   "train_files": "~/data/gsm8k/train.parquet"}})
    {'model': 'Qwen2.5-7B', 'algorithm': 'grpo', 'seed': 1.0, 'dataset': 'gsm8k'}
    >>> meta_from_config({"model_name_or_path": "Qwen/Qwen2.5-0.5B-Instruct", "seed": 42,
    ...                   "dataset_name": "trl-lib/DeepMath-103K"})
    {'model': 'Qwen/Qwen2.5-0.5B-Instruct', 'seed': 42.0, 'dataset': 'trl-lib/DeepMath-103K'}
    """
    meta: dict = {}
    model = _lookup(config, MODEL_KEYS, str)
    if model:
        meta["model"] = _model_name(model)
    algorithm = _lookup(config, ALGORITHM_KEYS, str)
    if algorithm:
        meta["algorithm"] = algorithm.lower()
    seed = _lookup(config, SEED_KEYS, (int, float))
    if seed is not None and not isinstance(seed, bool) and math.isfinite(seed):
        meta["seed"] = float(seed)
    dataset = _lookup(config, DATASET_KEYS, (str, list))
    if dataset:
        meta["dataset"] = _dataset_name(dataset)
    return meta


def _lookup(config: dict, paths: list[str], kind):
    for path in paths:
        for value in (_get_path(config, path.split(".")), _unwrap(config.get(path))):
            if value is not None and isinstance(value, kind) and value != "":
                return value
    return None


def _get_path(config, parts: list[str]):
    node = config
    for part in parts:
        node = _unwrap(node)
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return _unwrap(node)


def _unwrap(node):
    if isinstance(node, dict) and set(node) <= {"value", "desc"} and "value" in node:
        return node["value"]
    return node


def _model_name(model: str) -> str:
    """A local checkpoint path becomes its last component; a hub id stays ``org/name``."""
    if model.startswith(("/", "~", ".")) or model.count("/") > 1:
        return PurePosixPath(model.rstrip("/")).name or model
    return model


def _dataset_name(dataset) -> str:
    """``~/data/gsm8k/train.parquet`` -> ``gsm8k``; several files -> names joined with '+'."""
    items = dataset if isinstance(dataset, list) else [dataset]
    names = []
    for item in items:
        text = str(item)
        if text.endswith((".parquet", ".json", ".jsonl", ".csv", ".arrow")):
            p = PurePosixPath(text)
            text = p.parent.name if p.stem in {"train", "test", "val", "validation", "data"} else p.stem
        if text not in names:
            names.append(text)
    return "+".join(names)
