"""Hugging Face / TRL ``trainer_state.json`` (``log_history``).

TRL's GRPOTrainer logs ``entropy``, ``reward``, ``rewards/<func>/mean``,
``completions/mean_length`` and, at evaluation, ``eval_*`` keys; the Trainer saves them
in ``trainer_state.json`` under ``log_history``, one dict per logging event with its
``step``. ``path`` may be the JSON file, a ``checkpoint-N`` directory, or an output
directory (its own ``trainer_state.json``, else the highest ``checkpoint-N``: each
checkpoint holds the whole history so far).

``path`` may also be a JSON file holding TRL's list of log records (the same dicts, each
with its ``step``), as scripts save ``trainer.state.log_history`` themselves.

A training and an evaluation entry often share a step and both carry ``epoch``; the
second, identical copy of such bookkeeping is not data and not counted (a note says how
many); an identical copy of any other key is counted as ``repeated at the same step``.
A model name comes from a ``config.json`` beside the state (``_name_or_path``) when
there is one.

>>> import json, tempfile, os
>>> state = {"global_step": 2, "log_history": [
...     {"step": 1, "epoch": 0.5, "entropy": 0.7, "reward": 0.1},
...     {"step": 2, "epoch": 1.0, "entropy": 0.6, "reward": 0.3},
...     {"step": 2, "epoch": 1.0, "eval_reward": 0.25}]}
>>> with tempfile.TemporaryDirectory() as d:
...     os.mkdir(os.path.join(d, "checkpoint-2"))
...     _ = open(os.path.join(d, "checkpoint-2", "trainer_state.json"), "w").write(json.dumps(state))
...     [raw] = read_trl(d)
>>> [row for row in raw.rows() if row[1] != "epoch"]
[(1, 'entropy', 0.7), (1, 'reward', 0.1), (2, 'entropy', 0.6), (2, 'reward', 0.3), (2, 'eval_reward', 0.25)]
>>> raw.report.rows_read, raw.report.notes[-1]
(7, '1 bookkeeping key repeated with the same value at the same step, not counted as rows: epoch x1')
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Iterable

from entropylaw.errors import EntropyLawError
from entropylaw.readers.compressed import open_log, strip_compression
from entropylaw.readers.common import RawRun
from entropylaw.readers.resumes import is_bookkeeping
from entropylaw.readers.names import model_from_filename, run_id_from_path
from entropylaw.terminal import count

STATE_FILE = "trainer_state.json"
REPEATED = "repeated at the same step"
NON_NUMERIC = "non-numeric value"
NO_STEP = "entry without a step"


def find_state(path: str | os.PathLike) -> Path | None:
    """The trainer_state.json that ``path`` stands for, or None."""
    path = Path(path)
    if path.is_file():
        return path if strip_compression(path.name).endswith(".json") else None
    if (path / STATE_FILE).is_file():
        return path / STATE_FILE
    checkpoints = [(int(m.group(1)), p) for p in path.glob("checkpoint-*/" + STATE_FILE)
                   if (m := re.fullmatch(r"checkpoint-(\d+)", p.parent.name))]
    return max(checkpoints)[1] if checkpoints else None


def _model_from_config(state_path: Path) -> str:
    config = state_path.parent / "config.json"
    if not config.is_file():
        return ""
    try:
        name = json.loads(config.read_text()).get("_name_or_path", "")
    except (ValueError, OSError):
        return ""
    return str(name).rstrip("/").rsplit("/", 1)[-1]


def add_records(raw: RawRun, records: Iterable[tuple[int | None, dict, str]]) -> None:
    """Append Trainer log records ``(step, record, where)`` to ``raw``, counting every value.

    Shared by ``trainer_state.json``, TRL's JSON list of records and the console reader
    (:mod:`entropylaw.readers.hf_console`). A record without an integer step is dropped
    (``entry without a step``). A key repeated at a step with the value it already has
    there is not data: for bookkeeping keys (``epoch`` in every eval and final entry,
    ``total_flos``, ...) it is not counted at all (a note says how many); for any other key
    it is counted as ``repeated at the same step``.
    """
    report = raw.report
    steps, keys, values = list(raw.steps), list(raw.keys), list(raw.values)
    last: dict[str, tuple[int, float]] = {}
    bookkeeping: dict[str, int] = {}
    for step, record, where in records:
        items = [(k, v) for k, v in record.items() if k != "step"]
        if isinstance(step, bool) or not isinstance(step, int):
            report.read(len(items))
            report.drop(NO_STEP, len(items))
            report.note(f"{where}: no integer 'step' (dropped {count(len(items), 'value')})")
            continue
        for key, value in items:
            numeric = not isinstance(value, bool) and isinstance(value, (int, float))
            if numeric and last.get(key) == (step, float(value)):
                if is_bookkeeping(key):
                    bookkeeping[key] = bookkeeping.get(key, 0) + 1
                    continue
                report.read(1)
                report.drop(REPEATED)
                continue
            report.read(1)
            if not numeric:
                report.drop(NON_NUMERIC)
                continue
            value = float(value)
            last[key] = (step, value)
            steps.append(step)
            keys.append(str(key))
            values.append(value)
    if bookkeeping:
        shown = ", ".join(f"{k} x{n}" for k, n in sorted(bookkeeping.items()))
        report.note(f"{count(len(bookkeeping), 'bookkeeping key')} repeated with the same value at the same step, not "
                    f"counted as rows: {shown}")
    raw.steps, raw.keys, raw.values = steps, keys, values


def read_trl(path: str | os.PathLike, run_id: str | None = None) -> list[RawRun]:
    """Read a TRL / HF Trainer state, or TRL's JSON list of log records, into one :class:`RawRun`."""
    path = Path(path)
    if not path.exists():
        raise EntropyLawError(f"{path}: no such file or directory")
    state_path = find_state(path)
    if state_path is None:
        raise EntropyLawError(f"{path}: no {STATE_FILE} (looked in the directory and its checkpoint-*/)")
    if state_path.stat().st_size == 0:
        raise EntropyLawError(f"{state_path}: empty file (expected a Trainer state with log_history)")
    try:
        with open_log(state_path, text=True) as f:
            state = json.load(f)
    except ValueError as err:
        raise EntropyLawError(f"{state_path}: not valid JSON ({err})") from None
    if isinstance(state, list):  # TRL's own list of log records, each with its step
        history, label = state, "record"
        if not all(isinstance(entry, dict) for entry in history):
            raise EntropyLawError(f"{state_path}: a JSON list that is not all log records (expected "
                                  "[{\"step\": 5, \"entropy\": ..., ...}, ...])")
    else:
        history, label = (state.get("log_history") if isinstance(state, dict) else None), "log_history"
        if not isinstance(history, list):
            raise EntropyLawError(f"{state_path}: no 'log_history' list (is this a Trainer state file?)")
    raw = RawRun(run_id or run_id_from_path(state_path), str(state_path), ordered=True)
    add_records(raw, ((entry.get("step"), entry, f"{label}[{i}]")
                      for i, entry in enumerate(history) if isinstance(entry, dict)))
    if not raw.report.rows_read:
        raise EntropyLawError(f"{state_path}: {label} holds no logged values")
    raw.meta = {"model": _model_from_config(state_path) or model_from_filename(raw.run_id)}
    planned = state.get("max_steps") if isinstance(state, dict) else None
    if isinstance(planned, int) and not isinstance(planned, bool) and planned > 0:  # the Trainer's plan (-1: unset)
        raw.meta["config"] = {"total_steps": planned}
    return [raw]
