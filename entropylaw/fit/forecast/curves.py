"""Curve families and the profile least-squares engine behind :mod:`entropylaw.fit.forecast.core`.

Every curve here is linear in its coefficients once its shape (a time constant, an
exponent, a midpoint) is fixed: ``y = X(shape) @ beta``. The engine therefore

1. evaluates a grid of shapes for many data columns at once (the data and its bootstrap
   resamples), solving each linear least-squares problem by QR (stable when a shape
   makes the columns nearly collinear, e.g. a time constant far beyond the window);
2. refines the data column's best shape with a bounded local search;
3. optionally adds a Gaussian prior on coefficients and shapes (``Prior``), as extra
   pseudo-observations, which makes the fit a posterior mode (empirical Bayes);
4. keeps one coefficient non-negative when asked (an entropy floor): where the free fit
   puts it below zero the fit without it (coefficient 0) is the constrained optimum.

Time ``t`` is measured from the first logged step (``t = step - origin``), ``L`` is the
window length in steps; shape bounds scale with ``L`` so that a run logged every step and
one logged every 10 steps get the same treatment.

>>> import numpy as np
>>> t = np.arange(0.0, 100.0)
>>> y = 0.8 - 0.5 * np.exp(-t / 20)
>>> fam = exp_saturation(L=100)
>>> fit = fit_profile(fam, t, y)
>>> round(float(np.exp(fit.shape[0])), 3), np.round(fit.beta, 3).tolist()
(20.0, [0.8, -0.5])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import optimize

from entropylaw.fit import uncertainty as unc
from entropylaw.terminal import count

LN10 = float(np.log(10.0))


class TooFewPoints(ValueError):
    """A curve has at least as many parameters as points: the caller reports why it cannot run."""


@dataclass
class Family:
    """A curve ``y = basis(shape, t) @ beta``; shapes live on ``bounds`` (log scale)."""

    name: str
    coef_names: tuple
    shape_names: tuple
    bounds: list  # [(lo, hi)] per shape parameter
    basis: Callable  # (shapes (G, S), t (n,)) -> X (G, n, p)
    grid_n: tuple = ()
    nonneg: int | None = None  # coefficient kept >= 0

    @property
    def n_params(self) -> int:
        return len(self.coef_names) + len(self.shape_names)

    def grid(self) -> np.ndarray:
        if not self.shape_names:
            return np.zeros((1, 0))
        axes = [np.linspace(lo, hi, n) for (lo, hi), n in zip(self.bounds, self.grid_n)]
        return np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")], axis=1)


@dataclass
class Prior:
    """Independent Gaussian priors: means and variances of coefficients and shapes (None: flat)."""

    coef_mean: np.ndarray | None = None
    coef_var: np.ndarray | None = None
    shape_mean: np.ndarray | None = None
    shape_var: np.ndarray | None = None


@dataclass
class ProfileFit:
    family: Family
    shape: np.ndarray  # (S,)
    beta: np.ndarray  # (p,)
    rss: float
    sigma: float
    n: int
    at_bound: list = field(default_factory=list)  # names of shapes at a bound
    shape_draws: np.ndarray | None = None  # (B, S)
    beta_draws: np.ndarray | None = None  # (B, p)

    def predict(self, t) -> np.ndarray:
        return (self.family.basis(self.shape[None, :], np.asarray(t, float))[0] @ self.beta)


# --------------------------------------------------------------------------- families
def _exp_decay_basis(shapes, t):
    tau = np.exp(shapes[:, 0])[:, None]
    e = np.exp(-t[None, :] / tau)
    return np.stack([np.ones_like(e), e], axis=-1)


def exp_saturation(L: float) -> Family:
    """``y = A + D exp(-t / tau)`` (plateau A; rising when D < 0); shape ``log tau``."""
    return Family("exp-saturation", ("A", "D"), ("log_tau",),
                  [(np.log(max(L / 50, 0.5)), np.log(20 * L))], _exp_decay_basis, (121,))


def _power_basis(shapes, t):
    c = np.exp(shapes[:, 0])[:, None]
    p = np.power(t[None, :] + 1.0, -c)
    return np.stack([np.ones_like(p), -p], axis=-1)


def power_saturation(L: float) -> Family:
    """``y = A - B (t + 1)^(-c)`` (plateau A at infinite t); shape ``log c``."""
    return Family("power", ("A", "B"), ("log_c",), [(np.log(0.02), np.log(5.0))], _power_basis, (121,))


def _sigmoid_basis(shapes, C):
    mid = np.exp(shapes[:, 0])[:, None]
    slope = np.exp(shapes[:, 1])[:, None]
    with np.errstate(divide="ignore", over="ignore"):
        s = 1.0 / (1.0 + np.power(mid / np.maximum(C[None, :], 1e-300), slope))
    return np.stack([np.ones_like(s), s], axis=-1)


def sigmoid(C_lo: float, C_hi: float) -> Family:
    """ScaleRL's ``y = R0 + (A - R0) / (1 + (C_mid / C)^B)`` with coefficients ``(R0, A - R0)``.

    ``C`` is compute (steps + 1, or cumulative tokens); shapes ``log C_mid`` in
    ``[C_lo / 2, 50 C_hi]`` and ``log B`` in ``[0.2, 5]``."""
    return Family("sigmoid", ("R0", "gain"), ("log_mid", "log_slope"),
                  [(np.log(C_lo / 2), np.log(50 * C_hi)), (np.log(0.2), np.log(5.0))], _sigmoid_basis, (41, 21))


def entropy_exp_decay(L: float) -> Family:
    """``H = H_floor + D exp(-t / tau)``, ``H_floor >= 0``."""
    return Family("exp-decay", ("floor", "D"), ("log_tau",),
                  [(np.log(max(L / 50, 0.5)), np.log(20 * L))], _exp_decay_basis, (121,), nonneg=0)


def _power_decay_basis(shapes, t):
    c = np.exp(shapes[:, 0])[:, None]
    p = np.power(t[None, :] + 1.0, -c)
    return np.stack([np.ones_like(p), p], axis=-1)


def entropy_power_decay(L: float) -> Family:
    """``H = H_floor + B (t + 1)^(-c)``, ``H_floor >= 0``."""
    return Family("power-decay", ("floor", "B"), ("log_c",), [(np.log(0.02), np.log(5.0))],
                  _power_decay_basis, (121,), nonneg=0)


def _law_basis(shapes, H):
    x = np.exp(H)[None, :]
    return np.stack([-x, np.ones_like(x)], axis=-1)


LAW = Family("law", ("a", "b"), (), [], _law_basis)


# --------------------------------------------------------------------------- engine
def _solve(X, Y, sw, prior_rows=None):
    """Least squares of every column of ``Y`` (n, B) on every design ``X`` (G, n, p).

    Returns ``beta`` (G, p, B) and the objective (G, B): residual sum of squares plus the
    prior's penalty when ``prior_rows = (L (p,), L * mean (p,))`` is given."""
    Xw = X * sw[None, :, None]
    Yw = Y * sw[:, None]
    if prior_rows is not None:
        root, target = prior_rows
        G, _, p = X.shape
        Xw = np.concatenate([Xw, np.broadcast_to(np.diag(root), (G, p, p))], axis=1)
        Yw = np.concatenate([Yw, np.broadcast_to(target[:, None], (p, Y.shape[1]))], axis=0)
    Q, R = np.linalg.qr(Xw)
    QtY = np.swapaxes(Q, 1, 2) @ Yw
    beta = np.linalg.pinv(R) @ QtY
    obj = np.sum(Yw**2, axis=0)[None, :] - np.sum(QtY**2, axis=1)
    return beta, np.maximum(obj, 0.0)


