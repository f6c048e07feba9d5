"""Forest plots that answer "where does each run saturate, and can I trust it": one row
per run, grouped by family, in the report's table order.

:func:`plot_ceilings`: each run's ceiling b - a with its 95 % interval (the law fitted
on the whole run), the final observed score beside it, and the fit's trust flag at the
right; a run the law does not describe keeps a hollow grey marker (its ceiling is not a
forecast). :func:`plot_forecasts`: the forecast of the final score from the run's first
steps (the default method, with its interval), the law's ceiling from the same steps,
and the score that was then observed.

Rows are mappings: ``label``, ``family``, ``color``, ``marker`` and the numbers
(``ceiling``, ``ceiling_ci``, ``final_observed``, ``trust``; for forecasts ``forecast``,
``forecast_ci``, ``law_ceiling``, ``law_ceiling_ci``, ``reason``). A missing number is
not drawn. Intervals that leave [0, 1] (scores that are fractions) get a dagger (†);
the axes cut them with a triangle at the edge.

Their builders, from a tidy run table: :func:`ceilings_figure` (the report's first figure)
and :func:`forecast_figure` (the figure beside its forecast table).

>>> rows = [{"label": "r1", "family": "m", "color": "C0", "marker": "o", "ceiling": 0.7,
...          "ceiling_ci": (0.65, 0.75), "final_observed": 0.68, "trust": "good fit"},
...         {"label": "r2", "family": "m", "color": "C1", "marker": "o", "ceiling": 0.9,
...          "ceiling_ci": (0.8, 1.1), "final_observed": 0.85, "trust": "weak fit"}]
>>> ax = plot_ceilings(rows)
>>> [t.get_text() for t in ax.texts]
['good fit', 'weak fit †']
"""

from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from entropylaw.fit.forecast.core import default_method, describe_method
from entropylaw.figure_sets.base import Built, Skipped, first_reasons
from entropylaw.figure_sets.common import forest_axes
from entropylaw.draw.law import OUT_OF_RANGE, leaves_fraction, score_axis_label
from entropylaw.draw.style import TRUST_COLORS, fs, legend_below
from entropylaw.results.model import run_results, summary_rows
from entropylaw.results.values import row_float
from entropylaw.terminal import count, some_names

NOT_APPLICABLE = "law does not apply"
GREY = "0.6"
CLIPPED = "◀ ▶ beyond the axes"
NO_FORECAST = "no forecast"
NO_LAW = "no entropy: no law"  # a run with a score alone, forecast beside runs the law describes
FORECAST_FIGURE = "forecast_final_score"  # the one figure that draws a run with a score and no entropy


def _title(ax, text: str) -> None:
    """Over the whole figure when the axes are its own (the run names make the axes sit right); an
    x label wider than the figure is broken into lines (a label the figure cuts hides its unit)."""
    label, fig = ax.xaxis.label, ax.figure
    if "\n" not in label.get_text():
        fig.draw_without_rendering()  # where the layout puts the axes: the label is centred under them
        box = ax.get_position()
        room = 2 * min(box.x0 + box.width / 2, 1 - box.x0 - box.width / 2) * fig.get_figwidth()
        chars = int(room * 72 / (0.6 * label.get_fontsize()))
        if len(label.get_text()) > chars:
            label.set_text(textwrap.fill(label.get_text(), max(chars, 20)))
    if len(ax.figure.axes) == 1:
        ax.figure.suptitle(text, fontsize=fs("title"))
    else:
        ax.set_title(text, fontsize=fs("title"))


def _mostly_fractions(values) -> bool:
    """Most finite values lie in [0, 1]: the axis is a fraction's (a stray run is marked at the edge)."""
    v = np.asarray([x for x in values if np.isfinite(x)], float)
    return bool(len(v)) and float(np.mean((v >= 0) & (v <= 1))) >= 0.5


def _xlim(ax, values, fraction: bool) -> None:
    v = np.asarray([x for x in values if np.isfinite(x)], float)
    if fraction and len(v):  # values far outside [0, 1] (a run on another scale) are marked at the edge
        v = v[(v >= -0.5) & (v <= 1.5)] if ((v >= -0.5) & (v <= 1.5)).any() else v
    if not len(v):
        return
    lo, hi = float(v.min()), float(v.max())
    pad = 0.06 * max(hi - lo, 0.05)
    lo, hi = lo - pad, hi + pad
    if fraction:  # a fraction: never past [-0.05, 1.05]; longer intervals are cut and marked
        lo, hi = max(lo, -0.05), min(hi, 1.05)
    ax.set_xlim(lo, hi)


