"""The forecast backtest's figure (analysis/bench_forecast.py): median |error| of the final score
against the window, per method, each kind of score in its panel, the default drawn in black."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from entropylaw.fit.forecast.catalog import ALL_METHODS
from bench_forecast_tables import PAPER


def figure(res, floors, path, defaults=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = [k for k in ("validation", "training score") if (res["kind"] == k).any()]
    fig, axes = plt.subplots(1, len(kinds), figsize=(5.6 * len(kinds) + 1.8, 4.4), squeeze=False)
    names = [*ALL_METHODS, PAPER]
    colors = dict(zip(names, plt.get_cmap("tab20")(np.linspace(0, 1, 20))[::2].tolist()
                      + plt.get_cmap("tab20")(np.linspace(0, 1, 20))[1::2].tolist()))
    for ax, kind in zip(axes[0], kinds):
        sub = res[(res["kind"] == kind) & res["ran"] & res["final"].notna()]
        med = sub.groupby(["method", "K"])["final"].median().unstack("K")
        for m in [x for x in names if x in med.index]:
            chosen = (defaults or {}).get(kind)
            style = dict(lw=2.8, color="k") if m == chosen else dict(lw=1.3, color=colors[m],
                                                                     ls="--" if m == PAPER else "-")
            ax.plot(med.columns, med.loc[m], marker="o", ms=3, label=m + (" (default)" if m == chosen else ""), **style)
        fl = [v for r, v in floors.items() if v is not None and r in set(sub["run"])]
        if fl:
            ax.axhline(np.median(fl), color="grey", ls=":", lw=2, label=f"noise floor (median {np.median(fl):.1f})")
        n, k = sub["run"].nunique(), sub["task"].nunique()
        ax.set(xlabel="fit window, % of the run's steps", ylabel="median |error| of the final score (points)",
               title=f"{kind}: {n} runs, " + (f"{k} tasks, each left out" if k > 1 else "1 task, each run left out"),
               yscale="log")
        ax.grid(alpha=0.3)
    handles = {}
    for ax in axes[0]:
        handles.update(zip(*reversed(ax.get_legend_handles_labels())))
    fig.legend(list(handles.values()), list(handles.keys()), fontsize=7, loc="center right")
    fig.tight_layout(rect=(0, 0, 1 - 1.7 / fig.get_figwidth(), 1))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
