"""Forecasts built from other methods: ``prior`` (a base method with an empirical-Bayes prior
from finished runs of the same family) and ``ensemble`` (methods weighted by their error on
the late part of the window)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast import calibrate as cal
from entropylaw.fit.forecast import curves as fc
from entropylaw.fit.forecast.catalog import CURVE_ENSEMBLE, ENSEMBLE, METHODS, PRIOR
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.law import LawEntropy
from entropylaw.fit.forecast.methods import CannotRun, ForecastMethod, _ci, _quantiles


class PriorMethod(ForecastMethod):
    """A base method refitted with an empirical-Bayes prior from finished runs of the family.

    Each finished run is fitted in full; the mean and the between-run variance of each
    coefficient and shape give an independent Gaussian prior; the window is refitted to its
    posterior mode (``prior_shift_`` says how far the prior moved the plateau and the 90 %
    step, :meth:`shift` the forecast). Fewer than two usable finished runs: a warning, and
    the base method's forecast unchanged."""

    name = PRIOR
    description = "a base method with an empirical-Bayes prior from finished runs of the same family"

    def __init__(self, conf=0.9, n_boot=200, seed=0, holdout=0.3, growth=1.0, base="law+entropy", prior_runs=()):
        super().__init__(conf, n_boot, seed, holdout, growth)
        self.base = base
        self.prior_runs = prior_runs

    def _fit(self, run, n_boot):
        if self.base not in METHODS:
            raise EntropyLawError(f"prior base {self.base!r} is not a method (expected one of {', '.join(METHODS)})")
        plain = METHODS[self.base](self.conf, n_boot, self.seed, self.holdout, self.growth)
        plain._start(run)
        plain._fit(run, n_boot)
        if not hasattr(plain, "components_") or not plain.components_:
            raise CannotRun(f"the base method {self.base} has no parameters a prior could act on")
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
            self.warnings_.append(f"prior: a family of {len(fitted)} finished run(s) besides this one; an "
                                  "empirical-Bayes prior needs at least 2 to measure how runs differ: "
                                  f"forecast without a prior (= {self.base})")
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
                     {**inner.params_, "base": self.base, "prior_runs": used})
        self.prior_shift_ = {"plateau": _diff(inner.plateau_, plain.plateau_), "t90": _diff(inner.t90_, plain.t90_)}

    def _mid(self, steps):
        return self.inner_._mid(steps)

    def _draws(self, steps):
        return self.inner_._draws(steps)

    def shift(self, steps) -> np.ndarray:
        """How far the prior moved the forecast at ``steps``."""
        return self.inner_._mid(steps) - self.plain_._mid(steps)


def _spread(X):
    """Between-run variance per column, floored so one parameter shared exactly is not a wall."""
    var = X.var(axis=0, ddof=1)
    return np.maximum(var, (1e-3 * (np.abs(X.mean(axis=0)) + 1e-3)) ** 2)


def _diff(a, b):
    return None if a is None or b is None else float(a - b)


