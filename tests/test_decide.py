"""The decision: the gain to go from joint draws, the call and where it is likely made, the
cost, the one-line-per-run view, and the call on a real run that kept climbing."""

from __future__ import annotations


import json
import re
from pathlib import Path

from conftest import run_cli

import numpy as np
import pytest

from entropylaw.fit.forecast import decide as dc
from entropylaw.fit.forecast import log_facts as lf
from entropylaw.fit.forecast.core import forecast, forecast_table
from entropylaw.fit.forecast.data import RunData

pytestmark = pytest.mark.printed
ROOT = Path(__file__).resolve().parents[1]
CLIMBER = ROOT / "data/real/verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data.parquet"


class Known:
    """A method with given draws: the level at the window's end per draw, and the final score
    a fixed gain above it (joint), or an independent one."""

    def __init__(self, now, final):
        self.now, self.final = np.asarray(now, float), np.asarray(final, float)

    def predictive(self, steps, average=False, noise=True):
        return np.array([self.final.mean()]), self.final[:, None]

    def curve(self, steps):
        steps = np.asarray(steps, float)
        return np.full(len(steps), self.now.mean()), np.repeat(self.now[:, None], len(steps), axis=1)


def test_the_gain_interval_is_of_final_minus_now_per_draw_not_a_difference_of_intervals():
    rng = np.random.default_rng(0)
    now = rng.normal(0.5, 0.05, 2000)
    m = Known(now, now + 0.03)  # every draw gains exactly 3 points, whatever its level
    final, fdraws, level, ndraws = dc.final_and_now(m, "validation", 0.0, 100.0, 400.0, 10.0)
    g = dc.gain_summary(fdraws - ndraws, final - level, 0.9)
    assert g["lo"] == pytest.approx(0.03) and g["hi"] == pytest.approx(0.03)
    assert dc.call_of(g["lo"], g["hi"], 0.01) == "continue"
    # a difference of the two intervals would span [-13, +19] points: undecided, wrongly
    lo_f, hi_f = np.quantile(fdraws, [0.05, 0.95])
    lo_n, hi_n = np.quantile(ndraws, [0.05, 0.95])
    assert dc.call_of(lo_f - hi_n, hi_f - lo_n, 0.01) == "undecided"
    # independent draws: the gain's interval is the spread of a difference, sqrt(2) x 0.05 x 1.28 each side (one-sided
    # 90 % bounds)
    m = Known(now, rng.normal(0.53, 0.05, 2000))
    final, fdraws, level, ndraws = dc.final_and_now(m, "validation", 0.0, 100.0, 400.0, 10.0)
    g = dc.gain_summary(fdraws - ndraws, final - level, 0.9)
    assert g["hi"] - g["lo"] == pytest.approx(2 * 1.2816 * 0.05 * np.sqrt(2), rel=0.08)  # 10th to 90th pct


def test_the_gain_is_of_the_expected_score_without_one_evaluations_noise():
    """What continuing adds is the change of the expected score: the final's draws the gain is
    read from are the curve's (here no model error), not the curve's plus one observation's noise."""
    from entropylaw.fit.forecast.curve_methods import ExpSaturation

    steps = np.arange(0.0, 300.0, 5.0)
    noise = np.random.default_rng(3).normal(0.0, 0.02, len(steps))
    m = ExpSaturation(n_boot=400).fit(RunData.from_arrays(steps, 0.8 - 0.5 * np.exp(-steps / 60) + noise).window(100))
    m.bounds_, m.q_, m.calibrated = None, 0.0, False  # no bounded scale, no model error, no factor: the curve alone
    _, expected = dc.final_draws(m, "validation", 0.0, 295.0, 5.0, noise=False)
    assert np.allclose(expected, m._draws(np.array([295.0]))[:, 0])
    _, observed = dc.final_draws(m, "validation", 0.0, 295.0, 5.0)
    # one observation's noise, sigma_ about 0.02, on top: the draws differ by a normal of that SD
    assert np.std(observed - expected) == pytest.approx(m.sigma_, rel=0.15) and m.sigma_ > 0.01


@pytest.mark.parametrize("lo,hi,thr,call", [(0.0, 0.009, 0.01, "stop"), (-0.2, 0.0099, 0.01, "stop"),
                                            (0.011, 0.5, 0.01, "continue"), (0.0, 0.02, 0.01, "undecided"),
                                            (0.01, 0.01, 0.01, "undecided")])
