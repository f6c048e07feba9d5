"""Forecast methods behind one interface (scikit-learn style: configuration in ``__init__``,
``fit(run)`` returns ``self``, learned attributes end in ``_``).

Every method, fitted on a :class:`~entropylaw.fit.forecast.data.RunData` cut at the window
end, gives the score at future steps, the plateau and the step by which 90 % of the
remaining change (from the fitted level at the window end to the plateau) is made, each
with an interval. A method that cannot run says why (``ok_ = False``, ``reason_``).

Intervals combine three parts, each a draw per bootstrap replicate:

1. parameter uncertainty: moving-block residual bootstrap, refitted (curve draws);
2. the noise of one new observation: ``sigma_``, the method's in-window residual SD;
3. model error growing with the horizon: the method is refitted on the window without its
   last 30 % of target points and scored on them (``late_rmse_``); the excess of that
   error over the noise, per unit of relative horizon ``h = (step - end) / (end - origin)``,
   gives a variance ``q_ * h`` (a random-walk growth; ``growth`` changes the power).
   With too few points for that, ``q_ = sigma_^2`` (the model error at ``h = 1`` is taken
   as large as the noise), and ``late_rmse_`` is None.

Forecasts and intervals are clipped to [0, 1] when every observed target value lies there.

>>> import numpy as np
>>> from entropylaw.fit.forecast.data import RunData
>>> steps = np.arange(0, 200, 5.0)
>>> run = RunData.from_arrays(steps, 0.8 - 0.5 * np.exp(-steps / 40))
>>> m = ExpSaturation().fit(run.window(100))
>>> round(m.plateau_, 3), round(m.t90_, 1)
(0.8, 192.1)
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
from scipy import special  # ndtri = normal quantile (scipy.stats costs ~1.5 s to import)

from entropylaw.fit.forecast import calibrate as cal
from entropylaw.fit.forecast import curves as fc
from entropylaw.fit.forecast.data import RunData


class CannotRun(Exception):
    """The method does not apply to this window (the message says why)."""


class ForecastMethod:
    name = "?"
    description = ""

    def __init__(self, conf=0.9, n_boot=200, seed=0, holdout=0.3, growth=1.0):
        self.conf = conf
        self.n_boot = n_boot
        self.seed = seed
        self.holdout = holdout
        self.growth = growth

    def get_params(self) -> dict:
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {k: getattr(self, k) for k in names}

    def clone(self, **change) -> "ForecastMethod":
        return type(self)(**{**self.get_params(), **change})

    # ------------------------------------------------------------------ fitting
    def fit(self, run: RunData) -> "ForecastMethod":
        self._start(run)
        try:
            self._fit(run, self.n_boot)
            self._calibrate(run)
            self.ok_ = True
        except CannotRun as err:
            self.reason_ = str(err)
        except fc.TooFewPoints as err:
            self.reason_ = f"the window holds too few {run.target_kind} points: {err}"
        return self

    def _start(self, run: RunData) -> None:
        self.ok_, self.reason_, self.warnings_ = False, None, []
        self.origin_, self.end_, self.bounds_ = run.origin, run.end, run.bounds
        self.target_kind_ = run.target_kind
        self.late_rmse_ = None

    def _fit(self, run: RunData, n_boot: int) -> None:
        """Set sigma_, plateau_, t90_, params_ and the draw arrays; raise CannotRun."""
        raise NotImplementedError

    def _calibrate(self, run: RunData) -> None:
        """Model error from the late part of the window (module docstring, part 3)."""
        y = run.target
        n_late = max(2, int(np.ceil(self.holdout * len(y))))
        self.q_ = self.sigma_**2
        if len(y) - n_late < 2:
            self.warnings_.append(f"too few {run.target_kind} points to score the method on the late part of the "
                                  "window: its model-error term is a guess (as large as the noise)")
            return
        cut = float(y.steps[-n_late - 1])
        early = self.clone(n_boot=0)
        early_run = run.window(cut)
        early._start(early_run)
        try:
            early._fit(early_run, 0)
        except (CannotRun, fc.TooFewPoints):
            self.warnings_.append("cannot refit on the early part of the window: its model-error term is a guess")
            return
        err = early._mid(y.steps[-n_late:]) - y.values[-n_late:]
        self.late_rmse_ = float(np.sqrt(np.mean(err**2)))
        h = (y.steps[-n_late:] - cut) / max(cut - run.origin, 1.0)
        self.q_ = max(float(np.mean(err**2)) - self.sigma_**2, 0.0) / float(np.mean(h**self.growth))

    # ------------------------------------------------------------------ using
    def _mid(self, steps) -> np.ndarray:
        raise NotImplementedError

    def _draws(self, steps) -> np.ndarray:
        """(n_boot, m) curve draws (parameter uncertainty only)."""
        raise NotImplementedError

    def predictive(self, steps, n_draws=None, calibrated=True):
        """Point forecast (m,) and predictive draws (B, m) at ``steps``; the draws on the
        score's bounded scale, scaled by the method's calibration factor
        (:mod:`entropylaw.fit.forecast.calibrate`; ``calibrated=False``: factor 1)."""
        steps = np.asarray(steps, float)
        mid = self._mid(steps)
        draws = self._draws(steps)
        if n_draws is not None and len(draws) != n_draws:
            draws = draws[np.random.default_rng(self.seed + 7).integers(0, len(draws), n_draws)]
        h = np.maximum(steps - self.end_, 0.0) / max(self.end_ - self.origin_, 1.0)
        sd = np.sqrt(self.sigma_**2 + self.q_ * h**self.growth)
        draws = draws + np.random.default_rng(self.seed + 1).standard_normal(draws.shape) * sd
        mid = self._bounded(mid, steps)
        c = cal.method_factor(self.name, self.target_kind_) if calibrated else 1.0
        return mid, cal.scale_draws(mid, draws, self.bounds_, c)

    def _bounded(self, mid, steps):
        """The point forecast inside the score's bounds; crossing one is said, once."""
        if self.bounds_ is None:
            return mid
        lo, hi = self.bounds_
        out = (mid < lo) | (mid > hi)
        if out.any() and not getattr(self, "_said_bound", False):
            self._said_bound = True
            first = float(np.asarray(steps)[out][0])
            side = hi if mid[out][0] > hi else lo
            self.warnings_.append(f"the forecast reaches the bound {side:g} at step {first:g} "
                                  f"({float(mid[out][0]):.3f} before clipping): it is shown at the bound; "
                                  "the method extrapolates past what the score can reach")
        return np.clip(mid, lo, hi)

    def curve(self, steps):
        """The expected score (m,) and its parameter draws (B, m) at ``steps``, inside the bounds."""
        steps = np.asarray(steps, float)
        return self._clip(self._mid(steps)), self._clip(self._draws(steps))

    def predict(self, steps) -> pd.DataFrame:
        """``DataFrame[step, forecast, lo, hi]``: the ``conf`` interval of a new observation."""
        mid, draws = self.predictive(steps)
        lo, hi = _quantiles(draws, self.conf)
        return pd.DataFrame({"step": np.asarray(steps, float), "forecast": mid, "lo": lo, "hi": hi})

    def plateau_ci(self):
        return _ci(self._clip(self._plateau_draws), self.conf)

    def t90_ci(self):
        return _ci(self._t90_draws, self.conf)

    def _clip(self, v):
        if self.bounds_ is None or v is None:
            return v
        return np.clip(v, *self.bounds_)

    def _finish(self, plateau, plateau_draws, t90, t90_draws, params):
        if plateau is not None and self.bounds_ is not None and not self.bounds_[0] <= plateau <= self.bounds_[1]:
            self.warnings_.append(f"the plateau {plateau:.3f} lies beyond the score's bounds {list(self.bounds_)}: "
                                  "it is shown at the bound")
        self.plateau_ = None if plateau is None else float(self._clip(plateau))
        self._plateau_draws = plateau_draws
        # beyond 10,000 window lengths a 90 % step means "never" in practice
        cap = self.origin_ + 1e4 * max(self.end_ - self.origin_, 1.0)
        self.t90_ = None if t90 is None or not np.isfinite(t90) or t90 > cap else float(t90)
        self._t90_draws = None if t90_draws is None else np.where(np.asarray(t90_draws) > cap, np.inf, t90_draws)
        self.params_ = params


