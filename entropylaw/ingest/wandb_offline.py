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

import fnmatch
import json
import math
import warnings
from array import array
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Iterable

import numpy as np

from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.ingest.common import RawRun, unique_run_ids
from entropylaw.ingest.leveldb_log import Damage, iter_records

NON_NUMERIC = "non-numeric value"
DAMAGED = "damaged .wandb region (rows unknown)"
BAD_STEP = "step metric is not an integer"
_NUMBER_START = frozenset("-0123456789NI")  # JSON numbers plus NaN / Infinity


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
    from wandb.proto import wandb_internal_pb2 as pb  # heavy import, needed only here

    path = Path(path)
    source = str(path)
    reader = _HistoryReader(step_key)
    config: dict = {}
    run_info: dict = {}
    damage = Damage()
    unparsed = 0
    new_record = pb.Record
    fast = _FastHistory(pb.HistoryItem)
    with open(path, "rb") as stream:
        for _offset, payload in iter_records(stream, damage, where=source):
            tag = _first_tag(payload)
            if tag in _SKIPPED_TAGS:
                continue
            if tag == _HISTORY_TAG:
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


# Record fields never read here (summary 3, output 4, stats 7, telemetry 11, output_raw 13),
# as the first tag after ``num``. Summaries are about half of a file: not parsing them doubles speed.
_SKIPPED_TAGS = frozenset({0x1a, 0x22, 0x3a, 0x5a, 0x6a})


_HISTORY_TAG = 0x12
_VALUE_TAG = b"\x82\x01"  # HistoryItem.value_json: field 16, length-delimited


