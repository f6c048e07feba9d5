"""Paper Figs. 9-13: entropy and accuracy over training, one line per intervention.

:func:`plot_over_steps` draws one metric for several runs (``label -> Series(step ->
value)`` or a tidy table + metric) and writes each run's final value at the end of its
line and in the legend. :func:`plot_interventions` puts entropy, accuracy (and, when
logged, response length) side by side, the layout of the paper's Figs. 9-13;
:func:`interventions_figure` builds it from a tidy run table.

>>> import numpy as np, pandas as pd
>>> steps = np.arange(50)
>>> curves = {"GRPO": pd.Series(np.exp(-steps / 10), index=steps),
...           "KL-Cov": pd.Series(0.3 + 0.7 * np.exp(-steps / 10), index=steps)}
>>> ax = plot_over_steps(curves, "policy entropy H (nats)")
>>> [l.get_label() for l in ax.get_lines()]
['GRPO (final 7.45e-03)', 'KL-Cov (final 0.305)']
"""

from __future__ import annotations

import textwrap
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

import entropylaw.table as tt
from entropylaw.terminal import count
from entropylaw.figure_sets.base import Built, Skipped, metric_label
from entropylaw.figure_sets.common import as_curves, fixed, label_end, num
from entropylaw.fit.forecast.final import final_value
from entropylaw.draw.law import is_fraction
from entropylaw.draw.style import ENTROPY_LABEL, STEP_LABEL, color, current, fs, new_axes, new_grid, text_width
from entropylaw.results.focus import project_focus
from entropylaw.table.labels import run_labels
from entropylaw.results.runs import performance_metric, run_styles

END_LABEL = "end-label"


def plot_over_steps(curves, ylabel: str, ax=None, metric: str | None = None,
                    labels: Mapping[str, str] | None = None, title: str | None = None,
                    smooth: int = 1, final: str = "final", legend: bool = True,
                    looks: Mapping[str, Mapping] | None = None, end_labels: bool = True,
                    value_of: Callable[[str, pd.Series], float] | None = None):
    """One line per run; ``smooth`` > 1 draws a centred rolling mean over that many points
    (only for series at least ten times that long, so sparse validation points stay raw).

    The final value (``final='final'``: last point of the raw series, or ``value_of(label,
    series)`` where given; ``'max'``: the best value) is written at the line's end and in its
    legend entry. ``looks``: per curve label, ``ax.plot`` keywords (colour, line style) that
    keep a run's look.
    """
    fig, ax = new_axes(ax)
    curves = as_curves(curves, metric, labels)
    ends = []
    for i, (label, s) in enumerate(curves.items()):
        if not len(s):
            continue
        dense = smooth > 1 and len(s) >= 10 * smooth
        shown = s.rolling(smooth, center=True, min_periods=1).mean() if dense else s
        value = float(s.max()) if final != "final" else value_of(label, s) if value_of else float(s.iloc[-1])
        look = dict((looks or {}).get(label) or {"color": color(i)})
        ax.plot(shown.index, shown.to_numpy(), lw=1.4 if not dense else 1.1, label=f"{label} ({final} {num(value)})",
                **look)
        ends.append((float(shown.index[-1]), float(shown.iloc[-1]), num(value), look["color"]))
    ax.set_xlabel(STEP_LABEL)
    ax.set_ylabel(ylabel)
    ax.margins(x=0.03)
    if not end_labels:
        ends = []
    if ends:  # room on the right for the end labels, inside the axes
        width_pt = ax.get_position().width * ax.figure.get_figwidth() * 72 * 0.85
        need = (8 + 0.62 * fs("small") * max(len(e[2]) for e in ends)) / max(width_pt, 1.0)
        lo, hi = ax.get_xlim()
        ax.set_xlim(lo, hi + (hi - lo) * need / max(1 - need, 0.3))
    _end_labels(ax, ends)
    if curves and legend:
        ax.legend(loc="best")
    if title:
        ax.set_title(title)
    return ax


def _end_labels(ax, ends) -> None:
    """Write each line's final value at its end (tagged so :func:`nudge_end_labels` finds them)."""
    for x, y, text, c in ends:
        label = label_end(ax, x, y, text, c, fontsize=fs("small"))
        label.set_gid(END_LABEL)
        label.set_in_layout(False)  # nudged after the layout, inside the axes' margin
    nudge_end_labels(ax)


