"""``forecast`` on windows a demanding user would try: a score held at its floor before it takes
off, a window whose regime says the interval was widened, and other inputs the law was not made
for. Each answer is honest: no interval of no width for a score that moved, no claim of a
widening that did not happen."""

from __future__ import annotations

import numpy as np
import pytest

from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData

pytestmark = pytest.mark.printed


def _floor_then_climb(entropy_rises=False):
    """A validation score at 0 for its first 7 points (of 12), then climbing to 0.3."""
    steps = np.arange(1.0, 61.0, 5.0)
    val = np.array([0.0] * 7 + [0.028, 0.115, 0.181, 0.247, 0.305])
    h = np.arange(1.0, 61.0)
    ent = 0.3 * np.exp(h / 60) if entropy_rises else 1.5 * np.exp(-h / 60) + 0.05
    return RunData.from_arrays(steps, val, h, ent, target_key="val/gsm8k")


def test_last_value_of_a_score_held_at_its_floor_then_climbing_has_an_interval():
    """Before: the noise read from successive differences was 0 (most of them were the floor's
    repeats), and last-value printed 0.3049 [0.3049, 0.3049] for a score that climbed 0 -> 0.3."""
    fc = forecast(_floor_then_climb(), horizon=136.0, methods=["last-value"], n_boot=200, regime_rates={})
    f = fc.methods["last-value"].final
    assert f["lo"] < f["forecast"] < f["hi"], f


def test_a_collapse_risk_said_to_widen_the_interval_widens_it():
    """Entropy rising 2.6-fold in the window: the output said "the interval is widened downward"
    over an interval of no width."""
    fc = forecast(_floor_then_climb(entropy_rises=True), horizon=136.0, methods=["last-value"], n_boot=200)
    text = " ".join(str(fc).split())
    f = fc.methods["last-value"].final
    assert "widened downward" in text and f["lo"] < f["forecast"] - 0.05, f


def _jsonl(path, steps, val_every=5):
    """A veRL-style log taking off from 0 on gsm8k, its entropy falling, at ``steps``."""
    import json

    with open(path, "w") as f:
        for i, s in enumerate(steps):
            h = 1.5 * np.exp(-i / 60) + 0.05
            row = {"step": s, "actor/entropy": h, "critic/score/mean": float(np.clip(1.3 - 0.5 * np.exp(h), 0, 1))}
            if i % val_every == 0:
                row["val/test_score/gsm8k"] = float(np.clip(1.25 - 0.5 * np.exp(h), 0, 1))
            f.write(json.dumps(row) + "\n")
    return str(path)


@pytest.mark.parametrize("extra", [[], ["--fit-frac", "0.3"]])
def test_a_window_that_ends_far_past_its_last_score_is_no_forecast_and_no_call(tmp_path, extra):
    """One row logged at step 1e9 after 199 steps: the window ended at 1e9 (3e8 in a backtest),
    the take-off's climb was carried across the gap, and the output said 1.0000 [1.0000, 1.0000]
    and "call: stop: continuing from step 199 adds +0.0"."""
    from conftest import run_cli

    log = _jsonl(tmp_path / "jump.jsonl", [*range(1, 200), 10**9])
    out = run_cli("forecast", log, "--n-boot", "50", *extra)
    text = " ".join(out.stdout.split())
    assert out.returncode == 0, out.stderr
    assert "call: stop" not in text and "call: none: no forecast: the window ends at step" in text, text


def test_a_call_likely_made_only_at_the_runs_last_step_is_not_said_likely(tmp_path):
    """`--total-steps 61` one step after a window ending at 60.7: the output said "the call is
    likely made at step 61", the run's last step, where no call is left to make."""
    from conftest import run_cli

    log = _jsonl(tmp_path / "run.jsonl", list(range(1, 201)))
    out = run_cli("forecast", log, "--fit-frac", "0.3", "--total-steps", "61", "--n-boot", "50")
    text = " ".join(out.stdout.split())
    assert out.returncode == 0 and "call: undecided" in text, out.stdout + out.stderr
    assert "likely made at step 61" not in text and "no call is likely before the run's end" in text, text


