"""The on-disk layout of one ``entropylaw lab run``, as plain data.

The lab writes it (:mod:`entropylaw.lab`), ingest reads it
(:mod:`entropylaw.readers.lab_run`); neither imports the other, and reading needs no
torch. A run directory holds:

======================  ====================================================================
file                    what
======================  ====================================================================
``run.json``            ``{"config": {...}, "task": {...}, "meta": {...}}``: the run's
                        settings, its task, and the metadata a run table carries (below)
``metrics.jsonl``       one ``{"step": n, "data": {key: value}}`` per step (veRL's layout)
``metrics.csv``         the same metrics as one wide table (a copy; not read back)
``val_prompts.jsonl``   the validation prompts (for ``entropylaw probe-checkpoints``)
``checkpoints/``        ``global_step_<n>/`` model, tokenizer and trainer state
``done.json``           written when the run finished: its summary
======================  ====================================================================

``meta`` has :data:`META_FIELDS`: ``run_id`` (``<size>-<algo>-<intervention>-s<seed>``),
``model`` (``lab-<size>``), exact ``n_params`` and ``n_params_nonembedding``, ``algorithm``
(``grpo``, ``grpo+clip_cov`` ...), ``dataset`` (the task, ``sum4x1``) and ``seed``.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> meta = {"run_id": "xs-grpo-none-s0", "model": "lab-xs", "n_params": 31000.0,
...         "n_params_nonembedding": 27792.0, "algorithm": "grpo", "dataset": "sum4x1", "seed": 0.0}
>>> _ = write_run_json(d, {"size": "xs"}, {"n_terms": 4}, meta)
>>> read_run_json(d)["meta"]["model"], is_run_dir(d)
('lab-xs', False)
>>> _ = (d / METRICS_JSONL).write_text("")
>>> is_run_dir(d)
True
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from entropylaw.errors import EntropyLawError
from entropylaw.fileio import write_json

RUN_JSON = "run.json"
METRICS_JSONL = "metrics.jsonl"
METRICS_CSV = "metrics.csv"
VAL_PROMPTS = "val_prompts.jsonl"
CHECKPOINTS = "checkpoints"
DONE_JSON = "done.json"
META_FIELDS = ("run_id", "model", "n_params", "n_params_nonembedding", "algorithm", "dataset", "seed")


def is_run_dir(path: str | os.PathLike) -> bool:
    """True for a directory with ``run.json`` and ``metrics.jsonl``."""
    path = Path(path)
    return (path / RUN_JSON).is_file() and (path / METRICS_JSONL).is_file()


def write_run_json(run_dir: str | os.PathLike, config: dict, task: dict, meta: dict) -> Path:
    """Write ``run.json`` atomically; ``meta`` must have every one of :data:`META_FIELDS`."""
    missing = [k for k in META_FIELDS if k not in meta]
    if missing:
        raise ValueError(f"run metadata lacks {', '.join(missing)}")  # a lab bug, not a user mistake
    return write_json(Path(run_dir) / RUN_JSON,
                      {"config": config, "task": task, "meta": {k: meta[k] for k in META_FIELDS}},
                      indent=1, sort_keys=True)


def read_run_json(run_dir: str | os.PathLike) -> dict:
    """``run.json`` as a dict with ``config``, ``task`` and (when written) ``meta``; one-line errors."""
    path = Path(run_dir) / RUN_JSON
    if not path.is_file():
        raise EntropyLawError(f"{run_dir}: not a lab run directory (no {RUN_JSON})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise EntropyLawError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict):
        raise EntropyLawError(f"{path}: expected an object with a 'config' object (a lab run's settings)")
    meta = data.get("meta")
    if meta is not None:
        if not isinstance(meta, dict) or any(k not in meta for k in META_FIELDS):
            raise EntropyLawError(f"{path}: 'meta' must have {', '.join(META_FIELDS)}")
    return data
