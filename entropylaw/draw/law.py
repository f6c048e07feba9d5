"""Figures of the fitted law: score vs entropy (paper Figs. 1, 3, 4) and early prediction (Fig. 5).

:func:`plot_law` draws the paired points, the fitted curve (dashed where it extrapolates
towards H = 0), its confidence band (the mean curve) and prediction band (a new score),
the ceiling b - a with its interval, and a box with a, b, the ceiling, R², n and the fit's
trust flag, in the corner with the fewest points. A ceiling interval that leaves [0, 1]
for a score that is a fraction is flagged with a dagger (†).
:func:`plot_early` draws score vs training step: the fit window shaded, observed scores,
the prediction from the window's fit with its prediction band, RMSE on the plot.
:func:`plot_algorithms` draws the runs of several algorithms with one shared curve and one per
algorithm (paper Fig. 6), for :meth:`AlgorithmTest.plot` and the report's figure.
:meth:`entropylaw.fit.law.EntropyLawFit.plot` draws with :func:`draw_fit`: this module
imports matplotlib, numpy and the figure style only, never :mod:`entropylaw.fit` (the
builders that fit are in :mod:`entropylaw.figure_sets.law`).

>>> import numpy as np
>>> from entropylaw.fit.law import EntropyLawFit
>>> H = 0.05 + np.exp(-np.arange(40) / 8)
>>> R = 0.8 - 0.2 * np.exp(H) + 0.01 * np.sin(np.arange(40))
>>> ax = plot_law(H, R, EntropyLawFit().fit(H, R))
>>> ax.get_xlabel()
'policy entropy H (nats, token mean)'
>>> ceiling_text(0.9, (0.8, 1.02), fraction=True)
'0.900 [0.800, 1.020]†'
"""

from __future__ import annotations

import textwrap
from typing import Mapping

import numpy as np
import pandas as pd
from matplotlib.collections import PathCollection

from entropylaw.draw.style import (ENTROPY_LABEL, STEP_LABEL, check_ax, color as palette, fig_width, fit_text, fmt,
                                   fs, legend_below, new_axes, numbers_box, text_width)
from entropylaw.terminal import law_formula, wrap_words

# a form whose f(H) is 0 at H = 0 has its ceiling at b (entropylaw.fit.forms: not imported, a drawer imports no fit/)
_CEILING = {"linear": "b", "power": "b"}

OUT_OF_RANGE = "†"  # marks an interval that leaves [0, 1], the range of a fraction


TITLE_MARGIN = 60  # points left of the axes (the score's label and ticks) that a title starting there lacks


def set_title(ax, *parts: str) -> None:
    """``parts`` as the title of ``ax``, from its left edge: each part on its own line(s), a long
    run name broken at its separators (``_``, ``-``, ``/``) where it is wider than the figure
    (the layout moves the axes when it places the legend: the figure is what must hold it),
    never cut at the figure's edge."""
    ax.set_title(title_lines(ax, *parts), fontsize=fs("normal"), loc="left")


def title_lines(ax, *parts: str) -> str:
    """The lines of :func:`set_title`."""
    points, size = ax.figure.get_figwidth() * 72 - TITLE_MARGIN, fs("normal")
    chars = max(len(str(p)) for p in parts if p)
    lines = [str(p) for p in parts if p]
    while chars > 12 and max(text_width(line, size) for line in lines) > points:
        chars -= 2
        lines = [line for part in parts if part for line in wrap_words(str(part), chars)]
    return "\n".join(lines)


def score_label(fit=None) -> str:
    meta = getattr(fit, "meta_", {}) if fit is not None else {}
    key = meta.get("y_key")
    scores = getattr(fit, "R_", None)  # a reward in [-1, 1] is no fraction correct
    unit = "fraction correct" if scores is None or is_fraction(scores) else "score units"
    if not key:
        return f"validation score ({unit})"
    if meta.get("score_kind") == "training score":
        return f"training score: {key} (mean reward)"
    return f"score: {key} ({unit})"


def score_axis_label(rows) -> str:
    """The score axis of several runs' rows (``score_kind``, ``fraction``): validation, training
    or either; a fraction where every run's score is one, else in the score's units."""
    kinds = {r.get("score_kind") for r in rows if r.get("score_kind")}
    unit = "fraction" if all(r.get("fraction", True) for r in rows) else "score units"
    if kinds == {"validation"}:
        return f"validation score ({unit})"
    if kinds == {"training score"}:
        return "training score (reward)"
    return f"score ({unit})"


def _ci_text(value, ci, digits: int = 3) -> str:
    return f"{fmt(value, digits)} [{fmt(ci[0], digits)}, {fmt(ci[1], digits)}]"