def _beyond(ax, values) -> list:
    """The legend's entry for the triangles that mark what the axes cut off (drawn when the figure
    is saved), where some value drawn is beyond them: the caption alone said what they were."""
    lo, hi = sorted(ax.get_xlim())
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], float)
    if not ((v < lo) | (v > hi)).any():
        return []
    return [Line2D([], [], marker="<", mfc="white", mec="0.3", mew=1.2, ls="none", label=CLIPPED)]


def _trust_text(ax, y, trust: str, flagged: bool) -> None:
    """The trust flag right of the row; "law n/a" for the law does not apply (the legend says it whole):
    18 characters of it beside 28 of a run's name left the data 115 pixels of a 4.3-inch figure."""
    if not trust:
        return
    shown = "law n/a" if trust == NOT_APPLICABLE else trust
    # a fixed distance from the axes' edge, in points: the edge's triangles (a value beyond the axes) keep
    # their room however narrow the axes are (at 4.5 % of them, "▷weak fit" touched)
    ax.annotate(shown + (f" {OUT_OF_RANGE}" if flagged else ""), xy=(1.0, y), xycoords=ax.get_yaxis_transform(),
                xytext=(10, 0), textcoords="offset points", ha="left", va="center", fontsize=fs("small"),
                color=TRUST_COLORS.get(trust, "0.3"), annotation_clip=False)


def plot_ceilings(rows: Sequence[Mapping], ax=None, fraction: bool | None = None, title: str | None = None,
                  score_label: str = "score (fraction correct)"):
    """One row per run: ceiling b - a with its 95 % interval, the final observed score, the trust flag.

    The axis is set by the runs the law describes; the others are drawn where they fall
    (a triangle at the edge when that is beyond the axes)."""
    applies = [r.get("trust") not in (NOT_APPLICABLE, "not fitted") for r in rows]
    finals = [row_float(r, "final_observed") for r, ok in zip(rows, applies) if ok] or \
        [row_float(r, "final_observed") for r in rows]
    if fraction is None:
        fraction = _mostly_fractions(finals)
    ax, ys = forest_axes(rows, ax, extra_lines=2)
    shown, others, drawn, any_flag = [], [], [], False
    for y, row, ok in zip(ys, rows, applies):
        c = row.get("color", "0.2")
        ceiling, ci = row_float(row, "ceiling"), row.get("ceiling_ci")
        flagged = fraction and ok and leaves_fraction(ci)
        any_flag |= flagged
        drawn += [ceiling, row_float(row, "final_observed")] + (list(ci) if ok and ci is not None else [])
        if np.isfinite(ceiling):
            if ok and ci is not None:
                ax.errorbar([ceiling], [y], xerr=[[ceiling - ci[0]], [ci[1] - ceiling]], fmt="D", color=c, ms=5,
                            capsize=2.5, lw=1.2, zorder=3)
                shown += [ceiling, ci[0], ci[1]]
            else:  # the law does not describe the run: where its ceiling would be, hollow and grey
                ax.plot([ceiling], [y], "D", mfc="white", mec=GREY, ms=5, ls="none", zorder=3)
                others.append(ceiling)
        final = row_float(row, "final_observed")
        if np.isfinite(final):
            ax.plot([final], [y], "o", mfc="none", mec="0.15", ms=5, mew=1.0, ls="none", zorder=4)
            (shown if ok else others).append(final)
        _trust_text(ax, y, str(row.get("trust") or ""), flagged)
    _xlim(ax, shown or others, fraction)
    ax.set_xlabel(f"ceiling b - a, final {score_label}")
    handles = [Line2D([], [], marker="D", color="0.2", ls="-", ms=5, label="ceiling b - a, 95 % interval"),
               Line2D([], [], marker="o", mfc="none", mec="0.15", ls="none", label="final observed score"),
               Line2D([], [], marker="D", mfc="white", mec=GREY, ls="none", label="law does not apply (law n/a)")]
    handles += _beyond(ax, drawn)
    if any_flag:
        handles.append(Line2D([], [], ls="none", label=f"{OUT_OF_RANGE} interval leaves [0, 1]"))
    legend_below(ax, handles, ncol=2, handlelength=1.4, columnspacing=1.0)
    _title(ax, title or "Where each run saturates: the law's ceiling")
    return ax


