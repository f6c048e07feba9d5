"""A run below rank's prune cut that is kept says why; a run left out is said once, with advice
that fits its cause; a mistyped command is answered with the one meant; forecast's --full says
where it changes anything."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _course_runs import planned_sweep
from conftest import SHARED, run_cli
from test_rank import _fake

from entropylaw import table
from entropylaw.cli.left_out import pointer
from entropylaw.fit.forecast import rank as rk
from entropylaw.fit.forecast.window_hint import window_hint


def _rows(ranking) -> dict:
    return {x["run_id"]: x for x in ranking.rows}


def _ending_at(run_id, draws, step):
    fc = _fake(run_id, draws)
    fc.decision = {**fc.decision, "gain": {"to_step": step}}
    return fc


def test_a_share_within_the_draws_error_of_the_cut_is_kept_and_says_so():
    lead = np.full(200, 0.60)
    near5 = np.r_[np.full(5, 0.60), np.full(195, 0.30)]  # 2.5 % near the best: not told from 5 % by 200 draws
    near2 = np.r_[np.full(2, 0.60), np.full(198, 0.30)]  # 1 %: below beyond the error, pruned
    r = rk.rank({"lead": _fake("lead", lead), "kept": _fake("kept", near5), "cut": _fake("cut", near2)})
    rows = _rows(r)
    assert rows["kept"]["p_near"] == pytest.approx(0.025) and not rows["kept"]["prune"]
    assert "5 of 200 joint draws" in rows["kept"]["keep_reason"] and "error" in rows["kept"]["keep_reason"]
    assert rows["cut"]["prune"] and rows["cut"]["keep_reason"] is None and rows["lead"]["keep_reason"] is None
    text = str(r)
    row = next(x for x in text.splitlines() if x.split()[:2] == ["2", "kept"])
    assert row.split()[9] == "no*"  # the row's prune column points at the line under the table
    flat = " ".join(text.split())
    assert "no* (row 2): p_near below 5 %, but not pruned: its share (5 of 200 joint draws)" in flat
    assert all(len(x) <= 120 for x in text.splitlines())
    doc = {d["run_id"]: d for d in r.to_dict()}
    assert doc["kept"]["keep_reason"] == rows["kept"]["keep_reason"] and doc["cut"]["keep_reason"] is None


def test_a_run_beside_carried_take_offs_says_why_it_is_not_pruned():
    rng = np.random.default_rng(2)
    wide = {f"w{i}": _fake(f"w{i}", rng.uniform(0.2, 0.9, 400), carried=True, wide=True) for i in range(6)}
    r = rk.rank({**wide, "n": _fake("n", rng.normal(0.55, 0.01, 400))})
    row = _rows(r)["n"]
    assert row["p_near"] < 0.05 and not row["prune"]
    assert row["keep_reason"].startswith("beside the sweep's take-offs (carried on at the sweep's rate)")
    assert all(x["keep_reason"] is None for x in r.rows if x["run_id"] != "n")
    flat = " ".join(str(r).split())
    assert "but not pruned: beside the sweep's take-offs" in flat and "one of them alone" in flat


def test_a_run_that_ends_earlier_says_it_is_compared_with_the_runs_that_end_no_later():
    rng = np.random.default_rng(4)
    r = rk.rank({"a": _ending_at("a", rng.normal(0.60, 0.01, 200), 50),
                 "b": _ending_at("b", rng.normal(0.59, 0.01, 200), 50),
                 "early": _ending_at("early", rng.normal(0.30, 0.01, 200), 20)})
    rows = _rows(r)
    assert rows["early"]["p_near"] == 0.0 and not rows["early"]["prune"]
    assert rows["early"]["keep_reason"].startswith("it ends earlier than other runs (step 20, not 50)")
    assert rows["b"]["keep_reason"] is None  # near the best: nothing to explain


def test_too_few_draws_is_the_reason_where_nothing_can_be_pruned():
    r = rk.rank({"a": _fake("a", np.full(30, 0.6)), "b": _fake("b", np.full(30, 0.3))})
    assert _rows(r)["b"]["keep_reason"] == "a forecast has too few draws to prune on (`n_boot`)"
    assert "no*" not in str(r) and "too few to prune on" in str(r)  # every run's reason: the note says it once


def test_a_run_that_ended_early_is_not_told_to_log_more_often():
    recs = [(s, "val/acc", 0.3 + s / 100) for s in (1, 10)] + [(s, "entropy", 1 - s / 60) for s in range(1, 11)]
    short = table.from_records(recs, run_id="short")
    hint = window_hint(short, "short", 0.25, longest=50)
    assert "ended early: its log stops at step 10, where other runs go on to 50" in hint
    assert "more often" not in hint
    # alone (nothing to compare its end with), a run whose whole log holds 2 scores logs too rarely
    assert window_hint(short, "short", 0.25).endswith("(log the score more often)")


def test_a_run_left_out_is_said_once_in_full_and_pointed_at_on_stderr(tmp_path):
    root = planned_sweep(tmp_path / "sweep", {"a": (100, True), "b": (100, True), "c": (100, True),
                                               "short": (10, True)}, total=100)
    out = run_cli("forecast", str(root), "--fit-frac", "0.25", "--n-boot", "30")
    assert out.returncode == 0, out.stderr
    flat_out, flat_err = " ".join(out.stdout.split()), " ".join(out.stderr.split())
    assert flat_out.count("left out: short:") == 1 and "the run ended early" in flat_out, out.stdout
    assert "more often" not in flat_out
    assert "run 'short' left out: why in the 'left out:' line of the output" in flat_err, out.stderr
    assert "no method can forecast" not in flat_err  # the reason itself: once, in the output
    assert pointer(["short"], json_out=True) == "run 'short' left out: why in its JSON row ('left_out')"


@pytest.mark.parametrize("args, meant", [(("forcast", "x.csv"), "'forecast'"), (("rnak", "x"), "'rank'"),
                                         (("lab", "rnu"), "'run'")])
def test_a_mistyped_command_is_answered_with_the_one_meant(args, meant):
    out = run_cli(*args)
    assert out.returncode == 2 and f"did you mean {meant}?" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_an_unlike_command_gets_no_guess():
    out = run_cli("zzzzzz")
    assert out.returncode == 2 and "invalid choice" in out.stderr and "did you mean" not in out.stderr


def test_forecast_full_says_it_changes_nothing_for_three_runs_or_fewer():
    out = run_cli("forecast", "--help")
    assert "3 runs or fewer always get it: --full adds nothing there" in " ".join(out.stdout.split())


@pytest.mark.shared
def test_the_cs336_sweep_says_why_each_run_below_the_cut_is_kept():
    path = SHARED / "data" / "real-cs336-wandb" / "reference"
    if not Path(path).is_dir():
        pytest.skip("../shared/data/real-cs336-wandb is absent (only CI and developers have it)")
    out = run_cli("rank", str(path), "--fit-frac", "0.25", "--json")
    rows = [d for d in json.loads(out.stdout) if d["left_out"] is None]
    kept = [d for d in rows if d["p_near"] is not None and d["p_near"] < 0.05 and not d["prune"]]
    assert kept and all(d["keep_reason"] for d in kept)
    assert all(d["keep_reason"] is None for d in rows if d["prune"] or (d["p_near"] or 0) >= 0.05)