class Ensemble:
    """Methods weighted by ``1 / late_rmse_^2`` (their error on the late part of the window).

    Members without a late-window error (too few points) or that cannot run get no weight.
    The forecast is the weighted mean; its interval the quantiles of the weighted mixture of
    the members' predictive draws; plateau and 90 % step likewise over the members that give
    one."""

    name = ENSEMBLE
    description = "methods weighted by their error on the late part of the window"

    def __init__(self, members=None, conf=0.9, n_boot=200, seed=0):
        self.members = members
        self.conf = conf
        self.n_boot = n_boot
        self.seed = seed

    def fit(self, run: RunData, fitted=None) -> "Ensemble":
        """Fit the members (or take ``fitted`` ones) and weigh them."""
        if fitted is None:
            names = self.members or [m for m in METHODS]
            fitted = [METHODS[n](self.conf, self.n_boot, self.seed).fit(run) for n in names]
        self.members_ = [m for m in fitted if m.ok_ and m.late_rmse_ is not None]
        self.end_, self.warnings_, self.target_kind_, self.bounds_ = run.end, [], run.target_kind, run.bounds
        self.ok_, self.reason_, self.late_rmse_ = bool(self.members_), None, None
        if not self.ok_:
            self.reason_ = "no method could be scored on the late part of the window (too few points)"
            return self
        inv = np.array([1.0 / (m.late_rmse_**2 + 1e-6) for m in self.members_])
        self._weigh(inv / inv.sum())
        self.params_ = {"weights": self.weights_}
        return self

    def _weigh(self, w):
        """Set the members' weights ``w`` (summing to 1) and the mixture's plateau, 90 % step, noise."""
        self.weights_ = {m.name: float(x) for m, x in zip(self.members_, w)}
        self.sigma_ = float(sum(self.weights_[m.name] * m.sigma_ for m in self.members_))
        w = np.array(list(self.weights_.values()))
        self.plateau_, self._plateau_draws = self._combine([m.plateau_ for m in self.members_],
                                                           [m._plateau_draws for m in self.members_], w)
        self.t90_, self._t90_draws = self._combine([m.t90_ for m in self.members_],
                                                   [m._t90_draws for m in self.members_], w)

    def _combine(self, points, draws, w):
        keep = [i for i, p in enumerate(points) if p is not None and draws[i] is not None]
        if not keep:
            return None, None
        wk = w[keep] / w[keep].sum()
        point = float(sum(wk[j] * points[i] for j, i in enumerate(keep)))
        return point, self._mixture([np.asarray(draws[i], float)[:, None] for i in keep], wk)[:, 0]

    def _mixture(self, draws, w):
        rng = np.random.default_rng(self.seed + 5)
        counts = rng.multinomial(max(self.n_boot, 1), w)
        return np.concatenate([d[rng.integers(0, len(d), c)] for d, c in zip(draws, counts) if c])

    def curve(self, steps):
        w = np.array([self.weights_[m.name] for m in self.members_])
        outs = [m.curve(steps) for m in self.members_]
        return sum(wi * o[0] for wi, o in zip(w, outs)), self._mixture([o[1] for o in outs], w)

    calibrated = True  # as the members' (entropylaw.fit.forecast.methods.ForecastMethod.calibrated)

    def predictive(self, steps, n_draws=None, calibrated=None, average=False):
        calibrated = self.calibrated if calibrated is None else calibrated
        w = np.array([self.weights_[m.name] for m in self.members_])
        outs = [m.predictive(steps, calibrated=False, average=average) for m in self.members_]
        mid = sum(wi * o[0] for wi, o in zip(w, outs))
        draws = self._mixture([o[1] for o in outs], w)
        steps = np.asarray(steps, float)
        first = min(m.origin_ for m in self.members_)
        h = (max(float(steps.max()), self.end_) - self.end_) / max(self.end_ - first, 1.0)  # the furthest step's band
        c = cal.method_factor(self.name, self.target_kind_, h) if calibrated else 1.0
        return mid, cal.rescale(mid, draws, self.bounds_, c)

    def predict(self, steps) -> pd.DataFrame:
        mid, draws = self.predictive(steps)
        lo, hi = _quantiles(draws, self.conf)
        return pd.DataFrame({"step": np.asarray(steps, float), "forecast": mid, "lo": lo, "hi": hi})

    def predict_mean(self, steps) -> tuple[float, float, float]:
        mid, draws = self.predictive(steps, average=True)
        lo, hi = _quantiles(draws, self.conf)
        return float(mid[0]), float(lo[0]), float(hi[0])

    def plateau_ci(self):
        d = self._plateau_draws
        return _ci(d if d is None or self.bounds_ is None else np.clip(d, *self.bounds_), self.conf)

    def t90_ci(self):
        return _ci(self._t90_draws, self.conf)


class CurveEnsemble(Ensemble):
    """Saturating curve families weighted by how well each fits the window, in the manner of
    Domhan et al. (IJCAI 2015): ``exp-saturation``, ``power`` and ScaleRL's ``sigmoid``, each
    with its bootstrap draws, weighted by ``exp(-BIC / 2)`` (BIC of its least-squares fit to
    every window point: ``n ln(RSS / n) + k ln n``), an approximation of each family's
    posterior probability; the forecast is the weighted mean, the interval the mixture's.

    >>> import numpy as np
    >>> from entropylaw.fit.forecast.data import RunData
    >>> steps = np.arange(0, 300, 5.0)
    >>> run = RunData.from_arrays(steps, 0.8 - 0.5 * np.exp(-steps / 40) + 0.002 * np.cos(steps))
    >>> e = CurveEnsemble(n_boot=50).fit(run.window(150))
    >>> max(e.weights_, key=e.weights_.get), round(float(e.predict([295.0])["forecast"].iloc[0]), 2)
    ('exp-saturation', 0.8)
    """

    name = CURVE_ENSEMBLE
    description = "saturating families weighted by their fit (BIC), Domhan et al. 2015"
    FAMILIES = ("exp-saturation", "power", "sigmoid")

    def fit(self, run: RunData, fitted=None) -> "CurveEnsemble":
        have = {m.name: m for m in (fitted or [])}
        members = [have.get(n) or METHODS[n](self.conf, self.n_boot, self.seed).fit(run) for n in self.FAMILIES]
        self.members_ = [m for m in members if m.ok_ and getattr(m, "fit_", None) is not None]
        self.end_, self.warnings_, self.target_kind_, self.bounds_ = run.end, [], run.target_kind, run.bounds
        self.ok_, self.reason_, self.late_rmse_ = bool(self.members_), None, None
        if not self.ok_:
            self.reason_ = "no saturating family could be fitted to the window: " + "; ".join(
                f"{m.name}: {m.reason_}" for m in members if not m.ok_)
            return self
        bic = []
        for m in self.members_:
            n, k = m.fit_.n, m.fit_.family.n_params
            bic.append(n * np.log(max(m.fit_.rss, 1e-12) / n) + k * np.log(n))
        bic = np.array(bic)
        w = np.exp(-(bic - bic.min()) / 2)
        self._weigh(w / w.sum())
        self.params_ = {"weights": self.weights_, "bic": dict(zip(self.weights_, map(float, bic)))}
        return self
