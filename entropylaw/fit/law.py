"""The entropy-performance law ``R = -a exp(H) + b`` fitted to one run or a family of runs.

Estimates are exact (weighted) least squares in ``x = exp(H)``; intervals account for
the autocorrelation of consecutive validation scores (see
:mod:`entropylaw.fit.uncertainty`; ``interval=``):

- ``"ar1"`` (default): AR(1) residuals, phi averaged over its restricted likelihood,
  t(n-2) intervals. ~95 % coverage in simulation (``tests/test_fit_coverage.py``).
- ``"block-bootstrap"``: moving-block bootstrap of residuals, percentile intervals.
- ``"run-bootstrap"``: resample whole runs (families of >= 2 runs), percentile intervals.
- ``"iid"``: textbook least-squares covariance (under-covers on real, correlated runs).

The ceiling is ``R(H=0) = b - a``; its variance ``Var(a) + Var(b) - 2 Cov(a, b)``.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> H = 1.2 * np.exp(-np.arange(60) / 15) + 0.05
>>> R = 0.85 - 0.3 * np.exp(H) + 0.01 * rng.standard_normal(60)
>>> f = EntropyLawFit().fit(H, R)
>>> round(f.a_, 2), round(f.b_, 2), round(f.ceiling_, 2)
(0.3, 0.85, 0.55)
>>> lo, hi = f.ceiling_ci_
>>> bool(lo < 0.55 < hi)
True
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.fileio import jsonable
from entropylaw.fit import forms as forms_mod
from entropylaw.fit import law_text
from entropylaw.fit import trust as trust_mod
from entropylaw.fit import uncertainty as unc
from entropylaw.fit.estimator import Estimator, as_numbers
from entropylaw.fit.law_inputs import ENTROPIES, WEIGHTS, band_points, check_numbers, run_labels
from entropylaw.fit.pairing import check_pairs, pair
from entropylaw.fit.law_text import INTERVAL_TEXT
from entropylaw.fit.robust import LOSSES, odr_fit, robust_fit

INTERVALS = ("ar1", "block-bootstrap", "run-bootstrap", "iid")
WIDE_NATS = 1.0  # an entropy range this wide is no small one: a lost in its error is a score that does not follow it


class EntropyLawFit(Estimator):
    """Fit ``R = b - a f(H)`` (``f = exp`` for the law) with intervals; scikit-learn style."""

    FITTED, FIT_CALL, REPORT = "a_", "fit(H, R)", "fit_report"

    def __init__(self, form="exp", weights=None, robust=None, errors_in_variables=False,
                 interval="ar1", n_boot=1000, block=None, conf=0.95, seed=0,
                 score_range=None, entropy_sd=None, warn=True):
        self.form = form
        self.weights = weights
        self.robust = robust
        self.errors_in_variables = errors_in_variables
        self.interval = interval
        self.n_boot = n_boot
        self.block = block
        self.conf = conf
        self.seed = seed
        self.score_range = score_range
        self.entropy_sd = entropy_sd
        self.warn = warn

    # ------------------------------------------------------------------ fitting
    def check(self) -> "EntropyLawFit":
        """The options, checked before any point is fitted: each mistake one line naming its option."""
        if self.form not in forms_mod.FORMS:
            raise EntropyLawError(f"unknown form {self.form!r} (expected one of {', '.join(forms_mod.FORMS)})")
        if self.interval not in INTERVALS:
            raise EntropyLawError(f"unknown interval {self.interval!r} (expected one of {', '.join(INTERVALS)})")
        unc.check_conf(self.conf)
        if isinstance(self.n_boot, bool) or not isinstance(self.n_boot, (int, np.integer)) or self.n_boot < 2:
            raise EntropyLawError(f"n_boot = {self.n_boot!r}: the number of bootstrap resamples must be a whole "
                                  "number >= 2 (their covariance needs at least two)")
        unc.check_draws(self.block, self.seed)
        if self.robust and self.robust not in LOSSES:
            raise EntropyLawError(f"unknown robust loss {self.robust!r} (expected one of {', '.join(LOSSES)})")
        if self.errors_in_variables and self.form != "exp":
            raise EntropyLawError("errors-in-variables is implemented for form 'exp' only")
        check_numbers(self.weights, self.entropy_sd)
        sr = self.score_range
        try:
            lo, hi = (float(v) for v in sr) if sr is not None and not isinstance(sr, str) else (0.0, 0.0)
        except (TypeError, ValueError):
            lo = hi = 0.0
        if sr is not None and not (np.isfinite([lo, hi]).all() and lo < hi):
            raise EntropyLawError(f"`score_range` {sr!r}: expected the score's range as two numbers (lo, hi), lo < hi, "
                                  "such as (0, 1)")
        return self

    def fit(self, H, R, runs=None, where="run"):
        """Fit to paired entropy ``H`` and score ``R``; ``runs`` labels points of a family."""
        self.check()
        H, R = check_pairs(H, R, where, self.score_range)
        n = len(H)
        runs = run_labels(runs, n, where)
        w = np.ones(n) if self.weights is None else np.asarray(self.weights, float)
        if w.shape != (n,):
            raise EntropyLawError(f"{where}: `weights`: {np.size(w)} numbers for {n} points (expected {WEIGHTS})")
        self.warnings_: list[str] = []
        self.where_ = where
        self.H_, self.R_, self.runs_, self.w_ = H, R, runs, w
        self.c_ = forms_mod.fit_form(self.form, H, R, w)["c"] if forms_mod.n_shape(self.form) else None
        f = forms_mod.basis(self.form, H, self.c_)
        self.f0_ = forms_mod.ceiling_basis(self.form, self.c_)

        a_ls, b_ls, _ = forms_mod.linear_fit(f, R, w)
        self.ols_ = {"a": a_ls, "b": b_ls, "ceiling": b_ls - a_ls * self.f0_}
        w_eff = w
        if self.robust:
            _, _, rw = robust_fit(f, R, loss=self.robust, weights=w)
            w_eff = w * rw
            self.robust_weights_ = rw
        out = self._ar1(f, R, w_eff, runs)
        a, b = out["beta"][0]
        if self.errors_in_variables:
            o = odr_fit(H, R, entropy_sd=self.entropy_sd)
            self.odr_ = o
            a, b = o["a"], o["b"]
        self.a_, self.b_ = float(a), float(b)
        self.ceiling_ = self.b_ - self.a_ * self.f0_
        self.n_, self.n_runs_ = n, int(runs.max()) + 1
        self.dof_ = float(out["dof"][0])
        self._set_cov(out, f, R, w_eff, runs)
        resid = R - self.predict(H)
        self.rmse_ = float(np.sqrt(np.mean(resid**2)))
        tss = np.sum(w * (R - np.average(R, weights=w)) ** 2)
        # a constant score has no variance to explain (its float mean can leave a tss of 1e-32: R² of -1190)
        self.r2_ = float(1 - np.sum(w * resid**2) / tss) if np.ptp(R) > 0 and tss > 0 else float("nan")
        self.residual_autocorr_ = _lag1(resid, runs)
        self.phi_, self.phi_mode_ = float(out["phi"][0]), float(out["phi_mode"][0])
        self.sigma_ = float(out["sigma"][0])
        self.shift_ = {"a": self.a_ - a_ls, "b": self.b_ - b_ls, "ceiling": self.ceiling_ - self.ols_["ceiling"]}
        self._check()
        return self

    def _ar1(self, f, R, w, runs):
        xs = [f[runs == k] for k in range(runs.max() + 1)]
        ys = [R[runs == k] for k in range(runs.max() + 1)]
        ws = [w[runs == k] for k in range(runs.max() + 1)]
        X, lengths = unc._pad(xs)
        return unc.ar1_ols(X, unc._pad(ys)[0], unc._pad(ws)[0], lengths,
                           groups=np.zeros(len(xs), dtype=int), conf=self.conf)

    def _set_cov(self, out, f, R, w, runs):
        coef_ceiling = np.array([-self.f0_, 1.0])
        tq = float(out["tq"][0])
        self.tq_ = tq
        est = np.array([self.a_, self.b_, self.ceiling_])
        if self.interval in ("ar1", "iid"):
            cov = out["cov"][0] if self.interval == "ar1" else out["cov_iid"][0]
            se = np.sqrt([cov[0, 0], cov[1, 1], coef_ceiling @ cov @ coef_ceiling])
            cis = np.stack([est - tq * se, est + tq * se], axis=1)
        else:
            if self.interval == "block-bootstrap":
                if self.n_runs_ > 1:
                    raise EntropyLawError("block-bootstrap is for one run; use run-bootstrap for a family")
                draws = unc.block_bootstrap(f, R, w, self.n_boot, self.block, self.seed)
            else:
                if self.n_runs_ < 2:
                    raise EntropyLawError("run-bootstrap needs a family of at least 2 runs")
                cols, lengths = unc.design_columns(*(unc._pad([v[runs == k] for k in range(self.n_runs_)])[0]
                                                     for v in (f, R, w)),
                                                   lengths=np.bincount(runs))
                draws = unc.run_bootstrap(unc.run_sums(cols, lengths)[0], self.n_boot, self.seed)
            if self.errors_in_variables:  # centre the draws on the reported estimate
                draws = draws - draws.mean(axis=0) + est[:2]
            full = np.column_stack([draws, draws @ coef_ceiling])
            cov = np.cov(draws.T)
            se = full.std(axis=0, ddof=1)
            cis = unc.percentile_ci(full, self.conf).T
        self.cov_ = np.asarray(cov, float)
        self.a_stderr_, self.b_stderr_, self.ceiling_stderr_ = (float(s) for s in se)
        self.cov_ab_ = float(self.cov_[0, 1])
        self.a_ci_, self.b_ci_, self.ceiling_ci_ = (tuple(float(v) for v in ci) for ci in cis)

    def _warn(self, message):
        self.warnings_.append(message)
        if self.warn:
            warnings.warn(f"{self.where_}: {message}", EntropyLawWarning, stacklevel=3)

    def _check(self):
        """Warnings for fits that are possible but should not be trusted blindly."""
        if self.a_ <= 0:
            self._warn(f"fitted a = {self.a_:.4g} <= 0: the score does not rise as entropy falls, "
                       "the law does not describe this run")
        elif self.a_stderr_ > 0 and self.a_ / self.a_stderr_ < 2:
            self._warn(f"a = {self.a_:.3g} ± {self.a_stderr_:.2g} is not distinguishable from 0: {self._why_flat()}")
        f = forms_mod.basis(self.form, self.H_, self.c_)
        reach = abs(self.f0_ - f.min()) if self.f0_ < f.min() else 0.0
        if reach > np.ptp(f):
            self._warn(f"the ceiling is extrapolated from H >= {self.H_.min():.3g} to H = 0, further than "
                       "the observed entropy range spans")
        if self.score_range and not self.score_range[0] <= self.ceiling_ <= self.score_range[1]:
            digits = next(d for d in (3, 6, 10, 17) if float(f"{self.ceiling_:.{d}g}") not in self.score_range)
            self._warn(f"ceiling {self.ceiling_:.{digits}g} lies outside the score range "  # -1.00002, not "-1"
                       f"{self.score_range[0]:g},{self.score_range[1]:g}")
        few = trust_mod.few_points(self.n_)
        if few:
            self._warn(f"{few}: the residual autocorrelation and the intervals are rough")

    def _why_flat(self) -> str:
        """Why a is lost in its error: an entropy that moves too little for the score's noise, or, over a
        range of a nat or more (no small range for a law whose runs fall by about one), a score that
        does not follow the entropy."""
        lo, hi = float(self.H_.min()), float(self.H_.max())
        if hi - lo < WIDE_NATS:
            return f"the entropy range ({lo:.3g}-{hi:.3g} nats) is small relative to the score noise"
        span = ", from 0" if lo <= 0 else f", {np.log10(hi / lo):.0f} orders of magnitude" if hi >= 1e3 * lo else ""
        r2 = f"; R² = {self.r2_:.2f}" if np.isfinite(self.r2_) else ""
        return (f"the score does not follow the entropy, though the entropy ranges widely ({lo:.3g} to {hi:.3g} "
                f"nats{span}{r2})")

    # ------------------------------------------------------------------ using
    def predict(self, H):
        """The law's score at entropies ``H`` (nats: a number or an array)."""
        self._fitted("predict()")
        return self.b_ - self.a_ * forms_mod.basis(self.form, as_numbers(H, "H", ENTROPIES), self.c_)

    def _band(self, H, extra_var):
        g = np.column_stack([-forms_mod.basis(self.form, H, self.c_), np.ones(np.size(H))])
        se = np.sqrt(np.einsum("ni,ij,nj->n", g, self.cov_, g) + extra_var)
        mid = self.predict(H)
        return mid - self.tq_ * se, mid + self.tq_ * se

    def confidence_band(self, H):
        """Interval for the fitted mean curve at ``H``: ``(lo, hi)``."""
        self._fitted("confidence_band()")
        return self._band(band_points(H), 0.0)

    def prediction_band(self, H):
        """Interval for a new score at ``H`` (weight 1): adds the residual variance."""
        self._fitted("prediction_band()")
        return self._band(band_points(H), self.sigma_**2)

    def to_lmfit(self):
        """The same fit as an ``lmfit.ModelResult`` carrying *this* fit's estimates and covariance.

        lmfit fits with its own (independent-residual) covariance; that is replaced by the
        one this fit reports (``interval``: AR(1) by default), so ``fit_report``, the
        parameters' ``stderr``/``correl`` and ``eval_uncertainty`` agree with the tool.
        lmfit's own covariance is kept in ``result.lmfit_covar``.
        """
        import lmfit

        self._fitted("to_lmfit()")
        form, c = self.form, self.c_
        model = lmfit.Model(lambda H, a, b: b - a * forms_mod.basis(form, H, c), independent_vars=["H"])
        w = self.w_ * getattr(self, "robust_weights_", 1.0)
        result = model.fit(self.R_, H=self.H_, a=self.ols_["a"], b=self.ols_["b"], weights=np.sqrt(w))
        result.lmfit_covar = None if result.covar is None else np.array(result.covar)
        result.covar = self.cov_.copy()
        se = {"a": self.a_stderr_, "b": self.b_stderr_}
        corr = self.cov_ab_ / (se["a"] * se["b"]) if se["a"] > 0 and se["b"] > 0 else float("nan")
        for name, value in (("a", self.a_), ("b", self.b_)):
            par = result.params[name]
            par.value, par.stderr = value, se[name]
            par.correl = {"b" if name == "a" else "a": corr}
        result.uvars = None  # lmfit's own uncertainties objects would disagree with covar
        result.interval_method = INTERVAL_TEXT[self.interval]
        return result

    def plot(self, ax=None, **kwargs):
        """Draw the paired points, the fit, its bands and the ceiling on ``ax``; returns the axes."""
        from entropylaw.draw.law import draw_fit  # matplotlib: loaded on the first plot

        self._fitted("plot()")
        return draw_fit(self, ax=ax, **kwargs)

    def fit_report(self) -> str:
        """A plain-text report, like ``lmfit``'s: estimates, intervals, fit quality, trust, warnings."""
        return law_text.fit_report(self) if self.is_fitted() else str(self)

    def __repr__(self) -> str:
        if not hasattr(self, "a_"):
            return f"EntropyLawFit(form={self.form!r}, interval={self.interval!r}, conf={self.conf})"
        flag = f", {self.trust_}" if getattr(self, "trust_", None) else \
            (", a <= 0: the law does not describe it" if self.a_ <= 0 else "")  # a bare fit's verdict: its sign
        return (f"<EntropyLawFit {getattr(self, 'run_id_', None) or self.where_!s}: a={self.a_:.4g}, "
                f"b={self.b_:.4g}, ceiling={self.ceiling_:.4g} [{self.ceiling_ci_[0]:.4g}, "
                f"{self.ceiling_ci_[1]:.4g}], n={self.n_}{flag}>")

    def trust(self) -> tuple[str | None, list[str]]:
        """The trust flag and its reasons: those :func:`entropylaw.fit` gave (``trust_``), or a bare
        fit's. A bare fit has its points only, not the run's course over its steps that the flag also
        reads, so it is flagged where the fit alone decides (a <= 0: ``law does not apply``) and
        otherwise not judged (None), its reason saying so."""
        if getattr(self, "trust_", None):
            return self.trust_, list(self.trust_reasons_)
        level, reasons = trust_mod.judge(self)
        return (level, reasons) if level == trust_mod.NOT_APPLICABLE else (None, [trust_mod.UNJUDGED])

    def to_dict(self) -> dict:
        """JSON-safe summary."""
        self._fitted("to_dict()")
        trust, trust_reasons = self.trust()
        out = {
            "run_id": getattr(self, "run_id_", None), "form": self.form, "n": self.n_, "n_runs": self.n_runs_,
            "a": self.a_, "b": self.b_, "a_stderr": self.a_stderr_, "b_stderr": self.b_stderr_,
            "cov_ab": self.cov_ab_, "a_ci": list(self.a_ci_), "b_ci": list(self.b_ci_),
            "ceiling": self.ceiling_, "ceiling_stderr": self.ceiling_stderr_, "ceiling_ci": list(self.ceiling_ci_),
            "conf": self.conf, "interval": self.interval, "interval_method": INTERVAL_TEXT[self.interval],
            "r2": self.r2_, "rmse": self.rmse_, "residual_autocorr": self.residual_autocorr_,
            "phi": self.phi_, "sigma": self.sigma_, "c": self.c_,
            "robust": self.robust, "errors_in_variables": bool(self.errors_in_variables),
            "least_squares": self.ols_, "shift_from_least_squares": self.shift_,
            "h_min": float(self.H_.min()), "h_max": float(self.H_.max()), "warnings": list(self.warnings_),
            "trust": trust, "trust_reasons": trust_reasons,
            "best_form_aic": getattr(self, "best_form_aic_", None),
            "best_form_bic": getattr(self, "best_form_bic_", None),
        }
        if getattr(self, "forms_", None) is not None:
            cols = ["a", "b", "c", "ceiling", "aic", "bic"]
            out["forms"] = {f: {k: self.forms_.loc[f, k] for k in cols if k in self.forms_.columns}
                            for f in self.forms_.index}
        if self.errors_in_variables:
            out["odr"] = self.odr_
        out.update(getattr(self, "meta_", {}))
        return jsonable(out)


