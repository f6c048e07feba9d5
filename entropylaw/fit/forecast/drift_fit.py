"""logit-drift's model: the climb ``z = A + c ln(1 + t)`` on the logit scale of a bounded score,
fitted to the late half of a series' points with binomial weights and a Gaussian (or
Student-t) prior on the rate ``c`` (:mod:`.drift` is the method, :mod:`.drift_prior` its prior)."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm, qmc

from entropylaw.fit.logit import to_logit
from entropylaw.fit.forecast.data import robust_noise
from entropylaw.fit.forecast.problems import run_problems

MIN_SD = 0.02
MIN_LATE = 2
QMC_DIMS = 3  # a draw of logit-drift: its two coefficients (A and c) and one observation's noise


def quasi_normals(n: int, seed: int, dims: int = QMC_DIMS) -> np.ndarray:
    """``n`` draws of ``dims`` independent standard normals from a scrambled Halton sequence:
    quasi-random points spread evenly, so the 5 and 95 % points of 200 draws sit where the
    distribution's own are (pseudo-random ones move their interval's ends by about 15 % from
    one seed to the next, and the backtest's calibration, a quantile of a few runs' errors,
    read that noise as a miss). Deterministic for a ``seed``.

    >>> z = quasi_normals(200, seed=0)
    >>> z.shape, bool(abs(np.quantile(z[:, 0], 0.95) - 1.645) < 0.05)
    ((200, 3), True)
    """
    u = qmc.Halton(d=dims, scramble=True, seed=seed).random(max(int(n), 1))
    return norm.ppf(np.clip(u, 1e-12, 1 - 1e-12))


def logit_weights(values, bounds, n_problems=None, noise=None):
    """Binomial precision of each point's logit, ``n p (1 - p)``, and ``n``: the validation
    set's size (``n_problems``: :func:`~.problems.run_problems`), else the ``n`` whose binomial
    noise matches the window's (``noise``: its SD)."""
    lo, hi = bounds
    p = (np.asarray(values, float) - lo) / (hi - lo)
    n = n_problems
    if n is None:
        sd = noise if noise and noise > 0 else 0.01
        pm = float(np.clip(np.median(p), 0.05, 0.95))
        n = float(np.clip(pm * (1 - pm) / (sd / (hi - lo)) ** 2, 20.0, 1e5))
    p = np.clip(p, 0.5 / n, 1 - 0.5 / n)
    return n * p * (1 - p), float(n)


