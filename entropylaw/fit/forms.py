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

A fit is flagged (``flag``, and never the :func:`winner`) when its shape ``c`` sits at a
bound of its search range (the data want a shape outside it: the form does not describe
them), or when ``|a|`` or ``|b|`` exceeds ``ABSURD`` times the range of the scores (a
near-cancellation of two huge terms, not a description of the run).

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
# each form's model and ceiling in a line of text (the table above)
MODELS = {"exp": "R = -a*exp(H) + b", "linear": "R = -a*H + b", "exp-free": "R = -a*exp(c*H) + b",
          "power": "R = -a*H^c + b"}
SHAPE_BOUNDS = {"exp-free": (1e-3, 20.0), "power": (1e-3, 10.0)}
ABSURD = 100.0  # |a| or |b| beyond this many score ranges flags a fit


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
            "aic": loglik_term + 2 * k, "bic": loglik_term + k * np.log(n), "flag": flag(form, a, b, c, R)}


def flag(form: str, a: float, b: float, c: float | None, R) -> str:
    """Why a fitted form should not be trusted ("" when nothing is wrong).

    >>> flag("power", 0.3, 0.8, 10.0, [0.2, 0.5])
    'shape c = 10 at the bound 10 of its range'
    >>> flag("exp", -2.4e11, -2.4e11, None, [0.2, 0.5])
    '|a| = 2.4e+11 and |b| = 2.4e+11 exceed 100 x the score range 0.3'
    """
    reasons = []
    if c is not None and form in SHAPE_BOUNDS:
        for bound in SHAPE_BOUNDS[form]:
            if abs(np.log(c) - np.log(bound)) < 1e-3:
                reasons.append(f"shape c = {c:.4g} at the bound {bound:g} of its range")
    span = float(np.ptp(np.asarray(R, float))) if len(R) else 0.0
    big = [f"|{name}| = {abs(v):.2g}" for name, v in (("a", a), ("b", b)) if abs(v) > ABSURD * span]
    if big and span > 0:
        reasons.append(f"{' and '.join(big)} exceed{'s' if len(big) == 1 else ''} {ABSURD:g} x the score range "
                       f"{span:.3g}")
    return "; ".join(reasons)


def compare_forms(H, R, w=None, forms=FORMS) -> pd.DataFrame:
    """All forms on the same points, best AIC first, with ``delta_aic`` and ``delta_bic``."""
    rows = [fit_form(f, H, R, w) for f in forms]
    out = pd.DataFrame(rows).set_index("form").sort_values("aic")
    out["delta_aic"] = out["aic"] - out["aic"].min()
    out["delta_bic"] = out["bic"] - out["bic"].min()
    return out


def winner(comparison: pd.DataFrame) -> dict:
    """Which form wins by AIC and by BIC among the unflagged ones (None when every form is flagged)."""
    ok = comparison[comparison["flag"] == ""] if "flag" in comparison else comparison
    if ok.empty:
        return {"aic": None, "bic": None}
    return {"aic": str(ok["aic"].idxmin()), "bic": str(ok["bic"].idxmin())}
