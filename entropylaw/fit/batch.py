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

import numpy as np
import pandas as pd

from entropylaw.fit import uncertainty as unc


def fit_many(H, R, lengths=None, weights=None, conf=0.95, chunk=2000, intervals=True) -> pd.DataFrame:
    """One row per run: a, b, stderrs, cov_ab, ceiling with stderr and interval, r2, rmse, phi."""
    H = np.atleast_2d(np.asarray(H, float))
    R = np.atleast_2d(np.asarray(R, float))
    lengths = np.full(H.shape[0], H.shape[1]) if lengths is None else np.asarray(lengths)
    parts = []
    for lo in range(0, H.shape[0], chunk):
        sl = slice(lo, lo + chunk)
        parts.append(_fit_chunk(H[sl], R[sl], lengths[sl], None if weights is None else weights[sl],
                                conf, intervals))
    return pd.concat(parts, ignore_index=True)


def _fit_chunk(H, R, lengths, weights, conf, intervals):
    valid = np.arange(H.shape[1])[None, :] < lengths[:, None]
    x = np.where(valid, np.exp(np.where(valid, H, 0.0)), 0.0)
    if intervals:
        out = unc.ar1_ols(x, R, weights, lengths, conf=conf)
        beta, cov, tq = out["beta"], out["cov"], out["tq"]
    else:
        cols, _ = unc.design_columns(x, R, weights, lengths)
        s0 = np.einsum("rti,rtj->rij", *(np.moveaxis(cols, 0, -1),) * 2)
        beta = np.einsum("rij,rj->ri", unc._inv2(s0[:, :2, :2]), s0[:, :2, 2])
    a, b = beta[:, 0], beta[:, 1]
    Rv = np.where(valid, R, 0.0)
    resid = np.where(valid, R - (b[:, None] - a[:, None] * x), 0.0)
    mean = Rv.sum(axis=1) / lengths
    tss = (np.where(valid, R - mean[:, None], 0.0) ** 2).sum(axis=1)
    res = {"n": lengths, "a": a, "b": b, "ceiling": b - a,
           "r2": 1 - (resid**2).sum(axis=1) / tss, "rmse": np.sqrt((resid**2).sum(axis=1) / lengths)}
    if intervals:
        se_c = unc.combo_stderr(cov, [-1.0, 1.0])
        res.update(a_stderr=np.sqrt(cov[:, 0, 0]), b_stderr=np.sqrt(cov[:, 1, 1]), cov_ab=cov[:, 0, 1],
                   ceiling_stderr=se_c, ceiling_lo=b - a - tq * se_c, ceiling_hi=b - a + tq * se_c,
                   phi=out["phi"])
    return pd.DataFrame(res)
