"""Forecasts: the entropy's form, law+train, bounded calibrated intervals, the threshold, the
gain to go and the call, the target step, and where they are shown (the call's own logic:
tests/test_decide.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import special

from conftest import run_cli

from entropylaw.fit.forecast import calibrate as cal
from entropylaw.fit.forecast import decide as dc
from entropylaw.fit.forecast import curves as fc
from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.entropy import EntropyPath, choose
from entropylaw.fit.forecast.law import LawTrain
from entropylaw.fit.forecast.target import target_step

# prints numbers: run again under another BLAS kernel set (make test, OPENBLAS_CORETYPE=Prescott)
pytestmark = pytest.mark.printed


# ---------------------------------------------------------------- the entropy's form
@pytest.mark.parametrize("form,make", [
    ("exp-decay", lambda t: 0.05 + 0.6 * np.exp(-t / 40)),
    ("power", lambda t: 0.5 * (t + 1) ** -0.6),
    ("power-decay", lambda t: 0.08 + 0.9 * (t + 1) ** -0.9),
])
def test_entropy_form_is_recovered_by_its_own_backtest(form, make):
    rng = np.random.default_rng(3)
    t = np.arange(0, 300.0)
    H = make(t) * np.exp(0.01 * rng.standard_normal(len(t)))
    path = EntropyPath(n_boot=50, seed=1).fit(t, H)
    assert path.form_ == form, path.errors_
    far = np.array([3000.0])
    assert abs(path.predict(far)[0] - make(far)[0]) < 0.02
    assert np.all(path.draws(np.linspace(0, 1e5, 50)) >= -1e-12)  # H >= 0 in every draw
    assert path.floor_ >= 0


def test_entropy_form_needs_points():
    with pytest.raises(fc.TooFewPoints):
        choose(np.arange(3.0), np.array([0.5, 0.4, 0.3]), 3.0)


def test_power_form_ignores_zero_entropy_but_says_when_too_few_remain():
    t = np.arange(10.0)
    H = np.zeros(10)
    H[:2] = [0.3, 0.2]
    with pytest.raises(fc.TooFewPoints):
        EntropyPath(form="power").fit(t, H)


# ---------------------------------------------------------------- law+train
def _dense_run(a=0.8, b=1.5, offset=-0.05, n=400, every=10, noise=0.004, seed=0):
    rng = np.random.default_rng(seed)
    s = np.arange(1, n + 1.0)
    H = 0.05 + 0.5 * np.exp(-s / 120)
    train = b - a * np.exp(H)
    v = np.arange(every, n + 1.0, every)
    val = b - a * np.exp(np.interp(v, s, H)) + offset
    return RunData.from_arrays(v, val + noise * rng.standard_normal(len(v)), s, H, s,
                               train + noise * rng.standard_normal(len(s))), (b - a * np.exp(H[-1]) + offset)


def test_law_train_recovers_the_validation_gain_from_the_training_slope():
    run, final = _dense_run()
    m = LawTrain(n_boot=50).fit(run.window(100))
    assert m.ok_, m.reason_
    assert abs(m.law_.beta[0] - 0.8) < 0.1  # the slope a, from the dense late half
    pred = float(m.predict([400])["forecast"][0])
    assert abs(pred - final) < 0.01
    last = float(run.window(100).target.values[-1])
    assert abs(last - final) > 0.03  # the test can fail: carrying the last value forward would miss


def test_law_train_refuses_a_training_score_on_another_scale_and_too_few_points():
    run, _ = _dense_run()
    s = run.score
    scaled = RunData.from_arrays(run.target.steps, run.target.values, run.entropy.steps, run.entropy.values,
                                 s.steps, 10 * s.values)
    m = LawTrain(n_boot=0).fit(scaled.window(100))
    assert not m.ok_ and "scale" in m.reason_
    m = LawTrain(n_boot=0).fit(run.window(5))
    assert not m.ok_ and m.reason_


# ---------------------------------------------------------------- bounded, calibrated intervals
def test_bounded_draws_stay_inside_and_match_the_delta_method():
    mid = np.array([0.95, 0.5, 0.02])
    draws = mid + np.random.default_rng(0).normal(0, 0.01, (4000, 3))
    out = cal.scale_draws(mid, draws, (0.0, 1.0), 1.0)
    assert np.all((out > 0) & (out < 1))
    # small noise: the delta method reproduces the score-scale spread (independent: the raw draws' SD)
    assert np.allclose(np.std(out, axis=0), np.std(draws, axis=0), rtol=0.25)
    # doubling c doubles the spread on the logit scale where the slope is taken at the mid
    wide = cal.scale_draws(mid, draws, (0.0, 1.0), 2.0)
    ratio = np.std(special.logit(wide[:, 1])) / np.std(special.logit(out[:, 1]))
    assert abs(ratio - 2.0) < 1e-6


@pytest.mark.parametrize("mid,sd", [(1.0, 0.02), (0.999, 0.02), (0.0, 0.05), (0.99, 0.005), (0.97, 0.03)])
def test_an_interval_near_a_bound_holds_the_point_and_the_bound_and_widens_with_c(mid, sd):
    """At a bound the interval is neither the whole range nor a sliver beside the bound that
    leaves out the point itself, and the calibration factor c still widens it."""
    draws = mid + np.random.default_rng(2).normal(0, sd, (4000, 1))
    widths = []
    for c in (1.0, 2.0):
        out = cal.scale_draws(np.array([mid]), draws, (0.0, 1.0), c)
        lo, hi = np.quantile(out, [0.05, 0.95])
        assert lo <= mid <= hi
        if np.quantile(draws, 0.95) >= 1 or np.quantile(draws, 0.05) <= 0:
            assert lo == 0.0 or hi == 1.0  # the draws cross the bound: the interval holds it
        widths.append(hi - lo)
    assert widths[0] < 0.25 and widths[1] > 1.5 * widths[0]


def test_widen_reproduces_the_shipped_interval():
    """The backtest scales each raw interval by its leave-one-run-out factor with widen();
    the product scales the draws in scale_draws(). They must agree, near a bound too."""
    rng = np.random.default_rng(5)
    for mid, sd in [(0.5, 0.05), (0.9, 0.03), (0.995, 0.01), (1.0, 0.02), (0.02, 0.03)]:
        draws = mid + rng.normal(0, sd, (20000, 1))
        raw = cal.scale_draws(np.array([mid]), draws, (0.0, 1.0), 1.0)
        lo1, hi1 = np.quantile(raw, [0.05, 0.95])
        for c in (1.5, 3.0):
            shipped = np.quantile(cal.scale_draws(np.array([mid]), draws, (0.0, 1.0), c), [0.05, 0.95])
            lo_c, hi_c = cal.widen(np.array([mid]), np.array([lo1]), np.array([hi1]), (0.0, 1.0), c)
            assert np.allclose([lo_c[0], hi_c[0]], shipped, atol=2e-3), (mid, sd, c)


def test_calibrated_coverage_near_one_with_binomial_noise():
    """Scores near 1 with the binomial noise of an n-problem set: the 90 % interval of the
    delta/censored scheme covers a new evaluation about as often as it should (factor 1;
    the binomial's skew at 3-15 expected failures costs a few points)."""
    rng = np.random.default_rng(11)
    for p, n in [(0.97, 500), (0.99, 300), (0.995, 1000)]:
        sd = np.sqrt(p * (1 - p) / n)
        hits = 0
        for _ in range(300):
            obs = rng.binomial(n, p) / n
            draws = obs + rng.normal(0, np.sqrt(2) * sd, (400, 1))  # a new evaluation around an estimate
            out = cal.scale_draws(np.array([min(obs, 1.0)]), draws, (0.0, 1.0), 1.0)
            lo, hi = np.quantile(out, [0.05, 0.95])
            new = rng.binomial(n, p) / n
            hits += lo <= new <= hi
        assert 0.8 <= hits / 300 <= 0.98, (p, n, hits / 300)


def test_normalized_error_is_at_most_one_exactly_inside_the_interval():
    rng = np.random.default_rng(1)
    for _ in range(200):
        lo, mid, hi = np.sort(rng.uniform(0.01, 0.99, 3))
        y = rng.uniform(0.001, 0.999)
        e = float(cal.normalized_error(y, mid, lo, hi, (0.0, 1.0)))
        assert (e <= 1 + 1e-12) == (lo <= y <= hi)
        lo2, hi2 = cal.widen(np.array([mid]), np.array([lo]), np.array([hi]), (0.0, 1.0), e)
        assert np.isclose(lo2[0], y) or np.isclose(hi2[0], y) or np.isclose(y, mid)


def test_factor_is_the_split_conformal_quantile_and_loo_leaves_the_run_out():
    e = np.arange(1, 20.0)  # 19 errors: the ceil(20 * 0.9) = 18th smallest
    assert cal.factor(e, 0.9) == 18.0
    runs = ["a"] * 5 + ["b"] * 5
    errors = [100.0] * 5 + [1.0] * 5
    loo = cal.leave_one_run_out(runs, errors)
    assert np.all(loo[:5] == 1.0) and np.all(loo[5:] == 100.0)


def test_calibrated_intervals_cover_at_their_level_on_simulated_runs():
    """Interval coverage: a calibration factor fitted on half the simulated runs gives
    about 90 % coverage on the other half (the procedure the backtest uses)."""
    rng = np.random.default_rng(7)
    errors, runs = [], []
    for i in range(60):
        tau = rng.uniform(30, 150)
        steps = np.arange(0, 400, 10.0)
        y = 0.75 - 0.35 * np.exp(-steps / tau) + 0.01 * rng.standard_normal(len(steps))
        f = forecast(RunData.from_arrays(steps, y), fit_frac=0.3, methods=["exp-saturation"], n_boot=50,
                     calibrated=False)
        r = f.methods["exp-saturation"].forecast.iloc[-1]
        errors.append(float(cal.normalized_error(y[-1], r["forecast"], r["lo"], r["hi"], (0.0, 1.0))))
        runs.append(i)
    errors = np.array(errors)
    c = cal.factor(errors[:30])
    cover = np.mean(errors[30:] <= c)
    assert 0.75 <= cover <= 1.0


def test_a_forecast_past_the_bound_says_so():
    steps = np.arange(0, 100, 5.0)
    y = np.clip(0.5 + 0.006 * steps, 0, 1)  # a straight rise: power and exp-saturation run past 1
    f = forecast(RunData.from_arrays(steps, y), fit_frac=0.5, at_steps=[5000.0], methods=["power"], n_boot=20)
    r = f.methods["power"]
    assert r.forecast["forecast"].iloc[-1] <= 1.0
    assert any("bound" in w for w in r.warnings), r.warnings


# ---------------------------------------------------------------- stop paying, target
def test_threshold_is_one_binomial_standard_error_held_between_1_and_3_points():
    vals = [0.60, 0.62, 0.61, 0.65, 0.64]  # |diffs| 0.02, 0.01, 0.04, 0.01: median 0.015
    thr, why = dc.threshold_for(0.7, vals, "val/openai/gsm8k", "validation")
    assert thr == pytest.approx(np.sqrt(0.7 * 0.3 / 1319)) and "1319" in why   # 1.26 points: inside [1, 3]
    thr, why = dc.threshold_for(0.7, vals, "val/my_bench", "validation")
    # 5 points: the scatter about the local trend; second differences -.03 .05 -.05: median .05
    assert thr == pytest.approx(0.03) and "second differences): 3.0 points, held" in why   # 1.4826 .05 / sqrt 6: 3.03
    thr, why = dc.threshold_for(0.7, vals[:4], "val/my_bench", "validation")
    assert thr == pytest.approx(1.4826 * 0.02 / np.sqrt(2)) and "successive difference" in why   # 4 points: 2.10
    thr, why = dc.threshold_for(0.7, vals, "val/my_bench", "validation", n_problems=100)
    assert thr == pytest.approx(0.03) and "4.6 points, held at the 3-point cap" in why   # sqrt(.21/100) = 4.6 pts
    thr, why = dc.threshold_for(0.7, vals, "val/math", "validation")
    assert thr == pytest.approx(0.01) and "0.65 points, raised to the 1-point floor" in why   # sqrt(.21/5000)
    thr, why = dc.threshold_for(0.7, vals, "train/reward", "training score", n_problems=100)
    assert thr == pytest.approx(1.4826 * 0.015 / np.sqrt(2)) and "applies to a validation score" in why
    thr, _ = dc.threshold_for(70.0, [60, 62, 61, 65, 64], "val/gsm8k", "validation", bounds=(0.0, 100.0))
    assert thr == pytest.approx(100 * np.sqrt(0.21 / 1319))   # a score in percent: the same SE, in percent
    thr, why = dc.threshold_for(3.0, [1.0, 3.0, 2.0, 6.0, 5.0], "val/gsm8k", "validation", bounds=None)
    assert thr == pytest.approx(1.4826 * 5.0 / np.sqrt(6)) and "points" not in why   # no range: no clamp
    thr, why = dc.threshold_for(-1.0, [-1.0, -1.0, -1.0], "val/aime24", "validation", bounds=(-1.0, 1.0))
    assert thr == pytest.approx(0.02) and "raised to 1 % of the score's range" in why   # a flat reward in [-1, 1]


def test_a_steady_climb_is_no_noise_for_the_threshold():
    """A run climbing 1 point a step, validated every 5 steps with 1,024 problems: the scatter
    about the trend is its binomial noise (1.5 points), where successive differences read the
    climb (5 points a validation) as noise and pinned the threshold at the 3-point cap."""
    rng = np.random.default_rng(3)
    steps = np.arange(0, 60, 5.0)
    p = 0.05 + 0.01 * steps
    ests = []
    for _ in range(400):
        y = rng.binomial(1024, p) / 1024
        ests.append(dc.threshold_for(y[-1], y, "val/accuracy", "validation")[0])
    se = np.sqrt(0.6 * 0.4 / 1024)  # 1.53 points at the window's end; about 1.4 over the window
    assert 0.8 * se < np.median(ests) < 1.2 * se
    assert np.quantile(ests, 0.9) < 0.03   # not held at the cap


def test_target_step_hostile_cases():
    steps = np.linspace(0, 1000, 201)
    flat = np.full_like(steps, 0.6)
    out = target_step(steps, flat, flat[None, :].repeat(5, 0), 0.9)
    assert out["target_step"] is None and out["p_reach"] == 0.0 and "not reached" in out["target_note"]
    out = target_step(steps, flat, flat[None, :], 0.5)  # below: from above
    assert out["target_step"] == 0 and out["target_note"].startswith("already")


def test_forecast_carries_the_decision():
    steps = np.arange(0, 400, 10.0)
    y = 0.8 - 0.4 * np.exp(-steps / 80)
    f = forecast(RunData.from_arrays(steps, y), fit_frac=0.5, methods=["exp-saturation"], n_boot=30, target=0.78,
                 threshold=0.005, total_steps=1000)
    d = f.decision
    assert d["method"] in ("power", "exp-saturation")
    # closed form for the generating curve: the score at step 1000 minus the score at the window's end
    end = f.window_end
    gain = 0.4 * (np.exp(-end / 80) - np.exp(-1000 / 80))
    assert d["gain"]["to_step"] == 1000 and abs(d["gain"]["expected"] - gain) < 0.004
    # 0.4 (e^{-195/80} - e^{-1000/80}) = 0.035, far above the threshold 0.005 on a noiseless curve: continue
    assert d["call"] == "continue" and d["gain"]["lo"] > 0.005
    assert abs(d["target_step"] - 80 * np.log(0.4 / 0.02)) < 60
    assert "call: continue" in str(f)


# ---------------------------------------------------------------- where it is shown
def _run_csv(tmp_path, last_step: int):
    """A saturating validation score on a decaying entropy, as a CSV run table."""
    from entropylaw import table

    recs = [(s, "val/gsm8k", 0.75 - 0.35 * np.exp(-s / 90)) for s in range(0, last_step, 10)]
    recs += [(s, "entropy", 0.05 + 0.5 * np.exp(-s / 90)) for s in range(0, last_step)]
    path = tmp_path / "run.csv"
    table.from_records(recs, run_id="r").to_csv(path, index=False)
    return path


def test_cli_target_json_and_text(tmp_path):
    path = _run_csv(tmp_path, last_step=600)
    cmd = ["forecast", str(path), "--fit-frac", "0.3", "--target", "0.7", "--n-boot", "30"]
    out = run_cli(*cmd, "--json")
    assert out.returncode == 0, out.stderr
    [fc] = json.loads(out.stdout)  # one run: a list of one
    d = fc["decision"]
    assert d["target"] == 0.7 and "binomial" in d["threshold_source"]
    text = run_cli(*cmd)
    assert "call: " in text.stdout and "gain (" in text.stdout and "target 0.7" in text.stdout
    assert set(d) >= {"call", "threshold", "gain"} and set(d["gain"]) >= {"to_step", "expected", "lo", "hi"}
    bad = run_cli(*cmd[:-4], "--target", "high")
    assert bad.returncode == 2 and "expected a score" in bad.stderr and "Traceback" not in bad.stderr
    for option, value, says in (("--n-problems", "0", "2 or more"), ("--n-problems", "2.5", "whole number"),
                                ("--threshold", "0", "above 0"), ("--total-steps", "50", "not after the window"),
                                ("--step-cost", "0", "positive")):
        bad = run_cli(*cmd, option, value)
        assert bad.returncode == 2 and says in bad.stderr and "Traceback" not in bad.stderr, (option, bad.stderr)
        assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_report_first_table_has_forecast_gain_and_call():
    from entropylaw.page.page import summary_table

    runs = [{"run_id": "r", "number": 1, "label": "r", "ceiling": 0.7, "ceiling_ci": (0.6, 0.8), "trust": "good fit"}]
    fcs = [{"run_id": "r", "method": "last-value", "conf": 0.9, "forecast": 0.66, "forecast_ci": (0.6, 0.7),
            "call_method": "power", "call": "continue", "gain": 0.052, "gain_ci": (0.02, 0.08), "gain_to": 400,
            "threshold": 0.013, "threshold_source": "x", "point": 0.01, "window_end": 60, "final_step": 400}]
    html = summary_table(runs, fcs)
    assert "gain · call" in html and "+5.2 · continue" in html and "0.66" in html and "[+2.0, +8.0]" in html
    assert "gain · call" not in summary_table(runs)
    fcs[0].update(call=None, call_reason="no forecast: too wide")
    assert ">no call<" in summary_table(runs, fcs)


def test_watch_shows_the_decision(tmp_path):
    path = _run_csv(tmp_path, last_step=300)
    out = run_cli("watch", str(path), "--plain", "--max-refreshes", "1", "--target", "0.74", "--n-boot", "20")
    assert out.returncode == 0, out.stderr
    assert "gain (" in out.stdout and "call: " in out.stdout and "target 0.74 (" in out.stdout


def test_a_reward_in_minus_one_to_one_keeps_its_interval_inside():
    """A degenerate run: a score stuck near -1 (veRL's format penalty) must not get an interval
    reaching past -1 (such as -1.95); on the logit scale of [-1, 1] it cannot leave the range."""
    steps = np.arange(0, 300, 10.0)
    y = np.r_[0.01, np.full(len(steps) - 1, -1.0)]
    y[5] = -0.97
    run = RunData.from_arrays(steps, y)
    assert run.bounds == (-1.0, 1.0)
    f = forecast(run, fit_frac=0.3, methods=["last-value", "exp-saturation"], n_boot=50)
    for r in f.methods.values():
        if r.ok:
            assert r.forecast["lo"].min() >= -1.0 and r.forecast["hi"].max() <= 1.0


def test_nothing_after_the_window_moves_the_forecast_its_interval_or_the_decision():
    """The score's range and the token series' kind are read off the window alone, never
    the whole run. Change only values after the window (out of [0, 1], a token count that
    turns the series cumulative-looking): nothing computed from the window may move."""
    rng = np.random.default_rng(4)
    s = np.arange(1, 401.0)
    v = np.arange(10, 401.0, 10)
    H = 0.05 + 0.5 * np.exp(-s / 100)
    val = 0.8 - 0.3 * np.exp(H[v.astype(int) - 1]) + 0.01 * rng.standard_normal(len(v))
    tok = 1000 + 50 * rng.standard_normal(len(s))
    base = dict(entropy_steps=s, entropy_values=H, score_steps=s, score_values=0.8 - 0.3 * np.exp(H),
                token_steps=s, token_values=tok)
    a = RunData.from_arrays(v, val, **base)
    val2, tok2 = val.copy(), tok.copy()
    val2[v > 150] = 1.2
    tok2[s > 150] = np.cumsum(tok2[s > 150]) * 10
    b = RunData.from_arrays(v, val2, **{**base, "token_values": tok2})
    fa = forecast(a, fit_steps=150, at_steps=[400.0], n_boot=30, target=0.6)
    fb = forecast(b, fit_steps=150, at_steps=[400.0], n_boot=30, target=0.6)
    for name, ra in fa.methods.items():
        rb = fb.methods[name]
        assert ra.ok == rb.ok, name
        if ra.ok:
            assert ra.forecast[["forecast", "lo", "hi"]].equals(rb.forecast[["forecast", "lo", "hi"]]), name
    assert fa.decision == fb.decision


def test_decision_never_reads_a_curve_that_cannot_change():
    """With power unable to run, the decision must not fall back to last-value (which would
    answer "stop now" on a rising run). Without any method that models change it says so."""
    steps = np.arange(0, 400, 10.0)
    y = 0.8 - 0.4 * np.exp(-steps / 150)
    run = RunData.from_arrays(steps, y)
    f = forecast(run, fit_frac=0.3, methods=["last-value", "exp-saturation"], n_boot=20)
    assert f.decision["method"] == "exp-saturation"
    f = forecast(run, fit_frac=0.3, methods=["last-value"], n_boot=20)
    assert f.decision["method"] in ("logit-drift", "power", "exp-saturation", None)
    few = RunData.from_arrays(steps[:3], y[:3] + 5)  # 2 points of an unbounded score: no curve can run
    f = forecast(few, fit_steps=15, at_steps=[400.0], methods=["last-value"], n_boot=20)
    assert f.decision["method"] is None and "no method that models change" in f.decision["reason"]
    assert "call: none: no method that models change" in str(f) and f.decision["call"] is None


def test_lawtrain_refuses_a_stuck_training_score_whatever_the_rounding():
    for seed in range(4):
        rng = np.random.default_rng(seed)
        s = np.arange(1, 201.0)
        H = 0.05 + 0.5 * np.exp(-s / 60) + 1e-4 * rng.standard_normal(len(s))
        v = np.arange(10, 201.0, 10)
        run = RunData.from_arrays(v, 0.5 + 0.01 * rng.standard_normal(len(v)), s, H, s, np.ones(len(s)))
        m = LawTrain(n_boot=0).fit(run.window(100))
        assert not m.ok_ and "constant" in m.reason_


def test_lawtrain_plateau_is_the_shifted_law_clipped_once():
    run, _ = _dense_run(a=0.8, b=1.9, offset=-0.35)  # the training law's own plateau is above 1
    m = LawTrain(n_boot=0).fit(run.window(100))
    far = float(m._mid(np.array([1e7]))[0])
    assert m.plateau_ == pytest.approx(min(far, 1.0), abs=1e-6)


def test_watch_goes_on_when_the_run_passes_its_planned_length(tmp_path):
    path = _run_csv(tmp_path, last_step=300)
    out = run_cli("watch", str(path), "--plain", "--max-refreshes", "1", "--total-steps", "100", "--n-boot", "20")
    assert out.returncode == 0, out.stderr
    assert "forecast at step" in out.stdout and "has passed" in out.stdout and "gain (" in out.stdout


def test_target_outside_the_range_and_a_curve_with_no_finite_value():
    steps = np.arange(0, 400, 10.0)
    run = RunData.from_arrays(steps, 0.8 - 0.4 * np.exp(-steps / 80))
    above = forecast(run, fit_frac=0.5, methods=["exp-saturation"], n_boot=20, target=1.2).decision
    assert above["target_step"] is None and above["p_reach"] == 0.0 and "cannot be reached" in above["target_note"]
    below = forecast(run, fit_frac=0.5, methods=["exp-saturation"], n_boot=20, target=-0.1).decision
    assert below["target_step"] is not None and "met already" in below["target_note"]
    grid = np.linspace(0, 100, 51)
    nan = np.full_like(grid, np.nan)
    out = target_step(grid, nan, np.vstack([nan, 0.5 + 0 * grid]), 0.4)
    assert out["target_step"] is None and "not defined" in out["target_note"]
    assert out["target_step_ci"] == [0.0, None]  # the finite draw reaches it at once, the nan one never


def test_a_score_of_no_known_range_from_a_tiny_window_is_no_forecast_and_gets_no_call(tmp_path):
    """A reward logged on its own scale (about 12 at the start, 30 at the end): from 5 % of the run a
    saturating curve forecast 1.1e7 [-7.2e6, 1.9e7], shown as a forecast. An interval more than ten
    times as wide as everything the window's scores spanned is no forecast, and makes no call; from
    20 % the same run is forecast (its interval about 2.6 times that spread)."""
    rng = np.random.default_rng(0)
    steps = np.arange(400)
    H = 1.2 * np.exp(-steps / 80) + 0.2
    reward = 30 - 18 * np.exp(-steps / 60) + rng.normal(0, 1.5, len(steps))
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps({"step": int(s), "actor/entropy": h, "critic/rewards/mean": r}) + "\n"
                            for s, h, r in zip(steps, H, reward)))
    for frac, refused in ((0.03, True), (0.05, True), (0.2, False)):
        out = run_cli("forecast", str(path), "--y-key", "critic/rewards/mean", "--fit-frac", str(frac), "--json")
        assert out.returncode == 0, out.stderr
        [fc] = json.loads(out.stdout)
        fin = fc["methods"][fc["default_method"]]["final"]
        seen = reward[steps <= fc["window_end"]]
        spread = seen.max() - seen.min()
        assert (fin["hi"] - fin["lo"] > 10 * spread) == refused, (frac, fin, spread)
        assert bool(fin["no_forecast"]) == refused and (fc["decision"]["call"] is None) == refused, (frac, fin)
        if refused:
            assert "times as wide as the scores the window saw" in fin["no_forecast"]


