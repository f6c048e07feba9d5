"""Forecast methods: parameter recovery against independent fits (scipy curve_fit, lstsq,
root finding), no information past the window, bad input, resumed runs."""

import warnings
from pathlib import Path

import statistics

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.fit.early import EarlyPrediction
from entropylaw.fit.forecast.core import METHODS, forecast
from entropylaw.fit.forecast.ensemble import Ensemble
from entropylaw.fit.forecast.prior import PriorMethod
from entropylaw.fit.forecast.data import RunData, cumulative, window_end

# prints numbers: run again under another BLAS kernel set (make test, OPENBLAS_CORETYPE=Prescott)
pytestmark = pytest.mark.printed

ROOT = Path(__file__).resolve().parents[1]


def _run(y_fun, steps=np.arange(0, 400, 10.0), noise=0.0, seed=0, **series):
    rng = np.random.default_rng(seed)
    y = y_fun(steps) + noise * rng.standard_normal(len(steps))
    return RunData.from_arrays(steps, y, **series)


# ------------------------------------------------------------------ recovery vs curve_fit
def _curve_fit(f, x, y, p0, bounds=(-np.inf, np.inf)):
    popt, _ = optimize.curve_fit(f, x, y, p0=p0, bounds=bounds, maxfev=20000)
    return popt


def test_exp_saturation_matches_curve_fit_and_t90_root():
    A, R0, tau = 0.78, 0.2, 55.0
    run = _run(lambda s: A - (A - R0) * np.exp(-s / tau), noise=0.01, seed=1)
    w = run.window(200)
    m = METHODS["exp-saturation"](n_boot=50).fit(w)
    ref = _curve_fit(lambda t, A, R0, tau: A - (A - R0) * np.exp(-t / tau), w.target.steps, w.target.values,
                     p0=[0.7, 0.3, 40])
    assert m.params_["A"] == pytest.approx(ref[0], abs=1e-5)
    assert m.params_["tau"] == pytest.approx(ref[2], rel=1e-4)
    assert m.params_["A"] == pytest.approx(A, abs=0.03) and m.params_["tau"] == pytest.approx(tau, rel=0.2)
    # the 90 % step, by root finding on the fitted curve: 90 % of the change left at the window's end
    f = lambda s: m._mid(np.array([s]))[0]  # noqa: E731
    goal = f(200) + 0.9 * (m.plateau_ - f(200))
    assert m.t90_ == pytest.approx(optimize.brentq(lambda s: f(s) - goal, 200, 5000), rel=1e-6)


def test_power_matches_curve_fit():
    run = _run(lambda s: 0.8 - 0.5 * (s + 1) ** -0.6, noise=0.004, seed=2)
    w = run.window(250)
    m = METHODS["power"](n_boot=0).fit(w)
    ref = _curve_fit(lambda t, A, B, c: A - B * (t + 1) ** -c, w.target.steps, w.target.values, p0=[0.7, 0.4, 0.5],
                     bounds=([-5, -5, 0.02], [5, 5, 5]))
    assert [m.params_[k] for k in ("A", "B", "c")] == pytest.approx(ref, rel=2e-3)
    assert m.params_["c"] == pytest.approx(0.6, abs=0.15)
    f = lambda s: m._mid(np.array([s]))[0]  # noqa: E731
    goal = f(250) + 0.9 * (m.plateau_ - f(250))
    assert m.t90_ == pytest.approx(optimize.brentq(lambda s: f(s) - goal, 250, 1e9), rel=1e-5)


def test_sigmoid_in_steps_and_tokens_match_curve_fit():
    R0, A, mid, B = 0.15, 0.75, 60.0, 2.0
    steps = np.arange(0, 400, 5.0)
    sig = lambda C, R0, A, mid, B: R0 + (A - R0) / (1 + (mid / C) ** B)  # noqa: E731
    run = _run(lambda s: sig(s + 1, R0, A, mid, B), steps=steps, noise=0.005, seed=3,
               token_steps=np.arange(1, 400.0), token_values=np.full(399, 2.0e5))
    w = run.window(150)
    m = METHODS["sigmoid"](n_boot=0).fit(w)
    ref = _curve_fit(sig, w.target.steps + 1, w.target.values, p0=[0.2, 0.7, 50, 1.5],
                     bounds=([-1, -1, 0.5, 0.2], [2, 2, 1e5, 5]))
    assert [m.params_[k] for k in ("R0", "mid", "slope")] == pytest.approx(ref[[0, 2, 3]], rel=2e-3)
    assert m.plateau_ == pytest.approx(ref[1], abs=2e-3)
    tok = METHODS["sigmoid-tokens"](n_boot=0).fit(w)
    # constant 2e5 tokens per step from step 1: C_tokens = 2e5 * step, so C_mid scales by 2e5
    assert tok.params_["mid"] == pytest.approx(2e5 * (mid - 1), rel=0.1)
    assert tok.rate_ == pytest.approx(2e5)


