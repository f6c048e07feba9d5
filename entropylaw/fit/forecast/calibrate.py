"""Intervals on the score's own scale, calibrated on real runs.

A score that lives in [0, 1] (an accuracy, a pass rate; [-1, 1] is mapped onto it) gets its
interval on the logit scale: a predictive draw ``d`` around the point forecast ``m`` becomes
``logit(m) + c (d - m) / (m (1 - m))`` (the delta method), mapped back with the logistic
function, so it stays inside the range. Where the draws' spread crosses a bound the logit
is no guide (its slope there turns a small spread into the whole range, or into a sliver
beside the bound): the draws are scaled by ``c`` around ``m`` and censored at the bound,
the interval then holds the bound. Other scores use ``m + c (d - m)``.

``c`` is the method's calibration factor: the backtest on real runs
(``analysis/bench_forecast.py``) measures, for every (run, window, method), the error at
the final step in units of the uncalibrated interval's half-width on that scale
(:func:`normalized_error`), and takes the ``conf`` quantile of those errors
(:func:`factor`), separately for validation scores and training scores; the factors it finds are stored in
``calibration.json`` beside this module with the rule that chose the default method. Coverage is reported
leave-one-run-out (each run's interval calibrated on the others).

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
from entropylaw.fit.logit import EPS, from_logit, to_logit  # noqa: F401  (the one bounded scale)


def _touches(lo, hi, bounds):
    """Per column: an interval that reaches a bound (there it is censored, not logit-scaled)."""
    lo_b, hi_b = bounds
    tol = 1e-9 * (hi_b - lo_b)
    return (np.asarray(lo, float) <= lo_b + tol) | (np.asarray(hi, float) >= hi_b - tol)


def scale_draws(mid, draws, bounds, c: float = 1.0):
    """Predictive ``draws`` (B, m) around ``mid`` (m,), moved to the bounded scale and scaled by ``c``.

    Where the draws' 90 % spread stays inside the range: the delta method at ``mid``
    (``logit(p) + c (d - mid) / (p (1 - p))``). Where it crosses a bound: the draws scaled
    around ``mid`` and censored at the bound (the score cannot pass it; the interval then
    holds the bound), because the logit's slope there would turn a small spread into the
    whole range, or into a sliver beside the bound."""
    mid = np.asarray(mid, float)
    draws = np.asarray(draws, float)
    if bounds is None:
        return mid + c * (draws - mid)
    lo, hi = bounds
    q = np.quantile(draws, [0.05, 0.95], axis=0) if draws.ndim > 1 else np.stack([draws, draws])
    near = _touches(q[0], q[1], bounds) | (mid <= lo) | (mid >= hi)
    censored = np.clip(mid + c * (draws - mid), lo, hi)
    p = np.clip((mid - lo) / (hi - lo), EPS, 1 - EPS)
    slope = 1.0 / (p * (1 - p) * (hi - lo))  # d logit / d score at the point forecast
    with np.errstate(over="ignore"):
        delta = from_logit(special.logit(p) + c * (draws - mid) * slope, bounds)
    return np.where(near, censored, delta)


def rescale(mid, draws, bounds, c: float):
    """Draws already on the score's scale, moved ``c`` times further from ``mid`` on the
    bounded scale (censored at a bound their spread reaches, as :func:`scale_draws`)."""
    if bounds is None:
        return mid + c * (np.asarray(draws, float) - mid)
    q = np.quantile(draws, [0.05, 0.95], axis=0)
    near = _touches(q[0], q[1], bounds)
    m = to_logit(mid, bounds)
    return np.where(near, np.clip(mid + c * (draws - mid), *bounds),
                    from_logit(m + c * (to_logit(draws, bounds) - m), bounds))


def widen(mid, lo, hi, bounds, c: float):
    """An interval ``[lo, hi]`` (drawn with factor 1) around ``mid`` as :func:`scale_draws`
    draws it with factor ``c``: logit-scaled, or scaled and censored where it reaches a bound."""
    mid, lo, hi = (np.asarray(v, float) for v in (mid, lo, hi))
    if bounds is None:
        return mid - c * (mid - lo), mid + c * (hi - mid)
    m, a, b = to_logit(mid, bounds), to_logit(lo, bounds), to_logit(hi, bounds)
    near = _touches(lo, hi, bounds)
    lin = np.clip(mid - c * (mid - lo), *bounds), np.clip(mid + c * (hi - mid), *bounds)
    log = from_logit(m - c * (m - a), bounds), from_logit(m + c * (b - m), bounds)
    return np.where(near, lin[0], log[0]), np.where(near, lin[1], log[1])


def normalized_error(y, mid, lo, hi, bounds):
    """``|y - mid|`` in units of the interval's half-width on its side, on the scale
    :func:`widen` scales it on (<= 1: the interval holds ``y``)."""
    y, mid, lo, hi = (np.asarray(v, float) for v in (y, mid, lo, hi))
    if bounds is None:
        yy, m, a, b = y, mid, lo, hi
    else:
        near = _touches(lo, hi, bounds)
        yy, m, a, b = (np.where(near, v, to_logit(v, bounds)) for v in (y, mid, lo, hi))
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.where(yy >= m, (yy - m) / (b - m), (m - yy) / (m - a))
    return np.where(np.isclose(yy, m), 0.0, np.where(np.isfinite(e), e, np.inf))


def factor(errors, conf: float = 0.9, groups=None) -> float:
    """The calibration factor: the finite-sample ``conf`` quantile of normalized errors
    (the ``ceil((n + 1) conf)``-th smallest, as split-conformal prediction takes it).

    ``groups`` (a label per error, e.g. the task): each group weighs the same, however many
    cases it holds (nine runs of one task must not outvote one run of another), and ``n`` is
    the effective number of cases of those weights.

    >>> factor([1.0, 2.0, 3.0, 4.0], 0.5), factor([1.0, 1.0, 1.0, 4.0], 0.5, groups=["a", "a", "a", "b"])
    (3.0, 4.0)
    """
    e = np.asarray(errors, float)
    keep = ~np.isnan(e)  # nan: a case left out of the calibration (degenerate)
    if not keep.any():
        return 1.0
    if groups is None:
        e = np.sort(e[keep])
        k = int(np.ceil((len(e) + 1) * conf)) - 1
        return float(e[min(k, len(e) - 1)])
    g = np.asarray(groups)[keep]
    e = e[keep]
    labels, inverse, counts = np.unique(g, return_inverse=True, return_counts=True)
    w = 1.0 / counts[inverse]
    order = np.argsort(e, kind="stable")
    e, w = e[order], w[order] / w.sum()
    n_eff = 1.0 / float(np.sum(w**2))
    level = min(1.0, conf * (1 + 1 / n_eff))
    k = int(np.searchsorted(np.cumsum(w), level - 1e-12))
    return float(e[min(k, len(e) - 1)])


@lru_cache(maxsize=1)
def stored() -> dict:
    """The backtest's calibration (``{}`` when none has been written)."""
    return json.loads(PATH.read_text()) if PATH.exists() else {}


