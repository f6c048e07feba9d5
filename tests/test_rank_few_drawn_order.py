"""``rank`` where fewer than half the runs that could be drawn have a forecast ("none ranked"): the
``keep:`` line names a run with no forecast further down, under the drawn runs (TRL exp1a at 25 %:
the 2 collapsed runs at 0.000, rows 1-2, the pick row 3), and nothing said why. The order stays (a
run's expected score that its row does not show sets it above no run with a forecast:
test_rank_no_forecast_row), and one line above ``keep:`` says which row it is and why."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
from conftest import run_cli
from test_rank import _fake

import pytest

from entropylaw.fit.forecast import rank as rk

pytestmark = pytest.mark.printed

ROOT = Path(__file__).resolve().parents[1]
WHY = "is the run to keep: the runs with a forecast are listed first, a score no row shows setting none above them"


def _table_runs(text):
    """The runs of the table's rows, in order."""
    return re.findall(r"^ *\d+  (\S+) ", text, re.M)


def test_the_row_of_the_run_to_keep_is_said_where_runs_with_a_forecast_lead(tmp_path):
    # the TRL exp1a sweep: at 25 %, 2 runs collapsed (forecast 0.000, collapse risk), 6 with no forecast
    sweep = tmp_path / "exp1a"
    sweep.mkdir()
    for f in sorted((ROOT / "data" / "real").glob("trl_qwen2.5-7b__exp1a__*.parquet")):
        shutil.copy(f, sweep / f.name)
    out = run_cli("rank", str(sweep), "--fit-frac", "0.25")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "none ranked: 2 with a forecast, too few beside 6 with no forecast" in text, out.stdout
    rows = _table_runs(out.stdout)
    assert rows[:2] == ["qwen2.5-7b__exp1a__rho0.30_seed42", "qwen2.5-7b__exp1a__rho1.00_seed42"], out.stdout
    assert rows[2] == "qwen2.5-7b__exp1a__rho1.50_seed44" and len(rows) == 8, out.stdout
    assert f"row 3 {WHY} keep: qwen2.5-7b__exp1a__rho1.50_seed44 (expected 0.964, not shown in its row;" in text, text


def test_no_such_line_where_the_run_to_keep_is_row_1_or_has_a_forecast():
    rng = np.random.default_rng(3)
    low = {f"c{i}": _fake(f"c{i}", rng.normal(0.02 + 0.2 * i, 0.01, 400)) for i in range(2)}
    wide = {f"w{i}": _fake(f"w{i}", rng.uniform(0.0, 0.5 + 0.1 * i, 400), wide=True) for i in range(4)}
    r = rk.rank({**low, **wide})  # 2 of 6 drawn: the pick, w3, below c1 and c0
    assert [x["run_id"] for x in r.rows][:3] == ["c1", "c0", "w3"] and r.top == "w3"
    assert f"row 3 {WHY}\nkeep: w3 (" in str(r).replace("\n  ", " ")
    half = rk.rank({**low, **dict(list(wide.items())[:2])})  # half drawn: ranked, the pick row 1
    assert half.top == half.rows[0]["run_id"] and WHY not in " ".join(str(half).split())
    drawn = rk.rank({"c0": low["c0"], "w3": _fake("w3", rng.normal(0.6, 0.01, 400))})  # the pick has a forecast
    assert drawn.top == "w3" and WHY not in " ".join(str(drawn).split())