def test_the_call_from_the_interval_and_the_threshold(lo, hi, thr, call):
    assert dc.call_of(lo, hi, thr) == call


def test_the_likely_call_is_where_the_narrowed_interval_leaves_the_threshold():
    steps = np.linspace(100, 1000, 901)
    remaining = 0.05 * (1000 - steps) / 900  # the expected remaining gain, linear to 0 at step 1000
    step, call = dc.likely_call(steps, remaining, 0.04, 0.04, 0.0, 0.02)
    # closed form: 0.05 (1000 - s) / 900 + 0.04 sqrt(h(s) / h(100)) = 0.02, h(s) = (1000 - s) / s
    s = np.linspace(100, 1000, 90001)
    f = 0.05 * (1000 - s) / 900 + 0.04 * np.sqrt(((1000 - s) / s) / 9.0) - 0.02
    assert call == "stop" and step == pytest.approx(s[np.argmax(f < 0)], abs=1.01)
    # a large sure gain is called continue once the interval narrows
    step, call = dc.likely_call(steps, 0.3 * np.ones_like(steps), 0.4, 0.4, 0.0, 0.02)
    assert call == "continue" and 100 < step < 1000


def test_a_gain_the_curve_does_not_place_in_time_is_not_called_continue_at_the_runs_end():
    """Before: a flat last-value whose final the take-off regime lifted kept the whole lift as the gain
    left at every step, the last one too: "the call is likely made at step 200 (continue)", where nothing
    of the run is left to continue (seen on a backtest at half of a 200-step run)."""
    steps = np.linspace(100.5, 200, 200)
    step, call = dc.likely_call(steps, np.full_like(steps, 0.0148), 0.062, 0.068, 1.0, 0.0114)
    assert call == "stop" and 100.5 < step < 200
    # a curve that places its gain in time (nothing left at N) is read as before
    remaining = 0.05 * (200 - steps) / 99.5
    assert dc.likely_call(steps, remaining, 0.04, 0.04, 0.0, 0.02) == dc.likely_call(
        steps, remaining - remaining[-1], 0.04, 0.04, 0.0, 0.02)


def test_saturated_climbing_and_noisy_runs_get_their_calls():
    steps = np.arange(0, 500, 10.0)
    flat = RunData.from_arrays(steps, 0.7 - 0.3 * np.exp(-steps / 15))  # done by step 100
    d = forecast(flat, fit_frac=0.5, methods=["exp-saturation"], n_boot=50).decision
    assert d["call"] == "stop" and d["gain"]["hi"] < d["threshold"] and d["gain"]["to_step"] == 490
    rising = RunData.from_arrays(steps, 0.9 - 0.7 * np.exp(-steps / 400))
    d = forecast(rising, fit_frac=0.5, methods=["exp-saturation"], n_boot=50).decision
    assert d["call"] == "continue" and d["gain"]["lo"] > d["threshold"]
    true_gain = 0.7 * (np.exp(-d["gain"]["from_step"] / 400) - np.exp(-490 / 400))
    assert d["gain"]["expected"] == pytest.approx(true_gain, abs=0.01)
    noisy = RunData.from_arrays(steps, 0.6 - 0.1 * np.exp(-steps / 300)
                                + 0.03 * np.random.default_rng(1).standard_normal(len(steps)))
    d = forecast(noisy, fit_frac=0.3, methods=["exp-saturation"], n_boot=50).decision
    assert d["call"] == "undecided" and d["gain"]["lo"] <= d["threshold"] <= d["gain"]["hi"]
    assert d["likely"] is None or d["gain"]["from_step"] < d["likely"]["step"] <= 490


def test_too_few_draws_make_no_call():
    """The gain's one-sided 90 % points from a handful of draws bound nothing: the done run that
    gets "stop" from 50 draws gets no call from 19, said with the option to raise."""
    steps = np.arange(0, 500, 10.0)
    flat = RunData.from_arrays(steps, 0.7 - 0.3 * np.exp(-steps / 15))
    assert forecast(flat, fit_frac=0.5, methods=["exp-saturation"], n_boot=20).decision["call"] == "stop"
    d = forecast(flat, fit_frac=0.5, methods=["exp-saturation"], n_boot=19).decision
    assert d["call"] is None and "19 draws (`n_boot`)" in d["reason"] and "20 or more" in d["reason"]
    assert d["threshold"] and d["gain"]["to_step"] == 490  # the gain is still said


