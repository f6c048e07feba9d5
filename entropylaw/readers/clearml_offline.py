"""ClearML offline sessions (``Task.set_offline(True)`` or ``CLEARML_OFFLINE_MODE=1``; veRL's
``trainer.logger=['clearml']`` and the Hugging Face Trainer's ClearMLCallback log to ClearML).

Offline, ``Task.init`` writes a session folder ``~/.clearml/cache/offline/offline-<id>/`` and
``Task.close`` zips it next to itself as ``offline-<id>.zip`` (clearml 2.1: ``Task.__shutdown``);
both are read. The layout is the one ``Task.import_offline_session`` replays to a server:

- ``task.json``: the task as ``Task._edit`` exports it offline (``backend_interface/task/task.py``,
  ``_offline_filename``): ``id``, ``name``, ``project_name``, ``hyperparams`` (``task.connect``:
  ``{section: {name: {"value": str, "type": ...}}}``, nested keys joined with ``/``) and
  ``configuration`` (``task.connect_configuration``: ``{name: {"type", "value"}}``; a dict is
  stored as HOCON text of type ``dictionary``).
- ``metrics.jsonl``: one JSON *list* of event requests per line, as each batch is flushed
  (``backend_interface/metrics/interface.py``, ``Metrics._do_write_events``); a scalar is
  ``{"type": "training_stats_scalar", "task": id, "metric": title, "variant": series,
  "value": v, "iter": n}``. ``Metrics.report_offline_session`` replays only the events
  whose ``task`` is the session's id (the others are output models' own scalars).

ClearML names a scalar by (title, series); veRL's ``ClearMLLogger.log`` (verl/utils/tracking.py)
reports ``actor/entropy`` as ``("actor", "entropy")`` and ``val-core/openai/gsm8k/reward/mean@1``
as ``("val-core", "openai/gsm8k/reward/mean@1")`` (``key.split("/", 1)``), the Trainer's
callback ``entropy`` as ``("train", "entropy")``: ``title/series`` gives back the names the
W&B loggers write. The resource monitor's ``:monitor:machine``/``:monitor:gpu`` scalars are
system metrics (W&B keeps them out of the history): counted as dropped. So is a
``Logger.report_single_value``, stored at iteration ``-2**31``: it has no step. ClearML itself
writes a NaN as 0 (``Logger.set_reporting_nan_value``), so a NaN cannot be told from a 0.
A line that is not JSON (a session copied while being written) loses the scalars in it,
counted from the event types it still shows.

The HOCON configuration text is parsed with clearml's own reader (``text_to_config_dict``,
``clearml/utilities/config.py``), so a session holding one needs ``entropylaw[clearml]``;
the scalars and ``task.connect`` parameters need nothing.

>>> import json, tempfile, os, zipfile
>>> ev = lambda t, s, v, i: {"type": "training_stats_scalar", "task": "offline-1", "metric": t,
...                          "variant": s, "value": v, "iter": i}
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "offline-1.zip")
...     with zipfile.ZipFile(p, "w") as z:
...         z.writestr("task.json", json.dumps({"id": "offline-1", "name": "grpo-a", "hyperparams":
...                    {"Args": {"algorithm/adv_estimator": {"value": "grpo", "type": "str"}}}}))
...         z.writestr("metrics.jsonl", json.dumps([ev("actor", "entropy", 0.5, 1),
...                    ev("Summary", "best", 0.9, -2**31)]) + "\\n")
...     [raw] = read_clearml_offline(p)
>>> raw.run_id, raw.rows(), raw.meta, dict(raw.report.dropped)
('grpo-a', [(1, 'actor/entropy', 0.5)], {'algorithm': 'grpo'}, {'single value (no step)': 1})
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np

from entropylaw._optional import require
from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import RawRun, nest
from entropylaw.readers.config_meta import meta_from_config

TASK_JSON = "task.json"
EVENTS = "metrics.jsonl"
SCALAR = "training_stats_scalar"
SINGLE_VALUE_ITER = -(2 ** 31)  # clearml Logger.report_single_value

NO_STEP = "single value (no step)"
UNPARSEABLE = "unparseable events line"
NON_NUMERIC = "non-numeric value"
OTHER_TASK = "scalar of an output model, not the task"
MONITOR = "system metric (ClearML resource monitor)"
MONITOR_TITLE = ":monitor:"  # clearml/utilities/resource_monitor.py: ":monitor:machine", ":monitor:gpu"
EXPECTED = "expected the offline-<id>.zip or offline-<id>/ folder a ClearML offline session writes"


def metric_name(title: str, series: str) -> str:
    """The logged key back from ClearML's (title, series): the inverse of veRL's split.

    >>> metric_name("critic", "score/mean"), metric_name("val-core", "openai/gsm8k/reward/mean@1")
    ('critic/score/mean', 'val-core/openai/gsm8k/reward/mean@1')
    """
    return f"{title}/{series}"


def _zip_names(path: Path) -> set[str] | None:
    try:
        with zipfile.ZipFile(path) as z:
            return set(z.namelist())
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError):
        return None


def is_clearml_zip(path: Path, head: bytes = b"") -> bool:
    """A zip with ``task.json`` at its root; or one too damaged to list whose first local
    headers (``head``, its first bytes) name a session's files."""
    names = _zip_names(path)
    if names is None:
        return head.startswith(b"PK\x03\x04") and (TASK_JSON.encode() in head or EVENTS.encode() in head)
    return TASK_JSON in names