@lru_cache(maxsize=1)
def _lite_record_class():
    """A message type reading a Record's history items as raw bytes (for :class:`_FastHistory`)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    field = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="entropylaw_wandb_lite.proto", package="entropylaw_lite",
                                               syntax="proto3")
    step = proto.message_type.add(name="Step")
    step.field.add(name="num", number=1, type=field.TYPE_INT64, label=field.LABEL_OPTIONAL)
    history = proto.message_type.add(name="History")
    history.field.add(name="item", number=1, type=field.TYPE_BYTES, label=field.LABEL_REPEATED)
    history.field.add(name="step", number=2, type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                      type_name=".entropylaw_lite.Step")
    record = proto.message_type.add(name="Record")
    record.field.add(name="history", number=2, type=field.TYPE_MESSAGE, label=field.LABEL_OPTIONAL,
                     type_name=".entropylaw_lite.History")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("entropylaw_lite.Record"))


class _FastHistory:
    """Decode the common history record 1.5x faster than item-by-item protobuf access.

    An item serialises as ``<key fields> 0x82 0x01 <len> <value_json>``. The key part
    repeats row after row, so a row's tuple of key parts is decoded once with the real
    ``HistoryItem`` (and must re-serialise to the same bytes) and cached; the values
    are then converted in bulk. Anything unusual (a non-number, a long value, a key
    part that is not canonical) returns None and the caller uses the general path.
    """

    def __init__(self, item_class):
        self.item_class = item_class
        self.record_class = _lite_record_class()
        self.layouts: dict[tuple[bytes, ...], tuple | None] = {}

    def decode(self, payload: bytes) -> tuple[dict[str, float], int | None] | None:
        record = self.record_class()
        try:
            record.ParseFromString(payload)
        except Exception:
            return None
        history = record.history
        parts = [item.partition(_VALUE_TAG) for item in history.item]
        heads = tuple([p[0] for p in parts])
        layout = self.layouts.get(heads, False)
        if layout is False:
            if len(self.layouts) > 10_000:
                self.layouts.clear()
            layout = self.layouts[heads] = self._layout(heads)
        if layout is None:
            return None
        keys, keep, step_at = layout
        tails = [p[2] for p in parts]
        try:
            if [t[0] for t in tails] != [len(t) - 1 for t in tails]:  # one length byte, then exactly the value
                return None
            values = list(map(float, [t[1:] for t in tails]))
        except (IndexError, ValueError):
            return None
        row = {keys[i]: values[i] for i in keep}
        if step_at is not None:
            w_step = _as_step(values[step_at])
        else:
            w_step = history.step.num if history.HasField("step") else None
        return row, w_step

    def _layout(self, heads: tuple[bytes, ...]):
        keys = []
        for head in heads:
            item = self.item_class()
            try:
                item.ParseFromString(head)
            except Exception:
                return None
            if item.value_json or item.SerializeToString() != head:
                return None
            keys.append(".".join(item.nested_key) if item.nested_key else item.key)
        keep = [i for i, key in enumerate(keys) if key[:1] != "_"]
        step_at = keys.index("_step") if "_step" in keys else None
        return keys, keep, step_at


def _first_tag(payload: bytes) -> int:
    """First protobuf tag byte of a Record after its ``num`` varint (-1 if none)."""
    i = 0
    if payload[:1] == b"\x08":
        i = 1
        while i < len(payload) and payload[i] & 0x80:
            i += 1
        i += 1
    return payload[i] if i < len(payload) else -1


class _HistoryReader:
    """Accumulates history rows compactly (array codes), resolving each key's step."""

    def __init__(self, step_key: str | None):
        self.step_key = step_key
        self.exact: dict[str, str] = {}             # metric name -> its step metric
        self.globs: list[tuple[str, str]] = []      # (glob, step metric), in declaration order
        self.step_of: dict[str, str | None] = {}    # resolved per key (None: use _step)
        self.last: dict[str, float] = {}            # last value of each step metric (step_sync)
        self.codes: dict[str, int] = {}
        self.steps, self.key_codes, self.values = array("q"), array("i"), array("d")
        self.auto_step = -1
        self.non_numeric: dict[str, int] = {}
        self.bad_steps = 0
        self.step_metrics: set[str] = {step_key} if step_key else set()

    def define(self, metric) -> None:
        """A ``define_metric`` declaration (or one W&B expanded from a glob)."""
        if not metric.step_metric:
            return
        if metric.name:
            self.exact[metric.name] = metric.step_metric
        elif metric.glob_name:
            self.globs.append((metric.glob_name, metric.step_metric))
        self.step_metrics.add(metric.step_metric)
        self.step_of.clear()

    def _step_metric(self, key: str) -> str | None:
        found = self.step_key or self.exact.get(key)
        if found is None:
            found = next((s for g, s in self.globs if fnmatch.fnmatchcase(key, g)), None)
        self.step_of[key] = found
        return found

    def decode(self, history) -> tuple[dict[str, float], int | None]:
        """A HistoryRecord -> (numeric values by key, W&B step or None); the general path."""
        row: dict[str, float] = {}
        w_step = None
        for item in history.item:
            nested = item.nested_key
            key = (nested[0] if len(nested) == 1 else ".".join(nested)) if nested else item.key
            text = item.value_json
            if key[:1] == "_":
                if key == "_step":
                    w_step = _as_step(text)
                continue
            if text[:1] in _NUMBER_START:
                try:
                    row[key] = float(text)
                    continue
                except ValueError:
                    pass
            self._add_json(row, key, text)
        if w_step is None and history.HasField("step"):
            w_step = history.step.num
        return row, w_step

    def add_row(self, row: dict[str, float], w_step: int | None) -> None:
        if w_step is None:  # newer SDKs: a row logged without step= is the previous step + 1
            w_step = self.auto_step + 1
        self.auto_step = w_step
        codes = self.codes
        code_list = [codes.get(key) for key in row]
        if None in code_list:
            for key in row:
                codes.setdefault(key, len(codes))
            code_list = [codes[key] for key in row]
        self.key_codes.extend(code_list)
        self.values.extend(row.values())
        if not self.step_metrics:
            self.steps.extend([w_step] * len(row))
            return
        steps = []
        for key in row:
            step = w_step
            metric = self.step_of[key] if key in self.step_of else self._step_metric(key)
            if metric is not None:
                found = row.get(metric, self.last.get(metric))
                if found is not None and float(found).is_integer():
                    step = int(found)
                elif found is not None:
                    self.bad_steps += 1
            steps.append(step)
        self.steps.extend(steps)
        for metric in self.step_metrics:
            if metric in row:
                self.last[metric] = row[metric]

    def _add_json(self, row: dict[str, float], key: str, text: str) -> None:
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        for flat_key, leaf in _flatten(key, value):
            if isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
                row[flat_key] = float(leaf)
            else:
                self.non_numeric[flat_key] = self.non_numeric.get(flat_key, 0) + 1

    def to_raw(self, run_id: str, source: str) -> RawRun:
        names = np.array(list(self.codes), dtype=object)
        keys = names[np.frombuffer(self.key_codes, dtype=np.int32)] if len(self.key_codes) else []
        raw = RawRun(run_id, source, steps=np.frombuffer(self.steps, dtype=np.int64),
                     keys=keys, values=np.frombuffer(self.values, dtype=np.float64))
        n_bad = sum(self.non_numeric.values())
        raw.report.read(len(self.values) + n_bad)
        if n_bad:
            raw.report.drop(NON_NUMERIC, n_bad)
            shown = ", ".join(sorted(self.non_numeric)[:10])
            raw.report.note(f"skipped {n_bad} non-numeric history values (keys: {shown}"
                            f"{', ...' if len(self.non_numeric) > 10 else ''})")
        if self.bad_steps:
            raw.report.note(f"{self.bad_steps} rows had a non-integer step metric; used W&B's _step for them")
        return raw


def _as_step(value) -> int | None:
    """W&B's ``_step`` as an int, None when it is not a finite number."""
    try:
        return int(float(value))
    except (ValueError, OverflowError):
        return None


def _flatten(key: str, value) -> Iterable[tuple[str, object]]:
    """Leaves of a nested dict value, keys joined with '.'; a W&B media object is one leaf."""
    if isinstance(value, dict) and "_type" not in value:
        for sub, inner in value.items():
            yield from _flatten(f"{key}.{sub}", inner)
    else:
        yield key, value


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