def test_law_entropy_recovers_law_and_entropy_decay():
    a, b, floor, D, tau = 0.3, 0.95, 0.04, 0.7, 60.0
    s = np.arange(1, 500.0)
    H = floor + D * np.exp(-s / tau)
    v = np.arange(10, 500.0, 10)
    rng = np.random.default_rng(4)
    run = RunData.from_arrays(v, b - a * np.exp(floor + D * np.exp(-v / tau)) + 0.003 * rng.standard_normal(len(v)),
                              s, H + 0.002 * rng.standard_normal(len(s)))
    w = run.window(150)
    m = METHODS["law+entropy"](n_boot=0).fit(w)
    assert m.form_ == "exp-decay"
    # the law part is ordinary least squares of the window's pairs: independent lstsq
    Hp = np.interp(w.target.steps, w.entropy.steps, w.entropy.values)
    (a_ref, b_ref), *_ = np.linalg.lstsq(np.column_stack([-np.exp(Hp), np.ones(len(Hp))]), w.target.values, rcond=None)
    assert (m.params_["a"], m.params_["b"]) == pytest.approx((a_ref, b_ref), rel=1e-9)
    assert m.params_["entropy_floor"] == pytest.approx(floor, abs=0.01)
    assert m.params_["entropy_tau"] == pytest.approx(tau, rel=0.1)
    final = m.predict([490])["forecast"][0]
    assert final == pytest.approx(b - a * np.exp(floor + D * np.exp(-490 / tau)), abs=0.01)
    assert m.plateau_ == pytest.approx(b - a * np.exp(floor), abs=0.01)


def test_law_ceiling_is_b_minus_a_of_an_independent_fit():
    s = np.arange(1, 300.0)
    H = 0.02 + 0.8 * np.exp(-s / 50)
    v = np.arange(10, 300.0, 10)
    Hv = 0.02 + 0.8 * np.exp(-v / 50)
    R = 0.9 - 0.25 * np.exp(Hv) + 0.002 * np.cos(v)
    m = METHODS["law-ceiling"](n_boot=20).fit(RunData.from_arrays(v, R, s, H).window(100))
    k = v <= 100
    (a, b), *_ = np.linalg.lstsq(np.column_stack([-np.exp(Hv[k]), np.ones(k.sum())]), R[k], rcond=None)
    assert m.plateau_ == pytest.approx(b - a, rel=1e-9)
    assert m.predict([250])["forecast"][0] == pytest.approx(b - a, rel=1e-9)


def test_joint_shares_the_time_constant_and_pins_it_with_the_training_score():
    tau = 70.0
    v = np.arange(0, 400, 50.0)  # sparse validation: 4 points in the window
    s = np.arange(1, 400.0)
    rng = np.random.default_rng(5)
    run = RunData.from_arrays(v, 0.7 - 0.5 * np.exp(-v / tau) + 0.004 * rng.standard_normal(len(v)),
                              score_steps=s,
                              score_values=0.9 - 0.6 * np.exp(-s / tau) + 0.01 * rng.standard_normal(len(s)))
    m = METHODS["joint"](n_boot=0).fit(run.window(160))
    assert m.ok_, m.reason_
    assert m.params_["tau"] == pytest.approx(tau, rel=0.1)
    assert m.params_["A"] == pytest.approx(0.7, abs=0.02) and m.params_["A_train"] == pytest.approx(0.9, abs=0.02)


