"""Each run's results, computed once: the rows the report's tables, the demo's screen and the
summary figures read.

:func:`run_results` computes in one direction: which runs can be used, their labels and
looks, their fits (each once per content, :mod:`entropylaw.results.cache`), their rows, then
their forecasts from their first steps and the forecast rows (:mod:`entropylaw.results.rows`).
What it returns is only read after that, never computed again by a renderer.

>>> import numpy as np
>>> from entropylaw import table
>>> steps = np.arange(0, 200, 10)
>>> H = 1.0 * np.exp(-steps / 60) + 0.1
>>> recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
>>> recs += [(int(s), "val/mean", float(0.8 - 0.2 * np.exp(h))) for s, h in zip(steps, H)]
>>> res = run_results(table.from_records(recs, run_id="r1"), n_boot=20)
>>> [r["run_id"] for r in res.rows], res.forecast("r1")["target_kind"], res.forecast("nope")
(['r1'], 'validation', {})
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import pandas as pd

import entropylaw.table as tt
from entropylaw.table.labels import run_labels
from entropylaw.table.looks import RunStyles
from entropylaw.results.cache import fitted_runs, forecast_runs
from entropylaw.results.notes import reworded
from entropylaw.results.picks import Picks, project_picks
from entropylaw.readers.accounts import loss_lines
from entropylaw.readers.dataset_guess import guessed_lines
from entropylaw.results.rows import forecast_rows_of, in_sample_said, method_names, summary_rows_of
from entropylaw.results.runs import NO_ENTROPY, forecast_only_runs, left_out_runs, usable_runs
from entropylaw.fit.forecast.window_hint import window_hint
from entropylaw.results.live import live_line, live_runs

N_BOOT = 200  # the report's bootstrap draws for a forecast's interval


@dataclass
class RunResults:
    """``rows``: one per usable run, in family order (fit numbers, trust, label, look);
    ``forecasts``: one per row (the default forecast of its final score, or why none, with
    ``remedy`` where its window holds too few scores: :mod:`entropylaw.fit.forecast.window_hint`);
    ``notes``: the warnings the fits and forecasts raised, each tagged with its run;
    ``left_out``: the runs with no entropy or no score, and why (with forecasts: the runs with no
    score; a run with a score and no entropy has a row, forecast, its ``no_law`` saying why no
    law); ``read``: what the inputs lost, one line per source; ``methods``: the forecast methods' names the page shows
    (:func:`entropylaw.results.rows.method_names`); ``picks``: for a project of many runs, the
    runs its first screen lists (:func:`entropylaw.results.picks.project_picks`), else None."""

    rows: list = field(default_factory=list)
    forecasts: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    fit_frac: float = 0.15
    left_out: dict = field(default_factory=dict)  # runs not in rows: run -> why
    read: list = field(default_factory=list)
    methods: dict = field(default_factory=lambda: method_names([]))
    picks: Picks | None = None
    live: list = field(default_factory=list)  # the runs still training: "run (step N of M planned)"
    # their forecasts from every step logged to their planned end (the page's and the screen's live rows)
    live_forecasts: list = field(default_factory=list)

    def live_said(self, what: str, where: str = "") -> str:
        """The line naming the runs still training beside the backtests ``what`` names ('' where none is);
        ``where``: where their forecasts from every step logged are shown (default: `entropylaw forecast RUN`)."""
        return live_line(self.live, self.fit_frac, what, where) if self.live else ""

    def in_sample_said(self) -> str | None:
        """The line saying the forecasts' backtests are in-sample where some runs are among those the stored
        calibration was measured on (:func:`entropylaw.results.rows.in_sample_said`), else None."""
        return in_sample_said(self.forecasts)

    def forecast(self, run_id: str) -> dict:
        """The forecast row of ``run_id`` (``{}`` when it has none)."""
        return next((f for f in self.forecasts if f.get("run_id") == run_id), {})

    def in_words(self, words: Callable[[str], str]) -> "RunResults":
        """A copy whose text (reasons, notes, what was read and left out) passed through ``words``:
        the command line names an API parameter by its flag (:func:`entropylaw.results.notes.reworded`)."""
        picks = None if self.picks is None else Picks(*reworded(self.picks.groups, words), self.picks.n_untrusted)
        return replace(self, rows=reworded(self.rows, words), forecasts=reworded(self.forecasts, words),
                       live_forecasts=reworded(self.live_forecasts, words),
                       notes=reworded(self.notes, words), left_out=reworded(self.left_out, words),
                       read=reworded(self.read, words),
                       methods=reworded(self.methods, words), picks=picks)


def run_results(t: pd.DataFrame | None, fit_frac: float = 0.15, n_boot: int = N_BOOT, conf: float = 0.9,
                run_ids=None, forecasts: bool = True) -> RunResults:
    """The :class:`RunResults` of the runs of ``t`` (or of ``run_ids``); none for no table;
    ``forecasts=False``: the fits only (the runs with entropy and a score); with forecasts, a run
    with a score and no entropy too (forecast, no law)."""
    if t is None or not len(t):
        return RunResults(fit_frac=fit_frac)
    left_out = left_out_runs(t, forecasts=forecasts) if run_ids is None else {}
    read = loss_lines(t.attrs) + guessed_lines(t)  # what the inputs lost, and what was only guessed
    # with forecasts, a run that logs a score and no entropy is forecast too: its row says why it has no law
    alone = forecast_only_runs(t) if forecasts else []
    shown = set(usable_runs(t)) | set(alone)
    ids = [r for r in tt.run_ids(t) if r in shown] if run_ids is None else list(run_ids)
    no_law = {r: NO_ENTROPY for r in alone if r in ids}
    groups, labels = run_labels(t, ids)
    styles = RunStyles(tt.run_ids(t))
    meta = tt.runs(t).set_index("run_id")
    fitted, notes = fitted_runs(t, [r for r in ids if r not in no_law])
    rows = summary_rows_of(ids, groups, labels, styles, meta, fitted, notes, no_law)
    if not forecasts or not rows:
        return RunResults(rows, [], notes, fit_frac, left_out, read, picks=project_picks(rows, []))
    computed, forecast_notes = forecast_runs(t, [r["run_id"] for r in rows], fit_frac, n_boot, conf)
    done = forecast_rows_of(rows, computed, conf)
    for row, f in zip(rows, done):
        if f.get("reason") and f.get("forecast") is None:  # no forecast: where the window is too short, what to raise
            hint = window_hint(t, row["run_id"], fit_frac)
            if hint:
                f["remedy"] = hint
        if row.get("no_law"):  # no fit gave its score: the forecast's, by the same rule
            row.update(final_observed=f.get("final_observed", float("nan")), score_key=f.get("target_key", ""),
                       score_kind=f.get("target_kind", ""), fraction=f.get("fraction", True))
    live = live_runs(t, [r["run_id"] for r in rows])
    live_done, live_notes = [], []
    if live:  # a run still training: where it ends is asked of every step it logged, as `forecast RUN` asks it
        computed, live_notes = forecast_runs(t, list(live), None, n_boot, conf)
        live_done = forecast_rows_of([r for r in rows if r["run_id"] in live], computed, conf)
    return RunResults(rows, done, notes + forecast_notes + [n for n in live_notes if n not in forecast_notes],
                      fit_frac, left_out, read, method_names(done), project_picks(rows, done),
                      [f"{rid} (step {last:g} of {plan:g} planned)" for rid, (last, plan) in live.items()], live_done)


def summary_rows(t: pd.DataFrame, run_ids=None) -> tuple[list[dict], list[str]]:
    """One row per run with an entropy and a score (or each of ``run_ids``), grouped by
    family, and the warnings the fits raised (no forecast: what the figures of fits need)."""
    res = run_results(t, run_ids=run_ids, forecasts=False)
    return res.rows, res.notes


def forecast_rows(t: pd.DataFrame, rows: list[dict], fit_frac: float = 0.15, n_boot: int = N_BOOT,
                  conf: float = 0.9) -> tuple[list[dict], list[str]]:
    """Per summary row of ``t``, its forecast row (:func:`entropylaw.results.rows.forecast_rows_of`)
    and the warnings the forecasts raised."""
    computed, notes = forecast_runs(t, [r["run_id"] for r in rows], fit_frac, n_boot, conf)
    return forecast_rows_of(rows, computed, conf), notes
