"""Builders for the figures over training: the forecast of each run's final score from
its first steps, the paper's early prediction (Fig. 5), and entropy consumed against
score gained (Fig. 2).

>>> import numpy as np
>>> from entropylaw import table
>>> steps = np.arange(0, 300, 10)
>>> H = 1.0 * np.exp(-steps / 60) + 0.1
>>> recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
>>> recs += [(int(s), "val/mean", float(0.8 - 0.2 * np.exp(h))) for s, h in zip(steps, H)]
>>> t = table.from_records(recs, run_id="r1", model="m")
>>> [b.name for b in consumption_figure(t) + forecast_figure(t, n_boot=20)]
['consumption_entropy_and_gain', 'forecast_final_score']
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

import entropylaw.table as tt
from entropylaw.errors import EntropyLawError
from entropylaw.fit.consumption import consumption
from entropylaw.fit.early import EarlyPrediction
from entropylaw.fit.forecast.catalog import METHODS
from entropylaw.plots.build_base import Built, Skipped, capture, tag
from entropylaw.plots.build_runs import panel_title, run_points
from entropylaw.plots.law import ceiling_text, is_fraction, plot_early
from entropylaw.plots.rows import forecast_rows, project_focus, summary_rows
from entropylaw.plots.style import STEP_LABEL, fig_width, fmt, fs, new_grid
from entropylaw.plots.summary import plot_forecasts

NOT_APPLICABLE = "law does not apply"


def forecast_figure(t: pd.DataFrame, fit_frac: float = 0.15, run_ids=None, n_boot: int = 200, **_) -> list[Built]:
    """Per run: the default method's forecast of the final score from the first ``fit_frac``
    of the run, the law's ceiling from the same steps, the final score observed later."""
    rows, notes = summary_rows(t, run_ids)
    frows, fnotes = forecast_rows(t, rows, fit_frac=fit_frac, n_boot=n_boot)
    if not any(np.isfinite(r.get("forecast", np.nan)) for r in frows):
        raise Skipped("forecast: no run could be forecast from its first steps" +
                      (f" ({frows[0].get('reason')})" if frows else ""))
    from collections import Counter

    method = Counter(r["method"] for r in frows if r.get("method")).most_common(1)[0][0]
    fallback = sorted({r["run_id"] for r in frows if r.get("method") not in (None, method)})
    ax = plot_forecasts(frows, method=method + (" (or the one its row names)" if fallback else ""),
                        title=f"Final score from the first {100 * fit_frac:.0f} %")
    return [Built("forecast_final_score", ax.figure,
                  f"For each run, the final score forecast from its first {100 * fit_frac:.0f} % of steps: the "
                  f"default method ({method}: {METHODS[method].description}; chosen by a rule fixed in advance on "
                  "the backtest of the real runs)"
                  + (f", or another where it cannot run or the score is a training score ({', '.join(fallback)})"
                     if fallback else "")
                  + " with its 90 % interval, the law's ceiling b - a fitted on the same "
                  "window's (entropy, score) pairs with its 90 % interval, and the final score the run reached. "
                  "Nothing after the window is used by either forecast.", notes + fnotes,
                  title=f"Forecast of the final score from the first {100 * fit_frac:.0f} % of each run")]


