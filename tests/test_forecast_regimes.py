"""The forecast's regimes (take-off, instability, saturation), the sweep's pooling and data that
changes mid-run: synthetic windows whose regime is known by construction, independent
computations of the pooling and the weighted quantiles, and the shared real runs (a CS336 take-off,
rasbt's collapse under KL, a CS336 sweep forecast together)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import special

import entropylaw as el
from entropylaw.fit.forecast import regimes as rg
from entropylaw.fit.forecast.regime_words import warnings_for
from entropylaw.fit.forecast import sweep
from entropylaw.fit.forecast.core import forecast, forecast_table
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.takeoff import ALL_RECIPES
from entropylaw.fit.forecast.problems import ASSUMED_PROBLEMS

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
TAKEOFF_RATES = {"take-off": {"rho": list(np.linspace(0.0, 2.0, 21)), "reached": list(np.linspace(0.3, 0.9, 21)),
                              "cases": 20, "runs": 8, "recipes": ["a", "b"], "tasks": {}},
                 "instability": {"r": [0.0] * 5 + [1.0] * 16, "cases": 20, "collapsed": 5, "runs": 10,
                                 "collapsed_runs": 4, "recipes": ["a", "b"]}}
# the same rates, stored also as the task's own (the windows below are val/math): the method's draws stay
TASK_RATES = {**TAKEOFF_RATES, "take-off": {**TAKEOFF_RATES["take-off"],
                                            "tasks": {"math": dict(TAKEOFF_RATES["take-off"])}}}


def _takeoff(end_step=60.0, seed=0):
    """A MATH-like validation score taking off from 0.04 (its logit linear in ln(1 + step))."""
    steps = np.arange(1.0, 301.0, 5.0)
    z = special.logit(0.04) + 0.9 * np.log1p(steps) - 0.9 * np.log(2.0)
    rng = np.random.default_rng(seed)
    y = rng.binomial(5000, special.expit(z)) / 5000
    return RunData.from_arrays(steps, y, np.arange(1.0, 301.0), np.full(300, 0.3), target_key="val/math"), end_step


def _saturating():
    steps = np.arange(0.0, 300.0, 10.0)
    y = 0.75 - 0.05 * np.exp(-steps / 50)
    return RunData.from_arrays(steps, y, steps, 0.5 * np.exp(-steps / 300), target_key="val/openai/gsm8k")


def test_a_run_leaving_its_floor_fast_is_in_take_off_and_a_saturating_one_is_not():
    run, end = _takeoff()
    got = rg.classify(run.window(end))
    assert got["name"] == "take-off" and got["c"] > rg.FAST
    assert rg.classify(_saturating().window(150.0))["name"] == "saturation"
    # a run resumed high (CS336's 4c2lw1ul starts at 0.44) is not near its floor: no take-off
    hi = RunData.from_arrays(run.target.steps, np.clip(run.target.values + 0.4, 0, 1), target_key="val/math")
    assert rg.classify(hi.window(end))["name"] != "take-off"


def test_instability_from_an_entropy_rising_several_fold_or_a_fall_after_a_peak():
    steps = np.arange(0.0, 200.0)
    h = np.where(steps < 100, 0.2, 0.2 * (1 + (steps - 100) / 10))  # 0.2 -> 2.1: tenfold
    run = RunData.from_arrays(steps[::10], np.full(20, 0.45), steps, h, target_key="val/math500")
    got = rg.classify(run.window(199.0))
    assert got["name"] == "instability" and "entropy rose" in got["why"] and got["entropy_fold"] > 5
    assert rg.classify(run.window(99.0))["name"] == "saturation"  # before the rise
    # the score falls 10 points after its peak: 500 problems, a point's SE ~2.2 points
    y = np.r_[np.linspace(0.3, 0.5, 10), np.linspace(0.48, 0.40, 10)]
    fall = RunData.from_arrays(steps[::10], y, target_key="val/math500")
    got = rg.classify(fall.window(199.0))
    assert got["name"] == "instability" and "below its peak" in got["why"]


def test_take_off_mixes_a_climbing_methods_own_draws_with_the_rates_and_a_flat_one_takes_the_rates():
    run, end = _takeoff()
    regime = rg.classify(run.window(end))
    steps = np.array([100.0, 300.0])
    rng = np.random.default_rng(0)
    own = np.clip(0.5 + 0.05 * rng.standard_normal((400, 2)), 0.01, 0.99)
    mid = np.median(own, axis=0)
    flat_mid, flat = rg.apply(regime, TASK_RATES, steps, mid, own, end, (0.0, 1.0), own=False)
    span = regime["c"] * np.log((1 + steps) / (1 + end))
    assert flat_mid == pytest.approx(special.expit(regime["z_end"] + 1.0 * span))  # the rates' median rho: 1
    mixed_mid, mixed = rg.apply(regime, TASK_RATES, steps, mid, own, end, (0.0, 1.0), own=True)
    assert mixed_mid == pytest.approx(np.median(mixed, axis=0))
    # an equal mixture, row by row: half the rows are the method's own draws, kept in place, the
    # other half the rates' draws, unstretched (stretching its 5 and 95 % points to each answer's
    # own covered every CS336 take-off with intervals 2-6 points wider than this)
    is_own = np.isclose(mixed, own).all(axis=1)
    is_rates = np.isclose(mixed, flat).all(axis=1)
    assert is_own.sum() == 200 and is_rates.sum() >= 200 and (is_own | is_rates).all()
    for q in (0.05, 0.1, 0.9, 0.95):  # a mixture's quantile lies between its two halves' own
        edge = np.quantile(mixed, q, axis=0)
        a, b = np.quantile(own, q, axis=0), np.quantile(flat, q, axis=0)
        assert np.all((np.minimum(a, b) - 0.02 <= edge) & (edge <= np.maximum(a, b) + 0.02))


def test_a_fall_is_stored_and_applied_as_the_logit_lost_not_a_share_of_the_climb():
    """A take-off that fell after its window is kept by the logit it lost per unit of ln(1 + step):
    scaled by a faster window's climb (rho x c), a slow GSM8K run's fall put a fast run back on
    its floor. Closed forms: the stored value, and the forecast it gives a window climbing at c."""
    run, end = _takeoff()
    win = run.window(end)
    regime = rg.classify(win)
    c, z_end = regime["c"], regime["z_end"]
    assert c > 0.5  # a fast climb: a share of it and the fall itself differ
    log_span = np.log((1 + 300.0) / (1 + end))
    for final in (0.02, 0.9):  # below the window's level (a fall), above it (a climb)
        got = rg.case(win, regime, final, 300.0)["rho"]
        change = (special.logit(final) - z_end) / log_span
        assert got == pytest.approx(change if change < 0 else change / c)
    fall = {"take-off": {**TAKEOFF_RATES["take-off"], "rho": [-0.3] * 21, "reached": [0.0] * 21}}
    fall["take-off"]["tasks"] = {"math": dict(fall["take-off"])}
    steps = np.array([100.0, 300.0])
    own = np.full((200, 2), 0.5)
    mid, draws = rg.apply(regime, fall, steps, np.median(own, axis=0), own, end, (0.0, 1.0), own=False)
    expected = special.expit(z_end - 0.3 * np.log((1 + steps) / (1 + end)))
    assert mid == pytest.approx(expected) and np.median(draws, axis=0) == pytest.approx(expected)
    assert rg.rate(-0.3, c) == -0.3 and rg.rate(0.5, c) == pytest.approx(0.5 * c)
    said = " ".join(warnings_for({**regime, "task": "math"}, fall))
    assert "went on falling 0.30 logit per unit of ln(1 + step)" in said and "times their window's rate" not in said


def test_a_take_off_that_ends_within_a_points_noise_below_its_window_stopped_it_did_not_fall():
    """A final score a little below the window's fitted end (within 3 standard errors of a point,
    the noise instability's fall is read against) is a climb that stopped: rho 0, not a fall rate
    that a longer window's span would turn into points lost (Countdown at 50 %, 0.4 standard
    errors below its last score, was stored falling 0.33 logit per unit of ln(1 + step): 11
    points over a 15 % window). Beyond the noise, the fall is stored as it is."""
    run, end = _takeoff()
    win = run.window(end)
    regime = rg.classify(win)
    level, sd = float(special.expit(regime["z_end"])), regime["point_sd"]
    log_span = np.log((1 + 300.0) / (1 + end))
    assert rg.case(win, regime, level - 2.0 * sd, 300.0)["rho"] == 0.0
    beyond = level - 4.0 * sd
    got = rg.case(win, regime, beyond, 300.0)["rho"]
    assert got == pytest.approx((special.logit(beyond) - regime["z_end"]) / log_span) and got < 0
    assert rg.case(win, regime, level + 2.0 * sd, 300.0)["rho"] > 0  # a climb, however small, is kept as a share


def test_the_mixture_keeps_a_random_half_of_rows_ordered_by_member_and_leaves_a_nan_row_alone():
    """An ensemble stacks its members' draws in order: the kept half must hold both members,
    not the first; one draw that is not a number stays in its own row."""
    run, end = _takeoff()
    regime = rg.classify(run.window(end))
    still = {"take-off": {**TAKEOFF_RATES["take-off"], "rho": [0.0] * 21, "reached": [0.0] * 21}}
    still["take-off"]["tasks"] = {"math": dict(still["take-off"])}
    steps = np.array([100.0, 300.0])
    rng = np.random.default_rng(1)
    # member one near 0.60, member two near 0.90; the rates' draws all at the window's end level (~0.48)
    own = np.r_[0.60 + 0.005 * rng.random((200, 2)), 0.90 + 0.005 * rng.random((200, 2))]
    level = float(special.expit(regime["z_end"]))
    assert level < 0.55
    mid, mixed = rg.apply(regime, still, steps, np.median(own, axis=0), own, end, (0.0, 1.0), own=True)
    high = int(np.sum(mixed[:, -1] > 0.75))   # kept rows of the second member: a quarter of 400, binomially
    assert 70 <= high <= 130, high
    assert int(np.sum(mixed[:, -1] < 0.55)) == 200   # half the rows are the rates'
    own[5, 1] = np.nan
    mid, mixed = rg.apply(regime, still, steps, np.median(own[:, :1], axis=0).repeat(2), own, end, (0.0, 1.0),
                          own=True)
    assert np.isfinite(mid).all() and int(np.isnan(mixed).sum()) <= 1 and np.isfinite(mixed[:, 0]).all()


def test_a_sweep_in_take_off_carries_its_climb_on_at_the_sweeps_rate():
    """In a sweep, with other recipes' rates or its task's own where those take-offs went on: the
    method's half of the mixture, flat or not, is the climb carried on at the sweep's median rate,
    logit(end) + m ln((1 + T) / (1 + end)), the rate drawn with the sweep's spread. A run alone,
    or a sweep of a task whose take-offs stopped, keeps the method's draws."""
    run, end = _takeoff()
    alone = rg.classify(run.window(end))
    regime = sweep.pool(alone, {"rates": [(1.4, 0.1), (1.5, 0.1), (1.6, 0.1), (1.45, 0.1)], "recipe": "r"})
    m, sd = regime["sweep_rate"]
    assert m == pytest.approx(1.475) and m > alone["c"] + 0.3   # the peers climb faster than this window
    steps = np.array([100.0, 300.0])
    still = {"take-off": {**TAKEOFF_RATES["take-off"], "rho": [0.0] * 21, "reached": [0.0] * 21}}
    own = np.full((4000, 2), 0.5)   # a method that stops the climb at 0.5
    mid, mixed = rg.apply(regime, still, steps, own[0], own, end, (0.0, 1.0), own=True)
    assert not np.any(np.isclose(mixed, 0.5))
    level = special.expit(regime["z_end"])
    kept = mixed[:, -1] > level + 1e-9  # the rates' half stays at the window's end (rho 0)
    assert 1800 <= kept.sum() <= 2200
    log_span = np.log((1 + steps[-1]) / (1 + end))
    z = special.logit(mixed[kept, -1])
    assert np.median(z) == pytest.approx(regime["z_end"] + m * log_span, abs=0.05 * log_span)
    assert np.std(z) == pytest.approx(sd * log_span, rel=0.15)
    # the peers' spread, however well the window measures its own rate
    _, sure = rg.apply({**regime, "c_se": 1e-6}, still, steps, own[0], own, end, (0.0, 1.0), own=True)
    assert np.allclose(np.sort(sure[:, -1]), np.sort(mixed[:, -1]))
    # a flat method (last-value) gets the same mixture: the sweep has measured the climb
    _, flat = rg.apply(regime, still, steps, own[0], own, end, (0.0, 1.0), own=False)
    assert np.allclose(np.sort(flat[:, -1]), np.sort(mixed[:, -1]))
    assert "carried on at its sweep's rate" in " ".join(warnings_for(regime, still))
    # the sweep of a task whose take-offs went on (median share of their rate 0.75) carries its climb on too;
    # one whose take-offs stopped (rho 0 here; GSM8K's 0.10) keeps the method's draws, as the run alone does
    went = {"take-off": {**still["take-off"], "tasks": {"math": {**still["take-off"], "rho": [0.75] * 21}}}}
    assert rg.takeoff_rates(went, regime)[1] == "runs of task 'math'"
    _, known = rg.apply(regime, went, steps, own[0], own, end, (0.0, 1.0), own=True)
    assert not np.any(np.isclose(known, 0.5)) and "carried on at its sweep's rate" in \
        " ".join(warnings_for(regime, went))
    stopped = {"take-off": {**still["take-off"], "tasks": {"math": dict(still["take-off"])}}}
    _, kept_task = rg.apply(regime, stopped, steps, own[0], own, end, (0.0, 1.0), own=True)
    assert int(np.isclose(kept_task[:, -1], 0.5).sum()) == 2000
    assert "carried on" not in " ".join(warnings_for(regime, stopped))
    _, kept_own = rg.apply(alone, still, steps, own[0], own, end, (0.0, 1.0), own=True)
    assert int(np.isclose(kept_own[:, -1], 0.5).sum()) == 2000
    assert "carried on" not in " ".join(warnings_for(alone, still))