def is_session_dir(path: Path) -> bool:
    return (path / TASK_JSON).is_file() and ((path / EVENTS).is_file() or (path / "log.jsonl").is_file())


@contextlib.contextmanager
def _session(path: Path):
    """``open(member)`` over the zip or the folder; a missing member opens as None."""
    if path.is_dir():
        def open_dir(name: str):
            return (path / name).open("rb") if (path / name).is_file() else None
        yield open_dir
        return
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        yield lambda name: z.open(name) if name in names else None


def _damaged(path: Path, err: Exception) -> EntropyLawError:
    what = "zlib error" if isinstance(err, zlib.error) else type(err).__name__
    detail = f"{what}: {err}" if str(err) else what
    return EntropyLawError(f"{path}: not a readable ClearML offline session ({detail}; {EXPECTED})")


def _param_value(item: dict):
    # task.connect stores every value as text with its Python type's name beside it
    value, kind = item.get("value"), item.get("type")
    try:
        if kind == "int":
            return int(value)
        if kind == "float":
            return float(value)
        if kind == "bool":
            return value == "True"
    except (TypeError, ValueError):
        pass
    return value


def _parse_hocon(path: Path, name: str, text: str) -> dict:
    with warnings.catch_warnings():  # clearml's bundled pyhocon calls pyparsing's old names
        warnings.simplefilter("ignore", DeprecationWarning)
        reader = require("clearml.utilities.config", extra="clearml",
                         purpose=f"{path}: reading its configuration {name!r} (HOCON text)")
        return reader.text_to_config_dict(text)


def _config(path: Path, task: dict, report) -> dict:
    """One config dict from the task's connected parameters and dictionary configurations."""
    config = {}
    for section in (task.get("hyperparams") or {}).values():
        if isinstance(section, dict):
            config.update(nest((str(name).split("/"), _param_value(item))
                               for name, item in section.items() if isinstance(item, dict)))
    for name, item in (task.get("configuration") or {}).items():
        if not isinstance(item, dict) or not item.get("value"):
            continue
        text = str(item["value"])
        if item.get("type") == "dictionary":
            try:
                parsed = _parse_hocon(path, name, text)
            except ValueError:  # its message holds the whole text: configs can hold secrets
                report.note(f"configuration {name!r} is not valid HOCON: its parameters were not read")
                continue
        else:
            try:
                parsed = json.loads(text)
            except ValueError:
                continue  # a YAML or plain-text configuration file: not read for metadata
        if isinstance(parsed, dict):
            config.update(_plain(parsed))
    return config


