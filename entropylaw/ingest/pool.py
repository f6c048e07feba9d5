"""A whole project at once: the runs of a source read in parallel, one process per run.

:func:`load_parallel` splits each source into the pieces that can be read alone (the run
directories of a ``wandb/`` directory, the run directories of an ``mlruns/`` store, the
members of a directory of logs; anything else is one piece), reads the pieces in a process
pool with :func:`entropylaw.ingest.dispatch.load` and stacks the tables, run ids made
unique as :func:`~entropylaw.ingest.dispatch.load` makes them. An MLflow server is not
split: its reader already sends its requests concurrently (with a bound). A piece that
fails stops the read with its one line, as the single-process path does.

Runs split over several pieces (a W&B run resumed into a second run directory) are not
joined here: pass such a run's pieces together to :func:`dispatch.load`.

>>> import tempfile, os
>>> with tempfile.TemporaryDirectory() as d:
...     for name in ("a", "b"):
...         _ = open(os.path.join(d, name + ".log"), "w").write("step:1 - actor/entropy:0.5\\n")
...     df, reports = load_parallel([d], workers=2)
>>> sorted(df["run_id"].unique()), len(reports)
(['a', 'b'], 2)
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable

from entropylaw.table import parallel
import entropylaw.table as table
from entropylaw.table import pack
from entropylaw.ingest import dispatch, mlflow_store
from entropylaw.ingest.common import KeyOptions


def pieces(source: str) -> list[str]:
    """The parts of ``source`` that can be read independently, in the order its reader reads them."""
    if source.startswith(("wandb://", mlflow_store.SCHEME)):
        return [source]
    path = Path(source)
    if not path.is_dir():
        return [source]
    fmt = dispatch.detect_format(source)
    if fmt == "wandb_offline":
        runs = sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink() and any(p.glob("*.wandb")))
        return [str(p) for p in runs] or [source]
    if fmt == "mlflow" and not (path / "meta.yaml").is_file():
        # the active runs (a deleted one stays in place until `mlflow gc`), in the reader's order
        return mlflow_store.run_directories(source) or [source]
    if fmt == "directory":
        return dispatch._directory_members(path)
    return [source]


def _read(args):
    piece, options = args
    df, reports = dispatch.load([piece], options)
    return pack.pack(df), reports  # a few arrays, not a DataFrame: see entropylaw.table.pack


def load_parallel(sources: list[str], options: KeyOptions | None = None, workers: int | None = None,
                  progress: Callable[[int, int], None] | None = None):
    """Like :func:`dispatch.load`, its pieces read in ``workers`` processes (default:
    :func:`entropylaw.table.parallel.cores`); ``progress(done, total)`` is called as pieces finish."""
    options = options or KeyOptions()
    run_id, options = options.run_id, dataclasses.replace(options, run_id=None)  # named once all are read
    todo = [p for s in sources for p in pieces(str(s))]
    workers = max(1, min(workers or parallel.cores(), len(todo)))
    results = []
    if workers == 1:
        for i, piece in enumerate(todo, 1):
            results.append(_read((piece, options)))
            if progress:
                progress(i, len(todo))
    else:
        with ProcessPoolExecutor(workers) as pool:
            for i, result in enumerate(pool.map(_read, [(p, options) for p in todo], chunksize=1), 1):
                results.append(result)
                if progress:
                    progress(i, len(todo))
    packs, reports = [], []
    used: set[str] = set()
    for packed, reps in results:
        packed.rename_runs(table.unique_names(packed.run_ids(), used))
        packs.append(packed)
        reports.extend(reps)
    del results
    return dispatch.name_runs(pack.stack_packed(packs), run_id), reports
