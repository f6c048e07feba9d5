"""The call and its forecast agree with the table a user reads: the same final interval, the same
step, a curve that is shown; and no call from a window whose score never moved."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData

REAL = Path(__file__).resolve().parents[1] / "data" / "real"


def _climb(n=200, every=5, logged_to=None, seed=0, noise=0.01, rate=0.15):
    """A validation score climbing in log-steps, entropy falling; the entropy logged to ``logged_to``."""
    rng = np.random.default_rng(seed)
    v = np.arange(every, n + 1.0, every)
    z = 0.2 + rate * np.log1p(v)
    val = 1 / (1 + np.exp(-z)) + noise * rng.standard_normal(len(v))
    s = np.arange(1, (logged_to or n) + 1.0)
    return RunData.from_arrays(v, val, s, 0.1 + 0.8 * np.exp(-s / 60), target_key="val/openai/gsm8k")


def _final(fc, name):
    return fc.methods[name].final


def test_the_tables_final_interval_is_the_calls():
    """One step's draws were those of the column it had among the steps asked: the table (every
    later step) and the call (the last one alone) gave [0.6970, 0.7425] and [0.6918, 0.7394]."""
    fc = forecast(_climb(), fit_frac=0.25, methods=["default"], n_boot=200)
    shown = _final(fc, fc.default)
    assert fc.decision["method"] == fc.default
    assert (shown["lo"], shown["hi"]) == pytest.approx((fc.decision["final"]["lo"], fc.decision["final"]["hi"]),
                                                       abs=1e-12)


def test_a_backtests_gain_runs_to_the_scores_last_step_not_a_later_log_line():
    """A log whose entropy goes on 3 steps past its last validation: the table forecast step 200,
    the call step 203, a step the score was never logged at."""
    fc = forecast(_climb(logged_to=203), fit_frac=0.25, methods=["default"], n_boot=200)
    assert fc.decision["gain"]["to_step"] == 200.0 == fc.decision["final"]["step"]
    assert "score's last logged step" in fc.decision["gain"]["to_step_source"]


def test_the_curve_the_call_reads_is_shown():
    """A collapsed run on its floor: the default cannot run, last-value has no gain; the call read
    the power curve, which no row of the table showed ("gain (power) ... call: stop")."""
    path = REAL / "verl_opd_qwen3-4b_aime24_collapse.parquet"
    if not path.exists():
        pytest.skip("no data/real")
    import entropylaw as el

    from entropylaw.fit.forecast import calibrate as cal

    df = el.load(str(path), warn=False)
    run = RunData.from_table(df, el.run_ids(df)[0])
    stored = cal.stored()["regimes"]
    # without the rates of runs on their floor after a collapse (regimes.on_floor), last-value does not move
    fc = forecast(run, fit_frac=0.15, methods=["default"], n_boot=200,
                  regime_rates={k: v for k, v in stored.items() if k != "floor"})
    read = fc.decision["method"]
    assert read not in (fc.default, "last-value") and fc.methods[read].ok
    assert "the curve the call reads" in fc.methods[read].note
    assert read in fc.to_dict()["methods"]
    # with them, the table's last-value is the curve the call reads
    fc = forecast(run, fit_frac=0.15, methods=["default"], n_boot=200)
    assert fc.decision["method"] == fc.default == "last-value" and fc.decision["call"] == "stop"


def test_no_call_from_a_window_whose_score_never_moved():
    """Six validations at 0: every curve through them is flat, and its zero-width interval said
    "stop" (+0.0 [+0.0, +0.0] points)."""
    v = np.arange(5, 101, 5.0)
    val = np.where(v <= 30, 0.0, np.minimum(0.8, (v - 30) / 50))  # it takes off after the window
    s = np.arange(1, 101.0)
    run = RunData.from_arrays(v, val, s, 0.1 + 0.8 * np.exp(-s / 60), target_key="val/accuracy")
    fc = forecast(run, fit_frac=0.3, methods=["default"], n_boot=200)
    assert fc.decision["call"] is None
    assert "constant in the window (0 at all 6 points)" in fc.decision["reason"]


def test_a_target_is_searched_up_to_the_planned_end_not_past_it():
    """`--target 0.7 --total-steps 100` on a 100-step run said "not reached (reached in 26 % of
    draws by step 595)": a step past the run's planned end is no answer to "will it reach it"."""
    run = _climb(n=100, rate=0.15)
    fc = forecast(run, fit_frac=0.3, methods=["default"], n_boot=200, target=0.99, total_steps=100)
    assert fc.decision["target_searched_to"] == 100.0
    assert fc.decision["target_step"] is None and "not reached by step 100" in fc.decision["target_note"]
    assert "levels off" not in fc.decision["target_note"]  # a drift has no plateau: its value there
    backtest = forecast(run, fit_frac=0.3, methods=["default"], n_boot=200, target=0.99)
    assert backtest.decision["target_searched_to"] > 100.0  # no plan: how far it goes, said with the step


