"""The interface every forecast method shares (:class:`Method`), and the base of the methods
that fit one curve to the window (:class:`ForecastMethod`; scikit-learn style: configuration in
``__init__``, ``fit(window)`` returns ``self``, learned attributes end in ``_``).

A method says what it reads of the window and what :func:`~.core.forecast` must hand it
(:attr:`Method.reads`, :attr:`Method.needs`); it is built by :meth:`Method.build`, fitted on a
:class:`~entropylaw.fit.forecast.data.RunData` cut at the window's end by ``fit``, and gives
its :class:`~.result.MethodResult` by :meth:`Method.result`: the score at future steps, the
plateau and the step by which 90 % of the remaining change (from the fitted level at the
window end to the plateau) is made, each with an interval. A method that cannot run says why
(``ok_ = False``, ``reason_``). Every method is listed once, in :mod:`.catalog`.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
from scipy import special  # ndtri = normal quantile (scipy.stats costs ~1.5 s to import)

from entropylaw.fit.forecast import calibrate as cal
from entropylaw.fit.forecast import curves as fc
from entropylaw.fit.forecast import regimes
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.final import final_of, hold
from entropylaw.fit.forecast.problems import noise_floor
from entropylaw.fit.forecast.result import MethodResult

BEYOND = "lies beyond the score's bounds"  # a plateau past what the score can reach: shown at the bound


class CannotRun(Exception):
    """The method does not apply to this window (the message says why)."""


# What forecast() can hand a method's build(), by the name the method lists in its `needs`
INPUTS = {
    "run": "the whole run as logged: its name, benchmark, size and bounds (never its later values)",
    "prior_runs": "finished runs the caller gives (`forecast(prior)`)",
    "prior_base": "the name of the method a prior acts on (None: the prior's own default)",
    "shape_prior": "logit-drift's prior on its rate, given directly (the backtest's)",
    "total_steps": "the run's planned length",
    "notes": "a list the method may append lines to, printed under the forecast",
    "methods": "every method that fits one curve, by name (what a combination builds on)",
    "members": "the methods fitted on this window before it (those not made of members themselves)",
}
# What a method can read of the window (RunData's series)
SERIES = {"target": "the validation score, or the training score where the run logs none",
          "entropy": "the policy's entropy", "score": "the training score beside a validation target",
          "tokens": "the cumulative tokens"}


class Method:
    """What :func:`~.core.forecast` knows of a method, and all it knows.

    - ``name``, ``description``: its name in :mod:`.catalog` and one line on what it does;
    - ``simplicity``: its rank from the simplest (0); a tie in the backtest's rule for the
      default goes to the simpler method (``analysis/bench_forecast.py``);
    - ``reads``: the window's series it fits (:data:`SERIES`); where one is missing, it
      cannot run and says why;
    - ``needs``: what ``forecast()`` hands :meth:`build` besides ``conf``, ``n_boot`` and
      ``seed`` (:data:`INPUTS`), by keyword; ``requires``: those of them without which it is
      left out of the default set (it still runs when named);
    - ``models_change``: False where its curve is flat by construction (the decision "can I
      stop?" does not read it, unless the window's regime moves its draws: :meth:`moves`);
    - ``build(conf, n_boot, seed, **given)``, then ``fit(window)`` (returns the method, with
      ``ok_`` and ``reason_``), then ``result(steps, final)``.
    """

    name = "?"
    description = ""
    simplicity = 99
    reads: frozenset = frozenset({"target"})
    needs: frozenset = frozenset()
    requires: frozenset = frozenset()
    models_change = True
    # the stored calibration scales the intervals; the backtest that measures it sets False
    calibrated = True

    @classmethod
    def combines(cls) -> bool:
        """Made of other methods: it needs them handed (``members`` or ``methods``)."""
        return bool(cls.needs & {"members", "methods"})

    @classmethod
    def build(cls, conf, n_boot, seed, **given) -> "Method":
        """The method as ``forecast()`` makes it, ``given`` what it :attr:`needs`."""
        return cls(conf=conf, n_boot=n_boot, seed=seed, **given)

    def fit(self, run: RunData) -> "Method":
        raise NotImplementedError

    def moves(self) -> bool:
        """Whether its forecast can differ from the window's end: a curve that models change, or
        a flat one whose draws the window's regime moves (set by ``forecast()`` on the method it
        shows; :func:`~.regimes.moves`)."""
        return self.models_change or regimes.moves(getattr(self, "regime_", None),
                                                   getattr(self, "regime_rates_", None))

    def columns(self, steps) -> dict:
        """The method's own columns beside its forecast at ``steps`` (none by default)."""
        return {}

    def predictive(self, steps, calibrated=None, average=False, noise=True):
        """Point forecast (m,) and predictive draws (B, m) at ``steps`` (a method's own);
        ``noise=False``: of the expected score, without one observation's noise."""
        raise NotImplementedError

    def predict(self, steps) -> pd.DataFrame:
        """``DataFrame[step, forecast, lo, hi]``: the ``conf`` interval of a new observation,
        widened where needed to hold the forecast (:func:`~.final.hold`)."""
        mid, draws = self.predictive(steps)
        raw = _quantiles(draws, self.conf)
        lo, hi = hold(mid, *raw)
        f = pd.DataFrame({"step": np.asarray(steps, float), "forecast": mid, "lo": lo, "hi": hi})
        if len(f) and np.isfinite([raw[0][-1], raw[1][-1]]).all() and (lo[-1], hi[-1]) != (raw[0][-1], raw[1][-1]):
            # the last step's draws missed the fit: their own interval, for the warning
            f.attrs["draws_interval"] = [float(raw[0][-1]), float(raw[1][-1])]
        return f

    def predict_mean(self, steps, draws_interval: bool = False):
        """The forecast of the score's mean over ``steps`` and its ``conf`` interval (:func:`~.final.hold`);
        ``draws_interval``: also the draws' own interval where it missed the forecast, else None."""
        mid, draws = self.predictive(steps, average=True)
        raw = _quantiles(draws, self.conf)
        lo, hi = hold(mid, *raw)
        out = float(mid[0]), float(lo[0]), float(hi[0])
        if not draws_interval:
            return out
        missed = np.isfinite([raw[0][0], raw[1][0]]).all() and (lo[0], hi[0]) != (raw[0][0], raw[1][0])
        return out + ([float(raw[0][0]), float(raw[1][0])] if missed else None,)

    def result(self, steps, final=None) -> MethodResult:
        """The fitted method's result at ``steps``; ``final``: (kind, steps, bounds, seen) of the
        final score (:func:`~.final.final_of`)."""
        if not self.ok_:
            return MethodResult(self.name, False, self.reason_, warnings=list(getattr(self, "warnings_", [])))
        f = self.predict(steps)
        for column, values in self.columns(steps).items():
            f[column] = values
        fin = None if final is None else final_of(self, *final, forecast=f)
        plateau_ci, t90_ci = (_hold_ci(p, c)
                              for p, c in ((self.plateau_, self.plateau_ci()), (self.t90_, self.t90_ci())))
        plateau = self.plateau_
        if not self.models_change and self.moves():  # a flat level a take-off moves: no plateau (0.168 under 0.434)
            plateau, plateau_ci = None, None
        warnings = list(self.warnings_)
        if fin is not None and fin.get("draws_interval"):
            lo, hi = fin["draws_interval"]
            if max(lo - fin["forecast"], fin["forecast"] - hi) > 0.25 * max(hi - lo, 1e-12):  # past rounding
                warnings.append(f"the fit's final score {fin['forecast']:.4g} lies outside its refits' interval "
                                f"[{lo:.4g}, {hi:.4g}]: the window does not pin the curve down; the interval is "
                                "widened to hold the fit")
        return MethodResult(self.name, True, None, f, plateau, plateau_ci, self.t90_, t90_ci,
                            self.params_, warnings, self.late_rmse_, getattr(self, "t90_note_", None), fin)


