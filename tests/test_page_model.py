"""The page's model is computed once and read by the page and the demo's screen."""

import pytest
import numpy as np

from entropylaw import table
from entropylaw.page.model import page_model
from entropylaw.page.page import render_html
from entropylaw.results.model import run_results
from entropylaw.results.overview import first_screen


def _run(run_id, with_score=True):
    steps = np.arange(0, 200, 10)
    H = np.exp(-steps / 60) + 0.1
    recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
    if with_score:
        recs += [(int(s), "val/mean", float(0.8 - 0.2 * np.exp(h))) for s, h in zip(steps, H)]
    return table.from_records(recs, run_id=run_id)


def test_no_table_gives_an_empty_model_and_a_page_that_says_so():
    assert run_results(None).rows == [] and run_results(None).forecasts == []
    model, built, skipped = page_model(None, [{"audit": {"step": 1, "logged": 1.0, "conventions": {}}}], which=[])
    html = render_html(model)
    assert "No run had enough paired" in html and "Audit of the logged entropy" in html and built == []


def test_the_screen_lists_a_run_without_a_score_with_its_problem():
    t = table.concat([_run("ok"), _run("no-score-" + "x" * 80, with_score=False)])
    res = run_results(t, n_boot=20)
    assert [r["run_id"] for r in res.rows] == ["ok"]  # only usable runs are fitted
    ov = first_screen(t, sources=["here"], results=res)
    assert [r["run_id"] for r in ov.rows] == ["ok", "no-score-" + "x" * 80]
    assert ov.rows[1]["kind"] == "?" and ov.problems and all("no-score-" in p for p in ov.problems)
    assert all(len(line) <= 120 for line in ov.lines())


def test_the_screen_and_the_page_read_the_same_fit():
    t = _run("r1")
    res = run_results(t, n_boot=20)
    ov = first_screen(t, results=res)
    assert ov.rows[0]["ceiling"] == res.rows[0]["ceiling"] and ov.rows[0]["trust"] == "good fit"
    assert ov.rows[0]["fc"] is res.forecast("r1")  # the screen reads the forecast the page shows
    f = res.forecast("r1")  # whether the final score landed in the interval is computed once, with the forecast
    if "forecast" in f:
        assert f["inside"] == (f["forecast_ci"][0] <= f["final_observed"] <= f["forecast_ci"][1])
    else:  # too wide to be a forecast: nothing to land in
        assert f["no_forecast"] and "inside" not in f


def test_a_run_whose_forecast_fails_keeps_its_kind_of_score_on_the_screen():
    recs = [(s, "entropy", 1.0 - s / 100) for s in range(0, 50)] + [(49, "val/gsm8k", 0.4)]  # one point: no forecast
    screen = first_screen(table.from_records(recs, run_id="one-point"))
    row = screen.rows[0]
    assert row["kind"] == "val" and any("one-point: no forecast" in p for p in screen.problems)


def test_a_training_scores_final_score_is_its_mean_over_the_last_5_percent():
    from entropylaw.results.rows import final_score
    import pandas as pd

    pts = pd.DataFrame({"step": np.arange(1.0, 201.0), "R": np.r_[np.full(190, 0.5), np.full(10, 0.9)]})
    pts.loc[199, "R"] = 0.0  # the last batch alone says 0
    assert final_score("score", pts) == pytest.approx((9 * 0.9 + 0.0) / 10)  # steps 191..200
    assert final_score("val/gsm8k", pts) == 0.0  # a validation score: its last value


def test_a_new_column_is_one_spec_entry_and_one_value():
    """Adding a column to the spec's copy (and its value to the rows) shows it on the page's first
    table, heading and cell, with the family headings spanning it, and on the demo's screen."""
    import re

    from entropylaw.page.page import summary_table
    from entropylaw.results.columns import COLUMNS, Column

    t = table.concat([_run("r1"), _run("r2")])
    res = run_results(t, n_boot=20)
    rows = [dict(r, family=f"family {i}", seen=17 + i) for i, r in enumerate(res.rows)]  # the one value
    seen = Column("seen", "points seen", cell="value", digits=0, tip="points the fit saw", short="seen", width=5,
                  screen=lambda r: f"{r.get('seen', 0):.0f}")
    spec = list(COLUMNS)
    spec.insert([c.key for c in spec].index("kind") + 1, seen)
    before, after = summary_table(rows, res.forecasts, res.methods), summary_table(rows, res.forecasts, res.methods,
                                                                                  columns=spec)
    assert "points seen" not in before and '<th title="points the fit saw">points seen</th>' in after
    # a backtest's forecast and call are made at its window, said under their headings (a finished run's
    # "continue" read as the call now)
    backtest = summary_table(rows, res.forecasts, res.methods, fit_frac=0.15)
    assert ", first 15 %</span>" in backtest and ", at 15 %</span>" in backtest and "first 15 %" not in before
    assert re.findall(r"<td>(1[78])</td>", after) == ["17", "18"]
    n = len(re.findall(r"<th[ >]", after))
    assert n == len(re.findall(r"<th[ >]", before)) + 1 and after.count(f'colspan="{n}"') == 2  # each family's heading
    ov = first_screen(t, results=res)
    ov.rows = [dict(r, seen=17 + i) for i, r in enumerate(ov.rows)]
    ov.columns = [c for c in spec if c.key != "steps"]  # the screen is 120 wide: one column makes room
    lines = ov.lines()
    head = next(i for i, line in enumerate(lines) if line.startswith(" # run"))
    at = lines[head].index("score seen") + len("score")
    assert [line[at:at + 5] for line in lines[head + 1:head + 3]] == ["   17", "   18"]
    assert all(len(line) <= 120 for line in lines) and not any("~" == line[-1:] for line in lines)


def test_a_run_not_fitted_says_why_without_its_file_and_id(tmp_path):
    """The row names its run: the error's "<file>: run '<id>': " filled 5 lines of the why cell."""
    good = _run("good")
    short = good[good["step"] <= 10].copy()
    short["run_id"] = "short"
    table.write(table.concat([good, short]), str(tmp_path / "both.parquet"))
    res = run_results(table.read(str(tmp_path / "both.parquet")), forecasts=False)
    [row] = [r for r in res.rows if r["run_id"] == "short"]
    assert row["trust"] == "not fitted" and row["trust_reasons"][0].startswith("2 paired"), row["trust_reasons"]
    assert "short" not in row["trust_reasons"][0] and str(tmp_path) not in row["trust_reasons"][0]