def _plain(node):
    # ClearML's ConfigTree (an OrderedDict) -> plain dicts and lists
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def _read_task(path: Path, open_member) -> dict:
    member = open_member(TASK_JSON)
    if member is None:
        raise EntropyLawError(f"{path}: no {TASK_JSON} in it ({EXPECTED})")
    with member:
        try:
            task = json.loads(member.read().decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as err:
            raise EntropyLawError(f"{path}: {TASK_JSON} is not valid JSON ({err}; {EXPECTED})") from None
    if not isinstance(task, dict):
        raise EntropyLawError(f"{path}: {TASK_JSON} is not a JSON object ({EXPECTED})")
    return task


class _Scalars:
    """The scalar events of one session's ``metrics.jsonl``, with their row account."""

    def __init__(self, task_id: str, report):
        self.task_id, self.report = task_id, report
        self.steps, self.keys, self.values, self.lines = [], [], [], []

    def line(self, lineno: int, text: str) -> None:
        try:
            batch = json.loads(text)
            if not isinstance(batch, list) or not all(isinstance(ev, dict) for ev in batch):
                raise ValueError("not a list of events")
        except ValueError:
            lost = max(1, text.count(f'"{SCALAR}"'))
            self.report.read(lost)
            self.report.drop(UNPARSEABLE, lost)
            return
        for ev in batch:
            if ev.get("type") == SCALAR:
                self.event(lineno, ev)

    def event(self, lineno: int, ev: dict) -> None:
        self.report.read(1)
        value, step = ev.get("value"), ev.get("iter")
        if self.task_id and ev.get("task") != self.task_id:
            self.report.drop(OTHER_TASK, 1)
        elif str(ev.get("metric")).startswith(MONITOR_TITLE):
            self.report.drop(MONITOR, 1)
        elif step is None or step == SINGLE_VALUE_ITER:
            self.report.drop(NO_STEP, 1)
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or not isinstance(step, int):
            self.report.drop(NON_NUMERIC, 1)
        else:
            self.steps.append(step)
            self.keys.append(metric_name(str(ev.get("metric")), str(ev.get("variant"))))
            self.values.append(float(value))
            self.lines.append(lineno)


def read_clearml_offline(path) -> list[RawRun]:
    """One :class:`RawRun` from a ClearML offline session (its zip, or its folder)."""
    path = Path(path)
    # each (title, series) is its own series in ClearML, reported in its own order: a step
    # that goes back is a restart of that series only (a resume is a new session offline)
    raw = RawRun(path.name.removesuffix(".zip"), str(path), ordered=False)
    try:
        with _session(path) as open_member:
            task = _read_task(path, open_member)
            raw.meta = meta_from_config(_config(path, task, raw.report))
            scalars = _Scalars(str(task.get("id") or ""), raw.report)
            member = open_member(EVENTS)
            if member is not None:
                with member:
                    text = io.TextIOWrapper(member, encoding="utf-8", errors="replace")
                    for lineno, line in enumerate(text, 1):
                        if line.strip():
                            scalars.line(lineno, line)
    except (zipfile.BadZipFile, EOFError, OSError, zipfile.LargeZipFile, zlib.error, NotImplementedError) as err:
        # a permission or I/O error is said as the OS says it; EINVAL is a seek to an offset
        # a damaged header gave, like NotImplementedError for a method or version byte flipped
        if isinstance(err, OSError) and err.errno not in (None, errno.EINVAL):
            raise
        raise _damaged(path, err) from None
    if not raw.report.rows_read:
        raise EntropyLawError(f"{path}: ClearML session holds no scalars (expected {SCALAR} events in {EVENTS}, "
                              "written by Logger.report_scalar)")
    raw.run_id = str(task.get("name") or task.get("id") or raw.run_id)
    raw.steps = np.asarray(scalars.steps, dtype=np.int64)
    raw.keys = np.asarray(scalars.keys, dtype=object)
    raw.values = np.asarray(scalars.values, dtype=np.float64)
    raw.lines = np.asarray(scalars.lines, dtype=np.int64)
    return [raw]
