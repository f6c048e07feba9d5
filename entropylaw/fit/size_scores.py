"""The final score vs model size: "what will 32B or 72B reach with this recipe?"

One recipe run at several sizes gives one final validation score per size (the runs of one
size are averaged: seeds are replicates). The score lives in a bounded range (an accuracy in
[0, 1]; a reward in [-1, 1] is mapped onto it), so every form is fitted where the bound
cannot be crossed:

- ``logit-linear``: ``logit(y) = alpha + beta * log10 N`` (2 parameters, >= 3 sizes);
- ``saturating``: ``y = C - B * N^-gamma`` with ``C`` at most the range's top, ``B, gamma > 0``
  (3 parameters, >= 4 sizes): the score approaches a ceiling of its own.

**The rule, fixed in advance:** each form is refitted without each size in turn and predicts
it (leave one size out); the form with the lowest mean absolute error on the score's scale
wins, and a form within 0.5 points of it that is simpler wins instead.

**Intervals:** on the logit scale, ``t(0.95, n - 1) * rmse_loso * sqrt(1 + 1/n + (u - mean u)^2 / Sxx)``
around the prediction, ``u = log10 N``: the leave-one-size-out error measures how far the
form misses a size it has not seen, and the last factor widens it the further the size lies
from the fitted ones, as a regression's prediction interval does. Mapped back, the interval
stays inside the score's range. With fewer than 3 sizes there is no held-out error and no
interval (said).

>>> import numpy as np
>>> N = np.array([0.5e9, 1.5e9, 3e9, 7e9, 14e9])
>>> y = 1 / (1 + np.exp(-(0.4 + 1.2 * np.log10(N / 1e9)))) + np.array([0.004, -0.003, 0.0, 0.002, -0.002])
>>> law = FinalScoreLaw().fit(N, y)
>>> law.form_
'logit-linear'
>>> p = law.predict(72e9)
>>> 0.0 < p["final_score_lo"] < p["final_score"] < p["final_score_hi"] < 1.0
True
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.calibrate import from_logit, to_logit

FORMS = ("logit-linear", "saturating")  # simpler first: a tie goes to the earlier one
MIN_SIZES = {"logit-linear": 2, "saturating": 4}
TIE_POINTS = 0.5  # points (score x 100): closer than this, the simpler form is kept


def _fit_form(form, u, y, bounds):
    """Parameters of ``form`` fitted to sizes ``u = log10 N`` and scores ``y``."""
    if form == "logit-linear":
        z = to_logit(y, bounds)
        if len(np.unique(u)) < 2:
            raise EntropyLawError("needs 2 sizes")
        slope, icpt = np.polyfit(u, z, 1)
        return {"alpha": float(icpt), "beta": float(slope)}
    # saturating: y = C - B 10^(-gamma u); C <= top, B > 0, gamma > 0. Profile over gamma, the
    # column measured from the sizes' mean (10^(-gamma u) itself underflows lstsq's rank test
    # once gamma u passes ~15: it would drop the column and return B = 0)
    top = bounds[1]
    ubar = float(np.mean(u))

    def solve(gamma):
        x = 10 ** (-gamma * (u - ubar))
        X = np.stack([np.ones_like(x), -x], axis=1)
        (C, B), *_ = np.linalg.lstsq(X, y, rcond=None)
        if C > top:  # the ceiling at the range's top: B alone
            C = top
            B = float(np.dot(x, top - y) / max(np.dot(x, x), 1e-300))
        B = max(B, 0.0)
        return C, B, float(np.sum((y - (C - B * x)) ** 2))

    grid = np.linspace(0.02, 3.0, 150)
    g0 = grid[int(np.argmin([solve(g)[2] for g in grid]))]
    res = optimize.minimize_scalar(lambda g: solve(g)[2], bounds=(max(0.01, g0 - 0.03), g0 + 0.03), method="bounded")
    gamma = float(res.x if res.fun <= solve(g0)[2] else g0)
    C, B, _ = solve(gamma)
    return {"C": float(C), "B": float(B * 10 ** (gamma * ubar)), "gamma": gamma}


def _eval(form, p, u, bounds):
    u = np.asarray(u, float)
    if form == "logit-linear":
        return from_logit(p["alpha"] + p["beta"] * u, bounds)
    return np.clip(p["C"] - p["B"] * 10 ** (-p["gamma"] * u), *bounds)


class FinalScoreLaw:
    """The final score as a function of ``log10 N`` (module docstring), scikit-learn style."""

    def __init__(self, conf=0.9, forms=FORMS):
        self.conf = conf
        self.forms = tuple(forms)

    def fit(self, n_params, scores, labels=None, bounds=(0.0, 1.0), what="final_score"):
        N = np.asarray(n_params, float)
        y = np.asarray(scores, float)
        if N.shape != y.shape or not len(N):
            raise EntropyLawError("one parameter count and one score per run")
        if not (np.isfinite(N).all() and (N > 0).all()):
            raise EntropyLawError("a run has no known parameter count (give it with `params` N, or a model "
                                  "name with a size such as 7B)")
        if not np.isfinite(y).all():
            raise EntropyLawError("a run has no finite final score")
        self.what, self.bounds_ = what, tuple(bounds)
        self.labels_ = list(labels) if labels is not None else [str(i) for i in range(len(N))]
        sizes = np.unique(N)
        if len(sizes) < 2:
            raise EntropyLawError(f"the final-score law needs at least 2 model sizes; the runs have "
                                  f"{len(sizes)} ({_size_text(sizes[0])})")
        # the runs of one size are replicates of one point
        self.sizes_ = sizes
        self.scores_ = np.array([y[N == s].mean() for s in sizes])
        self.n_runs_ = np.array([int((N == s).sum()) for s in sizes])
        self.u_ = np.log10(sizes)
        self.loso_ = {}
        for form in self.forms:
            if len(sizes) < MIN_SIZES[form] + 1:  # leave one out still needs enough to fit
                continue
            self.loso_[form] = self._loso(form)
        if self.loso_:
            err = {f: float(np.mean(np.abs(v["error"]))) for f, v in self.loso_.items()}
            best = min(err.values())
            self.form_ = next(f for f in self.forms if f in err and err[f] <= best + TIE_POINTS / 100)
            self.loso_error_ = err
        else:  # 2 sizes: the line through them, no held-out error
            self.form_, self.loso_error_ = "logit-linear", {}
        self.params_ = _fit_form(self.form_, self.u_, self.scores_, self.bounds_)
        self.rmse_logit_ = (float(np.sqrt(np.mean(self.loso_[self.form_]["logit_error"] ** 2)))
                            if self.form_ in self.loso_ else None)
        return self

    def _loso(self, form):
        pred, err, zerr = [], [], []
        for i in range(len(self.sizes_)):
            keep = np.arange(len(self.sizes_)) != i
            p = _fit_form(form, self.u_[keep], self.scores_[keep], self.bounds_)
            yhat = float(_eval(form, p, self.u_[i], self.bounds_))
            pred.append(yhat)
            err.append(yhat - self.scores_[i])
            zerr.append(float(to_logit(yhat, self.bounds_) - to_logit(self.scores_[i], self.bounds_)))
        return {"predicted": np.array(pred), "error": np.array(err), "logit_error": np.array(zerr)}

    def predict(self, n_params) -> dict:
        """The score at size ``n_params`` with its ``conf`` interval (None without one)."""
        N = float(n_params)
        u0 = float(np.log10(N))
        mid = float(_eval(self.form_, self.params_, u0, self.bounds_))
        out = {"n_params": N, self.what: mid, f"{self.what}_lo": None, f"{self.what}_hi": None, "form": self.form_}
        if self.rmse_logit_ is not None:
            n = len(self.u_)
            sxx = float(np.sum((self.u_ - self.u_.mean()) ** 2))
            half = float(special.stdtrit(n - 1, 0.5 + self.conf / 2) * self.rmse_logit_
                         * np.sqrt(1 + 1 / n + (u0 - self.u_.mean()) ** 2 / sxx))
            z = to_logit(mid, self.bounds_)
            out[f"{self.what}_lo"] = float(from_logit(z - half, self.bounds_))
            out[f"{self.what}_hi"] = float(from_logit(z + half, self.bounds_))
        notes = []
        if N < self.sizes_.min():
            notes.append(f"below the smallest size fitted ({_size_text(self.sizes_.min())}): an extrapolation downward")
        elif N > self.sizes_.max():
            notes.append(f"{N / self.sizes_.max():.2g}x the largest size fitted ({_size_text(self.sizes_.max())}): "
                         "an extrapolation")
        if self.rmse_logit_ is None:
            notes.append(f"no interval: {len(self.sizes_)} sizes leave none out to measure the error (needs 3)")
        out["note"] = "; ".join(notes) or None
        return out

    def curve(self, grid) -> dict:
        """Predictions on a grid of sizes: ``{"n_params", what, lo, hi}`` arrays."""
        rows = [self.predict(n) for n in grid]
        return {k: np.array([np.nan if r[k] is None else r[k] for r in rows], float)
                for k in ("n_params", self.what, f"{self.what}_lo", f"{self.what}_hi")}

    def to_dict(self) -> dict:
        return {"what": self.what, "form": self.form_, "params": self.params_, "conf": self.conf,
                "bounds": list(self.bounds_), "rule": RULE,
                "sizes": [{"n_params": float(s), "score": float(v), "runs": int(k),
                           **{f"loso_{f}": float(d["predicted"][i]) for f, d in self.loso_.items()}}
                          for i, (s, v, k) in enumerate(zip(self.sizes_, self.scores_, self.n_runs_))],
                "loso_mean_abs_error": self.loso_error_}

    def report(self) -> str:
        lines = [f"{self.what.replace('_', ' ')} vs size: {self.form_} over {len(self.sizes_)} sizes "
                 f"({', '.join(_size_text(s) for s in self.sizes_)})"]
        for f, e in self.loso_error_.items():
            lines.append(f"  leave one size out, {f}: mean |error| {100 * e:.2f} points"
                         + ("  <- chosen" if f == self.form_ else ""))
        if not self.loso_error_:
            lines.append("  2 sizes: the line through them; no held-out error, no interval")
        return "\n".join(lines)


RULE = ("leave one size out; the lowest mean |error| on the score's scale wins, a simpler form within "
        f"{TIE_POINTS:g} points of it wins instead (order: {', '.join(FORMS)})")


def _size_text(n) -> str:
    n = float(n)
    return f"{n / 1e9:.3g}B" if n >= 1e9 else f"{n / 1e6:.3g}M"
