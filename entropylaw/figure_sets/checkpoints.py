"""Table 1 and the token covariance across training, from ``probe-checkpoints --table1``.

``entropylaw probe-checkpoints CKPT... --reward R --table1`` probes each checkpoint on one
fixed prompt batch and writes, per checkpoint step: ``cov_top_<p>%`` (mean token covariance
of log-probability and advantage over the top p % of the checkpoint's own sampled tokens,
the paper's Table 1), ``cov_all`` (over all tokens), ``entropy`` of the same samples and
their mean reward as ``val/<name>``. One figure per run that has them: Table 1 at every
checkpoint next to the paper's numbers, the covariance over all tokens, the entropy and
the accuracy, each against the training step.

>>> from entropylaw import table
>>> recs = [(s, m, v) for s in (0, 50) for m, v in (("cov_top_2%", 1.0 / (s + 1)), ("cov_all", 0.01),
...                                                    ("entropy", 1.0), ("val/probe", 0.5))]
>>> t = table.from_records(recs, run_id="ckpts")
>>> {f: list(s.round(3)) for f, s in covariance_series(t, "ckpts").items()}
{0.02: [1.0, 0.02], 1.0: [0.01, 0.01]}
>>> [b.name for b in checkpoints_figure(t)]
['covariance_across_checkpoints_ckpts']
"""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import entropylaw.table as tt
from entropylaw.figure_sets.base import Built, Skipped, metric_label, slug
from entropylaw.figure_sets.probe_tables import PAPER_TABLE1, fraction_label
from entropylaw.draw.style import few_ticks, fmt, fs, legend_under, new_grid, text_width
from entropylaw.results.runs import performance_metric

COV_TOP = re.compile(r"^cov_top_([0-9.eE+-]+)%$")
COV_ALL = "cov_all"


def covariance_series(t: pd.DataFrame, run_id: str) -> dict[float, pd.Series]:
    """``{fraction: mean covariance by step}``, fraction 1.0 for ``cov_all``, smallest fraction first."""
    out = {}
    for metric in pd.unique(t.loc[t["run_id"] == run_id, "metric"]):
        m = COV_TOP.match(str(metric))
        if m or metric == COV_ALL:
            s = tt.series(t, run_id, metric)
            if len(s):
                out[float(m.group(1)) / 100 if m else 1.0] = s
    return dict(sorted(out.items()))


def checkpoints_figure(t: pd.DataFrame, run_ids=None, **_) -> list[Built]:
    """One figure per run with ``cov_top_<p>%`` metrics (``probe-checkpoints --table1``)."""
    ids = list(run_ids or tt.run_ids(t))
    parts = tt.split_runs(t, ids)  # each run's rows sliced once, not the whole table masked per run
    runs = [r for r in ids if len(covariance_series(parts.get(r, t), r)) >= 2]
    if not runs:
        raise Skipped("checkpoints: no run logs cov_top_<p>% and cov_all (probe-checkpoints logs them when asked "
                      "for Table 1)")
    return [plot_checkpoints(parts.get(r, t), r) for r in runs]


def _end_labels(ax, s: pd.Series, digits: int = 3) -> None:
    """The first and the last value written beside their points (inside the axes), on the side
    away from the line: below a point whose neighbour is higher, else above."""
    for k, j, ha, dx in ((0, 1, "left", 4), (-1, -2, "right", -4)):
        below = len(s) > 1 and s.iloc[j] > s.iloc[k]
        ax.annotate(fmt(float(s.iloc[k]), digits), (s.index[k], s.iloc[k]), xytext=(dx, -5 if below else 5),
                    textcoords="offset points", ha=ha, va="top" if below else "bottom", fontsize=fs("small"))
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo - 0.15 * (hi - lo), hi + 0.15 * (hi - lo))  # room for the numbers


def _step_ticks(ax) -> None:
    """Ticks at round steps (checkpoints come every 25, 50 or 100 steps), few of them."""
    from matplotlib.ticker import MaxNLocator

    few_ticks(ax)
    ax.xaxis.set_major_locator(MaxNLocator(5, steps=[1, 2.5, 5, 10], integer=True))