def _objective(family, shapes, t, Y, sw, prior, sigma2):
    X = family.basis(shapes, t)
    rows = None
    pen_const = 0.0
    if prior is not None and prior.coef_var is not None:
        prec = np.where(np.isfinite(prior.coef_var), 1.0 / np.maximum(prior.coef_var, 1e-300), 0.0)
        root = np.sqrt(sigma2 * prec)
        rows = (root, root * np.nan_to_num(prior.coef_mean))
    beta, obj = _solve(X, Y, sw, rows)
    k = family.nonneg
    if k is not None:
        keep = [j for j in range(X.shape[2]) if j != k]
        sub_rows = None if rows is None else (rows[0][keep], rows[1][keep])
        if rows is not None:
            pen_const = rows[1][k] ** 2  # the prior's penalty for pinning the coefficient at 0
        beta0, obj0 = _solve(X[:, :, keep], Y, sw, sub_rows)
        use = beta[:, k, :] < 0
        obj = np.where(use, obj0 + pen_const, obj)
        full0 = np.zeros_like(beta)
        full0[:, keep, :] = beta0
        beta = np.where(use[:, None, :], full0, beta)
    if prior is not None and prior.shape_var is not None and shapes.shape[1]:
        prec = np.where(np.isfinite(prior.shape_var), 1.0 / np.maximum(prior.shape_var, 1e-300), 0.0)
        obj = obj + sigma2 * np.sum(prec * (shapes - np.nan_to_num(prior.shape_mean)) ** 2, axis=1)[:, None]
    return beta, obj


