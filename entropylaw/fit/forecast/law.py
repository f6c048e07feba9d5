"""The entropy law as a forecast: ``law-ceiling`` (the paper's ``b - a``), ``law+entropy``
(the law fitted on the window's (entropy, score) pairs, applied to a forecast of the
entropy trajectory itself, so no later entropy is needed) and ``law+train`` (the law's
slope from the dense per-step training pairs, :class:`LawTrain`).

The entropy trajectory's form (exponential or power decay to a floor, or a power law to 0)
is chosen by its own backtest on the window's entropy series
(:mod:`entropylaw.fit.forecast.entropy`). The score is then ``R(t) = b - a exp(H(t))``; the
plateau ``b - a exp(H_f)``; the 90 % step solves
``exp(H(t)) - exp(H_f) = 0.1 (exp(H(end)) - exp(H_f))``.

The law does not apply, and both methods say so instead of forecasting, when entropy rises
over the window, or when the fitted ``a <= 0`` (the score does not rise as entropy falls).

>>> import numpy as np
>>> from entropylaw.fit.forecast.data import RunData
>>> s = np.arange(1, 301.0)
>>> H = 0.05 + 0.6 * np.exp(-s / 50)
>>> v = np.arange(10, 301.0, 10)
>>> run = RunData.from_arrays(v, 0.9 - 0.3 * np.exp(0.05 + 0.6 * np.exp(-v / 50)), s, H)
>>> m = LawEntropy(n_boot=0).fit(run.window(120))
>>> m.form_, round(m.plateau_, 4), round(float(m.predict([300])["forecast"][0]), 4)
('exp-decay', 0.5846, 0.5841)
"""

from __future__ import annotations

import numpy as np

from entropylaw.fit.forecast import curves as fc
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.entropy import EntropyPath
from entropylaw.fit.forecast.methods import CannotRun, ForecastMethod, _diff_sd, bound_warnings, z_of
from entropylaw.fit.forecast.problems import noise_floor
from entropylaw.terminal import count


def paired(run: RunData):
    """(H, R) at each target step: entropy at the same or the latest earlier step; a target
    point one step before the first entropy (a validation before the first update) takes
    the first entropy, which veRL measures on the initial policy's rollouts."""
    if run.entropy is None or len(run.entropy) == 0:
        raise CannotRun("the log has no entropy: the law needs it")
    es, ev = run.entropy.steps, run.entropy.values
    ts, tv = run.target.steps, run.target.values
    i = np.searchsorted(es, ts, side="right") - 1
    early = (i < 0) & (es[0] - ts <= 1)
    keep = (i >= 0) | early
    i = np.maximum(i, 0)
    return ev[i[keep]], tv[keep], ts[keep]


