"""Read one ``entropylaw lab run`` directory as one run (the layout is :mod:`entropylaw.readers.lab_rundir`).

``metrics.jsonl`` is read by the veRL JSONL reader (its ``metrics.csv`` copy and the W&B
log hold the same run and are not read again); the run's metadata (model, exact
parameter counts, algorithm, task, seed) is ``run.json``'s ``meta``, read as plain data:
no torch, no lab code.
"""

from __future__ import annotations

import os
from pathlib import Path

from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import RawRun
from entropylaw.readers.verl_jsonl import read_verl_jsonl
from entropylaw.readers.lab_rundir import METRICS_JSONL, RUN_JSON, read_run_json


def read_lab_run(run_dir: str | os.PathLike, meta: dict | None = None) -> list[RawRun]:
    """The run of ``run_dir`` with its metadata (``meta`` overrides ``run.json``'s)."""
    meta = meta or read_run_json(run_dir).get("meta")
    if meta is None:
        raise EntropyLawError(f"{Path(run_dir) / RUN_JSON}: no 'meta' (written by an older entropylaw lab); "
                              "read it with `entropylaw lab export` instead")
    [raw] = read_verl_jsonl(Path(run_dir) / METRICS_JSONL, run_id=str(meta["run_id"]))
    raw.meta = {k: v for k, v in meta.items() if k != "run_id"}
    return [raw]