def test_a_run_that_kept_climbing_is_not_told_to_stop():
    """At 15 % today's rule said "stop at step 65"; the run then gained +8.5 points."""
    import entropylaw as el

    df = el.load(str(CLIMBER), warn=False)
    fc = forecast_table(df, methods=["default"], fit_frac=0.15, n_boot=200)[el.run_ids(df)[0]]
    d = fc.decision
    assert fc.final_observed - 0.484 > 0.08  # what it then did (0.484 at the window's end, 0.569 at the end)
    assert d["call"] != "stop" and d["gain"]["hi"] > d["threshold"] and d["gain"]["expected"] > 0.02
    assert d["gain"]["to_step"] == 434
    assert 0.01 <= d["threshold"] <= 0.03


def test_a_run_that_has_not_left_its_floor_is_neither_told_to_stop_nor_forecast():
    """veRL's PPO on GSM8K scored 0.000, 0.000, 0.002 in its first 22 steps, then 0.384 at step 29 (it learned the
    answers' format) and 0.508 by step 139: from the 22 steps the call was "stop" (+0.0 [-0.1, +0.3] points to go)
    and the forecast 0.002 [0.000, 0.006]. A window at the floor says nothing of when the run takes off."""
    import entropylaw as el

    df = el.load(str(ROOT / "data/real/verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp256_verl-data.parquet"), warn=False)
    fc = forecast_table(df, methods=["default"], fit_steps=22, n_boot=100)[el.run_ids(df)[0]]
    assert fc.final_observed > 0.45 and max(fc.methods[fc.default].final["forecast"], 0) < 0.01  # what it then did
    d = fc.decision
    assert d["call"] is None and d["reason"].startswith(dc.FLOOR), d
    assert "0 to 0.002 at all 3 points" in d["reason"]
    assert fc.methods[fc.default].final["no_forecast"].startswith(f"no forecast: {dc.FLOOR}")
    # a window whose score has left the floor gets its call as before
    later = forecast_table(df, methods=["default"], fit_steps=40, n_boot=100)[el.run_ids(df)[0]]
    assert not str(later.decision.get("reason", "")).startswith(dc.FLOOR)


def test_no_call_without_a_forecast():
    import entropylaw as el

    df = el.load(str(ROOT / "data/real/trl_qwen2.5-7b__exp1a__rho0.10_seed43.parquet"), warn=False)
    fc = forecast_table(df, methods=["default"], fit_frac=0.15, n_boot=100)[el.run_ids(df)[0]]
    assert fc.methods[fc.default].final["no_forecast"] and fc.decision["call"] is None
    text = str(fc)
    assert "call: none: no forecast" in text and "stop paying" not in text and "step 34 [34, 34]" not in text


def test_cost_from_a_given_cost_or_the_logs_timing():
    assert dc.cost_of(100, step_cost=0.5)["amount"] == 50.0
    c = dc.cost_of(100, step_seconds=36.0)
    assert c["amount"] == pytest.approx(1.0) and c["unit"] == "wall-clock hours"
    assert dc.cost_of(100) is None and dc.cost_of(100, step_seconds=float("nan")) is None
    assert lf.step_seconds_upto((np.arange(10.0), np.r_[np.full(5, 10.0), np.full(5, 99.0)]), 4) == 10.0