def test_a_sweeps_carried_climb_draws_the_same_on_every_blas_kernel_and_apart_for_another_run():
    """The carried climb's random stream comes from the window's fitted numbers. Their last bits
    differ between BLAS kernels (up to ~1e-13 between OpenBLAS's SkylakeX, Haswell and Prescott
    kernels on the CS336 grid): the draws must not, or a sweep's ranking changes with the CPU (it
    did: 5 runs pruned with one kernel, 8 with another). Another run, whose rate differs in the
    third decimal, draws apart."""
    from entropylaw.fit.forecast.takeoff import own_climb

    regime = {"z_end": -1.3430951871, "c": 1.1260340417, "sweep_rate": [0.8903341287, 0.2790113745]}
    log_span = np.log(np.array([100.0, 300.0]) / 60.0)
    base = own_climb(regime, log_span, 200, (0.0, 1.0))
    for eps in (1e-12, -3e-12):
        nudged = {"z_end": regime["z_end"] * (1 + eps), "c": regime["c"] * (1 - eps),
                  "sweep_rate": [v * (1 + eps) for v in regime["sweep_rate"]]}
        np.testing.assert_allclose(own_climb(nudged, log_span, 200, (0.0, 1.0)), base, rtol=1e-10)
    other = own_climb({**regime, "c": regime["c"] + 1e-3}, log_span, 200, (0.0, 1.0))
    assert abs(np.corrcoef(other[:, -1], base[:, -1])[0, 1]) < 0.3   # independent streams, not one shifted


