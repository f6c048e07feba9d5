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
['covariance_vs_entropy_change_lab']
"""

from __future__ import annotations

import pandas as pd

import entropylaw.table as tt
import numpy as np

from entropylaw.plots.build_base import Built, Skipped, metric_label, performance_metric, run_styles
from entropylaw.plots.covariance import (correlation, entropy_change, plot_correlations, plot_cov_by_difficulty,
                                         plot_cov_scatter, plot_cov_vs_entropy_change)
from entropylaw.plots.build_models import is_intervention
from entropylaw.plots.labels import run_labels
from entropylaw.plots.rows import project_focus
from entropylaw.plots.interventions import plot_interventions
from entropylaw.plots.probe_tables import ON_SCALE, PAPER_TABLE1, plot_ladder, plot_table1
from entropylaw.plots.style import fs, new_grid

COV = "cov/response_level"
DELTA = "actor/entropy_delta"


def covariance_figure(t: pd.DataFrame, run_ids=None, max_detail: int = 2, **_) -> list[Built]:
    """Fig. 8: for up to ``max_detail`` runs (baseline runs first) the covariance against
    the entropy change over steps and per step; with more runs, one more figure with every
    run's correlation (small multiples in one row each, not one figure per run)."""
    candidates = list(run_ids or tt.run_ids(t))
    parts = tt.split_runs(t, candidates)
    runs = [r for r in candidates if r in parts and len(tt.series(parts[r], r, COV))]
    if not runs:
        raise Skipped(f"covariance: no run logs {COV!r} (the lab's response-level covariance)")
    meta = tt.runs(t).set_index("run_id")
    # baseline runs first: Fig. 8 is about the unregularised dynamics
    runs = sorted(runs, key=lambda r: (is_intervention(meta.at[r, "algorithm"]) if r in meta.index else True, r))
    styles = run_styles(t)
    pairs, notes = {}, []
    for run_id in runs:
        cov = tt.series(t, run_id, COV)
        measured = tt.series(t, run_id, DELTA)
        if len(measured):
            delta, how = measured, "measured"
        else:
            delta, how = entropy_change(tt.series(t, run_id, "entropy")), "logged"
        both = pd.concat([cov.rename("cov"), delta.rename("dh")], axis=1).dropna()
        if len(both) < 3:
            notes.append(f"{run_id}: fewer than 3 steps with both {COV} and an entropy change")
            continue
        pairs[run_id] = (both, how)
    if not pairs:
        raise Skipped(f"covariance: fewer than 3 steps with both {COV!r} and an entropy change")
    built = [_covariance_detail(t, run_id, both, how, styles.color(run_id))
             for run_id, (both, how) in list(pairs.items())[:max_detail]]
    if len(pairs) > max_detail:
        built.append(_covariance_all(t, pairs, styles))
    return built


def _covariance_detail(t, run_id, both, how, c) -> Built:
    groups = {m.split("/")[-1]: tt.series(t, run_id, m) for m in sorted(pd.unique(t["metric"]))
              if str(m).startswith(COV + "/") and len(tt.series(t, run_id, m))}
    ncols = 3 if groups else 2
    fig, axes = new_grid(1, ncols, columns=2, panel_aspect=0.95 if ncols == 2 else 1.1, extra_height=1.0)
    label = "-ΔH (measured)" if how == "measured" else "-ΔH = -(H_{k+1} - H_k)"
    plot_cov_vs_entropy_change(both.index, both["cov"], both["dh"], ax=axes[0, 0], title="Over training",
                               delta_label=label)
    plot_cov_scatter(both["cov"], both["dh"], ax=axes[0, 1], title="Per step", c=c)
    if groups:
        plot_cov_by_difficulty(groups, ax=axes[0, 2], title="By prompt accuracy")
    fig.suptitle(f"{run_id}: covariance of log-probability and advantage vs the entropy change",
                 fontsize=fs("title"))
    what = "the measured entropy change of the step's update" if how == "measured" else \
        "H_{k+1} - H_k of the logged entropy"
    return Built(f"covariance_vs_entropy_change_{_slug(run_id)}", fig,
                 f"{run_id}: response-level covariance between length-normalised log-probability and advantage, "
                 f"per step, against minus the entropy change ({what}); Theorem 1 predicts they move together "
                 "(-ΔH ≈ η·Cov). Left: over training, each on its own axis with zero aligned; middle: per step, with "
                 "the least-squares line and Pearson r with its 95 % interval (steps treated as independent)"
                 + ("; right: the covariance per prompt-difficulty group." if groups else
                    ". The covariance by prompt difficulty (paper Fig. 8, right) needs "
                    f"'{COV}/<group>' metrics, which this run does not log.") + " Paper Fig. 8.",
                 title=f"Covariance vs entropy change, {run_id}")


def _covariance_all(t, pairs, styles) -> Built:
    groups, labels = run_labels(t, list(pairs))
    rows = []
    for family, members in groups.items():
        for r in members:
            both, _ = pairs[r]
            rows.append({"label": labels[r], "family": family, "color": styles.color(r), "n": len(both),
                         "r": correlation(both["cov"], -both["dh"]), "positive": float(np.mean(both["cov"] > 0))})
    ax = plot_correlations(rows, title="Cov(log p, A) vs -ΔH: correlation per run")
    return Built("covariance_vs_entropy_change_all_runs", ax.figure,
                 f"For each of {len(rows)} runs, the Pearson correlation between the response-level covariance and "
                 "minus the entropy change over its steps, with a 95 % interval (Fisher z, steps treated as "
                 "independent), and the share of steps where the covariance is positive. Theorem 1 predicts a "
                 "positive correlation.", title="Does the covariance track the entropy change? Every run")


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
    if labels:
        short = {r: labels.get(r, short[r]) for r in runs}
    styles = run_styles(t)
    looks = {r: styles.line(r) for r in runs}
    fig = plot_interventions(t, metric, run_ids=runs, labels=short, title=title, smooth=smooth,
                             accuracy_label=metric_label(metric) if len(set(metric_of.values())) == 1 else None,
                             groups=groups if len(groups) > 1 else None, looks=looks, metric_of=metric_of)
    return [Built(name, fig, f"Policy entropy and score over training for {len(runs)} runs"
                             + (f", one row per model ({len(groups)} rows)" if len(groups) > 1 else "")
                             + "; final values at the end of each line and in the legend; each run in its colour "
                               "and line style (the same in every figure). Paper Figs. 9-13 (interventions)."
                             + focus_note,
                  title=title or f"Entropy and score over training, {len(runs)} runs")]


def table1_figure(summary: dict, **_) -> list[Built]:
    """Paper Table 1 from the probe summary, next to the paper's numbers."""
    if not summary.get("table1"):
        raise Skipped("table1: the probe summary has no 'table1'")
    ax = plot_table1(summary["table1"], label=summary.get("label", "this probe (whole batch)"),
                     reference=summary.get("table1_paper") or PAPER_TABLE1, n_tokens=summary.get("n_tokens"))
    return [Built("table1_covariance_top_tokens", ax.figure,
                  "Mean token covariance over the top fraction of tokens ranked by covariance (paper Table 1): "
                  "a few tokens carry most of it. Under each fraction, how many tokens it holds in this batch "
                  "(max(1, floor(fraction × tokens))): in a small batch the smallest fractions are one or two "
                  "tokens, not a tail average.", title="Table 1: covariance of the top tokens, next to the paper's")]


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
