"""Functional forms of score vs entropy, fitted side by side and ranked by AIC/BIC.

Every form is ``R = b - a * f_c(H)``: linear in ``(a, b)`` for a fixed shape ``c``, so each
is solved exactly for ``(a, b)`` and, where there is a shape parameter, ``c`` is found by a
bounded one-dimensional search on the residual sum of squares (a profile fit).

==========  ===========================  ==========  =============
form        model                        shape c     ceiling (H=0)
==========  ===========================  ==========  =============
``exp``     ``R = b - a exp(H)``         none        ``b - a``
``linear``  ``R = b - a H``              none        ``b``
``exp-free`` ``R = b - a exp(c H)``      (0, 20]     ``b - a``
``power``   ``R = b - a H^c`` (saturates  (0, 10]    ``b``
            at b as H -> 0)
==========  ===========================  ==========  =============

AIC = n ln(RSS/n) + 2k and BIC = n ln(RSS/n) + k ln n, k = mean parameters + 1 (the
noise variance). Autocorrelated residuals make both over-confident in absolute terms;
differences between forms fitted to the same points remain a fair ranking.

>>> import numpy as np
>>> H = np.linspace(1.2, 0.05, 40)
>>> R = 0.8 - 0.25 * np.exp(H) + 0.002 * np.sin(np.arange(40))
>>> table = compare_forms(H, R)
>>> table.index[0]
'exp'
>>> round(float(table.loc["exp", "ceiling"]), 2)
0.55
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import optimize

FORMS = ("exp", "linear", "exp-free", "power")
SHAPE_BOUNDS = {"exp-free": (1e-3, 20.0), "power": (1e-3, 10.0)}


def basis(form: str, H, c: float | None = None) -> np.ndarray:
    """``f_c(H)`` of a form (``R = b - a f_c(H)``)."""
    H = np.asarray(H, dtype=float)
    if form == "exp":
        return np.exp(H)
    if form == "linear":
        return H
    if form == "exp-free":
        return np.exp(c * H)
    if form == "power":
        return np.power(np.clip(H, 0, None), c)
    raise ValueError(f"unknown form {form!r} (expected one of {FORMS})")


def n_shape(form: str) -> int:
    return 1 if form in SHAPE_BOUNDS else 0


def ceiling_basis(form: str, c: float | None = None) -> float:
    """``f_c(0)``: the ceiling is ``b - a * f_c(0)``."""
    return float(basis(form, np.array([0.0]), c)[0])


def linear_fit(f, R, w=None):
    """Weighted least squares of ``R = b - a f``: returns ``(a, b, rss)`` (rss weighted)."""
    sw = np.sqrt(np.ones_like(f) if w is None else np.asarray(w, float))
    X = np.column_stack([-f, np.ones_like(f)]) * sw[:, None]
    beta, *_ = np.linalg.lstsq(X, R * sw, rcond=None)
    resid = R * sw - X @ beta
    return float(beta[0]), float(beta[1]), float(resid @ resid)


def fit_form(form: str, H, R, w=None) -> dict:
    """Fit one form; returns a, b, c, rss, ceiling, aic, bic, k, n."""
    H, R = np.asarray(H, float), np.asarray(R, float)
    c = None
    if form in SHAPE_BOUNDS:
        lo, hi = np.log(SHAPE_BOUNDS[form])

        def rss_at(logc):
            return linear_fit(basis(form, H, np.exp(logc)), R, w)[2]

        # coarse grid first: the profile can have several local minima
        grid = np.linspace(lo, hi, 41)
        start = grid[int(np.argmin([rss_at(g) for g in grid]))]
        step = grid[1] - grid[0]
        res = optimize.minimize_scalar(rss_at, bounds=(max(lo, start - step), min(hi, start + step)),
                                       method="bounded", options={"xatol": 1e-8})
        c = float(np.exp(res.x))
    a, b, rss = linear_fit(basis(form, H, c), R, w)
    n = len(H)
    k = 2 + n_shape(form) + 1
    loglik_term = n * np.log(max(rss, 1e-300) / n)
    return {"form": form, "a": a, "b": b, "c": c, "rss": rss, "n": n, "k": k,
            "ceiling": b - a * ceiling_basis(form, c),
            "aic": loglik_term + 2 * k, "bic": loglik_term + k * np.log(n)}


def compare_forms(H, R, w=None, forms=FORMS) -> pd.DataFrame:
    """All forms on the same points, best AIC first, with ``delta_aic`` and ``delta_bic``."""
    rows = [fit_form(f, H, R, w) for f in forms]
    out = pd.DataFrame(rows).set_index("form").sort_values("aic")
    out["delta_aic"] = out["aic"] - out["aic"].min()
    out["delta_bic"] = out["bic"] - out["bic"].min()
    return out


def winner(comparison: pd.DataFrame) -> dict:
    """Which form wins by AIC and by BIC."""
    return {"aic": str(comparison["aic"].idxmin()), "bic": str(comparison["bic"].idxmin())}