def _quantiles(draws, conf):
    lo = (1 - conf) / 2
    q = np.quantile(draws, [lo, 1 - lo], axis=0)
    return q[0], q[1]


def _ci(draws, conf):
    """Percentile interval; an end is None where the draws run off to infinity there."""
    if draws is None:
        return None
    d = np.sort(np.where(np.isfinite(draws), draws, np.inf))
    # order statistics, not np.quantile: interpolating between two infinite draws gives nan
    i_lo, i_hi = (int(np.clip(np.round(q * (len(d) - 1)), 0, len(d) - 1)) for q in ((1 - conf) / 2, (1 + conf) / 2))
    lo, hi = d[i_lo], d[i_hi]
    return [float(lo) if np.isfinite(lo) else None, float(hi) if np.isfinite(hi) else None]


class LastValue(ForecastMethod):
    """The last observed value carried forward (the naive baseline)."""

    name = "last-value"
    description = "the last observed value carried forward"

    def _fit(self, run, n_boot):
        y = run.target.values
        if len(y) < 2:
            raise CannotRun(f"needs 2 {run.target_kind} points in the window (to size the noise); has {len(y)}")
        self.last_ = float(y[-1])
        # the score's own noise: the median absolute successive difference (a take-off jump in
        # the window is a trend, not noise), as the SD of one point (1.4826 MAD / sqrt 2)
        self.sigma_ = float(1.4826 * np.median(np.abs(np.diff(y))) / np.sqrt(2))
        z = np.random.default_rng(self.seed).standard_normal(max(n_boot, 1))
        self._level = self.last_ + self.sigma_ * z
        self._finish(self.last_, self._level, None, None, {"last": self.last_, "sigma": self.sigma_})
        self.t90_note_ = "last-value assumes no further change"

    def _calibrate(self, run):
        """No model-error term: the interval is the score's own noise, widened only by the
        calibration factor the backtest measured (issue 22: not the late window's drift). The
        late-window error is still measured: the ensemble weighs by it."""
        super()._calibrate(run)
        self.q_ = 0.0

    def _mid(self, steps):
        return np.full(len(steps), self.last_)

    def _draws(self, steps):
        return np.repeat(self._level[:, None], len(steps), axis=1)