def late(series):
    """The late half of a series' points (at least :data:`MIN_LATE`)."""
    k = max(MIN_LATE, len(series) // 2)
    return series.steps[-k:], series.values[-k:]


def posterior(t, z, w, prior_c=None, anchor=None):
    """Mean (2,) and covariance (2, 2) of ``(A, c)`` given ``z = A + c ln(1 + t)`` with
    precisions ``w`` (scaled by the over-dispersion) and a Gaussian prior ``(mean, sd)`` on c;
    and the over-dispersion factor. ``anchor = (T, mean, sd)``: a Gaussian prior on the logit
    at step ``T`` (the final score the size law predicts for this size), a linear constraint
    on ``(A, c)``."""
    X = np.stack([np.ones_like(t), np.log1p(t)], axis=1)
    P0 = np.zeros((2, 2))
    b0 = np.zeros(2)  # P0 times the prior's mean
    if prior_c is not None:
        P0[1, 1] = 1.0 / prior_c[1] ** 2
        b0[1] = prior_c[0] / prior_c[1] ** 2
    if anchor is not None:
        x = np.array([1.0, np.log1p(anchor[0])])
        P0 = P0 + np.outer(x, x) / anchor[2] ** 2
        b0 = b0 + x * anchor[1] / anchor[2] ** 2
    XtW = X.T * w
    mean = np.linalg.solve(XtW @ X + P0, XtW @ z + b0)
    resid = z - X @ mean
    phi = float(max(1.0, np.sum(w * resid**2) / max(len(z) - 2, 1))) if len(z) > 2 else 1.0
    cov = np.linalg.inv(XtW @ X / phi + P0)
    mean = cov @ (XtW @ z / phi + b0)
    return mean, cov, phi


def t_posterior(t, z, w, prior, n_draws, seed, extra=None, normals=None):
    """As :func:`posterior`, with a Student-t prior on ``c`` (``prior["c"] = [loc, scale]``,
    ``prior["nu"]`` degrees of freedom) and a flat one on ``A``: given ``c`` the model is
    Gaussian, so ``c``'s posterior is the window's Gaussian likelihood times the t density,
    computed on a grid; ``A | c`` is Gaussian. Returns the posterior median of ``(A, c)``,
    the covariance of the draws, the over-dispersion and ``n_draws`` joint draws: from
    ``normals`` (``(n_draws, 2)`` standard normals, :func:`quasi_normals`) where given, else
    pseudo-random from ``seed``."""
    own, own_cov, phi = posterior(t, z, w)
    sd_own = float(np.sqrt(own_cov[1, 1]))
    loc, scale = prior["c"]
    nu = float(prior.get("nu", 3.0))
    grid = np.linspace(min(own[1] - 12 * sd_own, loc - 60 * scale), max(own[1] + 12 * sd_own, loc + 60 * scale), 20001)
    logp = -0.5 * ((grid - own[1]) / sd_own) ** 2 - 0.5 * (nu + 1) * np.log1p(((grid - loc) / scale) ** 2 / nu)
    if extra is not None:  # one more Gaussian measurement of c (the training score's climb)
        logp = logp - 0.5 * ((grid - extra[0]) / extra[1]) ** 2
    p = np.exp(logp - logp.max())
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    x = np.log1p(t)
    sw = float(np.sum(w))

    def a_of(c):  # A's posterior mean given c (flat prior on A)
        return (np.sum(w * z) - c * np.sum(w * x)) / sw
    c_med = float(np.interp(0.5, cdf, grid))
    if normals is None:
        rng = np.random.default_rng(seed)
        u, za = rng.uniform(size=max(n_draws, 1)), None
    else:
        u, za = norm.cdf(normals[:, 0]), normals[:, 1]
    c = np.interp(u, cdf, grid)
    if za is None:
        za = rng.standard_normal(len(c))
    a = a_of(c) + za * np.sqrt(phi / sw)
    draws = np.stack([a, c], axis=1)
    return np.array([a_of(c_med), c_med]), np.cov(draws.T) if len(c) > 2 else own_cov, phi, draws


def fit_full(run, bounds=None):
    """The drift rate ``c`` of a finished run, fitted on the late half of its points with no
    prior, or None (an unbounded score, too few points, a score on a bound)."""
    bounds = bounds or run.bounds
    y = run.target
    if bounds is None or len(y) < 2 * MIN_LATE:
        return None
    s, v = late(y)
    w, n = logit_weights(v, bounds, run_problems(run)[0], robust_noise(y.values))
    if on_bound(v, bounds, n):
        return None
    mean, _, _ = posterior(np.maximum(s, 0.0), to_logit(v, bounds, 0.5 / n), w)
    return float(mean[1])


def on_bound(values, bounds, n) -> bool:
    tol = (bounds[1] - bounds[0]) * 0.5 / n
    return bool(np.all((values[-2:] <= bounds[0] + tol) | (values[-2:] >= bounds[1] - tol)))


def train_rate(run):
    """The training score's late-half climb ``(c, se)`` on the logit scale, or None."""
    sc = run.score
    if sc is None or len(sc) < 2 * MIN_LATE or not np.all((sc.values >= 0) & (sc.values <= 1)):
        return None
    s, v = late(sc)
    w, n = logit_weights(v, (0.0, 1.0), None, robust_noise(sc.values))
    mean, cov, _ = posterior(np.maximum(s, 0.0), to_logit(v, (0.0, 1.0), 0.5 / n), w)
    return float(mean[1]), float(np.sqrt(cov[1, 1]))
