"""Assemble the HTML report from a run table: its model (:func:`entropylaw.page.model.page_model`:
every number and figure, computed once), rendered top-down (:func:`entropylaw.page.page.render_html`);
and write it.

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

import os
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd

from entropylaw.fileio import atomic_dir
from entropylaw.figure_sets.base import Built, figure_png  # noqa: F401  (figure_png: the page's PNGs)
from entropylaw.page.model import page_model
from entropylaw.page.page import render_html


def report_html(t: pd.DataFrame | None, probe_summaries: Sequence[dict] = (), title: str = "entropylaw report",
                sources: Sequence[str] = (), fit_frac: float = 0.15, which: Sequence[str] | None = None,
                words: Callable[[str], str] | None = None) -> tuple[str, list[Built], list[str]]:
    """The page, the figures on it, and the skipped-figure lines (also shown on the page);
    ``which`` limits the figures, the tables are always there; ``words``: what the page's text
    passes through (:meth:`entropylaw.page.model.PageModel.in_words`)."""
    html, _warnings, built, skipped = report_page(t, probe_summaries, title=title, sources=sources,
                                                  fit_frac=fit_frac, which=which, words=words)
    return html, built, skipped


def report_page(t: pd.DataFrame | None, probe_summaries: Sequence[dict] = (), title: str = "entropylaw report",
                sources: Sequence[str] = (), fit_frac: float = 0.15, which: Sequence[str] | None = None,
                words: Callable[[str], str] | None = None) -> tuple[str, list[str], list[Built], list[str]]:
    """:func:`report_html` with the page's warnings (its "Warnings (n)", in its words) second."""
    model, built, skipped = page_model(t, probe_summaries, title=title, sources=sources, fit_frac=fit_frac,
                                       which=which, words=words)
    return render_html(model), list(model.warnings), built, skipped


def write_report(html: str, out_dir: str | os.PathLike, name: str = "report.html") -> Path:
    """Write the page into ``out_dir``: a new directory appears whole or not at all
    (:func:`entropylaw.fileio.atomic_dir`); returns the page's path."""
    with atomic_dir(out_dir) as tmp:
        (tmp / name).write_text(html, encoding="utf-8")
    return Path(out_dir) / name
