"""A run on its floor after a collapse (instability, its fitted level within 2 standard errors of
a point of the range's bottom) is forecast where such runs ended (``regimes.on_floor``), not from
the window's noise, which the fall itself inflates; the call reads its gain from that floor.
Closed forms on a made-up run, and rasbt's KL run (0.156, 0.408, then 0.000 to its end), forecast
with rates learned without its recipe."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from entropylaw.fit.forecast import regimes as rg
from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.takeoff import quantiles

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def _cases(reached=(0.0, 0.0, 0.0, 0.0, 0.1)):
    """Windows on their floor after a collapse, of two recipes, and where each run ended."""
    return [{"recipe": "ab"[i % 2], "run": f"r{i}", "floor_reached": r} for i, r in enumerate(reached)]


def test_learn_stores_where_runs_on_their_floor_ended_each_recipe_weighing_the_same():
    got = rg.learn(_cases())["floor"]
    cs = _cases()
    assert got["reached"] == pytest.approx(quantiles([c["floor_reached"] for c in cs], [c["recipe"] for c in cs]))
    assert got["cases"] == 5 and got["stayed"] == 4 and got["recipes"] == ["a", "b"]
    assert "floor" not in rg.learn([c for c in _cases() if c["recipe"] == "a"])  # one recipe: too few to learn from


def _collapsed(n_floor=1):
    """A score that climbs to 0.41, then falls to 0.000 and stays, its entropy rising 50-fold."""
    steps = np.array([1.0, 50.0] + [100.0 + 50 * i for i in range(9)])
    y = np.array([0.156, 0.408] + [0.0] * 9)
    hs = np.arange(1.0, 501.0)
    h = np.where(hs < 60, 0.2, 10.0)
    return RunData.from_arrays(steps, y, hs, h, target_key="val/acc"), steps[1 + n_floor]


def test_a_collapsed_run_on_its_floor_is_forecast_where_such_runs_ended_and_told_to_stop():
    run, end = _collapsed()
    rates = rg.learn(_cases((0.0,) * 6))
    fc = forecast(run, fit_steps=end, methods=["default"], regime_rates=rates, n_boot=200)
    assert fc.regime["name"] == "instability" and fc.regime["on_floor"]
    f = fc.methods[fc.default].forecast.iloc[-1]
    assert (f["forecast"], f["lo"], f["hi"]) == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)
    d = fc.decision
    assert d["call"] == "stop" and d["gain"]["hi"] == pytest.approx(0.0, abs=1e-9)
    said = " ".join(fc.warnings)
    assert "the run is on its floor already" in said and "6 ended within 2% of the score's range of it" in said
    # without such rates the window's noise, read across the fall, spans the range: no forecast, no call
    bare = forecast(run, fit_steps=end, methods=["default"], regime_rates={}, n_boot=200)
    g = bare.methods[bare.default].forecast.iloc[-1]
    assert g["hi"] - g["lo"] > 0.5 and bare.decision["call"] is None


def test_where_such_runs_recovered_the_interval_opens_to_what_they_reached():
    """The draws are where the runs ended, each recipe weighing the same: one of two recipes whose
    runs came back to 0.3 puts the interval's top there and the call stays open."""
    run, end = _collapsed(n_floor=2)
    rates = rg.learn(_cases((0.0, 0.3, 0.0, 0.3, 0.0, 0.3)))
    fc = forecast(run, fit_steps=end, methods=["default"], regime_rates=rates, n_boot=400)
    f = fc.methods[fc.default].forecast.iloc[-1]
    assert f["lo"] == pytest.approx(0.0, abs=1e-9) and f["hi"] == pytest.approx(0.3, abs=1e-6)
    assert fc.decision["call"] != "stop"


def test_on_floor_needs_the_instability_regime_on_its_floor_and_the_rates():
    rates = {"floor": {"reached": [0.0] * 21, "cases": 6}}
    # fell 20 standard errors, its last 2 points on the floor
    down = {"name": "instability", "on_floor": True, "drop": 0.4, "point_sd": 0.02, "floor_points": 2}
    assert rg.on_floor(down, rates) is rates["floor"]
    assert rg.on_floor(down, {}) is None
    assert rg.on_floor({**down, "name": "saturation"}, rates) is None
    assert rg.on_floor({**down, "drop": 0.05}, rates) is None  # 2.5 standard errors: no fall
    assert rg.moves(down, rates)
    assert not rg.moves({**down, "on_floor": False}, rates)


