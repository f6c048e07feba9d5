"""The tables of the forecast backtest (analysis/bench_forecast.py): method x K pivots, the
per-kind summary (median and worst error, calibrated coverage, width), the entropy forms'
backtest on the entropy series, and the bound checks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.fit.forecast.catalog import ALL_METHODS
from entropylaw.fit.forecast.data import window_end

PAPER = "paper (observed H)"
from entropylaw.fit.forecast.names import GIVEN_PRIOR

# logit-drift with --prior = the recipe's other sizes: calibrated under the name the product reads
SIZES_PRIOR = GIVEN_PRIOR


def pivot(res, value, agg="median", fmt="{:.1f}"):
    ok = res[res["ran"] & res[value].notna()]
    if agg == "coverage":
        t = ok.groupby(["method", "K"])[value].apply(lambda v: 100 * np.mean(v.astype(float)))
        fmt = "{:.0f} %"
    elif agg == "max":
        t = ok.groupby(["method", "K"])[value].max()
    else:
        t = ok.groupby(["method", "K"])[value].median()
    n = ok.groupby(["method", "K"])[value].size()
    wide = t.unstack("K")
    order = [m for m in [*ALL_METHODS, SIZES_PRIOR, PAPER] if m in wide.index]
    cells = wide.loc[order].map(lambda v: "-" if pd.isna(v) else fmt.format(v))
    counts = n.unstack("K").loc[order]
    return cells.astype(str) + " (" + counts.fillna(0).astype(int).astype(str) + ")"


def md_table(frame: pd.DataFrame, first="method") -> str:
    cols = [first, *[f"{c} %" if isinstance(c, (int, np.integer)) else str(c) for c in frame.columns]]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join([str(i), *map(str, r)]) + " |" for i, r in zip(frame.index, frame.values)]
    return "\n".join(lines)


def entropy_forms(runs, ks):
    """The entropy's forms backtested on the entropy series of every run: |error| (nats) of the
    mean entropy over the run's last 10 % of logged steps, from the first K % of the run;
    ``auto`` is the within-window choice the forecast uses (entropylaw.fit.forecast.entropy)."""
    from entropylaw.fit.forecast import curves as fcurves
    from entropylaw.fit.forecast.entropy import EntropyPath

    rows = []
    for _, run in runs:
        if run.entropy is None or len(run.entropy) < 10:
            continue
        n10 = max(1, int(np.ceil(0.1 * len(run.entropy))))
        t_late, h_late = run.entropy.steps[-n10:] - run.origin, float(run.entropy.values[-n10:].mean())
        for k in ks:
            w = run.window(window_end(run, fit_frac=k / 100))
            for form in ("auto", "exp-decay", "power-decay", "power"):
                try:
                    path = EntropyPath(form).fit(w.entropy.steps - run.origin, w.entropy.values)
                    err = abs(float(path.predict(t_late).mean()) - h_late)
                except (fcurves.TooFewPoints, AttributeError, TypeError):
                    err = np.nan
                rows.append({"run": run.run_id, "K": k, "form": form, "error": err})
    t = pd.DataFrame(rows)
    if t.empty:
        return []
    med = t.groupby(["form", "K"])["error"].median().unstack("K").map(lambda v: f"{v:.3f}")
    n = t[t["error"].notna()].groupby(["form", "K"])["error"].size().unstack("K").fillna(0).astype(int)
    cells = med.astype(str) + " (" + n.astype(str) + ")"
    return ["## The entropy's form, backtested on the entropy series", "",
            f"Median |error| (nats) of the mean entropy over the last 10 % of each run's steps, forecast from the "
            f"first K % ({t['run'].nunique()} runs with entropy; in brackets the runs the form could be fitted on). "
            "`auto` is the form chosen inside the window by its own held-out error, what law+entropy and "
            "law+train use.", "", md_table(cells, first="form"), ""]


def bound_checks(res):
    """Per method, over every (run, K): forecasts whose point reached the score's bound (said in
    a warning, shown at the bound) and calibrated intervals that leave the score's range."""
    ok = res[res["ran"] & res["e"].notna() & (res["method"] != PAPER)]
    bounded = ok[ok["bounds"].apply(lambda b: isinstance(b, tuple))]
    g = bounded.groupby("method")
    t = pd.DataFrame({"cases on a bounded score": g.size(), "reached a bound (said)": g["bound_said"].sum(),
                      "interval or point outside the range": g["outside"].sum()}).astype(int)
    order = [m for m in ALL_METHODS if m in t.index]
    return ["## Bound checks (every K)", "",
            "Scores in [0, 1] (accuracies) or [-1, 1] (rewards with a format penalty) get their interval on the "
            "logit scale of that range, so no interval can leave it; a point forecast that runs past a bound is "
            "shown at the bound and said so in the method's warnings (never a silent clamp).", "",
            md_table(t.loc[order]), ""]


def summary(res, kind):
    """method x K: median | worst |error| of the final score, calibrated coverage, median width."""
    ok = res[(res["kind"] == kind) & res["ran"] & res["final"].notna()]
    g = ok.groupby(["method", "K"])
    t = pd.DataFrame({"med": g["final"].median(), "max": g["final"].max(),
                      "cov": g["covered"].apply(lambda v: 100 * np.nanmean(v.astype(float))),
                      "width": g["width"].median(), "n": g["final"].size()})
    cells = t.apply(lambda r: f"{r['med']:.1f} / {r['max']:.1f} / {r['cov']:.0f} % / {r['width']:.1f} ({r['n']:.0f})",
                    axis=1).unstack("K")
    order = [m for m in [*ALL_METHODS, SIZES_PRIOR, PAPER] if m in cells.index]
    return md_table(cells.loc[order].fillna("-"))


def shown(res, method):
    """Per (run, K): the case of ``method`` where it ran, else last-value's (what the product
    shows with ``method`` as its default)."""
    ok = res[res["ran"] & res["final"].notna()]
    own = ok[ok["method"] == method].set_index(["run", "K"])
    lv = ok[ok["method"] == "last-value"].set_index(["run", "K"])
    return pd.concat([own, lv[~lv.index.isin(own.index)]]).reset_index()


def _cells(g):
    cov = g["covered"].dropna()
    return (f"{g['final'].median():.1f} / {g['final'].max():.1f} / "
            + (f"{100 * cov.mean():.0f} % / {g['width'].median():.1f}" if len(cov) else "- / -")
            + f" ({g['run'].nunique()})")


def task_table(res, method, kind="validation"):
    """task x K: median / worst |error|, calibrated coverage, median width, for ``method`` as the
    default (last-value where it does not run), each task's cases forecast and calibrated
    without any run of that task (leave one task out)."""
    sub = shown(res[(res["kind"] == kind) & (res["mode"] == "loto")], method)
    if sub.empty:
        return "(no case)"
    t = sub.groupby(["task", "K"]).apply(_cells, include_groups=False).unstack("K")
    allrow = sub.groupby("K").apply(_cells, include_groups=False)
    t.loc["all tasks"] = allrow
    return md_table(t.fillna("-"), first="task")


def known_task_table(res, tasks, kind="validation"):
    """logit-drift as the default on runs of a task the prior knows (leave one run out)."""
    sub = res[(res["kind"] == kind) & (res["mode"] == "loro") & res["task"].isin(tasks)]
    sub = shown(sub[(sub["prior_kind"] == "task") | (sub["method"] == "last-value")], "logit-drift")
    if sub.empty:
        return "(no case)"
    t = sub.groupby(["task", "K"]).apply(_cells, include_groups=False).unstack("K")
    return md_table(t.fillna("-"), first="task")
