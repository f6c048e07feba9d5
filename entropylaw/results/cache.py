"""Each run fitted and forecast once per content, a project's runs in forked processes.

The key of a run is its content (its steps, metrics and values, in table order), not the
table it sits in: the report's table and each figure that needs a run's fit
(:func:`entropylaw.fit.run.fit_run`) or its forecast from the first steps
(:func:`entropylaw.fit.forecast.core.forecast`) get the one computed first. A project's
runs not cached yet are computed on all cores (:func:`entropylaw.table.parallel.map_runs`):
the same values as one after the other.

>>> import math
>>> from entropylaw import table
>>> H = [math.exp(-k / 6) + 0.1 for k in range(20)]
>>> t = table.from_records([(k, m, v) for k, h in enumerate(H)
...                         for m, v in (("entropy", h), ("val/mean", 0.8 - 0.2 * math.exp(h)))], run_id="r1")
>>> fit, caught, err = fit_result(t, "r1")
>>> fit_result(t.copy(), "r1")[0] is fit, round(fit.ceiling_, 3), err  # the same content: fitted once
(True, 0.6, None)
"""

from __future__ import annotations

import functools
import hashlib
import json
import weakref
from collections import OrderedDict

import numpy as np
import pandas as pd

from entropylaw.table import parallel
import entropylaw.table as tt
from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast import sweep
from entropylaw.fit.forecast.core import DEFAULT, forecast
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.log_facts import log_facts
from entropylaw.fit.run import fit_run
from entropylaw.results.notes import capture, tag

LAW_METHOD = "law-ceiling"
_CACHE: "OrderedDict[tuple, tuple]" = OrderedDict()
_KEYS: "OrderedDict[tuple, tuple]" = OrderedDict()
_CACHE_SIZE = 1024  # a fit and a forecast per run: those of a 200-run project stay cached


def _key(t: pd.DataFrame, run_id: str) -> tuple:
    """The run's content (its steps, metrics and values, in table order) as a cache key."""
    ids, metric = t["run_id"], t["metric"]
    if isinstance(ids.dtype, pd.CategoricalDtype) and isinstance(metric.dtype, pd.CategoricalDtype) and len(t) \
            and run_id in ids.cat.categories:
        if not (ids.cat.codes.to_numpy() == ids.cat.categories.get_loc(run_id)).all():  # not one run's own rows
            t = t[ids == run_id]
            metric = t["metric"]
        columns = (t["step"].to_numpy(np.int64), t["value"].to_numpy(np.float64), metric.array.codes,
                   metric.cat.categories)
        # asked once per run and per figure: the same memory, while the arrays owning it live
        # (no other rows can be there then), is hashed once
        where = (run_id, len(t), id(columns[3])) + tuple((c.__array_interface__["data"][0], c.strides)
                                                         for c in columns[:3])
        hit = _KEYS.get(where)
        if hit is not None and all(ref() is not None for ref in hit[1]) and hit[2] is columns[3]:
            _KEYS.move_to_end(where)
            return hit[0]
        digest = hashlib.blake2b(digest_size=16)  # the bytes: a tenth of pandas' per-row hash
        for column in columns[:3]:
            digest.update(np.ascontiguousarray(column).tobytes())
        digest.update(json.dumps([str(c) for c in columns[3]]).encode())
        key = (run_id, len(t), digest.hexdigest())
        try:  # weak: a run's copied rows are not kept alive by this memo
            _KEYS[where] = (key, [weakref.ref(_owner(c)) for c in columns[:3]], columns[3])
        except TypeError:  # memory no ndarray owns: not remembered
            return key
        while len(_KEYS) > _CACHE_SIZE:
            _KEYS.popitem(last=False)
        return key
    rows = t.loc[t["run_id"] == run_id, ["step", "metric", "value"]]
    return run_id, len(rows), int(pd.util.hash_pandas_object(rows, index=False).sum())