def fit_profile(family: Family, t, y, w=None, prior: Prior | None = None, sigma2=None,
                n_boot=0, block=None, seed=0, groups=None) -> ProfileFit:
    """Fit ``family`` to ``(t, y)``; with ``n_boot`` also moving-block residual bootstrap draws.

    ``sigma2`` scales the prior against the data (the residual variance of the fit without
    the prior); it is required with a prior. ``groups`` labels points of separate series
    (stacked): residuals are resampled within each series."""
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    n = len(y)
    if n <= family.n_params:
        raise TooFewPoints(f"{count(n, 'point')} for {family.n_params} parameters")
    sw = np.ones(n) if w is None else np.sqrt(np.asarray(w, float))
    if prior is not None and sigma2 is None:
        raise ValueError("a prior needs sigma2 (the residual variance without it)")
    s2 = 1.0 if sigma2 is None else float(max(sigma2, 1e-12))
    grid = family.grid()
    _, obj = _objective(family, grid, t, y[:, None], sw, prior, s2)
    g = int(np.argmin(obj[:, 0]))
    shape = grid[g].copy()
    if family.shape_names:
        steps = np.array([(hi - lo) / max(n_g - 1, 1) for (lo, hi), n_g in zip(family.bounds, family.grid_n)])
        local = [(max(lo, s - d), min(hi, s + d)) for s, d, (lo, hi) in zip(shape, steps, family.bounds)]

        def f(s):
            return float(_objective(family, np.asarray(s)[None, :], t, y[:, None], sw, prior, s2)[1][0, 0])

        res = optimize.minimize(f, shape, method="L-BFGS-B", bounds=local)
        if res.fun <= obj[g, 0]:
            shape = np.asarray(res.x, float)
    beta, _ = _objective(family, shape[None, :], t, y[:, None], sw, prior, s2)
    beta = beta[0, :, 0]
    fitted = family.basis(shape[None, :], t)[0] @ beta
    rss = float(np.sum((sw * (y - fitted)) ** 2))
    dof = max(n - family.n_params, 1)
    at_bound = []
    for name, s, (lo, hi), n_g in zip(family.shape_names, shape, family.bounds, family.grid_n):
        tol = 0.5 * (hi - lo) / max(n_g - 1, 1)
        if s - lo < tol or hi - s < tol:
            at_bound.append(name)
    out = ProfileFit(family, shape, beta, rss, float(np.sqrt(rss / dof)), n, at_bound)
    if n_boot:
        rng = np.random.default_rng(seed)
        groups = np.zeros(n, dtype=int) if groups is None else np.asarray(groups)
        noise = np.empty((n, n_boot))
        for g in np.unique(groups):
            where = np.nonzero(groups == g)[0]
            r = (y - fitted)[where]
            r = r - r.mean()
            idx = unc.block_indices(len(r), block or unc.default_block(len(r)), n_boot, rng)
            noise[where] = r[idx].T
        Y = fitted[:, None] + noise
        b_all, o_all = _objective(family, grid, t, Y, sw, prior, s2)
        best = np.argmin(o_all, axis=0)
        out.shape_draws = grid[best]
        out.beta_draws = b_all[best, :, np.arange(n_boot)]
    return out


def curve(family: Family, shapes, betas, t) -> np.ndarray:
    """Evaluate ``family`` for parameter rows ``shapes`` (B, S), ``betas`` (B, p) at ``t``: (B, m)."""
    t = np.asarray(t, float)
    out = np.empty((len(betas), len(t)))
    for i in range(0, len(betas), 256):  # chunks keep the (B, m, p) basis small
        X = family.basis(np.asarray(shapes[i:i + 256], float), t)
        out[i:i + 256] = np.einsum("bmp,bp->bm", X, betas[i:i + 256])
    return out
