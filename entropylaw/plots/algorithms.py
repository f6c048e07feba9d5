"""Paper Fig. 6: runs of different RL algorithms on one model share one fitted curve.

Input: the paired points of each run (``H``, ``R`` columns, as
:func:`entropylaw.fit.pairing.pair` gives), which algorithm each run used, the shared
fit's coefficients (a mapping with ``a`` and ``b``, e.g. a fit's ``to_dict()``),
optionally one fit per algorithm and the test that says whether one curve is enough
(``f_stat``, ``p_value``, ``verdict``).

Each run keeps its own colour (``run_colors``, the same in every figure of a report;
else one colour per algorithm) and each algorithm its marker; the shared curve is black,
each algorithm's own curve grey in its own line style. The legend sits under the plot
and the numbers box where it covers no point.

>>> import numpy as np, pandas as pd
>>> H = np.linspace(0.2, 1.2, 8)
>>> pts = {"g": pd.DataFrame({"H": H, "R": -0.1 * np.exp(H) + 0.8}),
...        "r": pd.DataFrame({"H": H, "R": -0.1 * np.exp(H) + 0.81})}
>>> ax = plot_algorithms(pts, {"g": "grpo", "r": "rloo"}, {"a": 0.1, "b": 0.805},
...                      test={"f_stat": 1.2, "p_value": 0.33, "verdict": "same curve"})
>>> [l.get_label() for l in ax.get_lines()][:1]
['shared fit: R = -0.100·exp(H) + 0.805']
"""

from __future__ import annotations

import textwrap
from typing import Mapping

import numpy as np
import pandas as pd

from entropylaw.plots.common import law
from entropylaw.plots.style import ENTROPY_LABEL, color, fig_width, fit_text, fmt, fs, legend_below, new_axes

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
FIT_STYLES = ["--", ":", "-.", (0, (5, 1, 1, 1))]


def plot_algorithms(points: Mapping[str, pd.DataFrame], algorithm_of: Mapping[str, str],
                    shared_fit: Mapping[str, float], per_algorithm: Mapping[str, Mapping[str, float]] | None = None,
                    test: Mapping[str, object] | None = None, ax=None, score_label: str = "validation accuracy",
                    title: str | None = None, run_colors: Mapping[str, str] | None = None,
                    labels: Mapping[str, str] | None = None):
    """Scatter every run's (H, R) points, marker by algorithm, and draw the shared fit."""
    if ax is None:  # room under the plot for the legend: one line per run and per curve, the numbers
        n_lines = len(points) + len(per_algorithm or {}) + 5
        w = fig_width(1)
        fig, ax = new_axes(figsize=(w, 0.72 * w + n_lines * 1.45 * fs("small") / 72))
    algorithms = list(dict.fromkeys(algorithm_of.get(run, "?") or "?" for run in points))
    all_H = np.concatenate([np.asarray(p["H"], float) for p in points.values()] or [np.array([0.0, 1.0])])
    grid = np.linspace(max(0.0, all_H.min() * 0.9), all_H.max() * 1.05, 200)
    a, b = float(shared_fit["a"]), float(shared_fit["b"])
    ax.plot(grid, law(grid, a, b), color="black", lw=2, label=f"shared fit: R = -{fmt(a)}·exp(H) + {fmt(b)}")
    for k, (alg, fit) in enumerate((per_algorithm or {}).items()):
        ax.plot(grid, law(grid, float(fit["a"]), float(fit["b"])), ls=FIT_STYLES[k % len(FIT_STYLES)], color="0.4",
                lw=1.2, label=f"{alg} alone: a = {fmt(float(fit['a']))}, b = {fmt(float(fit['b']))}")
    for run, pts in points.items():
        alg = algorithm_of.get(run, "?") or "?"
        i = algorithms.index(alg)
        c = (run_colors or {}).get(run) or color(i)
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
    width = max(28, int(ax.figure.get_figwidth() * 72 / (0.55 * fs("small"))))
    legend_below(ax, ncol=1, title="\n".join(w for line in lines for w in textwrap.wrap(line, width)),
                 alignment="left")
    return ax
