"""``logit-drift``: the slow climb after the take-off, on the logit scale, its rate shrunk toward
the rate of finished runs.

Real RL runs on a verifiable score share one shape: a fast take-off (the format is learned;
the score leaves its floor within tens of steps), then a slow climb that goes on for the rest
of the run. On the logit scale ``z = logit(y)`` the slow part is close to linear in log steps:

    z(t) = A + c ln(1 + t),      t = the training step,

the clock being the step itself, not the step since the log's first line (a log resumed at
step 2,000 is 2,000 steps into its climb), fitted to the **late half of the window's points** (the take-off, if
the window holds one, is left out: its knee is no part of the climb). The gain from the window's end ``e`` to step
``T`` is ``c ln((1 + T) / (1 + e))``, the same for a run of 100 steps or 1,000 at the same
fraction. A window of 15 % sees the rate only faintly: it is **shrunk toward the rate of
finished runs**, a Gaussian prior on ``c`` whose mean and spread are those of finished runs,
each fitted the same way on its own late half (:func:`learn_prior`; median and scaled median
absolute deviation, so one run that collapses does not set it). The default prior is learned
by the backtest from the real runs in ``data/`` (each run's own forecast leaves it out) and
stored in ``calibration.json``; ``forecast --prior RUNS`` learns it from the runs given, with
the model size as a covariate where they hold 3 sizes or more (``c`` regressed on ``log10 N``,
the new run's size giving its prior mean).

Each point is weighted by the binomial precision of its logit, ``n p (1 - p)`` (``n``: the
benchmark's number of problems, :data:`~.problems.PROBLEMS`, else the window's noise), with an
over-dispersion factor from the fit's own scatter. The model is linear, so the posterior of
``(A, c)`` is Gaussian and exact; draws come from it. Forecasts live in the score's range by
construction. A window whose own rate lies more than 3 SD above the prior's (data and prior
together) is still in its take-off, one more than 3 SD below it is falling: either way the
method refuses rather than shrink the window into the climb it models. A window whose last points sit on a bound
cannot say how far past it the run is: the method refuses (last-value carries it). The drift has no plateau: read
the forecast at the run's last step.

>>> import numpy as np
>>> from entropylaw.fit.forecast.data import RunData
>>> steps = np.arange(0.0, 120.0, 5.0)
>>> z = 1.0 - 3.0 * np.exp(-steps / 4) + 0.12 * np.log1p(steps)
>>> run = RunData.from_arrays(steps, 1 / (1 + np.exp(-z)), target_key="val/openai/gsm8k")
>>> m = LogitDrift(n_boot=50, prior={"c": [0.12, 0.05], "runs": 4}).fit(run.window(60))
>>> round(float(m.predict([115.0])["forecast"].iloc[0]), 3), round(float(1 / (1 + np.exp(-z[-1]))), 3)
(0.828, 0.828)
"""

from __future__ import annotations

import numpy as np

from entropylaw.fit.forecast import calibrate as cal
from entropylaw.fit.logit import from_logit, to_logit
from entropylaw.fit.forecast import curves as fc
from entropylaw.fit.forecast.data import robust_noise
from entropylaw.fit.forecast.problems import run_problems
from entropylaw.fit.forecast.drift_fit import (MIN_LATE, MIN_SD, late, logit_weights, on_bound, posterior,
                                               quasi_normals, t_posterior, train_rate)
from entropylaw.fit.forecast.drift_prior import given_prior
from entropylaw.fit.forecast.drift_prior import learn_task_priors  # noqa: F401  (read here by analysis/)
from entropylaw.fit.forecast.names import GIVEN_PRIOR, NEW_TASK
from entropylaw.fit.forecast.methods import CannotRun, ForecastMethod
from entropylaw.fit.forecast.tasks import prior_for
from entropylaw.terminal import count

# used where no prior is stored and none is given: broad, and said in the method's warnings
FALLBACK_PRIOR = {"c": [0.1, 0.15], "runs": 0}
CONFLICT = 3.0  # SDs between the window's own rate and the prior's: the window is still in its take-off


