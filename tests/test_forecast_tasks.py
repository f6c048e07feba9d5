"""Forecasts on a task the prior never saw: the per-task prior, the heavy-tailed new-task prior
against an independent computation, calibration that leaves whole tasks out, and a training
score's final score (the mean over the run's last 5 % of steps)."""

from dataclasses import replace

import numpy as np
import pytest
from scipy import special

from entropylaw.fit.forecast import calibrate as cal
from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.drift import DriftTrain, LogitDrift
from entropylaw.fit.forecast.drift_fit import quasi_normals, t_posterior
from entropylaw.fit.forecast.drift_prior import learn_task_priors
from entropylaw.fit.forecast.final import final_steps, no_forecast_reason, observed_final
from entropylaw.fit.forecast.methods import ForecastMethod
from entropylaw.fit.forecast.tasks import (MIN_TASKS, NU, TAU0, benchmark_of, dataset_name, generic_hint, generic_note,
                                          is_generic, new_task_prior, prior_for, task_of)

pytestmark = pytest.mark.printed


def _run(c=0.1, A=0.5, steps=np.arange(0.0, 200.0, 10.0), n=1319, seed=0, key="val/openai/gsm8k", run_id="r"):
    rng = np.random.default_rng(seed)
    p = special.expit(A + c * np.log1p(steps))
    return RunData.from_arrays(steps, rng.binomial(n, p) / n, target_key=key, run_id=run_id)


def test_the_task_is_the_benchmark_behind_the_score():
    assert task_of("val/openai/gsm8k") == "gsm8k" == _run().task
    assert task_of("val/mean", "GSM8K+MATH") == "gsm8k+math"
    assert task_of("score", "") == "unknown (training reward)"
    assert RunData.from_arrays([0.0, 1.0], [0.1, 0.2], target_key="val").task == ""  # nothing says which task


def test_a_key_that_names_only_a_measure_takes_its_task_from_the_data_set():
    # a benchmark inside a longer key, less the measure's suffix
    assert task_of("val/math_accuracy") == task_of("val/MATH/acc") == task_of("val/eval/math-score") == "math"
    assert task_of("val/openai/gsm8k/reward/mean@1") == "gsm8k"
    assert task_of("val/math500") == "math500" and task_of("val/aime_2024") == "aime_2024"
    assert task_of("val/problem") == "problem"   # a suffix is stripped only after a separator
    # a custom trainer's measures (CS336's r1-zero reward: answer, format) name no benchmark
    for key in ("val/answer_accuracy", "val/format_reward", "val/eval/pass_rate", "val/reward_mean"):
        assert benchmark_of(key) is None and is_generic(task_of(key)), key
    # sample counts, splits and TRL's reward functions
    assert task_of("val/gsm8k/acc@4") == task_of("val/gsm8k/pass@16") == task_of("val/gsm8k-test") == "gsm8k"
    assert task_of("val/human-eval") == "human-eval"
    for key in ("val/mean@16", "val/maj@8/mean", "val/correctness_reward_func/mean"):
        assert benchmark_of(key) is None and is_generic(task_of(key)), key
    # a data set: a file's stem less its split, or its folder where the file is a split; never a folder further up
    assert dataset_name("math_train.jsonl") == "math" and dataset_name("s3://b/gsm8k/train-00000-of-00001.parquet") \
        == "gsm8k"
    assert dataset_name("/opt/runs/data/train.jsonl") == dataset_name("./data/train.parquet") == ""
    assert dataset_name("a/gsm8k/train.parquet,b/math/train.parquet") == "gsm8k+math" == dataset_name("gsm8k+math")
    assert "benchmark is not known" in generic_note("unknown")
    # a key that names no benchmark: the data set the log (or the user) states, else the measure, flagged
    assert task_of("val/accuracy", "MATH") == task_of("val/accuracy", "/data/math/validation.jsonl") == "math"
    assert task_of("val/accuracy") == "accuracy" and is_generic("accuracy") and not is_generic("math")
    assert "`dataset` NAME" in generic_hint("accuracy") and generic_hint("gsm8k") == ""
    # the benchmark the key names wins over the data set (a run trained on one set, validated on another)
    assert task_of("val/openai/gsm8k", "math") == "gsm8k"


