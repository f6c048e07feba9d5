"""The report's page as one model, computed once before any HTML is written: each run's rows
and forecasts (:func:`entropylaw.results.model.run_results`), the figures as PNG bytes, the
warnings and the notes; its text in the command line's words when the command line writes
the page (``words``). :func:`entropylaw.page.page.render_html` renders it top-down and
computes nothing.

>>> import numpy as np
>>> from entropylaw import table
>>> steps = np.arange(0, 200, 10)
>>> H = 1.0 * np.exp(-steps / 60) + 0.1
>>> recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
>>> recs += [(int(s), "val/mean", float(0.8 - 0.2 * np.exp(h))) for s, h in zip(steps, H)]
>>> model, built, skipped = page_model(table.from_records(recs, run_id="r1"), which=["ceilings"])
>>> [r["trust"] for r in model.runs.rows], model.lead.name, model.figures
(['good fit'], 'law_ceilings_per_run', [])
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import matplotlib.pyplot as plt
import pandas as pd

from entropylaw.draw.style import using
from entropylaw.figure_sets.base import Built
from entropylaw.figure_sets.build import build_all
from entropylaw.results.model import RunResults, run_results
from entropylaw.results.notes import reworded

LEAD = "law_ceilings_per_run"  # the figure beside the first table
FORECAST = "forecast_final_score"  # the figure beside the forecast table


@dataclass
class ReportFigure:
    """A figure for the page: its title (what it shows), PNG bytes and a caption."""

    title: str
    png: bytes
    caption: str = ""
    name: str = ""

    @classmethod
    def of(cls, built: Built) -> "ReportFigure":
        return cls(built.title or built.name.replace("_", " "), built.png(), built.caption, built.name)


@dataclass
class PageModel:
    """Everything the page shows: ``runs`` (rows, forecasts), the ``lead`` figure beside the
    first table and the ``forecast_figure`` beside the forecast table, the other ``figures``,
    the ``warnings`` (what the inputs lost, then the fits' and figures' warnings), the
    ``notes`` (figures not drawn, and why) and ``audits`` (``entropylaw audit`` results)."""

    title: str = "entropylaw report"
    runs: RunResults = field(default_factory=RunResults)
    figures: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    lead: ReportFigure | None = None
    forecast_figure: ReportFigure | None = None
    audits: list = field(default_factory=list)

    @property
    def fit_frac(self) -> float:
        return self.runs.fit_frac

    def in_words(self, words: Callable[[str], str]) -> "PageModel":
        """A copy whose text passed through ``words`` (the command line's: an API parameter named
        by its flag); the numbers, the run names and the images are kept."""
        def fig(f):
            return f and replace(f, title=words(f.title), caption=words(f.caption))

        return replace(self, runs=self.runs.in_words(words), figures=[fig(f) for f in self.figures],
                       warnings=reworded(self.warnings, words), notes=reworded(self.notes, words),
                       lead=fig(self.lead), forecast_figure=fig(self.forecast_figure),
                       audits=reworded(self.audits, words))


def page_model(t: pd.DataFrame | None, probe_summaries: Sequence[dict] = (), title: str = "entropylaw report",
               sources: Sequence[str] = (), fit_frac: float = 0.15, which: Sequence[str] | None = None,
               words: Callable[[str], str] | None = None) -> tuple[PageModel, list[Built], list[str]]:
    """The page's model, the figures built and the skipped-figure lines.

    Drawn in the screen style, whatever style is current; ``which`` limits the figures
    (names of :data:`entropylaw.figure_sets.build.BUILDERS`), the tables are always there;
    ``words``: what the page's text passes through (:meth:`PageModel.in_words`; the API keeps
    its own names)."""
    audits = [p["audit"] for p in probe_summaries if "audit" in p]
    # an audit's own summary draws no figure: given alone, the figures say so (not "no summary given")
    probe_summaries = [p for p in probe_summaries if {"table1", "ladder"} & set(p)] or \
        [{"audit": p["audit"]} for p in probe_summaries if "audit" in p]
    with using("screen"):
        runs = run_results(t, fit_frac=fit_frac)
        built, skipped = build_all(t, probe_summaries, which=which, fit_frac=fit_frac)
        shown = {b.name: ReportFigure.of(b) for b in built if b.name in (LEAD, FORECAST)}
        figures = [ReportFigure.of(b) for b in built if b.name not in (LEAD, FORECAST)]
    plt.close("all")
    read = [f"Read: {line}" for line in runs.read]  # what the inputs lost
    left = [f"Left out: run {r}: {why}" for r, why in runs.left_out.items()]  # no entropy or no score
    warnings = list(dict.fromkeys(read + left + runs.notes + [w for b in built for w in b.warnings]))
    model = PageModel(title, runs, figures, warnings, [f"Not drawn: {s}" for s in skipped], list(sources),
                      shown.get(LEAD), shown.get(FORECAST), audits)
    return (model if words is None else model.in_words(words)), built, skipped
