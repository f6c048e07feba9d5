"""Paper Fig. 7: coefficients a and b against model size, log-linear in N.

Inputs are plain frames:

- ``sizes``: one row per fitted run (several seeds of a size are several rows) with
  ``n_params`` (non-embedding parameter count), the fitted coefficient columns (``a``,
  ``b``, optionally ``ceiling``), optional standard errors ``a_err`` ..., optional
  ``label`` (the model name) and a boolean ``held_out`` for the runs the size law was *not*
  fitted on (drawn as stars; the mean of their size is compared with the prediction);
- ``curve`` (optional): the size law evaluated on a grid of ``n_params`` with columns
  ``a``, ``a_lo``, ``a_hi`` (prediction band), the same for ``b`` / ``ceiling``;
- ``equation`` (optional): ``{coef: (slope, intercept)}`` of ``coef = slope*log10 N + intercept``.

The y range is set by the points, the fitted line and the held-out prediction (padded by
15 %), not by the prediction band: with few runs the t band can be far wider than the data,
so it is clipped by the axes and its legend entry says so.

What a larger model will reach: :func:`plot_final_score`, which
:meth:`entropylaw.fit.size_series.ScaleResult.plot` draws with. This module imports
matplotlib, numpy, pandas and the figure style only, never :mod:`entropylaw.fit` (the
builders that fit are in :mod:`entropylaw.figure_sets.comparisons`).

>>> import numpy as np, pandas as pd
>>> sizes = pd.DataFrame({"n_params": [1e8, 1e8, 4e8, 4e8, 1.6e9], "a": [0.30, 0.31, 0.25, 0.26, 0.20],
...                       "held_out": [False, False, False, False, True]})
>>> ax = plot_coefficient(sizes, "a", equation={"a": (-0.036, 0.96)})
>>> ax.get_xscale(), ax.get_xlabel()
('log', 'parameters N (non-embedding, log)')
>>> lo, hi = ax.get_ylim()
>>> bool(lo < 0.20 and hi > 0.31 and hi - lo < 0.2)
True
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from entropylaw.draw.style import color, fit_text, fmt, fs, legend_under, new_axes, new_grid

NAMES = {"a": "coefficient a (score per e^H)", "b": "coefficient b (score)",
         "ceiling": "ceiling b - a (score at H = 0)"}
PAD = 0.15  # fraction of the data's y span added above and below



def size_kind(runs) -> str:
    """What the size axis counts: non-embedding parameters, total where a run has no such
    count (its ``size_kind``), or both."""
    kinds = set(pd.DataFrame(runs).get("size_kind", pd.Series(dtype=object)).dropna())
    if kinds == {"total"}:
        return "total"
    return "non-embedding; total where unknown" if "total" in kinds else "non-embedding"

def held_out_summary(sizes: pd.DataFrame, coef: str, curve: pd.DataFrame | None) -> list[dict]:
    """Per held-out size: observed mean over its runs, the size law's prediction, the error.

    ``error = predicted - observed`` (negative: the model did better than predicted).
    """
    held = _held(sizes)
    out = []
    for size, rows in sizes[held].groupby("n_params", sort=True):
        row = {"n_params": float(size), "observed": float(rows[coef].mean()), "n_runs": len(rows),
               "label": str(rows["label"].iloc[0]) if "label" in rows and rows["label"].iloc[0] else ""}
        if curve is not None and coef in curve:
            c = curve.sort_values("n_params")
            # the curve is linear in log N, so interpolating in log N is exact
            row["predicted"] = float(np.interp(np.log(size), np.log(c["n_params"]), c[coef]))
            row["error"] = row["predicted"] - row["observed"]
        out.append(row)
    return out


def plot_coefficient(sizes: pd.DataFrame, coef: str, curve: pd.DataFrame | None = None,
                     equation: Mapping[str, Sequence[float]] | None = None, ax=None, i_color: int = 0):
    """One coefficient vs N (log x): per-run points, the size law, its band, the held-out runs."""
    fig, ax = new_axes(ax)
    c = color(i_color)
    held = _held(sizes)
    used, out = sizes[~held], sizes[held]
    err = f"{coef}_err"
    ys = list(sizes[coef].astype(float))  # what the y range must show
    band = None
    if curve is not None and coef in curve:
        curve = curve.sort_values("n_params")
        label = "size law"
        if equation and coef in equation:
            slope, intercept = equation[coef]
            label = f"{coef} = {fmt(slope)}·log10 N {'+' if intercept >= 0 else '-'} {fmt(abs(intercept))}"
        ax.plot(curve["n_params"], curve[coef], color=c, lw=1.8, label=label)
        ys += list(curve[coef].astype(float))
        # two sizes fit a line exactly: the law gives no interval, and no band is said
        if f"{coef}_lo" in curve and f"{coef}_hi" in curve and np.isfinite(curve[f"{coef}_lo"]).any():
            band = ax.fill_between(curve["n_params"], curve[f"{coef}_lo"], curve[f"{coef}_hi"], color=c,
                                   alpha=0.15, lw=0, label="95 % prediction band")
    n_sizes = used["n_params"].nunique()
    ax.errorbar(used["n_params"], used[coef], yerr=_errors(used, err), fmt="o", color=c, ms=5.5, capsize=3,
                alpha=0.9, label=f"per run ({len(used)} runs, {n_sizes} sizes)", zorder=3)
    if "label" in used:
        for (size, name), rows in used.groupby(["n_params", "label"], sort=True):
            if name:
                ax.annotate(str(name), (size, rows[coef].max()), xytext=(5, 4), textcoords="offset points",
                            fontsize=fs("small"), color="0.3")
    summary = held_out_summary(sizes, coef, curve)
    predicted_label = "prediction for the held-out size"
    if len(out):
        name = summary[0]["label"] if len(summary) == 1 else ""
        ax.errorbar(out["n_params"], out[coef], yerr=_errors(out, err), fmt="*", color="black", ms=12,
                    mfc="white", capsize=3, zorder=4,
                    label=f"held out{(' ' + name) if name else ''} ({len(out)} run{'s' if len(out) > 1 else ''})")
    for row in summary:
        if "predicted" not in row:
            continue
        ys.append(row["predicted"])
        ax.plot([row["n_params"]], [row["predicted"]], marker="D", color=c, ms=6, ls="none", zorder=4,
                label=predicted_label)
        predicted_label = None  # one legend entry however many held-out sizes
    lo, hi = data_ylim(ys)
    ax.set_ylim(lo, hi)
    if band is not None and (curve[f"{coef}_lo"].min() < lo or curve[f"{coef}_hi"].max() > hi):
        band.set_label("95 % prediction band (cut)")
    ax.set_xscale("log")
    ax.set_xlabel(f"parameters N ({size_kind(sizes)}, log)")
    ax.set_ylabel(NAMES.get(coef, coef))
    # below the panel, headed by the size law's numbers: inside, they would cover the points
    lines = []
    if equation and coef in equation:
        slope, intercept = equation[coef]
        lines = [f"slope {fmt(slope)} per decade of N", f"intercept {fmt(intercept)} (at N = 1)",
                 # the size law takes each size as one point (the mean of its runs): its dof are the sizes'
                 f"fit: {len(used)} runs of {n_sizes} sizes, {n_sizes - 2} dof"]
    for row in summary:
        if "predicted" in row:
            lines.append(f"held out: observed {fmt(row['observed'])}"
                         + (f" (mean of {row['n_runs']})" if row["n_runs"] > 1 else ""))
            lines.append(f"predicted {fmt(row['predicted'])}, error {fmt(row['error'])}")
    handles, labels = ax.get_legend_handles_labels()
    legend_under(ax, handles, labels, ncol=1, title="\n".join(lines) or None, alignment="left")
    return ax


def data_ylim(values, pad: float = PAD) -> tuple[float, float]:
    """The finite values' range padded by ``pad`` of its span on each side (a small span if flat)."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    lo, hi = float(v.min()), float(v.max())
    span = hi - lo if hi > lo else max(abs(hi), 1.0) * 0.1
    return lo - pad * span, hi + pad * span