def test_cli_target_outside_the_scores_range_is_refused_before_any_fit(tmp_path):
    """``--target -5`` for a score in [0, 1] was answered "met already" after the fits, and 150 given for
    a log in percent (read as 1.5) was refused only after them; both are one line naming --target,
    the score's range and what was expected, exit 2, whatever the window."""
    from entropylaw import table

    path = _run_csv(tmp_path, last_step=600)
    pct = tmp_path / "pct.csv"
    pct.write_text("step,entropy,val/accuracy\n" + "".join(
        f"{s},{0.15 + 1.05 * np.exp(-0.03 * s):.5f},{100 * (0.1 + 0.7 * (1 - np.exp(-s / 30))):.3f}\n"
        for s in range(0, 300, 5)))
    for where, target, says in ((path, "-5", "[0, 1]: expected a target in that range (a fraction such as 0.85)"),
                                (path, "1.5", "[0, 1]: expected a target in that range"),
                                (pct, "150", "(read as 1.5: the scores were read from percent): the score "
                                             "val/accuracy lies in [0, 1]: expected a fraction in [0, 1] or a "
                                             "percent in [0, 100]"),
                                (pct, "-5", "expected a fraction in [0, 1] or a percent in [0, 100]")):
        for window in ([], ["--fit-frac", "0.3"]):
            bad = run_cli("forecast", str(where), *window, "--target", target, "--n-boot", "30")
            err = " ".join(bad.stderr.split())
            assert bad.returncode == 2 and f"--target {target}" in err and says in err, (target, bad.stderr)
            said = [line for line in bad.stderr.splitlines() if not line.startswith("entropylaw: note: ")]
            assert "Traceback" not in bad.stderr and len(said) == 1, bad.stderr  # the reading's note aside
    # a reward with a penalty lives in [-1, 1]: -0.5 is a target it can reach, -5 is not
    steps = range(0, 600, 10)
    reward = tmp_path / "reward.csv"
    table.from_records([(s, "score", -0.9 + 1.5 * (1 - np.exp(-s / 90))) for s in steps]
                       + [(s, "entropy", 0.05 + 0.5 * np.exp(-s / 90)) for s in steps], run_id="r").to_csv(
        reward, index=False)
    ok = run_cli("forecast", str(reward), "--fit-frac", "0.3", "--target", "-0.5", "--n-boot", "30")
    assert ok.returncode == 0, ok.stderr
    bad = run_cli("forecast", str(reward), "--target", "-5", "--n-boot", "30")
    assert bad.returncode == 2 and "the score score lies in [-1, 1]: expected a target in that range" in bad.stderr