def test_recipes_weigh_the_same_in_the_stored_quantiles():
    # recipe a has 2 cases (0, 0.1), b and c one each: equal recipe weights put the median on b's 1.0
    # (unweighted, it would be 0.55)
    q = rg.quantiles([0.0, 0.1, 1.0, 2.0], ["a", "a", "b", "c"])
    assert q[10] == pytest.approx(1.0) and np.median([0.0, 0.1, 1.0, 2.0]) == pytest.approx(0.55)
    assert q[0] == 0.0 and q[-1] == 2.0 and np.all(np.diff(q) >= 0)


def test_the_sweep_pools_the_climb_rate_by_precision_leaving_the_run_out():
    others = [(0.5, 0.05), (0.7, 0.05), (0.6, 0.05), (0.9, 0.05)]
    got = sweep.pool({"name": "take-off", "c": 1.2, "c_se": 0.3}, {"rates": others, "recipe": "r", "runs": 4})
    rates = np.array([c for c, _ in others])
    m, sd = np.median(rates), 1.4826 * np.median(np.abs(rates - np.median(rates)))
    own = max(0.3, sd)
    assert got["pooled_c"] == pytest.approx((1.2 / own**2 + m / sd**2) / (1 / own**2 + 1 / sd**2))
    assert "forecast with 4 other runs of this sweep (r)" in got["sweep_note"]
    few = sweep.pool({"name": "take-off", "c": 1.2, "c_se": 0.3}, {"rates": others[:1], "recipe": "r", "runs": 1})
    assert "pooled_c" not in few and "sweep_note" not in few  # nothing pooled, nothing said


