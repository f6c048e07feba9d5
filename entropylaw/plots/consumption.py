"""Paper Fig. 2: how fast entropy is consumed and performance gained over training.

Input per run: a frame with columns ``step``, ``entropy_consumed`` and
``performance_gain``, both normalised fractions (0 at the first step, 1 at the last:
``(H_0 - H_t)/(H_0 - H_T)`` and ``(R_t - R_0)/(R_T - R_0)``, SPEC section 3), as
:func:`entropylaw.fit.consumption.consumption` returns. Curves are drawn in percent;
with several runs their mean (on a shared step grid, by linear interpolation) is drawn
thick and each run thin. The shares reached at ``marks`` (the paper quotes steps 200
and 800) are written on the plot.

>>> import numpy as np, pandas as pd
>>> steps = np.arange(0, 101)
>>> run = pd.DataFrame({"step": steps, "entropy_consumed": 1 - np.exp(-steps / 20),
...                     "performance_gain": 1 - np.exp(-steps / 25)})
>>> ax = plot_consumption({"r1": run}, marks=(20,))
>>> print(ax.get_ylabel())
share of the run's total change (%)
>>> round(share_at(run, "entropy_consumed", 20), 3)
0.632
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from entropylaw.plots.common import pct
from entropylaw.plots.style import STEP_LABEL, color, new_axes

COLUMNS = ("entropy_consumed", "performance_gain")
NAMES = {"entropy_consumed": "entropy consumed", "performance_gain": "performance gained"}


def share_at(run: pd.DataFrame, column: str, step: float) -> float:
    """Linear interpolation of ``column`` at ``step`` (NaN outside the run's steps)."""
    rows = run[["step", column]].dropna().sort_values("step")
    x, y = rows["step"].to_numpy(float), rows[column].to_numpy(float)
    if len(x) == 0 or step < x[0] or step > x[-1]:
        return float("nan")
    return float(np.interp(step, x, y))


def mean_curve(runs: Mapping[str, pd.DataFrame], column: str, n_grid: int = 200) -> pd.Series:
    """Mean of ``column`` over runs on a common step grid (up to the shortest run's end)."""
    usable = [r[["step", column]].dropna().sort_values("step") for r in runs.values()]
    usable = [r for r in usable if len(r) >= 2]
    if not usable:
        return pd.Series(dtype=float)
    start = max(r["step"].iloc[0] for r in usable)
    stop = min(r["step"].iloc[-1] for r in usable)
    grid = np.linspace(start, stop, n_grid)
    values = [np.interp(grid, r["step"].to_numpy(float), r[column].to_numpy(float)) for r in usable]
    return pd.Series(np.mean(values, axis=0), index=grid, name=column)


def plot_consumption(runs: Mapping[str, pd.DataFrame], marks: Sequence[float] = (200, 800), ax=None,
                     title: str | None = None):
    """Normalised entropy consumption and performance gain (%) vs training step."""
    fig, ax = new_axes(ax)
    runs = {k: v for k, v in runs.items() if len(v)}
    several = len(runs) > 1
    for j, column in enumerate(COLUMNS):
        style = "-" if column == "entropy_consumed" else "--"
        if several:
            for run in runs.values():
                rows = run[["step", column]].dropna()
                ax.plot(rows["step"], 100 * rows[column], style, color=color(j), lw=0.8, alpha=0.35)
            mean = mean_curve(runs, column)
            ax.plot(mean.index, 100 * mean.to_numpy(), style, color=color(j), lw=2.2,
                    label=f"{NAMES[column]} (mean of {len(runs)} runs)")
        else:
            (name, run), = runs.items()
            rows = run[["step", column]].dropna()
            ax.plot(rows["step"], 100 * rows[column], style, color=color(j), lw=2,
                    label=f"{NAMES[column]} ({name})")
    _mark_steps(ax, runs, marks, several)
    ax.set_xlabel(STEP_LABEL)
    ax.set_ylabel("share of the run's total change (%)")
    ax.set_ylim(-5, 112)
    ax.legend(loc="lower right")
    ax.set_title(title or "Normalised entropy consumption and performance gain")
    return ax


def _mark_steps(ax, runs, marks, several) -> None:
    """A dotted line at each mark with the shares reached there."""
    for step in marks:
        shares = {}
        for column in COLUMNS:
            if several:
                mean = mean_curve(runs, column)
                value = float(np.interp(step, mean.index, mean.to_numpy())) if len(mean) and \
                    mean.index[0] <= step <= mean.index[-1] else float("nan")
            else:
                value = share_at(next(iter(runs.values())), column, step)
            shares[column] = value
        if all(v != v for v in shares.values()):
            continue  # the mark lies outside the runs
        ax.axvline(step, color="0.4", ls=":", lw=1)
        text = (f"step {step:g}:\nentropy {pct(shares['entropy_consumed'])}\n"
                f"gain {pct(shares['performance_gain'])}")
        ax.annotate(text, (step, 50), xytext=(4, 0), textcoords="offset points", fontsize=8,
                    va="center", ha="left", bbox=dict(boxstyle="round,pad=0.25", fc="white", ec="0.8", alpha=0.9))