def early_figures(t: pd.DataFrame, fit_frac: float = 0.15, fit_steps: int | None = None, run_ids=None,
                  **_) -> list[Built]:
    """Fig. 5: fit on the early steps, predict the rest from the later entropy; one panel per run
    (in a project of many runs, the runs its report's first screen lists)."""
    run_ids, focus_note = project_focus(t, run_ids, fit_frac)
    rows, _ = summary_rows(t, run_ids)
    results, notes = {}, []
    left_out = []
    parts = tt.split_runs(t, [r["run_id"] for r in rows])
    for r in rows:
        if r["trust"] in ("not fitted", NOT_APPLICABLE):
            left_out.append(r["label"])
            continue
        try:
            pts = run_points(parts.get(r["run_id"], t), r["run_id"])
            kwargs = {"fit_steps": fit_steps} if fit_steps else {"fit_frac": fit_frac}
            pred, caught = capture(lambda: EarlyPrediction(**kwargs).fit(pts))
        except EntropyLawError as err:
            notes.append(f"{r['run_id']}: no early prediction ({err})")
            continue
        notes += tag(r["run_id"], caught)
        results[r["run_id"]] = (r, pts, pred)
    if not results:
        raise Skipped("early: no run has enough points for an early-stage prediction" + _why(notes))
    n = len(results)
    ncols = 1 if n == 1 else 2 if n <= 4 else 3 if n <= 9 else 4
    nrows = (n + ncols - 1) // ncols
    fig, axes = new_grid(nrows, ncols, columns=1 if ncols == 1 else 2, panel_aspect=0.78,
                         extra_height=1.0 + nrows * 2.4 * fs("small") / 72)
    width = fig_width(1 if ncols == 1 else 2) / ncols * 72
    for ax, (run_id, (r, pts, pred)) in zip(axes.flat, results.items()):
        plot_early(pts, pred, ax=ax, color=r["color"], marker=r["marker"], numbers=False, legend=False)
        ax.set_xlabel("")
        ax.set_ylabel("")
        panel_title(ax, r["label"], f"fit ≤ step {pred.fit_last_step_:g}",
                    f"RMSE {fmt(pred.rmse_predicted_)} · end {fmt(pred.final_observed_)} vs "
                    f"{fmt(pred.final_predicted_)}", "0.15", width)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.supxlabel(STEP_LABEL, fontsize=fs("normal"))
    fig.supylabel("score: validation (fraction correct) or training (mean reward)", fontsize=fs("normal"))
    handles = [Patch(color="0.85", label="fit window"), Patch(color="0.3", alpha=0.2, label="95 % prediction band"),
               Line2D([], [], color="0.3", label="predicted from the later entropy"),
               Line2D([], [], marker="o", color="0.3", ls="none", label="observed, in the fit"),
               Line2D([], [], marker="o", mfc="white", mec="0.3", ls="none", label="observed, predicted"),
               Line2D([], [], color="0.3", ls=":", label="predicted ceiling b - a"),
               Line2D([], [], marker="^", mfc="white", mec="0.3", ls="none", label="▲▼ beyond the axes")]
    fig.legend(handles=handles, loc="outside upper center", ncol=4, fontsize=fs("small"))
    what = f"the first {fit_steps} steps" if fit_steps else f"the first {100 * fit_frac:.0f} % of each run"
    return [Built("early_prediction", fig,
                  f"The law fitted on {what} (shaded) predicts the later scores from the entropy observed later "
                  "(the paper's protocol, which sees the later entropy; the forecast above sees nothing after the "
                  "window). RMSE over the predicted steps and the final score observed vs predicted above each panel "
                  "(paper: 0.9 % and 0.5 % for math)."
                  + (f" Left out ({len(left_out)}): runs the law does not describe." if left_out else "")
                  + " Paper Fig. 5." + focus_note, notes,
                  title=f"Early-stage prediction of the later scores from the later entropy (fit on {what})")]


def consumption_figure(t: pd.DataFrame, marks=None, run_ids=None, **_) -> list[Built]:
    """Fig. 2: normalised entropy consumption and performance gain vs the fraction of training."""
    from entropylaw.plots.consumption import PAPER_MARKS, plot_consumption

    rows, _ = summary_rows(t, run_ids)
    runs, notes, left_out = {}, [], []
    parts = tt.split_runs(t, [r["run_id"] for r in rows])
    for r in rows:
        if r["trust"] == NOT_APPLICABLE:
            left_out.append(r["label"])
            continue
        try:
            frame, caught = capture(consumption, parts.get(r["run_id"], t), r["run_id"])
        except EntropyLawError as err:
            notes.append(f"{r['run_id']}: no consumption curve ({err})")
            continue
        notes += tag(r["run_id"], caught)
        if len(frame):
            runs[r["run_id"]] = frame
    if not runs:
        raise Skipped("consumption: no run the law describes has both entropy and score over steps" + _why(notes))
    ax = plot_consumption(runs, marks=tuple(marks or PAPER_MARKS))
    return [Built("consumption_entropy_and_gain", ax.figure,
                  f"Share of each run's total entropy drop and score gain reached by each fraction of its training "
                  f"({len(runs)} runs; mean thick, each run thin). Read at 1/12 and 1/3 of training, the paper's "
                  "step 200 and 800 of 2400 (73 % / 76 % and 94 % / 93 %); the end is 100 % by construction."
                  + (f" Left out ({len(left_out)}): runs the law does not describe (their entropy does not fall, "
                     "or the score does not rise with it)." if left_out else "") + " Paper Fig. 2.", notes,
                  title="Entropy consumed and score gained over the fraction of training")]


def _why(notes) -> str:
    return f" ({'; '.join(notes[:3])})" if notes else ""


__all__ = ["forecast_figure", "early_figures", "consumption_figure", "ceiling_text", "is_fraction"]
