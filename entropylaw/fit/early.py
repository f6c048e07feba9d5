"""Early-stage prediction (paper Fig. 5): fit on the first steps, predict the rest.

Windows are measured from the first logged step ``s0`` (a run resumed from a checkpoint
may start at step 101): the fit window holds the paired points whose training step is
``<= s0 + K - 1`` (``fit_steps=K``: the first K steps) or ``<= s0 + F * (last - s0)`` (``fit_frac=F``, ``last``
the last paired step). ``s0`` is ``origin`` when given, else ``pairs.attrs["first_step"]``
(set by :func:`entropylaw.fit.pairing.pair`), else the first paired step. Every
later point is predicted from its entropy with the window's fit; ``predict_steps=N`` scores
only the points with ``window end < step <= window end + N`` (the paper's protocol: fit on
the first 36 steps, predict the next 200), None scores every later point. Reported: RMSE
over the scored points, the error at the final scored point, predicted vs observed final score, the
predicted ceiling with its interval, and the error-vs-window curve (how early is early
enough), computed for every window from 3 points up in one vectorised pass.

>>> import numpy as np, pandas as pd
>>> steps = np.arange(0, 300, 10)
>>> H = 0.05 + np.exp(-steps / 60)
>>> pairs = pd.DataFrame({"step": steps, "H": H, "R": 0.8 - 0.2 * np.exp(H)})
>>> ep = EarlyPrediction(fit_steps=60).fit(pairs)   # the first 60 steps: 0 .. 59
>>> ep.fit_n_, round(ep.rmse_predicted_, 6), round(ep.final_predicted_, 3)
(6, 0.0, 0.588)
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.fit import uncertainty as unc
from entropylaw.fit.applicability import law_applies
from entropylaw.fit.estimator import Estimator, as_numbers, shown
from entropylaw.fit.law import EntropyLawFit
from entropylaw.fit.pairing import check_pairs
from entropylaw.fit.run import NOT_APPLICABLE, judge, score_kind
from entropylaw.fit.text_table import fmt_table
from entropylaw.fit.window import window_end
from entropylaw.terminal import as_html, count, wrap

PROTOCOL = "paper (Fig. 5): later scores predicted from their observed entropy; not a forecast"
COLUMNS = [("run", "run_id"), ("fit_n", "fit_n"), ("fit_to_step", "fit_last_step"), ("n_pred", "n_predicted"),
           ("rmse_pred", "rmse_predicted"), ("final_obs", "final_observed"), ("final_pred", "final_predicted"),
           ("final_step", "final_step"), ("final_err", "final_error"), ("ceiling", "ceiling"),
           ("ceiling_ci", "ceiling_ci"), ("trust", "trust")]
OPTIONAL = ("fit_to_step", "final_step", "n_pred", "fit_n")  # what a narrow terminal leaves out first


OPTION_WHAT = {"predict_steps": "a positive number of steps after the window (None: every later point)",
               "origin": "the first logged step, a number (None: from the pairs)"}


def _read_pairs(pairs):
    """``(where, pairs sorted by step, (steps, H, R))``: a DataFrame of columns step, H, R with finite
    numbers, else one error saying what is expected (a list raised AttributeError, a missing column
    KeyError, a NaN entropy after the window made every error NaN, unsaid)."""
    if not isinstance(pairs, pd.DataFrame):
        raise EntropyLawError(f"`pairs` {shown(pairs)}: expected a DataFrame with columns step, H, R "
                              "(as entropylaw.fit.pairing.pair gives)")
    missing = [c for c in ("step", "H", "R") if c not in pairs.columns]
    if missing:
        raise EntropyLawError(f"`pairs` has no column {', '.join(missing)} (expected step, H, R, as "
                              "entropylaw.fit.pairing.pair gives)")
    where = f"run {pairs.attrs.get('run_id', '?')!r}"
    steps = as_numbers(pairs["step"].to_numpy(), "pairs['step']", "training steps, numbers")
    if not np.isfinite(steps).all():
        raise EntropyLawError(f"{where}: a non-finite step at point {int(np.argmax(~np.isfinite(steps)))}")
    check_pairs(pairs["H"].to_numpy(), pairs["R"].to_numpy(), where)
    pairs = pairs.sort_values("step").reset_index(drop=True)
    return where, pairs, (pairs[c].to_numpy(dtype=float) for c in ("step", "H", "R"))


def _tail_outside(observed, lo, hi) -> int:
    """How many of the last scores in a row lie outside [lo, hi] on the side the last one does.

    >>> _tail_outside(np.array([0.5, 0.5, 0.0, 0.0]), np.full(4, 0.4), np.full(4, 0.6))
    2
    """
    side = np.where(observed < lo, -1, np.where(observed > hi, 1, 0))
    if not len(side) or side[-1] == 0:
        return 0
    same = side == side[-1]
    return len(same) - int(np.flatnonzero(~same)[-1]) - 1 if (~same).any() else len(same)


class EarlyPrediction(Estimator):
    """Fit the law on an early window of a run and predict every later point."""

    FITTED, FIT_CALL = "fit_", "fit(pairs)"

    def __init__(self, fit_steps=None, fit_frac=None, conf=0.95, score_range=None, warn=True,
                 predict_steps=None, origin=None):
        self.origin = origin  # first logged step; None: from the pairs (module docstring)
        self.fit_steps = fit_steps
        self.fit_frac = fit_frac
        self.predict_steps = predict_steps  # horizon after the window (paper: 200); None = all
        self.conf = conf
        self.score_range = score_range
        self.warn = warn

    def window_end(self, steps, origin=None) -> float:
        """Last training step inside the fit window, measured from ``origin`` (the first logged
        step): :func:`entropylaw.fit.window.window_end`, the one rule, with a window required and
        something left after it to predict."""
        origin = float(np.min(steps)) if origin is None else float(origin)
        return window_end(origin, float(np.max(steps)), self.fit_frac, self.fit_steps, required=True, leave_some=True)

    def fit(self, pairs: pd.DataFrame):
        """``pairs``: DataFrame[step, H, R] (e.g. from :func:`entropylaw.fit.pairing.pair`)."""
        unc.check_conf(self.conf)
        for name in ("predict_steps", "origin"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)
                                      or not np.isfinite(value)):
                raise EntropyLawError(f"`{name}` {value!r}: expected {OPTION_WHAT[name]}")
        if self.predict_steps is not None and not self.predict_steps > 0:
            raise EntropyLawError(f"`predict_steps` must be positive (got {self.predict_steps})")
        where, pairs, (steps, H, R) = _read_pairs(pairs)
        origin = self.origin if self.origin is not None else pairs.attrs.get("first_step")
        origin = float(steps.min()) if origin is None or len(steps) == 0 else min(float(origin), float(steps.min()))
        end = self.window_end(steps, origin)
        in_fit = steps <= end
        k = int(in_fit.sum())
        last = np.floor(end) if end - np.floor(end) > 0 else end  # training steps are whole: 151.1 -> 151
        if k < 3:
            late = "" if steps.min() == origin else \
                f"the log starts at step {origin:g} and its first paired point is at step {steps.min():g}; "
            raise EntropyLawError(f"{where}: the fit window (steps {origin:g}..{last:g}) holds "
                                  f"{count(k, 'paired point')}; {late}the fit needs at least 3 "
                                  "(choose a larger `fit_steps`/`fit_frac`)")
        if k == len(steps):
            raise EntropyLawError(f"{where}: the fit window (steps <= {last:g}) holds every point; nothing to predict")
        horizon = np.inf if self.predict_steps is None else end + self.predict_steps
        scored = ~in_fit & (steps <= horizon)
        if not scored.any():
            raise EntropyLawError(f"{where}: no paired point within {self.predict_steps} steps after the fit "
                                  f"window (steps <= {last:g}); choose a larger `predict_steps`")
        self.fit_ = EntropyLawFit(conf=self.conf, score_range=self.score_range, warn=self.warn).fit(
            H[in_fit], R[in_fit], where=f"{where} (first {k} points)")
        # the window's verdict, as `fit` gives a run's: a ceiling the law does not describe is said so beside it
        rng = self.score_range or ((0.0, 1.0) if score_kind(pairs.attrs.get("y_key", "")) == "validation" else None)
        verdict, why = law_applies(steps[in_fit], H[in_fit], R[in_fit], score_range=rng)
        self.fit_.trust_, self.fit_.trust_reasons_ = judge(
            self.fit_, tuple((NOT_APPLICABLE, w) for w in why) if verdict != "applies" else ())
        pred = self.fit_.predict(H)
        lo, hi = self.fit_.prediction_band(H)
        self.predicted_ = pd.DataFrame({"step": steps, "H": H, "R": R, "R_pred": pred,
                                        "pred_lo": lo, "pred_hi": hi, "in_fit": in_fit, "scored": scored})
        err = pred[scored] - R[scored]
        last = np.nonzero(scored)[0][-1]  # the final scored point
        self.run_id_ = pairs.attrs.get("run_id")
        self.pairs_ = pairs
        self.window_end_ = end
        self.origin_ = origin
        self.fit_last_step_ = int(steps[in_fit][-1])  # last step actually fitted
        self.fit_n_ = k
        self.n_predicted_ = int(scored.sum())
        self.final_step_ = int(steps[last])
        self.rmse_predicted_ = float(np.sqrt(np.mean(err**2)))
        self.final_observed_ = float(R[last])
        self.final_predicted_ = float(pred[last])
        self.final_error_ = self.final_predicted_ - self.final_observed_
        self.ceiling_, self.ceiling_ci_ = self.fit_.ceiling_, self.fit_.ceiling_ci_
        self.error_vs_k_ = error_vs_k(steps, H, R, conf=self.conf, predict_steps=self.predict_steps, origin=origin,
                                      score_range=rng)
        self.notes_ = self._after(R[scored], lo[scored], hi[scored], rng)
        return self

    def _after(self, observed, lo, hi, rng) -> list[str]:
        """What the later scores say of the window's law: most of them outside its prediction band
        (a run that collapsed after the window: "good fit", final error 0.84), a final prediction
        beyond the score's range (1.72 for an accuracy)."""
        out = []
        outside = int(np.sum((observed < lo) | (observed > hi)))
        if outside > len(observed) / 2:
            out.append(f"after the window the law does not hold: {outside} of {len(observed)} later scores lie "
                       f"outside its {100 * self.conf:g} % prediction band")
        # the run left the law at its end (a collapse): its last 3 scores or more outside the band, as one
        # point by chance is not (a 95 % band misses 1 in 20)
        elif (tail := _tail_outside(observed, lo, hi)) >= 3:
            out.append(f"at its end the run leaves the law: the final score {observed[-1]:.4g} lies "
                       f"{'below' if observed[-1] < lo[-1] else 'above'} the {100 * self.conf:g} % prediction band "
                       f"[{lo[-1]:.4g}, {hi[-1]:.4g}] (the last {count(tail, 'later score')} outside it)")
        if rng is not None and not rng[0] <= self.final_predicted_ <= rng[1]:
            out.append(f"the final prediction {self.final_predicted_:.4g} lies outside the score's range "
                       f"[{rng[0]:g}, {rng[1]:g}]")
        return out

    def to_dict(self) -> dict:
        self._fitted("to_dict()")
        base = self.fit_.to_dict()
        attrs = self.pairs_.attrs
        base.update(run_id=self.run_id_, fit_n=self.fit_n_, fit_last_step=self.fit_last_step_,
                    fit_steps=self.fit_steps, fit_frac=self.fit_frac, predict_steps=self.predict_steps,
                    log_starts_at=self.origin_, window_end=self.window_end_,
                    n_predicted=self.n_predicted_,
                    rmse_predicted=self.rmse_predicted_, final_observed=self.final_observed_,
                    final_predicted=self.final_predicted_, final_error=self.final_error_,
                    final_step=self.final_step_, x_key=attrs.get("x_key"), y_key=attrs.get("y_key"),
                    pairing=attrs.get("mode"), protocol=PROTOCOL, notes=list(self.notes_),
                    error_vs_k=self.error_vs_k_.to_dict(orient="records"))
        return base

    def report(self, curve: bool = False) -> str:
        """What the prediction says, in a few lines (``curve``: with the error for every window)."""
        self._fitted("report()")
        lo, hi = self.ceiling_ci_
        pct = f"{100 * self.conf:g} %"
        lines = [f"run {self.run_id_!r}: the law fitted on steps {self.origin_:g}..{self.fit_last_step_} "
                 f"({count(self.fit_n_, 'point')}) predicts {count(self.n_predicted_, 'later score')} from the entropy "
                 "observed then (the paper's protocol, Fig. 5: not a forecast)",
                 f"  RMSE over the predicted scores {self.rmse_predicted_:.4f}; final score (step {self.final_step_}) "
                 f"observed {self.final_observed_:.4f}, predicted {self.final_predicted_:.4f} "
                 f"(error {self.final_error_:+.4f})",
                 f"  ceiling b - a {self.ceiling_:.4f} [{lo:.4f}, {hi:.4f}] ({pct}); the window's fit: "
                 f"{getattr(self.fit_, 'trust_', None) or 'R² = ' + format(self.fit_.r2_, '.2f')}"]
        lines += [f"  note: {w}" for w in [*self.notes_, *self.fit_.warnings_]]
        if curve:
            lines += ["  error vs fit window:", _indent(_curve_table(self.error_vs_k_), 4)]
        return wrap("\n".join(lines))

    def __repr__(self) -> str:
        if not self.is_fitted():
            return f"EarlyPrediction(fit_steps={self.fit_steps!r}, fit_frac={self.fit_frac!r}, conf={self.conf})"
        trust = getattr(self.fit_, "trust_", None)
        return (f"<EarlyPrediction {self.run_id_}: fit on steps {self.origin_:g}..{self.fit_last_step_} "
                f"(n={self.fit_n_}), final score (step {self.final_step_}) predicted {self.final_predicted_:.4g}, "
                f"observed {self.final_observed_:.4g}; ceiling={self.ceiling_:.4g} [{self.ceiling_ci_[0]:.4g}, "
                f"{self.ceiling_ci_[1]:.4g}]{f', {trust}' if trust else ''}>")

    def plot(self, ax=None, label=None):
        """The scores over training: the fit window shaded, the prediction with its band, the
        observed scores and the ceiling (paper Fig. 5); returns the axes."""
        from entropylaw.draw.law import plot_early  # matplotlib: loaded on the first plot

        self._fitted("plot()")
        fig = plot_early(self.pairs_, self, ax=ax, label=label or self.run_id_)
        return ax if ax is not None else fig.axes[0]