class LogitDrift(ForecastMethod):
    name = "logit-drift"
    simplicity = 1
    description = "logit = A + c ln(1 + t) on the late half of the window, c shrunk toward finished runs' rate"
    needs = frozenset({"run", "prior_runs", "shape_prior", "total_steps", "notes"})

    def __init__(self, conf=0.9, n_boot=200, seed=0, holdout=0.3, growth=1.0, prior=None, given=False):
        super().__init__(conf, n_boot, seed, holdout, growth)
        self.prior = prior
        self.given = given  # the prior was learned from runs the user gave (--prior): its own calibration

    @classmethod
    def build(cls, conf, n_boot, seed, run, prior_runs, shape_prior, total_steps, notes) -> "LogitDrift":
        """With the prior given (the backtest's), else learned from ``prior_runs`` (then
        calibrated as such, :func:`~.drift_prior.given_prior`), else the stored one."""
        given = None if shape_prior else given_prior(run, prior_runs, notes, total_steps)
        return cls(conf, n_boot, seed, prior=shape_prior or given, given=given is not None)

    @property
    def calibration_key(self) -> str:
        if self.given:
            return GIVEN_PRIOR
        return NEW_TASK if getattr(self, "new_task_", False) else self.name

    def _fit(self, run, n_boot):
        if run.bounds is None:
            raise CannotRun(f"{run.target_key} is not a bounded score (an accuracy in [0, 1] or a reward in "
                            "[-1, 1]): the logit scale needs one")
        y = run.target
        if len(y) < MIN_LATE:
            raise fc.TooFewPoints(f"{count(len(y), 'point')}; the drift needs {MIN_LATE}")
        prior = self.prior
        if prior is None:
            prior = cal.stored().get("shape_prior", {}).get(run.target_kind) or FALLBACK_PRIOR
            if prior is FALLBACK_PRIOR:
                self.warnings_.append("no prior learned from finished runs is stored: a broad fallback prior")
        self.prior_all_ = prior
        # a per-task prior (entropylaw.fit.forecast.tasks): this run's task's part
        if "new_task" in prior or "tasks" in prior:
            prior, why = prior_for(prior, run.task, run.run_id, MIN_SD)
            if why:
                self.warnings_.append(why)
            prior = prior or FALLBACK_PRIOR
        self.prior_ = prior
        self.new_task_ = prior.get("kind") == "new task"
        s, v = late(y)
        w, self.n_eff_ = logit_weights(v, run.bounds, run_problems(run)[0], robust_noise(y.values))
        if on_bound(v, run.bounds, self.n_eff_):
            raise CannotRun("the window's last points sit on the score's bound: the logit scale cannot say how far "
                            "past it the run is (last-value carries it)")
        t, z = np.maximum(s, 0.0), to_logit(v, run.bounds, 0.5 / self.n_eff_)
        own, own_cov, _ = posterior(t, z, w)  # the window alone: is it still taking off?
        nu = float(prior.get("nu", np.inf))
        prior_sd = prior["c"][1] * (np.sqrt(nu / (nu - 2)) if self.new_task_ and nu > 2 else 1.0)  # a t's SD
        gap = (own[1] - prior["c"][0]) / np.sqrt(own_cov[1, 1] + prior_sd ** 2)
        if gap > CONFLICT:
            raise CannotRun(f"the window ends inside the take-off: its late points climb at {own[1]:.2f} per log "
                            f"step, {gap:.1f} SD above the drift of finished runs ({prior['c'][0]:.2f}); where the "
                            "take-off stops is not in the window")
        if gap < -CONFLICT:
            raise CannotRun(f"the window's late points fall at {own[1]:.2f} per log step, {-gap:.1f} SD below the "
                            f"drift of finished runs ({prior['c'][0]:.2f}): the climb this method models is not there")
        extra = self._train_term(run)
        normals = quasi_normals(n_boot, self.seed) if n_boot else None
        if self.new_task_:
            self.mean_, self.cov_, self.phi_, c_draws = t_posterior(t, z, w, prior, n_boot, self.seed, extra,
                                                                    normals=normals[:, :2] if n_boot else None)
        else:
            pc = prior["c"]
            if extra is not None:  # two Gaussian measurements of c: their product
                prec = 1 / pc[1] ** 2 + 1 / extra[1] ** 2
                pc = [(pc[0] / pc[1] ** 2 + extra[0] / extra[1] ** 2) / prec, float(np.sqrt(1 / prec))]
            anchor = prior.get("anchor")
            self.mean_, self.cov_, self.phi_ = posterior(t, z, w, pc, None if anchor is None else
                                                         (anchor["step"], anchor["logit"], anchor["logit_sd"]))
            if anchor is not None:
                self.warnings_.append(anchor["note"])
        p_end = float(np.clip(from_logit(self.mean_[0] + self.mean_[1] * np.log1p(max(s[-1], 0.0)), (0, 1)),
                              1e-4, 1 - 1e-4))
        lo, hi = run.bounds
        self.sigma_ = float((hi - lo) * np.sqrt(self.phi_ * p_end * (1 - p_end) / self.n_eff_))
        if self.new_task_:
            self._coef_draws = c_draws if n_boot else self.mean_[None, :]
        else:  # the coefficients' Gaussian posterior, read through the same even normals
            vals, vecs = np.linalg.eigh(self.cov_)
            root = vecs * np.sqrt(np.clip(vals, 0.0, None))  # root @ root.T == cov (semi-definite too)
            self._coef_draws = self.mean_ + normals[:, :2] @ root.T if n_boot else self.mean_[None, :]
        # the third normal of each draw is its observation noise (ForecastMethod.predictive)
        self.noise_normals_ = normals[:, 2] if n_boot else None
        params = {"A": float(self.mean_[0]), "c": float(self.mean_[1]), "c_sd": float(np.sqrt(self.cov_[1, 1])),
                  "points": int(len(s)), "n_eff": self.n_eff_, "overdispersion": self.phi_,
                  "prior_c": list(prior["c"]), "prior_runs": int(prior.get("runs", 0)),
                  "prior_kind": "new task" if self.new_task_ else "task" if prior.get("task") else "runs",
                  "prior_tasks": prior.get("tasks") or ([prior["task"]] if prior.get("task") else None)}
        if prior.get("size_covariate"):
            params["size_covariate"] = prior["size_covariate"]
        if prior.get("size_note"):
            self.warnings_.append(prior["size_note"])
        self._finish(None, None, None, None, params)
        self.t90_note_ = "the drift in log steps has no plateau: read the forecast at the run's last step"

    def _train_term(self, run):
        """Nothing: the plain drift reads the validation score alone (:class:`DriftTrain` reads more)."""
        return None

    def _z(self, coefs, steps):
        x = np.log1p(np.maximum(np.asarray(steps, float), 0.0))
        return coefs[:, :1] + coefs[:, 1:2] * x[None, :]

    def _mid(self, steps):
        return from_logit(self._z(self.mean_[None, :], steps)[0], self.bounds_)

    def _draws(self, steps):
        return from_logit(self._z(self._coef_draws, steps), self.bounds_)


