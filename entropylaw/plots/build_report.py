"""Assemble the HTML report: per-run numbers, every figure that can be drawn, warnings.

>>> import numpy as np
>>> from entropylaw import table
>>> steps = np.arange(0, 200, 10)
>>> H = 1.0 * np.exp(-steps / 60) + 0.1
>>> recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
>>> recs += [(int(s), "val/mean", float(0.8 - 0.2 * np.exp(h))) for s, h in zip(steps, H)]
>>> rows, notes = run_rows(table.from_records(recs, run_id="r1"))
>>> round(rows[0]["a"], 3), round(rows[0]["ceiling"], 3), rows[0]["n"]
(0.2, 0.6, 20)
"""

from __future__ import annotations

from typing import Sequence

import pandas as pd

from entropylaw import table as tt
from entropylaw.errors import EntropyLawError
from entropylaw.fit.early import EarlyPrediction
from entropylaw.plots import build as B
from entropylaw.plots.build_runs import fit_dict, fitted_runs
from entropylaw.plots.report import ReportFigure, figure_png, render_html


def run_rows(t: pd.DataFrame, fit_frac: float = 0.15) -> tuple[list[dict], list[str]]:
    """One report row per fittable run, and the warnings the fits raised."""
    fitted, notes = fitted_runs(t)
    meta = tt.runs(t).set_index("run_id")
    rows = []
    for run_id, (pts, fit) in fitted.items():
        d = fit_dict(fit)
        row = {"run_id": run_id, "model": meta.at[run_id, "model"], "algorithm": meta.at[run_id, "algorithm"],
               **{k: d.get(k) for k in ("n", "a", "a_stderr", "b", "b_stderr", "ceiling", "ceiling_stderr",
                                         "ceiling_ci", "r2", "rmse")},
               "final_observed": float(pts["R"].iloc[-1])}
        row.update(_final_prediction(pts, fit, fit_frac, notes, run_id))
        rows.append(row)
    return rows, notes


def _final_prediction(pts, fit, fit_frac, notes, run_id) -> dict:
    """The final score predicted from the early part of the run (else the full fit, said so)."""
    try:
        # its warnings are the early-prediction figure's, reported there once
        pred, _caught = B.capture(lambda: EarlyPrediction(fit_frac=fit_frac).fit(pts))
        return {"final_predicted": float(pred.final_predicted_),
                "predicted_from": f"fit on first {100 * fit_frac:.0f} %"}
    except EntropyLawError as why:
        return {"final_predicted": float(fit.predict([pts["H"].iloc[-1]])[0]),
                "predicted_from": f"full fit, in-sample; {why}"}


def build_all(t: pd.DataFrame | None, probe_summaries: Sequence[dict] = (), which: Sequence[str] | None = None,
              **options) -> tuple[list[B.Built], list[str]]:
    """Every figure that can be drawn, and a ``name: reason`` line per skipped one."""
    built, skipped = [], []
    names = list(which or (B.BUILDERS + B.PROBE_BUILDERS))
    for name in names:
        try:
            if name in B.PROBE_BUILDERS:
                if not probe_summaries:
                    raise B.Skipped(f"{name}: no probe summary given (--probe SUMMARY.json)")
                for summary in probe_summaries:
                    built += B.build_probe(name, summary)
            elif t is None or not len(t):
                raise B.Skipped(f"{name}: no run table given")
            else:
                built += B.build(name, t, **options)
        except B.Skipped as why:
            text = str(why)
            skipped.append(text if text.startswith(f"{name}:") else f"{name}: {text}")
    return built, skipped


def report_html(t: pd.DataFrame | None, probe_summaries: Sequence[dict] = (), title: str = "entropylaw report",
                sources: Sequence[str] = (), fit_frac: float = 0.15) -> tuple[str, list[B.Built], list[str]]:
    """The page, the figures on it, and the skipped-figure lines (also shown on the page)."""
    rows, fit_notes = run_rows(t, fit_frac) if t is not None and len(t) else ([], [])
    built, skipped = build_all(t, probe_summaries, fit_frac=fit_frac)
    warnings = list(dict.fromkeys(fit_notes + [w for b in built for w in b.warnings]))
    figures = [ReportFigure(b.name.replace("_", " "), figure_png(b.fig), b.caption) for b in built]
    notes = ["Predicted final score: the law fitted on the first part of the run, evaluated at the run's last "
             "entropy; the ceiling is what the law gives when entropy reaches zero."]
    notes += [f"Not drawn: {s}" for s in skipped]
    return render_html(title, rows, figures, warnings, notes, sources), built, skipped
