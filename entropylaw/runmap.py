"""Per-run work on a big table, in forked processes: fitting 200 runs on 2 cores.

:func:`map_runs` calls ``fn(rows_of_the_run, run_id)`` for each run and yields the
results in order. With more than :data:`MIN_RUNS` runs and more than one core it forks
worker processes that inherit the table (no copy, nothing pickled on the way in; each
run's rows are sliced there, :func:`entropylaw.table.split_runs`); only the results come
back. Warnings a call raises are raised again here, just before its result is yielded, so
a caller sees what the loop in one process would have shown, in the same order; an
exception stops the map where it would have.
Where ``fork`` is not available (Windows, macOS' default), the runs are done here, one
after the other.

>>> import entropylaw.table as table
>>> t = table.stack([table.from_records([(1, "entropy", 0.5)], run_id=r) for r in ("a", "b")])
>>> list(map_runs(_length, t, ["a", "b"]))
[1, 1]
"""

from __future__ import annotations

import multiprocessing
import os
import warnings
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Iterator, Sequence

import pandas as pd

import entropylaw.table as table

MIN_RUNS = 30  # below this the fork and the results' pickling cost more than the work saved

_TABLE: pd.DataFrame | None = None  # the table the forked workers inherit
_PARTS: dict | None = None


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def map_runs(fn: Callable, t: pd.DataFrame, run_ids: Sequence[str], workers: int | None = None) -> Iterator:
    """``fn(rows of run, run) for run in run_ids``, yielded in order (see the module docstring)."""
    global _TABLE, _PARTS
    run_ids = list(run_ids)
    workers = min(workers or cores(), len(run_ids))
    if workers < 2 or len(run_ids) < MIN_RUNS or "fork" not in multiprocessing.get_all_start_methods():
        parts = table.split_runs(t, run_ids)
        for r in run_ids:
            yield fn(parts.get(r, t), r)
        return
    _TABLE, _PARTS = t, None
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            chunk = max(1, len(run_ids) // (8 * workers))
            for value, error, caught in pool.map(_call, [(fn, r) for r in run_ids], chunksize=chunk):
                for category, message in caught:  # as the call would have raised them here
                    warnings.warn(message, category, stacklevel=2)
                if error is not None:
                    raise error
                yield value
    finally:
        _TABLE = None


def _call(args):
    global _PARTS
    fn, run_id = args
    if _PARTS is None:  # once per worker: the slices of every run
        _PARTS = table.split_runs(_TABLE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value, error = fn(_PARTS.get(run_id, _TABLE), run_id), None
        except Exception as err:  # noqa: BLE001 -- given back to the caller, raised there
            value, error = None, err
    return value, error, [(w.category, str(w.message)) for w in caught]


def _length(rows: pd.DataFrame, run_id: str) -> int:
    return len(rows)
