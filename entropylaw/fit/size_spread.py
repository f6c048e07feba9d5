"""How far a size law's prediction may miss: forward chaining, form weights, the spread.

Everything here is on the logit scale of the score, ``u = log10 N``.

**Forward chaining.** Each form is fitted to the smallest ``k`` sizes and predicts every
larger one, for every ``k`` from the form's minimum (``MIN_FIT``: 3 sizes for 2 parameters,
4 for 3) to ``n - 1``. Each held-out prediction gives an error ``e`` at a distance ``d``
(decades beyond the largest size fitted). This measures what extrapolation does; leaving
out an interior size would not.

**The spread** at ``d`` decades beyond the data is ``sd(d) = sqrt(s0^2 + (s1 d)^2)``:

- ``s0``: the noise of one size's score, the logit-linear fit's residual sd (``n - 2`` df;
  whatever bending the line misses counts as noise, which errs wide);
- ``s1``: the error per decade of extrapolation, ``sqrt(mean((e^2 - s0^2)+ / d^2))`` over each
  form's forward-chained errors (averaged per form, then over the forms), and never below
  ``FLOOR_PER_DECADE`` (see ``FLOOR_SOURCE``) so that two or three lucky held-out errors cannot
  make the interval thin. With 3 sizes there is no held-out error and the floor is used alone.

**Form weights** (pseudo-Bayesian model averaging on held-out predictions, Geisser & Eddy
1979; Yao et al. 2018): each form's weight is proportional to the product of its t predictive
densities at the forward-chained sizes every combined form predicted. A form that missed
by much more than the spread there loses its weight; forms the held-out sizes cannot tell
apart keep nearly equal weights, so their disagreement widens the interval.

**The interval** is the mixture of the forms' t distributions (``df = max(2, n - 2)``, heavy
tails for few sizes), each centred on its form's prediction with scale ``sd(d)``; the
prediction is the mixture's median. Mapped back from the logit scale it stays in the range.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

from entropylaw.errors import EntropyLawError
from entropylaw.fit.logit import from_logit, to_logit
from entropylaw.fit.size_forms import N_PARAMS, eval_form, fit_form

MIN_FIT = {f: k + 1 for f, k in N_PARAMS.items()}  # sizes a forward-chained fit needs: one spare
FLOOR_PER_DECADE = 0.25
STEP = 0.05  # logit nudge of one score when measuring a fit's leverage
FLOOR_SOURCE = ("published extrapolations of downstream accuracy over about one decade of model size miss by "
                "about 4 points on average (Bhagia et al. 2024, arXiv 2412.04403: 8 tasks, 4 within 2 points, "
                "the other 4 by 6.9 on average), about 0.2 on the logit scale at accuracies of 0.6-0.8; "
                "a normal's sd is 1.25 times its mean |error|")


def fitted(form, u, y, bounds) -> tuple[dict, callable]:
    """``(params, leverage)`` of ``form`` on sizes ``u``: ``leverage(u0)`` is how much the fitted
    logit at ``u0`` moves per unit of noise in the fitted scores (``sum_i (dz0/dz_i)^2``, a line's
    ``1/k + (u0 - mean u)^2 / Sxx``), by refitting with each score's logit moved by ``+/- STEP``."""
    p = fit_form(form, u, y, bounds)
    if form == "logit-linear":
        return p, lambda u0: line_leverage(u, u0)
    z = to_logit(y, bounds)
    moved = []
    for i in range(len(u)):
        try:
            pair = [fit_form(form, u, from_logit(z + sign * STEP * (np.arange(len(u)) == i), bounds), bounds)
                    for sign in (1, -1)]
        except EntropyLawError:  # a nudge the form cannot take (a score pushed onto the top): not counted
            continue
        moved.append(pair)

    def lev(u0):
        return float(sum(((to_logit(eval_form(form, up, u0, bounds), bounds)
                           - to_logit(eval_form(form, dn, u0, bounds), bounds)) / (2 * STEP)) ** 2
                         for up, dn in moved))
    return p, lev


def line_leverage(u_fit, u0) -> float:
    u_fit = np.asarray(u_fit, float)
    return float(1 / len(u_fit) + (u0 - u_fit.mean()) ** 2 / np.sum((u_fit - u_fit.mean()) ** 2))