def test_cost_from_an_older_verl_logs_timing_phases():
    """Older veRL logs each phase (timing/gen, timing/update_actor, ...) and no total: a step's time
    is their sum (validation's timing/testing only on the steps that validate); the total, where
    logged, is read instead."""
    from entropylaw import table

    rng = np.random.default_rng(0)
    steps = np.arange(0.0, 40.0)
    phases = {"timing/gen": 18 + rng.random(40), "timing/ref": np.full(40, 5.4),
              "timing/update_actor": 20 + rng.random(40)}
    recs = [(s, k, float(v[i])) for k, v in phases.items() for i, s in enumerate(steps)]
    recs += [(s, "timing/testing", 57.0) for s in steps[9::10]] + [(s, "val/gsm8k", 0.5) for s in steps]
    facts = lf.log_facts(table.from_records(recs, run_id="r"), "r")
    total = sum(phases.values()) + np.where(np.isin(steps, steps[9::10]), 57.0, 0.0)  # each step's own sum
    assert lf.step_seconds_upto(facts["timing"], 19.0) == pytest.approx(float(np.median(total[:20])))
    assert "4 timing phases, gen, ref, testing, update_actor" in facts["timing_what"]
    cost = dc.cost_of(100, step_seconds=60.0, timing_what=facts["timing_what"])
    assert "the log's timing (the sum of its 4 timing phases" in cost["source"]
    with_total = table.from_records(recs + [(s, "timing_s/step", 70.0) for s in steps], run_id="r")
    assert lf.log_facts(with_total, "r")["timing_what"] == "timing_s/step"


def test_planned_last_step_from_the_log_unless_the_run_went_past_it():
    assert dc.to_step_of(None, 300.0, 200.0, False, 200.0, 50.0)[0] == 300.0  # live: the plan
    # a backtest of a log that stops before its plan: its end is the truth the forecast's table is read at
    assert dc.to_step_of(None, 300.0, 200.0, True, 200.0, 50.0)[0] == 200.0
    assert dc.to_step_of(None, 300.0, 500.0, True, 500.0, 50.0) == (500.0, "the score's last logged step, a backtest")
    assert dc.to_step_of(1000.0, 300.0, 500.0, True, 500.0, 50.0)[0] == 1000.0
    assert "give `total_steps`" in dc.to_step_of(None, None, 100.0, False, 150.0, 100.0)[1]


def _cli(*args):
    return run_cli(*args)


def test_json_schema_of_the_decision_and_the_cost():
    out = _cli("forecast", "data/real/verl_gpg_qwen2-7b-instruct_gsm8k+math_fsdp.parquet", "--fit-frac", "0.25",
               "--n-boot", "50", "--json")
    assert out.returncode == 0, out.stderr
    [doc] = json.loads(out.stdout)  # one run: a list of one
    # the window's last point, and the run's own last step (a backtest sees the run go on)
    assert doc["last_logged_step"] <= doc["window_end"] < doc["run_last_step"] == 210
    d = doc["decision"]
    assert d["call"] in ("stop", "continue", "undecided", None) and 0.01 <= d["threshold"] <= 0.03
    assert set(d["gain"]) >= {"to_step", "expected", "lo", "hi"} and d["gain"]["to_step"] == 210
    assert d["gain"]["lo"] <= d["gain"]["hi"] and d["cost"]["unit"] == "wall-clock hours"
    # veRL's timing_s/step: about 220 s a step over the window
    assert d["cost"]["per_step"] == pytest.approx(220, rel=0.1)
    assert d["cost"]["amount"] == pytest.approx((210 - d["gain"]["from_step"]) * d["cost"]["per_step"] / 3600)


INTERVAL_OR_NONE = re.compile(r"\[[-+]?\d|no forecast")


def test_many_runs_one_line_each_and_full():
    out = _cli("forecast", "data/real", "--fit-frac", "0.15", "--n-boot", "20")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    rows = lines[2:22]  # under the header, a name each: the id, or what sets the run apart in it (said)
    assert len(lines) < 60 and max(map(len, lines)) <= 120 and "20 runs, one line each" in lines[0]
    names = [line.split("  ")[0].strip() for line in rows]
    assert len(set(names)) == 20 and all(names) and INTERVAL_OR_NONE.search(rows[-1]), out.stdout  # one line a run
    assert sum("no call" in line for line in lines) >= 8 and not any("stop paying" in line for line in lines)
    full = _cli("forecast", "data/real/verl_gpg_qwen2-7b-instruct_gsm8k+math_fsdp.parquet",
                "data/real/verl_opd_qwen3-4b_aime24_collapse.parquet", "data/real/trl_qwen2.5-7b__exp1a__rho0.10_seed43"
                ".parquet", "data/real/trl_qwen2.5-7b__exp1a__rho0.30_seed42.parquet", "--fit-frac", "0.15",
                "--n-boot", "20", "--full")
    assert full.returncode == 0 and sum(line.startswith("run ") for line in full.stdout.splitlines()) == 4