def test_the_table_ends_where_the_call_does_when_total_steps_is_given():
    """A backtest with `--total-steps 50` on a 100-step log: the table forecast step 100 and the
    call step 50; live with `--total-steps 200`, the table forecast as far ahead as the window
    is long (step 120) and the call step 200."""
    run = _climb(n=100)
    fc = forecast(run, fit_frac=0.3, methods=["default"], n_boot=200, total_steps=50)
    assert fc.at_steps[-1] == 50.0 == fc.decision["gain"]["to_step"]
    assert any("the log goes on past `total_steps` 50 (to step 100)" in n for n in fc.note.split("; "))
    live = forecast(_climb(n=60), methods=["default"], n_boot=200, total_steps=200)
    assert list(live.at_steps) == [200.0] == [live.decision["gain"]["to_step"]]


def test_a_collapse_on_a_score_of_another_range_is_not_said_in_points():
    """A reward in [-1, 1] fell "50.5 points ... below its peak of 0.010" beside a gain in score
    units: a share of its range it is."""
    path = REAL / "verl_opd_qwen3-4b_aime24_collapse.parquet"
    if not path.exists():
        pytest.skip("no data/real")
    import entropylaw as el

    df = el.load(str(path), warn=False)
    fc = forecast(RunData.from_table(df, el.run_ids(df)[0]), fit_frac=0.15, methods=["default"], n_boot=200)
    why = fc.regime["why"]
    assert "50.5 % of the score's range or more below its peak" in why and "points or more" not in why


def test_a_measure_is_not_called_a_task():
    """"task 'accuracy' is not among the tasks the prior was learned on": a measure's name is no
    task; said as such."""
    rng = np.random.default_rng(1)
    v = np.arange(5, 101, 5.0)
    s = np.arange(1, 101.0)
    run = RunData.from_arrays(v, 0.3 + 0.004 * v + 0.01 * rng.standard_normal(len(v)), s,
                              0.1 + 0.8 * np.exp(-s / 60), target_key="val/accuracy")
    said = " ".join(forecast(run, fit_frac=0.3, methods=["logit-drift"], n_boot=50).methods["logit-drift"].warnings)
    assert "the score names no task (only the measure 'accuracy')" in said and "task 'accuracy'" not in said


def test_one_line_tables_keep_runs_apart_when_names_are_cut():
    """`forecast data/real` at 100 columns cut eight TRL runs to 'qwen2.5-~0_seed42' and alike."""
    from entropylaw.fit.forecast.text import line_table

    names = [f"qwen2.5-7b__exp1a__rho{r:.2f}_seed{s}" for r in (0.1, 0.3, 1.0) for s in (42, 43)] + ["verl_ppo_x"]
    text = line_table([{"run": n, "final": "0.500 [0.400, 0.600]"} for n in names],
                      [("run", "run"), ("final", "final")], width=40)
    shown = [line.split()[0] for line in text.splitlines()[1:1 + len(names)]]
    # what sets each run apart in its id (no "~" cut), said under the table
    assert len(set(shown)) == len(names) and "rho0.10_seed42" in shown and "verl_ppo_x" in shown, text
    assert "what sets it apart in its id" in " ".join(text.split())


def test_a_run_at_collapse_risk_is_not_the_pick_beside_steady_runs():
    """rasbt at 50 %: 7_3, at collapse risk with an interval [0.000, 0.498], was picked on its
    expected 0.430 over 7_4's 0.422 [0.386, 0.461], and ended 8.6 points below the best."""
    from entropylaw.fit.forecast.rank import Ranking

    def row(rid, expected, regime):
        return {"run_id": rid, "expected": expected, "lo": 0.0, "hi": 0.5, "p_best": 0.3, "p_near": 0.5,
                "regime": regime, "constant": False}
    rows = [row("7_3", 0.430, "instability"), row("7_4", 0.422, "saturation"), row("7_5", 0.0, "instability")]
    ranking = Ranking(rows, 0.03, "given", 0.9, 0.5, 0.01, [])
    assert ranking.top == "7_4" and "collapse risk are not picked" in ranking.top_basis
    every = Ranking([row("a", 0.43, "instability"), row("b", 0.42, "instability")], 0.03, "given", 0.9, 0.5, 0.01, [])
    assert every.top == "a"  # all at risk: the highest still


