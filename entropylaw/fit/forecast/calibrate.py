"""Intervals on the score's own scale, calibrated on real runs.

A score that lives in [0, 1] (an accuracy, a pass rate; [-1, 1] is mapped onto it) gets its
interval on the logit scale: a predictive draw ``d`` around the point forecast ``m`` becomes
``logit(m) + c (d - m) / (q (1 - q))`` (the delta method), mapped back with the logistic
function, with ``q`` = ``m`` or, within the draws' own spread of a bound, the end of that
spread (linearising at ``m`` itself there would blow a small spread up to the whole range).
The interval therefore stays inside the range without clipping. Other scores use
``m + c (d - m)``.

``c`` is the method's calibration factor: the backtest on real runs
(``analysis/bench_forecast.py``) measures, for every (run, window, method), the error at
the final step in units of the uncalibrated interval's half-width on that scale
(:func:`normalized_error`), and takes the ``conf`` quantile of those errors
(:func:`factor`), separately for validation scores and training scores; the factors it finds are stored in ``calibration.json`` beside this
module with the rule that chose the default method. Coverage is reported leave-one-run-out
(each run's interval calibrated on the others).

>>> import numpy as np
>>> lo, hi = widen(np.array([0.9]), np.array([0.85]), np.array([0.95]), (0.0, 1.0), 3.0)
>>> 0.0 < float(lo[0]) < 0.85 and 0.95 < float(hi[0]) < 1.0
True
>>> round(float(normalized_error(0.97, 0.9, 0.85, 0.95, (0.0, 1.0))), 3)
1.712
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy import special

PATH = Path(__file__).with_name("calibration.json")
EPS = 1e-4  # a score of exactly 0 or 1 sits at logit(1e-4) = -9.2: finite, and far out


def _to(v, bounds):
    v = np.asarray(v, float)
    if bounds is None:
        return v
    lo, hi = bounds
    return special.logit(np.clip((v - lo) / (hi - lo), EPS, 1 - EPS))


def _back(v, bounds):
    if bounds is None:
        return v
    lo, hi = bounds
    return lo + (hi - lo) * special.expit(v)


def scale_draws(mid, draws, bounds, c: float = 1.0):
    """Predictive ``draws`` (B, m) around ``mid`` (m,), moved to the bounded scale and scaled by ``c``."""
    mid = np.asarray(mid, float)
    if bounds is None:
        return mid + c * (draws - mid)
    lo, hi = bounds
    p = np.clip((mid - lo) / (hi - lo), EPS, 1 - EPS)
    dev = c * (draws - mid) / (hi - lo)
    # The delta method linearises the logit at p; within its spread of a bound that slope
    # (1 / p(1-p)) blows a small spread up to the whole range. The slope is taken no
    # steeper than where the spread itself ends (its 95th percentile).
    reach = np.quantile(np.abs(dev), 0.95, axis=0) if np.ndim(dev) > 1 else np.abs(dev)
    q = np.clip(np.maximum(np.minimum(p, 1 - p), reach), EPS, 0.5)
    slope = 1.0 / (q * (1 - q))  # d logit / d (unit score)
    return _back(special.logit(p) + dev * slope, bounds)


def rescale(mid, draws, bounds, c: float):
    """Draws already on the score's scale, moved ``c`` times further from ``mid`` on the bounded scale."""
    m = _to(mid, bounds)
    return _back(m + c * (_to(draws, bounds) - m), bounds)


def widen(mid, lo, hi, bounds, c: float):
    """An interval ``[lo, hi]`` around ``mid`` scaled by ``c`` on the bounded scale."""
    m, a, b = _to(mid, bounds), _to(lo, bounds), _to(hi, bounds)
    return _back(m - c * (m - a), bounds), _back(m + c * (b - m), bounds)


def normalized_error(y, mid, lo, hi, bounds):
    """``|y - mid|`` in units of the interval's half-width on its side, on the bounded scale
    (<= 1: the interval holds ``y``)."""
    y, m, a, b = _to(y, bounds), _to(mid, bounds), _to(lo, bounds), _to(hi, bounds)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.where(y >= m, (y - m) / (b - m), (m - y) / (m - a))
    return np.where(np.isclose(y, m), 0.0, np.where(np.isfinite(e), e, np.inf))


def factor(errors, conf: float = 0.9) -> float:
    """The calibration factor: the finite-sample ``conf`` quantile of normalized errors
    (the ``ceil((n + 1) conf)``-th smallest, as split-conformal prediction takes it)."""
    e = np.asarray(errors, float)
    e = np.sort(e[~np.isnan(e)])  # nan: a case left out of the calibration (degenerate)
    if len(e) == 0:
        return 1.0
    k = int(np.ceil((len(e) + 1) * conf)) - 1
    return float(e[min(k, len(e) - 1)])


@lru_cache(maxsize=1)
def stored() -> dict:
    """The backtest's calibration (``{}`` when none has been written)."""
    return json.loads(PATH.read_text()) if PATH.exists() else {}


def method_factor(method: str, kind: str) -> float:
    """The stored factor of ``method`` for targets of ``kind`` ("validation" or "training
    score": their noise differs) -- 1 (uncalibrated) when none is stored or calibration is off."""
    if not ENABLED:
        return 1.0
    return float(stored().get("factors", {}).get(kind, {}).get(method, {}).get("factor", 1.0))


ENABLED = True  # the backtest switches it off to measure the raw errors it calibrates on


def leave_one_run_out(runs, errors, conf: float = 0.9) -> np.ndarray:
    """Each case's factor calibrated on the other runs' cases (``runs``: a run label per case).

    A run whose cases are the only ones gets factor 1 (nothing to calibrate on)."""
    runs, errors = np.asarray(runs), np.asarray(errors, float)
    out = np.ones(len(errors))
    for r in np.unique(runs):
        mine = runs == r
        if (~mine & ~np.isnan(errors)).any():
            out[mine] = factor(errors[~mine], conf)
    return out
