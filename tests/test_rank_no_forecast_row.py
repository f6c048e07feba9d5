"""``rank``'s table: a run with no forecast shows its interval, not its expected score.

Before, its row read ``0.558 [0.000, 0.710]`` in the column of the ranked runs' expected scores
(rasbt's ``7_6_plus_format_reward_metrics`` at 25 %): the highest number of the sweep, read as the
best run, for an expected score the window cannot bound. ``--json`` keeps its ``expected`` and says
which rows have no forecast (``no_forecast``)."""

from __future__ import annotations

import json
import re

from conftest import run_cli
from test_rank import _sweep

import numpy as np
import pytest

from entropylaw.fit.forecast import rank as rk
from entropylaw.fit.forecast.core import forecast_table

pytestmark = pytest.mark.printed


def _no_forecast(fc, point):
    """``fc`` made one whose interval is too wide to be a forecast, its expected score ``point``."""
    fc.final_draws = np.random.default_rng(1).uniform(0.0, 1.0, len(fc.final_draws))
    fc.final_point = point
    fc.methods[fc.default].final = {**(fc.methods[fc.default].final or {}), "no_forecast": "the interval ..."}


def _row_line(text, rid):
    return next(line for line in text.splitlines() if f" {rid} " in f"{line} ")


def test_a_row_with_no_forecast_shows_its_interval_not_its_expected_score():
    fcs = forecast_table(_sweep(n_runs=3), methods=["default"], fit_frac=0.5, n_boot=200)
    _no_forecast(fcs["run00"], 0.9)  # above every ranked run's expected score
    r = rk.rank(fcs)
    text = str(r)
    wide, ranked = _row_line(text, "run00"), _row_line(text, "run02")
    row = next(x for x in r.rows if x["run_id"] == "run00")
    assert "0.900" not in wide and f"[{row['lo']:.3f}, {row['hi']:.3f}]" in wide
    # the dash stands where the number would, the interval's bracket in line with the ranked rows'
    assert wide.index("[") == ranked.index("[") and wide[wide.index("[") - 2:wide.index("[")] == "- "
    assert f"{next(x for x in r.rows if x['run_id'] == 'run02')['expected']:.3f} [" in ranked
    flat = " ".join(text.split())
    assert "the run is listed with its interval only (its expected score, one the window cannot bound, is no final " \
           "score to compare: `expected` in --json)" in flat
    assert "keep: run02 (the highest expected final score among the runs with a forecast)" in flat
    # the JSON keeps the expected score and says which rows have no forecast
    rows = {x["run_id"]: x for x in r.to_dict()}
    assert rows["run00"]["expected"] == pytest.approx(0.9) and rows["run00"]["no_forecast"] is True
    assert rows["run01"]["no_forecast"] is False and rows["run02"]["no_forecast"] is False


def test_a_pick_with_no_forecast_says_its_expected_score_its_row_does_not_show():
    """Most runs with no forecast: the pick reads every run's expected score, so the line naming it
    says the number its row leaves out. The one run with a forecast, alone drawn (no p_best), is listed
    first (before, the hidden 0.900 sorted its run above it) and counted as one ("most runs have no
    forecast", not "no run has a forecast")."""
    fcs = forecast_table(_sweep(n_runs=3), methods=["default"], fit_frac=0.5, n_boot=200)
    for rid, point in (("run00", 0.9), ("run01", 0.7)):
        _no_forecast(fcs[rid], point)
    r = rk.rank(fcs)
    assert r.top == "run00" and [x["run_id"] for x in r.rows] == ["run02", "run00", "run01"]
    assert all(x["p_best"] is None for x in r.rows)
    flat = " ".join(str(r).split())
    assert "keep: run00 (expected 0.900, not shown in its row; the highest expected final score; most runs have no " \
           "forecast" in flat
    assert "0.900 [" not in str(r) and "0.700 [" not in str(r)


def test_the_cli_json_says_no_forecast_and_the_table_stays_one_line_a_run(tmp_path):
    """A sweep of runs taking off, each forecast alone (--no-sweep): every row no forecast, its
    interval only; the JSON rows say so with their expected scores."""
    from test_rank import _takeoff_sweep

    path = tmp_path / "sweep.parquet"
    _takeoff_sweep().to_parquet(path)
    out = run_cli("rank", str(path), "--fit-frac", "0.08", "--n-boot", "100", "--no-sweep")
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if re.match(r" ?\d+  run\d\d ", line)]
    assert len(rows) == 6 and all(line.split()[2] == "-" and line.split()[3].startswith("[") for line in rows), rows
    assert len({line.index("[") for line in rows}) == 1
    doc = json.loads(run_cli("rank", str(path), "--fit-frac", "0.08", "--n-boot", "100", "--no-sweep",
                             "--json").stdout)
    assert len(doc) == 6 and all(x["no_forecast"] is True and x["expected"] is not None for x in doc), doc