def leaves_fraction(ci) -> bool:
    """An interval that reaches below 0 or above 1."""
    return bool(ci is not None and len(ci) == 2 and (ci[0] < 0 or ci[1] > 1))


def ceiling_text(value, ci, fraction: bool = True, digits: int = 3) -> str:
    """``value [lo, hi]``, with † when the score is a fraction and the interval leaves [0, 1]."""
    return _ci_text(value, ci, digits) + (OUT_OF_RANGE if fraction and leaves_fraction(ci) else "")


def is_fraction(R) -> bool:
    R = np.asarray(R, float)
    R = R[np.isfinite(R)]
    return bool(len(R)) and R.min() >= 0.0 and R.max() <= 1.0


FRACTION_LIMITS = (-0.05, 1.05)


def score_ylim(data, curve=(), pad=0.05):
    """y limits for a score axis: the observed scores and the fitted values, padded.

    Bands are left out on purpose: an early window or a short noisy run has a band far
    wider than its data, which would squash the points into a thin strip (the band is
    still drawn, only cut at the axes). A score whose observed values all lie in [0, 1]
    reads as a fraction: padded by ``pad`` and kept within [-0.05, 1.05]. Any other
    score is padded by ``pad`` times its range.

    >>> [round(v, 3) for v in score_ylim([0.6, 0.7], curve=[0.65, 1.4])]
    [0.55, 1.05]
    >>> [round(v, 3) for v in score_ylim([2.0, 4.0])]
    [1.9, 4.1]
    """
    data = np.asarray(data, float).ravel()
    data = data[np.isfinite(data)]
    both = np.concatenate([data, np.asarray(curve, float).ravel()])
    both = both[np.isfinite(both)]
    if not len(both):
        return FRACTION_LIMITS
    lo, hi = float(both.min()), float(both.max())
    fraction = len(data) > 0 and data.min() >= 0.0 and data.max() <= 1.0
    if fraction:
        return max(lo - pad, FRACTION_LIMITS[0]), min(hi + pad, FRACTION_LIMITS[1])
    margin = pad * max(hi - lo, 1e-3 * max(abs(lo), abs(hi), 1.0))
    return lo - margin, hi + margin


def plot_law(H, R, fit, ax=None, label=None, color=None, numbers=True, bands="both", marker="o", ls="-",
             curve=True):
    """Score vs entropy with the fit, its bands and the ceiling; returns the axes.

    ``bands``: "both" (confidence and prediction), "confidence" (for several runs on one
    axes, where a wide prediction band would hide the others) or "none". ``curve=False``
    draws the points only (a run the law does not describe: no curve, no ceiling).
    """
    if bands not in ("both", "confidence", "none"):
        raise ValueError(f"bands must be 'both', 'confidence' or 'none' (got {bands!r})")
    fig, ax = new_axes(ax)
    c = color or palette(0)
    H, R = np.asarray(H, float), np.asarray(R, float)
    pct = int(round(100 * fit.conf))
    ax.scatter(H, R, s=14, color=c if curve else "none", edgecolors=c, linewidths=0.8, marker=marker, alpha=0.85,
               zorder=3, label=label or "paired points")
    grid = np.linspace(0.0, H.max() * 1.04, 200)
    inside = grid >= H.min()
    mean = fit.predict(grid)
    if curve:
        plo, phi = fit.prediction_band(grid)
        clo, chi = fit.confidence_band(grid)
        if bands == "both":
            ax.fill_between(grid, plo, phi, color=c, alpha=0.10, lw=0, label=f"{pct} % prediction band")
        if bands != "none":
            ax.fill_between(grid, clo, chi, color=c, alpha=0.30 if bands == "both" else 0.18, lw=0,
                            label=f"{pct} % confidence band")
        ax.plot(grid[inside], mean[inside], color=c, lw=1.6, ls=ls,
                label="fit R = -a exp(H) + b" if fit.form == "exp" else f"fit ({fit.form})")
        ax.plot(grid[~inside], mean[~inside], color=c, lw=1.2, ls="--", label="extrapolation to H = 0")
        ax.axhline(fit.ceiling_, color=c, lw=0.8, ls=":",
                   label=f"ceiling {_CEILING.get(fit.form, 'b - a')} = {fmt(fit.ceiling_)}")
        lo, hi = fit.ceiling_ci_
        ax.errorbar([0.0], [fit.ceiling_], yerr=[[fit.ceiling_ - lo], [hi - fit.ceiling_]], fmt="D", color=c,
                    ms=4.5, capsize=3, zorder=4)
    # several runs may share the axes: span every scattered point, not just this run's
    # (set_xlim freezes autoscaling, so later runs would otherwise fall off the right edge)
    points = [o.get_offsets() for o in ax.collections if isinstance(o, PathCollection) and len(o.get_offsets())]
    hmax = max([H.max()] + [float(np.nanmax(o[:, 0])) for o in points])
    ax.set_xlim(-0.02 * hmax, 1.04 * hmax)
    # y: every run's points, fitted curves and ceilings on these axes (not the bands)
    if curve:
        ax._entropylaw_curves = getattr(ax, "_entropylaw_curves", []) + [mean, [fit.ceiling_]]
    curves = getattr(ax, "_entropylaw_curves", [])
    ax.set_ylim(*score_ylim(np.concatenate([o[:, 1] for o in points]),
                            np.concatenate(curves) if curves else ()))
    ax.set_xlabel(ENTROPY_LABEL)
    ax.set_ylabel(score_label(fit))
    if numbers:
        ceiling = ceiling_text(fit.ceiling_, fit.ceiling_ci_, is_fraction(R))
        box = {"a": _ci_text(fit.a_, fit.a_ci_), "b": _ci_text(fit.b_, fit.b_ci_), "ceiling": ceiling,
               "R²": fit.r2_, "n": str(fit.n_)}
        trust = getattr(fit, "trust_", None)
        if trust:  # the verdict sits next to the number it qualifies
            box["trust"] = trust
        if ceiling.endswith(OUT_OF_RANGE):
            box[OUT_OF_RANGE] = "interval leaves [0, 1]"
        numbers_box(ax, box, loc="best")
        # under the plot: where every corner covers points, the numbers go right of the axes, where a
        # legend beside them sat under the box
        legend_below(ax, ncol=2)
    return ax