def test_rank_says_why_a_run_whose_window_ends_past_its_last_score_has_no_forecast(tmp_path):
    """rank listed the run with a step logged at 1e9 as "no forecast" and explained it as "the interval
    spans over half the score's range" under an interval [1.000, 1.000]."""
    from conftest import run_cli

    _jsonl(tmp_path / "jump.jsonl", [*range(1, 200), 10**9])
    _jsonl(tmp_path / "plain.jsonl", list(range(1, 201)))
    out = run_cli("rank", str(tmp_path), "--n-boot", "50")
    text = " ".join(out.stdout.split())
    assert out.returncode == 0, out.stderr
    assert "2 runs listed by" in text and "one with a forecast, nothing to rank it against (1 with no forecast), " \
        "and nothing is pruned" in text, text
    assert "or the window ends further past its last score than its scores span" in text, text


def test_rank_at_one_step_says_the_runs_start_at_steps_far_apart(tmp_path):
    """Two copies of one run, one logging steps from 5000: compared live at step 5238, the copy from
    step 0 was forecast 44 times its length ahead and the other pruned, with nothing said of why."""
    from conftest import run_cli

    _jsonl(tmp_path / "from_one.jsonl", list(range(1, 121)))
    _jsonl(tmp_path / "from_5000.jsonl", list(range(5000, 5120)))
    out = run_cli("rank", str(tmp_path), "--n-boot", "50")
    text = " ".join(out.stdout.split())
    assert out.returncode == 0, out.stderr
    assert "the runs start at steps far apart (from_5000 at step 5000; from_one at step 1)" in text, text
    assert "counted from 0, as a run resumed there" in text, text  # as forecast's own note reads such a log
    # a run whose log starts at step 5 beside a 4-step run from step 1 is no such contest
    near = tmp_path / "near"
    near.mkdir()
    _jsonl(near / "from_five.jsonl", list(range(5, 121)))
    _jsonl(near / "short.jsonl", [1, 2, 3, 4], val_every=1)
    out = run_cli("rank", str(near), "--n-boot", "50")
    assert out.returncode == 0 and "start at steps far apart" not in out.stdout, out.stdout + out.stderr


@pytest.mark.parametrize("key, least", [("val/aime24", 0.088), ("val/acc", 0.0333 / 2)])
def test_repeats_on_a_small_validation_set_keep_its_noise(key, least):
    """A 30-problem set's last scores 0.6, 0.6333, 0.6333, 0.6333: the noise read off the repeats
    was 0, and last-value, exp-saturation, power and both ensembles printed 0.6333 [0.6333, 0.6333].
    The noise is at least the set's binomial standard error (0.088, AIME's 30 problems), or half
    the score's smallest step where the set's size is unknown."""
    steps = np.array([30.0, 40.0, 50.0, 60.0])
    h = np.arange(30.0, 61.0)
    run = RunData.from_arrays(steps, [0.6, 0.6333, 0.6333, 0.6333], h, 1.2 * np.exp(-h / 40) + 0.1, target_key=key)
    fc = forecast(run, horizon=60.0, n_boot=200, regime_rates={},
                  methods=["last-value", "exp-saturation", "power", "ensemble", "curve-ensemble"])
    for name, m in fc.methods.items():
        f = m.final
        assert f["hi"] - f["lo"] > 2 * least, (name, f)
    assert fc.methods["last-value"].params["sigma"] >= least * 0.999, fc.methods["last-value"].params


def _csv(path, first_step):
    """A validation score on 30 problems climbing 0.25 -> 0.6 over 200 steps, entropy falling,
    its steps counted from ``first_step``."""
    import csv

    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "entropy", "val/acc"])
        for s in range(201):
            val = round(round((0.6 - 0.35 * np.exp(-s / 60)) * 30) / 30, 4) if s % 10 == 0 else ""
            w.writerow([s + first_step, round(1.2 * np.exp(-s / 80) + 0.1, 5), val])
    return str(path)


@pytest.mark.parametrize("first, said", [(5000, True), (0, False), (40, False)])
def test_a_log_starting_far_from_step_0_says_steps_are_counted_from_0(tmp_path, first, said):
    """The same run logged from step 5000 was forecast differently from the run logged from 0
    (logit-drift's climb is in ln(1 + step); the regime read a take-off), with nothing said. The
    forecast keeps counting from 0 (a resumed run has trained those steps), and says so, in the
    text and in --json, where the log starts further from 0 than the window spans."""
    import json

    from conftest import run_cli

    log = _csv(tmp_path / "run.csv", first)
    text = " ".join(run_cli("forecast", log, "--fit-frac", "0.25", "--n-boot", "50").stdout.split())
    out = run_cli("forecast", log, "--fit-frac", "0.25", "--n-boot", "50", "--json")
    assert out.returncode == 0, out.stderr
    note = json.loads(out.stdout)[0]["note"] or ""
    line = f"the log starts at step {first}, further from step 0 than the window spans (50 steps)"
    assert (line in note) == said and (line in text) == said, (note, text)
    assert ("log its steps from 0" in text) == said, text


