"""The forecast backtest's size-series parts (analysis/bench_forecast.py): the final-score law
forward-chained per size series, and a larger model forecast from its own first steps plus
the smaller sizes of its recipe, against the size law alone and the forecast alone."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.fit.forecast.core import forecast

ROOT = Path(__file__).resolve().parents[1]


SIZE_LAW, WITH_SIZES = "size law alone", "logit-drift + smaller sizes"


def larger_model_cases(run, smaller, k, end, conf, n_boot, base):
    """A larger model from its own first steps plus the smaller sizes of its recipe: the size
    law alone (the smaller sizes' final scores), and logit-drift with those runs as its prior
    (the size law's prediction anchoring its final step); the forecast alone is the ``loro`` row."""
    from entropylaw.fit.size_scores import FinalScoreLaw

    out = []
    y = float(run.target.values[-1])
    law = FinalScoreLaw().fit([r.size for r in smaller], [float(r.target.values[-1]) for r in smaller],
                              bounds=run.bounds or (0.0, 1.0)).predict(run.size)
    lo, hi = law["final_score_lo"], law["final_score_hi"]
    out.append({**base, "mode": "sizes", "method": SIZE_LAW, "ran": lo is not None,
                "final": 100 * abs(law["final_score"] - y),
                "in90": float(lo <= y <= hi) if lo is not None else np.nan,
                "w90": 100 * (hi - lo) if lo is not None else np.nan})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = forecast(run, fit_frac=k / 100, conf=conf, n_boot=n_boot, prior_runs=smaller,
                         methods=["logit-drift"], calibrated=False, regime_rates={}).methods["logit-drift"]
        if r.ok:
            f = r.final
            out.append({**base, "mode": "sizes", "method": WITH_SIZES, "ran": True,
                        "final": 100 * abs(f["forecast"] - y),
                        "in90": float(f["lo"] <= y <= f["hi"]), "w90": 100 * (f["hi"] - f["lo"])})
        else:
            out.append({**base, "mode": "sizes", "method": WITH_SIZES, "ran": False, "reason": r.reason})
    except EntropyLawError as err:
        out.append({**base, "mode": "sizes", "method": WITH_SIZES, "ran": False, "reason": str(err)})
    return out


def larger_model_table(everything) -> list[str]:
    """The size law alone, the forecast alone (logit-drift, leave one run out) and both together,
    on the runs that have 3 smaller sizes of their recipe (the calibrated intervals)."""
    sizes = everything[everything["mode"] == "sizes"]
    if sizes.empty:
        return []
    runs = sorted(sizes["run"].unique())
    alone = everything[(everything["mode"] == "loro") & (everything["method"] == "logit-drift")
                       & everything["run"].isin(runs)]
    rows = []
    alone = alone.assign(in90=alone["covered"], w90=alone["width"])
    for (run, k), g in pd.concat([sizes, alone]).groupby(["run", "K"]):
        cells = []
        for m in (SIZE_LAW, "logit-drift", WITH_SIZES):
            c = g[(g["method"] == m) & g["ran"].astype(bool)]
            cells.append("-" if c.empty else f"{c['final'].iloc[0]:.1f} ({'in' if c['in90'].iloc[0] == 1 else 'out'}, "
                         f"{c['w90'].iloc[0]:.1f} wide)")
        rows.append(f"| {run} | {k} % | " + " | ".join(cells) + " |")
    return ["## A larger model from its own first steps plus the smaller sizes", "",
            "|error| of the final score (points), whether the 90 % interval holds it, and its width: the size law "
            "fitted "
            "to the smaller sizes' final scores alone (its own interval); the forecast alone (logit-drift, its prior "
            "from the other runs, calibrated leaving each run out); and `forecast RUN --prior SMALLER_RUNS` "
            "(logit-drift, its rate's prior from the smaller sizes with size as a covariate, the size law's "
            "prediction anchoring its final step; its raw interval: no factor is measured for it without these "
            "same runs).", "",
            f"| run | window | {SIZE_LAW} | forecast alone | {WITH_SIZES} |", "|---|---|---|---|---|", *rows, ""]


def size_law_tables(frames) -> list[str]:
    """Forward chaining, per size series (a folder of validation runs at 3 sizes or more): each
    form fitted to the smaller sizes predicts the larger ones, and the whole rule's interval."""
    from entropylaw.fit.size_series import scale_runs

    t = table.concat(frames)
    meta = table.runs(t)
    meta["folder"] = [os.path.relpath(Path(str(s)).parent, ROOT) for s in meta["source"]]
    meta["size"] = meta["n_params_nonembedding"].fillna(meta["n_params"])
    out = []
    for folder, g in meta.groupby("folder"):
        if g["size"].nunique() < 3:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = scale_runs(t, list(g["run_id"]))
        law = res.score_law
        if law is None:
            out += [f"## Final score vs model size: {folder}", "", f"Refused: {res.score_refused}", ""]
            continue
        back = {(r["fitted"], r["target"]): r for r in law.backtest()}
        err = {(r["form"], r["fitted"], r["target"]): r["logit_error"] for r in law.forward_}
        rows = []
        for k, j in sorted({(r["fitted"], r["target"]) for r in law.forward_} | set(back)):
            b = back.get((k, j))
            rows.append(f"| {law.sizes_[0] / 1e9:.3g}B-{law.sizes_[k - 1] / 1e9:.3g}B | {law.sizes_[j] / 1e9:.3g}B | "
                        f"{law.u_[j] - law.u_[k - 1]:.2f} | "
                        + " | ".join(f"{err[(f, k, j)]:+.3f}" if (f, k, j) in err else "-" for f in law.combined_)
                        + (" | - | - |" if b is None else f" | {100 * b['predicted']:.1f} [{100 * b['lo']:.1f}, "
                           f"{100 * b['hi']:.1f}] | {100 * b['observed']:.1f} {'yes' if b['covered'] else 'NO'} |"))
        out += [f"## Final score vs model size, forward chaining: {folder}", "",
                f"Rule: {law.rule()}.", "", f"Forms combined: {law.combination()}.", "",
                "| fitted | predicts | decades | " + " | ".join(f"{f}: logit error" for f in law.combined_)
                + " | this rule [90 %] | observed, inside? |",
                "|---|---|---|" + "---|" * len(law.combined_) + "---|---|",
                *rows, ""]
    return out