class CurveMethod(ForecastMethod):
    """A closed-form curve of steps (or tokens) fitted to the window's target points."""

    axis = "steps"

    def _family(self, run: RunData) -> fc.Family:
        raise NotImplementedError

    def _x(self, steps) -> np.ndarray:
        return np.asarray(steps, float) - self.origin_

    def _fit(self, run, n_boot, priors=None, sigma2=None):
        self.origin_, self.end_ = run.origin, run.end
        self._setup_axis(run)
        fam = self._family(run)
        y = run.target
        prior = None if priors is None else priors.get("curve")
        self.fit_ = fc.fit_profile(fam, self._x(y.steps), y.values, prior=prior,
                                   sigma2=None if prior is None else sigma2["curve"], n_boot=n_boot, seed=self.seed)
        self.components_ = {"curve": self.fit_}
        self.sigma_ = self.fit_.sigma
        self.warnings_ += bound_warnings(self.fit_)
        params = dict(zip(fam.coef_names, map(float, self.fit_.beta)))
        params.update({k: float(np.exp(v)) for k, v in zip(fam.shape_names, self.fit_.shape)})
        params = {k.replace("log_", ""): v for k, v in params.items()}
        b_draws = self.fit_.beta_draws if n_boot else self.fit_.beta[None, :]
        s_draws = self.fit_.shape_draws if n_boot else self.fit_.shape[None, :]
        self._b_draws, self._s_draws = b_draws, s_draws
        self._finish(self._plateau(self.fit_.beta[None, :])[0], self._plateau(b_draws),
                     self._t90(self.fit_.shape[None, :], self.fit_.beta[None, :])[0], self._t90(s_draws, b_draws),
                     params)

    def _setup_axis(self, run):
        pass

    def _mid(self, steps):
        return self.fit_.predict(self._x(steps))

    def _draws(self, steps):
        return fc.curve(self.fit_.family, self._s_draws, self._b_draws, self._x(steps))


