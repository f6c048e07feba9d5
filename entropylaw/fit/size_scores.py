"""The final score vs model size: "what will 32B or 72B reach with this recipe?"

One recipe run at several sizes gives one final validation score per size (the runs of one
size are averaged: seeds are replicates). The score lives in a bounded range (an accuracy in
[0, 1]; a reward in [-1, 1] is mapped onto it), and every form is fitted where the bound
cannot be crossed (:mod:`entropylaw.fit.size_forms`: logit-linear, saturating, logit-ceiling).

**No form is chosen.** Five sizes cannot tell a score that keeps climbing from one that
bends towards a ceiling, and the choice is what decides a prediction two or five times
beyond the data. Every form with at least one held-out extrapolation (logit-linear from 3
sizes, the 3-parameter forms from 5) is combined, weighted by how well it predicted the
larger sizes from the smaller ones (forward chaining), and the interval is the mixture of
their predictive distributions, with a spread that grows with the distance beyond the
largest size fitted (:mod:`entropylaw.fit.size_spread`). With 3 sizes nothing is held out:
logit-linear alone, with the stated floor per decade. With 2 sizes: the line through them,
no interval (said).

>>> import numpy as np
>>> N = np.array([0.5e9, 1.5e9, 3e9, 7e9, 14e9])
>>> y = 1 / (1 + np.exp(-(0.4 + 1.2 * np.log10(N / 1e9)))) + np.array([0.004, -0.003, 0.0, 0.002, -0.002])
>>> law = FinalScoreLaw().fit(N, y)
>>> sorted(law.weights_)
['logit-ceiling', 'logit-linear', 'saturating']
>>> p = law.predict(72e9)
>>> 0.0 < p["final_score_lo"] < p["final_score"] < p["final_score_hi"] < 1.0
True
"""

from __future__ import annotations

import numpy as np

from entropylaw.errors import EntropyLawError
from entropylaw.fit.logit import from_logit, to_logit
from entropylaw.fit.size_forms import FORMS, eval_form, fit_form
from entropylaw.fit.size_spread import (FLOOR_PER_DECADE, FLOOR_SOURCE, MIN_FIT, form_weights, forward_chain,
                                        fitted, measured_per_decade, mixture_quantile, noise_sd, spread)
from entropylaw.fit.size_text import law_dict, law_report, size_text
from entropylaw.terminal import count

# kept importable under their former names
_fit_form, _eval, _size_text = fit_form, eval_form, size_text
MIN_INTERVAL_SIZES = 3
EDGE = 0.005  # a score within 0.5 % of the range's ends is fitted as if there