def _lag1(resid, runs) -> float:
    """Lag-1 autocorrelation of residuals, pairs taken within runs only."""
    num = den = 0.0
    for k in np.unique(runs):
        r = resid[runs == k] - resid[runs == k].mean()
        num += float(r[1:] @ r[:-1])
        den += float(r @ r)
    return num / den if den > 0 else float("nan")


def check_options(options: dict, own=()) -> None:
    """A fit's keywords (:class:`EntropyLawFit`'s, and ``own``: the caller's, such as ``y``), checked
    before any run is read: an unknown one, or a bad value, is one error naming it."""
    known = [*own, *EntropyLawFit._param_names()]
    unknown = [k for k in options if k not in known]
    if unknown:
        raise EntropyLawError(f"unknown option `{unknown[0]}` (expected one of {', '.join(known)})")
    EntropyLawFit(**{k: v for k, v in options.items() if k not in own}).check()


def fit_pairs(pairs: pd.DataFrame, **kwargs) -> EntropyLawFit:
    """Fit one run's pairs (from :func:`entropylaw.fit.pairing.pair`) and attach its keys."""
    where = f"run {pairs.attrs.get('run_id', '?')!r}"
    fit = EntropyLawFit(**kwargs).fit(pairs["H"].to_numpy(), pairs["R"].to_numpy(), where=where)
    fit.run_id_ = pairs.attrs.get("run_id")
    fit.meta_ = {"x_key": pairs.attrs.get("x_key"), "y_key": pairs.attrs.get("y_key"),
                 "pairing": pairs.attrs.get("mode"), "dropped": pairs.attrs.get("dropped", {})}
    return fit


