"""A law ceiling fitted to a forecast's window that the law does not describe (its entropy falls
5 % where the law needs 20 %: data/real's rho1.00_seed44 at 15 %) was shown in the report's
forecast table and figure as a plain 0.962 [0.598, 1.000], while the early-prediction figure
said "law n/a" of the same window: it is greyed and marked law n/a wherever it is shown."""

from __future__ import annotations

import matplotlib
import numpy as np

matplotlib.use("Agg")

import entropylaw.table as table  # noqa: E402
from entropylaw.figure_sets.ceilings import plot_forecasts  # noqa: E402
from entropylaw.page.forecasts import beyond_key, forecast_table_html  # noqa: E402
from entropylaw.results.cache import forecast_runs  # noqa: E402
from entropylaw.results.rows import forecast_rows_of  # noqa: E402


def _row():
    steps = np.arange(0, 200, 5)
    h = 0.30 - 0.04 * steps / steps[-1]  # falls 6.7 % over the window: too little for the law
    r = -0.5 * np.exp(h) + 1.3 + np.random.default_rng(0).normal(0, 0.002, len(steps))
    recs = [(int(s), "entropy", float(e)) for s, e in zip(steps, h)] + \
        [(int(s), "score", float(v)) for s, v in zip(steps, r)]
    computed, _ = forecast_runs(table.from_records(recs, run_id="flat"), ["flat"], 0.5, 50, 0.9)
    assert computed["flat"][1].law_reasons  # the forecast's own verdict on the window
    [row] = forecast_rows_of([{"run_id": "flat", "number": 1, "label": "flat"}], computed)
    return row


def test_a_window_ceiling_the_law_does_not_describe_is_said_so_in_table_and_figure():
    row = _row()
    assert row["law_ceiling"] == row["law_ceiling"], row  # a number is shown ...
    assert "entropy falls only" in row["law_ceiling_void"]  # ... with why it is no ceiling
    html = forecast_table_html([row], "logit-drift")
    assert "law n/a" in html and '<span class="void"' in html
    assert "law n/a" in beyond_key([row])
    ax = plot_forecasts([dict(row, color="C0", marker="o", family="")])
    assert "law n/a" in [t.get_text() for t in ax.texts]
    labels = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert any("law n/a" in lab for lab in labels), labels


def test_the_forecast_figure_names_a_training_score_as_the_ceilings_figure_does():
    """One run's training score: the forecast figure's axis read "final score (fraction correct)" beside the
    ceilings' figure's "final training score (reward)"."""
    from entropylaw.figure_sets.ceilings import ceilings_figure, forecast_figure

    steps = np.arange(0, 200, 5)
    h = 0.8 * np.exp(-steps / 60) + 0.1
    r = -0.4 * np.exp(h) + 1.2 + np.random.default_rng(1).normal(0, 0.003, len(steps))
    recs = [(int(s), "entropy", float(e)) for s, e in zip(steps, h)] + \
        [(int(s), "score", float(v)) for s, v in zip(steps, r)]
    t = table.from_records(recs, run_id="trained")
    [ceil] = ceilings_figure(t)
    [fc] = forecast_figure(t, fit_frac=0.5, n_boot=20)
    ceiling_unit = ceil.fig.axes[0].get_xlabel().replace("\n", " ").split("final ", 1)[1]
    assert ceiling_unit == "training score (reward)"
    assert fc.fig.axes[0].get_xlabel().replace("\n", " ") == f"final {ceiling_unit}"


def test_a_validation_score_outside_0_1_voids_the_window_ceiling_as_it_voids_the_runs():
    """A validation score logged in percent that the reader did not take for one (its name says no
    accuracy): the run's own fit said 'law does not apply (score outside [0, 1])' and greyed its
    ceiling, while the forecast table showed the window's law ceiling, 50.0, as a plain number."""
    steps = np.arange(1, 101)
    h = 0.05 + np.exp(-steps / 20)
    r = 100 * (0.7 - 0.2 * np.exp(h)) + np.random.default_rng(2).normal(0, 0.3, len(steps))
    recs = [(int(s), "entropy", float(e)) for s, e in zip(steps, h)] + \
        [(int(s), "val/gsm8k", float(v)) for s, v in zip(steps, r)]
    computed, _ = forecast_runs(table.from_records(recs, run_id="pct"), ["pct"], 0.15, 50, 0.9)
    [row] = forecast_rows_of([{"run_id": "pct", "number": 1, "label": "pct"}], computed)
    assert row["law_ceiling"] == row["law_ceiling"], row
    assert "score outside [0, 1]" in row.get("law_ceiling_void", ""), row
    assert "law n/a" in forecast_table_html([row], "logit-drift")