def _curve_table(curve: pd.DataFrame) -> str:
    return fmt_table(curve.to_dict(orient="records"), [(c, c) for c in curve.columns])


def _indent(text: str, n: int) -> str:
    return "\n".join(" " * n + line for line in text.split("\n"))


class EarlyPredictions(dict):
    """:class:`EarlyPrediction` of several runs, ``{run_id: prediction}``: ``str()`` is what
    ``entropylaw predict`` prints (one row per run), :meth:`report` with ``curve=True`` adds
    each run's error vs window, :meth:`to_dict` is its JSON."""

    def __init__(self, predictions: dict, fit_steps=None, fit_frac=None, predict_steps=None, conf=0.95,
                 left_out: dict | None = None):
        super().__init__(predictions)
        self.fit_steps, self.fit_frac, self.predict_steps, self.conf = fit_steps, fit_frac, predict_steps, conf
        self.left_out = dict(left_out or {})  # runs that could not be predicted: run -> why

    def report(self, curve: bool = False) -> str:
        window = (f"first {self.fit_steps} steps" if self.fit_steps else f"first {self.fit_frac:g} of each run"
                  if self.fit_frac is not None else "early window of each run")
        horizon = f"the next {self.predict_steps} steps" if self.predict_steps else "the rest"
        out = [wrap(f"paper protocol: fit on the {window}, predict {horizon} from the observed entropy (uses later "
                    f"entropy: for a true forecast see `forecast()`); {100 * self.conf:g} % ceiling intervals"),
               fmt_table([p.to_dict() for p in self.values()], COLUMNS, optional=OPTIONAL)]
        out += [wrap(f"{rid}: {p.fit_.trust_}: {'; '.join(p.fit_.trust_reasons_)}") for rid, p in self.items()
                if p.fit_.trust_reasons_]
        out += [wrap(f"{rid}: {note}") for rid, p in self.items() for note in p.notes_]
        out += [wrap(f"left out: {rid}: {why.removeprefix(f'run {rid!r}: ')}") for rid, why in self.left_out.items()]
        if curve:
            for rid, p in self.items():
                out += [wrap(f"\n{rid}: error vs fit window"), _curve_table(p.error_vs_k_)]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.report()

    def _repr_html_(self) -> str:
        return as_html(self.report())

    def to_dict(self) -> dict:
        """``{"predictions": [one dict per run], "left_out": {run: why}}`` however many runs: one
        run is a list of one (a script reading a directory's JSON reads one run's the same way)."""
        return {"predictions": [p.to_dict() for p in self.values()], "left_out": dict(self.left_out)}