def test_watch_refuses_a_target_outside_the_scores_range(tmp_path):
    """`watch --target -5` showed "met already" at each refresh; it is the forecast's one error line, exit 2."""
    path = _run_csv(tmp_path, last_step=300)
    out = run_cli("watch", str(path), "--plain", "--max-refreshes", "1", "--target", "-5", "--n-boot", "20")
    assert out.returncode == 2 and "--target -5: the score val/gsm8k lies in [0, 1]: expected a target in that " \
        "range" in " ".join(out.stderr.split()), (out.stdout, out.stderr)
    assert "met already" not in out.stdout


def test_cli_target_one_run_of_a_folder_can_reach_is_not_refused(tmp_path):
    """A folder of a reward with a penalty (in [-1, 1]) beside a score in [0, 1]: ``--target -0.5`` is a
    score the first can reach, no mistake in its units or sign; it was refused for the whole folder since
    the range rule, on the second run's range. Each run is answered; a target no run can reach is refused."""
    from entropylaw import table

    steps = range(0, 600, 10)
    for name, score in (("pen", lambda s: -0.9 + 1.5 * (1 - np.exp(-s / 90))),
                        ("frac", lambda s: 0.1 + 0.6 * (1 - np.exp(-s / 90)))):
        table.from_records([(s, "score", score(s)) for s in steps]
                           + [(s, "entropy", 0.05 + 0.5 * np.exp(-s / 90)) for s in steps], run_id=name).to_csv(
            tmp_path / f"{name}.csv", index=False)
    ok = run_cli("forecast", str(tmp_path), "--fit-frac", "0.3", "--target", "-0.5", "--n-boot", "30", "--json")
    assert ok.returncode == 0, ok.stderr
    said = {f["run_id"]: f["decision"].get("target_note") or "" for f in json.loads(ok.stdout)}
    assert sorted(said) == ["frac", "pen"] and "lies below the score's range [0.0, 1.0]" in said["frac"]
    bad = run_cli("forecast", str(tmp_path), "--target", "-5", "--n-boot", "30")
    assert bad.returncode == 2 and "--target -5" in bad.stderr and "Traceback" not in bad.stderr


