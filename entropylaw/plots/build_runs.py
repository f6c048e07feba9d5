"""Builders for the figures made from run logs: the law (Figs. 1, 3, 4), consumption
(Fig. 2), early prediction (Fig. 5), algorithms (Fig. 6) and model size (Fig. 7).

They call :mod:`entropylaw.fit` for every number; the drawing is in the plot modules.
A run that cannot be fitted is left out with a warning, never silently.

>>> import numpy as np
>>> from entropylaw import table
>>> steps = np.arange(0, 60, 5)
>>> H = 1.2 * np.exp(-steps / 20) + 0.05
>>> recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
>>> recs += [(int(s), "val/mean", float(-0.1 * np.exp(h) + 0.7)) for s, h in zip(steps, H)]
>>> t = table.from_records(recs, run_id="r1", model="m")
>>> run_points(t, "r1")[["step", "H", "R"]].shape
(12, 3)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError
from entropylaw.fit.consumption import consumption
from entropylaw.fit.early import EarlyPrediction
from entropylaw.fit.law import fit_family
from entropylaw.fit.pairing import pair
from entropylaw.fit.run import fit_run
from entropylaw.plots.build_base import Built, Skipped, capture, metric_label, performance_metric, tag, usable_runs
from entropylaw.plots.consumption import plot_consumption
from entropylaw.plots.law import plot_early, plot_law
from entropylaw.plots.style import color, fmt, new_axes, new_grid

def run_points(t: pd.DataFrame, run_id: str, y: str | None = None) -> pd.DataFrame:
    """Paired (step, H, R) of one run through :func:`entropylaw.fit.pairing.pair`."""
    return pair(t, run_id, x="entropy", y=y or performance_metric(t, run_id))


def fit_pooled(pts_list: list[pd.DataFrame]):
    """One shared law for several runs (each run its own autocorrelated segment)."""
    return fit_family(pts_list)


def fitted_runs(t: pd.DataFrame, run_ids=None):
    """``{run_id: (points, fit)}`` for the runs that can be fitted (the one fit pipeline,
    :func:`entropylaw.fit.run.fit_run`), and the warnings raised."""
    out, notes = {}, []
    for run_id in run_ids or usable_runs(t):
        try:
            fit, caught = capture(lambda: fit_run(t, run_id))
        except EntropyLawError as err:
            notes.append(f"{run_id}: not fitted ({err})")
            continue
        # the fit both warns and keeps its warnings in warnings_: show each once
        notes += tag(run_id, caught or list(getattr(fit, "warnings_", [])))
        out[run_id] = (fit.pairs_, fit)
    return out, notes


def fit_dict(fit) -> dict:
    """The fit's numbers as plain floats (its ``to_dict()`` when it has one)."""
    d = dict(fit.to_dict()) if hasattr(fit, "to_dict") else {}
    for key in ("a", "b", "ceiling", "r2", "rmse", "n"):
        attr = f"{key}_"
        if key not in d and hasattr(fit, attr):
            d[key] = getattr(fit, attr)
    return d


