"""Decoding W&B history records into compact (step, key, value) arrays.

Used by :mod:`entropylaw.readers.wandb_offline`, which documents the conventions (key
names, bookkeeping keys, which step). Two decoders give identical rows:
:meth:`HistoryReader.decode` works on any ``HistoryRecord``; :class:`FastHistory`
handles the common all-numeric record faster and declines anything else.

>>> from wandb.proto import wandb_internal_pb2 as pb
>>> h = pb.HistoryRecord()
>>> _ = h.item.add(nested_key=["train", "acc"], value_json="0.25")
>>> _ = h.item.add(nested_key=["_step"], value_json="4")
>>> reader = HistoryReader(None)
>>> reader.decode(h)
({'train.acc': 0.25}, 4)
>>> FastHistory(pb.HistoryItem).decode(pb.Record(history=h).SerializeToString())
({'train.acc': 0.25}, 4)
"""

from __future__ import annotations

import fnmatch
import json
import math
from array import array
from functools import lru_cache
from typing import Iterable

import numpy as np

from entropylaw.readers.common import RawRun
from entropylaw.readers.wandb_eval_steps import eval_axes, is_eval_axis
from entropylaw.readers.wandb_axes import (ROLLOUT_AXIS, TRAIN_AXIS, RolloutOfTrain, Undeclared, declared_on_step,
                                           on_own_steps)
from entropylaw.terminal import count

NON_NUMERIC = "non-numeric value"
_NUMBER_START = frozenset("-0123456789NI")  # JSON numbers plus NaN / Infinity


# Record fields never read here (summary 3, output 4, stats 7, telemetry 11, output_raw 13),
# as the first tag after ``num``. Summaries are about half of a file: not parsing them doubles speed.
SKIPPED_TAGS = frozenset({0x1a, 0x22, 0x3a, 0x5a, 0x6a})


HISTORY_TAG = 0x12
_VALUE_TAG = b"\x82\x01"  # HistoryItem.value_json: field 16, length-delimited


@lru_cache(maxsize=1)
def _lite_record_class():
    """A message type reading a Record's history items as raw bytes (for :class:`FastHistory`)."""
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


class FastHistory:
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
        self.last_time: float | None = None  # the last decoded row's _timestamp (when the process was last alive)

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
        keys, keep, step_at, time_at = layout
        tails = [p[2] for p in parts]
        try:
            if [t[0] for t in tails] != [len(t) - 1 for t in tails]:  # one length byte, then exactly the value
                return None
            values = list(map(float, [t[1:] for t in tails]))
        except (IndexError, ValueError):
            return None
        row = {keys[i]: values[i] for i in keep}
        if time_at is not None:
            self.last_time = values[time_at]
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
        time_at = keys.index("_timestamp") if "_timestamp" in keys else None
        return keys, keep, step_at, time_at


def first_tag(payload: bytes) -> int:
    """First protobuf tag byte of a Record after its ``num`` varint (-1 if none)."""
    i = 0
    if payload[:1] == b"\x08":
        i = 1
        while i < len(payload) and payload[i] & 0x80:
            i += 1
        i += 1
    return payload[i] if i < len(payload) else -1