def test_rasbt_kl_run_at_25_percent_is_told_to_stop_with_rates_learned_without_its_recipe():
    """rasbt 7_5 (KL): 0.156, 0.408, then 0.000 from step 100 to 500, its entropy 0.83 -> 11.9 nats.
    From 25 % (one point on the floor) it read [0.00, 1.00] and no call; with the floor rates of the
    other recipes (the shipped TRL and veRL collapses) it is 0.000 [0.000, 0.000] and stop."""
    path = SHARED / "real-rasbt" / "7_5_plus_kl_metrics.csv"
    if not path.exists():
        pytest.skip("../shared/data/real-rasbt is not beside the repository")
    sys.path.insert(0, str(ROOT / "analysis"))
    import bench_forecast_regimes as rb
    from bench_forecast import default_sources, load_runs

    import entropylaw as el

    frames, _ = load_runs(default_sources())  # data/ only: no rasbt run among them
    cases = rb.regime_cases(rb.all_runs(frames), rb.KS)
    rates = rb.learn_rates(cases)
    assert "rasbt" not in " ".join(rates["floor"]["recipes"]) and len(rates["floor"]["recipes"]) >= 2
    df = el.load(str(path), warn=False)
    fc = forecast(RunData.from_table(df, df["run_id"].iloc[0]), fit_frac=0.25, methods=["default"],
                  regime_rates=rates, n_boot=200)
    f = fc.methods[fc.default].forecast.iloc[-1]
    assert f["hi"] < 0.01 and fc.final_observed == 0.0 and fc.decision["call"] == "stop"


def test_a_run_that_has_yet_to_leave_its_floor_is_not_read_as_collapsed():
    """Hostile case: a score at 0.000-0.002 for its first evaluations while its entropy rises 3-fold
    (an instruct model learning the answer's format; GSM8K's PPO 0.5B run sat at 0.000-0.002 for 22
    steps, then 0.384 at step 29). It is on its floor but never fell from a peak: the rates of
    collapsed runs do not apply, no [0.000, 0.000] forecast and no stop."""
    steps = np.arange(2.0, 61.0, 2.0)
    y = np.where(steps <= 22, np.where(steps % 4 == 0, 0.002, 0.0), np.minimum(0.55, 0.38 + (steps - 29) / 100))
    hs = np.arange(1.0, 61.0)
    h = np.where(hs < 8, 0.2, 0.7)
    run = RunData.from_arrays(steps, y, hs, h, target_key="val/gsm8k")
    rates = rg.learn(_cases((0.0,) * 6))
    fc = forecast(run, fit_steps=20.0, methods=["default", "last-value"], regime_rates=rates, n_boot=200)
    assert fc.regime["name"] == "instability" and fc.regime["on_floor"] and not rg.fell(fc.regime)
    assert rg.on_floor(fc.regime, rates) is None
    assert fc.decision["call"] != "stop"
    assert "the forecast is where they ended" not in " ".join(fc.warnings)


def test_one_evaluation_at_zero_alone_is_not_a_collapse():
    """Hostile case: rasbt's KL run's first scores (0.156, 0.408, then 0.000 at step 100) with its
    entropy flat: an evaluation that failed reads so, and the next may not. Instability and on its
    floor, but one point alone, without the entropy's rise, is no collapse to forecast at 0.000 and
    stop; a second evaluation at 0, or the entropy's rise (the real run's, 57.8-fold), makes it one."""
    run, end = _collapsed()
    flat = RunData.from_arrays(run.target.steps, run.target.values, np.arange(1.0, 501.0), np.full(500, 0.4),
                               target_key="val/acc")
    rates = rg.learn(_cases((0.0,) * 6))
    fc = forecast(flat, fit_steps=end, methods=["default"], regime_rates=rates, n_boot=200)
    assert fc.regime["name"] == "instability" and fc.regime["on_floor"] and fc.regime["floor_points"] == 1
    assert not rg.fell(fc.regime) and rg.on_floor(fc.regime, rates) is None
    assert fc.decision["call"] != "stop" and "the forecast is where they ended" not in " ".join(fc.warnings)
    assert rg.fell({**fc.regime, "floor_points": 2}) and rg.fell({**fc.regime, "entropy_fold": 57.8})
