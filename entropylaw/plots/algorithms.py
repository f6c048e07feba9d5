"""Paper Fig. 6: runs of different RL algorithms on one model share one fitted curve.

Input: the paired points of each run (``H``, ``R`` columns, as
:func:`entropylaw.fit.pairing.pair` gives), which algorithm each run used, the shared
fit's coefficients (a mapping with ``a`` and ``b``, e.g. a fit's ``to_dict()``),
optionally one fit per algorithm and the test that says whether one curve is enough
(``f_stat``, ``p_value``, ``verdict``). Points take their algorithm's colour; the shared
curve is black, per-algorithm curves dashed.

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
from entropylaw.plots.style import ENTROPY_LABEL, color, fmt, new_axes, numbers_box

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def plot_algorithms(points: Mapping[str, pd.DataFrame], algorithm_of: Mapping[str, str],
                    shared_fit: Mapping[str, float], per_algorithm: Mapping[str, Mapping[str, float]] | None = None,
                    test: Mapping[str, object] | None = None, ax=None, score_label: str = "validation accuracy",
                    title: str | None = None):
    """Scatter every run's (H, R) points by algorithm and draw the shared fit."""
    fig, ax = new_axes(ax)
    algorithms = list(dict.fromkeys(algorithm_of.get(run, "?") or "?" for run in points))
    all_H = np.concatenate([np.asarray(p["H"], float) for p in points.values()] or [np.array([0.0, 1.0])])
    grid = np.linspace(max(0.0, all_H.min() * 0.9), all_H.max() * 1.05, 200)
    a, b = float(shared_fit["a"]), float(shared_fit["b"])
    ax.plot(grid, law(grid, a, b), color="black", lw=2, label=f"shared fit: R = -{fmt(a)}·exp(H) + {fmt(b)}")
    for alg, fit in (per_algorithm or {}).items():
        i = algorithms.index(alg) if alg in algorithms else len(algorithms)
        ax.plot(grid, law(grid, float(fit["a"]), float(fit["b"])), "--", color=color(i), lw=1.3,
                label=f"{alg} alone: a = {fmt(float(fit['a']))}, b = {fmt(float(fit['b']))}")
    seen_in_alg: dict[str, int] = {}
    for run, pts in points.items():
        alg = algorithm_of.get(run, "?") or "?"
        i = algorithms.index(alg)
        k = seen_in_alg.setdefault(alg, 0)
        seen_in_alg[alg] += 1
        ax.scatter(pts["H"], pts["R"], s=18, color=color(i), marker=MARKERS[k % len(MARKERS)],
                   alpha=0.8, label=f"{run} ({alg}, {len(pts)} points)", zorder=3)
    box = {"a (shared)": a, "b (shared)": b, "ceiling b-a": b - a}
    if test:
        box["F"] = float(test.get("f_stat", float("nan")))
        box["p"] = float(test.get("p_value", float("nan")))
        if test.get("verdict"):
            # F and p are already in the box: keep the verdict's words, wrapped
            words = str(test["verdict"]).split(" (F =")[0]
            box["verdict"] = "\n".join(textwrap.wrap(words, 34))
    numbers_box(ax, box, loc="upper right")
    ax.set_xlabel(ENTROPY_LABEL)
    ax.set_ylabel(f"{score_label} (fraction correct)")
    ax.legend(loc="lower left")
    ax.set_title(title or f"One curve for {', '.join(algorithms)}")
    return ax