class DriftTrain(LogitDrift):
    """logit-drift that also reads the training score's climb in the window.

    The training score is logged every step (17 points where validation has 3 or 4), and on
    finished runs its late-half rate ``c_train`` tracks the validation rate: ``c_val ~ k
    c_train`` with a spread ``s`` (:func:`learn_train_link`, stored by the backtest). The
    window's ``c_train`` (with its standard error ``se``) is then one more Gaussian
    measurement of ``c``: mean ``k c_train``, SD ``sqrt(k^2 se^2 + s^2)``. Beware a training
    set read in order (not shuffled): its reward then follows the data, not the policy."""

    name = "logit-drift+train"
    simplicity = 2
    description = ("logit-drift that also reads the training score's climb (its link to validation learned on "
                   "finished runs)")
    reads = frozenset({"target", "score"})

    @property
    def calibration_key(self) -> str:
        return self.name + (", new task" if getattr(self, "new_task_", False) else "")

    def _train_term(self, run):
        if run.target_kind != "validation":
            raise CannotRun("the target is the training score itself: its climb is already the window's own")
        link = self.prior_all_.get("train_link")
        if not link:
            raise CannotRun("no link between the training score's climb and validation's is stored")
        got = train_rate(run)
        if got is None:
            raise CannotRun("the window holds too few training-score points in [0, 1] to measure its climb")
        c, se = got
        return link["slope"] * c, float(np.sqrt((link["slope"] * se) ** 2 + link["sd"] ** 2))