def error_vs_k(steps, H, R, conf=0.95, min_points=3, predict_steps=None, origin=None,
               score_range=None) -> pd.DataFrame:
    """Prediction error when fitting on the first k points, for every k from 3 to n-1.

    ``law`` says, beside each window's ceiling, whether the law describes that window: "does not
    apply" where its a <= 0 or :func:`~entropylaw.fit.applicability.law_applies` (``score_range``
    the score's) says so of its points, as the run's own row says it.

    ``fit_frac`` is the window's share of the run measured from ``origin`` (the first
    logged step; default the first paired step).

    With ``predict_steps`` only points within that many steps after the k-th point's step
    are scored (windows with none are left out)."""
    n = len(H)
    origin = float(steps[0]) if origin is None or n == 0 else float(origin)
    ks = np.arange(min_points, n)
    if len(ks) == 0:
        return pd.DataFrame(columns=["fit_n", "fit_last_step", "fit_frac", "rmse_predicted",
                                     "final_error", "ceiling", "ceiling_lo", "ceiling_hi", "law"])
    x = np.exp(H)
    X = np.broadcast_to(x, (len(ks), n))
    Y = np.broadcast_to(R, (len(ks), n))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = unc.ar1_ols(X, Y, lengths=ks, conf=conf)
    a, b = out["beta"][:, 0], out["beta"][:, 1]
    pred = b[:, None] - a[:, None] * x[None, :]
    later = np.arange(n)[None, :] >= ks[:, None]
    if predict_steps is not None:
        later &= steps[None, :] <= (steps[ks - 1] + predict_steps)[:, None]
    sq = np.where(later, (pred - R[None, :]) ** 2, 0.0)
    final = n - 1 - np.argmax(later[:, ::-1], axis=1)  # last scored point of each window
    rows = np.arange(len(ks))
    se = unc.combo_stderr(out["cov"], [-1.0, 1.0])
    ceiling = b - a
    with np.errstate(invalid="ignore", divide="ignore"):
        out_df = pd.DataFrame({
            "fit_n": ks, "fit_last_step": steps[ks - 1], "fit_frac": (steps[ks - 1] - origin) / (steps[-1] - origin),
            "rmse_predicted": np.sqrt(sq.sum(axis=1) / later.sum(axis=1)),
            "final_error": pred[rows, final] - R[final], "ceiling": ceiling,
            "ceiling_lo": ceiling - out["tq"] * se, "ceiling_hi": ceiling + out["tq"] * se})
    out_df["law"] = ["does not apply" if not a[i] > 0 or law_applies(steps[:k], H[:k], R[:k], score_range)[0] !=
                     "applies" else "applies" for i, k in enumerate(ks)]
    return out_df[later.any(axis=1)].reset_index(drop=True)
