"""Fit the law to many runs at once (vectorised: a few sums per run, no Python loop over runs).

Same estimates and AR(1) intervals as :class:`entropylaw.fit.law.EntropyLawFit` with the
default options, for arrays of runs (padded, ``lengths`` valid points each). Used by the
benchmark (10,000 runs x 500 steps) and by anything that sweeps many windows or runs.

>>> import numpy as np
>>> H = np.linspace(1.0, 0.1, 50)[None, :].repeat(3, axis=0)
>>> R = 0.9 - np.array([[0.2], [0.3], [0.4]]) * np.exp(H)
>>> fit_many(H, R)["a"].round(3).tolist()
[0.2, 0.3, 0.4]
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

from entropylaw.fit import uncertainty as unc


def fit_many(H, R, lengths=None, weights=None, conf=0.95, chunk=2000, intervals=True,
             threads=None) -> pd.DataFrame:
    """One row per run: a, b, stderrs, cov_ab, ceiling with stderr and interval, r2, rmse, phi.

    Chunks of ``chunk`` runs are fitted on ``threads`` threads (default: every core; numpy
    releases the GIL in its array loops, and exp() dominates). Results do not depend on it.
    """
    H = np.atleast_2d(np.asarray(H, float))
    R = np.atleast_2d(np.asarray(R, float))
    lengths = np.full(H.shape[0], H.shape[1]) if lengths is None else np.asarray(lengths)
    starts = range(0, H.shape[0], chunk)

    def one(lo):
        sl = slice(lo, lo + chunk)
        return _fit_chunk(H[sl], R[sl], lengths[sl], None if weights is None else weights[sl], conf, intervals)

    threads = min(threads or os.cpu_count() or 1, len(starts))
    if threads > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            parts = list(pool.map(one, starts))
    else:
        parts = [one(lo) for lo in starts]
    return pd.concat(parts, ignore_index=True)


def _fit_chunk(H, R, lengths, weights, conf, intervals):
    valid = np.arange(H.shape[1])[None, :] < lengths[:, None]
    full = bool(valid.all())  # no padding: skip the masking passes
    x = np.exp(H) if full else np.where(valid, np.exp(np.where(valid, H, 0.0)), 0.0)
    if intervals:
        out = unc.ar1_ols(x, R, weights, lengths, conf=conf)
        beta, cov, tq = out["beta"], out["cov"], out["tq"]
    else:  # closed form from six sums per run: no residual arrays, one pass each
        Rv = R if full else np.where(valid, R, 0.0)
        w = None if weights is None else np.where(valid, weights, 0.0)
        wx = x if w is None else w * x
        wy = Rv if w is None else w * Rv
        sw = lengths.astype(float) if w is None else w.sum(1)
        sx, sy = wx.sum(1), wy.sum(1)
        sxx, sxy, syy = (np.einsum("rt,rt->r", wx, x), np.einsum("rt,rt->r", wx, Rv),
                         np.einsum("rt,rt->r", wy, Rv))
        det = sw * sxx - sx**2
        beta = np.column_stack([(sx * sy - sw * sxy) / det, (sxx * sy - sx * sxy) / det])
        a, b = beta[:, 0], beta[:, 1]
        # residual sum of squares of y ~ b - a x from the same sums (normal equations)
        ssr = np.maximum(syy - b * sy + a * sxy, 0.0)
        tss = syy - sy**2 / sw
        res = {"n": lengths, "a": a, "b": b, "ceiling": b - a, "r2": 1 - ssr / tss,
               "rmse": np.sqrt(ssr / sw)}
        return pd.DataFrame(res)
    a, b = beta[:, 0], beta[:, 1]
    Rv = R if full else np.where(valid, R, 0.0)
    resid = R - (b[:, None] - a[:, None] * x)
    mean = Rv.sum(axis=1) / lengths
    dev = R - mean[:, None]
    if not full:
        resid, dev = np.where(valid, resid, 0.0), np.where(valid, dev, 0.0)
    tss = np.einsum("rt,rt->r", dev, dev)
    res = {"n": lengths, "a": a, "b": b, "ceiling": b - a,
           "r2": 1 - np.einsum("rt,rt->r", resid, resid) / tss,
           "rmse": np.sqrt(np.einsum("rt,rt->r", resid, resid) / lengths)}
    if intervals:
        se_c = unc.combo_stderr(cov, [-1.0, 1.0])
        res.update(a_stderr=np.sqrt(cov[:, 0, 0]), b_stderr=np.sqrt(cov[:, 1, 1]), cov_ab=cov[:, 0, 1],
                   ceiling_stderr=se_c, ceiling_lo=b - a - tq * se_c, ceiling_hi=b - a + tq * se_c,
                   phi=out["phi"])
    return pd.DataFrame(res)