class HistoryReader:
    """Accumulates history rows compactly (array codes), resolving each key's step."""

    def __init__(self, step_key: str | None, named=()):
        self.step_key = step_key
        self.exact: dict[str, str] = {}             # metric name -> its step metric
        self.globs: list[tuple[str, str]] = []      # (glob, step metric), in declaration order
        self.step_of: dict[str, str | None] = {}    # resolved per key (None: use _step)
        self.last: dict[str, float] = {}            # last value of each step metric (step_sync)
        self.codes: dict[str, int] = {}
        self.steps, self.key_codes, self.values = array("q"), array("i"), array("d")
        self.axis_codes = array("i")  # per row, its step metric (index in axis_names); filled once one is declared
        self.axis_names: dict[str | None, int] = {}
        self.kept: np.ndarray | None = None  # after to_raw, the values read (None: all)
        self.undeclared = Undeclared(named)  # rows of keys with no step metric in a run that declares them
        self.auto_step = -1
        self.non_numeric: dict[str, int] = {}
        self.bad_steps = 0
        self.step_metrics: set[str] = {step_key} if step_key else set()
        self.axis_seen: dict[str, set[float]] = {}  # step metric -> its values (two at most: "it moves")
        self.siblings: list[tuple[int, int, int, str]] = []  # (start, end, the row's <prefix>global_step, metric)
        self.eval_rows: list[tuple] = []  # rows on an evaluation's step metric, with the others' values there
        self.rollout_of = RolloutOfTrain()  # slime: the rollout each optimizer step's row trained on
        self.own_steps = array("q")  # per row, W&B's _step: a fractional step metric's rows are read there
        self.fractional: dict[str, list] = {}  # step metric -> [its rows with a fractional value, the first]

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
        media: tuple[str, ...] = ()
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
            if key.endswith("._type"):  # a media object written field by field (a Table): none is a metric
                media = media + (key[:-5],) if media else (key[:-5],)
        if media:
            for key in [k for k in row if k.startswith(media)]:
                del row[key]
                self.non_numeric[key] = self.non_numeric.get(key, 0) + 1
        if w_step is None and history.HasField("step"):
            w_step = history.step.num
        return row, w_step

    def add_row(self, row: dict[str, float], w_step: int | None) -> None:
        if w_step is None:  # newer SDKs: a row logged without step= is the previous step + 1
            w_step = self.auto_step + 1
        self.auto_step = w_step
        if self.step_metrics and not self.step_key:
            full, row = row, self._declared_only(row)
        else:
            full = row
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
        if not self.axis_codes and len(self.steps):  # rows before the first declaration: on _step
            self.axis_codes.extend([self._axis(None)] * len(self.steps))
            self.own_steps.extend(self.steps)
        steps, axes, used = [], [], set()
        for key in row:
            step = w_step
            metric = self.step_of[key] if key in self.step_of else self._step_metric(key)
            if metric is not None:
                found = full.get(metric, self.last.get(metric))
                if found is not None and float(found).is_integer():
                    step = int(found)
                    used.add(metric)
                elif found is not None and math.isfinite(found):  # an epoch (0.125): no step, said in to_raw
                    seen = self.fractional.setdefault(metric, [0, found])
                    seen[0] += 1
                elif found is not None:
                    self.bad_steps += 1
            elif key in self.undeclared.counts:
                self.undeclared.rows.append(len(self.steps) + len(steps))
            steps.append(step)
            axes.append(self._axis(metric))
        start = len(self.steps)
        if TRAIN_AXIS in used and ROLLOUT_AXIS in self.step_metrics:
            self.rollout_of.note(start, axes, self._axis(TRAIN_AXIS), full.get(ROLLOUT_AXIS, self.last.get(ROLLOUT_AXIS)))
        for metric in used:
            self._note_sibling(metric, full, start, start + len(steps))
        self.steps.extend(steps)
        self.axis_codes.extend(axes)
        self.own_steps.extend([w_step] * len(steps))
        for metric in self.step_metrics:
            if metric in full:
                self.last[metric] = full[metric]

    def _note_sibling(self, metric: str, full: dict[str, float], start: int, end: int) -> None:
        """Remember the values a step metric takes, and the row's own ``<prefix>global_step`` beside it:
        OpenRLHF declares ``eval/*`` on ``eval/epoch`` and never logs it (W&B's step_sync fills in 0 in
        every eval row) while each eval row holds ``eval/global_step``, the training step."""
        seen = self.axis_seen.setdefault(metric, set())
        if len(seen) < 2:
            seen.add(full.get(metric, self.last.get(metric)))
        if is_eval_axis(metric):  # the other step metrics where it is logged (wandb_eval_steps.counted)
            others = {m: full.get(m, self.last.get(m)) for m in self.step_metrics if not is_eval_axis(m)}
            self.eval_rows.append((start, end, metric, float(full.get(metric, self.last.get(metric))),
                                   {**{m: v for m, v in others.items() if v is not None}, "_step": self.auto_step}))
        head, sep, _ = metric.rpartition("/")
        sibling = f"{head}{sep}global_step"
        alt = full.get(sibling)
        if sibling != metric and alt is not None and float(alt).is_integer():
            self.siblings.append((start, end, int(alt), metric))

    def _declared_only(self, row: dict[str, float]) -> dict[str, float]:
        """The row without its step axes; its keys with no declared step metric are kept on ``_step``
        and counted (settled in to_raw: :class:`~entropylaw.readers.wandb_axes.Undeclared`)."""
        out = {}
        for key, value in row.items():
            metric = self.step_of[key] if key in self.step_of else self._step_metric(key)
            if key in self.step_metrics:  # a step axis, as _step is: not a metric
                continue
            if metric is None:
                self.undeclared.counts[key] = self.undeclared.counts.get(key, 0) + 1
            out[key] = value
        return out

    def _declared(self) -> dict[str, str]:
        """Each read key's step metric (for the note)."""
        return {k: v for k, v in self.step_of.items() if v is not None and k in self.codes}

    def _axis(self, metric: str | None) -> int:
        return self.axis_names.setdefault(metric, len(self.axis_names))

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
        changed = []
        if self.fractional:
            self.steps, self.axis_codes, changed = on_own_steps(self.steps, self.axis_codes, self.own_steps,
                                                                self.axis_names, self.fractional)
        notes = []
        if self.axis_codes:  # an evaluation's step metric that never moves (OpenRLHF) or counts evaluations
            self.steps, self.axis_codes, notes, counted = eval_axes(self.axis_seen, self.siblings, self.eval_rows,
                                                                    self.steps, self.axis_codes, self._axis)
            changed += counted
        if self.rollout_of.rows:
            self.steps, self.axis_codes, moved = self.rollout_of.apply(
                self.steps, self.axis_codes, self._axis(TRAIN_AXIS), self._axis(ROLLOUT_AXIS))
            notes += moved
        keys = names[np.frombuffer(self.key_codes, dtype=np.int32)] if len(self.key_codes) else np.array([], object)
        steps, values = np.frombuffer(self.steps, dtype=np.int64), np.frombuffer(self.values, dtype=np.float64)
        on_step = declared_on_step(steps, self.own_steps, self.axis_codes, self.axis_names.get(None))
        self.kept = self.undeclared.settle(keys, {k: m for k, m in self._declared().items() if m}, steps, on_step)
        if self.kept is not None:
            keys, steps, values = keys[self.kept], steps[self.kept], values[self.kept]
            self.axis_codes = array("i", np.frombuffer(self.axis_codes, dtype=np.int32)[self.kept].tobytes())
        raw = RawRun(run_id, source, steps=steps, keys=keys, values=values,
                     ordered=True)  # history records in the order the run wrote them
        if self.axis_codes:
            # the run declared its own steps (define_metric): each metric restarts on its own axis, and
            # several rows of a metric at one step (one per micro-batch) are that step's mean
            axis_names = np.array([name or "_step" for name in self.axis_names], dtype=object)
            raw.axes = axis_names[np.frombuffer(self.axis_codes, dtype=np.int32)]
            raw.repeats = "mean"
            raw.report.note("steps as the run declared them (define_metric): "
                            + ", ".join(sorted({f"{k} on {v}" for k, v in self._declared().items()})))
        for note in notes:
            raw.report.note(note)
        for note in changed:
            raw.report.note(note, changed=True)
        n_bad = sum(self.non_numeric.values())
        raw.report.read(len(self.values) + n_bad)
        self.undeclared.report(raw.report)
        if n_bad:
            raw.report.drop(NON_NUMERIC, n_bad)
            shown = ", ".join(sorted(self.non_numeric)[:10])
            raw.report.note(f"skipped {n_bad} non-numeric history values (keys: {shown}"
                            f"{', ...' if len(self.non_numeric) > 10 else ''})")
        if self.bad_steps:
            raw.report.note(f"{count(self.bad_steps, 'row')} {'has' if self.bad_steps == 1 else 'had'} "
                            "a non-integer step metric; used W&B's _step for them")
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
