"""Turn a lab sweep's run directories into one tidy run table (see :mod:`entropylaw.table`).

Each run directory (layout: :mod:`entropylaw.readers.lab_rundir`) is read by the same reader
``entropylaw ingest RUN_DIR`` uses (:func:`entropylaw.readers.lab_run.read_lab_run`) and
finalised by the shared :func:`entropylaw.readers.common.finalize`, so canonical names come
from the standard key detection: ``actor/entropy`` -> ``entropy`` (token-mean),
``critic/score/mean`` -> ``score``, sampled ``val-core/<task>/acc/mean@k`` -> ``val/<task>``;
the greedy accuracy ``val-aux/<task>/acc/greedy`` keeps its own name. The metadata is
:func:`run_meta`, which the trainer writes into ``run.json``: ``model`` = ``lab-<size>``,
exact ``n_params`` and ``n_params_nonembedding``, ``algorithm`` = ``grpo`` / ``rloo`` /
``reinforce++`` with ``+<intervention>`` appended when there is one (``grpo+clip_cov``),
``dataset`` = the task name (``sum5x1``), ``seed``.

>>> meta = run_meta({"size": "xs", "algo": "rloo", "intervention": "clip_cov", "seed": 3})
>>> meta["run_id"], meta["model"], meta["algorithm"], meta["dataset"], meta["n_params_nonembedding"]
('xs-rloo-clip_cov-s3', 'lab-xs', 'rloo+clip_cov', 'sum4x1', 27792.0)
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError
from entropylaw.readers.common import RawRun, finalize
from entropylaw.readers.lab_run import read_lab_run
from entropylaw.lab.config import RunConfig, run_name
from entropylaw.lab.models import nonembedding_params, size_spec, total_params
from entropylaw.lab.task import SumTask
from entropylaw.lab.tokenizer import CharTokenizer
from entropylaw.readers.lab_rundir import DONE_JSON, METRICS_JSONL, read_run_json


def run_meta(config: dict) -> dict:
    """The run table's metadata of a run with these settings (``RunConfig`` fields; defaults
    fill the rest). Plain arithmetic: it builds no model and validates nothing."""
    cfg = {f.name: f.default for f in fields(RunConfig) if f.name != "intervention_args"}
    cfg.update({k: v for k, v in config.items() if k in cfg})
    spec = size_spec(cfg["size"])
    intervention = cfg["intervention"]
    return {"run_id": run_name(cfg["size"], cfg["algo"], intervention, cfg["seed"], cfg["tag"]),
            "model": f"lab-{cfg['size']}",
            "n_params": float(total_params(spec, CharTokenizer().vocab_size)),
            "n_params_nonembedding": float(nonembedding_params(spec)),
            "algorithm": cfg["algo"] if intervention == "none" else f"{cfg['algo']}+{intervention}",
            "dataset": SumTask(cfg["n_terms"], cfg["digits"]).name, "seed": float(cfg["seed"])}


def run_raw(run_dir: str | Path) -> RawRun:
    """One lab run directory as a :class:`~entropylaw.readers.common.RawRun` with its metadata;
    a ``run.json`` written before it carried ``meta`` gets it from its settings."""
    info = read_run_json(run_dir)
    [raw] = read_lab_run(run_dir, meta=info.get("meta") or run_meta(info["config"]))
    return raw


def run_table(run_dir: str | Path) -> pd.DataFrame:
    """The tidy table of one lab run directory."""
    return finalize(run_raw(run_dir))


def sweep_table(sweep_dir: str | Path, finished_only: bool = True, metrics=None) -> pd.DataFrame:
    """All runs of a sweep directory (``OUT/runs/*``), finished ones only by default;
    ``metrics`` (canonical names) keeps only those rows, for a small shipped table."""
    runs_dir = Path(sweep_dir) / "runs"
    if not runs_dir.is_dir():
        raise EntropyLawError(f"{sweep_dir}: no runs/ directory (expected the directory given to `lab_sweep(out)`)")
    dirs = sorted(d for d in runs_dir.iterdir() if (d / METRICS_JSONL).exists()
                  and (not finished_only or (d / DONE_JSON).exists()))
    if not dirs:
        raise EntropyLawError(f"{runs_dir}: no {'finished ' if finished_only else ''}runs to export")
    tables = (run_table(d) for d in dirs)
    if metrics is not None:
        keep = set(metrics)
        tables = (t[t["metric"].astype(str).isin(keep)] for t in tables)
    return table.concat(tables)
