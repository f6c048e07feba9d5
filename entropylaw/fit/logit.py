"""The logit scale of a bounded score: the one scale of the forecasts' intervals
(:mod:`entropylaw.fit.forecast.calibrate`) and of the size law's fits (``fit/size_*``), in one small
module both import downward."""

from __future__ import annotations

import numpy as np
from scipy import special

EPS = 1e-4  # a score of exactly 0 or 1 sits at logit(1e-4) = -9.2: finite, and far out


def to_logit(v, bounds, eps: float = EPS):
    """The logit of a score in ``bounds`` (mapped onto [0, 1], clipped ``eps`` from its ends);
    a score with no bounds unchanged. The one bounded scale of the forecasts and the size law."""
    v = np.asarray(v, float)
    if bounds is None:
        return v
    lo, hi = bounds
    return special.logit(np.clip((v - lo) / (hi - lo), eps, 1 - eps))


def from_logit(v, bounds):
    """The inverse of :func:`to_logit`."""
    if bounds is None:
        return v
    lo, hi = bounds
    return lo + (hi - lo) * special.expit(v)
