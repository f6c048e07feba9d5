"""Per-run work on a big table, in forked processes: fitting 200 runs on 2 cores.

:func:`map_runs` calls ``fn(rows_of_the_run, run_id)`` for each run and yields the
results in order. With more than :data:`MIN_RUNS` runs and more than one core it forks
worker processes that inherit the table (no copy, nothing pickled on the way in; each
run's rows are sliced there, :func:`entropylaw.table.split_runs`); only the results come
back. Warnings a call raises are raised again here, just before its result is yielded, so
a caller sees what the loop in one process would have shown, in the same order; an
exception stops the map where it would have.
Where ``fork`` is not available (Windows, macOS' default), in a daemonic process, or with
``ENTROPYLAW_WORKERS=1``, the runs are done here, one after the other.

>>> import entropylaw.table as table
>>> t = table.stack([table.from_records([(1, "entropy", 0.5)], run_id=r) for r in ("a", "b")])
>>> list(map_runs(_length, t, ["a", "b"]))
[1, 1]
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import warnings
from concurrent.futures import ProcessPoolExecutor
from typing import Callable, Iterator, Sequence

import pandas as pd

import entropylaw.table as table

MIN_RUNS = 30  # below this the fork and the results' pickling cost more than the work saved

_TABLES: dict[int, pd.DataFrame] = {}  # the tables forked workers inherit, one per map in progress
_PARTS: dict[int, dict] = {}  # in a worker: each table's runs, sliced once
_TOKENS = itertools.count()


def cores() -> int:
    """Processes for per-run work: ``ENTROPYLAW_WORKERS`` when set (1: all in this process),
    else the cores this process may run on."""
    env = os.environ.get("ENTROPYLAW_WORKERS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def map_runs(fn: Callable, t: pd.DataFrame, run_ids: Sequence[str], workers: int | None = None) -> Iterator:
    """``fn(rows of run, run) for run in run_ids``, yielded in order (see the module docstring)."""
    run_ids = list(run_ids)
    workers = min(workers or cores(), len(run_ids))
    if workers < 2 or len(run_ids) < MIN_RUNS or "fork" not in multiprocessing.get_all_start_methods() \
            or multiprocessing.current_process().daemon:  # a daemonic process may not start workers
        parts = table.split_runs(t, run_ids)
        for r in run_ids:
            yield fn(parts.get(r, t), r)
        return
    token = next(_TOKENS)
    _TABLES[token] = t  # set before the workers are forked: they inherit it
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            chunk = max(1, len(run_ids) // (8 * workers))
            for value, error, caught in pool.map(_call, [(fn, token, r) for r in run_ids], chunksize=chunk):
                for category, message in caught:  # as the call would have raised them here
                    warnings.warn(message, category, stacklevel=2)
                if error is not None:
                    raise error
                yield value
    finally:
        del _TABLES[token]


def _call(args):
    fn, token, run_id = args
    t = _TABLES[token]
    if token not in _PARTS:  # once per worker: the slices of every run
        _PARTS[token] = table.split_runs(t)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value, error = fn(_PARTS[token].get(run_id, t), run_id), None
        except Exception as err:  # noqa: BLE001 -- given back to the caller, raised there
            value, error = None, err
    return value, error, [(w.category, str(w.message)) for w in caught]


def _length(rows: pd.DataFrame, run_id: str) -> int:
    return len(rows)
