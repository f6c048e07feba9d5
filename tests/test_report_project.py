"""The report of a whole project: many runs open on the runs that matter most, then a
sortable table of all of them; a few runs keep the page as it was."""

from __future__ import annotations

import re

import numpy as np
import pytest

import entropylaw.table as table
from entropylaw.page.assemble import report_html
from entropylaw.page.project import overview_html
from entropylaw.results.focus import MANY_RUNS
from entropylaw.results.model import run_results, summary_rows
from entropylaw.results.picks import picks


def _project(n_runs: int):
    tables = []
    rng = np.random.default_rng(0)
    steps = np.arange(0, 300, 10)
    for i in range(n_runs):
        h = (0.6 + 0.05 * i) * np.exp(-steps / 90) + 0.05
        b = 0.55 + 0.02 * i
        r = b - 0.1 * np.exp(h) + (rng.normal(0, 0.3, len(steps)) if i == 0 else rng.normal(0, 0.002, len(steps)))
        recs = [(int(s), "entropy", float(x)) for s, x in zip(steps, h)]
        recs += [(int(s), "val/mean", float(y)) for s, y in zip(steps, np.clip(r, 0, 1))]
        tables.append(table.from_records(recs, run_id=f"run-{i:02d}"))
    return table.stack(tables)


def test_overview_picks_the_runs_that_matter():
    n = MANY_RUNS + 3
    rows, _notes = summary_rows(_project(n))
    overview = overview_html(rows, [], picks(rows, []))
    table_rows = re.findall(r"<tr><td data-v=", overview)
    assert len(table_rows) == n and "sortable" in overview
    lists = re.findall(r"<ol>(.*?)</ol>", overview)
    worst = re.findall(r"<b>(run-\d+)</b>", lists[1])
    # the lowest ceilings are the runs built with the lowest b (run-00 is the noisy one, not trusted)
    assert worst[:3] == ["run-01", "run-02", "run-03"]
    assert "run-00" in lists[2]  # its noise makes the fit untrustworthy


@pytest.mark.slow
def test_report_of_many_runs_opens_on_the_overview():
    html, _built, _skipped = report_html(_project(MANY_RUNS + 1), which=[])
    assert html.index('id="project"') < html.index('id="saturation"')  # first, before the per-run table
    assert html.count("<tr><td data-v=") == MANY_RUNS + 1


def test_the_picks_are_computed_with_the_results_only_for_a_project():
    t = _project(MANY_RUNS + 1)
    res = run_results(t, n_boot=20)
    assert res.picks == picks(res.rows, res.forecasts) and res.picks.worst  # the page lists them, computes none
    assert run_results(_project(3), forecasts=False).picks is None  # a few runs: their table is the first screen


def test_few_runs_page_unchanged():
    html, _built, _skipped = report_html(_project(3), which=[])
    assert 'id="project"' not in html


def test_project_per_run_figures_draw_the_first_screen_runs():
    from entropylaw.figure_sets.law import law_figures
    from entropylaw.results.focus import focus
    from entropylaw.results.model import forecast_rows

    t = _project(MANY_RUNS + 3)
    rows, _notes = summary_rows(t)
    chosen = focus(rows, forecast_rows(t, rows)[0])
    assert 3 <= len(chosen) <= 15 and "run-00" in chosen and "run-01" in chosen  # untrusted, worst collapse
    _family, per_run = law_figures(t)
    panels = [ax for ax in per_run.fig.axes if ax.get_visible() and ax.get_title(loc="left")]
    assert sorted(ax.get_title(loc="left").split(" · ")[0] for ax in panels) == sorted(
        r["label"] for r in rows if r["run_id"] in chosen)
    assert f"Drawn for {len(chosen)} of the {MANY_RUNS + 3} runs" in per_run.caption
    small = _project(3)
    assert "Drawn for" not in law_figures(small)[1].caption  # a few runs: every one drawn