def test_last_value_and_its_noise():
    y = np.array([0.1, 0.3, 0.2, 0.4, 0.35])
    m = METHODS["last-value"](n_boot=10).fit(RunData.from_arrays(np.arange(5.0) * 10, y))
    # the noise of one point from the median absolute successive difference (robust to a take-off jump)
    diffs = sorted(abs(b - a) for a, b in zip(y[:-1], y[1:]))  # 0.2, 0.2, 0.1, 0.05 -> median 0.15
    assert m.last_ == 0.35 and m.sigma_ == pytest.approx(1.4826 * 0.15 / np.sqrt(2))
    assert statistics.median(diffs) == pytest.approx(0.15)
    jump = np.array([0.0, 0.01, 0.6, 0.61, 0.6, 0.62])
    assert METHODS["last-value"](n_boot=10).fit(RunData.from_arrays(np.arange(6.0), jump)).sigma_ < 0.03
    assert m.t90_ is None


def test_ensemble_weights_are_inverse_late_errors():
    run = _run(lambda s: 0.8 - 0.5 * np.exp(-s / 80), noise=0.01, seed=6)
    w = run.window(200)
    members = [METHODS[n](n_boot=30).fit(w) for n in ("last-value", "exp-saturation", "power")]
    ens = Ensemble(n_boot=30, members=members).fit(w)
    inv = np.array([1 / (m.late_rmse_**2 + 1e-6) for m in members])
    assert list(ens.weights_.values()) == pytest.approx(list(inv / inv.sum()))
    mid = sum(ens.weights_[m.name] * m.predict([390])["forecast"][0] for m in members)
    assert ens.predict([390])["forecast"][0] == pytest.approx(mid)


# ------------------------------------------------------------------ prior
def _family(n, seed=0, tau=60.0):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        A = 0.75 + 0.02 * rng.standard_normal()
        out.append(_run(lambda s: A - 0.5 * np.exp(-s / (tau * (1 + 0.05 * rng.standard_normal()))),
                        noise=0.01, seed=seed + i + 1))
    return [RunData(**{**r.__dict__, "run_id": f"r{i}"}) for i, r in enumerate(out)]


def test_prior_pulls_a_short_window_toward_the_family():
    fam = _family(5)
    target = _run(lambda s: 0.75 - 0.5 * np.exp(-s / 60), noise=0.03, seed=99)
    w = target.window(60)  # 7 noisy points: the window alone barely fixes the plateau
    m = PriorMethod(n_boot=50, base=METHODS["exp-saturation"], prior_runs=tuple(fam)).fit(w)
    assert m.ok_ and m.prior_used_ and len(m.prior_runs_used_) == 5
    plain = METHODS["exp-saturation"](n_boot=50).fit(w)
    assert abs(m.plateau_ - 0.75) <= abs(plain.plateau_ - 0.75) + 1e-9
    assert m.prior_shift_["plateau"] == pytest.approx(m.plateau_ - plain.plateau_)
    assert m.shift([390])[0] == pytest.approx(m.predict([390])["forecast"][0] - plain.predict([390])["forecast"][0])


def test_prior_from_one_run_warns_and_falls_back():
    fam = _family(1)
    w = _run(lambda s: 0.75 - 0.5 * np.exp(-s / 60), noise=0.01, seed=7).window(150)
    m = PriorMethod(n_boot=20, base=METHODS["exp-saturation"], prior_runs=tuple(fam)).fit(w)
    assert m.ok_ and not m.prior_used_
    assert any("at least 2" in x for x in m.warnings_)
    assert m.prior_shift_["plateau"] == 0.0


# ------------------------------------------------------------------ no future information
def _rich_run(seed=0):
    rng = np.random.default_rng(seed)
    s = np.arange(1, 600.0)
    H = 0.03 + 0.6 * np.exp(-s / 90)
    v = np.arange(10, 600.0, 10)
    return dict(target_steps=v, target_values=0.9 - 0.3 * np.exp(0.03 + 0.6 * np.exp(-v / 90))
                + 0.01 * rng.standard_normal(len(v)), entropy_steps=s,
                entropy_values=H + 0.003 * rng.standard_normal(len(s)),
                score_steps=s, score_values=0.95 - 0.6 * np.exp(-s / 90) + 0.02 * rng.standard_normal(len(s)),
                token_steps=s, token_values=1e6 + 1e4 * rng.standard_normal(len(s)))