def forward_chain(forms, u, y, bounds) -> list[dict]:
    """Every forward-chained prediction of every form: ``{"form", "fitted", "target", "distance",
    "predicted", "logit_error", "leverage"}`` (``fitted``: how many of the smallest sizes were
    fitted; ``target``: the index of the size predicted). A fit that fails is skipped."""
    rows = []
    n = len(u)
    for form in forms:
        for k in range(MIN_FIT[form], n):
            try:
                p, lev = fitted(form, u[:k], y[:k], bounds)
            except EntropyLawError:
                continue
            for j in range(k, n):
                yhat = float(eval_form(form, p, u[j], bounds))
                rows.append({"form": form, "fitted": k, "target": j, "distance": float(u[j] - u[k - 1]),
                             "predicted": yhat, "leverage": lev(u[j]),
                             "logit_error": float(to_logit(yhat, bounds) - to_logit(y[j], bounds))})
    return rows


def noise_sd(u, y, bounds) -> float:
    """``s0``: the logit-linear fit's residual sd with ``n - 2`` degrees of freedom (n >= 3)."""
    z = to_logit(y, bounds)
    resid = z - np.polyval(np.polyfit(u, z, 1), u)
    return float(np.sqrt(np.sum(resid ** 2) / (len(u) - 2)))


def measured_per_decade(rows, form, s0) -> float | None:
    """``s1`` of ``form`` measured from its forward-chained errors (None without any): what the
    errors hold beyond the noise the same fit shows there (``s0^2 (1 + leverage)``)."""
    own = [r for r in rows if r["form"] == form]
    if not own:
        return None
    excess = np.mean([(r["logit_error"] ** 2 - s0 ** 2 * (1 + r["leverage"])) / r["distance"] ** 2 for r in own])
    return float(np.sqrt(max(excess, 0.0)))


def spread(distance, s0, s1, lev=0.0) -> float:
    return float(np.sqrt(s0 ** 2 * (1 + lev) + (s1 * distance) ** 2))


def form_weights(rows, forms, s0, s1, df) -> tuple[dict, list]:
    """``({form: weight}, the (fitted, target) pairs they were scored on)``: each form's held-out
    t log density (its own spread ``s1[form]``), summed over the pairs every form predicted;
    equal weights without any."""
    pairs = sorted(set.intersection(*({(r["fitted"], r["target"]) for r in rows if r["form"] == f} for f in forms))
                   ) if forms else []
    if len(forms) < 2 or not pairs:
        return {f: 1.0 / len(forms) for f in forms}, pairs
    score = {}
    for f in forms:
        own = {(r["fitted"], r["target"]): r for r in rows if r["form"] == f}
        sd = {q: spread(own[q]["distance"], s0, s1[f], own[q]["leverage"]) for q in pairs}
        score[f] = sum(_t_logpdf(own[q]["logit_error"] / sd[q], df) - np.log(sd[q]) for q in pairs)
    top = max(score.values())
    raw = {f: float(np.exp(v - top)) for f, v in score.items()}
    total = sum(raw.values())
    return {f: w / total for f, w in raw.items()}, pairs


def _t_logpdf(x, df):
    return float(special.gammaln((df + 1) / 2) - special.gammaln(df / 2) - 0.5 * np.log(df * np.pi)
                 - (df + 1) / 2 * np.log1p(x * x / df))


def mixture_quantile(centres, weights, scales, df, q) -> float:
    """The ``q`` quantile of ``sum_f w_f * t_df(centre_f, scale_f)``."""
    c = np.asarray(centres, float)
    w = np.asarray(weights, float)
    sc = np.broadcast_to(np.asarray(scales, float), c.shape)
    if not (sc > 0).all():  # no spread at all: the weighted median of the centres
        order = np.argsort(c)
        return float(c[order][min(np.searchsorted(np.cumsum(w[order]), q * w.sum()), len(c) - 1)])

    def cdf(z):
        return float(np.dot(w, special.stdtr(df, (z - c) / sc))) - q

    half = float(special.stdtrit(df, max(q, 1 - q))) * sc.max() + 1e-12
    return float(optimize.brentq(cdf, c.min() - half, c.max() + half, xtol=1e-10))
