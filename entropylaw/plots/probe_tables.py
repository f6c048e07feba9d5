"""Paper Table 1 and the entropy-change ladder, from the probe's summary.

- Table 1: mean token covariance over the top fraction of tokens (by covariance), as a
  bar chart on a log y axis next to the paper's Qwen2.5-7B step-1 numbers, and as rows.
  Input: ``{fraction: mean cov}``; a fraction is a number in (0, 1] or a string such as
  ``"0.0002"``, ``"top 0.02%"``, ``"all"``.
- Ladder: how well each first-order estimator of the entropy change (Lemma 1, Theorems
  1-2, the sampled-token form, STEER ...) predicts the measured change. Input:
  ``{estimator: {"pearson", "spearman", "sign_agreement", "slope", "mean_error",
  "predicted_mean"}}`` and the measured batch-mean change.

>>> t1 = parse_table1({"top 0.02%": 5.0, "0.002": 3.0, "all": 0.01})
>>> t1
{0.0002: 5.0, 0.002: 3.0, 1.0: 0.01}
>>> fraction_label(0.0002), fraction_label(1.0)
('top 0.02 %', 'all')
"""

from __future__ import annotations

import re
from typing import Mapping

import numpy as np

from entropylaw.plots.style import color, fmt, new_axes, new_grid

# SPEC section 5: paper Table 1 (Qwen2.5-7B, training step 1), mean cov of the top fraction
PAPER_TABLE1 = {0.0002: 5.654, 0.002: 3.112, 0.02: 1.385, 0.2: 0.351, 0.5: 0.152, 1.0: 0.003}
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


def plot_table1(table1: Mapping, ax=None, reference: Mapping | None = PAPER_TABLE1,
                reference_label: str = "paper, Qwen2.5-7B step 1", label: str = "this probe", title: str | None = None):
    """Grouped bars: mean covariance of the top-fraction tokens, with values written on them."""
    fig, ax = new_axes(ax)
    ours = parse_table1(table1)
    ref = parse_table1(reference) if reference else {}
    fractions = sorted(set(ours) | set(ref))
    x = np.arange(len(fractions))
    series = [(label, ours, color(0))] + ([(reference_label, ref, "0.6")] if ref else [])
    width = 0.8 / len(series)
    for j, (name, values, c) in enumerate(series):
        heights = np.array([values.get(f, np.nan) for f in fractions])
        pos = x + (j - (len(series) - 1) / 2) * width
        bars = ax.bar(pos, np.where(heights > 0, heights, np.nan), width, color=c, label=name)
        for p, h in zip(pos, heights):
            if h == h:
                ax.annotate(f"{h:.3g}", (p, h if h > 0 else 0), xytext=(0, 2), textcoords="offset points",
                            ha="center", va="bottom", fontsize=7.5)
    ax.set_yscale("log")
    ax.set_xticks(x, [fraction_label(f) for f in fractions])
    ax.set_xlabel("tokens ranked by covariance (top fraction of the batch)")
    ax.set_ylabel("mean token Cov(log p, A) (nats × advantage, log scale)")
    lo, hi = ax.get_ylim()
    ax.set_ylim(lo, hi * 4)  # room for the numbers above the bars
    ax.legend(loc="upper right")
    ax.set_title(title or "Table 1: covariance is concentrated in few tokens")
    return ax


def plot_ladder(ladder: Mapping[str, Mapping[str, float]], measured: float | None = None, title: str | None = None):
    """Two panels: per-token agreement (Pearson, Spearman, sign) and the batch-mean ΔH."""
    names = list(ladder)
    fig, axes = new_grid(1, 2, figsize=(10.5, 0.5 * len(names) + 2.8))
    ax = axes[0, 0]
    y = np.arange(len(names))
    keys = [("pearson", "Pearson r"), ("spearman", "Spearman ρ"), ("sign_agreement", "sign agreement")]
    h = 0.8 / len(keys)
    for j, (key, text) in enumerate(keys):
        values = np.array([_num(ladder[n].get(key)) for n in names])
        pos = y + (j - 1) * h
        ax.barh(pos, values, h, color=color(j), label=text)
        for p, v in zip(pos, values):
            if v == v:
                ax.annotate(fmt(v, 2), (max(v, 0), p), xytext=(2, 0), textcoords="offset points",
                            va="center", fontsize=7)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlim(min(-0.05, ax.get_xlim()[0]), 1.15)
    ax.axvline(0, color="0.5", lw=0.8)
    ax.set_xlabel("agreement with the measured per-token ΔH (unitless)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3)
    ax.set_title("Per-token agreement")

    ax = axes[0, 1]
    predicted = np.array([_num(ladder[n].get("predicted_mean")) for n in names])
    ax.scatter(predicted, y, color=color(0), zorder=3, label="predicted batch-mean ΔH")
    for p, v in zip(y, predicted):
        if v == v:
            ax.annotate(fmt(v), (v, p), xytext=(5, 4), textcoords="offset points", fontsize=7.5)
    if measured is not None and measured == measured:
        ax.axvline(measured, color="black", lw=1.5, ls="--", label=f"measured ΔH = {fmt(measured)}")
    ax.axvline(0, color="0.5", lw=0.8)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set_xlabel("batch-mean entropy change ΔH (nats)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=1)
    ax.set_title("Predicted vs measured ΔH")
    fig.suptitle(title or "Entropy-change ladder: first-order estimates vs measurement")
    return fig


def _num(value) -> float:
    """JSON null (or anything not a number) as NaN."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")
