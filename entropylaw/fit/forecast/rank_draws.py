"""A sweep's joint outcomes from its runs' forecast draws: the share of joint draws in which each run
ends best (``p_best``) or within a threshold of the best (``p_near``), and the prune rule's view of a
sweep whose take-offs carry their climb on (:func:`_beaten_alone`). :mod:`.rank` reads them.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> a, b = rng.normal(0.60, 0.02, 20000), rng.normal(0.58, 0.02, 20000)
>>> p = share_best([a, b])
>>> bool(abs(p[0] - 0.760) < 0.01)       # Phi(0.02 / sqrt(0.02^2 + 0.02^2)) = Phi(0.707) = 0.760
True
"""

from __future__ import annotations

import numpy as np

TIE = 1e-9  # values this close (of the scores' scale, at least 1) are one: one outcome computed twice


def _aligned(draws, seed: int = 0) -> np.ndarray:
    """The runs' draws as one (runs, B) array, each run's in an order of its own: every run's
    forecast draws its noise from the same seeded stream, so draw k of two runs would share
    it (and the runs would never cross). A run with fewer draws is resampled (its own draws,
    with replacement) up to the most any run has."""
    n = max(len(d) for d in draws)
    rng = np.random.default_rng(seed)
    rows = [np.asarray(d, float)[rng.permutation(len(d))] if len(d) == n
            else np.asarray(d, float)[rng.integers(0, len(d), n)] for d in draws]
    return np.vstack(rows)


def share_best(draws, seed: int = 0) -> np.ndarray:
    """Per run, the share of joint draws in which it ends best (ties shared equally)."""
    x = _aligned(draws, seed)
    best = x >= _best(x)
    return (best / best.sum(axis=0, keepdims=True)).mean(axis=1)


def _best(x):
    """Each joint draw's best, less rounding: a value within :data:`TIE` of it ties."""
    top = x.max(axis=0, keepdims=True)
    return top - TIE * np.maximum(np.abs(top), 1.0)


def share_near(draws, threshold: float, seed: int = 0) -> np.ndarray:
    """Per run, the share of joint draws in which it ends within ``threshold`` of the best."""
    x = _aligned(draws, seed)
    return (x >= _best(x) - threshold).mean(axis=1)


def _beaten_alone(ids, carried, finite, thr, seed) -> dict:
    """Per run of ``ids`` not ``carried``: the least share of joint draws in which it ends within
    ``thr`` of one carried run alone (each pair apart), and of the other such runs together. The
    carried runs' draws share their sweep's rates, so no run is pruned for their number or their
    width: only where one of them alone beats it. A run with a forecast of its own was pruned only
    where the other such runs alone would prune it: a run that never took off (0.154 [0.081, 0.305])
    stayed beside 12 take-offs whose lower ends lay at 0.34 to 0.58, and a lone such run was never
    pruned. Capped at their medians instead, 12 take-offs of medians 0.60-0.64 pruned a run at
    0.60 that each of them alone ends below about half the time."""
    own = [r for r in ids if r not in carried]
    out = _near_among(own, finite, thr, seed) if len(own) > 1 else {r: 1.0 for r in own}
    for r in own:
        for q in (q for q in ids if q in carried):
            out[r] = min(out[r], float(share_near([finite[r], finite[q]], thr, seed)[0]))
    return out


def _near_among(ids, finite, thr, seed, only=None) -> dict:
    """p_near of ``ids`` among themselves alone (``only``: that run's alone)."""
    if not ids:
        return {}
    near = dict(zip(ids, share_near([finite[r] for r in ids], thr, seed)))
    return near if only is None else {only: near[only]}


def _finite(draws) -> np.ndarray:
    """A forecast's draws that are numbers (a draw that is not says nothing of where a run ends)."""
    d = np.asarray(draws if draws is not None else [], float)
    return d[np.isfinite(d)]


def _fewest(draws) -> int:
    """The fewest draws of any run ranked: the Monte Carlo error of a share is that run's own."""
    return min((len(d) for d in draws), default=0)
