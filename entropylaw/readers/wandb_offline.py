"""Read W&B runs from local ``.wandb`` files (offline runs, or the local copy of online runs).

``path`` may be a ``run-<id>.wandb`` file, a run directory (``offline-run-*`` or
``run-*``) or a ``wandb/`` directory holding several runs (one :class:`RawRun` each).
The file is streamed block by block (:mod:`entropylaw.readers.leveldb_log`) and each
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
- ``run`` and ``config`` records give the metadata (:func:`meta_from_config`). Where they name no
  model, vLLM's engine line in the run's console output does (``Initializing a V0 LLM engine
  (v0.8.4) with config: model='.../Qwen/Qwen2.5-Math-1.5B'``: the CS336 grid's runs), said.

Damage (a crashed run's cut tail, flipped bits) is never fatal: every intact record is
read, and each damaged region is counted in the report with the rows it cost: the steps
each key is missing around it (:mod:`entropylaw.readers.damage`), or the history items its
bytes still show; one row "(rows unknown)" only when neither tells (a cut tail inside a
history record), with a note saying how many bytes were lost.

>>> import tempfile, pathlib
>>> from entropylaw.readers.leveldb_log import write_log
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
import re
import warnings
from array import array
from pathlib import Path

from entropylaw._optional import require
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.readers.common import RawRun
from entropylaw.readers.compressed import inner_suffix, open_log, strip_compression
from entropylaw.readers.config_meta import _model_name, meta_from_config
from entropylaw.readers.model_size import params_from_name
from entropylaw.readers.damage import Region, charge, nearest_record_rows, rows_lost_in_gaps
from entropylaw.readers.leveldb_log import TRUNCATED, Damage, iter_records
from entropylaw.readers.wandb_log_calls import join_log_calls, on_call_counter
from entropylaw.readers.wandb_processes import (join_processes, join_restarts, join_roles, name_segments,
                                                other_processes)
from entropylaw.readers.wandb_history import (
    HISTORY_TAG, SKIPPED_TAGS, FastHistory, HistoryReader, _lite_record_class, first_tag)
from entropylaw.terminal import count

DAMAGED = "damaged .wandb record"
# the policy vLLM serves, as its engine's first line states it (the line stands in a record's string field)
TELEMETRY_TAG = 0x5a  # Record.telemetry: field 11, length-delimited
VLLM_MODEL = re.compile(rb"LLM engine .{0,80}?with config: model='([^'\x00-\x1f]{1,300})'")


def read_wandb_offline(path: str | Path, step_key: str | None = None, named=()) -> list[RawRun]:
    """All runs under ``path`` (a ``.wandb`` file, a run directory or a ``wandb/`` directory); ``named``: the keys
    the user names (``entropy_key`` ...), read on the step the run declares for them.

    A single file or run without usable history raises :class:`EntropyLawError`; in a
    directory of several runs such a run is skipped with an :class:`EntropyLawWarning`.
    """
    files = find_wandb_files(path)
    if len(files) == 1:
        raw = read_wandb_file(files[0], step_key, named=named)
        other_processes(raw, files[0])  # wandb/latest-run of a run several processes write: said
        return [raw]
    runs, empty = [], []
    for file in files:
        try:
            raw = read_wandb_file(file, step_key, empty_ok=True, named=named)
        except EntropyLawError as err:
            warnings.warn(f"skipped: {err}", EntropyLawWarning, stacklevel=2)
            continue
        (runs if len(raw.steps) else empty).append(raw)
    runs, empty = join_processes(runs, empty)  # one run's files written by several processes (slime)
    runs = join_restarts(runs)  # a resumed run's processes, each on W&B's count of log calls from 0
    runs = join_roles(runs)  # a group's trainer and orchestrator runs (prime-rl)
    for raw in empty:
        warnings.warn(f"skipped: {raw.source}: no numeric history; nothing to read from this W&B run",
                      EntropyLawWarning, stacklevel=2)
    if not runs:
        raise EntropyLawError(f"{path}: none of its {len(files)} .wandb files has usable history")
    name_segments(runs)  # a resumed run's folders: one name, one run once merged (readers.merge)
    return runs


def find_wandb_files(path: str | Path) -> list[Path]:
    """The ``.wandb`` files a path names, each once, in name order (``latest-run`` links skipped)."""
    path = Path(path).expanduser()
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise EntropyLawError(f"{path}: no such file or directory")
    found = sorted(wandb_files_in(path)) or sorted(
        p for d in path.iterdir() if d.is_dir() and not d.is_symlink() for p in wandb_files_in(d))
    unique = list({p.resolve(): p for p in found}.values())
    if not unique:
        raise EntropyLawError(f"{path}: no .wandb files (expected run-<id>.wandb here or in "
                              "offline-run-*/ or run-*/ subdirectories)")
    return unique


def wandb_files_in(folder: Path) -> list[Path]:
    """The ``run-*.wandb`` files directly in ``folder``, compressed ones (``.wandb.gz``, ``.zst`` ...) too."""
    return [p for p in folder.glob("*.wandb*") if inner_suffix(p) == ".wandb" and p.is_file()]


def read_wandb_file(path: str | Path, step_key: str | None = None, empty_ok: bool = False, named=()) -> RawRun:
    """One ``.wandb`` file -> :class:`RawRun` (see the module docstring); ``empty_ok``: one without
    history (a run's driver process: its name and config) is returned, not an error."""
    # heavy import, needed only here (the [wandb] extra)
    pb = require("wandb.proto.wandb_internal_pb2", extra="wandb", purpose=f"reading {path}")

    path = Path(path)
    source = str(path)
    reader = HistoryReader(step_key, named)
    config: dict = {}
    run_info: dict = {}
    damage = Damage()
    unparsed = 0
    new_record = pb.Record
    fast = FastHistory(pb.HistoryItem)
    positions = array("q")  # index of the record each numeric row came from (for damage counts)
    console_model = ""
    step_log: bool | None = None  # the telemetry's set_step_log (None: no telemetry)
    started, runtime = None, None  # the process's start (epoch seconds) and, where it finished, its runtime
    with open_log(path) as stream:  # a .wandb.gz / .zst is read as it decompresses
        for index, (_offset, payload) in enumerate(iter_records(stream, damage, where=source)):
            tag = first_tag(payload)
            if not console_model and tag != HISTORY_TAG and b"LLM engine" in payload:  # an output record
                console_model = _served_model(payload)
            if tag == TELEMETRY_TAG and not step_log:  # a few records: whether the run logged with step=
                said = _logs_with_step(payload, new_record)
                step_log = step_log if said is None else said
                continue
            if tag in SKIPPED_TAGS:
                continue
            if tag == HISTORY_TAG:
                before = len(reader.values)
                decoded = fast.decode(payload)
                if decoded is not None:
                    reader.add_row(*decoded)
                    positions.extend([index] * (len(reader.values) - before))
                    continue
            try:
                record = new_record()  # reusing one message would grow its upb arena without bound
                record.ParseFromString(payload)
            except Exception:  # protobuf's DecodeError; a framing-valid but corrupt payload
                unparsed += 1
                continue
            kind = record.WhichOneof("record_type")
            if kind == "history":
                fast.last_time = _row_time(record.history, fast.last_time)
                before = len(reader.values)
                reader.add_row(*reader.decode(record.history))
                positions.extend([index] * (len(reader.values) - before))
            elif kind == "config":
                _apply_config(config, record.config)
            elif kind == "metric":
                reader.define(record.metric)
            elif kind == "telemetry":  # wandb-core writes its control fields first: not seen by its tag
                step_log = step_log or bool(record.telemetry.feature.set_step_log)
            elif kind == "run":
                run = record.run
                run_info.update({k: v for k, v in (("run_id", run.run_id), ("name", run.display_name),
                                                   ("project", run.project), ("entity", run.entity),
                                                   ("group", run.run_group)) if v})
                _apply_config(config, run.config)
                if run.HasField("start_time") and started is None:
                    started = run.start_time.seconds + run.start_time.nanos / 1e9
            elif kind == "exit":
                runtime = record.exit.runtime
    raw = reader.to_raw(run_info.get("name") or run_info.get("run_id")
                        or Path(strip_compression(path.name)).stem.removeprefix("run-"), source)
    if reader.kept is not None:  # the values of undeclared keys not read (wandb_axes.Undeclared)
        positions = array("q", (p for p, keep in zip(positions, reader.kept) if keep))
    raw.meta.update(meta_from_config(config))
    raw.meta.update({f"wandb_{k}": v for k, v in run_info.items()})
    report = raw.report
    if console_model and not raw.meta.get("model"):
        raw.meta["model"] = _model_name(console_model)
        report.note(f"model {raw.meta['model']} read from the run's console output (vLLM's engine line: "
                    f"model={console_model!r})")
    if damage.events:
        regions = [Region(e.offset, e.reason, e.bytes_lost, e.records_before, e.payload,
                          seen=rows_in_damaged_record(e.payload, pb.HistoryItem)) for e in damage.events]
        for region in regions:  # a cut history record: as many rows as the record before it
            if region.seen is None and region.payload and first_tag(region.payload) == HISTORY_TAG:
                region.estimate = nearest_record_rows(positions, region.position)
        gaps = rows_lost_in_gaps(raw.steps, raw.keys, positions, [r.position for r in regions])
        charge(report, regions, gaps, ".wandb record")
    if unparsed:
        report.read(unparsed)
        report.drop(f"{DAMAGED}: intact checksum but not a valid protobuf (rows unknown)", unparsed)
        report.note(f"{count(unparsed, 'record')} passed {'its' if unparsed == 1 else 'their'} checksum but could not "
                    "be decoded")
    # a history-less file (a driver's: its name and config) whose only damage is its last record cut is one
    # being written (a live run), not a damaged one: it still names its run
    being_written = all(e.reason == TRUNCATED for e in damage.events)
    if len(raw.steps) == 0 and not (empty_ok and being_written):
        what = "no numeric history"
        if damage.events:
            what += f" (damaged: {damage.events[0].reason} at byte {damage.events[0].offset})"
        raise EntropyLawError(f"{source}: {what}; nothing to read from this W&B run")
    # when the process ran: processes of one run id that ran at once are no resume (wandb_processes); the exit
    # record's runtime is whole seconds, cut down, so its last row's time can be later: the later of the two
    end = None if started is None or runtime is None else max(started + runtime, fast.last_time or 0.0)
    raw.meta["wandb_span"] = (started, end)
    raw.meta["wandb_call_steps"] = on_call_counter(raw, step_log)  # a resumed process's restart (wandb_processes)
    if raw.meta["wandb_call_steps"]:
        join_log_calls(raw)
    return raw


def _row_time(history, before: float | None) -> float | None:
    """A history row's ``_timestamp`` (epoch seconds); ``before`` where it has none that reads as a number."""
    for item in history.item:
        if item.key == "_timestamp":
            try:
                return float(item.value_json)
            except ValueError:
                return before
    return before


def _logs_with_step(payload: bytes, new_record) -> bool | None:
    """A telemetry record's ``set_step_log`` (the run called ``wandb.log(..., step=)``); None: not readable."""
    try:
        record = new_record()
        record.ParseFromString(payload)
    except Exception:  # noqa: BLE001 -- protobuf's DecodeError: a damaged record says nothing
        return None
    return bool(record.telemetry.feature.set_step_log)


# first tag bytes of Record fields that are not history (single-byte tags, length-delimited);
# a first byte with the high bit set is a field number >= 16: not history either
_OTHER_TAGS = frozenset({0x1a, 0x22, 0x2a, 0x32, 0x3a, 0x42, 0x4a, 0x52, 0x5a, 0x62, 0x6a, 0x72, 0x7a})


def run_has_ended(path: str | Path) -> bool:
    """Whether a ``.wandb`` file holds the run's exit record.

    wandb writes it at ``run.finish()``, after every history record (the file is written in
    order); its service process writes the file, so a file read the moment ``finish()``
    returns can still lack its last records.
    """
    pb = require("wandb.proto.wandb_internal_pb2", extra="wandb", purpose=f"reading {path}")
    with open_log(Path(path)) as stream:
        for _offset, payload in iter_records(stream, Damage(), where=str(path)):
            try:
                kind = pb.Record.FromString(payload).WhichOneof("record_type")
            except Exception:  # noqa: BLE001 -- protobuf's DecodeError: a corrupt record is no exit record
                continue
            if kind == "exit":
                return True
    return False


def rows_in_damaged_record(payload: bytes | None, item_class) -> int | None:
    """Rows a damaged record's bytes still show: its history items (``_`` keys are not rows),
    0 for another kind of record, None when the bytes say nothing reliable."""
    if not payload:
        return None
    tag = first_tag(payload)
    if tag in _OTHER_TAGS or (tag >= 0 and tag & 0x80):
        return 0
    if tag != HISTORY_TAG:
        return None
    record = _lite_record_class()()
    try:
        record.ParseFromString(payload)
        rows = 0
        for raw_item in record.history.item:
            item = item_class()
            item.ParseFromString(raw_item)
            key = ".".join(item.nested_key) if item.nested_key else item.key
            rows += not key.startswith("_")
    except Exception:  # noqa: BLE001 -- damaged bytes: protobuf's DecodeError or anything else
        return None
    return rows


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


def _served_model(payload: bytes) -> str:
    """The model of vLLM's engine line in a console record, where its name says a model (a hub
    ``org/name`` or a size: ``.../models/Qwen/Qwen2.5-Math-1.5B``); '' for a checkpoint folder
    that names none (``/tmp/tmpabcd1234``, ``./ckpt``), which would read as a model named so.

    >>> _served_model(b"Initializing a V0 LLM engine (v0.8.4) with config: model='/m/Qwen/Qwen2.5-Math-1.5B', x")
    '/m/Qwen/Qwen2.5-Math-1.5B'
    >>> _served_model(b"Initializing a V1 LLM engine with config: model='/ckpt/run7/global_step_200/actor'")
    ''
    """
    found = VLLM_MODEL.search(payload)
    model = found.group(1).decode("utf-8", "replace") if found else ""
    return model if model and not math.isnan(params_from_name(_model_name(model))) else ""
