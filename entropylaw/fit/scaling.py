"""Coefficients vs model size (paper Fig. 7): a and b each linear in log10 N.

N is the number of non-embedding parameters. ``a``, ``b`` and the ceiling ``b - a`` are
each regressed on ``u = log10 N`` by least squares (the ceiling's regression is exactly
the difference of the other two, and gives its prediction interval directly). Prediction
intervals for a new size use t with n-2 degrees of freedom:
``y0 +/- t * s * sqrt(1 + 1/n + (u0 - mean u)^2 / Sxx)``. Leave-one-size-out refits without
each size (all runs of that size) and checks whether it falls inside its interval.

>>> import numpy as np
>>> N = np.array([0.5e9, 1.5e9, 3e9, 7e9])
>>> a = 0.1 + 0.05 * np.log10(N / 1e9) + np.array([0.002, -0.001, 0.0, 0.001])
>>> b = 0.6 + 0.08 * np.log10(N / 1e9)
>>> law = SizeLaw().fit(N, a, b)
>>> p = law.predict(32e9)
>>> round(p["a"], 2), round(p["ceiling"], 2)
(0.17, 0.55)
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import special  # stdtrit = t quantile (scipy.stats costs ~1.5 s to import)

from entropylaw.errors import EntropyLawError
from entropylaw.fit.uncertainty import check_conf

TARGETS = ("a", "b", "ceiling")


def _line(u, y):
    n = len(u)
    ubar = u.mean()
    sxx = float(((u - ubar) ** 2).sum())
    slope = float(((u - ubar) * (y - y.mean())).sum() / sxx)
    icpt = float(y.mean() - slope * ubar)
    resid = y - (icpt + slope * u)
    s = float(np.sqrt(resid @ resid / (n - 2))) if n > 2 else float("nan")
    return {"intercept": icpt, "slope": slope, "s": s, "n": n, "ubar": float(ubar), "sxx": sxx}


def _size_lines(u, values) -> dict:
    """One line per target through the mean of each size's runs: seeds of one size share that
    size's departure from the line, and a copy of a run is no second size (ten runs of five sizes,
    each twice, are five points: fitted as ten, the interval at 72B narrowed as if from ten sizes).

    >>> u = np.log10([1e9, 1e9, 2e9, 4e9])
    >>> _size_lines(u, {"a": np.array([1.0, 3.0, 3.0, 4.0])})["a"]["n"]
    3
    """
    sizes, inv = np.unique(u, return_inverse=True)
    return {k: _line(sizes, np.bincount(inv, weights=v) / np.bincount(inv)) for k, v in values.items()}


class SizeLaw:
    """``a, b, ceiling = alpha + beta * log10(N)`` with prediction intervals, each size one point
    (the mean of its runs: :func:`_size_lines`)."""

    def __init__(self, conf=0.95):
        self.conf = conf

    def fit(self, n_params, a, b, labels=None, loo=True):
        check_conf(self.conf)
        N = np.asarray(n_params, float)
        a, b = np.asarray(a, float), np.asarray(b, float)
        if N.shape != a.shape or N.shape != b.shape:
            raise EntropyLawError("n_params, a and b must have one value per run")
        bad = ~np.isfinite(N) | (N <= 0)
        if bad.any():
            which = labels[int(np.argmax(bad))] if labels is not None else int(np.argmax(bad))
            raise EntropyLawError(f"run {which}: unknown or non-positive parameter count "
                                  "(give it with `params` N, `config` config.json for the exact non-embedding count, "
                                  "or a model name with a size)")
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            raise EntropyLawError("non-finite a or b among the runs' fits")
        if len(np.unique(N)) < 2 or len(N) < 3:
            raise EntropyLawError(f"the size law needs at least 3 runs of at least 2 different sizes "
                                  f"(got {len(N)} runs, {len(np.unique(N))} sizes)")
        self.n_params_, self.u_ = N, np.log10(N)
        self.values_ = {"a": a, "b": b, "ceiling": b - a}
        self.labels_ = list(labels) if labels is not None else [str(i) for i in range(len(N))]
        self.lines_ = _size_lines(self.u_, self.values_)
        self.dof_ = len(np.unique(N)) - 2
        self.leave_one_out_ = self._loo() if loo and len(np.unique(N)) >= 3 else None
        return self

    def predict(self, n_params) -> dict:
        """Predicted a, b, ceiling at size ``n_params`` with ``*_lo``/``*_hi`` prediction limits."""
        return _predict(self.lines_, float(np.log10(n_params)), self.conf) | {"n_params": float(n_params)}

    def _loo(self) -> pd.DataFrame:
        rows = []
        for size in np.unique(self.n_params_):
            keep = self.n_params_ != size
            lines = _size_lines(self.u_[keep], {k: v[keep] for k, v in self.values_.items()})
            pred = _predict(lines, float(np.log10(size)), self.conf)
            for i in np.nonzero(~keep)[0]:
                row = {"run": self.labels_[i], "n_params": float(size)}
                for k in TARGETS:
                    obs = float(self.values_[k][i])
                    row.update({f"{k}_observed": obs, f"{k}_predicted": pred[k],
                                f"{k}_inside": bool(pred[f"{k}_lo"] <= obs <= pred[f"{k}_hi"])
                                if np.isfinite(pred[f"{k}_lo"]) else None})
                rows.append(row)
        return pd.DataFrame(rows)

    def to_dict(self) -> dict:
        out = {"n_runs": len(self.u_), "n_sizes": len(np.unique(self.u_)), "dof": self.dof_, "conf": self.conf,
               "lines": {k: {kk: vv for kk, vv in v.items()} for k, v in self.lines_.items()},
               "log": "log10 of non-embedding parameters"}
        if self.leave_one_out_ is not None:
            out["leave_one_out"] = self.leave_one_out_.to_dict(orient="records")
        return out


def _predict(lines, u0, conf) -> dict:
    out = {}
    for k, ln in lines.items():
        y0 = ln["intercept"] + ln["slope"] * u0
        if ln["n"] > 2:
            half = special.stdtrit(ln["n"] - 2, 0.5 + conf / 2) * ln["s"] * np.sqrt(
                1 + 1 / ln["n"] + (u0 - ln["ubar"]) ** 2 / ln["sxx"])
        else:
            half = float("nan")  # two points define the line exactly: no interval
        out.update({k: float(y0), f"{k}_lo": float(y0 - half), f"{k}_hi": float(y0 + half)})
    return out