# Relative horizons ``h = (step - window end) / (window end - first step)`` whose errors are
# calibrated apart: a forecast from half a run (h <= 2) and one from a tenth of it (h ~ 9)
# miss by different multiples of their own interval. The forecast knows h live, too.
HORIZON_BANDS = (2.0, 5.0)


def horizon_band(h) -> np.ndarray:
    """The band (0, 1, 2) of relative horizons ``h`` (:data:`HORIZON_BANDS`).

    >>> horizon_band([1.0, 3.0, 9.0]).tolist()
    [0, 1, 2]
    """
    return np.searchsorted(np.asarray(HORIZON_BANDS), np.asarray(h, float), side="left")


def method_factor(method: str, kind: str, horizon=None):
    """The stored factor of ``method`` for targets of ``kind`` ("validation" or "training
    score": their noise differs) -- 1 (uncalibrated) when none is stored. With ``horizon`` (the
    relative horizon of a forecast's furthest step) and factors stored per band: that band's."""
    entry = stored().get("factors", {}).get(kind, {}).get(method, {})
    pooled = float(entry.get("factor", 1.0))
    bands = entry.get("by_horizon")
    if horizon is None or not bands:
        return pooled
    per_band = np.array([b.get("factor", pooled) if b else pooled for b in bands], float)
    out = per_band[np.minimum(horizon_band(horizon), len(per_band) - 1)]
    return float(out) if np.ndim(out) == 0 else out


def leave_one_run_out(runs, errors, conf: float = 0.9, groups=None) -> np.ndarray:
    """Each case's factor calibrated on the other runs' cases (``runs``: a run label per case;
    a task label leaves whole tasks out). ``groups``: weigh each group the same (:func:`factor`).

    A run whose cases are the only ones gets factor 1 (nothing to calibrate on)."""
    runs, errors = np.asarray(runs), np.asarray(errors, float)
    out = np.ones(len(errors))
    for r in np.unique(runs):
        mine = runs == r
        if (~mine & ~np.isnan(errors)).any():
            out[mine] = factor(errors[~mine], conf, None if groups is None else np.asarray(groups)[~mine])
    return out