def nudge_end_labels(ax, min_gap_points: float = 9.0, column_points: float = 30.0) -> None:
    """Move the end labels apart vertically so none overlap (call again after layout). Only labels
    whose lines end within ``column_points`` of each other across are stacked together: a run that
    stopped at step 11 of 50 keeps its number by its line's end (stacked with the runs that reached
    step 50, its 0.422 sat at the top of the panel, over no line)."""
    labels = [t for t in ax.texts if t.get_gid() == END_LABEL]
    if not labels:
        return
    to_points = 72.0 / ax.figure.dpi
    xs = [ax.transData.transform(t.xy)[0] * to_points for t in labels]
    columns, last_x = [], None
    for k in sorted(range(len(labels)), key=lambda k: xs[k]):
        if last_x is None or xs[k] - last_x > column_points:
            columns.append([])
        columns[-1].append(k)
        last_x = xs[k]
    for column in columns:
        _stack([labels[k] for k in column], ax, min_gap_points, to_points)


def _stack(labels, ax, min_gap_points: float, to_points: float) -> None:
    """Labels of one column moved apart vertically, none overlapping, kept inside the axes."""
    ys = [ax.transData.transform(t.xy)[1] * to_points for t in labels]
    order = sorted(range(len(labels)), key=lambda k: ys[k])
    targets, last = {}, -np.inf
    for k in order:
        targets[k] = max(ys[k], last + min_gap_points)
        last = targets[k]
    # a stack that climbs past the top of the axes slides down (not below the bottom)
    half = 0.6 * max(t.get_fontsize() for t in labels)  # a label's half height, about
    top = ax.bbox.y1 * to_points - half
    bottom = ax.bbox.y0 * to_points + half
    shift = max(0.0, last - top)
    shift = min(shift, max(0.0, targets[order[0]] - bottom))
    for k in order:
        labels[k].xyann = (labels[k].xyann[0], targets[k] - shift - ys[k])