def _owner(array: np.ndarray) -> np.ndarray:
    """The array that owns a view's memory."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _store(key: tuple, value: tuple) -> None:
    _CACHE[key] = value
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)


def _fit_entry(t: pd.DataFrame, run_id: str) -> tuple:
    """``(cache key, (fit or None, [warnings], error or None))`` of one run."""
    try:
        fit, caught = capture(lambda: fit_run(t, run_id))
        return _key(t, run_id), (fit, caught, None)
    except EntropyLawError as err:
        return _key(t, run_id), (None, [], err)


def _prime(entry, t: pd.DataFrame, run_ids) -> None:
    """Compute the cache entries ``entry`` gives for the runs not cached yet, a project's in
    forked processes (:func:`entropylaw.table.parallel.map_runs`): the same values, on all cores."""
    parts = tt.split_runs(t, run_ids)
    missing = [r for r in run_ids if _key(parts.get(r, t), r) not in _CACHE]
    if len(missing) >= parallel.MIN_RUNS:
        for key, value in parallel.map_runs(entry, t, missing):
            _store(key, value)


def fit_result(t: pd.DataFrame, run_id: str):
    """``(fit or None, [warnings], error or None)`` of one run, fitted once per content."""
    key = _key(t, run_id)
    if key not in _CACHE:
        _store(*_fit_entry(t, run_id))
    return _CACHE[key]


def forecast_result(t: pd.DataFrame, run_id: str, fit_frac: float, n_boot: int, conf: float, sweeps=None):
    """``(run, forecast, [warnings])`` of one run from its first ``fit_frac`` (the default
    method and the law's ceiling), computed once per content and sweep; raises the forecast's
    error. ``sweeps``: the runs' sweeps (:func:`sweeps_of`), as ``entropylaw forecast`` pools them."""
    key = _forecast_key(t, run_id, fit_frac, n_boot, conf, sweeps)
    if key not in _CACHE:
        _store(*_forecast_entry(t, run_id, fit_frac, n_boot, conf, sweeps))
    run, fc, caught, err = _CACHE[key]
    if err is not None:
        raise err
    return run, fc, caught


def _forecast_key(t, run_id, fit_frac, n_boot, conf, sweeps) -> tuple:
    """A forecast's cache key: the run's content, what its log and config say of it (its model,
    data set, plan) and what it is pooled with (its sweep's rates)."""
    mine = (sweeps or {}).get(run_id)
    return ("forecast", fit_frac, n_boot, conf, _meta_key(t, [run_id]),
            None if mine is None else json.dumps(mine, sort_keys=True, default=str)) + _key(t, run_id)


def _meta_key(t: pd.DataFrame, run_ids) -> tuple:
    """What the table says of the runs beyond their values (:data:`entropylaw.table.META_DEFAULTS`)."""
    meta = tt.runs(t)
    meta = meta[meta["run_id"].isin(list(run_ids))]
    return tuple(tuple(str(v) for v in row) for row in meta.itertuples(index=False))


def _forecast_entry(t: pd.DataFrame, run_id: str, fit_frac: float, n_boot: int, conf: float, sweeps=None) -> tuple:
    """``(cache key, (run, forecast, [warnings], error))`` of one run's forecast, as
    :func:`~entropylaw.fit.forecast.core.forecast_table` makes it: with what its log says of its
    plan and timing, and its sweep."""
    key = _forecast_key(t, run_id, fit_frac, n_boot, conf, sweeps)
    try:
        run = RunData.from_table(t, run_id)
        methods = [DEFAULT, LAW_METHOD]  # the decision's curve is fitted by forecast() itself
        fc, caught = capture(lambda: forecast(run, fit_frac=fit_frac, methods=methods, conf=conf, n_boot=n_boot,
                                              seed=0, log=log_facts(t, run_id), sweep=(sweeps or {}).get(run_id)))
        return key, (run, fc, caught, None)
    except EntropyLawError as err:
        return key, (None, None, [], err)


def sweeps_of(t: pd.DataFrame, fit_frac: float) -> dict:
    """Each run's sweep among every run of ``t`` (:func:`~entropylaw.fit.forecast.sweep.sweeps`):
    what ``entropylaw forecast`` pools, so that the report forecasts a sweep's runs as it does."""
    ids = tt.run_ids(t)
    if len(ids) < 3:
        return {}
    parts = tt.split_runs(t, ids)
    # the runs' contents and what the table says of them (their models, tasks and the folders they were read
    # from: a run alone in its folder joins its parent's sweep)
    key = ("sweeps", fit_frac, _meta_key(t, ids)) + tuple(_key(parts.get(r, t), r) for r in ids)
    if key not in _CACHE:
        _store(key, sweep.sweeps(t, ids, None, "entropy", None, {"fit_frac": fit_frac}))
    return _CACHE[key]


def prime_fits(t: pd.DataFrame, run_ids) -> None:
    """Fit the runs of ``run_ids`` not cached yet (a project's on all cores)."""
    _prime(_fit_entry, t, run_ids)


def prime_forecasts(t: pd.DataFrame, run_ids, fit_frac: float, n_boot: int, conf: float, sweeps=None) -> None:
    """Forecast the runs of ``run_ids`` not cached yet (a project's on all cores)."""
    parts = tt.split_runs(t, run_ids)
    missing = [r for r in run_ids if _forecast_key(parts.get(r, t), r, fit_frac, n_boot, conf, sweeps) not in _CACHE]
    if len(missing) >= parallel.MIN_RUNS:
        entry = functools.partial(_forecast_entry, fit_frac=fit_frac, n_boot=n_boot, conf=conf, sweeps=sweeps)
        for key, value in parallel.map_runs(entry, t, missing):
            _store(key, value)


def fitted_runs(t: pd.DataFrame, run_ids):
    """``{run_id: (points, fit)}`` for the runs that can be fitted, and the warnings raised
    (a run that cannot be fitted is one ``run: not fitted (why)`` line)."""
    out, notes = {}, []
    ids = list(run_ids)
    prime_fits(t, ids)
    parts = tt.split_runs(t, ids)  # a run's rows sliced once: no mask of the whole table per run
    for run_id in ids:
        fit, caught, err = fit_result(parts.get(run_id, t), run_id)
        if err is not None:
            notes.append(f"{run_id}: not fitted ({err})")
            continue
        # the fit both warns and keeps its warnings in warnings_: show each once
        notes += tag(run_id, caught or list(getattr(fit, "warnings_", [])))
        out[run_id] = (fit.pairs_, fit)
    return out, notes


def forecast_runs(t: pd.DataFrame, run_ids, fit_frac: float, n_boot: int, conf: float) -> tuple[dict, list[str]]:
    """``{run_id: (run, forecast) or the error that stopped it}`` and the warnings raised,
    each run forecast once per content and sweep (:func:`forecast_result`), a sweep's runs
    pooled as ``entropylaw forecast`` pools them (:func:`sweeps_of`)."""
    out, notes = {}, []
    ids = list(run_ids)
    sweeps = sweeps_of(t, fit_frac)
    prime_forecasts(t, ids, fit_frac, n_boot, conf, sweeps)
    parts = tt.split_runs(t, ids)
    for run_id in ids:
        try:
            run, fc, caught = forecast_result(parts.get(run_id, t), run_id, fit_frac, n_boot, conf, sweeps)
        except EntropyLawError as err:
            out[run_id] = err
            continue
        notes += tag(run_id, caught)
        out[run_id] = (run, fc)
    return out, notes