def test_a_generic_key_says_how_to_name_its_task_and_the_data_set_gets_its_rates():
    from entropylaw.fit.forecast import regimes as rg
    from entropylaw.fit.forecast.regime_words import warnings_for

    steps = np.arange(1.0, 60.0, 5.0)
    y = 0.04 + 0.3 * np.log1p(steps) / np.log(60)
    rates = {"take-off": {"rho": [0.1] * 21, "reached": [0.5] * 21, "cases": 9, "runs": 5, "recipes": ["a", "b"],
                          "tasks": {"math": {"rho": [0.8] * 21, "reached": [0.7] * 21, "cases": 6, "runs": 3,
                                             "recipes": ["a", "b"]}}}}
    run = RunData.from_arrays(steps, y, target_key="val/accuracy").window(25.0)
    regime = rg.classify(run)
    assert regime["name"] == "take-off" and regime["task"] == "accuracy"
    said = " ".join(warnings_for(regime, rates))
    assert "several recipes" in said and "`dataset`" not in said   # said once, by the forecast (below)
    text = " ".join(str(forecast(RunData.from_arrays(steps, y, target_key="val/accuracy"), fit_steps=25.0,
                                 regime_rates=rates, methods=["default"])).split())   # what the CLI shows
    assert text.count("names no benchmark (only 'accuracy'): give `dataset` NAME") == 1, text
    named = replace(run, task=task_of("val/accuracy", "math"))
    regime = rg.classify(named)
    said = " ".join(warnings_for(regime, rates))
    assert "runs of task 'math'" in said and "`dataset`" not in said
    assert rg.takeoff_rates(rates, regime)[0]["rho"][10] == 0.8


@pytest.mark.parametrize("quasi", [False, True], ids=["pseudo-random", "quasi-random"])
def test_t_posterior_against_importance_sampling(quasi):
    """The grid posterior of c (t prior x the window's Gaussian likelihood) against draws from
    the t prior weighted by the likelihood: an independent Monte Carlo computation; its draws
    from pseudo-random normals and from the quasi-random ones logit-drift gives it."""
    t = np.array([10.0, 15.0, 20.0])
    z = np.array([0.1, 0.25, 0.3])
    w = np.array([900.0, 900.0, 900.0])
    prior = {"c": [0.07, 0.15], "nu": 3.0}
    normals = quasi_normals(4000, seed=1)[:, :2] if quasi else None
    mean, _, phi, draws = t_posterior(t, z, w, prior, 4000, seed=1, normals=normals)
    x = np.log1p(t)
    sxx = np.sum(w * (x - np.average(x, weights=w)) ** 2)
    c_hat = np.sum(w * (x - np.average(x, weights=w)) * z) / sxx
    rng = np.random.default_rng(2)
    c = 0.07 + 0.15 * rng.standard_t(3.0, 400_000)
    lw = -0.5 * (c - c_hat) ** 2 * sxx / phi
    wts = np.exp(lw - lw.max())
    order = np.argsort(c)
    cdf = np.cumsum(wts[order]) / wts.sum()
    q = [float(c[order][np.searchsorted(cdf, p)]) for p in (0.05, 0.5, 0.95)]
    assert mean[1] == pytest.approx(q[1], abs=0.01)
    assert np.quantile(draws[:, 1], [0.05, 0.95]) == pytest.approx([q[0], q[2]], abs=0.02)


def test_a_heavy_tailed_prior_lets_a_clear_window_speak_and_a_faint_one_not():
    t = np.array([40.0, 80.0, 120.0, 160.0])
    prior = {"c": [0.07, 0.15], "nu": NU}
    clear = t_posterior(t, 0.5 + 0.4 * np.log1p(t), np.full(4, 5000.0), prior, 500, 0)[0][1]
    assert clear == pytest.approx(0.4, abs=0.02)  # a Gaussian prior of the same scale would pull it to ~0.3
    faint = t_posterior(t[:2], 0.5 + 0.4 * np.log1p(t[:2]), np.full(2, 20.0), prior, 500, 0)[0][1]
    assert 0.07 < faint < 0.3


def test_new_task_prior_is_stated_below_three_tasks_and_measured_from_three():
    two = new_task_prior({"a": 0.05, "b": 0.1})
    assert two["c"][1] == TAU0 and "weakly informative" in two["scale_from"] and two["nu"] == NU
    spread = {f"t{i}": v for i, v in enumerate([-0.8, 0.0, 0.1, 0.9])}
    many = new_task_prior(spread)
    assert len(spread) >= MIN_TASKS and many["c"][1] > TAU0 and "spread of 4 tasks" in many["scale_from"]
    assert new_task_prior({})["c"] == [0.1, TAU0]  # nothing known: the stated prior alone


