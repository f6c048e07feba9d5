"""Assemble the HTML report: the per-run table with trust flags and the ceiling figure, the
forecast, the coefficients, every other figure that can be drawn, the warnings; and write it.

>>> import numpy as np
>>> from entropylaw import table
>>> steps = np.arange(0, 200, 10)
>>> H = 1.0 * np.exp(-steps / 60) + 0.1
>>> recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
>>> recs += [(int(s), "val/mean", float(0.8 - 0.2 * np.exp(h))) for s, h in zip(steps, H)]
>>> html, built, skipped = report_html(table.from_records(recs, run_id="r1"), which=["ceilings"])
>>> "<title>entropylaw report</title>" in html, "good fit" in html, [b.name for b in built]
(True, True, ['law_ceilings_per_run'])
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Sequence

import matplotlib.pyplot as plt
import pandas as pd

from entropylaw.fileio import atomic_dir
from entropylaw.figure_sets.base import Built
from entropylaw.figure_sets.build import build_all
from entropylaw.draw.placement import settle
from entropylaw.draw.style import rc, using
from entropylaw.readers.accounts import loss_lines
from entropylaw.page.page import ReportFigure, render_html
from entropylaw.page.project import with_overview
from entropylaw.results.rows import forecast_rows, summary_rows

LEAD = "law_ceilings_per_run"  # the figure beside the first table
FORECAST = "forecast_final_score"  # the figure beside the forecast table


def figure_png(fig, close: bool = True) -> bytes:
    """The figure as PNG bytes without a timestamp (same figure, same bytes)."""
    settle(fig)
    buf = io.BytesIO()
    with plt.rc_context(rc()):
        fig.savefig(buf, format="png", metadata={"Software": None})
    if close:
        plt.close(fig)
    return buf.getvalue()


def _figure(b: Built) -> ReportFigure:
    return ReportFigure(b.title or b.name.replace("_", " "), figure_png(b.fig), b.caption, b.name)


def report_html(t: pd.DataFrame | None, probe_summaries: Sequence[dict] = (), title: str = "entropylaw report",
                sources: Sequence[str] = (), fit_frac: float = 0.15,
                which: Sequence[str] | None = None) -> tuple[str, list[Built], list[str]]:
    """The page, the figures on it, and the skipped-figure lines (also shown on the page).

    Drawn in the screen style, whatever style is current; ``which`` limits the figures
    (names of :data:`entropylaw.figure_sets.build.BUILDERS`), the tables are always there."""
    with using("screen"):
        has_table = t is not None and len(t)
        rows, fit_notes = summary_rows(t) if has_table else ([], [])
        forecasts, forecast_notes = forecast_rows(t, rows, fit_frac=fit_frac) if rows else ([], [])
        audits = [p["audit"] for p in probe_summaries if "audit" in p]
        probe_summaries = [p for p in probe_summaries if {"table1", "ladder"} & set(p)]
        built, skipped = build_all(t, probe_summaries, which=which, fit_frac=fit_frac)
        read = [f"Read: {line}" for line in loss_lines(t.attrs)] if t is not None else []  # what the inputs lost
        warnings = list(dict.fromkeys(read + fit_notes + forecast_notes + [w for b in built for w in b.warnings]))
        lead = next((b for b in built if b.name == LEAD), None)
        fc = next((b for b in built if b.name == FORECAST), None)
        figures = [_figure(b) for b in built if b is not lead and b is not fc]
        lead_fig = _figure(lead) if lead else None
        fc_fig = _figure(fc) if fc else None
    plt.close("all")
    notes = [f"Not drawn: {s}" for s in skipped]
    html = render_html(title, rows, figures, warnings, notes, sources, forecasts=forecasts, lead=lead_fig,
                       forecast_figure=fc_fig, fit_frac=fit_frac, audits=audits)
    html = with_overview(html, rows, forecasts)  # a project of many runs: the ones that matter first
    return html, built, skipped


def write_report(html: str, out_dir: str | os.PathLike, name: str = "report.html") -> Path:
    """Write the page into ``out_dir``: a new directory appears whole or not at all
    (:func:`entropylaw.fileio.atomic_dir`); returns the page's path."""
    with atomic_dir(out_dir) as tmp:
        (tmp / name).write_text(html, encoding="utf-8")
    return Path(out_dir) / name
