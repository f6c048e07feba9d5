"""Forecast methods that fit a closed-form curve of steps (or tokens) to the window's target
points: ``exp-saturation``, ``power``, ScaleRL's ``sigmoid`` and ``sigmoid-tokens``, and
``joint`` (validation and the per-step training score sharing one time constant). The
interface, the intervals and ``last-value`` are in :mod:`entropylaw.fit.forecast.methods`.

>>> import numpy as np
>>> from entropylaw.fit.forecast.data import RunData
>>> steps = np.arange(0, 200, 5.0)
>>> run = RunData.from_arrays(steps, 0.8 - 0.5 * np.exp(-steps / 40))
>>> m = ExpSaturation().fit(run.window(100))
>>> round(m.plateau_, 3), round(m.t90_, 1)
(0.8, 192.1)
"""

from __future__ import annotations

import numpy as np

from entropylaw.fit.forecast import curves as fc
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.methods import CannotRun, ForecastMethod, _diff_sd, bound_warnings
from entropylaw.terminal import count


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
    simplicity = 3
    description = "R = A - (A - R0) exp(-t / tau) in steps"

    def _family(self, run):
        return fc.exp_saturation(max(run.end - run.origin, 1.0))

    def _plateau(self, b):
        return b[:, 0]

    def _t90(self, s, b):
        return self.end_ + np.exp(s[:, 0]) * fc.LN10


class PowerLaw(CurveMethod):
    name = "power"
    simplicity = 4
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
    simplicity = 8
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
    simplicity = 10
    description = "ScaleRL sigmoid in cumulative tokens (counted from the log start)"
    reads = frozenset({"target", "tokens"})
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
    simplicity = 9
    description = "exp-saturation with a time constant shared by validation and the training score"
    reads = frozenset({"target", "score"})

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
            raise fc.TooFewPoints(f"{count(len(v), 'validation point')} for the offset and scale (needs 3)")
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