def plot_size_law(sizes: pd.DataFrame, curve: pd.DataFrame | None = None,
                  equation: Mapping[str, Sequence[float]] | None = None, coefs: Sequence[str] | None = None,
                  title: str | None = None):
    """A figure with one panel per coefficient (a, b and, when given, the ceiling)."""
    coefs = list(coefs or [c for c in ("a", "b", "ceiling") if c in sizes])
    fig, axes = new_grid(1, len(coefs), columns=2, panel_aspect=0.95, extra_height=0.5 + 16 * 1.3 * fs("small") / 72)
    for i, coef in enumerate(coefs):
        plot_coefficient(sizes, coef, curve=curve, equation=equation, ax=axes[0, i], i_color=i)
    fig.suptitle(fit_text(title or "Law coefficients vs model size", fig.get_figwidth() * 72 - 20, fs("title")),
                 fontsize=fs("title"))
    return fig


def _held(sizes: pd.DataFrame) -> pd.Series:
    if "held_out" in sizes:
        return sizes["held_out"].astype(bool)
    return pd.Series(False, index=sizes.index)


def _errors(rows: pd.DataFrame, err: str):
    if err not in rows:
        return None
    e = rows[err].astype(float).to_numpy()
    return np.where(np.isfinite(e), e, 0.0) if np.isfinite(e).any() else None


def _line_text(line: dict) -> str:
    """``0.889 - 0.0209 log10 N`` from a size law's line (``intercept``, ``slope``)."""
    return f"{line['intercept']:.4g} {'-' if line['slope'] < 0 else '+'} {abs(line['slope']):.3g} log10 N"


def _size_name(n: float) -> str:
    return f"{n / 1e9:.3g}B" if n >= 1e9 else f"{n / 1e6:.3g}M"