def check_entropy(run: RunData) -> None:
    """Raise CannotRun when the window's entropy rises (the law is about entropy consumed)."""
    if run.entropy is None:
        raise CannotRun("the log has no entropy: the law needs it")
    if len(run.entropy) < 5:
        n = len(run.entropy)
        raise CannotRun(f"the window holds {count(n, 'entropy point')}; the entropy trajectory needs at least 5")
    v = run.entropy.values
    k = max(len(v) // 3, 1)
    first, last = float(np.mean(v[:k])), float(np.mean(v[-k:]))
    if last >= first:
        raise CannotRun(f"entropy rises over the window ({first:.3g} -> {last:.3g} nats): the law describes "
                        "entropy being consumed, it does not apply to this run")


def check_slope(H, R, a: float, where: str) -> None:
    """Raise CannotRun unless the score varies and ``a`` is positive by more than 2 standard
    errors (its sign is not left to rounding: a score stuck at 1 gives a = +-1e-15)."""
    if np.ptp(R) <= 1e-12 * max(1.0, float(np.max(np.abs(R)))):
        raise CannotRun(f"the score is constant {where}: the law's slope a is not defined, the law does not apply")
    X = np.c_[-np.exp(H), np.ones_like(H)]
    beta, *_ = np.linalg.lstsq(X, R, rcond=None)
    dof = max(len(R) - 2, 1)
    s2 = float(np.sum((R - X @ beta) ** 2)) / dof
    cov = s2 * np.linalg.pinv(X.T @ X)
    se = float(np.sqrt(max(cov[0, 0], 0.0)))
    if a <= 0 or a < 2 * se:
        raise CannotRun(f"fitted a = {a:.3g} (standard error {se:.2g}) {where}: the score does not measurably rise "
                        "as entropy falls, the law does not apply")


def _law(run, n_boot, seed, prior=None, sigma2=None):
    H, R, _ = paired(run)
    if len(H) < 3:
        raise fc.TooFewPoints(f"{count(len(H), f'(entropy, {run.target_kind}) pair')} for the law's 2 parameters "
                              "(needs 3)")
    fit = fc.fit_profile(fc.LAW, H, R, prior=prior, sigma2=sigma2, n_boot=n_boot, seed=seed)
    if fit.beta[0] <= 0:
        raise CannotRun(f"fitted a = {fit.beta[0]:.3g} <= 0: the score does not rise as entropy falls, "
                        "the law does not apply")
    if np.ptp(R) <= 0:
        raise CannotRun("the score is constant over the window's pairs: the law's slope a is not defined")
    return fit


class LawCeiling(ForecastMethod):
    """The paper's ceiling ``b - a`` (the score at H = 0) as the forecast at every later step.

    Its interval is the AR(1)-aware interval of :class:`~entropylaw.fit.law.EntropyLawFit`."""

    name = "law-ceiling"
    simplicity = 5
    description = "the law's ceiling b - a (score at H = 0), the paper's forecast"
    reads = frozenset({"target", "entropy"})
    models_change = False  # the ceiling: one level, no path to it

    def _fit(self, run, n_boot):
        from entropylaw.fit.law import EntropyLawFit

        check_entropy(run)
        H, R, _ = paired(run)
        if len(H) < 3:
            raise fc.TooFewPoints(f"{count(len(H), f'(entropy, {run.target_kind}) pair')}; the law needs 3")
        if np.ptp(H) <= 0:
            raise CannotRun("entropy is constant over the window's pairs: a and b cannot be separated")
        fit = EntropyLawFit(conf=self.conf, warn=False).fit(H, R)
        if fit.a_ <= 0:
            raise CannotRun(f"fitted a = {fit.a_:.3g} <= 0: the score does not rise as entropy falls, "
                            "the law does not apply")
        self.law_ = fit
        self.warnings_ += fit.warnings_
        self.sigma_ = fit.sigma_
        sd = fit.ceiling_stderr_ * fit.tq_ / z_of(self.conf)  # t interval as Gaussian draws of equal width
        self._level = fit.ceiling_ + sd * np.random.default_rng(self.seed).standard_normal(max(n_boot, 1))
        self._finish(fit.ceiling_, self._level, None, None, {"a": fit.a_, "b": fit.b_, "ceiling": fit.ceiling_})
        self.t90_note_ = "the ceiling is reached only at H = 0; no step is implied"

    def _mid(self, steps):
        return np.full(len(steps), self.law_.ceiling_)

    def _draws(self, steps):
        return np.repeat(self._level[:, None], len(steps), axis=1)


class LawEntropy(ForecastMethod):
    """``R(t) = b - a exp(H(t))`` with ``H(t)`` forecast from the window's entropy (module doc)."""

    name = "law+entropy"
    simplicity = 6
    description = "the law on the window's pairs, applied to a forecast of the entropy trajectory"
    reads = frozenset({"target", "entropy"})

    def __init__(self, conf=0.9, n_boot=200, seed=0, holdout=0.3, growth=1.0, form="auto"):
        super().__init__(conf, n_boot, seed, holdout, growth)
        self.form = form

    def _law_fit(self, run, n_boot, priors, sigma2):
        return _law(run, n_boot, self.seed, priors.get("law"), sigma2.get("law"))

    def _fit(self, run, n_boot, priors=None, sigma2=None):
        check_entropy(run)
        priors, sigma2 = priors or {}, sigma2 or {}
        self.law_ = self._law_fit(run, n_boot, priors, sigma2)
        es = run.entropy.steps - run.origin
        self.path_ = EntropyPath(self.form, n_boot, self.seed + 3).fit(es, run.entropy.values,
                                                                       prior=priors.get("entropy"),
                                                                       sigma2=sigma2.get("entropy"))
        self.form_, self.form_errors_ = self.path_.form_, self.path_.errors_
        self.entropy_ = self.path_.fit_
        self.components_ = {"law": self.law_, "entropy": self.entropy_}
        self.sigma_ = self.law_.sigma
        self.warnings_ += bound_warnings(self.entropy_, f"the entropy {self.form_}'s ")
        self._law_draws = self.law_.beta_draws if n_boot else self.law_.beta[None, :]
        a, b = self.law_.beta
        params = {"a": float(a), "b": float(b), **self.path_.params()}
        shift, extra = self._shift(run)  # law+train: the law's curve moved to the target's level
        plateau = self._level(self.law_.beta[None, :], np.array([self.path_.floor_]))[0] + shift
        k = min(len(self._law_draws), len(self.path_.beta_draws_))
        t90, t90_draws = self._t90s(k)
        plateau_draws = self._level(self._law_draws[:k], self.path_.floor_draws()[:k]) + shift
        self._finish(plateau, plateau_draws, t90, t90_draws, {**params, **extra})

    def _shift(self, run) -> tuple[float, dict]:
        """How far the law's curve is moved, and the parameters that say why (none here)."""
        return 0.0, {}

    def _level(self, law, H):
        """The score at entropy ``H`` (one value per parameter row)."""
        return law[:, 1] - law[:, 0] * np.exp(H)

    def _t90s(self, k):
        """The step by which exp(H) has made 90 % of its remaining fall to exp(floor), point and draws."""
        t_end = self.end_ - self.origin_
        pts = np.r_[t_end, t_end + np.geomspace(1.0, 1e4 * max(t_end, 1.0), 400)]

        def first(H, floor):
            gap = np.exp(H) - np.exp(floor)[:, None]
            done = gap <= 0.1 * gap[:, :1]
            t = np.where(done.any(axis=1), pts[np.argmax(done, axis=1)], np.inf)
            return np.where(gap[:, 0] > 0, t, np.nan)

        point = first(self.path_.predict(pts)[None, :], np.array([self.path_.floor_]))[0]
        draws = first(self.path_.draws(pts)[:k], self.path_.floor_draws()[:k])
        return self.origin_ + point, self.origin_ + draws

    def entropy_forecast(self, steps) -> np.ndarray:
        return self.path_.predict(np.asarray(steps, float) - self.origin_)

    def _mid(self, steps):
        a, b = self.law_.beta
        return b - a * np.exp(self.entropy_forecast(steps))

    def _draws(self, steps):
        H = self.path_.draws(np.asarray(steps, float) - self.origin_)
        law = self._law_draws
        k = min(len(H), len(law))
        return law[:k, 1:2] - law[:k, 0:1] * np.exp(H[:k])


class LawTrain(LawEntropy):
    """The law's slope from the dense per-step (entropy, training score) pairs of the late
    half of the window, its level from the target's own last points.

    Validation is logged every few steps (3-6 points at 15 % of a run), the training score
    and entropy at every step (30+). The slope ``a`` is fitted where it applies now (the late
    half: early steps hold the format-learning jump, which the law does not describe); the
    forecast is ``level + (R_train(H(t)) - R_train(H(end)))``, the level the mean over the
    last 30 % of target points of ``target - (R_train(H_obs) - R_train(H(end)))``. The
    validation gain is taken equal to the training gain (same units: both a score per
    problem); when the two series are not on the same scale the method says so and the
    others go on."""

    name = "law+train"
    simplicity = 7
    description = "the law's slope from the per-step training pairs (late half), level from the target"
    reads = frozenset({"target", "entropy", "score"})

    def _law_fit(self, run, n_boot, priors, sigma2):
        if run.score is None or len(run.score) < 8:
            raise CannotRun("needs the per-step training score (8 points or more) beside the entropy")
        es, ev = run.entropy.steps, run.entropy.values
        ss, sv = run.score.steps, run.score.values
        late = ss >= run.origin + (run.end - run.origin) / 2
        i = np.searchsorted(es, ss[late], side="right") - 1
        ok = i >= 0
        if ok.sum() < 5:
            raise fc.TooFewPoints(f"{count(int(ok.sum()), '(entropy, training score) pair')} in the late half "
                                  "(needs 5)")
        H, R = ev[i[ok]], sv[late][ok]
        if np.ptp(H) <= 0:
            raise CannotRun("entropy is constant over the late half of the window: the law's slope is undefined")
        if run.target_kind == "validation" and run.bounds is not None:
            lo, hi = float(np.min(run.score.values)), float(np.max(run.score.values))
            if lo < run.bounds[0] - 1e-9 or hi > run.bounds[1] + 1e-9:
                raise CannotRun(f"the training score is not on the validation score's {list(run.bounds)} scale: "
                                "its gain cannot be carried over")
        fit = fc.fit_profile(fc.LAW, H, R, prior=priors.get("law"), sigma2=sigma2.get("law"), n_boot=n_boot,
                             seed=self.seed)
        check_slope(H, R, float(fit.beta[0]), "on the late half of the window's training score")
        return fit

    def _shift(self, run) -> tuple[float, dict]:
        """Set the level from the target's last points; return how far it moves the law's curve."""
        a = self.law_.beta[0]
        h_end = self.path_.predict([run.end - run.origin])[0]
        y = run.target
        if len(y) < 2:
            raise fc.TooFewPoints(f"{count(len(y), f'{run.target_kind} point')}; the level needs 2")
        es, ev = run.entropy.steps, run.entropy.values
        i = np.maximum(np.searchsorted(es, y.steps, side="right") - 1, 0)
        gain = -a * (np.exp(ev[i]) - np.exp(h_end))
        k = max(2, int(np.ceil(0.3 * len(y))))
        resid = (y.values - gain)[-k:]
        self.level_ = float(np.mean(resid))
        noise = max(_diff_sd(y.values) if len(y) > 2 else float(np.std(resid)), noise_floor(run))
        self.sigma_ = noise
        self._h_end = h_end
        rng = np.random.default_rng(self.seed + 11)
        self._level_draws = self.level_ + noise / np.sqrt(k) * rng.standard_normal(len(self._law_draws))
        shift = self.level_ - self._level(self.law_.beta[None, :], np.array([h_end]))[0]
        return shift, {"level": self.level_, "level_points": k}

    def _mid(self, steps):
        a = self.law_.beta[0]
        return self.level_ - a * (np.exp(self.entropy_forecast(steps)) - np.exp(self._h_end))

    def _draws(self, steps):
        H = self.path_.draws(np.asarray(steps, float) - self.origin_)
        law = self._law_draws
        k = min(len(H), len(law))
        return self._level_draws[:k, None] - law[:k, 0:1] * (np.exp(H[:k]) - np.exp(self._h_end))
