"""An MLflow file store (``mlruns/``) read at the speed of its files.

``MlflowClient.search_runs`` on a file store parses every line of every metric file of
every run (to give each metric's latest value), and ``get_metric_history`` parses each
file again into one ``Metric`` object per line: for 200 runs x 100 metrics x 1,000
steps, 40 M Python objects, minutes of CPU. Here the runs are listed by MLflow's own
``FileStore`` without their metrics (run info, params and tags, as ``search_runs`` gives
them, in its order: start time descending, then run id), and a run's metric files, in
the store's documented layout (one line ``timestamp value step`` per logged value), are
parsed in one pass by pandas' C parser (correctly rounded: the same doubles as Python's
``float``).

Anything the fast parse is not sure of (a file that is empty, has a line of 2 or 5
fields, a blank line, a character beyond ASCII, a line break other than ``\\n``) raises
:class:`Irregular`, and the caller reads the store through ``MlflowClient`` instead: the
same numbers, and the same errors, as the client path, in every case.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd


class Irregular(Exception):
    """The store holds something only MLflow's own parser should judge."""


@dataclass
class StoreRun:
    """What the reader needs of one run: MLflow's run info, params, and its metric files."""

    info: object  # mlflow.entities.RunInfo
    name: str
    params: dict
    metric_dir: str
    metric_names: list[str]
    run_dir: Path


def file_store(root: Path):
    from mlflow.store.tracking.file_store import FileStore

    return FileStore(root.as_uri())


def list_runs(root: Path, experiment_ids: list[str], run: str | None = None) -> list[StoreRun]:
    """The active runs of these experiments in ``search_runs`` order (``run``: that id or name only)."""
    from mlflow.entities import ViewType

    fs = file_store(root)
    infos = []
    if run is not None and len(experiment_ids) == 1 and (root / experiment_ids[0] / run / "meta.yaml").is_file():
        try:  # one run directory: its own meta.yaml, not every run's of the experiment
            info = fs._get_run_info(run)
        except Exception:  # noqa: BLE001 -- a run MLflow's listing must judge (invalid state ...)
            raise Irregular(run) from None
        infos = [info] if info.lifecycle_stage == "active" else []
    else:
        for exp in experiment_ids:
            infos.extend(fs._list_run_infos(exp, ViewType.ACTIVE_ONLY))
    infos = sorted(infos, key=lambda i: (-i.start_time, i.run_id))  # mlflow SearchUtils.sort's natural order
    out = []
    for info in infos:
        name = info.run_name
        if not name:  # as FileStore._get_run_from_info names it
            name = {t.key: t.value for t in fs._get_all_tags(info)}.get("mlflow.runName", "")
        if run is not None and run not in (info.run_id, name):
            continue
        params = {p.key: p.value for p in fs._get_all_params(info)}
        metric_dir, names = fs._get_run_files(info, "metric")
        out.append(StoreRun(info, name, params, metric_dir, sorted(names),
                            Path(fs._get_run_dir(info.experiment_id, info.run_id))))
    return out


# pandas before 3.1 parses floats correctly rounded (as Python's float does) only when asked;
# from 3.1 on every mode is, and asking is deprecated
_ROUND_TRIP = {"float_precision": "round_trip"} if tuple(int(x) for x in pd.__version__.split(".")[:2]) < (3, 1) else {}
_OTHER_BREAKS = (b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e")


def read_metrics(run: StoreRun) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """``[(key, steps, values, timestamps)]`` of every metric file, keys sorted."""
    chunks, counts = [], []
    for name in run.metric_names:
        with open(os.path.join(run.metric_dir, name), "rb") as f:
            data = f.read()
        if not data.strip() or not data.isascii() or any(b in data for b in _OTHER_BREAKS):
            raise Irregular(name)
        if not data.endswith(b"\n"):
            data += b"\n"
        chunks.append(data)
        counts.append(data.count(b"\n"))
    if not chunks:
        return []
    try:
        frame = pd.read_csv(io.BytesIO(b"".join(chunks)), sep=" ", header=None, names=["ts", "value", "step"],
                            dtype={"ts": np.int64, "value": np.float64, "step": np.int64}, na_filter=False,
                            skip_blank_lines=False, engine="c", **_ROUND_TRIP)
    except (ValueError, pd.errors.ParserError) as err:  # a line MLflow's parser must judge
        raise Irregular(str(err)) from None
    if len(frame) != sum(counts):
        raise Irregular("line count")
    ts, values, steps = (frame[c].to_numpy() for c in ("ts", "value", "step"))
    out, start = [], 0
    for name, n in zip(run.metric_names, counts):
        out.append((name, steps[start:start + n], values[start:start + n], ts[start:start + n]))
        start += n
    return out