def test_a_known_task_gets_its_own_prior_and_any_other_the_new_task_prior():
    runs = [_run(c=0.1 + 0.01 * i, seed=i, run_id=f"g{i}") for i in range(3)]
    runs += [_run(c=0.3, seed=9, key="val/humaneval", run_id="h")]
    stored = learn_task_priors(runs)
    own, why = prior_for(stored, "gsm8k")
    assert why is None and own["task"] == "gsm8k" and own["runs"] == 3
    new, why = prior_for(stored, "math")
    assert new["kind"] == "new task" and "not among the tasks" in why and "gsm8k (3 runs)" in why
    _, why = prior_for(stored, "humaneval")
    assert "has 1 finished run" in why  # seen once: no prior of its own, said so


def test_forecast_says_which_tasks_its_prior_came_from_and_widens_for_a_new_one():
    runs = [_run(c=0.08 + 0.01 * i, seed=i, run_id=f"g{i}") for i in range(4)]
    stored = learn_task_priors(runs)
    known = LogitDrift(n_boot=400, prior=stored).fit(_run(c=0.1, seed=7).window(60))
    new = LogitDrift(n_boot=400, prior=stored).fit(_run(c=0.1, seed=7, key="val/math").window(60))
    assert known.ok_ and new.ok_ and not known.new_task_ and new.new_task_
    assert any("'math' is not among" in w for w in new.warnings_)
    assert not any("new-task prior" in w for w in known.warnings_)  # a known task is not warned about
    assert new.params_["prior_tasks"] == ["gsm8k"] and new.calibration_key == "logit-drift, new task"
    width = [float(np.diff(m.predict([190.0])[["lo", "hi"]].to_numpy()[0])[0]) for m in (known, new)]
    assert width[1] > width[0]


def test_new_task_intervals_cover_runs_whose_rate_the_prior_did_not_see(monkeypatch):
    """Runs of a task climbing 3x faster than the known one: the new-task prior's raw 90 %
    interval still holds their final score in most runs (the known task's prior would not)."""
    monkeypatch.setattr(ForecastMethod, "calibrated", False)
    stored = learn_task_priors([_run(c=0.06 + 0.01 * i, seed=i, run_id=f"g{i}") for i in range(4)])
    rng = np.random.default_rng(5)
    hits = []
    for seed in range(60):
        run = _run(c=rng.normal(0.25, 0.05), A=-0.5, seed=100 + seed, key="val/math", n=5000)
        m = LogitDrift(n_boot=300, seed=seed, prior=stored).fit(run.window(60))
        f = m.predict([190.0]).iloc[0]
        hits.append(f["lo"] <= run.target.values[-1] <= f["hi"])
    assert np.mean(hits) >= 0.8


def test_factor_weighs_each_task_the_same():
    e = np.array([0.2] * 9 + [3.0])
    assert cal.factor(e, 0.9) == pytest.approx(3.0)  # the 10th of 10: (n + 1) 0.9 rounds up to it
    assert cal.factor(e[:9], 0.5) == pytest.approx(0.2)
    # nine cases of one task against one of another: each task half the weight
    assert cal.factor(e, 0.5, groups=["a"] * 9 + ["b"]) == pytest.approx(3.0)
    assert cal.factor([0.5, np.nan], 0.9, groups=["a", "b"]) == 0.5  # nan cases left out
    held = cal.leave_one_run_out(["a", "a", "b"], [0.5, 0.7, 2.0], 0.9)
    assert held.tolist() == [2.0, 2.0, 0.7]


def test_method_factor_reads_the_band_of_the_horizon(monkeypatch):
    doc = {"factors": {"validation": {"m": {"factor": 1.5, "by_horizon": [{"factor": 1.0}, None, {"factor": 3.0}]}}}}
    monkeypatch.setattr(cal, "stored", lambda: doc)
    assert cal.method_factor("m", "validation") == 1.5
    assert cal.method_factor("m", "validation", [1.0, 3.0, 9.0]).tolist() == [1.0, 1.5, 3.0]
    assert cal.method_factor("other", "validation", [9.0]) == 1.0