def _bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_decide", ROOT / "analysis" / "bench_decide.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_backtest_scores_calls_against_what_the_run_then_did():
    import pandas as pd

    bench = _bench()
    cases = pd.DataFrame([  # a stop whose run then gained 3 points (wrong), a right stop, a continue that lost
        {"frac": 0.15, "call": "stop", "threshold": 0.01, "realised": 0.03, "lo": -0.01, "hi": 0.005, "point": 0.01},
        {"frac": 0.15, "call": "stop", "threshold": 0.01, "realised": 0.0, "lo": -0.01, "hi": 0.005, "point": 0.01},
        {"frac": 0.15, "call": "continue", "threshold": 0.01, "realised": 0.002, "lo": 0.02, "hi": 0.05, "point": 0.01},
        {"frac": 0.15, "call": None, "threshold": None, "realised": 0.0, "lo": None, "hi": None, "point": None}])
    row = next(line for line in bench.call_table(cases) if line.startswith("| 15 %"))
    assert row == "| 15 % | 4 | 2 | 1 | 1 | 1 | 0 | 1 | 75 % |"


@pytest.mark.shared
def test_the_backtest_reads_the_rasbt_runs_in_fractions():
    if not (ROOT.parent / "shared" / "data" / "real-rasbt").is_dir():
        pytest.skip("../shared/data/real-rasbt is absent (only CI and developers have it)")
    df = _bench().rasbt()
    val = df[df["metric"].astype(str).str.startswith("val/")]
    assert len(set(df["run_id"])) == 4 and 0.4 < val["value"].max() <= 1.0   # 56.2 % at most, as a fraction


def test_watch_says_the_gain_the_call_and_the_cost(tmp_path):
    from entropylaw import table

    recs = [(s, "val/gsm8k", 0.75 - 0.35 * np.exp(-s / 90)) for s in range(0, 300, 10)]
    recs += [(s, "entropy", 0.05 + 0.5 * np.exp(-s / 90)) for s in range(0, 300)]
    path = tmp_path / "run.csv"
    table.from_records(recs, run_id="r").to_csv(path, index=False)
    out = run_cli("watch", str(path), "--plain", "--max-refreshes", "1", "--total-steps", "600", "--step-cost", "0.5",
                  "--n-boot", "20")
    assert out.returncode == 0, out.stderr
    assert "to step 600 adds" in out.stdout and "for 150 GPU-hours" in out.stdout and "call: " in out.stdout


def test_a_tiny_window_is_one_line_for_rank_and_forecast(tmp_path):
    for args in (["rank", str(CLIMBER), "--fit-frac", "0.001"], ["forecast", str(CLIMBER), "--fit-steps", "1"]):
        out = _cli(*args)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert len([ln for ln in out.stderr.splitlines() if ln.startswith("entropylaw: error")]) == 1


def test_a_run_left_out_is_in_the_json_of_forecast_and_rank_with_why(tmp_path):
    """A sweep with one run of a single point in its window: the JSON that scripts read listed
    only the runs forecast (the run left out was on stderr alone). It is an entry of each list,
    with why; --strict refuses."""
    import shutil

    shutil.copy(CLIMBER, tmp_path / CLIMBER.name)
    shutil.copy(CLIMBER.parent / CLIMBER.name.replace("resp512", "resp256"), tmp_path)
    (tmp_path / "tiny.csv").write_text("step,entropy,val/test_score/gsm8k\n1,0.9,0.1\n2,0.8,0.2\n")
    for command in ("forecast", "rank"):
        out = _cli(command, str(tmp_path), "--fit-frac", "0.25", "--json")
        assert out.returncode == 0, out.stderr
        docs = json.loads(out.stdout)
        assert [d["run_id"] for d in docs][-1] == "tiny" and len(docs) == 3
        assert "1 validation point" in docs[-1]["left_out"], docs[-1]
        assert all(d.get("left_out") is None for d in docs[:-1])
        if command == "rank":
            assert set(docs[-1]) == set(docs[0]) and docs[-1]["expected"] is None and docs[-1]["prune"] is None
        strict = _cli(command, str(tmp_path), "--fit-frac", "0.25", "--strict")
        assert strict.returncode == 2 and "left out (1 run): tiny (no method can forecast" in strict.stderr, \
            strict.stderr