def default_predictions(sizes) -> list[float]:
    """Sizes to predict on a figure: 32B and 72B (the sizes users ask about) where they lie
    above the series and within 10 times its largest size; else 2.5 and 5 times the largest."""
    top = float(np.max(sizes))
    canon = [n for n in (32e9, 72e9) if top < n <= 10 * top]
    return canon if len(canon) == 2 else [2.5 * top, 5 * top]


def plot_final_score(res, ax=None, predict: Sequence[float] | None = None, styles=None, labels=None):
    """What will a larger size reach? Each size's final score (its runs' mean; every run a
    point), the final-score law with its 90 % band over the sizes and the predictions, the
    predicted sizes with their intervals, and the numbers under the panel; ``labels``: each
    run's name in the legend (run id -> label; default its id)."""
    import textwrap

    fig, ax = new_axes(ax, columns=2, aspect=0.5)
    law = res.score_law
    runs = res.runs
    lo_b, hi_b = res.bounds
    for i, r in enumerate(runs.itertuples(index=False)):
        c = styles.color(r.run_id) if styles is not None else color(i)
        m = styles.marker(r.run_id) if styles is not None else "o"  # past 8 runs a colour repeats: the marker differs
        ax.plot([r.n_params], [r.final_score], m, color=c, ms=6.5, zorder=3, ls="none",
                label=f"{(labels or {}).get(r.run_id, r.run_id)} ({r.final_score:.3f})")
    lines = []
    if predict is None:
        predict = default_predictions(runs["n_params"])
    if law is None:
        lines.append(f"final-score law refused: {res.score_refused}")
    else:
        top = max([*law.sizes_, *predict]) * 1.3
        grid = np.geomspace(min(law.sizes_.min(), *predict) / 1.3, top, 80)
        cv = law.curve(grid)
        ax.plot(cv["n_params"], cv[law.what], color="0.2", lw=1.6, label=f"final-score law ({law.combination()})")
        if np.isfinite(cv[f"{law.what}_lo"]).any():
            ax.fill_between(cv["n_params"], cv[f"{law.what}_lo"], cv[f"{law.what}_hi"], color="0.2", alpha=0.12,
                            lw=0, label=f"{100 * law.conf:g} % prediction band")
        pred_label = "predicted"
        for k, n in enumerate(predict):
            p = res.predict(n)  # the result's own reading of the size (a family's non-embedding count)
            y, x = p["final_score"], p["n_params"]
            err = None if p["final_score_lo"] is None else [[y - p["final_score_lo"]], [p["final_score_hi"] - y]]
            ax.errorbar([x], [y], yerr=err, fmt="D", color="black", mfc="white", ms=7, capsize=4, zorder=4,
                        label=pred_label)
            pred_label = None
            iv = "" if err is None else f" [{p['final_score_lo']:.3f}, {p['final_score_hi']:.3f}]"
            # beside the marker, not above it: a score near the top would put the name over the title
            ax.annotate(_size_name(n), (x, y), xytext=(7, -2), textcoords="offset points", ha="left",
                        va="top", fontsize=fs("small"))
            said = "; ".join(x for x in (p.get("size_note"), p.get("note")) if x)
            lines.append(f"{_size_name(n)}: {y:.3f}{iv}" + (f" ({said})" if said else ""))
        lines.append(f"forms combined: {law.combination()}; the band widens with the decades beyond the largest "
                     "size fitted (forward-chained error, floored)")
        back = law.backtest()
        if back:
            lines.append(f"forward chaining (fit the smaller sizes, predict the larger): {sum(b['covered'] for b in back)}"
                         f" of {len(back)} held-out sizes inside the {100 * law.conf:g} % interval")
    law_c = res.coefficient_law  # its numbers, not a bare "fitted": this figure may be the only one drawn
    lines.append("coefficient law (a, b vs log10 N): " + (
        f"refused: {res.coefficient_refused}" if law_c is None else
        f"over {len(law_c.labels_)} runs the law describes, ceiling = " + _line_text(law_c.lines_["ceiling"])
        + ", a = " + _line_text(law_c.lines_["a"]) + ", b = " + _line_text(law_c.lines_["b"])))
    lines += [n for n in res.notes if n.startswith("the sizes mix")]  # what the axis holds, under it
    ax.set_xscale("log")
    span = hi_b - lo_b
    ax.set_ylim(max(lo_b - 0.01 * span, runs["final_score"].min() - 0.15 * span), hi_b + 0.01 * span)
    ax.set_xlabel(f"parameters N ({size_kind(runs)}, log scale)")
    ax.set_ylabel("final score (fraction)" if (lo_b, hi_b) == (0.0, 1.0) else "final score (reward)")
    ax.set_title(f"What will a larger model reach? Final {res.target_key} vs model size", fontsize=fs("title"))
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    wrapped = [w for t in lines for w in textwrap.wrap(t, 110, subsequent_indent="    ")]
    legend_under(ax, handles, labels, ncol=2, alignment="left", title="\n".join(wrapped))
    return ax