def test_cli_target_on_a_percent_log_says_how_it_was_read(tmp_path):
    """A log in percent (10 ... 80) is read as fractions: --target 60 was read as 0.6 and said, but
    --target 1 (1 %, or the fraction 1?) and --target 0.6 were taken as fractions with nothing said.
    Each reading is said in one line, with what gives the other one; a fraction log says nothing."""
    pct = tmp_path / "pct.csv"
    pct.write_text("step,entropy,val/accuracy\n" + "".join(
        f"{s},{0.15 + 1.05 * np.exp(-0.03 * s):.5f},{100 * (0.1 + 0.7 * (1 - np.exp(-s / 30))):.3f}\n"
        for s in range(0, 300, 5)))
    for target, says, shown in (("60", "--target 60 read as 0.6: the scores (val/accuracy) were read from percent",
                                 "target 0.6"),
                                ("1", "--target 1 read as a fraction, 100 % (1 % is --target 0.01): val/accuracy "
                                      "read from percent", "target 1"),
                                ("0.6", "--target 0.6 read as a fraction, 60 % (0.6 % is --target 0.006): "
                                        "val/accuracy read from percent", "target 0.6")):
        out = run_cli("forecast", str(pct), "--fit-frac", "0.3", "--target", target, "--n-boot", "30")
        err = " ".join(out.stderr.split())
        assert out.returncode == 0 and says in err, (target, out.stderr)
        assert sum(f"--target {target} read as" in line for line in out.stderr.splitlines()) == 1, out.stderr
        assert shown in " ".join(out.stdout.split()), out.stdout
    frac = _run_csv(tmp_path, last_step=300)
    out = run_cli("forecast", str(frac), "--fit-frac", "0.3", "--target", "0.6", "--n-boot", "30")
    assert out.returncode == 0 and "read as" not in out.stderr, out.stderr
