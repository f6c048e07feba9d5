"""logit-drift: its posterior against an independent optimiser, coverage by
simulation, the learned prior (with the size covariate), and its refusals."""

import numpy as np
import pytest

from entropylaw.fit.forecast.methods import ForecastMethod
from scipy import optimize, special

from entropylaw import table
from entropylaw.fit.forecast import calibrate as cal
from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.drift import LogitDrift
from entropylaw.fit.forecast.drift_fit import posterior
from entropylaw.fit.forecast.drift_prior import learn_prior

PRIOR = {"c": [0.1, 0.05], "runs": 5}


def _run(c=0.1, A=0.5, steps=np.arange(0.0, 200.0, 10.0), n=1319, seed=0, key="val/openai/gsm8k", run_id="r",
         takeoff=True):
    rng = np.random.default_rng(seed)
    z = A + c * np.log1p(steps) - (4.0 * np.exp(-steps / 8.0) if takeoff else 0.0)
    p = special.expit(z)
    y = rng.binomial(n, p) / n
    return RunData.from_arrays(steps, y, target_key=key, run_id=run_id), p


def test_posterior_equals_a_direct_minimisation():
    rng = np.random.default_rng(1)
    t = np.array([20.0, 40.0, 60.0, 80.0])
    z = 0.3 + 0.2 * np.log1p(t) + 0.05 * rng.standard_normal(4)
    w = np.array([300.0, 280.0, 260.0, 250.0])
    mean, cov, phi = posterior(t, z, w, [0.1, 0.05])

    def nlp(b):  # the negative log posterior at the over-dispersion the closed form found
        r = z - b[0] - b[1] * np.log1p(t)
        return 0.5 * np.sum(w * r**2) / phi + 0.5 * (b[1] - 0.1) ** 2 / 0.05**2

    res = optimize.minimize(nlp, [0.0, 0.0], method="BFGS", options={"gtol": 1e-10})
    assert np.allclose(mean, res.x, atol=1e-5)
    assert np.allclose(cov, res.hess_inv, rtol=0.05)  # BFGS's inverse Hessian: the posterior covariance


def test_interval_coverage_by_simulation(monkeypatch):
    """Runs drawn from the model (their rate from the prior): the uncalibrated 90 % interval of
    the final score holds the final observation in roughly 90 % of them."""
    monkeypatch.setattr(ForecastMethod, "calibrated", False)
    rng = np.random.default_rng(0)
    hits = []
    for seed in range(120):
        c = rng.normal(0.1, 0.05)
        run, _ = _run(c=c, seed=seed, takeoff=False)
        m = LogitDrift(n_boot=300, seed=seed, prior=PRIOR).fit(run.window(60))
        f = m.predict([190.0]).iloc[0]
        hits.append(f["lo"] <= run.target.values[-1] <= f["hi"])
    assert 0.8 <= np.mean(hits) <= 0.99


def test_forecast_recovers_the_drift():
    run, p = _run(c=0.12, seed=3)
    m = LogitDrift(n_boot=200, prior={"c": [0.12, 0.05], "runs": 5}).fit(run.window(100))
    f = m.predict([190.0]).iloc[0]
    assert abs(f["forecast"] - p[-1]) < 0.02 and f["lo"] <= p[-1] <= f["hi"]
    assert m.plateau_ is None and "no plateau" in m.t90_note_


def test_refusals_are_reasons_not_tracebacks():
    steps = np.arange(0.0, 100.0, 10.0)
    stuck = RunData.from_arrays(steps, np.r_[0.3, np.full(9, 0.0)], target_key="val/aime_2024")
    m = LogitDrift(n_boot=20, prior=PRIOR).fit(stuck.window(60))
    assert not m.ok_ and "bound" in m.reason_
    rising = RunData.from_arrays(steps, special.expit(-6 + 0.08 * steps), target_key="val/openai/gsm8k")
    m = LogitDrift(n_boot=20, prior=PRIOR).fit(rising.window(40))
    assert not m.ok_ and "take-off" in m.reason_
    loose = RunData.from_arrays(steps, 3.0 + 0.01 * steps, target_key="val/x")
    m = LogitDrift(n_boot=20, prior=PRIOR).fit(loose.window(60))
    assert not m.ok_ and "bounded score" in m.reason_
    one = RunData.from_arrays([0.0, 10.0], [0.4, 0.5], target_key="val/openai/gsm8k")
    m = LogitDrift(n_boot=20, prior=PRIOR).fit(one.window(5))
    assert not m.ok_ and "point" in m.reason_


