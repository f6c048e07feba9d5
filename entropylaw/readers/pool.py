"""A whole project at once: the runs of a source read in parallel, one process per run.

:func:`load_parallel` splits each source into the pieces that can be read alone (the run
directories of a ``wandb/`` directory, the run directories of an ``mlruns/`` store, the
members of a directory of logs; anything else is one piece), reads the pieces in a process
pool with :func:`entropylaw.readers.dispatch.load` and stacks the tables, run ids made
unique as :func:`~entropylaw.readers.dispatch.load` makes them. An MLflow server is not
split: its reader already sends its requests concurrently (with a bound). A piece that
fails stops the read with its one line, as the single-process path does.

Whether a pool is used at all is :func:`choose_workers`' rule (its docstring says it): the
pieces' reading time estimated from their format and size, against the pool's own cost and
the processes allowed; where a pool would not win clearly, the pieces are read here, one after
the other, into the same table.

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
from entropylaw.readers import dispatch, formats, mlflow_store
from entropylaw.readers.common import KeyOptions
from entropylaw.errors import EntropyLawError
from entropylaw.terminal import count


def pieces(source: str) -> list[str]:
    """The parts of ``source`` that can be read independently, in the order its reader reads them
    (each format's own rule: :class:`entropylaw.readers.formats.Format` ``pieces``)."""
    if source.startswith(("wandb://", mlflow_store.SCHEME)):
        return [source]
    path = Path(source)
    if not path.is_dir():
        return [source]
    split = formats.format_of(formats.detect_format(source)).pieces
    return (split(path) if split else []) or [source]


# CPU seconds to read one piece in one process: a fixed part (opening, detecting, a client
# for MLflow) and a part per MB of what the reader reads (a W&B run's .wandb files, an MLflow
# run's metrics/, a file). Measured piece by piece (CPU time, so another program's load does
# not enter) on generated runs of 500 steps x 50 metrics, 40 runs or 20 files a format, and
# on 20-step runs for the fixed part (analysis/bench_project.py --costs).
PIECE_S = 0.012
PER_MB_S = {f.name: f.per_mb_s for f in formats.FORMATS if f.per_mb_s is not None}  # each format's own record
UNMEASURED_MB_S = min(PER_MB_S.values())  # a format not measured is assumed cheap: no pool bet on it
WORKER_START_S = 0.03  # forking one worker of a process holding the libraries, and its pipe
MARGIN = 0.8  # the pool's estimate must be under 80 % of one process's: estimates are rough


def piece_seconds(fmt: str, megabytes: float) -> float:
    """Estimated CPU seconds to read one piece of format ``fmt`` and size ``megabytes``."""
    return PIECE_S + PER_MB_S.get(fmt, UNMEASURED_MB_S) * megabytes


def pool_seconds(costs: list[float], workers: int) -> float:
    """Estimated wall time of reading pieces of these costs in a pool of ``workers``:
    the workers' start, then the larger of an even share and the longest piece."""
    return WORKER_START_S * workers + max(sum(costs) / workers, max(costs, default=0.0))


def choose_workers(costs: list[float], most: int) -> int:
    """Processes (at most ``most``) to read pieces of these estimated costs with: 1 (this
    process) unless a pool's estimate is under :data:`MARGIN` of one process's.

    What a pool costs was measured per format (the constants above): starting a worker is
    ~0.03 s; sending a piece's table back is ~1 ms per MB pickled (packed columns), too little
    to count; a worker reads a piece with the same CPU as one process does (no format reads its
    pieces cheaper together: an MLflow store is parsed run by run either way). So a pool wins by
    its share of the reading, where the reading outweighs the start: a
    pool of 2 needs about 0.2 s of reading, from 4 MB of W&B runs (or 2 MB of CSV) up.
    ``most``: the processes allowed (:func:`entropylaw.table.parallel.cores`). Other programs'
    load is not counted against them: measured on 2 cores with 5 other jobs runnable, a 2-process
    pool still read 40 W&B, MLflow and CSV runs in 0.52-0.97 of one process's time (the kernel
    shares the cores per process), while reading in one process because of that load was slower.

    >>> choose_workers([0.5] * 40, 2), choose_workers([0.5] * 40, 1), choose_workers([0.01] * 4, 8)
    (2, 1, 1)
    """
    one = sum(costs)
    best, best_s = 1, one
    for w in range(2, min(most, len(costs)) + 1):
        t = pool_seconds(costs, w)
        if t < best_s:
            best, best_s = w, t
    return best if best_s <= MARGIN * one else 1


@dataclasses.dataclass
class Plan:
    """How :func:`load_parallel` reads: the pieces, each one's estimated CPU seconds, the processes
    allowed, and those chosen (1: this one)."""

    pieces: list[str]
    costs: list[float]
    most: int
    workers: int

    def __str__(self) -> str:
        one, n = sum(self.costs), len(self.pieces)
        if self.workers > 1:
            return (f"a {self.workers}-process pool: {n} pieces, ~{pool_seconds(self.costs, self.workers):.2f} s "
                    f"against ~{one:.2f} s in one process")
        w = min(max(self.most, 2), max(n, 2))
        return (f"one process: {n} pieces, ~{one:.2f} s of reading; a {w}-process pool ~"
                f"{pool_seconds(self.costs, w):.2f} s ({count(self.most, 'process', 'processes')} allowed)")


def plan(sources: list[str], most: int | None = None) -> Plan:
    """The pieces of ``sources`` and how many processes read them best (:func:`choose_workers`);
    ``most``: at most this many (default: :func:`entropylaw.table.parallel.cores`)."""
    todo = [p for s in sources for p in pieces(str(s))]
    costs = [piece_seconds(fmt, size / 1e6) for fmt, size in map(_format_and_size, todo)]
    most = most or parallel.cores()
    return Plan(todo, costs, most, choose_workers(costs, most))


def _format_and_size(piece: str) -> tuple[str, int]:
    """A piece's format and the bytes its reader reads (0 where it cannot be told: the read says why)."""
    try:
        fmt = formats.detect_format(piece)
        path = Path(piece)
        read_files = formats.format_of(fmt).files
        if read_files and path.is_dir():
            files = read_files(path)
        elif path.is_dir():
            files = [p for p in path.rglob("*") if p.is_file()]
        else:
            files = [path]
        return fmt, sum(p.stat().st_size for p in files)
    except (EntropyLawError, OSError):
        return "", 0


def _read(args):
    piece, options = args
    df, reports = dispatch.load([piece], options)
    return pack.pack(df), reports  # a few arrays, not a DataFrame: see entropylaw.table.pack


def load_parallel(sources: list[str], options: KeyOptions | None = None, workers: int | None = None,
                  progress: Callable[[int, int], None] | None = None):
    """Like :func:`dispatch.load`, its pieces read in ``workers`` processes (default: as
    :func:`plan` chooses, which is one where a pool would not win); ``progress(done, total)`` is
    called as pieces finish."""
    options = options or KeyOptions()
    if options.one_run and options.run_id:  # pieces of one run: named before the merge, as dispatch.load does
        return dispatch.load(sources, options)
    run_id, options = options.run_id, dataclasses.replace(options, run_id=None)  # named once all are read
    if workers is None:
        chosen = plan(sources)
        todo, workers = chosen.pieces, chosen.workers
    else:
        todo = [p for s in sources for p in pieces(str(s))]
    workers = max(1, min(workers, len(todo)))
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