def test_the_noise_floor_only_widens_an_interval(monkeypatch):
    """Raising a method's noise to the set's binomial standard error before its model error was
    measured took the late misses for noise and narrowed the far forecast: exp-saturation on a real
    gsm8k run at 25 % went [0.742, 0.894] -> [0.779, 0.877]. Raised after, it only widens."""
    from pathlib import Path

    from entropylaw.fit.forecast import methods
    from entropylaw import api

    path = Path(__file__).resolve().parents[1] / "data/real-sizes/qwen2.5-3b-instruct_grpo-lora_gsm8k.csv"
    if not path.exists():
        pytest.skip("the shipped real runs are absent")
    df = api.load(str(path))
    run = RunData.from_table(df, list(df["run_id"].unique())[0])

    def width():
        f = forecast(run, fit_frac=0.25, methods=["exp-saturation"], n_boot=200).methods["exp-saturation"].final
        return f["hi"] - f["lo"]
    floored = width()
    monkeypatch.setattr(methods, "noise_floor", lambda run: 0.0)
    assert floored >= width() - 1e-9


@pytest.mark.parametrize("values, floor", [
    ([0.242, 0.356], np.sqrt(0.356 * 0.644 / 500)),  # a short window: the assumed set's standard error alone
    ([0.3384, 0.4176, 0.4858, 0.5282, 0.5679], 0.0),  # a set of unknown size, no grid, no repeat: no floor
])
def test_the_steps_of_a_climb_are_no_resolution_of_the_score(values, floor, monkeypatch):
    """A validation score of unknown size that climbs between its evaluations (a countdown run's
    0.242 then 0.356) had a noise floor of half its smallest step, the climb read as the score's
    resolution (0.057): logit-drift's interval there widened 0.744 -> 0.767 at its top. A step is
    a resolution only where a value repeats or every score lies on its grid (a set's k/n)."""
    from entropylaw.fit.forecast import finish, last_value, law, methods
    from entropylaw.fit.forecast.problems import noise_floor

    steps = 25.0 * np.arange(1, len(values) + 1)
    h = np.arange(1.0, steps[-1] + 1)
    run = RunData.from_arrays(steps, values, h, np.exp(-h / 100) + 0.1, target_key="val/acc")
    assert noise_floor(run) == pytest.approx(floor, abs=1e-4)

    def finals():
        fc = forecast(run, horizon=100.0, n_boot=50, regime_rates={}, methods=["last-value", "logit-drift"])
        return [v for m in fc.methods.values() for v in (m.final["lo"], m.final["hi"])]
    got = finals()
    for module in (finish, last_value, law, methods):  # the intervals are those of that floor
        monkeypatch.setattr(module, "noise_floor", lambda run: floor)
    assert got == pytest.approx(finals())


def test_a_score_stuck_at_one_value_has_no_90_percent_step():
    """A training reward at 0.5 at every step: the curves printed "90%_step 627 [627, 627]", a step by which a flat
    line reaches 90 % of no climb. No 90 % step now, said in the method's note."""
    steps = np.arange(10.0, 610.0, 10.0)
    run = RunData.from_arrays(steps, np.full(len(steps), 0.5), steps, 1.2 * np.exp(-steps / 200) + 0.1,
                              target_key="score")
    fc = forecast(run, methods=["curve-ensemble", "exp-saturation", "power", "sigmoid"], n_boot=40, regime_rates={})
    for name, r in fc.methods.items():
        assert r.ok and r.t90 is None and not any(r.t90_ci or ()), (name, r.t90, r.t90_ci)
    for name in ("curve-ensemble", "exp-saturation"):  # each gave a step (627): none now, said
        assert "no 90 % step: the score is constant in the window" in (fc.methods[name].note or ""), name
    # a score that climbs keeps its 90 % step
    rising = RunData.from_arrays(steps, 0.8 - 0.5 * np.exp(-steps / 150), target_key="score")
    assert forecast(rising, methods=["exp-saturation"], n_boot=40, regime_rates={}).methods["exp-saturation"].t90