def test_take_off_follows_the_rates_and_opens_upward_to_what_such_runs_reached():
    run, end = _takeoff()
    fc = forecast(run, fit_steps=end, at_steps=[100.0, 300.0], methods=["default"], regime_rates=TAKEOFF_RATES)
    plain = forecast(run, fit_steps=end, at_steps=[100.0, 300.0], methods=["default"], regime_rates={})
    assert fc.regime_name == "take-off" and plain.regime_name == "take-off"
    f, p = fc.methods[fc.default].forecast, plain.methods[plain.default].forecast
    r = fc.regime
    span = r["c"] * np.log(301.0 / (1 + fc.window_end))
    # logit-drift models change: the forecast is the median of an equal mixture of its own draws and
    # the rates' (median rho 1), so it lies between its own forecast and the rates' centre
    lo_c, hi_c = sorted([p["forecast"].iloc[-1], special.expit(r["z_end"] + 1.0 * span)])
    assert lo_c - 1e-3 <= f["forecast"].iloc[-1] <= hi_c + 1e-3
    assert f["hi"].iloc[-1] >= 0.9 - 0.01 and f["hi"].iloc[-1] > p["hi"].iloc[-1]  # reaches what they reached
    # its lower end lies between the two answers' own (an equal mixture, unstretched): at or below the
    # method's own, and below the rates' centre
    stall = special.expit(r["z_end"] + 0.1 * span)
    assert min(p["lo"].iloc[-1], stall) - 0.01 <= f["lo"].iloc[-1] <= max(p["lo"].iloc[-1], stall) + 0.01
    # said in the text and the JSON
    assert fc.to_dict()["regime"] == "take-off" and any(w.startswith("take-off:") for w in fc.to_dict()["warnings"])
    text = " ".join(str(fc).split())  # wrapped at 120
    assert "regime at step" in text and "opens upward" in text
    # rates without a take-off part: said, and nothing moved
    none = forecast(run, fit_steps=end, at_steps=[300.0], methods=["default"], regime_rates={"instability": {}})
    assert any("no rates learned" in w for w in none.warnings)


def test_instability_widens_downward_and_warns_of_collapse_with_the_rate():
    steps = np.arange(0.0, 200.0)
    h = np.where(steps < 100, 0.2, 0.2 * (1 + (steps - 100) / 10))
    y = 0.45 + 0.01 * np.sin(steps[::10])
    run = RunData.from_arrays(steps[::10], y, steps, h, target_key="val/math500")
    fc = forecast(run, fit_steps=200, at_steps=[400.0], methods=["default"], regime_rates=TAKEOFF_RATES)
    plain = forecast(run, fit_steps=200, at_steps=[400.0], methods=["default"], regime_rates={})
    f, p = fc.methods[fc.default].forecast.iloc[-1], plain.methods[plain.default].forecast.iloc[-1]
    assert fc.regime_name == "instability"
    assert f["lo"] < 0.05 < p["lo"] and f["hi"] == pytest.approx(p["hi"], abs=0.02)  # widened downward only
    assert f["forecast"] == pytest.approx(p["forecast"])  # the centre stays
    said = [w for w in fc.warnings if w.startswith("collapse risk")]
    assert said and "5 (25%) ended below half their level" in said[0]


def _console_log(path, shuffle):
    files = "['/data/gsm8k/train.parquet','/data/math/train.parquet']"
    lines = [f"python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo data.train_files={files} "
             f"data.val_files=/data/gsm8k/test.parquet data.shuffle={shuffle} trainer.total_training_steps=200 "
             "actor_rollout_ref.model.path=Qwen/Qwen2.5-1.5B-Instruct"]
    for s in range(1, 101):
        val = f" - val-core/openai/gsm8k/reward/mean@1:{0.70 + 0.05 * (1 - np.exp(-s / 30)):.4f}" if s % 5 == 0 else ""
        lines.append(f"step:{s} - actor/entropy:{0.5 * np.exp(-s / 200):.4f} - critic/score/mean:0.6{val}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_data_switch_in_the_printed_config_is_warned_about_and_widens(tmp_path):
    from entropylaw.readers.dispatch import load
    import entropylaw.table as table

    got = {}
    for shuffle in ("False", "True"):
        df = load([str(_console_log(tmp_path / f"run_{shuffle}.log", shuffle))])[0]
        rid = table.run_ids(df)[0]
        run = RunData.from_table(df, rid)
        assert run.config["shuffle"] is (shuffle == "True") and len(run.config["train_files"]) == 2
        assert run.config["total_steps"] == 200
        got[shuffle] = forecast(run, fit_steps=50, at_steps=[200.0], methods=["default"], regime_rates={})
    switch, same = got["False"], got["True"]
    assert any(w.startswith("the data changes during the run") for w in switch.warnings)
    assert not any("data changes" in w for w in same.warnings)
    w_switch, w_same = (float(f.methods[f.default].forecast["hi"].iloc[-1]
                              - f.methods[f.default].forecast["lo"].iloc[-1]) for f in (switch, same))
    assert w_switch > 1.5 * w_same
    assert "assumes the same data throughout" in " ".join(str(switch).split())  # wrapped at 120
    # live (nothing after the window): the forecast goes to the planned total the config names
    live = forecast(RunData.from_table(df, rid).window(100.0), methods=["default"], regime_rates={})
    assert list(live.at_steps) == [200.0] and "planned total" in live.note


def test_rates_need_two_recipes_and_a_recipe_is_left_out_of_its_own():
    sys.path.insert(0, str(ROOT / "analysis"))
    import pandas as pd
    import bench_forecast_regimes as bfr

    rows = [{"recipe": rec, "run": f"{rec}{i}", "kind": "validation", "K": 15, "task": "math", "regime": "take-off",
             "rho": rho, "reached": 0.5, "r": None, "collapsed": None}
            for rec, rho in (("a", 0.2), ("b", 1.0)) for i in range(3)]
    cases = pd.DataFrame(rows)
    assert bfr.learn_rates(cases[cases["recipe"] == "a"]) == {}  # one recipe: no rates
    loro = bfr.loro_rates(cases)
    assert loro["a"] == {} and bfr.learn_rates(cases)["take-off"]["rho"][10] == pytest.approx(0.6)


# ------------------------------------------------------------------ the shared real runs
def _shared(*parts):
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"../shared/data/{'/'.join(parts)} is absent (only CI and developers have it)")
    sys.path.insert(0, str(ROOT / "analysis"))
    import bench_forecast_runs as br

    return br, path


@pytest.mark.shared
def test_a_cs336_run_in_take_off_at_15_percent_holds_its_final_score():
    br, path = _shared("real-cs336-wandb", "reference", "grpo_grpo_clip_lr1e-05_epoch1_train_batch128__8jla7krl.csv")
    df = br.read_shared(path)
    run = RunData.from_table(df, df["run_id"].iloc[0])
    fc = forecast(run, fit_frac=0.15, methods=["default"])
    f = fc.methods[fc.default].forecast.iloc[-1]
    final = float(run.target.values[-1])  # 0.447, from 0.094 at step 5
    assert fc.regime_name == "take-off"
    assert f["lo"] <= final <= f["hi"] and f["forecast"] > float(fc.observed["value"].iloc[1])


