"""Paper Fig. 8: response-level covariance tracks the step-wise entropy change.

:func:`plot_cov_vs_entropy_change`: per step, the response-level covariance
Cov_i(mean_t log p(y_i,t), A_i) averaged over prompts (SPEC section 4, paper Eq. 9), and
minus the entropy change of that step, -(H_{k+1} - H_k). Theorem 1 says the second is
about eta times the first, so the two curves have their own y axes, zero at the same
height, each scaled to use as much of its axis as the other (neither is squeezed into a
strip); their Pearson correlation is in the legend.
:func:`plot_cov_scatter`: the same pairs against each other, with the least-squares line.
:func:`plot_cov_by_difficulty`: the covariance per prompt-difficulty group.
:func:`plot_correlations`: one row per run, Pearson r with its 95 % interval (Fisher z),
for a family of runs (the report draws this, not one figure per run).

:func:`covariance_figure` builds them from a tidy run table. The metric names it reads
(the lab writes them; any run that logs them works): ``cov/response_level`` (paper Eq. 9,
averaged over the step's prompts), optionally ``cov/response_level/<group>`` per
prompt-difficulty group, and the measured entropy change of the update
``actor/entropy_delta`` (else H_{k+1} - H_k from the logged entropy).

>>> import numpy as np
>>> steps = np.arange(20)
>>> cov = np.exp(-steps / 5)
>>> ax = plot_cov_vs_entropy_change(steps, cov, -0.1 * cov)
>>> ax.get_ylabel()
'Cov(log p, A) (nats × adv.)'
>>> round(correlation(cov, 0.1 * cov), 6)
1.0
>>> [round(v, 3) for v in correlation_ci(0.5, 103)]
[0.339, 0.632]
>>> from entropylaw import table
>>> recs = [(s, "entropy", 1.0 / (s + 1)) for s in range(10)]
>>> recs += [(s, "cov/response_level", 0.1 / (s + 1) ** 2) for s in range(10)]
>>> [b.name for b in covariance_figure(table.from_records(recs, run_id="lab"))]
['covariance_vs_entropy_change_lab']
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import entropylaw.table as tt
from entropylaw.terminal import count
from entropylaw.figure_sets.base import Built, Skipped, slug
from entropylaw.figure_sets.common import as_curves, forest_axes, pct
from entropylaw.draw.style import STEP_LABEL, color, fmt, fs, legend_below, new_axes, new_grid
from entropylaw.table.labels import is_intervention, run_labels
from entropylaw.results.runs import run_styles

COV_LABEL = "Cov(log p, A) (nats × adv.)"
COV = "cov/response_level"
DELTA = "actor/entropy_delta"


def correlation(x, y) -> float:
    """Pearson correlation of the finite pairs (NaN with fewer than 3)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.std(x[ok]) == 0 or np.std(y[ok]) == 0:
        return float("nan")
    return float(np.corrcoef(x[ok], y[ok])[0, 1])