def test_a_training_score_is_forecast_as_its_mean_over_the_last_5_percent():
    steps = np.arange(1.0, 401.0)
    rng = np.random.default_rng(0)
    p = 0.4 + 0.3 * (1 - np.exp(-steps / 60))
    y = rng.binomial(32, p) / 32  # one batch of 32 prompts a step: a noisy reward
    run = RunData.from_arrays(steps, y, steps, 1.0 - steps / 1000, steps, y, target_key="score",
                              target_kind="training score")
    fc = forecast(run, fit_frac=0.5, methods=["exp-saturation"], n_boot=200, calibrated=False)
    fin = fc.methods["exp-saturation"].final
    assert fin["steps"] == [381.0, 400.0] and fc.final_steps[0] == 381.0
    assert fc.final_observed == pytest.approx(float(np.mean(y[380:])))
    assert fin["lo"] <= float(np.mean(p[380:])) <= fin["hi"]
    one = fc.methods["exp-saturation"].forecast.iloc[-1]
    assert fin["hi"] - fin["lo"] < 0.6 * (one["hi"] - one["lo"])  # 20 steps averaged: the batch noise shrinks
    assert "last 5%" in str(fc) and "381..400" in str(fc)
    # a forecast a few steps ahead: the span holds one step, and the text says so rather than
    # calling one step "the run's last 5 %"
    near = forecast(run, fit_steps=100, horizon=7, methods=["exp-saturation"], n_boot=50, calibrated=False)
    assert near.final_steps.tolist() == [102.0, 103.0, 104.0, 105.0, 106.0, 107.0]  # 5 % of steps 1..107
    assert "steps 102..107: the last 5% of the steps up to the forecast's end" in str(near)
    from entropylaw.fit.forecast.final import describe

    assert describe("training score", [41.0]).startswith("the training score at step 41 alone: the last 5% of")


def test_final_rules_at_their_edges():
    assert final_steps("training score", 0.0, 10.0, 5.0).tolist() == [10.0]  # shorter than the spacing: one step
    assert observed_final("validation", [0.0, 10.0], [0.1, 0.2], [10.0, 10.0]) == 0.2
    assert observed_final("validation", [0.0, 10.0], [0.1, 0.2], [12.0, 12.0]) is None  # never logged there
    assert observed_final("training score", [0.0, 10.0], [0.1, 0.2], [11.0, 12.0]) is None
    assert no_forecast_reason(0.2, 0.6, (0.0, 1.0)) is None
    why = no_forecast_reason(0.0, 0.9, (0.0, 1.0))
    assert why.startswith("no forecast:") and "90%" in why
    assert no_forecast_reason(-5.0, 5.0, None) is None  # an unbounded score has no range to compare with


def test_the_training_link_needs_three_runs_and_refuses_without_it():
    runs = [_run(c=0.1, seed=i, run_id=f"g{i}") for i in range(2)]
    m = DriftTrain(n_boot=50, prior=learn_task_priors(runs)).fit(runs[0].window(60))
    assert not m.ok_ and "no link" in m.reason_


def test_an_anchor_is_one_more_gaussian_term_of_the_posterior():
    from scipy import optimize

    from entropylaw.fit.forecast.drift_fit import posterior

    t = np.array([20.0, 40.0, 60.0])
    z = np.array([0.5, 0.62, 0.66])
    w = np.array([400.0, 380.0, 390.0])
    mean, _, phi = posterior(t, z, w, [0.1, 0.05], anchor=(200.0, 1.2, 0.1))

    def nlp(b):
        r = z - b[0] - b[1] * np.log1p(t)
        end = b[0] + b[1] * np.log1p(200.0)
        return 0.5 * np.sum(w * r**2) / phi + 0.5 * (b[1] - 0.1) ** 2 / 0.05**2 + 0.5 * (end - 1.2) ** 2 / 0.1**2

    assert np.allclose(mean, optimize.minimize(nlp, [0.0, 0.0], method="BFGS", options={"gtol": 1e-10}).x, atol=1e-5)