def plot_checkpoints(t: pd.DataFrame, run_id: str) -> Built:
    """One run's checkpoints: Table 1 at each, the covariance over all tokens, entropy and accuracy."""
    cov = covariance_series(t, run_id)
    top = {f: s for f, s in cov.items() if f < 1.0}
    steps = sorted(set().union(*(s.index for s in cov.values())))
    fig, axes = new_grid(2, 2, columns=2, panel_aspect=0.62, extra_height=0.9)
    cmap = plt.get_cmap("viridis")
    shade = {s: cmap(0.9 * i / max(1, len(steps) - 1)) for i, s in enumerate(steps)}

    ax = axes[0, 0]  # Table 1 at each checkpoint: one line per step over the top fractions
    fractions = list(top)
    x = np.arange(len(fractions))
    for step in steps:
        y = np.array([top[f].get(step, np.nan) for f in fractions], dtype=float)
        ax.plot(x, np.where(y > 0, y, np.nan), "o-", ms=3, lw=1, color=shade[step], label=f"step {step}")
    ref = [PAPER_TABLE1.get(f, np.nan) for f in fractions]
    ax.plot(x, ref, "s--", ms=3, lw=1, color="0.55", label="paper, Qwen2.5-7B step 1")
    ax.set_yscale("log")
    ax.set_xticks(x, [fraction_label(f).replace("top ", "") for f in fractions])
    ax.set_xlabel("top fraction of tokens by covariance")
    ax.set_ylabel("mean token Cov (nats × adv., log)")
    ax.set_title("Table 1 at each checkpoint", fontsize=fs("normal"))
    handles, labels = ax.get_legend_handles_labels()
    legend_under(ax, handles, labels, ncol=3)

    ax = axes[0, 1]  # the covariance over all tokens: Theorem 1's batch covariance
    s_all = cov.get(1.0)
    if s_all is not None:
        ax.axhline(0, color="0.6", lw=0.8)
        ax.plot(s_all.index, s_all.values, "o-", ms=3, color="C0", label="all tokens")
        _end_labels(ax, s_all, digits=4)
    ax.set_xlabel("training step")
    ax.set_ylabel("mean Cov, all tokens (nats × adv.)")
    ax.set_title("Covariance across training (all tokens)", fontsize=fs("normal"))
    _step_ticks(ax)

    ax = axes[1, 0]
    ent = tt.series(t, run_id, "entropy")
    if len(ent):
        ax.plot(ent.index, ent.values, "o-", ms=3, color="C2")
        _end_labels(ax, ent)
    ax.set_xlabel("training step")
    ax.set_ylabel("entropy of the samples (nats)")
    ax.set_title("Entropy on the fixed batch", fontsize=fs("normal"))
    _step_ticks(ax)

    ax = axes[1, 1]
    metric = performance_metric(t, run_id)
    if metric:
        acc = tt.series(t, run_id, metric)
        ax.plot(acc.index, acc.values, "o-", ms=3, color="C3")
        _end_labels(ax, acc)
        ax.set_ylabel(metric_label(metric))
    else:
        ax.set_ylabel("accuracy (fraction)")
    ax.set_xlabel("training step")
    ax.set_title("Accuracy on the fixed batch", fontsize=fs("normal"))
    _step_ticks(ax)
    title = f"{run_id}: token covariance of every checkpoint on one fixed prompt batch"
    if text_width(title, fs("title")) > 0.9 * fig.get_figwidth() * 72:  # a narrow figure: the run id on its own line
        title = title.replace(": ", ":\n", 1)
    fig.suptitle(title, fontsize=fs("title"))
    n_steps = len(steps)
    return Built(f"covariance_across_checkpoints_{slug(run_id)}", fig,
                 f"{run_id}: each of {n_steps} checkpoints sampled on the same prompts and probed on its own samples "
                 "(GRPO advantages from their rewards). Top left: the paper's Table 1 at every checkpoint, the mean "
                 "covariance of log-probability and advantage over the top fraction of tokens ranked by it, beside "
                 "the paper's step-1 numbers (Qwen2.5-7B; a fraction whose mean is not positive is not drawn on the "
                 "log axis); top right: the covariance over all tokens (Theorem 1's batch covariance); bottom: the "
                 "entropy and the accuracy of the same samples.", title=f"Table 1 and the covariance across training, {run_id}")