@pytest.mark.shared
def test_rasbt_collapse_under_kl_warns_collapse_risk_and_its_interval_holds_the_collapse():
    br, path = _shared("real-rasbt", "7_5_plus_kl_metrics.csv")
    df = br.read_rasbt(path)
    run = RunData.from_table(df, df["run_id"].iloc[0])
    assert run.target.values[1] == pytest.approx(0.408) and run.target.values[-1] == 0.0  # read as a fraction
    fc = forecast(run, fit_frac=0.15, methods=["default"])
    f = fc.methods[fc.default].forecast.iloc[-1]
    assert fc.regime_name == "instability" and any(w.startswith("collapse risk") for w in fc.warnings)
    assert f["lo"] <= 0.0 + 1e-9 and "collapse risk" in str(fc)  # the one interval that held it


@pytest.mark.shared
def test_rasbt_decline_after_an_entropy_rising_under_threefold_warns_and_holds_the_decline():
    """rasbt 7_6 (format reward): 54.8 % at 25 % of its steps, its entropy up 2.7-fold, it ends at 35 %.
    At a 3-fold threshold this window read as saturation and its interval missed the end by 20 points."""
    br, path = _shared("real-rasbt", "7_6_plus_format_reward_metrics.csv")
    df = br.read_rasbt(path)
    run = RunData.from_table(df, df["run_id"].iloc[0])
    fc = forecast(run, fit_frac=0.25, methods=["default"])
    fold = fc.regime["entropy_fold"]
    assert 2.5 <= fold < 3.0, fold  # the case the threshold of 2.5 is for
    assert fc.regime_name == "instability" and f"the entropy rose {fold:.1f}-fold" in fc.regime["why"]
    f = fc.methods[fc.default].forecast.iloc[-1]
    final = float(run.target.values[-1])
    obs = fc.observed
    now = float(obs.loc[obs["step"] <= fc.window_end, "value"].iloc[-1])  # 0.548
    assert final < now - 0.15 and f["lo"] <= final <= f["hi"]
    # nothing else in the window signals it: at a threshold above its rise (3-fold, as before) it is saturation
    assert rg.classify(run.window(fc.window_end), entropy_fold=fold + 0.01)["name"] == "saturation"


@pytest.mark.shared
def test_a_sweep_forecast_together_says_its_runs_informed_each_other():
    br, path = _shared("real-cs336-wandb", "reference")
    import pandas as pd

    df = pd.concat([br.read_shared(p) for p in sorted(path.glob("*epoch3_train_batch*.csv"))[:5]])
    out = forecast_table(df, fit_frac=0.15, methods=["default"], n_boot=50)
    assert len(out) == 5
    taking_off = [fc for fc in out.values() if fc.regime_name == "take-off"]
    assert len(taking_off) >= 4  # 4c2lw1ul starts resumed at 0.44: not near its floor
    for fc in out.values():
        pooled = "forecast with 4 other runs of this sweep" in (fc.note or "")
        assert pooled == (fc in taking_off) and pooled == ("pooled_c" in fc.regime)
    alone = forecast_table(df, fit_frac=0.15, methods=["default"], n_boot=50, sweep=False)
    assert not any("sweep" in (fc.note or "") for fc in alone.values())
    # the one-line view (5 runs) says it first, above its table, and names the regimes in a column
    text = str(out).replace("\n  ", " ")
    assert text.startswith("forecast as one sweep (") and " share a take-off climb rate" in text
    assert "regime" in text.splitlines()[2] and f"{len(taking_off)} runs in take-off" in text
    assert "one sweep" not in str(alone)


def test_two_points_of_an_unknown_benchmark_take_off_by_a_stated_noise_not_by_their_own_difference():
    """CS336's window at 15 % is 2 validations (steps 1 and 5). Read as ``val/accuracy``, the
    window's own scatter is the climb itself; a 500-problem set's noise (stated) is used instead."""
    two = RunData.from_arrays(np.array([1.0, 5.0]), np.array([0.05, 0.12]), target_key="val/accuracy")
    win = two.window(5.0)
    assert rg.point_sd(win) == pytest.approx(np.sqrt(0.12 * 0.88 / ASSUMED_PROBLEMS))
    assert rg.classify(win)["name"] == "take-off"
    flat = RunData.from_arrays(np.array([1.0, 5.0]), np.array([0.05, 0.06]), target_key="val/accuracy")
    assert rg.classify(flat.window(5.0))["name"] == "saturation"   # 1 point: within a 500-problem set's noise
    five = RunData.from_arrays(np.arange(1.0, 26.0, 5.0), np.array([0.05, 0.11, 0.16, 0.22, 0.27]),
                               target_key="val/accuracy")
    # 5 points: their own scatter about the trend (each middle point 0.005 off its neighbours' line), not the climb
    assert rg.point_sd(five.window(21.0)) == pytest.approx(1.4826 * 0.005 / np.sqrt(1.5))