def test_a_live_run_gains_to_the_planned_total_its_printed_config_states():
    """A run still going (the window is all of it) whose trainer printed total_training_steps: the gain
    runs to that step, and says where N came from."""
    import json

    import numpy as np

    import entropylaw as el
    from entropylaw import table

    recs = [(s, "val/gsm8k", float(0.7 - 0.5 * np.exp(-s / 80))) for s in range(0, 121, 5)]
    recs += [(s, "entropy", float(0.9 * np.exp(-s / 60))) for s in range(0, 121, 5)]
    df = table.from_records(recs, run_id="live", config=json.dumps({"total_steps": 400}))
    gain = el.forecast(df, run="live").to_dict()["decision"]["gain"]
    assert gain["to_step"] == 400 and "planned last step the log" in json.dumps(gain)


def test_a_gain_that_rounds_to_nothing_is_said_without_a_sign():
    """A finished run's forecast of 0 from a score of 0 gives an expected gain of a few 1e-6:
    it read "-0.0 [+0.0, +100.0]", a point below its own lower bound."""
    from entropylaw.fit.forecast.text import gain_text
    from entropylaw.results.columns import pts

    d = {"gain": {"expected": -4e-6, "lo": 0.0, "hi": 1.0}, "point": 0.01}
    assert gain_text(d) == "+0.0 [+0.0, +100.0]"
    assert dc.as_points(-4e-4, (0.0, 1.0)) == "+0.0" and dc.as_points(-0.0006, (0.0, 1.0)) == "-0.1"
    assert pts(-4e-6, 0.01) == "+0.0" and pts(-4e-6, None) == "+0.000"  # no points: 3 decimals, as forecast writes it


def test_every_interval_holds_its_own_forecast_where_the_refits_land_elsewhere(tmp_path):
    """A straight climb at a constant entropy (a hostile input: the saturating curves' refits
    all land below the fit): the final score read 0.961 [0.674, 0.850], the 90 % step 22242
    [23000, 23000] and the gain +46.1 [+18.5, +34.4], each a point outside its own interval."""
    import entropylaw as el

    path = tmp_path / "climb.jsonl"
    path.write_text("".join(json.dumps({"step": s, "entropy": 0.5, "reward": 0.01 * s}) + "\n" for s in range(1, 51)))
    df = el.load(str(path), warn=False)
    fc = forecast_table(df, methods=["default", "last-value"], n_boot=100)["climb"]
    shown = [r for r in fc.methods.values() if r.ok]
    assert {r.method for r in shown} == {"curve-ensemble", "last-value"}
    for r in shown:
        f = r.final
        assert f["lo"] <= f["forecast"] <= f["hi"], (r.method, f)
        last = r.forecast.iloc[-1]
        assert last["lo"] <= last["forecast"] <= last["hi"], r.method
        for point, ci in ((r.plateau, r.plateau_ci), (r.t90, r.t90_ci)):
            if point is not None and ci is not None:
                assert (ci[0] is None or ci[0] <= point) and (ci[1] is None or point <= ci[1]), (r.method, point, ci)
    ens = fc.methods["curve-ensemble"]
    assert ens.final["draws_interval"][1] < ens.final["forecast"]  # the refits' own interval missed it: kept, said
    assert any("lies outside its refits' interval" in w for w in ens.warnings)
    g = fc.decision["gain"]
    assert g["lo"] <= g["expected"] <= g["hi"] and fc.decision["call"] == "continue"  # it climbs on: +49 by step 99
    res = run_cli("forecast", str(path), "--n-boot", "100", "--json")
    assert res.returncode == 0, res.stderr


