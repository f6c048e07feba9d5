"""Turn a lab sweep's run directories into one tidy run table (see :mod:`entropylaw.table`).

Each run's ``metrics.jsonl`` is read by the same reader ``entropylaw ingest`` uses
(:func:`entropylaw.ingest.verl_jsonl.read_verl_jsonl`) and finalised by the shared
:func:`entropylaw.ingest.common.finalize`, so canonical names come from the standard key
detection: ``actor/entropy`` -> ``entropy`` (token-mean), ``critic/score/mean`` ->
``score``, sampled ``val-core/<task>/acc/mean@k`` -> ``val/<task>``; the greedy accuracy
``val-aux/<task>/acc/greedy`` keeps its own name. Metadata comes from the run's
``run.json``: ``model`` = ``lab-<size>``, exact ``n_params`` and
``n_params_nonembedding``, ``algorithm`` = ``grpo`` / ``rloo`` / ``reinforce++`` with
``+<intervention>`` appended when there is one (``grpo+clip_cov``), ``dataset`` = the task
name (``sum5x1``), ``seed``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from entropylaw import table
from entropylaw.errors import EntropyLawError


def run_table(run_dir: str | Path) -> pd.DataFrame:
    """The tidy table of one lab run directory."""
    from entropylaw.ingest.common import finalize

    return finalize(run_raw(run_dir))


def run_raw(run_dir: str | Path):
    """One lab run directory as a :class:`~entropylaw.ingest.common.RawRun` with its metadata
    (``entropylaw ingest RUN_DIR`` reads a lab run this way: ``metrics.jsonl`` once, not also
    its ``metrics.csv`` copy)."""
    from entropylaw.ingest.verl_jsonl import read_verl_jsonl
    from entropylaw.lab.config import RunConfig
    from entropylaw.lab.models import nonembedding_params, size_spec, total_params
    from entropylaw.lab.task import SumTask
    from entropylaw.lab.tokenizer import CharTokenizer

    run_dir = Path(run_dir)
    meta_path = run_dir / "run.json"
    if not meta_path.exists():
        raise EntropyLawError(f"{run_dir}: not a lab run directory (no run.json)")
    cfg = RunConfig.from_dict(json.loads(meta_path.read_text())["config"], where=str(meta_path))
    [raw] = read_verl_jsonl(run_dir / "metrics.jsonl", run_id=cfg.run_name)
    spec = size_spec(cfg.size)
    raw.meta = {"model": f"lab-{cfg.size}", "n_params": float(total_params(spec, CharTokenizer().vocab_size)),
                "n_params_nonembedding": float(nonembedding_params(spec)), "algorithm": cfg.algorithm_label,
                "dataset": SumTask(cfg.n_terms, cfg.digits).name, "seed": float(cfg.seed)}
    return raw


def sweep_table(sweep_dir: str | Path, finished_only: bool = True) -> pd.DataFrame:
    """All runs of a sweep directory (``OUT/runs/*``), finished ones only by default."""
    runs_dir = Path(sweep_dir) / "runs"
    if not runs_dir.is_dir():
        raise EntropyLawError(f"{sweep_dir}: no runs/ directory (expected the --out of `entropylaw lab sweep`)")
    dirs = sorted(d for d in runs_dir.iterdir() if (d / "metrics.jsonl").exists()
                  and (not finished_only or (d / "done.json").exists()))
    if not dirs:
        raise EntropyLawError(f"{runs_dir}: no {'finished ' if finished_only else ''}runs to export")
    return table.concat(run_table(d) for d in dirs)