def plot_forecasts(rows: Sequence[Mapping], ax=None, fraction: bool | None = None, title: str | None = None,
                   method: str = "last-value", conf: float = 0.9, score_label: str | None = None):
    """One row per run: the default method's forecast of the final score with its interval,
    the law's ceiling from the same window, and the final score observed later."""
    if fraction is None:
        fraction = _mostly_fractions([row_float(r, "final_observed") for r in rows])
    if score_label is None:  # a reward in [-1, 1] (a collapse at -1) is no fraction correct
        score_label = "score (fraction correct)" if all(r.get("fraction", True) for r in rows) else "score (score units)"
    # up to three marks a row (forecast above, observed score on the line, law ceiling below): rows
    # of the ceilings' height squeezed them until a bar sat nearer the row above
    # (a long list keeps a little less: it stands beside its table, row for row)
    ax, ys = forest_axes(rows, ax, extra_lines=4, row_height=0.3 if len(rows) <= 10 else 0.24)
    for y in ys[1:]:  # a faint rule between rows: each mark is read against its own run
        ax.axhline(y - 0.5, color="0.9", lw=0.6, zorder=0)
    shown, drawn, any_law, any_past, any_void, pct = [], [], False, False, False, f"{100 * conf:g} %"
    for y, row in zip(ys, rows):
        c, m = row.get("color", "0.2"), row.get("marker", "o")
        f, ci = row_float(row, "forecast"), row.get("forecast_ci")
        if np.isfinite(f) and ci is not None:
            ax.errorbar([f], [y - 0.22], xerr=[[max(f - ci[0], 0)], [max(ci[1] - f, 0)]], fmt=m, color=c, ms=4.5,
                        capsize=2.5, lw=1.2, zorder=3)
            shown += [f, ci[0], ci[1]]
            drawn += [f, ci[0], ci[1]]
        law, lci = row_float(row, "law_ceiling"), row.get("law_ceiling_ci")
        # the forecast table writes "no forecast: <why>" over the law's column too: no ceiling here either
        withheld = bool(row.get("reason")) and not np.isfinite(f)
        if np.isfinite(law) and row.get("law_ceiling_void") and not withheld:
            # the law does not describe the window: where its ceiling would be, hollow and grey, as in the
            # ceilings' figure, and said at the right (the table greys it and says "law n/a")
            ax.plot([law], [y + 0.22], "D", mfc="white", mec=GREY, ms=4, ls="none", zorder=3)
            drawn.append(law)
            any_void = True
            if np.isfinite(f):
                _trust_text(ax, y, NOT_APPLICABLE, False)
        elif np.isfinite(law) and lci is not None and not withheld:
            # a ceiling the window's fit puts past the range (‡ in the table): shown at its edge, pointing out
            past = bool(row.get("law_ceiling_beyond"))
            lo, hi = row.get("bounds") or (0.0, 1.0)
            ax.errorbar([law], [y + 0.22], xerr=[[max(law - lci[0], 0)], [max(lci[1] - law, 0)]],
                        fmt=(">" if law >= (lo + hi) / 2 else "<") if past else "D", color="0.45",
                        mfc="0.45" if past else "white", ms=4.5 if past else 4, capsize=2, lw=0.9, zorder=3)
            shown += [law]
            drawn += [law, lci[0], lci[1]]
            any_law, any_past = True, any_past or past
        final = row_float(row, "final_observed")
        if np.isfinite(final):
            ax.plot([final], [y], "o", mfc="none", mec="0.1", ms=5.5, mew=1.0, zorder=4)
            shown.append(final)
            drawn.append(final)
        said = [NO_FORECAST] if not np.isfinite(f) else []
        said += [NO_LAW] if row.get("no_law") else []  # drawn here, out of the law's figures: why no ceiling
        if said:
            ax.text(1.045, y, "\n".join(said), transform=ax.get_yaxis_transform(), ha="left", va="center",
                    fontsize=fs("small"), color="0.4", clip_on=False, linespacing=0.95)
    _xlim(ax, shown, fraction)
    ax.set_xlabel(f"final {score_label}")
    handles = [Line2D([], [], marker="o", color="0.2", ls="-", ms=4.5, label=f"{method} forecast, {pct} interval"),
               Line2D([], [], marker="D", color="0.45", mfc="white", ls="-", ms=4,
                      label=f"law ceiling from the same steps, {pct}"),
               Line2D([], [], marker="o", mfc="none", mec="0.1", ls="none", label="final score observed later")]
    if any_past:
        handles.insert(2, Line2D([], [], marker=">", color="0.45", ls="none", ms=4.5,
                                 label="law ceiling past the score's range: at its edge (‡)"))
    if any_void:
        handles.insert(-1, Line2D([], [], marker="D", mfc="white", mec=GREY, ls="none", ms=4,
                                  label="law ceiling where the law does not describe the steps (law n/a)"))
    if not any_law:  # no entry for a mark the figure does not hold
        handles.pop(1)
    legend_below(ax, handles + _beyond(ax, drawn), ncol=1, handlelength=1.4)
    _title(ax, title or "Forecast of the final score from the first steps")
    return ax