def correlation_ci(r: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """95 % interval of a Pearson r from n independent pairs (Fisher's z); NaN with n < 4."""
    if not np.isfinite(r) or n < 4:
        return float("nan"), float("nan")
    centre, half = np.arctanh(np.clip(r, -0.999999, 0.999999)), z / np.sqrt(n - 3)
    return float(np.tanh(centre - half)), float(np.tanh(centre + half))


def plot_cov_vs_entropy_change(steps, cov, delta_h, ax=None, title: str | None = None,
                               delta_label: str = "-ΔH = -(H_{k+1} - H_k)"):
    """Covariance (left axis) and minus the entropy change (right axis) per step."""
    fig, ax = new_axes(ax)
    steps, cov, delta_h = (np.asarray(v, float) for v in (steps, cov, delta_h))
    neg = -delta_h
    line_cov, = ax.plot(steps, cov, color=color(0), lw=1.3, label="Cov(log p, A), response level")
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xlabel(STEP_LABEL)
    ax.set_ylabel(COV_LABEL)
    ax.tick_params(axis="y", colors=color(0))
    right = ax.twinx()
    right.spines["top"].set_visible(False)
    right.grid(False)
    line_dh, = right.plot(steps, neg, color=color(1), lw=1.1, ls="--", label=delta_label)
    right.set_ylabel(f"{delta_label} (nats)")
    right.tick_params(axis="y", colors=color(1), labelsize=fs("small"))
    align_zero(ax, right, cov, neg)
    r = correlation(cov, neg)
    finite = cov[np.isfinite(cov)]
    positive = pct(float(np.mean(finite > 0))) if len(finite) else "n/a"
    legend_below(ax, [line_cov, line_dh], ncol=1,
                 title=f"Pearson r = {fmt(r)} over {len(finite)} steps\nCov > 0 at {positive} of steps")
    ax.set_title(title or "Covariance vs entropy change per step", fontsize=fs("title"))
    return ax


def align_zero(left, right, y_left, y_right, pad: float = 0.06) -> None:
    """y limits with zero at the same height on both axes, chosen so that the curve that
    fills its axis least still fills as much as it can (no curve squeezed into a strip)."""
    ranges = []
    for y in (y_left, y_right):
        y = np.asarray(y, float)
        y = y[np.isfinite(y)]
        lo, hi = (min(float(y.min()), 0.0), max(float(y.max()), 0.0)) if len(y) else (-1.0, 1.0)
        span = hi - lo or 1.0
        ranges.append((lo - pad * span * (lo < 0), hi + pad * span))
    best = None
    for frac in np.linspace(0.02, 0.98, 97):  # share of the axis above zero
        spans = [max(hi / frac, -lo / (1 - frac), 1e-12) for lo, hi in ranges]
        fill = min((hi - lo) / s for (lo, hi), s in zip(ranges, spans))
        if best is None or fill > best[0] + 1e-9:
            best = (fill, frac, spans)
    _, frac, spans = best
    for axis, span in zip((left, right), spans):
        axis.set_ylim(-(1 - frac) * span, frac * span)


def plot_cov_scatter(cov, delta_h, ax=None, title: str | None = None, c: str | None = None):
    """-ΔH against the covariance, one point per step, with the least-squares line."""
    fig, ax = new_axes(ax)
    x, y = np.asarray(cov, float), -np.asarray(delta_h, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    ax.scatter(x, y, s=9, color=c or color(0), alpha=0.6, zorder=3, label=f"one step ({len(x)} steps)")
    if len(x) >= 3 and np.std(x) > 0:
        slope, icpt = np.polyfit(x, y, 1)
        grid = np.linspace(x.min(), x.max(), 2)
        ax.plot(grid, slope * grid + icpt, color="black", lw=1.2,
                label=f"least squares: slope {fmt(slope)} (η in Theorem 1)")
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xlabel(COV_LABEL)
    ax.set_ylabel("-ΔH of the step (nats)")
    r = correlation(x, y)
    lo, hi = correlation_ci(r, len(x))
    legend_below(ax, ncol=1, title=f"Pearson r = {fmt(r)} [{fmt(lo)}, {fmt(hi)}]")
    ax.set_title(title or "Entropy change vs covariance, per step", fontsize=fs("title"))
    return ax


# the lab's bins of a prompt group's accuracy (entropylaw.lab.metrics.DIFFICULTY_BINS)
DIFFICULTY_LABELS = {"hard": "hard: acc < 1/3", "medium": "medium", "easy": "easy: acc > 2/3"}


def plot_cov_by_difficulty(groups, ax=None, title: str | None = None, metric: str | None = None):
    """One covariance curve per prompt-difficulty group (``label -> Series(step -> cov)``)."""
    fig, ax = new_axes(ax)
    curves = as_curves(groups, metric)
    order = [k for k in DIFFICULTY_LABELS if k in curves] + [k for k in curves if k not in DIFFICULTY_LABELS]
    smooth = max(len(s) for s in curves.values()) > 30 if curves else False
    for i, key in enumerate(order):
        s = curves[key].sort_index()
        label = f"{DIFFICULTY_LABELS.get(key, key)}, mean {fmt(float(s.mean()))}"
        if smooth:  # a bin holds few groups per step: the raw series is noise around the trend
            ax.plot(s.index, s.to_numpy(), color=color(i), lw=0.6, alpha=0.3)
            s = s.rolling(10, center=True, min_periods=3).mean()
        ax.plot(s.index, s.to_numpy(), color=color(i), lw=1.4, label=label)
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xlabel(STEP_LABEL)
    ax.set_ylabel(COV_LABEL)
    legend_below(ax, ncol=1, title="prompt accuracy bin" + ("\n(thin: per step, thick: 10-step mean)" if smooth else ""))
    ax.set_title(title or "Covariance by prompt difficulty", fontsize=fs("title"))
    return ax


def plot_correlations(rows, ax=None, title: str | None = None):
    """One row per run (``label``, ``family``, ``color``, ``r``, ``n``, ``positive``): Pearson r
    of the covariance and -ΔH with its 95 % interval, the share of steps with Cov > 0 at the right."""
    ax, ys = forest_axes(rows, ax, extra_lines=1)
    for y, row in zip(ys, rows):
        r, n = float(row.get("r", np.nan)), int(row.get("n", 0))
        lo, hi = correlation_ci(r, n)
        if np.isfinite(r):
            ax.errorbar([r], [y], xerr=[[r - lo], [hi - r]] if np.isfinite(lo) else None, fmt="o",
                        color=row.get("color", "0.2"), ms=4.5, capsize=2.5, lw=1.1, zorder=3)
        ax.text(1.03, y, f"Cov > 0: {pct(row.get('positive', np.nan))}", transform=ax.get_yaxis_transform(),
                ha="left", va="center", fontsize=fs("small"), color="0.3")
    ax.axvline(0, color="0.5", lw=0.8)
    ax.set_xlim(-1.02, 1.02)
    ax.set_xlabel("Pearson r of Cov(log p, A) and -ΔH per step (unitless)")
    ax.set_title(title or "Does the covariance track the entropy change?", fontsize=fs("title"))
    return ax


def entropy_change(entropy: pd.Series) -> pd.Series:
    """H_{k+1} - H_k on consecutive logged steps, indexed by step k (the step before).

    >>> [round(v, 3) for v in entropy_change(pd.Series([1.0, 0.7, 0.6], index=[0, 1, 2]))]
    [-0.3, -0.1]
    """
    s = entropy.sort_index()
    diff = s.shift(-1) - s
    return diff.iloc[:-1]


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
    return Built(f"covariance_vs_entropy_change_{slug(run_id)}", fig,
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
                 f"For each of {count(len(rows), 'run')}, the Pearson correlation between the response-level covariance and "
                 "minus the entropy change over its steps, with a 95 % interval (Fisher z, steps treated as "
                 "independent), and the share of steps where the covariance is positive. Theorem 1 predicts a "
                 "positive correlation.", title="Does the covariance track the entropy change? Every run")
