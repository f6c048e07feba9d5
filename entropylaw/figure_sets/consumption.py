"""Paper Fig. 2: how fast entropy is consumed and performance gained over training.

Input per run: a frame with columns ``step``, ``entropy_consumed`` and
``performance_gain``, both normalised fractions (0 at the first step, 1 at the last:
``(H_0 - H_t)/(H_0 - H_T)`` and ``(R_t - R_0)/(R_T - R_0)``, SPEC section 3), as
:func:`entropylaw.fit.consumption.consumption` returns.

The x axis is the fraction of each run's training (first to last logged step), so runs
of different lengths share one axis to the end and compare with the paper's "by step
200 of 2400" (1/12 of training) and "by step 800" (1/3). Curves are drawn in percent;
with several runs their median (on a shared grid, by linear interpolation) is drawn
thick and each run thin. Each curve is 0 % at its run's first and 100 % at its last logged
step by construction, so nothing is read at the end: the shares are read at ``marks``
(fractions of training) and written under the plot beside the paper's numbers.
:func:`consumption_figure` builds it from a tidy run table.

>>> import numpy as np, pandas as pd
>>> steps = np.arange(0, 101)
>>> run = pd.DataFrame({"step": steps, "entropy_consumed": 1 - np.exp(-steps / 20),
...                     "performance_gain": 1 - np.exp(-steps / 25)})
>>> ax = plot_consumption({"r1": run}, marks=(0.2,))
>>> print(ax.get_ylabel())
share of the run's total change (%)
>>> round(share_at(as_fraction(run), "entropy_consumed", 0.2), 3)  # step 20: 1 - exp(-1)
0.632
"""

from __future__ import annotations

import textwrap
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

import entropylaw.table as tt
from entropylaw.terminal import count
from entropylaw.errors import EntropyLawError
from entropylaw.fit.consumption import consumption
from entropylaw.figure_sets.base import Built, Skipped, first_reasons, left_out_note
from entropylaw.figure_sets.common import pct
from entropylaw.draw.style import color, fig_width, fs, legend_below, new_axes
from entropylaw.results.model import summary_rows
from entropylaw.results.notes import capture, tag
from entropylaw.results.runs import left_out_runs

NOT_APPLICABLE = "law does not apply"
COLUMNS = ("entropy_consumed", "performance_gain")
NAMES = {"entropy_consumed": "entropy consumed", "performance_gain": "performance gained"}
# paper Sec. 3 (Qwen2.5, 2400 steps): shares reached by step 200 and by step 800
PAPER_MARKS = {1 / 12: (0.73, 0.76), 1 / 3: (0.94, 0.93)}
X_LABEL = "fraction of the run's training steps (%)"


def as_fraction(run: pd.DataFrame) -> pd.DataFrame:
    """The run with ``step`` replaced by the fraction of its training (0 first, 1 last step)."""
    out = run.copy()
    s = out["step"].to_numpy(float)
    span = s.max() - s.min()
    out["step"] = (s - s.min()) / span if span > 0 else 0.0
    return out


def share_at(run: pd.DataFrame, column: str, step: float) -> float:
    """Linear interpolation of ``column`` at ``step`` (NaN outside the run's steps)."""
    rows = run[["step", column]].dropna().sort_values("step")
    x, y = rows["step"].to_numpy(float), rows[column].to_numpy(float)
    if len(x) == 0 or step < x[0] or step > x[-1]:
        return float("nan")
    return float(np.interp(step, x, y))


def mean_curve(runs: Mapping[str, pd.DataFrame], column: str, n_grid: int = 200, how: str = "mean") -> pd.Series:
    """Mean (or ``how="median"``) of ``column`` over runs on a common grid (from the latest
    start to the earliest end)."""
    usable = [r[["step", column]].dropna().sort_values("step") for r in runs.values()]
    usable = [r for r in usable if len(r) >= 2]
    if not usable:
        return pd.Series(dtype=float)
    start = max(r["step"].iloc[0] for r in usable)
    stop = min(r["step"].iloc[-1] for r in usable)
    grid = np.linspace(start, stop, n_grid)
    values = [np.interp(grid, r["step"].to_numpy(float), r[column].to_numpy(float)) for r in usable]
    centre = np.median(values, axis=0) if how == "median" else np.mean(values, axis=0)
    return pd.Series(centre, index=grid, name=column)