def test_data_after_the_window_cannot_change_the_forecast():
    base = _rich_run()
    changed = {k: v.copy() for k, v in base.items()}
    rng = np.random.default_rng(1)
    for key in ("target", "entropy", "score", "token"):
        steps = changed[f"{key}_steps"]
        after = steps > 150
        changed[f"{key}_values"][after] = rng.uniform(0, 1, after.sum()) * changed[f"{key}_values"][after].max()
    at = [200.0, 400.0, 590.0]
    fa = forecast(RunData.from_arrays(**base), fit_frac=0.25, at_steps=at, n_boot=30)
    fb = forecast(RunData.from_arrays(**changed), fit_frac=0.25, at_steps=at, n_boot=30)
    assert fa.window_end == fb.window_end
    assert sum(r.ok for r in fa.methods.values()) >= 7
    for name, ra in fa.methods.items():
        rb = fb.methods[name]
        assert ra.ok == rb.ok, name
        if ra.ok:
            pd.testing.assert_frame_equal(ra.forecast, rb.forecast, obj=name)
            assert (ra.plateau, ra.t90, ra.plateau_ci) == (rb.plateau, rb.t90, rb.plateau_ci), name
    # live use: a log that goes on (more steps) changes nothing either when the window is K steps
    longer = {k: np.r_[v, v[-50:] + (600 if k.endswith("steps") else 0)] for k, v in base.items()}
    fc1 = forecast(RunData.from_arrays(**base), fit_steps=140, at_steps=at, n_boot=30, methods=["exp-saturation"])
    fc2 = forecast(RunData.from_arrays(**longer), fit_steps=140, at_steps=at, n_boot=30, methods=["exp-saturation"])
    pd.testing.assert_frame_equal(fc1.methods["exp-saturation"].forecast, fc2.methods["exp-saturation"].forecast)


# ------------------------------------------------------------------ bad input
def test_too_few_points_one_method_says_why_the_others_go_on():
    run = _run(lambda s: 0.8 - 0.5 * np.exp(-s / 80), noise=0.01)
    fc = forecast(run, fit_steps=35, at_steps=[300.0], n_boot=20,
                  methods=["last-value", "exp-saturation", "sigmoid", "law+entropy"])
    assert fc.n_window == 4
    assert fc.methods["last-value"].ok and fc.methods["exp-saturation"].ok
    assert not fc.methods["sigmoid"].ok and "4 points for 4 parameters" in fc.methods["sigmoid"].reason
    assert "no entropy" in fc.methods["law+entropy"].reason


def test_rising_entropy_law_does_not_apply():
    d = _rich_run()
    d["entropy_values"] = 0.1 + d["entropy_steps"] / 600  # entropy explodes
    fc = forecast(RunData.from_arrays(**d), fit_frac=0.3, n_boot=20)
    for name in ("law+entropy", "law-ceiling"):
        assert not fc.methods[name].ok and "entropy rises" in fc.methods[name].reason
    assert fc.methods["exp-saturation"].ok


def test_no_validation_forecasts_the_training_score_and_says_so():
    s = np.arange(1, 300)
    recs = [(int(i), "entropy", 0.5 * np.exp(-i / 80) + 0.02) for i in s]
    recs += [(int(i), "score", 0.8 - 0.5 * np.exp(-i / 60)) for i in s]
    run = RunData.from_table(table.from_records(recs, run_id="trl"), "trl")
    assert run.target_kind == "training score" and run.target_key == "score"
    fc = forecast(run, fit_frac=0.2, n_boot=20)
    assert "no validation" in fc.note and "training score" in fc.note
    assert "no validation" in fc.methods["joint"].reason


def test_at_step_inside_the_window_is_one_clear_error():
    run = _run(lambda s: 0.8 - 0.5 * np.exp(-s / 80))
    with pytest.raises(EntropyLawError,
                       match=r"`at_steps` 50 is not after the window's end \(step 99\).*starts at step 0"):
        forecast(run, fit_steps=100, at_steps=[50])