def test_a_run_whose_key_names_no_benchmark_takes_its_models_take_off_rates_and_a_named_task_keeps_its_own():
    """A task's own rates, where 2 recipes or more made them; one recipe's task rates serve a run
    of that recipe's model (or none named) only; a model's own serve a run whose key names no task."""
    cases = [{"recipe": rec, "run": f"{rec}{i}", "rho": rho + 0.01 * i, "reached": 0.5, "task": task, "model": model}
             for rec, task, model, rho in (("a", "math", "qwen2.5-math-1.5b", 0.8), ("a2", "math", "qwen2.5-math-1.5b", 0.8),
                                           ("b", "gsm8k", "qwen2.5-0.5b", 0.1), ("c", "countdown", "qwen2.5-3b", -0.3))
             for i in range(3)]
    rates = rg.learn(cases)
    models = rates["take-off"]["models"]
    assert sorted(models) == ["qwen2.5-0.5b", "qwen2.5-3b", "qwen2.5-math-1.5b"]
    assert models["qwen2.5-math-1.5b"]["rho"][10] == pytest.approx(0.81) and models["qwen2.5-3b"]["tasks"] == ["countdown"]
    assert rates["take-off"]["tasks"]["gsm8k"]["models"] == ["qwen2.5-0.5b"]
    pooled = rates["take-off"]["rho"][10]
    take = {"name": "take-off", "c": 0.9}
    # the key names no benchmark: its model's runs (their task said), of 2 recipes or of one (a new run of it,
    # for all the log says); a model the rates do not know: every recipe
    got, whose = rg.takeoff_rates(rates, {**take, "task": "accuracy", "model": "qwen2.5-math-1.5b"})
    assert got["rho"][10] == pytest.approx(0.81) and "model 'qwen2.5-math-1.5b'" in whose and "math" in whose
    got, whose = rg.takeoff_rates(rates, {**take, "task": "accuracy", "model": "qwen2.5-3b"})
    assert got["rho"][10] == pytest.approx(-0.29) and "theirs: countdown; 1 recipe)" in whose
    got, whose = rg.takeoff_rates(rates, {**take, "task": "accuracy", "model": "llama-3-8b"})
    assert got["rho"][10] == pytest.approx(pooled) and "several recipes" in whose
    # a task named with another model: not that model's rates, whatever its recipes (the task says it is another)
    got, whose = rg.takeoff_rates(rates, {**take, "task": "aime24", "model": "qwen2.5-3b"})
    assert got["rho"][10] == pytest.approx(pooled) and "several recipes" in whose
    # a task named: its own rates where 2 recipes of 2 models made them, whatever the run's model
    two = rg.learn(cases + [{**c, "recipe": "m", "run": "m" + c["run"], "model": "llama-3-8b"}
                            for c in cases if c["recipe"] == "a"])
    assert rg.takeoff_rates(two, {**take, "task": "math", "model": "qwen2.5-7b"})[0]["rho"][10] == pytest.approx(0.81)
    # a task of one recipe: for that recipe's model, or a log that names none (a new run of it, for all it
    # says); for another model, every recipe's
    for model in ("qwen2.5-0.5b", ""):
        assert rg.takeoff_rates(rates, {**take, "task": "gsm8k", "model": model})[0]["rho"][10] == pytest.approx(0.11)
    assert rg.takeoff_rates(rates, {**take, "task": "gsm8k", "model": "qwen2.5-math-1.5b"})[0]["rho"][10] \
        == pytest.approx(pooled)
    assert rg.takeoff_rates(rates, {**take, "task": "aime24", "model": "qwen2.5-math-1.5b"})[0]["rho"][10] \
        == pytest.approx(pooled)
    # a model named as a hub id or a path is the same model
    assert rg.takeoff_rates(rates, {**take, "task": "gsm8k", "model": "Qwen/Qwen2.5-0.5B"})[0]["rho"][10] \
        == pytest.approx(0.11)
    # two recipes of one model are still one model's take-offs: math's (a, a2: Qwen2.5-Math) serve math runs of
    # every model only with a second model among them
    one_model = rg.learn([c for c in cases if c["recipe"] in ("a", "a2", "b")])
    assert one_model["take-off"]["tasks"]["math"]["models"] == ["qwen2.5-math-1.5b"]
    assert rg.takeoff_rates(one_model, {**take, "task": "math", "model": "qwen2.5-7b"})[1] == ALL_RECIPES
    # the regime carries the run's model, read from the table's model column as a key
    run = RunData.from_arrays(np.arange(1.0, 60.0, 5.0), np.linspace(0.04, 0.3, 12), target_key="val/accuracy")
    from dataclasses import replace
    assert rg.classify(replace(run, model="qwen2.5-math-1.5b").window(30.0))["model"] == "qwen2.5-math-1.5b"


def test_one_recipes_take_offs_do_not_carry_another_models_take_off_on_its_task():
    """A GSM8K LoRA run of Qwen2.5-0.5B-Instruct that took off from 0.00 to 0.37 in its first 17
    steps and ended at 0.54, its key renamed to MATH's: the stored MATH take-offs are the CS336
    grid's alone (one recipe, Qwen2.5-Math-1.5B from 0.05); carried on at their rates its forecast
    at 15 % was 0.905 [0.563, 0.992], 36 points past its end. Every recipe's rates hold it."""
    import entropylaw as el

    df = el.load(str(ROOT / "data" / "real-sizes" / "qwen2.5-0.5b-instruct_grpo-lora_gsm8k.csv"), warn=False)
    df["metric"] = df["metric"].astype(str).replace({"val/openai/gsm8k": "val/math"})
    run = RunData.from_table(df, df["run_id"].iloc[0])
    assert run.task == "math"
    fc = forecast(run, fit_frac=0.15, methods=["default"], n_boot=200)
    f = fc.methods[fc.default].forecast.iloc[-1]
    assert fc.regime_name == "take-off" and "real runs of several recipes" in " ".join(fc.warnings)
    assert f["lo"] <= fc.final_observed <= f["hi"] and abs(f["forecast"] - fc.final_observed) < 0.10


def test_the_validation_sets_size_given_or_read_off_the_scores_sets_the_regimes_noise():
    steps = np.arange(1.0, 31.0, 5.0)
    counts = np.array([41, 97, 173, 251, 322, 389])  # correct answers of 1,024 problems
    run = RunData.from_arrays(steps, counts / 1024, target_key="val/accuracy")
    win = run.window(26.0)
    p = counts[-1] / 1024
    assert rg.point_sd(win) == pytest.approx(np.sqrt(p * (1 - p) / 1024))  # the lattice: 1/1024
    # the same scores rounded to 3 decimals say nothing of the set: the window's own scatter
    rounded = RunData.from_arrays(steps, np.round(counts / 1024, 3), target_key="val/accuracy").window(26.0)
    assert rg.point_sd(rounded) != pytest.approx(np.sqrt(p * (1 - p) / 1024), rel=0.05)
    # a size given (forecast's n_problems) is the one used, by the regime and by the threshold
    fc = forecast(run, fit_frac=0.85, methods=["default"], n_problems=300)  # the window: the first 5 points
    p = counts[-2] / 1024
    assert fc.regime["point_sd"] == pytest.approx(np.sqrt(p * (1 - p) / 300))
    assert "300 problems, `n_problems`" in fc.decision["threshold_source"]
    fc = forecast(run, fit_frac=0.85, methods=["default"])
    assert "1024 problems, the scores are whole multiples of 1/1024" in fc.decision["threshold_source"]