def test_smaller_sizes_anchor_a_larger_models_forecast_and_larger_ones_do_not():
    from dataclasses import replace

    sizes = [0.5e9, 1.5e9, 3e9, 7e9]
    runs = [replace(_run(c=0.05, A=0.3 + 0.6 * np.log10(n / 1e9), seed=i, run_id=f"s{i}"), size=n)
            for i, n in enumerate(sizes)]
    big = replace(_run(c=0.05, A=0.3 + 0.6 * np.log10(14), seed=9, run_id="big"), size=14e9)
    fc = forecast(big, fit_frac=0.3, methods=["logit-drift"], prior_runs=tuple(runs), n_boot=100)
    said = " ".join(fc.methods["logit-drift"].warnings)
    assert "size law over the prior runs' 4 sizes predicts" in said
    mid = replace(runs[2], run_id="mid")  # 3B: the prior holds a larger size, so no size series below it
    fc = forecast(mid, fit_frac=0.3, methods=["logit-drift"], prior_runs=tuple(runs[:2] + runs[3:]), n_boot=100)
    assert "size law" not in " ".join(fc.methods["logit-drift"].warnings)


def test_one_calibration_band_per_forecast_so_the_interval_never_narrows_with_the_horizon(monkeypatch):
    doc = {"factors": {"validation": {"logit-drift": {"factor": 1.0, "by_horizon": [{"factor": 2.0}, {"factor": 0.5},
                                                                                    {"factor": 0.7}]}}}}
    monkeypatch.setattr(cal, "stored", lambda: doc)
    m = LogitDrift(n_boot=400, prior={"c": [0.1, 0.05], "runs": 5}).fit(_run(c=0.1, seed=4).window(30))
    f = m.predict(np.arange(40.0, 200.0, 10.0))
    width = (f["hi"] - f["lo"]).to_numpy()
    # one factor, the furthest step's band: the width grows with the horizon, up to the draws' noise (a
    # factor per step would quarter it where the band changes from 2.0 to 0.5, at step 90)
    assert np.min(width[1:] / width[:-1]) > 0.85 and width[-1] > 2 * width[0]


def test_the_training_link_is_for_validation_targets_only():
    steps = np.arange(0.0, 100.0)
    y = special.expit(0.1 + 0.1 * np.log1p(steps))
    run = RunData.from_arrays(steps, y, steps, 1 - steps / 200, steps, y, target_key="score",
                              target_kind="training score")
    assert run.task == "unknown (training reward)"
    stored = {"tasks": {}, "new_task": new_task_prior({}), "train_link": {"slope": 1.0, "sd": 0.02}}
    m = DriftTrain(n_boot=20, prior=stored).fit(run.window(40))
    assert not m.ok_ and "training score itself" in m.reason_


def test_a_clear_climb_on_a_new_task_is_believed_not_refused_as_a_take_off():
    stored = learn_task_priors([_run(c=0.06 + 0.01 * i, seed=i, run_id=f"g{i}") for i in range(4)])
    run = _run(c=0.6, A=-2.5, seed=3, key="val/math", n=5000)  # a steady climb, no take-off
    m = LogitDrift(n_boot=200, prior=stored).fit(run.window(100))
    assert m.ok_, m.reason_
    assert m.params_["c"] > 0.4


def test_a_shipped_run_is_left_out_of_its_own_stored_prior():
    runs = [_run(c=0.05 + 0.02 * i, seed=i, run_id=f"g{i}") for i in range(4)]
    stored = learn_task_priors(runs)
    m = LogitDrift(n_boot=50, prior=stored).fit(runs[3].window(60))
    assert m.prior_["runs"] == 3 and "g3" not in m.prior_["run_ids"]
    assert any("left out of its own prior" in w for w in m.warnings_)
    assert LogitDrift(n_boot=50, prior={"tasks": {}}).fit(runs[0].window(60)).ok_  # no new-task part: no crash


def test_the_size_anchor_sits_at_the_planned_or_the_recipes_last_step():
    from dataclasses import replace

    sizes = [0.5e9, 1.5e9, 3e9, 7e9]
    runs = tuple(replace(_run(c=0.05, A=0.3 + 0.6 * np.log10(n / 1e9), seed=i, run_id=f"s{i}"), size=n)
                 for i, n in enumerate(sizes))
    big = replace(_run(c=0.05, A=0.3 + 0.6 * np.log10(14), seed=9, run_id="big"), size=14e9)
    live = big.window(60)  # a run still going: its own last step is 60
    said = " ".join(forecast(live, methods=["logit-drift"], prior_runs=runs, n_boot=50).methods["logit-drift"].warnings)
    assert "final step 190 (the prior runs' last step)" in said
    said = " ".join(forecast(live, methods=["logit-drift"], prior_runs=runs, n_boot=50,
                             total_steps=300).methods["logit-drift"].warnings)
    assert "final step 300 (the planned length" in said
