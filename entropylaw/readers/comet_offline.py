"""Comet offline experiments (``comet_ml.OfflineExperiment``; veRL and TRL log to Comet).

With offline mode on, Comet writes one ``<experiment id>.zip`` per experiment: an
``experiment.json`` (project, ids, times) and ``messages.json``, one JSON message per line
as ``comet upload`` replays them (``comet_ml/offline.py``): ``metric_msg`` messages carry
``metricName``, ``metricValue`` and ``step``; ``parameter_msg`` the parameters (nested
names joined with ``|``); ``log_other`` with key ``Name`` the experiment's name. The zip
member is streamed line by line. A metric without a step (Comet's ``sys.*`` system
metrics) is counted as dropped; a line that is not JSON is counted as dropped. An experiment
whose own metrics all have no step (``log_metrics`` with no ``step`` and no ``set_step``) reads
each key's values in the order logged as steps 1, 2, ...; such a metric beside metrics with a
step is dropped and counted.

>>> import json, tempfile, os, zipfile
>>> msgs = [{"type": "log_other", "payload": {"key": "Name", "value": "grpo-a"}},
...         {"type": "metric_msg",
...          "payload": {"metric": {"metricName": "actor/entropy", "metricValue": 0.5, "step": 1}}},
...         {"type": "metric_msg",
...          "payload": {"metric": {"metricName": "sys.ram.used", "metricValue": 9, "step": None}}}]
>>> with tempfile.TemporaryDirectory() as d:
...     p = os.path.join(d, "abc.zip")
...     with zipfile.ZipFile(p, "w") as z:
...         z.writestr("experiment.json", "{}")
...         z.writestr("messages.json", "\\n".join(json.dumps(m) for m in msgs))
...     [raw] = read_comet_offline(p)
>>> raw.run_id, raw.rows(), raw.report.dropped["metric without a step (system metric)"]
('grpo-a', [(1, 'actor/entropy', 0.5)], 1)
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import RawRun, nest
from entropylaw.readers.config_meta import meta_from_config

NO_STEP = "metric without a step (system metric)"
NO_STEP_USER = "metric without a step"
COMET_OWN = ("sys.", "process duration")  # what Comet logs itself, with no step
UNPARSEABLE = "unparseable message line"
NON_NUMERIC = "non-numeric value"


def is_comet_zip(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as z:
            names = set(z.namelist())
    except (zipfile.BadZipFile, OSError):
        return False
    return {"messages.json", "experiment.json"} <= names


def _params(params: dict[str, object]) -> dict:
    return nest((key.split("|"), value) for key, value in params.items())


def _stepless(rows: list, stepped: bool, out: tuple[list, list, list, list], report) -> bool:
    """Metrics logged with no step: where no metric of the run has a step, each key's values numbered in
    the order logged, 1, 2, ...; beside metrics that have one, dropped, their keys said."""
    names = sorted({key for key, _v, _l in rows})
    if stepped and rows:
        report.drop(NO_STEP_USER, len(rows))
        report.note(f"logged with no step beside metrics that have one: {', '.join(names[:8])}"
                    + (", ..." if len(names) > 8 else "") + " (give log_metric a step)")
        return False
    seen: dict[str, int] = {}
    for key, value, lineno in rows:
        seen[key] = seen.get(key, 0) + 1  # the n-th value logged, kept or not: the n-th of every key share n
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            report.drop(NON_NUMERIC, 1)
            continue
        for column, item in zip(out, (seen[key], key, float(value), lineno)):
            column.append(item)
    if rows:
        report.note(f"every metric is logged with no step: each key's values are read in the order logged, as "
                    f"steps 1 to {max(seen.values())}", changed=True)
    return bool(rows)


def read_comet_offline(path) -> list[RawRun]:
    """One :class:`RawRun` from a Comet offline experiment zip."""
    path = Path(path)
    steps, keys, values, lines = [], [], [], []
    stepless: list[tuple[str, object, int]] = []
    params: dict = {}
    name = ""
    raw = RawRun(path.stem, str(path), ordered=True)
    report = raw.report
    try:
        with zipfile.ZipFile(path) as z, z.open("messages.json") as member:
            for lineno, line in enumerate(io.TextIOWrapper(member, encoding="utf-8", errors="replace"), 1):
                if not line.strip():
                    continue
                try:
                    msg = json.loads(line)
                    kind, payload = msg.get("type"), msg.get("payload") or {}
                except (ValueError, AttributeError):
                    report.read(1)
                    report.drop(UNPARSEABLE, 1)
                    continue
                if kind == "metric_msg":
                    metric = payload.get("metric") or {}
                    report.read(1)
                    value, step = metric.get("metricValue"), metric.get("step")
                    if step is None and str(metric.get("metricName")).startswith(COMET_OWN):
                        report.drop(NO_STEP, 1)
                    elif step is None:  # logged with no step: read where nothing of the run has one
                        stepless.append((str(metric.get("metricName")), value, lineno))
                    elif isinstance(value, bool) or not isinstance(value, (int, float)) or not isinstance(step, int):
                        report.drop(NON_NUMERIC, 1)
                    else:
                        steps.append(step)
                        keys.append(str(metric.get("metricName")))
                        values.append(float(value))
                        lines.append(lineno)
                elif kind == "parameter_msg":
                    param = payload.get("param") or {}
                    if param.get("source") != "auto-logged" and param.get("paramName"):
                        params[str(param["paramName"])] = param.get("paramValue")
                elif kind == "log_other" and payload.get("key") == "Name":
                    name = str(payload.get("value") or "")
    except (zipfile.BadZipFile, KeyError, EOFError, OSError, zipfile.LargeZipFile, zlib.error) as err:
        if isinstance(err, OSError) and err.errno is not None:
            raise
        raise EntropyLawError(f"{path}: not a readable Comet offline archive ({type(err).__name__}: {err}; "
                              "expected the .zip OfflineExperiment writes, with messages.json)") from None
    if _stepless(stepless, bool(steps), (steps, keys, values, lines), report):
        raw.ordered = False  # each key numbered on its own: a key first logged late starts at 1, no restart
    if not steps and not report.rows_read:
        raise EntropyLawError(f"{path}: Comet archive holds no metrics (expected metric_msg lines in messages.json)")
    raw.run_id = name or path.stem
    raw.steps = np.asarray(steps, dtype=np.int64)
    raw.keys = np.asarray(keys, dtype=object)
    raw.values = np.asarray(values, dtype=np.float64)
    raw.lines = np.asarray(lines, dtype=np.int64)
    raw.meta = meta_from_config(_params(params))
    return [raw]
