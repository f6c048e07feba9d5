"""Paper Table 1 and the entropy-change ladder, from the probe's summary.

- Table 1: mean token covariance over the top fraction of tokens (by covariance), as a
  bar chart on a log y axis next to the paper's Qwen2.5-7B step-1 numbers, and as rows.
  Input: ``{fraction: mean cov}``; a fraction is a number in (0, 1] or a string such as
  ``"0.0002"``, ``"top 0.02%"``, ``"all"``.
- Ladder: how well each first-order estimator of the entropy change (Lemma 1, Theorems
  1-2, the sampled-token form, STEER ...) predicts the measured change. Input:
  ``{estimator: {"pearson", "spearman", "sign_agreement", "slope", "mean_error",
  "predicted_mean"}}``, the measured batch-mean change and optionally the probe's
  ``eta_squared_check`` (Lemma 1's error at several step sizes). Only Lemma 1 is drawn on
  the measured ΔH scale; the tabular estimators are compared by correlation and sign.

:func:`table1_figure` and :func:`ladder_figure` build them from the probe's summary.

>>> t1 = parse_table1({"top 0.02%": 5.0, "0.002": 3.0, "all": 0.01})
>>> t1
{0.0002: 5.0, 0.002: 3.0, 1.0: 0.01}
>>> fraction_label(0.0002), fraction_label(1.0)
('top 0.02 %', 'all')
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

import numpy as np
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from entropylaw.figure_sets.base import Built, Skipped
from entropylaw.draw.style import (color, current, fig_width, fmt, fs, legend_below, legend_under, new_axes,
                                      new_grid)
from entropylaw.results.values import as_float

# SPEC section 5: paper Table 1 (Qwen2.5-7B, training step 1), mean cov of the top fraction
PAPER_TABLE1 = {0.0002: 5.654, 0.002: 3.112, 0.02: 1.385, 0.2: 0.351, 0.5: 0.152, 1.0: 0.003}
# estimators whose ΔH is on the measured scale (data/probe/README.md): Lemma 1 uses the actual
# logit change; the tabular ones take η as a step on the logits, not the parameters
ON_SCALE = ("lemma1",)
LADDER_COLUMNS = ["pearson", "spearman", "sign_agreement", "slope", "mean_error"]


def parse_fraction(key) -> float:
    """``0.0002``, ``"0.0002"``, ``"top 0.02%"``, ``"all"`` -> a fraction in (0, 1]."""
    if isinstance(key, (int, float)):
        return float(key)
    text = str(key).strip().lower()
    if text in ("all", "1", "1.0", "100%"):
        return 1.0
    match = re.search(r"([0-9]*\.?[0-9]+(?:e-?[0-9]+)?)\s*(%?)", text)
    if not match:
        raise ValueError(f"cannot read a fraction from {key!r} (expected e.g. 0.002, 'top 0.2%', 'all')")
    value = float(match.group(1))
    return value / 100 if match.group(2) else value


def parse_table1(table1: Mapping) -> dict[float, float]:
    """Fractions -> mean covariance, sorted from the smallest top fraction to all tokens."""
    out = {parse_fraction(k): float(v) for k, v in table1.items() if v is not None}
    return dict(sorted(out.items()))


def fraction_label(fraction: float) -> str:
    if fraction >= 1.0:
        return "all"
    return f"top {100 * fraction:g} %"


def top_count(fraction: float, n_tokens: int) -> int:
    """Tokens in the top ``fraction`` of ``n_tokens``: ``max(1, floor(fraction * n))``, the probe's rule.

    >>> top_count(0.0002, 1426), top_count(0.02, 1426), top_count(1.0, 1426)
    (1, 28, 1426)
    """
    return n_tokens if fraction >= 1.0 else max(1, int(fraction * n_tokens))


def plot_table1(table1: Mapping, ax=None, reference: Mapping | None = PAPER_TABLE1,
                reference_label: str = "paper, Qwen2.5-7B step 1", label: str = "this probe", title: str | None = None,
                n_tokens: int | None = None):
    """Grouped bars: mean covariance of the top-fraction tokens, with values written on them.

    With ``n_tokens`` (the batch's token count) each fraction says how many tokens it holds:
    in a small batch the top 0.02 % is one token, not a tail average."""
    fig, ax = new_axes(ax, columns=1, aspect=0.85)
    ours = parse_table1(table1)
    ref = parse_table1(reference) if reference else {}
    fractions = sorted(set(ours) | set(ref))
    x = np.arange(len(fractions))
    series = [(label, ours, color(0))] + ([(reference_label, ref, "0.6")] if ref else [])
    width = 0.8 / len(series)
    for j, (name, values, c) in enumerate(series):
        heights = np.array([values.get(f, np.nan) for f in fractions])
        pos = x + (j - (len(series) - 1) / 2) * width
        ax.bar(pos, np.where(heights > 0, heights, np.nan), width, color=c, label=name)
        for p, h in zip(pos, heights):
            if h == h:  # upright numbers: side by side bars are narrow
                ax.annotate(f"{h:.3g}", (p, h if h > 0 else 0), xytext=(0, 2), textcoords="offset points",
                            ha="center", va="bottom", fontsize=fs("small"), rotation=90)
    ax.set_yscale("log")
    names = [fraction_label(f).replace("top ", "") for f in fractions]
    if n_tokens:
        names = [f"{n}\n{top_count(f, int(n_tokens))} tok." for n, f in zip(names, fractions)]
    ax.set_xticks(x, names)
    ax.set_xlabel("top fraction of tokens by covariance" + (f" (of {int(n_tokens)})" if n_tokens else " (%)"))
    ax.set_ylabel("mean token Cov (nats × adv., log)")
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi * 12)  # room for the numbers above the bars and the legend
    legend_below(ax, ncol=1)
    ax.set_title(title or "Table 1: covariance sits in few tokens", fontsize=fs("title"))
    return ax


def plot_ladder(ladder: Mapping[str, Mapping[str, float]], measured: float | None = None, title: str | None = None,
                eta_check: Mapping | None = None, on_scale: Sequence[str] = ON_SCALE):
    """Per-token agreement of every estimator (left), and the batch-mean ΔH on the measured scale.

    Only the estimators in ``on_scale`` (Lemma 1: it uses the actual logit change) predict ΔH on
    the measured scale; the tabular ones take η as a step on the logits, not on the network's
    parameters, so their batch means are not drawn against the measurement: they are compared
    by correlation and sign only (left panel, and a note). When ``eta_check`` (``{"etas",
    "lemma1_mean_abs_error", "loglog_slope"}``) is given, a third panel shows Lemma 1's mean
    |error| vs the step size on log-log axes: a slope of 2 means the error is second order,
    i.e. Lemma 1 is exact to first order.
    """
    names = list(ladder)
    check = _eta_check(eta_check)
    n_panels = 3 if check else 2
    # a row of panels on screen; two per row in the paper style, where three would be too narrow
    ncols = 2 if current().name == "paper" else n_panels
    nrows = -(-n_panels // ncols)
    # tall enough that the three bars of every estimator keep their numbers apart
    need = (3 * len(names) * 1.25 * fs("small") / 72 + 1.8) / (fig_width(2) / ncols)  # + title, labels, legend
    fig, axes = new_grid(nrows, ncols, columns=2, panel_aspect=max(0.75, need),
                         extra_height=0.4 + nrows * 5 * fs("small") / 72)
    panels = list(axes.flat)
    for extra in panels[n_panels:]:
        extra.set_visible(False)
    _plot_agreement(panels[0], ladder, names)
    ax = panels[1]
    rows = [("measured", measured, "black")] + [(n, as_float(ladder[n].get("predicted_mean")), color(i))
                                                for i, n in enumerate(names) if n in on_scale]
    y = np.arange(len(rows))
    values = np.array([as_float(v) for _, v, _ in rows])
    ax.barh(y, np.nan_to_num(values), 0.5, color=[c for _, _, c in rows])
    finite = values[np.isfinite(values)]
    lo = min(0.0, finite.min()) if len(finite) else -1.0
    hi = max(0.0, finite.max()) if len(finite) else 1.0
    span = (hi - lo) or 1.0
    for p, (name, v, _) in zip(y, rows):
        text = f"{name} {fmt(v, 4) if v == v else 'n/a'}"
        if name != "measured" and v == v and measured is not None and measured == measured:
            text += f"\n(error {fmt(v - measured, 4)}, {100 * (v - measured) / abs(measured):+.0f} %)"
        if v == v and abs(v) > 0.45 * span:  # long bar: write inside it, centred
            ax.annotate(text, (v / 2, p), ha="center", va="center", fontsize=fs("small"), color="white",
                        weight="bold")
        else:  # short bar: just past its tip
            side = -1 if (v == v and v < 0) else 1
            ax.annotate(text, (v if v == v else 0, p), xytext=(4 * side, 0), textcoords="offset points",
                        ha="right" if side < 0 else "left", va="center", fontsize=fs("small"))
    ax.set_xlim(lo - 0.08 * span, hi + 0.08 * span)
    ax.set_yticks(y, [name for name, _, _ in rows])
    ax.invert_yaxis()
    ax.axvline(0, color="0.5", lw=0.8)
    ax.set_xlabel(f"batch-mean ΔH ({_scaled_ticks(ax.xaxis, finite)}nats)")
    ax.set_title("Batch mean: measured, Lemma 1")
    # the tabular estimators (η a step on the logits) are not on this scale: the caption says so
    if check:
        _plot_eta_check(panels[2], check)
    fig.suptitle(title or "Entropy-change ladder: first-order estimates vs measurement", fontsize=fs("title"))
    return fig


def _plot_agreement(ax, ladder, names):
    y = np.arange(len(names))
    keys = [("pearson", "Pearson r"), ("spearman", "Spearman ρ"), ("sign_agreement", "sign agreement")]
    h = 0.8 / len(keys)
    for j, (key, text) in enumerate(keys):
        values = np.array([as_float(ladder[n].get(key)) for n in names])
        pos = y + (j - 1) * h
        ax.barh(pos, values, h, color=color(j), label=text)
        for p, v in zip(pos, values):
            if v == v:
                ax.annotate(fmt(v, 2), (max(v, 0), p), xytext=(2, 0), textcoords="offset points",
                            va="center", fontsize=fs("small"))
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlim(min(-0.05, ax.get_xlim()[0]), 1.15)
    ax.axvline(0, color="0.5", lw=0.8)
    ax.set_xlabel("agreement with the measured per-token ΔH (unitless)")
    legend_under(ax, *ax.get_legend_handles_labels(), ncol=1)
    ax.set_title("Per-token agreement")


def _plot_eta_check(ax, check):
    etas, errors = check["etas"], check["errors"]
    slope, icpt = np.polyfit(np.log(etas), np.log(errors), 1)
    ax.loglog(etas, errors, "o", color=color(0), ms=6, label="Lemma 1 mean |error| per token", zorder=3)
    grid = np.geomspace(etas.min() / 1.3, etas.max() * 1.3, 20)
    # reference: slope 2 through the smallest step's point, drawn wide underneath (it may coincide)
    ref = errors[np.argmin(etas)] * (grid / etas.min()) ** 2
    ax.loglog(grid, ref, color="0.6", lw=4, alpha=0.45, label="slope 2 (error ∝ η²)", zorder=1)
    ax.loglog(grid, np.exp(icpt) * grid ** slope, color=color(0), lw=1.2, label=f"fitted slope {slope:.2f}",
              zorder=2)
    # label the steps themselves: log minor tick labels (2x10^-3, 3x10^-3 ...) collide
    ax.set_xticks(etas, [f"{e:.2g}" for e in etas])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("step size η (scaled parameter update)")
    ax.set_ylabel("|Lemma 1 − measured| (nats/token)")
    ax.set_title("Lemma 1 error vs step size")
    legend_under(ax, *ax.get_legend_handles_labels(), ncol=1,
                 title=f"log-log slope {slope:.2f}; 2 = Lemma 1 exact to first order")


def _eta_check(check) -> dict | None:
    """``{"etas", "errors"}`` as positive arrays of 2+ points, else None (nothing to draw)."""
    if not check:
        return None
    etas = np.array([as_float(v) for v in check.get("etas", [])])
    errors = np.array([as_float(v) for v in check.get("lemma1_mean_abs_error", [])])
    if len(etas) != len(errors):
        return None
    ok = np.isfinite(etas) & np.isfinite(errors) & (etas > 0) & (errors > 0)
    if ok.sum() < 2:
        return None
    return {"etas": etas[ok], "errors": errors[ok]}


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _scaled_ticks(axis, values) -> str:
    """At most 4 ticks; values below 0.01 written in units of 10^k (returned as "10⁻³ ", for
    the axis label), so each tick label is a short number and no offset text is needed."""
    axis.set_major_locator(MaxNLocator(4))
    v = np.abs(np.asarray(values, float))
    v = v[np.isfinite(v) & (v > 0)]
    k = int(np.floor(np.log10(v.max()))) if len(v) and v.max() < 0.01 else 0
    axis.set_major_formatter(FuncFormatter(lambda x, _: f"{x / 10 ** k:g}".replace("-", "−")))
    return f"10{str(k).translate(SUPERSCRIPT)} " if k else ""


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