def test_a_flat_level_a_take_off_moves_shows_no_plateau():
    """CS336 at 25 %: last-value, moved by the take-off to 0.434, showed its flat level 0.168 as
    its plateau: a plateau below its own forecast."""
    v = np.arange(1, 101.0)
    z = -3.2 + 1.1 * np.log1p(v)
    run = RunData.from_arrays(v[::5], 1 / (1 + np.exp(-z[::5])), v, 0.1 + 0.8 * np.exp(-v / 60),
                              target_key="val/math")
    fc = forecast(run, fit_frac=0.15, methods=["last-value"], n_boot=200)
    lv = fc.methods["last-value"]
    if (fc.regime["name"] == "take-off"
            and lv.forecast["forecast"].iloc[-1] > run.window(fc.window_end).target.values[-1]):
        assert lv.plateau is None and lv.plateau_ci is None
    else:
        pytest.fail(f"the run is no take-off the regime moves: {fc.regime['name']}")
    flat = forecast(_climb(), fit_frac=0.25, methods=["last-value"], n_boot=200).methods["last-value"]
    assert flat.plateau is not None  # saturation: its level is its plateau


def test_runs_of_one_name_in_two_folders_say_where_each_is_from(tmp_path):
    """dup1/grpo.csv and dup2/grpo.csv were `grpo` and `grpo-2`, and neither the text nor the JSON
    said which file each was."""
    import entropylaw as el

    for folder, rate in (("dup1", 0.3), ("dup2", 0.2)):
        (tmp_path / folder).mkdir()
        rows = "".join(f"{s},{1.0 / s:.4f},{min(0.9, 0.1 + rate * np.log1p(s) / 3):.4f}\n" for s in range(1, 61))
        (tmp_path / folder / "grpo.csv").write_text("step,entropy,val/accuracy\n" + rows)
    df = el.load([str(tmp_path / "dup1" / "grpo.csv"), str(tmp_path / "dup2" / "grpo.csv")], warn=False)
    said = " ".join(n for a in el.row_accounts(df) for n in a["notes"])
    assert f"run 'grpo' read as 'grpo-2': the run 'grpo' is {tmp_path / 'dup1' / 'grpo.csv'}" in said
    ranked = {r["run_id"]: r["source"] for r in el.rank(df, fit_frac=0.3, n_boot=50).to_dict()}
    assert ranked == {"grpo": str(tmp_path / "dup1" / "grpo.csv"), "grpo-2": str(tmp_path / "dup2" / "grpo.csv")}


def test_forecast_json_says_which_file_each_run_of_one_name_is_from(tmp_path):
    """forecast DIR --json over dup1/grpo.csv and dup2/grpo.csv gave `grpo` and `grpo-2` and no file
    (rank --json said each run's `source`); now each run's object says it, as rank's does."""
    import json

    from conftest import run_cli

    for folder, rate in (("dup1", 0.3), ("dup2", 0.2)):
        (tmp_path / folder).mkdir()
        rows = "".join(f"{s},{1.0 / s:.4f},{min(0.9, 0.1 + rate * np.log1p(s) / 3):.4f}\n" for s in range(1, 61))
        (tmp_path / folder / "grpo.csv").write_text("step,entropy,val/accuracy\n" + rows)
    out = run_cli("forecast", str(tmp_path), "--fit-frac", "0.3", "--n-boot", "30", "--json")
    assert out.returncode == 0, out.stderr
    got = {d["run_id"]: d["source"] for d in json.loads(out.stdout)}
    assert got == {"grpo": str(tmp_path / "dup1" / "grpo.csv"), "grpo-2": str(tmp_path / "dup2" / "grpo.csv")}
    ranked = run_cli("rank", str(tmp_path), "--fit-frac", "0.3", "--n-boot", "30", "--json")
    assert {d["run_id"]: d["source"] for d in json.loads(ranked.stdout)} == got  # the same words as rank's