class ExpSaturation(CurveMethod):
    name = "exp-saturation"
    description = "R = A - (A - R0) exp(-t / tau) in steps"

    def _family(self, run):
        return fc.exp_saturation(max(run.end - run.origin, 1.0))

    def _plateau(self, b):
        return b[:, 0]

    def _t90(self, s, b):
        return self.end_ + np.exp(s[:, 0]) * fc.LN10


class PowerLaw(CurveMethod):
    name = "power"
    description = "R = A - B (t + 1)^(-c) in steps"

    def _family(self, run):
        return fc.power_saturation(max(run.end - run.origin, 1.0))

    def _plateau(self, b):
        return b[:, 0]

    def _t90(self, s, b):
        with np.errstate(over="ignore"):
            return self.origin_ + (self.end_ - self.origin_ + 1) * 10 ** (1 / np.exp(s[:, 0])) - 1


class Sigmoid(CurveMethod):
    """ScaleRL's sigmoid in steps (``C = t + 1``)."""

    name = "sigmoid"
    description = "R = R0 + (A - R0) / (1 + (C_mid / C)^B), C = steps since the log start + 1"

    def _x(self, steps):
        return np.asarray(steps, float) - self.origin_ + 1.0

    def _family(self, run):
        return fc.sigmoid(1.0, max(run.end - run.origin, 1.0) + 1.0)

    def _plateau(self, b):
        return b[:, 0] + b[:, 1]

    def _t90(self, s, b):
        C_end = self._x([self.end_])[0]
        mid, slope = np.exp(s[:, 0]), np.exp(s[:, 1])
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            s_end = 1 / (1 + (mid / C_end) ** slope)
            target = 1 - 0.1 * (1 - s_end)
            C = mid * (1 / target - 1) ** (-1 / slope)
        return self._step_of(C)

    def _step_of(self, C):
        return C - 1.0 + self.origin_


class SigmoidTokens(Sigmoid):
    """ScaleRL's sigmoid in cumulative tokens; future tokens at the window's recent rate."""

    name = "sigmoid-tokens"
    description = "ScaleRL sigmoid in cumulative tokens (counted from the log start)"
    axis = "tokens"

    def _setup_axis(self, run):
        tok = run.tokens
        if tok is None or len(tok) < 3:
            raise CannotRun("the log has no token counts (perf/total_num_tokens, total_num_tokens or num_tokens)")
        half = tok.steps >= tok.steps[0] + (tok.steps[-1] - tok.steps[0]) / 2
        s, v = tok.steps[half], tok.values[half]
        self.rate_ = float((v[-1] - v[0]) / (s[-1] - s[0])) if s[-1] > s[0] else float(v[-1] / max(s[-1], 1))
        if not self.rate_ > 0:
            raise CannotRun("the token count does not grow over the window")
        self._tok = tok

    def _x(self, steps):
        steps = np.asarray(steps, float)
        tok = self._tok
        inside = np.interp(steps, tok.steps, tok.values, left=0.0)
        return np.where(steps > tok.steps[-1], tok.values[-1] + self.rate_ * (steps - tok.steps[-1]), inside)

    def _family(self, run):
        C = self._x(run.target.steps)
        positive = C[C > 0]
        lo = positive.min() if len(positive) else self._tok.values[0]
        return fc.sigmoid(lo, self._x([run.end])[0])

    def _step_of(self, C):
        return self._tok.steps[-1] + (C - self._tok.values[-1]) / self.rate_