def plot_interventions(table: pd.DataFrame, accuracy_metric: str, run_ids: Sequence[str] | None = None,
                       labels: Mapping[str, str] | None = None, extra_metrics: Sequence[str] = ("response_length",),
                       title: str | None = None, accuracy_label: str | None = None, smooth: int = 1,
                       groups: Mapping[str, Sequence[str]] | None = None, looks: Mapping[str, Mapping] | None = None,
                       metric_of: Mapping[str, str] | None = None):
    """Entropy, accuracy and (when logged) response length vs step for the chosen runs.

    ``groups`` (family -> run ids): one row of panels per family, each with its legend on
    the right (small multiples for many runs); without it, one row and one legend under
    the panels. Each run's final entropy and score are in the legend and at its line ends.
    ``looks`` (run id -> plot keywords) keeps each run's colour and line style;
    ``metric_of`` (run id -> score metric) when the runs' scores differ.
    """
    if run_ids is not None:
        table = table[table["run_id"].isin(list(run_ids))]
    ids = list(run_ids) if run_ids is not None else list(pd.unique(table["run_id"]))
    rows = dict(groups) if groups else {"": ids}
    labels = dict(labels or {})
    metric_of = dict(metric_of or {})
    extras = [m for m in extra_metrics if (table["metric"] == m).any()]
    ncols = 2 + len(extras)
    # one legend under the panels (2 columns); with several rows, one legend per row: on the
    # right on screen, under the row in the paper style (its two columns are narrow), each row
    # a subfigure so that its legend has room of its own
    under_rows = len(rows) > 1 and current().name == "paper"
    if under_rows:
        from entropylaw.draw.style import fig_width

        # legend columns per row: two when two entries fit side by side
        sample = {k: max(text_width(f"{labels.get(r, r)}: final H 0.000, final score 0.000", fs("small"))
                         for r in members) for k, members in enumerate(rows.values())}
        row_ncol = [1 if 2 * sample[k] + 80 > fig_width(2) * 72 else 2 for k in range(len(rows))]
        fig, axes, holders = _row_figures(rows, ncols, title, row_ncol)
    else:
        legend_rows = (len(ids) + 1) // 2 if len(rows) == 1 else 0
        fig, axes = new_grid(len(rows), ncols, columns=2, panel_aspect=0.72 if len(rows) > 1 else 0.8,
                             extra_height=(0.5 if title else 0.2) + legend_rows * 1.6 * fs("small") / 72)
        holders = [None] * len(rows)
    names_all, handles_all = [], []
    for k, (family, members) in enumerate(rows.items()):
        part = table[table["run_id"].isin(members)]
        metric = {metric_of.get(r, accuracy_metric) for r in members}
        shown_metric = metric.pop() if len(metric) == 1 else None
        score = _score_table(part, members, metric_of, accuracy_metric) if shown_metric is None else part
        score_metric = shown_metric or "__score__"
        row_labels = {r: labels.get(r, r) for r in members}
        row_looks = {row_labels[r]: (looks or {}).get(r) for r in members if (looks or {}).get(r)}
        key_of = {row_labels[r]: metric_of.get(r, accuracy_metric) for r in members}

        def final_score(label, s, key_of=key_of):  # the tables' final score (a training score's last 5 %)
            return final_value(key_of[label], s.index, s.to_numpy())
        ylabels = {"entropy": ENTROPY_LABEL, "response_length": "response length (tokens)",
                   score_metric: accuracy_label or (f"{shown_metric} (fraction correct)" if shown_metric
                                                    else "score: validation, else training (fraction)")}
        if len(rows) > 1:  # short panels: short labels, or they run into the next row's
            ylabels = {"entropy": "entropy H (nats)", "response_length": "length (tokens)",
                       score_metric: "score (fraction)" if shown_metric != "score" else "training score (reward)"}
        if not is_fraction(score.loc[score["metric"] == score_metric, "value"]):  # a reward of -1 is no fraction
            ylabels[score_metric] = ylabels[score_metric].replace("(fraction correct)", "(score units)").replace(
                "(fraction)", "(score units)")
        for ax, (metric_name, data) in zip(axes[k], [("entropy", part), (score_metric, score)]
                                           + [(m, part) for m in extras]):
            # several rows: the legend gives each run's final values, the line ends stay clear
            plot_over_steps(data, ylabels.get(metric_name, metric_name), ax=ax, metric=metric_name,
                            labels=row_labels, smooth=smooth, legend=False, looks=row_looks,
                            end_labels=len(rows) == 1, value_of=final_score if metric_name == score_metric else None)
            if not ax.get_lines():
                ax.set_visible(False)
        if family and holders[k] is not None:
            holders[k].suptitle(family, x=0.01, ha="left", fontsize=fs("normal"))
        elif family:
            axes[k, 0].set_title(family, fontsize=fs("normal"), loc="left")
        entropy = as_curves(part, "entropy", row_labels)
        accuracy = as_curves(score, score_metric, row_labels)
        handles = {line.get_label().rsplit(" (", 1)[0]: line for line in axes[k, 1].get_lines()}
        # the legend in the rows' order, as the tables list the runs (the curves come sorted by name:
        # batch128, batch256, batch64; 0.5b, 1.5b, 14b, 3b)
        shown = [row_labels[r] for r in members if row_labels[r] in accuracy and row_labels[r] in entropy
                 and row_labels[r] in handles]
        names = [f"{name}: final H {fixed(float(entropy[name].iloc[-1]))}, final score "
                 f"{fixed(final_score(name, accuracy[name]))}" for name in shown]
        hs = [handles[name] for name in shown]
        if under_rows:
            holders[k].legend(hs, names, loc="outside lower center", ncol=row_ncol[k], fontsize=fs("small"),
                              frameon=False, columnspacing=1.0)
        elif len(rows) > 1:
            last = [ax for ax in axes[k] if ax.get_visible()][-1]
            last.legend(hs, names, loc="upper left", bbox_to_anchor=(1.03, 1.0), borderaxespad=0.0,
                        fontsize=fs("small"), frameon=False)
        names_all += names
        handles_all += hs
    if len(rows) == 1:
        fig.legend(handles_all, names_all, loc="outside lower center", ncol=2, fontsize=fs("small"))
    if title:
        fig.suptitle(title, fontsize=fs("title"))
    fig.draw_without_rendering()  # run the layout so the labels are nudged at their final scale
    if _wrap_tall_ylabels(fig, axes.flat):
        fig.draw_without_rendering()
    for ax in axes.flat:
        make_room_for_end_labels(ax)
        nudge_end_labels(ax)
    return fig


