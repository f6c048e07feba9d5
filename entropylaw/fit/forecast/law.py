"""The entropy law as a forecast: ``law-ceiling`` (the paper's ``b - a``) and ``law+entropy``
(the law fitted on the window's (entropy, score) pairs, applied to a forecast of the
entropy trajectory itself, so no later entropy is needed).

The entropy trajectory is fitted as an exponential decay to a floor,
``H = H_f + D exp(-t / tau)``, or a power decay, ``H = H_f + B (t + 1)^(-c)`` (``H_f >= 0``),
chosen by the error on the last 30 % of the window's entropy points when fitted on the
first 70 % (``decay="auto"``). The score is then ``R(t) = b - a exp(H(t))``; the plateau
``b - a exp(H_f)``; the 90 % step solves ``exp(H(t)) - exp(H_f) = 0.1 (exp(H(end)) - exp(H_f))``.

The law does not apply, and both methods say so instead of forecasting, when entropy rises
over the window, or when the fitted ``a <= 0`` (the score does not rise as entropy falls).

>>> import numpy as np
>>> from entropylaw.fit.forecast.data import RunData
>>> s = np.arange(1, 301.0)
>>> H = 0.05 + 0.6 * np.exp(-s / 50)
>>> v = np.arange(10, 301.0, 10)
>>> run = RunData.from_arrays(v, 0.9 - 0.3 * np.exp(0.05 + 0.6 * np.exp(-v / 50)), s, H)
>>> m = LawEntropy(n_boot=0).fit(run.window(120))
>>> m.decay_, round(m.plateau_, 4), round(float(m.predict([300])["forecast"][0]), 4)
('exp-decay', 0.5846, 0.5841)
"""

from __future__ import annotations

import numpy as np