class FinalScoreLaw:
    """The final score as a function of ``log10 N`` (module docstring), scikit-learn style."""

    def __init__(self, conf=0.9, forms=FORMS, floor=FLOOR_PER_DECADE):
        self.conf = conf
        self.forms = tuple(forms)
        self.floor = float(floor)

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
                                  f"{len(sizes)} ({size_text(sizes[0])})")
        # the runs of one size are replicates of one point
        self.sizes_ = sizes
        self.scores_ = np.array([y[N == s].mean() for s in sizes])
        # a score at a bound has no logit of its own (the clipping constant would set it): held EDGE inside
        lo, hi = self.bounds_
        fit_y = np.clip(self.scores_, lo + EDGE * (hi - lo), hi - EDGE * (hi - lo))
        self.at_bound_ = int(np.sum(fit_y != self.scores_))
        self.n_runs_ = np.array([int((N == s).sum()) for s in sizes])
        self.u_ = np.log10(sizes)
        n = len(sizes)
        self.params_, self.excluded_, self.leverage_ = {}, {}, {}
        for form in self.forms:
            need = MIN_FIT[form] + 1 if form != "logit-linear" else 2
            if n < need:
                self.excluded_[form] = f"needs {need} sizes ({need - 1} to fit, one to test it on)"
                continue
            try:
                self.params_[form], self.leverage_[form] = fitted(form, self.u_, fit_y, self.bounds_)
            except EntropyLawError as err:
                self.excluded_[form] = str(err)
        self.combined_ = [f for f in self.forms if f in self.params_]
        if not self.combined_:
            raise EntropyLawError(f"no size-law form fits these scores ({'; '.join(self.excluded_.values())})")
        self.interval_ = n >= MIN_INTERVAL_SIZES
        self.forward_ = forward_chain(self.combined_, self.u_, fit_y, self.bounds_) if self.interval_ else []
        self.df_ = max(2, n - 2)
        self.noise_ = noise_sd(self.u_, fit_y, self.bounds_) if self.interval_ else None
        self.per_decade_measured_ = ({f: measured_per_decade(self.forward_, f, self.noise_) for f in self.combined_}
                                     if self.interval_ else {})
        self.per_decade_ = {f: max(self.floor, self.per_decade_measured_.get(f) or 0.0) for f in self.combined_}
        if self.interval_:
            self.weights_, self.scored_pairs_ = form_weights(self.forward_, self.combined_, self.noise_,
                                                             self.per_decade_, self.df_)
        else:
            self.weights_, self.scored_pairs_ = {f: 1.0 / len(self.combined_) for f in self.combined_}, []
        self.form_ = self.combined_[0] if len(self.combined_) == 1 else "mixture"
        self._backtest = None
        return self

    def distance(self, n_params) -> float:
        """Decades beyond the sizes fitted (above the largest or below the smallest; 0 inside)."""
        u0 = float(np.log10(float(n_params)))
        return float(max(u0 - self.u_.max(), self.u_.min() - u0, 0.0))

    def predict(self, n_params) -> dict:
        """The score at size ``n_params`` with its ``conf`` interval (None without one)."""
        N = float(n_params)
        u0 = float(np.log10(N))
        d = self.distance(N)
        by_form = {f: float(eval_form(f, self.params_[f], u0, self.bounds_)) for f in self.combined_}
        z = np.array([to_logit(v, self.bounds_) for v in by_form.values()], float)
        w = np.array([self.weights_[f] for f in by_form])
        what = self.what
        out = {"n_params": N, what: None, f"{what}_lo": None, f"{what}_hi": None, "form": self.form_,
               "distance_decades": d, "spread_logit": None,
               "forms": {f: {"weight": self.weights_[f], what: v} for f, v in by_form.items()}}
        if self.interval_:
            sd = np.array([spread(d, self.noise_, self.per_decade_[f], self.leverage_[f](u0)) for f in by_form])
            lo_q, hi_q = (1 - self.conf) / 2, (1 + self.conf) / 2
            out[what] = float(from_logit(mixture_quantile(z, w, sd, self.df_, 0.5), self.bounds_))
            out[f"{what}_lo"] = float(from_logit(mixture_quantile(z, w, sd, self.df_, lo_q), self.bounds_))
            out[f"{what}_hi"] = float(from_logit(mixture_quantile(z, w, sd, self.df_, hi_q), self.bounds_))
            out["spread_logit"] = {f: float(v) for f, v in zip(by_form, sd)}
        else:
            out[what] = float(from_logit(float(np.dot(w, z)), self.bounds_))
        notes = []
        if N < self.sizes_.min():
            notes.append(f"{d:.2f} decades below the smallest size fitted ({size_text(self.sizes_.min())}): "
                         "an extrapolation downward")
        elif N > self.sizes_.max():
            notes.append(f"{_times(N / self.sizes_.max())}x the largest size fitted ({size_text(self.sizes_.max())}), "
                         f"{d:.2f} decades: an extrapolation")
        if self.at_bound_:
            verb = "scores" if self.at_bound_ == 1 else "score"
            notes.append(f"{count(self.at_bound_, 'size')} {verb} at the range's "
                         f"end, fitted as {100 * EDGE:g} % inside it")
        if self.params_.get("logit-linear", {}).get("beta", 0.0) < 0:
            notes.append("the score falls as the size grows")
        if not self.interval_:
            notes.append(f"no interval: {len(self.sizes_)} sizes leave no noise to measure (needs "
                         f"{MIN_INTERVAL_SIZES})")
        out["note"] = "; ".join(notes) or None
        return out

    def curve(self, grid) -> dict:
        """Predictions on a grid of sizes: ``{"n_params", what, lo, hi}`` arrays."""
        rows = [self.predict(n) for n in grid]
        return {k: np.array([np.nan if r[k] is None else r[k] for r in rows], float)
                for k in ("n_params", self.what, f"{self.what}_lo", f"{self.what}_hi")}

    def backtest(self) -> list[dict]:
        """The whole rule run on the smallest ``k`` sizes (``k`` >= 3), predicting each larger one:
        ``{"fitted", "target", "n_params", "distance", "predicted", "lo", "hi", "observed", "covered"}``."""
        if self._backtest is None:
            rows = []
            for k in range(MIN_INTERVAL_SIZES, len(self.sizes_)):
                sub = FinalScoreLaw(self.conf, self.forms, self.floor).fit(
                    self.sizes_[:k], self.scores_[:k], bounds=self.bounds_, what=self.what)
                for j in range(k, len(self.sizes_)):
                    p = sub.predict(self.sizes_[j])
                    lo, hi = p[f"{self.what}_lo"], p[f"{self.what}_hi"]
                    rows.append({"fitted": k, "target": j, "n_params": float(self.sizes_[j]),
                                 "distance": p["distance_decades"], "predicted": p[self.what], "lo": lo, "hi": hi,
                                 "observed": float(self.scores_[j]), "covered": bool(lo <= self.scores_[j] <= hi)})
            self._backtest = rows
        return self._backtest

    def combination(self) -> str:
        """The forms and their weights in a few words: ``logit-linear 20 %, saturating 58 %, ...``."""
        if len(self.combined_) == 1:
            return f"{self.combined_[0]} alone"
        return ", ".join(f"{f} {100 * self.weights_[f]:.0f} %" for f in self.combined_)

    def rule(self) -> str:
        """How the forms were combined and the spread made, in one paragraph."""
        if not self.interval_:
            return (f"{len(self.sizes_)} sizes: the logit-linear line through them; no interval "
                    f"(needs {MIN_INTERVAL_SIZES} sizes)")
        how = ("weighted by their t predictive density at the sizes forward chaining held out"
               if self.scored_pairs_ else "one form: nothing to weigh" if len(self.combined_) == 1
               else "equal weights: no size held out that every form predicted")
        per = "; ".join(f"{f} {self.per_decade_[f]:.3f}" + (" (the floor)" if self.per_decade_[f] == self.floor else "")
                        for f in self.combined_)
        return (f"forms {', '.join(self.combined_)} combined, {how}; interval: the mixture of their t "
                f"distributions ({self.df_} df), each with sd(d) = sqrt(s0^2 (1 + leverage) + (s1 d)^2) on the logit "
                f"scale, d = decades beyond the sizes fitted, s0 = {self.noise_:.3f} (the logit-linear residual sd), "
                f"leverage: how much the form's fit moves at that size per unit of noise; s1 per decade, measured by "
                f"forward chaining and never below {self.floor:g} ({FLOOR_SOURCE}): {per}")

    def to_dict(self) -> dict:
        return law_dict(self)

    def report(self) -> str:
        return law_report(self)


def _times(ratio: float) -> str:
    """A ratio to 2 digits, without an exponent (110, not 1.1e+02).

    >>> _times(2.37), _times(76.3), _times(113.0)
    ('2.4', '76', '113')
    """
    return f"{ratio:.2g}" if ratio < 100 else f"{ratio:.0f}"
