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

import warnings

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.fit import uncertainty as unc
from entropylaw.fit.law import EntropyLawFit
from entropylaw.fit.window import window_end
from entropylaw.terminal import count


class EarlyPrediction:
    """Fit the law on an early window of a run and predict every later point."""

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
        where = f"run {pairs.attrs.get('run_id', '?')!r}"
        unc.check_conf(self.conf)
        if self.predict_steps is not None and not self.predict_steps > 0:
            raise EntropyLawError(f"`predict_steps` must be positive (got {self.predict_steps})")
        pairs = pairs.sort_values("step").reset_index(drop=True)
        steps, H, R = (pairs[c].to_numpy() for c in ("step", "H", "R"))
        origin = self.origin if self.origin is not None else pairs.attrs.get("first_step")
        origin = float(steps.min()) if origin is None or len(steps) == 0 else min(float(origin), float(steps.min()))
        end = self.window_end(steps, origin)
        in_fit = steps <= end
        k = int(in_fit.sum())
        last = np.floor(end) if end - np.floor(end) > 0 else end  # training steps are whole: 151.1 -> 151
        if k < 3:
            raise EntropyLawError(f"{where}: the fit window (steps {origin:g}..{last:g}) holds {count(k, 'paired point')}; "
                                  f"the log starts at step {origin:g} and its first paired point is at step "
                                  f"{steps.min():g}; the fit needs at least 3 (choose a larger `fit_steps`/`fit_frac`)")
        if k == len(steps):
            raise EntropyLawError(f"{where}: the fit window (steps <= {last:g}) holds every point; nothing to predict")
        horizon = np.inf if self.predict_steps is None else end + self.predict_steps
        scored = ~in_fit & (steps <= horizon)
        if not scored.any():
            raise EntropyLawError(f"{where}: no paired point within {self.predict_steps} steps after the fit "
                                  f"window (steps <= {last:g}); choose a larger `predict_steps`")
        self.fit_ = EntropyLawFit(conf=self.conf, score_range=self.score_range, warn=self.warn).fit(
            H[in_fit], R[in_fit], where=f"{where} (first {k} points)")
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
        self.error_vs_k_ = error_vs_k(steps, H, R, conf=self.conf, predict_steps=self.predict_steps, origin=origin)
        return self

    def to_dict(self) -> dict:
        base = self.fit_.to_dict()
        base.update(run_id=self.run_id_, fit_n=self.fit_n_, fit_last_step=self.fit_last_step_,
                    fit_steps=self.fit_steps, fit_frac=self.fit_frac, predict_steps=self.predict_steps,
                    log_starts_at=self.origin_, window_end=self.window_end_,
                    n_predicted=self.n_predicted_,
                    rmse_predicted=self.rmse_predicted_, final_observed=self.final_observed_,
                    final_predicted=self.final_predicted_, final_error=self.final_error_,
                    final_step=self.final_step_)
        return base


def error_vs_k(steps, H, R, conf=0.95, min_points=3, predict_steps=None, origin=None) -> pd.DataFrame:
    """Prediction error when fitting on the first k points, for every k from 3 to n-1.

    ``fit_frac`` is the window's share of the run measured from ``origin`` (the first
    logged step; default the first paired step).

    With ``predict_steps`` only points within that many steps after the k-th point's step
    are scored (windows with none are left out)."""
    n = len(H)
    origin = float(steps[0]) if origin is None or n == 0 else float(origin)
    ks = np.arange(min_points, n)
    if len(ks) == 0:
        return pd.DataFrame(columns=["fit_n", "fit_last_step", "fit_frac", "rmse_predicted",
                                     "final_error", "ceiling", "ceiling_lo", "ceiling_hi"])
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
    return out_df[later.any(axis=1)].reset_index(drop=True)