@pytest.mark.parametrize("kw, msg", [({"fit_frac": 1.2}, "strictly between 0 and 1"),
                                     ({"fit_steps": -3}, "must be positive"),
                                     ({"fit_steps": 5000}, "reaches past the log"),
                                     ({"methods": ["magic"]}, "unknown method 'magic'"),
                                     ({"conf": 1.5}, "conf"), ({"n_boot": 1}, "n_boot")])
def test_bad_options_are_one_line_errors(kw, msg):
    run = _run(lambda s: 0.8 - 0.5 * np.exp(-s / 80))
    with pytest.raises(EntropyLawError, match=msg) as err:
        forecast(run, **kw)
    assert "\n" not in str(err.value)


def test_empty_window_says_where_the_log_starts():
    run = RunData.from_arrays(np.arange(200, 400, 20.0), np.linspace(0.3, 0.6, 10), np.arange(101, 400.0),
                              np.linspace(0.6, 0.1, 299))
    with pytest.raises(EntropyLawError, match="starts at step 101.*first val is at step 200"):
        forecast(run, fit_steps=50)


# ------------------------------------------------------------------ resumed runs
def _resumed_table():
    df = table.read(ROOT / "data/real/verl_grpo_deepseek-llm-7b-chat_gsm8k_mi300.parquet")
    return df[df["step"] >= 101].reset_index(drop=True)


def test_resumed_run_windows_start_at_the_first_logged_step():
    df = _resumed_table()
    rid = table.run_ids(df)[0]
    run = RunData.from_table(df, rid)
    assert run.origin == 101
    assert window_end(run, fit_frac=0.15) == pytest.approx(101 + 0.15 * (1120 - 101))
    assert window_end(run, fit_steps=60) == 160  # the first 60 steps: 101 .. 160
    fc = forecast(run, fit_frac=0.15, n_boot=20, methods=["last-value", "exp-saturation", "law+entropy"])
    assert fc.n_window == 15 and all(r.ok for r in fc.methods.values())
    # the paper's protocol on the same log: its window starts at the first logged step too
    from entropylaw.fit.pairing import pair

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = EarlyPrediction(fit_steps=60, origin=101, warn=False).fit(pair(df, rid))
        ep_default = EarlyPrediction(fit_frac=0.15, warn=False).fit(pair(df, rid))
    assert ep.window_end_ == 160 and ep.fit_n_ == 6
    assert ep_default.origin_ == 101  # pair() records where the log starts: the first logged step, never 0
    with pytest.raises(EntropyLawError, match="the log starts at step 101"):
        EarlyPrediction(fit_steps=15, origin=101, warn=False).fit(pair(df, rid))


@pytest.mark.parametrize("first", [0, 1, 101])
def test_fit_steps_k_is_exactly_the_first_k_steps(first):
    """--fit-steps K fits the first K logged steps (``predict --fit-steps 168`` fitted 169)."""
    steps = np.arange(first, first + 200, dtype=float)
    H = 0.05 + np.exp(-(steps - first) / 60)
    pairs = pd.DataFrame({"step": steps, "H": H, "R": 0.8 - 0.2 * np.exp(H)})
    for k in (3, 168, 199):
        ep = EarlyPrediction(fit_steps=k, warn=False).fit(pairs)
        assert ep.fit_n_ == k and ep.window_end_ == first + k - 1
    with pytest.raises(EntropyLawError, match="not smaller than the run"):
        EarlyPrediction(fit_steps=200, warn=False).fit(pairs)  # all 200 steps: nothing left to predict
    run = RunData.from_arrays(steps, pairs["R"].to_numpy(), steps, H)
    assert window_end(run, fit_steps=168) == first + 167
    assert window_end(run, fit_steps=200) == first + 199  # the whole log is a window (live use)
    with pytest.raises(EntropyLawError, match="reaches past the log"):
        window_end(run, fit_steps=201)


def test_cumulative_tokens_from_per_step_and_running_totals():
    per_step = cumulative(RunData.from_arrays([0, 1], [0, 0]).target.__class__.of([1, 2, 4], [10, 10, 10]))
    assert per_step.values.tolist() == [10, 20, 40]  # step 3 unlogged: counted with step 4
    total = cumulative(RunData.from_arrays([0, 1], [0, 0]).target.__class__.of([5, 10, 15, 20], [50, 100, 150, 200]))
    assert total.values.tolist() == [50, 100, 150, 200]