def test_a_one_line_table_too_wide_leaves_out_the_observed_score_and_keeps_its_columns():
    """A run with a forecast in its own units (5726.537 [-3682.978, 19790.842]) made the table
    wider than 120 columns: the widest row was then wrapped word by word, out of its columns."""
    from entropylaw.fit.forecast.text import ONE_LINE, line_table

    rows = [{"run": "percentrun", "final": "5726.537 [-3682.978, 19790.842]", "observed": "75.629", "to": "200",
             "gain": "+5687 [-3712, +5687]", "call": "undecided (continue ~27)", "regime": ""},
            {"run": "risingrun1", "final": "no forecast", "observed": "0.029", "to": "200",
             "gain": "-29.6 [-64.0, +37.1]", "call": "no call", "regime": "instability"}]
    cols = [c for c in ONE_LINE if c[1] != "window"]  # one window for every run: said above the table
    wide = line_table(rows, cols, width=200).splitlines()
    assert "observed" in wide[0] and len(wide) == 3
    lines = line_table(rows, cols, width=120).splitlines()
    assert lines[-1] == "(left out at 120 columns: observed; the JSON has them)"
    assert all(len(x) <= 120 for x in lines) and "observed" not in lines[0]
    at = lines[0].index("regime")
    assert lines[2].index("instability") == at and lines[2].index("no call") == lines[0].index("call")


def test_the_phases_summed_leave_out_the_parts_of_another_phase_and_read_a_total():
    """generate_sequences and reshard run inside gen, profiling is none of a step's work: summed,
    they made a step 24 % longer than its logged total; timing/step is a total."""
    from entropylaw import table

    steps = np.arange(0.0, 10.0)
    recs = [(s, k, v) for s in steps for k, v in (("timing_s/gen", 100.0), ("timing_s/generate_sequences", 80.0),
                                                  ("timing_s/reshard", 5.0), ("timing_s/update_actor", 60.0),
                                                  ("timing_s/start_profile", 1.0))]
    facts = lf.log_facts(table.from_records(recs, run_id="r"), "r")
    assert lf.step_seconds_upto(facts["timing"], 9.0) == 160.0 and "2 timing phases, gen, update_actor" in \
        facts["timing_what"]
    total = table.from_records(recs + [(s, "timing/step", 170.0) for s in steps], run_id="r")
    assert lf.log_facts(total, "r")["timing_what"] == "timing/step"


def test_the_likely_step_is_a_whole_step_after_the_window_and_the_text_says_the_json_s():
    """The likely step was a point of the gain's grid, 100.497: the text printed "likely made at step
    100", the window's own end, where the call is undecided, and the JSON said 100.497."""
    import entropylaw as el

    rng = np.random.default_rng(0)
    s = np.arange(1, 101.0)
    h = 1.2 * np.exp(-s / 40) + 0.2
    y = np.clip(-0.5 * np.exp(h) + 1.4 + rng.normal(0, 0.01, len(s)), 0, 1)
    recs = [(t, "entropy", v) for t, v in zip(s, h)] + [(t, "val/gsm8k", v) for t, v in zip(s, y)]
    fc = el.forecast(el.table.from_records(recs, run_id="r"), n_boot=50)
    d = fc.decision
    assert d["call"] == "undecided" and d["likely"] is not None
    step = d["likely"]["step"]
    assert step == int(step) and step > fc.window_end
    assert f"likely made at step {step:.0f} ({d['likely']['call']})" in str(fc)
    assert json.loads(json.dumps(fc.to_dict()))["decision"]["likely"]["step"] == step


def test_a_target_above_a_constant_score_gets_no_answer_not_zero_percent_of_draws():
    """Before: the call said "nothing in the window says whether or when it moves", and the target line
    under it "not reached (reached in 0 % of draws by step 3981)"."""
    steps = np.arange(1.0, 201.0)
    stuck = RunData.from_arrays(steps, np.full(len(steps), 0.5), steps, 1.5 * np.exp(-steps / 60) + 0.2)
    fc = forecast(stuck, target=0.8, n_boot=30)
    d = fc.decision
    assert d["call"] is None and d["target_step"] is None and d["p_reach"] is None and d["target_unknown"]
    text = str(fc)
    assert "target 0.8 (logit-drift): no answer" in text and "0 % of draws" not in text
    met = forecast(stuck, target=0.3, n_boot=30).decision  # below the constant: met, as before
    assert met["target_step"] == 200 and met["p_reach"] == 1.0