def plot_fit(fit, ax=None, label=None, color=None, steps=None):
    """:func:`plot_law` of the points the fit was made on; returns the figure."""
    ax = plot_law(fit.H_, fit.R_, fit, ax=ax, label=label or "paired scores", color=color)
    run = getattr(fit, "run_id_", None)
    if run and not (ax.get_title() or ax.get_title(loc="left")):
        set_title(ax, f"{run}:", "R = -a·exp(H) + b" if fit.form == "exp" else f"{fit.form} form")
    return ax.figure


def draw_fit(fit, ax=None, **kwargs):
    """:meth:`EntropyLawFit.plot`: :func:`plot_fit` on ``ax``, returning the axes."""
    fig = plot_fit(fit, ax=ax, **kwargs)
    return ax if ax is not None else fig.axes[0]


def plot_early(pairs, early, ax=None, label=None, color=None, numbers=True, legend=True, marker="o"):
    """Early-stage prediction vs step; ``pairs`` may be None (uses ``early.predicted_``). Returns the figure.

    ``numbers=False`` leaves out the box (RMSE, final scores, ceiling): small multiples
    write them in each panel's title; ``legend=False`` leaves the legend to the caller.
    """
    fig, ax = new_axes(ax)
    c = color or palette(0)
    p = early.predicted_
    fit_pts, later = p[p["in_fit"]], p[~p["in_fit"]]
    first = float(p["step"].min())
    ax.axvspan(first, early.window_end_, color="0.85", alpha=0.6, lw=0,
               label=f"fit window (steps <= {early.fit_last_step_}, {early.fit_n_} points)")
    ax.fill_between(p["step"], p["pred_lo"], p["pred_hi"], color=c, alpha=0.15, lw=0,
                    label=f"{int(round(100 * early.conf))} % prediction band")
    ax.plot(p["step"], p["R_pred"], color=c, lw=1.4, label="predicted from entropy")
    ax.scatter(fit_pts["step"], fit_pts["R"], s=12, color=c, marker=marker, zorder=3, label="observed (fitted)")
    scored = later[later["scored"]] if "scored" in later else later
    ax.scatter(scored["step"], scored["R"], s=12, facecolors="white", edgecolors=c, marker=marker, zorder=3,
               label="observed (predicted)")
    horizon = getattr(early, "predict_steps", None)
    if horizon is not None:  # points past the horizon are drawn but not scored
        beyond = later[~later["scored"]]
        if len(beyond):
            ax.scatter(beyond["step"], beyond["R"], s=10, facecolors="white", edgecolors="0.6", zorder=2,
                       label="observed (after the horizon, not scored)")
        ax.axvline(early.window_end_ + horizon, color="0.4", lw=0.9, ls="--",
                   label=f"horizon: {horizon} steps after the window")
    ax.axhline(early.ceiling_, color=c, lw=0.9, ls=":", label=f"predicted ceiling {fmt(early.ceiling_)}")
    ax.set_xlabel(STEP_LABEL)
    ax.set_ylabel(score_label(early.fit_) if not hasattr(pairs, "attrs") else
                  f"score: {pairs.attrs.get('y_key', 'validation')} "
                  f"({'fraction correct' if is_fraction(p['R']) else 'score units'})")
    # keep the points readable when an early window gives a very wide band
    ax.set_ylim(*score_ylim(p["R"], np.append(p["R_pred"].to_numpy(), early.ceiling_)))
    if numbers:
        box = {"RMSE (predicted)": early.rmse_predicted_, "final observed": early.final_observed_,
               "final predicted": early.final_predicted_,
               "ceiling": ceiling_text(early.ceiling_, early.ceiling_ci_, is_fraction(p["R"]))}
        trust = getattr(early.fit_, "trust_", None)
        if trust:  # the window's verdict sits next to the ceiling it qualifies, as in the law's figure
            box["trust"] = trust
        numbers_box(ax, box, loc="best")
    if legend:  # under the plot: the numbers' box ("best" place) went over a legend beside it
        legend_below(ax, ncol=2)
    if label and not (ax.get_title() or ax.get_title(loc="left")):
        set_title(ax, str(label))
    return fig


MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
FIT_STYLES = ["--", ":", "-.", (0, (5, 1, 1, 1))]


def plot_algorithms(points: Mapping[str, pd.DataFrame], algorithm_of: Mapping[str, str],
                    shared_fit: Mapping[str, float], per_algorithm: Mapping[str, Mapping[str, float]] | None = None,
                    test: Mapping[str, object] | None = None, ax=None, score_label: str = "validation accuracy",
                    title: str | None = None, run_colors: Mapping[str, str] | None = None,
                    labels: Mapping[str, str] | None = None):
    """Scatter every run's (H, R) points, marker by algorithm, and draw the shared fit."""
    check_ax(ax)
    if ax is None:  # room under the plot for the legend: one line per run and per curve, the numbers
        n_lines = len(points) + len(per_algorithm or {}) + 5
        w = fig_width(1)
        fig, ax = new_axes(figsize=(w, 0.72 * w + n_lines * 1.45 * fs("small") / 72))
    algorithms = list(dict.fromkeys(algorithm_of.get(run, "?") or "?" for run in points))
    all_H = np.concatenate([np.asarray(p["H"], float) for p in points.values()] or [np.array([0.0, 1.0])])
    grid = np.linspace(max(0.0, all_H.min() * 0.9), all_H.max() * 1.05, 200)
    a, b = float(shared_fit["a"]), float(shared_fit["b"])
    ax.plot(grid, -a * np.exp(grid) + b, color="black", lw=2, label=f"shared fit: {law_formula(a, b, times='·', number=fmt)}")
    for k, (alg, fit) in enumerate((per_algorithm or {}).items()):
        ax.plot(grid, -float(fit["a"]) * np.exp(grid) + float(fit["b"]), ls=FIT_STYLES[k % len(FIT_STYLES)],
                color="0.4",
                lw=1.2, label=f"{alg} alone: a = {fmt(float(fit['a']))}, b = {fmt(float(fit['b']))}")
    for run, pts in points.items():
        alg = algorithm_of.get(run, "?") or "?"
        i = algorithms.index(alg)
        c = (run_colors or {}).get(run) or palette(i)
        ax.scatter(pts["H"], pts["R"], s=16, color=c, marker=MARKERS[i % len(MARKERS)], alpha=0.85,
                   label=f"{(labels or {}).get(run, run)} ({alg}, {len(pts)} points)", zorder=3)
    ax.set_xlabel(ENTROPY_LABEL)
    ax.set_ylabel(f"{score_label} (fraction)")
    ax.set_title(fit_text(title or f"One curve for {', '.join(algorithms)}?", ax.figure.get_figwidth() * 72 - 110,
                          fs("title")), fontsize=fs("title"))
    # the numbers head the legend under the plot: a box inside would cover points
    lines = [f"shared: a = {fmt(a)}, b = {fmt(b)}, ceiling b-a = {fmt(b - a)}"]
    if test:
        words = str(test.get("verdict") or "").split(" (F =")[0]  # F and p are written here already
        lines.append(f"F = {fmt(float(test.get('f_stat', float('nan'))))}, "
                     f"p = {fmt(float(test.get('p_value', float('nan'))))}" + (f": {words}" if words else ""))
        if test.get("note"):  # the verdict's caveat, under it
            lines.append(str(test["note"]))
    width = max(28, int(ax.figure.get_figwidth() * 72 / (0.55 * fs("small"))))
    legend_below(ax, ncol=1, title="\n".join(w for line in lines for w in textwrap.wrap(line, width)),
                 alignment="left")
    return ax