class Joint(ExpSaturation):
    """Validation and the per-step training score share one time constant (exp-saturation);
    each has its own plateau and amplitude. The dense training score pins the shape, the
    sparse validation only its offset and scale."""

    name = "joint"
    description = "exp-saturation with a time constant shared by validation and the training score"

    def _fit(self, run, n_boot, priors=None, sigma2=None):
        self.origin_, self.end_ = run.origin, run.end
        if run.target_kind != "validation":
            raise CannotRun("no validation score: the joint fit needs validation beside the training score "
                            "(exp-saturation already fits the training score)")
        if run.score is None or len(run.score) < 4:
            raise CannotRun("needs the per-step training score (4 points or more) beside validation")
        L = max(run.end - run.origin, 1.0)
        v, s = run.target, run.score
        tv, ts = self._x(v.steps), self._x(s.steps)
        if len(v) < 3:
            raise fc.TooFewPoints(f"{len(v)} validation point(s) for the offset and scale (needs 3)")
        single = fc.exp_saturation(L)
        sig_s = fc.fit_profile(single, ts, s.values).sigma
        sig_v = _diff_sd(v.values)
        is_val = np.r_[np.ones(len(v), bool), np.zeros(len(s), bool)]

        def basis(shapes, t):
            e = fc._exp_decay_basis(shapes, t)  # (G, n, 2)
            return np.concatenate([e * is_val[None, :, None], e * ~is_val[None, :, None]], axis=2)

        fam = fc.Family("joint", ("A", "D", "A_train", "D_train"), ("log_tau",), single.bounds, basis, (121,))
        w = np.r_[np.full(len(v), 1 / max(sig_v, 1e-6) ** 2), np.full(len(s), 1 / max(sig_s, 1e-6) ** 2)]
        jf = fc.fit_profile(fam, np.r_[tv, ts], np.r_[v.values, s.values], w=w, n_boot=n_boot, seed=self.seed,
                            groups=is_val.astype(int))
        resid = v.values - single.basis(jf.shape[None, :], tv)[0] @ jf.beta[:2]
        self.sigma_ = float(np.sqrt(np.sum(resid**2) / max(len(v) - 2, 1)))
        self.fit_ = fc.ProfileFit(single, jf.shape, jf.beta[:2], float(np.sum(resid**2)), self.sigma_, len(v),
                                  jf.at_bound)
        self.components_ = {}
        self.warnings_ += bound_warnings(jf, "the shared ")
        b_draws = jf.beta_draws[:, :2] if n_boot else jf.beta[None, :2]
        s_draws = jf.shape_draws if n_boot else jf.shape[None, :]
        self._b_draws, self._s_draws = b_draws, s_draws
        params = {"A": float(jf.beta[0]), "D": float(jf.beta[1]), "A_train": float(jf.beta[2]),
                  "D_train": float(jf.beta[3]), "tau": float(np.exp(jf.shape[0]))}
        self._finish(float(jf.beta[0]), b_draws[:, 0], float(self._t90(jf.shape[None, :], None)[0]),
                     self._t90(s_draws, None), params)


def bound_warnings(fit: fc.ProfileFit, what: str = "") -> list[str]:
    """One line per shape parameter at an end of its search range."""
    out = []
    for name in fit.at_bound:
        i = fit.family.shape_names.index(name)
        lo, hi = fit.family.bounds[i]
        end = "lower" if fit.shape[i] - lo < hi - fit.shape[i] else "upper"
        out.append(f"{what}{name.replace('log_', '')} = {np.exp(fit.shape[i]):.3g} sits at the {end} end of its search "
                   "range: the window does not pin it down, the plateau and the 90 % step are extrapolations")
    return out


def _diff_sd(y) -> float:
    """Noise SD from successive differences (robust to a slow trend)."""
    return float(np.sqrt(np.mean(np.diff(y) ** 2) / 2)) if len(y) > 1 else 0.0


def z_of(conf: float) -> float:
    return float(special.ndtri((1 + conf) / 2))