def test_reward_in_minus_one_one_stays_inside():
    steps = np.arange(0.0, 200.0, 10.0)
    y = 2 * special.expit(-1.5 + 0.1 * np.log1p(steps)) - 1 + 0.01 * np.cos(steps)
    run = RunData.from_arrays(steps, y, target_key="val/reward")
    f = LogitDrift(n_boot=100, prior=PRIOR).fit(run.window(80)).predict([1e6]).iloc[0]
    assert run.window(80).bounds == (-1.0, 1.0) and -1 <= f["lo"] <= f["forecast"] <= f["hi"] <= 1


def test_default_falls_back_to_last_value_where_it_cannot_run(monkeypatch):
    from entropylaw.fit.forecast import core

    monkeypatch.setattr(core, "defaults_by_kind", lambda: {"validation": "logit-drift"})
    steps = np.arange(0.0, 100.0, 10.0)
    stuck = RunData.from_arrays(steps, np.r_[0.3, np.full(9, 0.0)], target_key="val/aime_2024")
    fc = forecast(stuck, fit_frac=0.6, methods=["logit-drift"], n_boot=20)
    assert fc.default == "last-value" and "cannot run" in fc.note and fc.methods["last-value"].ok


def _table(runs):
    return table.concat([table.from_records([(int(s), r.target_key, float(v)) for s, v in
                                             zip(r.target.steps, r.target.values)], run_id=r.run_id)
                         for r in runs])


def test_prior_from_runs_notes_and_size_covariate():
    from dataclasses import replace

    sizes = [0.5e9, 1.5e9, 3e9, 7e9]
    finished = [replace(_run(c=0.25 - 0.05 * np.log2(n / 0.5e9), seed=i, run_id=f"s{i}")[0], size=n)
                for i, n in enumerate(sizes)]
    prior = learn_prior(finished, size=14e9, sizes=sizes)
    assert "size_covariate" in prior and prior["c"][0] < np.median([0.25, 0.2, 0.15, 0.1])
    new = replace(_run(c=0.05, seed=9, run_id="new")[0], size=14e9)
    fc = forecast(new, fit_frac=0.4, methods=["logit-drift"], n_boot=20, prior_runs=finished)
    assert "size_covariate" in fc.methods["logit-drift"].params
    alone = forecast(new, fit_frac=0.4, methods=["logit-drift"], n_boot=20, prior_runs=finished[:1])
    assert "a prior needs 2" in alone.note
    other = [replace(r, target_key="val/math") for r in finished]
    elsewhere = forecast(new, fit_frac=0.4, methods=["logit-drift"], n_boot=20, prior_runs=other)
    assert "another benchmark" in elsewhere.note


def test_nothing_after_the_window_moves_the_forecast():
    run, _ = _run(seed=4)
    later = RunData.from_arrays(run.target.steps, np.where(run.target.steps > 100, 0.01, run.target.values),
                                target_key=run.target_key)
    a = forecast(run, fit_frac=0.5, methods=["logit-drift"], n_boot=50, at_steps=[190.0])
    b = forecast(later, fit_frac=0.5, methods=["logit-drift"], n_boot=50, at_steps=[190.0])
    assert a.methods["logit-drift"].forecast.equals(b.methods["logit-drift"].forecast)