def test_a_sweep_logging_accuracy_of_a_model_the_stored_rates_know_is_forecast_with_that_models_take_off():
    """A custom trainer's take-off logged as ``eval/accuracy`` (no benchmark named), its config
    naming the model as a checkpoint path: the stored rates of that model's runs are used, and
    said; the same run with no model gets every recipe's."""
    from entropylaw import table
    from entropylaw.fit.forecast import calibrate as cal

    models = cal.stored()["regimes"]["take-off"]["models"]
    assert len(models["qwen2.5-0.5b-instruct"]["recipes"]) == 2  # GSM8K runs of 2 recipes (data/)
    assert len(models["qwen2.5-math-1.5b"]["recipes"]) == 1  # the CS336 grid's, stored as fitted quantiles only
    steps = np.arange(0, 201, 5)
    counts = np.clip(np.round(1024 * special.expit(special.logit(0.04) + 0.9 * np.log1p(steps))), 1, 1000)
    recs = [(int(s), "val/accuracy", k / 1024) for s, k in zip(steps, counts)]
    said = {}
    paths = ["~/ckpt/models--Qwen--Qwen2.5-0.5B-Instruct/snapshots/" + "0" * 40,
             "~/ckpt/models--Qwen--Qwen2.5-Math-1.5B/snapshots/" + "0" * 40, ""]
    for model in paths:
        df = table.from_records(recs, run_id="r", model=model, source="run.jsonl")
        run = RunData.from_table(df, "r")
        fc = forecast(run, fit_frac=0.15, methods=["default"], n_boot=50)
        assert fc.regime_name == "take-off"
        said[model] = " ".join(fc.warnings)
    assert "runs of model 'qwen2.5-0.5b-instruct' (this run's task is not named; theirs: gsm8k; 2 recipes)" \
        in said[paths[0]]
    # a model of one recipe (the CS336 grid's): a new run of that recipe, for all the log says
    assert "runs of model 'qwen2.5-math-1.5b' (this run's task is not named; theirs: math; 1 recipe)" \
        in said[paths[1]]
    assert "real runs of several recipes" in said[""] and "runs of model" not in said[""]  # none named


@pytest.mark.shared
def test_a_real_wandb_run_naming_its_model_and_no_task_takes_that_models_take_off_rates():
    """A W&B run of the CS336 grid as its trainer wrote it (`eval/accuracy`, read as
    `val/accuracy`; Qwen2.5-Math-1.5B in its config; no data set): in take-off at 25 %, it is
    forecast at the stored rates of that model's runs (one recipe's: a new run of it, for all the
    log says), said so; read with its model's name removed, at every recipe's."""
    path = SHARED / "real-cs336-wandb" / "wandb" / "offline-run-20260331_112729-22pjweci"
    if not path.is_dir():
        pytest.skip("../shared/data/real-cs336-wandb is absent")
    df = el.load(str(path), warn=False)
    assert set(df["model"].astype(str)) == {"Qwen2.5-Math-1.5B"}
    said = {}
    for name, rows in (("named", df), ("none", df.assign(model=""))):
        fc = forecast(RunData.from_table(rows, rows["run_id"].iloc[0], y_key="val/accuracy"), fit_frac=0.25,
                      methods=["default"], n_boot=50)
        assert fc.regime_name == "take-off"
        said[name] = " ".join(fc.warnings)
    assert "runs of model 'qwen2.5-math-1.5b' (this run's task is not named; theirs: math; 1 recipe)" in said["named"]
    assert ALL_RECIPES in said["none"] and "runs of model" not in said["none"]


@pytest.mark.shared
def test_the_cs336_sweep_as_a_recipe_the_rates_do_not_know_is_forecast_from_its_sweeps_climb():
    """The CS336 grid forecast together with the stored rates less their math and
    Qwen2.5-Math groups (its task and model unknown: the rates of every recipe; CS336 is one of
    them, weighing as one recipe): each take-off carries on at the sweep's rate. Measured
    (2026-11-29): median error 6.1 / 3.0 points at 25 / 50 %, 27 and 26 of 27 held (6.4 / 3.7
    with one stream of draws for every run); the same runs forecast one by one, 15.7 / 7.5 points."""
    import pandas as pd

    from entropylaw.fit.forecast import calibrate as cal

    br, path = _shared("real-cs336-wandb", "reference")
    df = pd.concat([br.read_shared(p) for p in sorted(path.glob("*.csv"))])
    rates = cal.stored()["regimes"]
    unknown = {**rates, "take-off": {k: v for k, v in rates["take-off"].items() if k not in ("tasks", "models")}}
    final = {rid: float(g.sort_values("step")["value"].iloc[-1])
             for rid, g in df[df["metric"] == "val/math"].groupby("run_id", observed=True)}

    def measured(frac, **kw):
        out = forecast_table(df, fit_frac=frac, methods=["default"], n_boot=100, regime_rates=unknown, **kw)
        rows = [(fc, fc.methods[fc.default].forecast.iloc[-1]) for fc in out.values() if fc.methods[fc.default].ok]
        err = [abs(f["forecast"] - final[fc.run_id]) for fc, f in rows]
        held = sum(f["lo"] <= final[fc.run_id] <= f["hi"] for fc, f in rows)
        return out, 100 * float(np.median(err)), held, len(rows)

    for frac, most in ((0.25, 8.0), (0.5, 5.0)):
        out, err, held, n = measured(frac)
        _, alone, _, _ = measured(frac, sweep=False)
        assert n >= 25 and held >= n - 2, (frac, held, n)
        assert err <= most and err < 0.6 * alone, (frac, err, alone)
        carried = [fc for fc in out.values() if "carried on at its sweep's rate" in " ".join(fc.warnings or [])]
        assert len(carried) >= 20, len(carried)
        assert "(mixed with the climb carried on at their sweep's rate: a curve fitted to their windows stops" in \
            str(out).replace("\n  ", " ")


