"""Paper Fig. 7: coefficients a and b against model size, log-linear in N.

Inputs are plain frames:

- ``sizes``: one row per model with ``n_params`` (non-embedding parameter count), the
  fitted coefficient columns (``a``, ``b``, optionally ``ceiling``), optional standard
  errors ``a_err`` ..., optional ``label`` and a boolean ``held_out`` for the model the
  size law was *not* fitted on (it is drawn as a star, its prediction error written);
- ``curve`` (optional): the size law evaluated on a grid of ``n_params`` with columns
  ``a``, ``a_lo``, ``a_hi`` (prediction band), the same for ``b`` / ``ceiling``;
- ``equation`` (optional): ``{coef: (slope, intercept)}`` of ``coef = slope*log10 N + intercept``.

>>> import numpy as np, pandas as pd
>>> sizes = pd.DataFrame({"n_params": [1e8, 4e8, 1.6e9], "a": [0.30, 0.25, 0.20],
...                       "held_out": [False, False, True]})
>>> ax = plot_coefficient(sizes, "a", equation={"a": (-0.036, 0.96)})
>>> ax.get_xscale(), ax.get_xlabel()
('log', 'non-embedding parameters N (log scale)')
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from entropylaw.plots.style import color, fmt, new_axes, new_grid

NAMES = {"a": "coefficient a (score per e^H)", "b": "coefficient b (score)",
         "ceiling": "ceiling b - a (score at H = 0)"}


def plot_coefficient(sizes: pd.DataFrame, coef: str, curve: pd.DataFrame | None = None,
                     equation: Mapping[str, Sequence[float]] | None = None, ax=None, i_color: int = 0):
    """One coefficient vs N (log x): fitted points, the size law, its band, the held-out model."""
    fig, ax = new_axes(ax)
    c = color(i_color)
    held = sizes["held_out"].astype(bool) if "held_out" in sizes else pd.Series(False, index=sizes.index)
    used, out = sizes[~held], sizes[held]
    err = f"{coef}_err"
    if curve is not None and coef in curve:
        curve = curve.sort_values("n_params")
        label = "size law"
        if equation and coef in equation:
            slope, intercept = equation[coef]
            label = f"{coef} = {fmt(slope)}·log10 N {'+' if intercept >= 0 else '-'} {fmt(abs(intercept))}"
        ax.plot(curve["n_params"], curve[coef], color=c, lw=1.8, label=label)
        if f"{coef}_lo" in curve and f"{coef}_hi" in curve:
            ax.fill_between(curve["n_params"], curve[f"{coef}_lo"], curve[f"{coef}_hi"], color=c, alpha=0.15,
                            lw=0, label="95 % prediction band")
    ax.errorbar(used["n_params"], used[coef], yerr=used[err] if err in used else None, fmt="o", color=c,
                ms=6, capsize=3, label=f"fitted per model ({len(used)})", zorder=3)
    for _, row in used.iterrows():
        if "label" in row and row["label"]:
            ax.annotate(str(row["label"]), (row["n_params"], row[coef]), xytext=(5, 4),
                        textcoords="offset points", fontsize=7.5, color="0.3")
    for _, row in out.iterrows():
        ax.errorbar([row["n_params"]], [row[coef]], yerr=[row[err]] if err in row and row[err] == row[err] else None,
                    fmt="*", color="black", ms=13, mfc="white", capsize=3, zorder=4,
                    label=f"held out{(' ' + str(row['label'])) if 'label' in row and row['label'] else ''}")
        if curve is not None and coef in curve:
            predicted = float(np.interp(np.log(row["n_params"]), np.log(curve["n_params"]), curve[coef]))
            ax.annotate(f"observed {fmt(row[coef])}\npredicted {fmt(predicted)}\nerror {fmt(predicted - row[coef])}",
                        (row["n_params"], row[coef]), xytext=(-8, 0), textcoords="offset points", ha="right",
                        va="center", fontsize=8, bbox=dict(boxstyle="round,pad=0.25", fc="white", ec="0.8"))
    ax.set_xscale("log")
    ax.set_xlabel("non-embedding parameters N (log scale)")
    ax.set_ylabel(NAMES.get(coef, coef))
    ax.legend(loc="best")
    return ax


def plot_size_law(sizes: pd.DataFrame, curve: pd.DataFrame | None = None,
                  equation: Mapping[str, Sequence[float]] | None = None, coefs: Sequence[str] | None = None,
                  title: str | None = None):
    """A figure with one panel per coefficient (a, b and, when given, the ceiling)."""
    coefs = list(coefs or [c for c in ("a", "b", "ceiling") if c in sizes])
    fig, axes = new_grid(1, len(coefs), figsize=(4.6 * len(coefs), 4.2))
    for i, coef in enumerate(coefs):
        plot_coefficient(sizes, coef, curve=curve, equation=equation, ax=axes[0, i], i_color=i)
    fig.suptitle(title or "Law coefficients vs model size")
    return fig
