"""The forms a final score may take against model size, each held inside the score's range.

``u = log10 N``; a score in ``bounds = (lo, hi)`` (an accuracy in [0, 1], a reward in [-1, 1]).

- ``logit-linear``: ``logit(y) = alpha + beta * u`` (2 parameters): the score keeps climbing
  towards the top of the range at a constant rate on the logit scale;
- ``saturating``: ``y = C - B * N^-gamma``, ``C`` at most the top, ``B >= 0``, ``gamma > 0``
  (3 parameters): the score approaches a ceiling of its own on the score's scale;
- ``logit-ceiling``: ``logit((y - lo) / (c - lo)) = alpha + beta * u`` with a ceiling ``c``
  above every observed score and at most the top (3 parameters): logit-linear below a ceiling
  of its own, so it bends where the scores do; at ``c`` = the top it is logit-linear.

Each is fitted by least squares: the logit forms on the logit scale (the scale their
errors are measured on), the saturating form on the score's scale.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

from entropylaw.errors import EntropyLawError
from entropylaw.fit.logit import EPS, from_logit, to_logit

FORMS = ("logit-linear", "saturating", "logit-ceiling")
N_PARAMS = {"logit-linear": 2, "saturating": 3, "logit-ceiling": 3}
WHAT = {"logit-linear": "logit(y) linear in log10 N",
        "saturating": "y = C - B N^-gamma, C at most the top",
        "logit-ceiling": "logit(y / c) linear in log10 N, a ceiling c below the top"}


def fit_form(form, u, y, bounds):
    """Parameters of ``form`` fitted to sizes ``u = log10 N`` and scores ``y``."""
    u, y = np.asarray(u, float), np.asarray(y, float)
    if len(np.unique(u)) < N_PARAMS[form]:
        raise EntropyLawError(f"the {form} form needs {N_PARAMS[form]} sizes")
    if form == "logit-linear":
        slope, icpt = np.polyfit(u, to_logit(y, bounds), 1)
        return {"alpha": float(icpt), "beta": float(slope)}
    if form == "saturating":
        return _fit_saturating(u, y, bounds)
    return _fit_logit_ceiling(u, y, bounds)


def eval_form(form, p, u, bounds):
    """``form`` with parameters ``p`` at sizes ``u = log10 N``, inside ``bounds``."""
    u = np.asarray(u, float)
    if form == "logit-linear":
        return from_logit(p["alpha"] + p["beta"] * u, bounds)
    if form == "saturating":
        return np.clip(p["C"] - p["B"] * 10 ** (-p["gamma"] * u), *bounds)
    lo = bounds[0]
    return lo + (p["c"] - lo) * special.expit(p["alpha"] + p["beta"] * u)


def _fit_saturating(u, y, bounds):
    # profile over gamma: for each gamma, C and B in closed form (the 2x2 normal equations, the
    # column measured from the sizes' mean: 10^(-gamma u) itself underflows once gamma u passes ~15)
    top = bounds[1]
    ubar = float(np.mean(u))

    def solve(gammas):
        x = 10 ** (-np.outer(np.atleast_1d(gammas), u - ubar))
        xm, ym = x.mean(axis=1), y.mean()
        sxx = np.sum((x - xm[:, None]) ** 2, axis=1)
        slope = np.sum((x - xm[:, None]) * (y - ym), axis=1) / np.maximum(sxx, 1e-300)
        B = -slope
        C = ym + B * xm
        high = C > top  # the ceiling at the range's top: B alone
        B = np.where(high, np.sum(x * (top - y), axis=1) / np.maximum(np.sum(x * x, axis=1), 1e-300), B)
        C = np.where(high, top, C)
        B = np.maximum(B, 0.0)
        return C, B, np.sum((y - (C[:, None] - B[:, None] * x)) ** 2, axis=1)

    grid = np.linspace(0.02, 3.0, 150)
    g0 = float(grid[int(np.argmin(solve(grid)[2]))])
    res = optimize.minimize_scalar(lambda g: float(solve(g)[2][0]), bounds=(max(0.01, g0 - 0.03), g0 + 0.03),
                                   method="bounded")
    gamma = float(res.x if res.fun <= solve(g0)[2][0] else g0)
    C, B, _ = solve(gamma)
    return {"C": float(C[0]), "B": float(B[0] * 10 ** (gamma * ubar)), "gamma": gamma}


def _fit_logit_ceiling(u, y, bounds):
    # profile over the ceiling c in (max y, top], on the logit scale of y; the grid is geometric
    # in the gap above the largest score, where the fit is most sensitive to c
    lo, top = bounds
    ymax = float(np.max(y))
    if ymax >= top - 0.005 * (top - lo):  # within the size law's EDGE of the top: no room below it
        raise EntropyLawError("a score at the top of the range leaves no room for a ceiling below it")
    z = to_logit(y, bounds)
    um = u.mean()
    suu = np.sum((u - um) ** 2)

    def solve(fracs):
        c = ymax + (top - ymax) * np.atleast_1d(fracs)
        zc = special.logit(np.clip((y[None, :] - lo) / (c[:, None] - lo), EPS, 1 - EPS))
        beta = np.sum((u - um) * (zc - zc.mean(axis=1, keepdims=True)), axis=1) / suu
        alpha = zc.mean(axis=1) - beta * um
        fit = lo + (c[:, None] - lo) * special.expit(alpha[:, None] + beta[:, None] * u)
        return c, alpha, beta, np.sum((z - to_logit(fit, bounds)) ** 2, axis=1)

    grid = np.geomspace(1e-3, 1.0, 60)
    sse = solve(grid)[3]
    i = int(np.argmin(sse))
    lo_f, hi_f = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = optimize.minimize_scalar(lambda f: float(solve(f)[3][0]), bounds=(lo_f, hi_f), method="bounded")
    frac = float(res.x if res.fun <= sse[i] else grid[i])
    c, alpha, beta, _ = solve(frac)
    return {"c": float(c[0]), "alpha": float(alpha[0]), "beta": float(beta[0])}
