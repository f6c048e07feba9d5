"""Paper Figs. 9-13: entropy and accuracy over training, one line per intervention.

:func:`plot_over_steps` draws one metric for several runs (``label -> Series(step ->
value)`` or a tidy table + metric) and writes each run's final value at the end of its
line and in the legend. :func:`plot_interventions` puts entropy, accuracy (and, when
logged, response length) side by side, the layout of the paper's Figs. 9-13.

>>> import numpy as np, pandas as pd
>>> steps = np.arange(50)
>>> curves = {"GRPO": pd.Series(np.exp(-steps / 10), index=steps),
...           "KL-Cov": pd.Series(0.3 + 0.7 * np.exp(-steps / 10), index=steps)}
>>> ax = plot_over_steps(curves, "policy entropy H (nats)")
>>> [l.get_label() for l in ax.get_lines()]
['GRPO (final 7.45e-03)', 'KL-Cov (final 0.305)']
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from entropylaw.plots.common import as_curves, label_end, num
from entropylaw.plots.style import ENTROPY_LABEL, STEP_LABEL, color, new_axes, new_grid

END_LABEL = "end-label"


def plot_over_steps(curves, ylabel: str, ax=None, metric: str | None = None,
                    labels: Mapping[str, str] | None = None, title: str | None = None,
                    smooth: int = 1, final: str = "final", legend: bool = True):
    """One line per run; ``smooth`` > 1 draws a centred rolling mean over that many points
    (only for series at least ten times that long, so sparse validation points stay raw).

    The final value (``final='final'``: last point of the raw series; ``'max'``: the
    best value) is written at the line's end and in its legend entry.
    """
    fig, ax = new_axes(ax)
    curves = as_curves(curves, metric, labels)
    ends = []
    for i, (label, s) in enumerate(curves.items()):
        if not len(s):
            continue
        dense = smooth > 1 and len(s) >= 10 * smooth
        shown = s.rolling(smooth, center=True, min_periods=1).mean() if dense else s
        value = float(s.iloc[-1]) if final == "final" else float(s.max())
        ax.plot(shown.index, shown.to_numpy(), color=color(i), lw=1.6 if not dense else 1.3,
                label=f"{label} ({final} {num(value)})")
        ends.append((float(shown.index[-1]), float(shown.iloc[-1]), num(value), color(i)))
    ax.set_xlabel(STEP_LABEL)
    ax.set_ylabel(ylabel)
    ax.margins(x=0.12)
    _end_labels(ax, ends)
    if curves and legend:
        ax.legend(loc="best")
    if title:
        ax.set_title(title)
    return ax


def _end_labels(ax, ends) -> None:
    """Write each line's final value at its end (tagged so :func:`nudge_end_labels` finds them)."""
    for x, y, text, c in ends:
        label_end(ax, x, y, text, c).set_gid(END_LABEL)
    nudge_end_labels(ax)


def nudge_end_labels(ax, min_gap_points: float = 9.0) -> None:
    """Move the end labels apart vertically so none overlap (call again after layout)."""
    labels = [t for t in ax.texts if t.get_gid() == END_LABEL]
    if not labels:
        return
    to_points = 72.0 / ax.figure.dpi
    ys = [ax.transData.transform(t.xy)[1] * to_points for t in labels]
    last = -np.inf
    for k in sorted(range(len(labels)), key=lambda k: ys[k]):
        target = max(ys[k], last + min_gap_points)
        labels[k].xyann = (labels[k].xyann[0], target - ys[k])
        last = target


def plot_interventions(table: pd.DataFrame, accuracy_metric: str, run_ids: Sequence[str] | None = None,
                       labels: Mapping[str, str] | None = None, extra_metrics: Sequence[str] = ("response_length",),
                       title: str | None = None, accuracy_label: str | None = None, smooth: int = 1):
    """Entropy, accuracy and (when logged) response length vs step for the chosen runs.

    One legend for the whole figure, below the panels: each run with its final entropy
    and accuracy (the numbers are also at the line ends).
    """
    if run_ids is not None:
        table = table[table["run_id"].isin(list(run_ids))]
    metrics = ["entropy", accuracy_metric] + [m for m in extra_metrics if (table["metric"] == m).any()]
    ylabels = {"entropy": ENTROPY_LABEL, "response_length": "mean response length (tokens)",
               accuracy_metric: accuracy_label or f"{accuracy_metric} (fraction correct)"}
    fig, axes = new_grid(1, len(metrics), figsize=(4.6 * len(metrics), 4.6))
    for ax, metric in zip(axes[0], metrics):
        plot_over_steps(table, ylabels.get(metric, metric), ax=ax, metric=metric, labels=labels,
                        smooth=smooth, legend=False)
    entropy = as_curves(table, "entropy", labels)
    accuracy = as_curves(table, accuracy_metric, labels)
    handles = axes[0, 1].get_lines()
    names = [f"{k}: final H {num(float(entropy[k].iloc[-1]))}, final score {num(float(s.iloc[-1]))}"
             for k, s in accuracy.items() if k in entropy]
    fig.legend(handles, names, loc="outside lower center", ncol=1 if max(map(len, names), default=0) > 60 else 2)
    fig.suptitle(title or "Interventions: entropy and accuracy over training")
    fig.draw_without_rendering()  # run the layout so the labels are nudged at their final scale
    for ax in axes[0]:
        nudge_end_labels(ax)
    return fig