def ceilings_figure(t: pd.DataFrame, run_ids=None, **_) -> list[Built]:
    """Where each run saturates: ceiling with its interval, final score, trust flag."""
    rows, notes = summary_rows(t, run_ids)
    fitted = [r for r in rows if r.get("ceiling") is not None]
    if not fitted:
        raise Skipped("ceilings: no run has enough paired entropy/score points to fit" + first_reasons(notes))
    ax = plot_ceilings(rows, score_label=score_axis_label(fitted))
    n_bad = sum(r["trust"] == NOT_APPLICABLE for r in rows)
    return [Built("law_ceilings_per_run", ax.figure,
                  f"Where each of {count(len(rows), 'run')} saturates: the ceiling b - a of the law R = -a·exp(H) + b "
                  "fitted to the whole run (the score the law gives when the entropy is used up), with its 95 % "
                  "interval, beside the final observed score, and the fit's trust flag"
                  + (f"; {count(n_bad, 'run')} marked 'law does not apply' {'has' if n_bad == 1 else 'have'} "
                     "no ceiling worth reading (hollow grey)"
                     if n_bad else "") + ". Triangles at the edge: points and intervals beyond the axes.", notes,
                  title="Where each run saturates, with its interval and trust flag")]


def _no_law_note(frows) -> str:
    """What the caption says of the runs drawn with no law ceiling because they log no entropy (they are
    in this figure, out of the law's: the command says that once)."""
    alone = [str(r["run_id"]) for r in frows if r.get("no_law")]  # as the command names it
    if not alone:
        return ""
    return (f" {count(len(alone), 'run')} ({some_names(alone)}) {'logs' if len(alone) == 1 else 'log'} no policy "
            "entropy: the forecast alone, no law ceiling.")


def _remedies(frows) -> str:
    """The runs' hints (the window too short, :mod:`entropylaw.fit.forecast.window_hint`), each named by its run."""
    return "; ".join(f"run {r['run_id']!r}: {r['remedy']}" for r in frows if r.get("remedy"))


def forecast_figure(t: pd.DataFrame, fit_frac: float = 0.15, run_ids=None, n_boot: int = 200, **_) -> list[Built]:
    """Per run: the default method's forecast of the final score from the first ``fit_frac``
    of the run, the law's ceiling from the same steps, the final score observed later; a run with a
    score and no entropy too (its forecast alone, as the report's forecast table shows it)."""
    res = run_results(t, fit_frac=fit_frac, n_boot=n_boot, run_ids=run_ids)
    rows, frows, notes = res.rows, res.forecasts, res.notes
    if not any(np.isfinite(r.get("forecast", np.nan)) for r in frows):
        hints = {r["remedy"] for r in frows if r.get("remedy")}
        raise Skipped("forecast: no run could be forecast from its first steps" +
                      (f" ({frows[0].get('reason')})" if frows else "") +
                      (f"; {frows[0]['remedy'] if len(hints) == 1 else _remedies(frows)}" if hints else ""))
    kinds = sorted({r["target_kind"] for r in frows if r.get("target_kind")})
    defaults = sorted({default_method(k) for k in kinds}) or [default_method()]
    method = defaults[0] if len(defaults) == 1 else "default"
    said = "; ".join(f"{m}: {describe_method(m)}" for m in defaults)
    # the rows whose kind's default could not run: the tables name their method (method_tag)
    fallback = [f"#{r.get('number', '?')} {r.get('label') or r['run_id']} ({r['method_tag']})"
                for r in frows if r.get("method_tag")]
    # the score's kind and unit as the ceilings' figure names them (a training score: a reward, no fraction)
    ax = plot_forecasts(frows, method=method + (" (or the one its row names)" if fallback else ""),
                        title=f"Final score from the first {100 * fit_frac:g} %", score_label=score_axis_label(rows))
    return [Built(FORECAST_FIGURE, ax.figure,
                  f"For each run, the final score forecast from its first {100 * fit_frac:g} % of steps: the "
                  f"default method for its kind of score ({said}; chosen by a rule fixed in advance on "
                  "the backtest of the real runs)"
                  + (f", or another where it cannot run ({', '.join(fallback)})" if fallback else "")
                  + " with its 90 % interval, the law's ceiling b - a fitted on the same "
                  "window's (entropy, score) pairs with its 90 % interval, and the final score the run reached. "
                  "Nothing after the window is used by either forecast. A run with no forecast shows its final "
                  "score alone: its law ceiling is withheld as in the table." + _no_law_note(frows), notes,
                  title=f"Forecast of the final score from the first {100 * fit_frac:.0f} % of each run")]