def test_curve_ensemble_weights_are_the_bic_softmax():
    """The weights recomputed by hand from each family's own residuals on the window."""
    from entropylaw.fit.forecast.catalog import METHODS
    from entropylaw.fit.forecast.ensemble import CurveEnsemble

    steps = np.arange(0, 300, 5.0)
    y = 0.8 - 0.5 * np.exp(-steps / 60) + 0.01 * np.sin(steps / 3)
    win = RunData.from_arrays(steps, y).window(150)
    e = CurveEnsemble(n_boot=30).fit(win)
    bic = {}
    for name in e.weights_:
        m = METHODS[name](n_boot=0).fit(win)
        r = win.target.values - m._mid(win.target.steps)
        n = len(r)
        bic[name] = n * np.log(np.sum(r**2) / n) + m.fit_.family.n_params * np.log(n)
    b = np.array(list(bic.values()))
    w = np.exp(-(b - b.min()) / 2)
    assert np.allclose(list(e.weights_.values()), w / w.sum(), atol=1e-6)
    fc = forecast(win, methods=["curve-ensemble"], n_boot=30, at_steps=[295.0])
    assert fc.methods["curve-ensemble"].ok


def test_size_prior_is_robust_and_widened_for_few_sizes():
    from entropylaw.fit.forecast.drift_prior import theil_sen

    sizes = np.array([0.5e9, 1.5e9, 3e9, 7e9, 14e9])
    u = np.log10(sizes)
    c = 0.2 - 0.1 * (u - u[0])
    slope, icpt = theil_sen(u, np.r_[c[:3], -0.6, c[4]])  # one run that collapsed
    assert slope == pytest.approx(-0.1, abs=0.02)
    # three sizes on a line: the spread is floored, then widened by t(1 dof) over the normal's
    from dataclasses import replace
    runs = [replace(_run(c=0.3 - 0.1 * np.log10(n / 0.5e9), seed=i, run_id=f"r{i}", takeoff=False)[0], size=n)
            for i, n in enumerate(sizes[:3])]
    p = learn_prior(runs, size=70e9, sizes=list(sizes[:3]))
    assert p["c"][1] > 0.1  # not the 0.02 floor: 1 degree of freedom and far from the sizes seen
    no_size = learn_prior(runs, size=70e9, sizes=[0.5e9, np.nan, 3e9])
    assert "size_note" in no_size and "size_covariate" not in no_size


def test_given_prior_has_its_own_calibration_and_training_runs_their_own_default():
    from entropylaw.fit.forecast.core import default_method
    from entropylaw.fit.forecast.names import GIVEN_PRIOR

    assert LogitDrift(given=True).calibration_key == GIVEN_PRIOR and LogitDrift().calibration_key == "logit-drift"
    stored = cal.stored()["factors"]["validation"]
    assert GIVEN_PRIOR in stored  # measured by the backtest, read by the product
    steps = np.arange(0.0, 200.0, 1.0)
    run = RunData.from_arrays(steps, 0.5 + 0.1 * np.sin(steps), target_kind="training score", target_key="score")
    fc = forecast(run, fit_frac=0.3, methods=["default"], n_boot=20)
    assert default_method("training score") in fc.methods or fc.default == "last-value"


def test_the_drift_clock_is_the_training_step():
    """A log resumed at step 2,000 forecasts what the whole log forecasts (noiseless)."""
    steps = np.arange(0.0, 3001.0, 50.0)
    y = special.expit(0.2 + 0.1 * np.log1p(steps))
    whole = RunData.from_arrays(steps, y, target_key="val/openai/gsm8k")
    resumed = RunData.from_arrays(steps[steps >= 2000], y[steps >= 2000], target_key="val/openai/gsm8k")
    a = LogitDrift(n_boot=10, prior=PRIOR).fit(whole.window(2300)).predict([3000.0]).iloc[0]["forecast"]
    b = LogitDrift(n_boot=10, prior=PRIOR).fit(resumed.window(2300)).predict([3000.0]).iloc[0]["forecast"]
    assert a == pytest.approx(float(y[-1]), abs=2e-3) and b == pytest.approx(float(y[-1]), abs=2e-3)


def test_a_falling_window_is_refused_not_pulled_up():
    steps = np.arange(0.0, 200.0, 5.0)
    falling = RunData.from_arrays(steps, special.expit(2.0 - 0.6 * np.log1p(steps)), target_key="val/openai/gsm8k")
    m = LogitDrift(n_boot=20, prior=PRIOR).fit(falling.window(150))
    assert not m.ok_ and "fall" in m.reason_
