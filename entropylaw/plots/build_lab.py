"""Builders for the mechanism figures: covariance vs entropy change (Fig. 8), the
interventions over training (Figs. 9-13), and the probe's Table 1 and ladder.

Metric names the covariance figure reads (the lab writes them; any run that logs them
works): ``cov/response_level`` (paper Eq. 9, averaged over the step's prompts),
optionally ``cov/response_level/<group>`` per prompt-difficulty group, and the measured
entropy change of the update ``actor/entropy_delta`` (else H_{k+1} - H_k from the
logged entropy).

>>> import numpy as np
>>> from entropylaw import table
>>> recs = [(s, "entropy", 1.0 / (s + 1)) for s in range(10)]
>>> recs += [(s, "cov/response_level", 0.1 / (s + 1) ** 2) for s in range(10)]
>>> t = table.from_records(recs, run_id="lab")
>>> [b.name for b in covariance_figure(t)]
['fig08_covariance_lab']
"""

from __future__ import annotations

import pandas as pd

from entropylaw import table as tt
from entropylaw.plots.build_base import Built, Skipped, metric_label, performance_metric
from entropylaw.plots.covariance import entropy_change, plot_cov_by_difficulty, plot_cov_vs_entropy_change
from entropylaw.plots.interventions import plot_interventions
from entropylaw.plots.probe_tables import ON_SCALE, PAPER_TABLE1, plot_ladder, plot_table1
from entropylaw.plots.style import new_grid

COV = "cov/response_level"
DELTA = "actor/entropy_delta"


def covariance_figure(t: pd.DataFrame, run_ids=None, **_) -> list[Built]:
    """Fig. 8 for every run (or each of ``run_ids``) that logs the response-level covariance."""
    runs = [r for r in (run_ids or tt.run_ids(t)) if len(tt.series(t, r, COV))]
    if not runs:
        raise Skipped(f"covariance: no run logs {COV!r} (the lab's response-level covariance)")
    built = []
    for run_id in runs:
        cov = tt.series(t, run_id, COV)
        measured = tt.series(t, run_id, DELTA)
        if len(measured):
            delta, how = measured, "measured entropy change of the step's update"
        else:
            delta, how = entropy_change(tt.series(t, run_id, "entropy")), "H_{k+1} - H_k of the logged entropy"
        both = pd.concat([cov.rename("cov"), delta.rename("dh")], axis=1).dropna()
        if len(both) < 3:
            continue
        groups = {m.split("/")[-1]: tt.series(t, run_id, m) for m in sorted(pd.unique(t["metric"]))
                  if m.startswith(COV + "/") and len(tt.series(t, run_id, m))}
        fig, axes = new_grid(1, 2 if groups else 1, figsize=(11.5 if groups else 6.4, 4.4))
        plot_cov_vs_entropy_change(both.index, both["cov"], both["dh"], ax=axes[0, 0],
                                   title=f"{run_id}: Cov(log p, A) vs -ΔH",
                                   delta_label="-ΔH (measured)" if len(measured) else "-ΔH = -(H_{k+1} - H_k)")
        if groups:
            plot_cov_by_difficulty(groups, ax=axes[0, 1], title=f"{run_id}: covariance by prompt accuracy")
        built.append(Built(f"fig08_covariance_{_slug(run_id)}", fig,
                           f"{run_id}: response-level covariance between length-normalised log-probability and "
                           f"advantage, per step, against minus the entropy change ({how}); Theorem 1 predicts they "
                           "move together." + (" Right: the covariance per prompt-difficulty group." if groups else "")))
    if not built:
        raise Skipped(f"covariance: fewer than 3 steps with both {COV!r} and an entropy change")
    return built


