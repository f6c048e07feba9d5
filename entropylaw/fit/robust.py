"""Robust and errors-in-variables variants of the entropy-law fit.

- :func:`robust_fit`: Huber or soft-L1 loss (``scipy.optimize.least_squares``) so a few
  outlier steps (a crashed evaluation, a reward bug) do not drag the line. The loss scale
  is 1.345 robust standard deviations of the least-squares residuals (MAD / 0.6745), the
  usual 95 %-efficiency tuning for Huber. Returns the final IRLS weights too: weighted
  least squares with them reproduces the robust estimate, so the AR(1) covariance
  machinery applies unchanged.
- :func:`odr_fit`: orthogonal distance regression (``scipy.odr``) because the logged
  entropy is itself a noisy batch estimate. Its standard deviation, when not given, is
  estimated from the second differences of the entropy series (a smooth trend barely
  contributes to them): ``sd = 1.4826 * MAD(diff2(H)) / sqrt(6)``.

>>> import numpy as np
>>> H = np.linspace(1.0, 0.1, 30)
>>> R = 0.9 - 0.3 * np.exp(H)
>>> R[5] += 0.3                      # one broken evaluation
>>> a, b, w = robust_fit(np.exp(H), R, loss="huber")
>>> round(a, 3), round(b, 3), bool(w[5] < 0.2)
(0.299, 0.898, True)
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

LOSSES = ("huber", "soft_l1")


def mad_sigma(r) -> float:
    r = np.asarray(r, float)
    return float(1.4826 * np.median(np.abs(r - np.median(r))))


def robust_fit(f, R, loss="huber", weights=None, f_scale=None):
    """Fit ``R = b - a f`` with a robust loss; returns ``(a, b, irls_weights)``.

    ``irls_weights`` multiply ``weights`` (when given) in the weighted least-squares
    problem whose solution equals the robust one.
    """
    if loss not in LOSSES:
        raise ValueError(f"unknown robust loss {loss!r} (expected one of {LOSSES})")
    f, R = np.asarray(f, float), np.asarray(R, float)
    sw = np.sqrt(np.ones_like(f) if weights is None else np.asarray(weights, float))
    X = np.column_stack([-f, np.ones_like(f)]) * sw[:, None]
    y = R * sw
    beta0, *_ = np.linalg.lstsq(X, y, rcond=None)
    if f_scale is None:
        f_scale = 1.345 * mad_sigma(y - X @ beta0)
        if f_scale <= 0:  # more than half the points fit exactly: nothing to down-weight
            return float(beta0[0]), float(beta0[1]), np.ones_like(f)
    res = optimize.least_squares(lambda p: y - X @ p, beta0, jac=lambda p: -X, loss=loss,
                                 f_scale=f_scale, method="trf", xtol=1e-14, ftol=1e-14, gtol=1e-14)
    z2 = ((y - X @ res.x) / f_scale) ** 2
    # rho'(z^2): the weight each point carries at the solution
    w = np.where(z2 <= 1, 1.0, 1 / np.sqrt(np.maximum(z2, 1e-300))) if loss == "huber" else 1 / np.sqrt(1 + z2)
    return float(res.x[0]), float(res.x[1]), w


def entropy_noise_sd(H) -> float:
    """Noise sd of an entropy series from its second differences (robust to a smooth trend)."""
    H = np.asarray(H, float)
    if len(H) < 4:
        return float("nan")
    return mad_sigma(np.diff(H, 2)) / np.sqrt(6)


def odr_fit(H, R, entropy_sd=None, score_sd=None, beta0=(0.1, 0.5)):
    """Errors-in-variables fit of ``R = b - a exp(H)``; returns dict a, b, a_stderr, b_stderr, entropy_sd.

    ``score_sd`` defaults to the least-squares residual sd. The standard errors are
    scipy.odr's (nominal, independent errors).
    """
    import warnings

    with warnings.catch_warnings():  # scipy >= 1.17 deprecates scipy.odr (removal planned for 1.19)
        warnings.simplefilter("ignore", DeprecationWarning)
        from scipy import odr

    H, R = np.asarray(H, float), np.asarray(R, float)
    sx = entropy_noise_sd(H) if entropy_sd is None else float(entropy_sd)
    if not np.isfinite(sx) or sx <= 0:
        sx = 1e-12 * max(np.ptp(H), 1e-12)  # noiseless entropy: ODR reduces to least squares
    if score_sd is None:
        X = np.column_stack([-np.exp(H), np.ones_like(H)])
        beta, *_ = np.linalg.lstsq(X, R, rcond=None)
        score_sd = max(np.std(R - X @ beta, ddof=2), 1e-12)
        beta0 = beta
    model = odr.Model(lambda beta, h: beta[1] - beta[0] * np.exp(h))
    data = odr.RealData(H, R, sx=sx, sy=score_sd)
    out = odr.ODR(data, model, beta0=list(beta0), maxit=200).run()
    return {"a": float(out.beta[0]), "b": float(out.beta[1]),
            "a_stderr": float(out.sd_beta[0]), "b_stderr": float(out.sd_beta[1]),
            "entropy_sd": float(sx), "score_sd": float(score_sd)}