def test_the_one_line_view_says_how_many_take_offs_carry_their_sweeps_climb_on():
    """Its summary line: all, some or none of the runs in take-off with the climb carried on."""
    from types import SimpleNamespace

    from entropylaw.fit.forecast.text import _regime_lines

    carried = "take-off: ...; the forecast follows them (mixed half and half with the climb carried on at its sweep's rate)"
    own = "take-off: ...; the forecast follows them (mixed half and half with the window's own climb where ...)"

    def said(*warnings):
        fcs = {f"r{i}": SimpleNamespace(regime={}, warnings=[w], target_key="val/math", task="math")
               for i, w in enumerate(warnings)}
        return " ".join(_regime_lines(fcs)).replace("\n  ", " ")

    assert "(mixed with the climb carried on at their sweep's rate: a curve fitted to their windows stops the " \
        "climb too soon)" in said(carried, carried)
    assert "(mixed with its own climb; 1 of them with the climb carried on at their sweep's rate)" in said(carried, own)
    assert "(mixed with its own climb)," in said(own, own)


def test_a_benchmarks_hub_copy_is_its_task_for_the_rates_and_a_subset_is_not():
    """veRL names MATH after its hub copy (MATH-lighteval); the stored MATH take-offs are the CS336
    course's, logged as math: one task. MATH-500 (500 of the test problems) stays its own."""
    from entropylaw.fit.forecast.takeoff import takeoff_rates
    from entropylaw.fit.forecast.tasks import task_of

    math = {"rho": [0.9] * 21, "recipes": ["cs336"], "models": ["qwen2.5-math-1.5b"]}
    rates = {"take-off": {"rho": [0.1] * 21, "tasks": {"math": math}, "models": {}}}
    steps = np.arange(1.0, 60.0, 5.0)
    for key, dataset, task in (("val/DigitalLearningGmbH/MATH-lighteval/reward/mean@1", "", "math"),
                               ("val/hendrycks_math/acc", "", "math"),
                               ("val/accuracy", "EleutherAI/hendrycks_math", "math"),
                               ("val/math500", "", "math500"), ("val/HuggingFaceH4/MATH-500", "", "math-500")):
        assert task_of(key, dataset) == task, key
        whose = takeoff_rates(rates, {"task": task, "model": "qwen2.5-math-1.5b"})[1]
        assert whose == ("runs of task 'math'" if task == "math" else ALL_RECIPES), key
    run = RunData.from_arrays(steps, 0.04 + 0.3 * np.log1p(steps) / np.log(60),
                              target_key="val/DigitalLearningGmbH/MATH-lighteval")
    assert run.task == "math"


def test_a_fast_take_off_of_an_unnamed_task_is_not_sent_back_to_its_floor_by_other_recipes_falls():
    """A custom trainer's accuracy (no task named: every recipe's stored rates) climbing from 0.06
    to 0.42 in its first 30 of 200 steps. Other recipes' take-offs that fell did so after slow
    climbs; scaled by this one's fast rate they put its 90 % lower bound 32 points below the
    window's end; kept as the logit they lost, 12 below. The steady take-offs stored now fell by no
    more than a point's noise (read as stopping, rho 0): the bound is the window's end, no fall."""
    steps = np.arange(0.0, 201.0, 5.0)
    p = 0.03 + 0.77 / (1 + np.exp(-(steps - 30.0) / 9.0))
    y = np.random.default_rng(0).binomial(1024, p) / 1024
    run = RunData.from_arrays(steps, y, np.arange(0.0, 201.0), np.full(201, 0.3), target_key="val/accuracy")
    fc = forecast(run, fit_frac=0.15, n_boot=200, methods=["default"], n_problems=1024)
    gain = fc.decision["gain"]
    assert "take-off" in " ".join(fc.methods[fc.default].warnings) and ALL_RECIPES in " ".join(
        fc.methods[fc.default].warnings)
    assert 0.0 <= gain["lo"] < 0.01 < gain["expected"], gain


def test_a_sweep_of_a_task_whose_take_offs_stopped_is_not_carried_past_where_they_stop(tmp_path):
    """Four seeds of the GSM8K LoRA 0.5B run (its validation redrawn, 1,319 problems): an instruct
    model learning the answer's format climbs from 0.00 to 0.37 in 17 steps and ends at 0.55. The
    stored GSM8K take-offs went on at a tenth of their rate; carried on at the sweep's rate, the
    sweep was forecast 0.85 at 15 % (0.72-0.78 at 25 %). The method's own draws stay."""
    import pandas as pd


    src = pd.read_csv(ROOT / "data" / "real-sizes" / "qwen2.5-0.5b-instruct_grpo-lora_gsm8k.csv")
    key = "val-core/openai/gsm8k/reward/mean@1"
    for seed in range(4):
        d = src.copy()
        m = d[key].notna()
        d.loc[m, key] = np.random.default_rng(seed).binomial(1319, d.loc[m, key].clip(0, 1)) / 1319
        d.to_csv(tmp_path / f"qwen2.5-0.5b-instruct_grpo-lora_gsm8k_seed{seed}.csv", index=False)
    df = el.load(str(tmp_path), warn=False)
    for frac in (0.15, 0.25):
        out = forecast_table(df, fit_frac=frac, methods=["default"], n_boot=100)
        assert len(out) == 4
        for fc in out.values():
            said = " ".join(fc.warnings or [])
            assert "take-off" in said and "carried on at its sweep's rate" not in said, said
            fin = fc.methods[fc.default].forecast.iloc[-1]["forecast"]
            assert abs(fin - fc.final_observed) < 0.08, (frac, fc.run_id, fin, fc.final_observed)
