"""Forecast a run from its first steps, with no information past the window.

:func:`forecast` fits every method (or the ones named) on the window of one run and
returns, per method, the score at the requested future steps, the plateau and the step by
which 90 % of the remaining change is made, each with an interval (``conf``, 90 % by
default), or the reason the method cannot run. Unlike :mod:`entropylaw.fit.early` (the
paper's protocol, which reads later scores off the *observed* later entropy), nothing here
sees a value logged after the window: the methods receive the run cut at the window's end.

Methods (:data:`METHODS`; :mod:`entropylaw.fit.forecast_methods`, :mod:`~.forecast_law`):

================  ===========================================================================
``last-value``    the last observed value carried forward
``law-ceiling``   the law's ceiling ``b - a`` (the paper's forecast)
``law+entropy``   the law applied to a forecast of the entropy trajectory
``exp-saturation`` ``A - (A - R0) exp(-t / tau)`` in steps
``power``         ``A - B (t + 1)^(-c)`` in steps
``sigmoid``       ScaleRL's sigmoid in steps; ``sigmoid-tokens`` in cumulative tokens
``joint``         exp-saturation sharing its time constant with the per-step training score
``prior``         a base method with an empirical-Bayes prior from finished runs of the family
``ensemble``      the methods weighted by their error on the late part of the window
================  ===========================================================================

Runs with no validation score are forecast on their training score (``target_kind``).
The default method is the one that wins the backtest (``analysis/bench_forecast.py``):
``last-value`` (see :data:`DEFAULT_METHOD`).

>>> import numpy as np
>>> from entropylaw.fit.forecast_data import RunData
>>> steps = np.arange(0, 400, 10.0)
>>> y = 0.8 - 0.5 * np.exp(-steps / 80) + 0.004 * np.cos(steps)
>>> fc = forecast(RunData.from_arrays(steps, y), fit_frac=0.5, methods=["exp-saturation", "last-value"],
...               n_boot=50)
>>> fc.window_end, float(fc.at_steps[-1])
(195.0, 390.0)
>>> r = fc.methods["exp-saturation"]
>>> round(float(r.forecast["forecast"].iloc[-1]), 2), round(r.plateau, 2)
(0.8, 0.8)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.fit import forecast_curves as fc
from entropylaw.fit import uncertainty as unc
from entropylaw.fit.forecast_data import RunData, window_end
from entropylaw.fit.forecast_law import LawCeiling, LawEntropy
from entropylaw.fit.forecast_methods import (CannotRun, ExpSaturation, ForecastMethod, Joint, LastValue, PowerLaw,
                                             Sigmoid, SigmoidTokens, _ci, _quantiles)

METHODS = {m.name: m for m in (LastValue, LawCeiling, LawEntropy, ExpSaturation, PowerLaw, Sigmoid, SigmoidTokens,
                               Joint)}
ENSEMBLE, PRIOR = "ensemble", "prior"
ALL_METHODS = [*METHODS, PRIOR, ENSEMBLE]
# The backtest (analysis/bench_forecast.py, 20 real runs) decides: at K = 15 % of the steps
# the last value carried forward has the lowest median error of the final score, on the
# validation runs and on all runs; the curve methods and the ensemble win only later
# (ensemble at 50 %) or on some runs. So the default is the honest baseline.
DEFAULT_METHOD = "last-value"


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
        fixed = {"decay": plain.decay_} if isinstance(plain, LawEntropy) else {}
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
        self.weights_ = {m.name: float(w) for m, w in zip(self.members_, inv / inv.sum())}
        self.sigma_ = float(sum(self.weights_[m.name] * m.sigma_ for m in self.members_))
        w = np.array(list(self.weights_.values()))
        self.plateau_, self._plateau_draws = self._combine([m.plateau_ for m in self.members_],
                                                           [m._plateau_draws for m in self.members_], w)
        self.t90_, self._t90_draws = self._combine([m.t90_ for m in self.members_],
                                                   [m._t90_draws for m in self.members_], w)
        self.params_ = {"weights": self.weights_}
        return self

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

    def predictive(self, steps, n_draws=None):
        w = np.array([self.weights_[m.name] for m in self.members_])
        outs = [m.predictive(steps) for m in self.members_]
        mid = sum(wi * o[0] for wi, o in zip(w, outs))
        return mid, self._mixture([o[1] for o in outs], w)

    def predict(self, steps) -> pd.DataFrame:
        mid, draws = self.predictive(steps)
        lo, hi = _quantiles(draws, self.conf)
        return pd.DataFrame({"step": np.asarray(steps, float), "forecast": mid, "lo": lo, "hi": hi})

    def plateau_ci(self):
        d = self._plateau_draws
        return _ci(d if d is None or self.bounds_ is None else np.clip(d, *self.bounds_), self.conf)

    def t90_ci(self):
        return _ci(self._t90_draws, self.conf)


@dataclass
class MethodResult:
    method: str
    ok: bool
    reason: str | None = None
    forecast: pd.DataFrame | None = None  # step, forecast, lo, hi (and prior_shift)
    plateau: float | None = None
    plateau_ci: list | None = None
    t90: float | None = None
    t90_ci: list | None = None
    params: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    late_rmse: float | None = None
    note: str | None = None

    def to_dict(self) -> dict:
        out = {k: getattr(self, k) for k in ("method", "ok", "reason", "plateau", "plateau_ci", "t90", "t90_ci",
                                             "params", "warnings", "late_rmse", "note")}
        out["forecast"] = None if self.forecast is None else self.forecast.to_dict(orient="records")
        return out


# Draws a forecast: set by entropylaw.api (plots/ sits above fit/).
PLOTTER = None


@dataclass
class Forecast:
    """Every method's forecast of one run from one window (see :func:`forecast`)."""

    run_id: str
    target_key: str
    target_kind: str
    origin: float
    window_end: float
    last_logged: float
    n_window: int
    conf: float
    at_steps: np.ndarray
    methods: dict
    note: str | None = None
    default: str = DEFAULT_METHOD
    # the target series as logged, for plots and backtests only (later points are never fitted)
    observed: pd.DataFrame | None = None

    def table(self, step=None) -> pd.DataFrame:
        """One row per method: forecast and interval at ``step`` (default: the last requested)."""
        step = self.at_steps[-1] if step is None else step
        rows = []
        for name, r in self.methods.items():
            row = {"method": name, "ok": r.ok, "reason": r.reason, "plateau": r.plateau, "plateau_ci": r.plateau_ci,
                   "t90": r.t90, "t90_ci": r.t90_ci, "late_rmse": r.late_rmse}
            if r.ok:
                f = r.forecast.iloc[int(np.argmin(np.abs(r.forecast["step"].to_numpy() - step)))]
                row.update(step=float(f["step"]), forecast=float(f["forecast"]), lo=float(f["lo"]), hi=float(f["hi"]))
            rows.append(row)
        return pd.DataFrame(rows)

    def report(self, step=None) -> str:
        """Plain-text report: every method's forecast at ``step`` (default: the last requested),
        its plateau and the step by which 90 % of the remaining change is made."""
        t = self.table(step)
        step = self.at_steps[-1] if step is None else step
        pct = f"{100 * self.conf:g} %"
        lines = [f"[[Forecast]] {self.run_id}: {self.target_key} ({self.target_kind}), {pct} intervals",
                 f"    log starts at step {self.origin:g}; window up to step {self.window_end:g} "
                 f"({self.n_window} points); nothing after it is used",
                 f"    recommended method: {self.default} (wins the backtest, analysis/bench_forecast.py)",
                 f"    {'method':<16}{'score at ' + format(step, 'g'):>22}{'plateau':>26}{'90 % of gain by':>22}"]

        def ci(v, c):
            return "-" if v is None or not np.isfinite(v) else \
                f"{v:.3f} [{c[0]:.3f}, {c[1]:.3f}]" if c is not None else f"{v:.3f}"
        for row in t.itertuples(index=False):
            mark = "*" if row.method == self.default else " "
            if not row.ok:
                lines.append(f"  {mark} {row.method:<16}cannot run: {row.reason}")
                continue
            t90 = "-" if row.t90 is None or not np.isfinite(row.t90) else f"step {row.t90:.0f}"
            lines.append(f"  {mark} {row.method:<16}{ci(row.forecast, (row.lo, row.hi)):>22}"
                         f"{ci(row.plateau, row.plateau_ci):>26}{t90:>22}")
        if self.note:
            lines.append(f"    note: {self.note}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()

    def plot(self, ax=None, methods=None):
        """Draw the window, the forecasts and their bands; returns the axes."""
        if PLOTTER is None:
            raise EntropyLawError("plotting is not loaded: `import entropylaw` (it loads entropylaw.plots)")
        return PLOTTER(self, ax=ax, methods=methods)

    def to_dict(self) -> dict:
        return {"run_id": self.run_id, "target_key": self.target_key, "target_kind": self.target_kind,
                "note": self.note, "log_starts_at": self.origin, "window_end": self.window_end,
                "last_logged_step": self.last_logged, "n_window_points": self.n_window, "conf": self.conf,
                "at_steps": [float(s) for s in self.at_steps], "default_method": self.default,
                "methods": {k: v.to_dict() for k, v in self.methods.items()}}


def _result(m, steps) -> MethodResult:
    if not m.ok_:
        return MethodResult(m.name, False, m.reason_, warnings=list(getattr(m, "warnings_", [])))
    f = m.predict(steps)
    if isinstance(m, PriorMethod):
        f["prior_shift"] = m.shift(steps)
    return MethodResult(m.name, True, None, f, m.plateau_, m.plateau_ci(), m.t90_, m.t90_ci(), m.params_,
                        list(m.warnings_), m.late_rmse_, getattr(m, "t90_note_", None))


def forecast(run: RunData, fit_frac=None, fit_steps=None, at_steps=None, methods=None, conf=0.9,
             prior_runs=(), prior_base="law+entropy", n_boot=200, seed=0) -> Forecast:
    """Forecast ``run`` from its window (see :mod:`entropylaw.fit.forecast_data` for windows).

    ``at_steps``: steps to forecast (after the window). Default: the run's later target steps
    when the window ends before the run does (a backtest), else as far ahead as the window
    is long. ``methods``: names from :data:`ALL_METHODS` (default: all; ``prior`` only with
    ``prior_runs``)."""
    unc.check_conf(conf)
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 2:
        raise EntropyLawError(f"n_boot = {n_boot!r}: expected a whole number >= 2")
    names = list(methods) if methods else [n for n in ALL_METHODS if n != PRIOR or prior_runs]
    unknown = [n for n in names if n not in ALL_METHODS]
    if unknown:
        raise EntropyLawError(f"unknown method {unknown[0]!r} (expected one of {', '.join(ALL_METHODS)})")
    end = window_end(run, fit_frac, fit_steps)
    win = run.window(end)
    if len(win.target) == 0:
        raise EntropyLawError(f"run {run.run_id!r}: the window (steps {run.origin:g}..{end:g}) holds no "
                              f"{run.target_kind} point; {run.describe_start()}, its first {run.target_key} "
                              f"is at step {run.target.steps[0]:g}: choose a larger --fit-frac/--fit-steps")
    if at_steps is None:
        later = run.target.steps[run.target.steps > end]
        at_steps = later if len(later) else np.array([end + max(end - run.origin, 1.0)])
    at_steps = np.atleast_1d(np.asarray(at_steps, float))
    if (at_steps <= end).any():
        bad = float(at_steps[at_steps <= end][0])
        raise EntropyLawError(f"--at-step {bad:g} is not after the window's end (step {end:g}); "
                              f"{run.describe_start()}: forecast a later step")
    fitted = {}
    for name in names:
        if name == ENSEMBLE:
            continue
        if name == PRIOR:
            m = PriorMethod(conf, n_boot, seed, base=prior_base, prior_runs=tuple(prior_runs))
        else:
            m = METHODS[name](conf=conf, n_boot=n_boot, seed=seed)
        fitted[name] = m.fit(win)
    results = {name: _result(m, at_steps) for name, m in fitted.items()}
    if ENSEMBLE in names:
        members = [m for n, m in fitted.items()]
        if not members:  # only the ensemble asked for: it needs its members
            members = [METHODS[n](conf=conf, n_boot=n_boot, seed=seed).fit(win) for n in METHODS]
        ens = Ensemble(conf=conf, n_boot=n_boot, seed=seed).fit(win, fitted=members)
        results[ENSEMBLE] = _result(ens, at_steps)
    if not any(r.ok for r in results.values()):
        why = "; ".join(f"{r.method}: {r.reason}" for r in results.values())
        raise EntropyLawError(f"run {run.run_id!r}: no method can forecast from the window "
                              f"(steps {run.origin:g}..{end:g}, {len(win.target)} {run.target_kind} point(s)): {why}")
    note = None
    if run.target_kind != "validation":
        note = (f"no validation score in run {run.run_id!r}: forecasting the training score "
                f"({run.target_key}) instead")
    observed = pd.DataFrame({"step": run.target.steps, "value": run.target.values})
    return Forecast(run.run_id, run.target_key, run.target_kind, run.origin, end, win.last, len(win.target), conf,
                    at_steps, results, note, observed=observed)


def forecast_table(df: pd.DataFrame, run_ids=None, y_key=None, x_key="entropy", prior=None, **kwargs) -> dict:
    """:func:`forecast` for every run (or ``run_ids``) of a tidy table: ``{run_id: Forecast}``.

    ``prior``: a tidy table of finished runs for the ``prior`` method (the run itself is left
    out of its own prior). Other keywords go to :func:`forecast`.

    >>> import numpy as np
    >>> from entropylaw import table
    >>> recs = [(s, "val/gsm8k", 0.7 - 0.4 * np.exp(-s / 60)) for s in range(0, 400, 10)]
    >>> out = forecast_table(table.from_records(recs, run_id="r"), fit_frac=0.3, methods=["exp-saturation"], n_boot=20)
    >>> round(out["r"].methods["exp-saturation"].plateau, 3)
    0.7
    """
    import entropylaw.table as table

    ids = list(run_ids) if run_ids is not None else table.run_ids(df)
    prior_runs = () if prior is None else tuple(RunData.from_table(prior, r, x_key=x_key)
                                                for r in table.run_ids(prior))
    return {rid: forecast(RunData.from_table(df, rid, y_key=y_key, x_key=x_key), prior_runs=prior_runs, **kwargs)
            for rid in ids}