def test_a_target_under_no_forecast_gets_no_answer():
    """Before: "call: none: no forecast ... the window does not say where the run ends", and under it the
    target line "not reached (reached in 0 % of draws ...)" or a step, surer than the call."""
    steps = np.arange(0.0, 100.0, 5.0)
    run = RunData.from_arrays(steps, 0.02 + 0.6 * (1 - np.exp(-steps / 40)), steps, 0.8 * np.exp(-steps / 30) + 0.05)
    fc = forecast(run, fit_frac=0.1, target=0.5, n_boot=60)
    d = fc.decision
    assert d["call"] is None and str(d["reason"]).startswith("no forecast")
    assert d["target_step"] is None and d["p_reach"] is None and d["target_unknown"]
    text = " ".join(str(fc).split())
    assert "target 0.5 (logit-drift): no answer" in text and "nor when it reaches 0.5" in text
    assert "% of draws" not in text


def test_a_threshold_below_a_tenth_of_a_point_is_not_printed_as_zero():
    """Before: --threshold 0.0001 read "the gain's interval holds the threshold 0.0 points"."""
    steps = np.arange(1.0, 201.0)
    run = RunData.from_arrays(steps, 0.8 - 0.5 * np.exp(-steps / 50) + 0.01 * np.sin(steps), steps,
                              1.5 * np.exp(-steps / 60) + 0.2)
    text = " ".join(str(forecast(run, fit_frac=0.5, threshold=1e-4, n_boot=30)).split())
    assert "the threshold 0.01 points" in text and "threshold 0.0 points" not in text


def test_a_call_only_at_the_last_step_is_no_call_before_the_runs_end():
    """Before: a tiny threshold's undecided call read "the call is likely made at step 399 (stop)", 399
    being the last step the gain runs to: no call is made before the run ends."""
    s = np.linspace(100, 1000, 10)
    assert dc.likely_call(s, 0.05 * (1000 - s) / 900, 0.1, 0.1, 0.0, 0.002) is None  # was (1000.0, "stop")
    assert dc.likely_call(s, 0.05 * (1000 - s) / 900, 0.04, 0.04, 0.0, 0.02) == (800.0, "stop")


def test_a_target_met_at_the_windows_end_is_said_once():
    """Before: "target 0.3 (...): step 200 [200, 200] (reached in 100 % of draws by step 3981)" and under it
    "already reached at the window's end": met now, and by a step 19 times as far."""
    steps = np.arange(1.0, 201.0)
    run = RunData.from_arrays(steps, 0.8 - 0.4 * np.exp(-steps / 60), steps, 1.5 * np.exp(-steps / 60) + 0.2)
    fc = forecast(run, target=0.3, n_boot=30)
    d = fc.decision
    assert d["target_met"] and d["target_step"] == 200 and d["p_reach"] == 1.0  # the numbers are as before
    lines = [line for line in str(fc).splitlines() if "target 0.3" in line or "already reached" in line]
    assert lines == [f"  target 0.3 ({d['method']}): already reached at the window's end (step 200)"]


def test_a_target_met_by_the_curve_but_not_by_all_draws_says_when_they_reach_it():
    from entropylaw.fit.forecast.target import target_lines, target_step

    steps = np.linspace(200, 4000, 600)
    mid = 0.8 + 0.1 * (1 - np.exp(-(steps - 200) / 300))
    d = {**target_step(steps, mid, np.vstack([mid + e for e in np.linspace(-0.03, 0.03, 40)]), 0.8), "method": "m"}
    assert target_lines(d) == ["    target 0.8 (m): already reached at the window's end (step 200) by the expected "
                               "curve; its draws reach it at step [200, 294] (reached in 100 % of draws by step 4000)"]


def test_a_target_the_window_met_is_met_under_no_forecast_too():
    """A run with no forecast (its interval too wide: the window does not say where it ends) whose score is above
    the target at the window's end: the target is met, not "no answer"; the text view crashed on it (a met target
    with no step: TypeError), where --json read target_met and target_unknown both true."""
    steps = np.arange(0.0, 100.0, 5.0)
    run = RunData.from_arrays(steps, 0.02 + 0.6 * (1 - np.exp(-steps / 40)), steps, 0.8 * np.exp(-steps / 30) + 0.05)
    fc = forecast(run, fit_frac=0.1, target=0.01, n_boot=60)
    d = fc.decision
    assert d["call"] is None and str(d["reason"]).startswith("no forecast")  # the window says no end
    assert d["target_met"] and not d.get("target_unknown") and d["target_step"] is not None
    text = " ".join(str(fc).split())
    assert f"target 0.01 ({d['method']}): already reached at the window's end (step" in text
