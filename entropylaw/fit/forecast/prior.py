"""``prior``: a base method refitted with an empirical-Bayes prior from finished runs of the
same family."""

from __future__ import annotations

import numpy as np

from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast import curves as fc
from entropylaw.fit.forecast.law import LawEntropy
from entropylaw.fit.forecast.methods import CannotRun, ForecastMethod
from entropylaw.terminal import count


class PriorMethod(ForecastMethod):
    """A base method refitted with an empirical-Bayes prior from finished runs of the family.

    Each finished run is fitted in full; the mean and the between-run variance of each
    coefficient and shape give an independent Gaussian prior; the window is refitted to its
    posterior mode (``prior_shift_`` says how far the prior moved the plateau and the 90 %
    step, :meth:`shift` the forecast). Fewer than two usable finished runs: a warning, and
    the base method's forecast unchanged."""

    name = "prior"
    simplicity = 11
    description = "a base method with an empirical-Bayes prior from finished runs of the same family"
    needs = frozenset({"prior_runs", "prior_base", "methods"})
    requires = frozenset({"prior_runs"})

    def __init__(self, conf=0.9, n_boot=200, seed=0, holdout=0.3, growth=1.0, base=LawEntropy, prior_runs=(),
                 methods=None):
        super().__init__(conf, n_boot, seed, holdout, growth)
        self.base = base  # a method class, or its name in `methods`
        self.prior_runs = prior_runs
        self.methods = methods

    @classmethod
    def build(cls, conf, n_boot, seed, prior_runs, prior_base, methods) -> "PriorMethod":
        return cls(conf, n_boot, seed, base=LawEntropy if prior_base is None else prior_base,
                   prior_runs=tuple(prior_runs), methods=methods)

    def _base(self):
        if not isinstance(self.base, str):
            return self.base
        methods = self.methods or {}
        if self.base not in methods:
            raise EntropyLawError(f"prior base {self.base!r} is not a method (expected one of {', '.join(methods)})")
        return methods[self.base]

    def _fit(self, run, n_boot):
        base = self._base()
        plain = base(self.conf, n_boot, self.seed, self.holdout, self.growth)
        plain._start(run)
        plain._fit(run, n_boot)
        if not hasattr(plain, "components_") or not plain.components_:
            raise CannotRun(f"the base method {base.name} has no parameters a prior could act on")
        fixed = {"form": plain.form_} if isinstance(plain, LawEntropy) else {}
        fitted, used = [], []
        for r in self.prior_runs:
            if r.run_id == run.run_id:
                continue
            m = plain.clone(n_boot=0, **fixed)
            m._start(r)
            try:
                m._fit(r, 0)
            except (CannotRun, fc.TooFewPoints) as err:
                self.warnings_.append(f"prior run {r.run_id!r} left out: {err}")
                continue
            if run.family and r.family and r.family != run.family:
                self.warnings_.append(f"prior run {r.run_id!r} is of family {r.family!r}, not {run.family!r}")
            fitted.append(m.components_)
            used.append(r.run_id)
        self.prior_runs_used_ = used
        self.plain_ = plain
        if len(fitted) < 2:
            self.warnings_.append(f"prior: a family of {count(len(fitted), 'finished run')} besides this one; an "
                                  "empirical-Bayes prior needs at least 2 to measure how runs differ: "
                                  f"forecast without a prior (= {base.name})")
            self.prior_used_, inner, self.prior_ = False, plain, {}
        else:
            priors, sigma2 = {}, {}
            for comp, own in plain.components_.items():
                B = np.array([f[comp].beta for f in fitted])
                S = np.array([f[comp].shape for f in fitted]).reshape(len(fitted), -1)
                priors[comp] = fc.Prior(B.mean(0), _spread(B), S.mean(0), _spread(S))
                sigma2[comp] = own.sigma**2
            inner = plain.clone(**fixed)
            inner._start(run)
            inner._fit(run, n_boot, priors=priors, sigma2=sigma2)
            self.prior_used_ = True
            self.prior_ = {comp: {"coef_mean": p.coef_mean.tolist(), "coef_sd": np.sqrt(p.coef_var).tolist(),
                                  "shape_mean": p.shape_mean.tolist(), "shape_sd": np.sqrt(p.shape_var).tolist()}
                           for comp, p in priors.items()}
        self.inner_ = inner
        self.sigma_ = inner.sigma_
        self.warnings_ += inner.warnings_
        self._finish(inner.plateau_, inner._plateau_draws, inner.t90_, inner._t90_draws,
                     {**inner.params_, "base": base.name, "prior_runs": used})
        self.prior_shift_ = {"plateau": _diff(inner.plateau_, plain.plateau_), "t90": _diff(inner.t90_, plain.t90_)}

    def _mid(self, steps):
        return self.inner_._mid(steps)

    def _draws(self, steps):
        return self.inner_._draws(steps)

    def shift(self, steps) -> np.ndarray:
        """How far the prior moved the forecast at ``steps``."""
        return self.inner_._mid(steps) - self.plain_._mid(steps)

    def columns(self, steps) -> dict:
        return {"prior_shift": self.shift(steps)}


def _spread(X):
    """Between-run variance per column, floored so one parameter shared exactly is not a wall."""
    var = X.var(axis=0, ddof=1)
    return np.maximum(var, (1e-3 * (np.abs(X.mean(axis=0)) + 1e-3)) ** 2)


def _diff(a, b):
    return None if a is None or b is None else float(a - b)