class ForecastMethod(Method):
    """A method that fits one curve to the window.

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
    """

    @property
    def calibration_key(self) -> str:
        """The name its calibration factor is stored under (a variant may have its own)."""
        return self.name

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
            # a noise read off the window's own points (residuals, repeats) is never below one score's
            # binomial standard error (or, of a set of unknown size, its resolution): repeats gave 0. Raised
            # after the model error is measured, as the excess of the late misses over the method's own noise:
            # raised before, it took that excess for noise and narrowed the far forecast
            self.sigma_ = max(self.sigma_, noise_floor(run))
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
                                  "window: how far its curve misses is not measured, so the interval assumes it "
                                  "misses by as much as the score's noise")
            return
        cut = float(y.steps[-n_late - 1])
        early = self.clone(n_boot=0)
        early_run = run.window(cut)
        early._start(early_run)
        try:
            early._fit(early_run, 0)
        except (CannotRun, fc.TooFewPoints):
            self.warnings_.append("cannot refit on the early part of the window: how far its curve misses is not "
                                  "measured, so the interval assumes it misses by as much as the score's noise")
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

    def predictive(self, steps, calibrated=None, average=False, noise=True):
        """Point forecast (m,) and predictive draws (B, m) at ``steps``; the draws on the
        score's bounded scale, scaled by the method's calibration factor
        (:mod:`entropylaw.fit.forecast.calibrate`; ``calibrated=False``: factor 1; None: the
        method's own ``calibrated``).

        ``average=True``: the forecast of the *mean* over ``steps`` (shape (1,) and (B, 1)):
        the noise of one observation shrinks with the number of steps averaged, the model
        error does not (it moves every step of the curve together).

        ``noise=False``: draws of the expected score, the curve's and the model error's
        spread without one observation's noise (``sigma_``): what continuing adds to the score
        is read from these (:mod:`.decide`); the same normals, so rows stay paired."""
        calibrated = self.calibrated if calibrated is None else calibrated
        steps = np.asarray(steps, float)
        mid = self._mid(steps)
        draws = self._draws(steps)
        # a method whose draws come from even normals (logit-drift: drift_fit.quasi_normals) has its noise's too
        normals = getattr(self, "noise_normals_", None)
        if normals is None or len(normals) != len(draws):
            normals = np.random.default_rng(self.seed + 1).standard_normal(len(draws))
        h = np.maximum(steps - self.end_, 0.0) / max(self.end_ - self.origin_, 1.0)
        s2 = self.sigma_**2 if noise else 0.0
        sd = np.sqrt(s2 + self.q_ * h**self.growth)
        if average:
            mid, draws = mid.mean(keepdims=True), draws.mean(axis=1, keepdims=True)
            sd = np.sqrt(s2 / len(steps) + self.q_ * float(np.mean(h**self.growth)))[None]
            steps = steps[-1:]
        # one normal a draw, scaled at each step: a step's draws are then the same whichever other steps
        # are asked with it (the table's final step and the call's agree); each step's spread is unchanged
        draws = draws + normals[:, None] * sd
        # one factor for the whole curve, the band of its furthest step (the backtest measures the
        # factors there): a factor per step would narrow the interval as the horizon grows
        c = cal.method_factor(self.calibration_key, self.target_kind_, float(h.max())) if calibrated else 1.0
        # the draws spread around the unclipped forecast; the interval is centred where it is shown
        spread = draws - mid
        mid = self._bounded(mid, steps)
        draws = cal.scale_draws(mid, mid + spread, self.bounds_, c)
        # the regime the window is in (set by forecast() on the method it shows): what runs in it did next
        regime = getattr(self, "regime_", None)
        if regime is not None:
            mid, draws = regimes.apply(regime, self.regime_rates_, steps, mid, draws, self.end_, self.bounds_,
                                       self.seed, own=self.models_change)
        return mid, draws

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
            self.warnings_.append(f"the plateau {plateau:.3f} {BEYOND} {list(self.bounds_)}: "
                                  "it is shown at the bound")
        self.plateau_ = None if plateau is None else float(self._clip(plateau))
        self._plateau_draws = plateau_draws
        # beyond 10,000 window lengths a 90 % step means "never" in practice
        cap = self.origin_ + 1e4 * max(self.end_ - self.origin_, 1.0)
        self.t90_ = None if t90 is None or not np.isfinite(t90) or t90 > cap else float(t90)
        self._t90_draws = None if t90_draws is None else np.where(np.asarray(t90_draws) > cap, np.inf, t90_draws)
        self.params_ = params


def _hold_ci(point, ci):
    """:func:`hold` for a plateau's or a 90 % step's interval (an end may be None: unbounded)."""
    if ci is None or point is None or not np.isfinite(point):
        return ci
    lo, hi = ci
    return [None if lo is None else min(lo, point), None if hi is None else max(hi, point)]


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
