"""TensorBoard event files (veRL ``trainer.logger=['tensorboard']``, TRL, OpenRLHF).

A log directory may hold several runs: every directory that contains
``events.out.tfevents.*`` files is one run, named by its path relative to the given
directory (or by the directory's own name). Scalars are read with ``tbparse``; rows are
put in wall-time order so a resumed run (a second event file whose steps restart) is
resolved by :func:`entropylaw.ingest.common.finalize` like any other source. TensorBoard
stores scalars as float32: values carry float32 precision.

>>> import tempfile, os
>>> from tensorboard.summary.writer.event_file_writer import EventFileWriter
>>> from tensorboard.compat.proto import event_pb2, summary_pb2
>>> with tempfile.TemporaryDirectory() as d:
...     w = EventFileWriter(os.path.join(d, "grpo-run"))
...     for step, h in [(1, 0.5), (2, 0.25)]:
...         v = summary_pb2.Summary.Value(tag="actor/entropy", simple_value=h)
...         w.add_event(event_pb2.Event(step=step, wall_time=step, summary=summary_pb2.Summary(value=[v])))
...     w.close()
...     [raw] = read_tensorboard(d)
>>> raw.run_id, raw.rows()
('grpo-run', [(1, 'actor/entropy', 0.5), (2, 'actor/entropy', 0.25)])
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from entropylaw._optional import require
from entropylaw.errors import EntropyLawError
from entropylaw.ingest.common import RawRun, model_from_filename

EVENT_GLOB = "events.out.tfevents.*"


def has_event_files(path: str | os.PathLike) -> bool:
    """True when ``path`` is an event file or a directory holding some (at any depth)."""
    path = Path(path)
    if path.is_file():
        return path.name.startswith("events.out.tfevents.")
    return next(path.rglob(EVENT_GLOB), None) is not None


def read_tensorboard(path: str | os.PathLike, run_id: str | None = None) -> list[RawRun]:
    """One :class:`RawRun` per directory of event files under ``path``."""
    path = Path(path)
    if not path.exists():
        raise EntropyLawError(f"{path}: no such file or directory")
    if not has_event_files(path):
        raise EntropyLawError(f"{path}: no TensorBoard event files (events.out.tfevents.*) found")
    # imported here: it pulls in tensorboard (the [tensorboard] extra)
    SummaryReader = require("tbparse", extra="tensorboard", purpose=f"reading {path}").SummaryReader

    try:
        with warnings.catch_warnings():  # tbparse trips pandas deprecation warnings
            warnings.simplefilter("ignore")
            scalars = SummaryReader(str(path), pivot=False, extra_columns={"dir_name", "wall_time"}).scalars
    except Exception as err:  # corrupt event files raise various errors inside tensorboard
        raise EntropyLawError(f"{path}: cannot read TensorBoard events ({type(err).__name__}: {err})") from None
    base = path.parent.name if path.is_file() else path.name
    runs = []
    if scalars.empty:
        raise EntropyLawError(f"{path}: TensorBoard events hold no scalars")
    scalars = scalars.sort_values("wall_time", kind="stable")
    for dir_name, rows in scalars.groupby("dir_name", sort=True):
        name = run_id if run_id and scalars["dir_name"].nunique() == 1 else (dir_name or base or "tensorboard")
        source = str(path / dir_name) if dir_name else str(path)
        raw = RawRun(name, source, steps=rows["step"].to_numpy(np.int64), keys=rows["tag"].to_numpy(object),
                     values=rows["value"].to_numpy(np.float64))
        raw.report.read(len(rows))
        raw.meta = {"model": model_from_filename(name.replace("/", "_"))}
        runs.append(raw)
    return runs
