"""Paper Fig. 8: response-level covariance tracks the step-wise entropy change.

Left: per step, the response-level covariance Cov_i(mean_t log p(y_i,t), A_i) averaged
over prompts (SPEC section 4, paper Eq. 9), and minus the entropy change of that step,
-(H_{k+1} - H_k). Theorem 1 says the second is about eta times the first, so the two
curves have their own y axes; their Pearson correlation is written on the plot.
Right: the covariance per prompt-difficulty group (groups by the prompt's accuracy).

>>> import numpy as np
>>> steps = np.arange(20)
>>> cov = np.exp(-steps / 5)
>>> ax = plot_cov_vs_entropy_change(steps, cov, -0.1 * cov)
>>> ax.get_ylabel()
'response-level Cov(log p, A)'
>>> round(correlation(cov, 0.1 * cov), 6)
1.0
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from entropylaw.plots.common import as_curves, pct
from entropylaw.plots.style import STEP_LABEL, color, fmt, new_axes


def correlation(x, y) -> float:
    """Pearson correlation of the finite pairs (NaN with fewer than 3)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.std(x[ok]) == 0 or np.std(y[ok]) == 0:
        return float("nan")
    return float(np.corrcoef(x[ok], y[ok])[0, 1])


def plot_cov_vs_entropy_change(steps, cov, delta_h, ax=None, title: str | None = None,
                               delta_label: str = "-ΔH = -(H_{k+1} - H_k)"):
    """Covariance (left axis) and minus the entropy change (right axis) per step."""
    fig, ax = new_axes(ax)
    steps, cov, delta_h = (np.asarray(v, float) for v in (steps, cov, delta_h))
    neg = -delta_h
    line_cov, = ax.plot(steps, cov, color=color(0), lw=1.8, label="Cov(log p, A), response level")
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xlabel(STEP_LABEL)
    ax.set_ylabel("response-level Cov(log p, A)")
    ax.tick_params(axis="y", colors=color(0))
    right = ax.twinx()
    right.spines["top"].set_visible(False)
    line_dh, = right.plot(steps, neg, color=color(1), lw=1.4, ls="--", label=delta_label)
    right.set_ylabel(f"{delta_label} (nats)")
    right.tick_params(axis="y", colors=color(1), labelsize=9)
    _align_zero(ax, right)
    r = correlation(cov, neg)
    finite = cov[np.isfinite(cov)]
    positive = pct(float(np.mean(finite > 0))) if len(finite) else "n/a"
    ax.legend(handles=[line_cov, line_dh], loc="upper right", title_fontsize=8.5,
              title=f"Pearson r = {fmt(r)} over {len(finite)} steps\nCov > 0 at {positive} of steps")
    ax.set_title(title or "Covariance vs entropy change per step")
    return ax


def _align_zero(left, right) -> None:
    """Put zero at the same height on both axes so signs compare at a glance."""
    lo1, hi1 = left.get_ylim()
    lo2, hi2 = right.get_ylim()
    frac = max(hi1 / (hi1 - lo1) if hi1 > 0 else 0, hi2 / (hi2 - lo2) if hi2 > 0 else 0, 0.05)
    frac = min(frac, 0.95)
    for axis, lo, hi in ((left, lo1, hi1), (right, lo2, hi2)):
        span = max(hi / frac if hi > 0 else 0, -lo / (1 - frac) if lo < 0 else 0, 1e-12)
        axis.set_ylim(-(1 - frac) * span, frac * span)


def plot_cov_by_difficulty(groups, ax=None, title: str | None = None, metric: str | None = None):
    """One covariance curve per prompt-difficulty group (``label -> Series(step -> cov)``)."""
    fig, ax = new_axes(ax)
    curves = as_curves(groups, metric)
    for i, (label, s) in enumerate(curves.items()):
        ax.plot(s.index, s.to_numpy(), color=color(i), lw=1.6, label=f"{label} (mean {fmt(float(s.mean()))})")
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xlabel(STEP_LABEL)
    ax.set_ylabel("response-level Cov(log p, A)")
    ax.legend(loc="upper right", title="prompt accuracy group")
    ax.set_title(title or "Covariance by prompt difficulty")
    return ax


def entropy_change(entropy: pd.Series) -> pd.Series:
    """H_{k+1} - H_k on consecutive logged steps, indexed by step k (the step before).

    >>> [round(v, 3) for v in entropy_change(pd.Series([1.0, 0.7, 0.6], index=[0, 1, 2]))]
    [-0.3, -0.1]
    """
    s = entropy.sort_index()
    diff = s.shift(-1) - s
    return diff.iloc[:-1]