def law_figures(t: pd.DataFrame, **_) -> list[Built]:
    """Figs. 1/3/4: score vs entropy with the fitted law, bands and ceiling, all runs."""
    fitted, notes = fitted_runs(t)
    if not fitted:
        raise Skipped("law: no run has enough paired entropy/score points to fit" + _why(notes))
    draw = _draw_law
    fig, ax = new_axes(figsize=(7.6, 5.4 + 0.4 * len(fitted)))
    handles, names = [], []
    for i, (run_id, (pts, fit)) in enumerate(fitted.items()):
        n_before = len(ax.collections)
        # several runs share the axes: confidence bands only (prediction bands are in fig03's panels)
        draw(pts, fit, ax=ax, label=run_id, color=color(i), numbers=False,
             bands="confidence" if len(fitted) > 1 else "both")
        handles.append(ax.collections[n_before])  # the run's scatter of paired points
        d = fit_dict(fit)
        lo, hi = d.get("ceiling_ci") or (float("nan"), float("nan"))
        names.append(f"{run_id}\na = {fmt(d['a'])}, b = {fmt(d['b'])}, ceiling = {fmt(d['ceiling'])} "
                     f"[{fmt(lo)}, {fmt(hi)}], R² = {fmt(d.get('r2', float('nan')))}, n = {d.get('n')}")
    leg = ax.get_legend()
    if leg is not None:
        leg.remove()
    fig.legend(handles, names, loc="outside lower center", ncol=1, fontsize=7.5)
    focus_ylim(ax, [pts["R"] for pts, _ in fitted.values()] + [[fit_dict(f)["ceiling"]] for _, f in fitted.values()])
    shaded = ("95 % confidence bands (prediction bands: one panel per run, fig03)" if len(fitted) > 1
              else "95 % confidence (dark) and prediction (light) bands")
    ax.text(0.01, 0.01, "line: fit · dashed: extrapolation to H = 0 · dotted: ceiling b - a\n"
            f"shaded: {shaded}",
            transform=ax.transAxes, ha="left", va="bottom", fontsize=7.5, color="0.3")
    metrics = {performance_metric(t, r) for r in fitted}
    ax.set_ylabel(metric_label(metrics.pop()) if len(metrics) == 1 else "validation score (fraction correct)")
    ax.set_title("Performance vs policy entropy: R = -a·exp(H) + b per run")
    built = [Built("fig01_law_all_runs", fig,
                   "Paired validation score vs policy entropy, one colour per run, with each run's fitted law, "
                   "95 % confidence and prediction bands and its ceiling b - a.", notes)]
    if len(fitted) > 1:
        n = len(fitted)
        ncols = min(3, n)
        grid, axes = new_grid((n + ncols - 1) // ncols, ncols)
        for i, (run_id, (pts, fit)) in enumerate(fitted.items()):
            ax = axes.flat[i]
            draw(pts, fit, ax=ax, label=run_id, color=color(i))
            focus_ylim(ax, [pts["R"], [fit_dict(fit)["ceiling"]]])
            ax.set_title(run_id, fontsize=9)
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
        grid.suptitle("One panel per run (paper Figs. 3-4)")
        built.append(Built("fig03_law_per_run", grid, "The same fits, one panel per run.", []))
    return built


def _draw_law(pts, fit, ax, label, color, numbers=True, bands="both"):
    """:func:`entropylaw.plots.law.plot_law` of one run's paired points and fit."""
    return plot_law(pts["H"].to_numpy(float), pts["R"].to_numpy(float), fit, ax=ax, label=label, color=color,
                    numbers=numbers, bands=bands)


def consumption_figure(t: pd.DataFrame, marks=(200, 800), **_) -> list[Built]:
    """Fig. 2: normalised entropy consumption and performance gain vs step."""
    runs, notes = {}, []
    for run_id in usable_runs(t):
        try:
            frame, caught = capture(consumption, t, run_id)
        except EntropyLawError as err:
            notes.append(f"{run_id}: no consumption curve ({err})")
            continue
        notes += tag(run_id, caught)
        if len(frame):
            runs[run_id] = frame
    if not runs:
        raise Skipped("consumption: no run has both entropy and score over steps" + _why(notes))
    stop = min(float(f["step"].max()) for f in runs.values())
    marks = [m for m in marks if m <= stop] or [round(stop / 12), round(stop / 3)]
    ax = plot_consumption(runs, marks=marks)
    return [Built("fig02_consumption", ax.figure,
                  f"Share of each run's total entropy drop and score gain reached by each step ({len(runs)} runs); "
                  "the paper reports 73 % / 76 % by step 200 and 94 % / 93 % by step 800 of 2400.", notes)]


def early_figures(t: pd.DataFrame, fit_frac: float = 0.15, fit_steps: int | None = None, **_) -> list[Built]:
    """Fig. 5: fit on the early steps, predict the rest; RMSE on the plot."""
    results, notes = {}, []
    for run_id in usable_runs(t):
        try:
            pts = run_points(t, run_id)
            kwargs = {"fit_steps": fit_steps} if fit_steps else {"fit_frac": fit_frac}
            pred, caught = capture(lambda: EarlyPrediction(**kwargs).fit(pts))
        except EntropyLawError as err:
            notes.append(f"{run_id}: no early prediction ({err})")
            continue
        notes += tag(run_id, caught)
        results[run_id] = (pts, pred)
    if not results:
        raise Skipped("early: no run has enough points for an early-stage prediction" + _why(notes))
    n = len(results)
    ncols = min(3, n)
    fig, axes = new_grid((n + ncols - 1) // ncols, ncols)
    handles = []
    for i, (run_id, (pts, pred)) in enumerate(results.items()):
        ax = axes.flat[i]
        plot_early(pts, pred, ax=ax, label=run_id, color=color(i))
        focus_ylim(ax, [pts["R"], [getattr(pred, "ceiling_", np.nan)]])
        window = f"fit on {getattr(pred, 'fit_n_', '?')} points, steps <= {getattr(pred, 'fit_last_step_', '?')}"
        ax.set_title(f"{run_id}\n({window})", fontsize=8.5)
        if i == 0 and ax.get_legend() is not None:
            handles = ax.get_legend().legend_handles
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if handles:
        generic = ["fit window", "95 % prediction band", "predicted from entropy", "observed (in the fit window)",
                   "observed (predicted)", "predicted ceiling b - a"]
        fig.legend(handles, generic[:len(handles)], loc="outside lower center", ncol=3, fontsize=8)
    what = f"the first {fit_steps} steps" if fit_steps else f"the first {100 * fit_frac:.0f} % of each run"
    fig.suptitle(f"Early-stage prediction: fit on {what}, predict the rest")
    return [Built("fig05_early_prediction", fig,
                  f"The law fitted on {what} (shaded) predicts the later scores; RMSE over the predicted steps "
                  "and the final-step error are written on each panel (paper: 0.9 % and 0.5 % for math).", notes)]


def focus_ylim(ax, value_lists, pad: float = 0.25) -> None:
    """Fit the y axis to the observed scores and ceilings, not to very wide bands.

    A run with few, noisy points has a prediction band far wider than its data; the
    band is still drawn, only cut at the axes.
    """
    values = np.concatenate([np.asarray(v, float).ravel() for v in value_lists])
    values = values[np.isfinite(values)]
    if not len(values):
        return
    lo, hi = values.min(), values.max()
    span = max(hi - lo, 0.02)
    ax.set_ylim(lo - pad * span, hi + pad * span)


def _why(notes) -> str:
    return f" ({'; '.join(notes[:3])})" if notes else ""