def interventions_figure(t: pd.DataFrame, run_ids=None, labels=None, name: str = "fig09_interventions",
                         title: str | None = None, smooth: int = 5, **_) -> list[Built]:
    """Figs. 9-13: entropy, accuracy (and response length) vs step, one line per run."""
    candidates = run_ids or tt.run_ids(t)
    runs = [r for r in candidates if len(tt.series(t, r, "entropy")) and performance_metric(t, r)]
    if not runs:
        raise Skipped("interventions: no run logs both entropy and a validation or training score")
    metrics = {performance_metric(t, r) for r in runs}
    metric = metrics.pop() if len(metrics) == 1 else "score"
    if metric == "score" and not all(len(tt.series(t, r, "score")) for r in runs):
        raise Skipped("interventions: the runs share no score metric to compare")
    fig = plot_interventions(t, metric, run_ids=runs, labels=labels, title=title, smooth=smooth,
                             accuracy_label=metric_label(metric))
    return [Built(name, fig, f"Policy entropy and {metric_label(metric)} over training for {len(runs)} runs; "
                             "final values written at the end of each line.")]


def table1_figure(summary: dict, **_) -> list[Built]:
    """Paper Table 1 from the probe summary, next to the paper's numbers."""
    if not summary.get("table1"):
        raise Skipped("table1: the probe summary has no 'table1'")
    ax = plot_table1(summary["table1"], label=summary.get("label", "this probe (whole batch)"),
                     reference=summary.get("table1_paper") or PAPER_TABLE1)
    return [Built("table1_covariance", ax.figure,
                  "Mean token covariance over the top fraction of tokens ranked by covariance (paper Table 1): "
                  "a few tokens carry most of it.")]


def ladder_figure(summary: dict, **_) -> list[Built]:
    """The entropy-change ladder: per-token agreement of each estimator, the batch-mean ΔH of
    Lemma 1 against the measured one, and (when the probe ran it) Lemma 1's error vs η."""
    ladder = summary.get("ladder")
    if not ladder:
        raise Skipped("ladder: the probe summary has no 'ladder'")
    estimators, measured = ladder_parts(ladder, summary)
    if not estimators:
        raise Skipped("ladder: no estimator entries in the probe summary's 'ladder'")
    check = ladder.get("eta_squared_check") if isinstance(ladder.get("eta_squared_check"), dict) else None
    fig = plot_ladder(estimators, measured=measured, eta_check=check)
    tabular = [n for n in estimators if n not in ON_SCALE]
    return [Built("ladder_entropy_change", fig,
                  "How well each first-order estimate of the entropy change matches the change measured after a "
                  "real update: per-token agreement of every estimator (left); the batch-mean ΔH of Lemma 1, the "
                  "only estimator on the measured scale, against the measurement (middle)"
                  + ("; Lemma 1's mean |error| vs the step size on log-log axes, slope 2 = exact to first order "
                     "(right)" if len(fig.axes) == 3 else "")
                  + (f". {', '.join(tabular)} take η as a step on the logits, not on the parameters: compared by "
                     "correlation and sign only." if tabular else "."))]


def ladder_parts(ladder: dict, summary: dict | None = None):
    """Split the ladder into ``{estimator: numbers}`` and the measured batch-mean ΔH.

    The measured change may sit in the ladder (``measured``, ``measured_mean``) or beside it.
    """
    summary = summary or {}
    measured = None
    estimators = {}
    if isinstance(ladder.get("estimators"), dict):  # the probe's layout: {"eta", "estimators", ...}
        estimators = {k: dict(v) for k, v in ladder["estimators"].items() if isinstance(v, dict)}
        found = [v.get("measured_mean") for v in estimators.values() if v.get("measured_mean") is not None]
        return estimators, (float(found[0]) if found else None)
    for key, value in ladder.items():
        if isinstance(value, dict):
            entry = dict(value)
            for alias in ("predicted", "predicted_batch_mean", "predicted_mean_dh", "batch_mean_predicted"):
                if alias in entry and "predicted_mean" not in entry:
                    entry["predicted_mean"] = entry[alias]
            estimators[key] = entry
        elif key in ("measured", "measured_mean", "measured_batch_mean", "measured_dh"):
            measured = float(value)
    for key in ("measured", "measured_mean", "measured_batch_mean", "measured_dh"):
        if measured is None and isinstance(summary.get(key), (int, float)):
            measured = float(summary[key])
    return estimators, measured


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(text))