def plot_consumption(runs: Mapping[str, pd.DataFrame], marks: Sequence[float] = tuple(PAPER_MARKS), ax=None,
                     title: str | None = None):
    """Normalised entropy consumption and performance gain (%) vs the fraction of training."""
    runs = {k: as_fraction(v) for k, v in runs.items() if len(v)}
    if ax is None:  # room under the plot for the legend and the shares read at the marks
        w = fig_width(1)
        ax = new_axes(figsize=(w, 0.7 * w + (10 + 2 * len(marks)) * 1.4 * fs("small") / 72))[1]
    several = len(runs) > 1
    for j, column in enumerate(COLUMNS):
        style = "-" if column == "entropy_consumed" else "--"
        if several:
            for run in runs.values():
                rows = run[["step", column]].dropna()
                ax.plot(100 * rows["step"], 100 * rows[column], style, color=color(j), lw=0.6, alpha=0.3)
            # the median: one run normalised by a small total change swings far and would pull a mean
            mean = mean_curve(runs, column, how="median")
            ax.plot(100 * mean.index, 100 * mean.to_numpy(), style, color=color(j), lw=2.2,
                    label=f"{NAMES[column]} (median of {count(len(runs), 'run')})")
        else:
            (name, run), = runs.items()
            rows = run[["step", column]].dropna()
            ax.plot(100 * rows["step"], 100 * rows[column], style, color=color(j), lw=2,
                    label=f"{NAMES[column]} ({name})")
    lines = _mark_fractions(ax, runs, marks, several)
    ax.set_xlabel(X_LABEL)
    ax.set_ylabel("share of the run's total change (%)")
    ax.set_xlim(-2, 102)
    ax.set_ylim(-10, 115)
    ax.set_title(title or "Entropy consumed and score gained over training", fontsize=fs("title"))
    handles, labels = ax.get_legend_handles_labels()
    note = ("Thin: each run. Every curve is 0 % at its run's first and 100 % at its last logged step by "
            "construction (normalised to its own run), so only the dotted fractions are read:")
    chars = max(30, int(ax.figure.get_figwidth() * 72 / (0.52 * fs("small"))))
    title = "\n".join(w for line in [note] + lines for w in textwrap.wrap(line, chars))
    legend_below(ax, handles, labels, ncol=1, title=title, alignment="left")
    return ax


def _mark_fractions(ax, runs, marks, several) -> list[str]:
    """A dotted line at each fraction of training; returns a line per mark with the shares."""
    lines = []
    for frac in marks:
        shares = {}
        for column in COLUMNS:
            if several:
                mean = mean_curve(runs, column, how="median")
                shares[column] = float(np.interp(frac, mean.index, mean.to_numpy())) if len(mean) else float("nan")
            else:
                shares[column] = share_at(next(iter(runs.values())), column, frac)
        if all(v != v for v in shares.values()):
            continue
        ax.axvline(100 * frac, color="0.4", ls=":", lw=1)
        line = (f"at {100 * frac:.0f} % of training: entropy {pct(shares['entropy_consumed'])}, "
                f"gain {pct(shares['performance_gain'])}")
        paper = min(PAPER_MARKS, key=lambda f: abs(f - frac))
        if abs(paper - frac) < 1e-6:
            e, g = PAPER_MARKS[paper]
            line += f" (paper, step {round(2400 * paper)} of 2400: {pct(e)}, {pct(g)})"
        lines.append(line)
    return lines


def consumption_figure(t: pd.DataFrame, marks=None, run_ids=None, **_) -> list[Built]:
    """Fig. 2: normalised entropy consumption and performance gain vs the fraction of training."""
    rows, _ = summary_rows(t, run_ids)
    runs, notes = {}, []
    # every run not drawn, by reason
    left_out = {"the law does not describe (their entropy does not fall, or the score does not rise with it)": 0,
                "with no curve of both entropy and score over steps": 0,
                "with no entropy or no score": len(left_out_runs(t)) if run_ids is None else 0}
    parts = tt.split_runs(t, [r["run_id"] for r in rows])
    for r in rows:
        if r["trust"] == NOT_APPLICABLE:
            left_out[next(iter(left_out))] += 1
            continue
        try:
            frame, caught = capture(consumption, parts.get(r["run_id"], t), r["run_id"])
        except EntropyLawError as err:
            notes.append(f"{r['run_id']}: no consumption curve ({err})")
            frame, caught = (), []
        notes += tag(r["run_id"], caught)
        if len(frame):
            runs[r["run_id"]] = frame
        else:
            left_out["with no curve of both entropy and score over steps"] += 1
    if not runs:
        raise Skipped("consumption: no run the law describes has both entropy and score over steps" + first_reasons(notes))
    ax = plot_consumption(runs, marks=tuple(marks or PAPER_MARKS))
    return [Built("consumption_entropy_and_gain", ax.figure,
                  f"Share of each run's total entropy drop and score gain reached by each fraction of its training "
                  f"({count(len(runs), 'run')}; mean thick, each run thin). Read at 1/12 and 1/3 of training, the paper's "
                  "step 200 and 800 of 2400 (73 % / 76 % and 94 % / 93 %); the end is 100 % by construction."
                  + left_out_note(left_out) + " Paper Fig. 2.", notes,
                  title="Entropy consumed and score gained over the fraction of training")]