def fit_table(df: pd.DataFrame, run_ids=None, y=None, mode="nearest-earlier", x="entropy",
              pool=False, **kwargs):
    """Fit every run (or ``run_ids``) of a tidy table; a DataFrame of ``to_dict`` rows.

    ``pool=True`` fits all the runs as one family (one shared a, b) instead.
    """
    import entropylaw.table as table

    ids = list(run_ids) if run_ids is not None else table.run_ids(df)
    pairs = [pair(df, r, x=x, y=y, mode=mode) for r in ids]
    if pool:
        fit = fit_family(pairs, **kwargs)
        return pd.DataFrame([fit.to_dict()])
    return pd.DataFrame([fit_pairs(p, **kwargs).to_dict() for p in pairs])


def fit_family(pairs_list, **kwargs) -> EntropyLawFit:
    """One shared (a, b) for several runs' pairs; each run is its own AR(1) segment."""
    H = np.concatenate([p["H"].to_numpy() for p in pairs_list])
    R = np.concatenate([p["R"].to_numpy() for p in pairs_list])
    runs = np.concatenate([np.full(len(p), i) for i, p in enumerate(pairs_list)])
    names = [str(p.attrs.get("run_id")) for p in pairs_list]
    fit = EntropyLawFit(**kwargs).fit(H, R, runs=runs, where=f"family of {len(names)} runs")
    fit.run_id_ = "+".join(names)
    fit.meta_ = {"x_key": pairs_list[0].attrs.get("x_key"),
                 "y_key": ",".join(sorted({str(p.attrs.get("y_key")) for p in pairs_list})),
                 "pairing": pairs_list[0].attrs.get("mode"), "runs": names}
    return fit