def _wrap_tall_ylabels(fig, axes) -> bool:
    """Break a y label the figure cuts (taller than a short panel: "policy entropy H (nats, token mean)" beside one
    row of three panels lost its closing bracket) into two lines at its unit; True where one was broken."""
    renderer, page, broken = fig.canvas.get_renderer(), fig.bbox, False
    for ax in axes:
        lab = ax.yaxis.label
        e = lab.get_window_extent(renderer)
        if ax.get_visible() and lab.get_text() and "\n" not in lab.get_text() and \
                (e.y0 < page.y0 - 0.5 or e.y1 > page.y1 + 0.5):
            head, sep, unit = lab.get_text().rpartition(" (")
            lab.set_text(f"{head}\n({unit}" if sep else textwrap.fill(lab.get_text(), len(lab.get_text()) // 2 + 1))
            broken = True
    return broken


def _row_figures(rows, ncols, title, legend_cols):
    """A figure of one subfigure per family, each a row of ``ncols`` panels, sized for its legend."""
    import matplotlib.pyplot as plt

    from entropylaw.draw.style import _style_axes, fig_width, rc

    w = fig_width(2)
    panel = w / ncols * 0.62
    heights = [panel + (3.0 * fs("normal") + 1.6 * fs("small") * -(-len(m) // c)) / 72
               for m, c in zip(rows.values(), legend_cols)]
    with plt.rc_context(rc()):
        fig = plt.figure(figsize=(w, sum(heights) + (0.35 if title else 0.0)), layout="constrained")
        holders = fig.subfigures(len(rows), 1, height_ratios=heights, squeeze=False)[:, 0]
        axes = np.array([sf.subplots(1, ncols, squeeze=False)[0] for sf in holders])
    for ax in axes.flat:
        _style_axes(ax)
    return fig, axes, list(holders)


def make_room_for_end_labels(ax) -> None:
    """Widen the x range (after the layout) until every end label ends inside the axes."""
    labels = [t for t in ax.texts if t.get_gid() == END_LABEL]
    if not labels or not ax.get_visible():
        return
    renderer = ax.figure.canvas.get_renderer()
    right = max(t.get_window_extent(renderer).x1 for t in labels)
    over = right + 2 - ax.bbox.x1
    if over > 0:
        lo, hi = ax.get_xlim()
        frac = over / max(ax.bbox.width, 1.0)
        ax.set_xlim(lo, hi + (hi - lo) * frac / max(1 - frac, 0.3) * 1.15)


def _score_table(part: pd.DataFrame, members, metric_of, default: str) -> pd.DataFrame:
    """Each run's own score metric renamed to one name, for runs whose scores differ."""
    pieces = [part[(part["run_id"] == r) & (part["metric"] == metric_of.get(r, default))] for r in members]
    out = pd.concat(pieces) if pieces else part.iloc[:0]
    return out.assign(metric="__score__")


def interventions_figure(t: pd.DataFrame, run_ids=None, labels=None, name: str = "runs_over_training",
                         title: str | None = None, smooth: int = 5, fit_frac: float = 0.15, **_) -> list[Built]:
    """Figs. 9-13: entropy, score (and response length) vs step, one line per run, one row
    of panels per family of runs (by model) when there are several."""
    run_ids, focus_note = project_focus(t, run_ids, fit_frac)
    candidates = run_ids or tt.run_ids(t)
    parts = tt.split_runs(t, candidates)  # each run's rows sliced once, not the whole table masked per run
    runs = [r for r in candidates if r in parts and len(tt.series(parts[r], r, "entropy"))
            and performance_metric(parts[r], r)]
    if not runs:
        raise Skipped("interventions: no run logs both entropy and a validation or training score")
    metric_of = {r: performance_metric(t, r) for r in runs}
    metrics = set(metric_of.values())
    metric = metrics.pop() if len(metrics) == 1 else "score"
    groups, short = run_labels(t, runs)
    runs = [r for members in groups.values() for r in members]  # the tables' order (families, then natural)
    if labels:
        short = {r: labels.get(r, short[r]) for r in runs}
    styles = run_styles(t)
    looks = {r: styles.line(r) for r in runs}
    fig = plot_interventions(t, metric, run_ids=runs, labels=short, title=title, smooth=smooth,
                             accuracy_label=metric_label(metric) if len(set(metric_of.values())) == 1 else None,
                             groups=groups if len(groups) > 1 else None, looks=looks, metric_of=metric_of)
    return [Built(name, fig, f"Policy entropy and score over training for {count(len(runs), 'run')}"
                             + (f", one row per model ({len(groups)} rows)" if len(groups) > 1 else "")
                             + "; final values at the end of each line and in the legend; each run in its colour "
                               "and line style (the same in every figure). Paper Figs. 9-13 (interventions)."
                             + focus_note,
                  title=title or f"Entropy and score over training, {count(len(runs), 'run')}")]