from entropylaw.fit.forecast import curves as fc
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.methods import CannotRun, ForecastMethod, bound_warnings, z_of


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
        raise CannotRun(f"the window holds {n} entropy point(s); the entropy trajectory needs at least 5")
    v = run.entropy.values
    k = max(len(v) // 3, 1)
    first, last = float(np.mean(v[:k])), float(np.mean(v[-k:]))
    if last >= first:
        raise CannotRun(f"entropy rises over the window ({first:.3g} -> {last:.3g} nats): the law describes "
                        "entropy being consumed, it does not apply to this run")


def _law(run, n_boot, seed, prior=None, sigma2=None):
    H, R, _ = paired(run)
    if len(H) < 3:
        raise fc.TooFewPoints(f"{len(H)} (entropy, {run.target_kind}) pair(s) for the law's 2 parameters "
                              "(needs 3)")
    fit = fc.fit_profile(fc.LAW, H, R, prior=prior, sigma2=sigma2, n_boot=n_boot, seed=seed)
    if fit.beta[0] <= 0:
        raise CannotRun(f"fitted a = {fit.beta[0]:.3g} <= 0: the score does not rise as entropy falls, "
                        "the law does not apply")
    return fit


class LawCeiling(ForecastMethod):
    """The paper's ceiling ``b - a`` (the score at H = 0) as the forecast at every later step.

    Its interval is the AR(1)-aware interval of :class:`~entropylaw.fit.law.EntropyLawFit`."""

    name = "law-ceiling"
    description = "the law's ceiling b - a (score at H = 0), the paper's forecast"

    def _fit(self, run, n_boot):
        from entropylaw.fit.law import EntropyLawFit

        check_entropy(run)
        H, R, _ = paired(run)
        if len(H) < 3:
            raise fc.TooFewPoints(f"{len(H)} (entropy, {run.target_kind}) pair(s); the law needs 3")
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
    description = "the law on the window's pairs, applied to a forecast of the entropy trajectory"
    DECAYS = {"exp-decay": fc.entropy_exp_decay, "power-decay": fc.entropy_power_decay}

    def __init__(self, conf=0.9, n_boot=200, seed=0, holdout=0.3, growth=1.0, decay="auto"):
        super().__init__(conf, n_boot, seed, holdout, growth)
        self.decay = decay

    def choose_decay(self, run) -> tuple[str, dict]:
        """The decay with the smaller error on the last 30 % of the window's entropy points."""
        if self.decay != "auto":
            return self.decay, {}
        es, ev = run.entropy.steps - run.origin, run.entropy.values
        n_fit = int(np.floor(0.7 * len(es)))
        L = max(run.end - run.origin, 1.0)
        errors = {}
        for name, make in self.DECAYS.items():
            try:
                f = fc.fit_profile(make(L), es[:n_fit], ev[:n_fit])
                errors[name] = float(np.sqrt(np.mean((f.predict(es[n_fit:]) - ev[n_fit:]) ** 2)))
            except fc.TooFewPoints:
                errors[name] = np.inf
        return min(errors, key=errors.get), errors

    def _fit(self, run, n_boot, priors=None, sigma2=None):
        check_entropy(run)
        priors, sigma2 = priors or {}, sigma2 or {}
        self.law_ = _law(run, n_boot, self.seed, priors.get("law"), sigma2.get("law"))
        self.decay_, self.decay_errors_ = self.choose_decay(run)
        L = max(run.end - run.origin, 1.0)
        es = run.entropy.steps - run.origin
        self.entropy_ = fc.fit_profile(self.DECAYS[self.decay_](L), es, run.entropy.values,
                                       prior=priors.get("entropy"), sigma2=sigma2.get("entropy"),
                                       n_boot=n_boot, seed=self.seed + 3)
        self.components_ = {"law": self.law_, "entropy": self.entropy_}
        self.sigma_ = self.law_.sigma
        self.warnings_ += bound_warnings(self.entropy_, f"the entropy {self.decay_}'s ")
        if n_boot:
            self._law_draws = self.law_.beta_draws
            self._h_shape, self._h_beta = self.entropy_.shape_draws, self.entropy_.beta_draws
        else:
            self._law_draws = self.law_.beta[None, :]
            self._h_shape, self._h_beta = self.entropy_.shape[None, :], self.entropy_.beta[None, :]
        a, b = self.law_.beta
        floor, amp = self.entropy_.beta
        shape = float(np.exp(self.entropy_.shape[0]))
        params = {"a": float(a), "b": float(b), "entropy_decay": self.decay_, "entropy_floor": float(floor),
                  "entropy_amplitude": float(amp), ("entropy_tau" if self.decay_ == "exp-decay" else "entropy_c"): shape}
        plateau = self._plateau(self.law_.beta[None, :], self.entropy_.beta[None, :])[0]
        t90 = self._t90(self.entropy_.shape[None, :], self.entropy_.beta[None, :])[0]
        self._finish(plateau, self._plateau(self._law_draws, self._h_beta), t90,
                     self._t90(self._h_shape, self._h_beta), params)

    def _plateau(self, law, hb):
        return law[:, 1] - law[:, 0] * np.exp(hb[:, 0])

    def _t90(self, hs, hb):
        floor, amp = hb[:, 0], hb[:, 1]
        t_end = self.end_ - self.origin_
        h_end = fc.curve(self.entropy_.family, hs, hb, [t_end])[:, 0]
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            gap = np.log1p(0.1 * np.expm1(h_end - floor))  # H(t90) - floor
            if self.decay_ == "exp-decay":
                t = np.exp(hs[:, 0]) * np.log(amp / gap)
            else:
                t = (amp / gap) ** (1 / np.exp(hs[:, 0])) - 1
        t = np.where((amp > 0) & (gap > 0), t, np.nan)
        return self.origin_ + t

    def entropy_forecast(self, steps) -> np.ndarray:
        return self.entropy_.predict(np.asarray(steps, float) - self.origin_)

    def _mid(self, steps):
        a, b = self.law_.beta
        return b - a * np.exp(self.entropy_forecast(steps))

    def _draws(self, steps):
        H = fc.curve(self.entropy_.family, self._h_shape, self._h_beta, np.asarray(steps, float) - self.origin_)
        law = self._law_draws
        k = min(len(H), len(law))
        return law[:k, 1:2] - law[:k, 0:1] * np.exp(H[:k])
