"""Take-offs whose entropy held are forecast from take-offs like them (``takeoff.steady``): the
stored rates keep, beside every case, those of windows whose entropy rose less than
``RISING``-fold; a run whose entropy rose, or that logs none, keeps them all. Closed forms of the
forecast's centre, and the shared real runs (a CS336 take-off whose entropy held, rasbt's that
rose and then fell)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import special

from entropylaw.fit.forecast import regimes as rg
from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.takeoff import HELD, RISING, quantiles

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def _cases():
    """Two recipes whose entropy held and climbed on, one whose entropy rose and fell."""
    out = []
    for rec, rhos, fold in (("a", (0.6, 0.8, 1.0), 1.0), ("b", (0.5, 0.7, 0.9), 1.2), ("c", (-0.4, -0.3, 0.1), 2.2)):
        out += [{"recipe": rec, "run": f"{rec}{i}", "rho": r, "reached": 0.5 + 0.1 * i, "fold": fold, "task": "",
                 "model": ""} for i, r in enumerate(rhos)]
    return out


def test_learn_stores_the_steady_rates_beside_every_cases_each_recipe_weighing_the_same():
    got = rg.learn(_cases())["take-off"]
    steady = [c for c in _cases() if c["fold"] < RISING]
    # an independent weighted quantile: each recipe weighs the same, each case at the middle of its weight
    assert got["steady"]["rho"] == pytest.approx(quantiles([c["rho"] for c in steady], [c["recipe"] for c in steady]))
    assert got["steady"]["cases"] == 6 and got["steady"]["recipes"] == ["a", "b"] and got["cases"] == 9
    assert min(got["rho"]) == pytest.approx(-0.4) and min(got["steady"]["rho"]) == pytest.approx(0.5)
    # one recipe whose entropy held is too few to learn from: nothing stored apart
    one = [c for c in _cases() if c["recipe"] != "b"]
    assert "steady" not in rg.learn(one)["take-off"]


def _takeoff(fold_after: float):
    """A validation score taking off from 0.04; its entropy flat, or rising ``fold_after``-fold late."""
    steps = np.arange(1.0, 301.0, 5.0)
    z = special.logit(0.04) + 0.9 * np.log1p(steps) - 0.9 * np.log(2.0)
    y = np.random.default_rng(0).binomial(5000, special.expit(z)) / 5000
    hs = np.arange(1.0, 301.0)
    h = 0.3 * np.where(hs < 30, 1.0, fold_after)
    return RunData.from_arrays(steps, y, hs, h, target_key="val/unnamed_metric")


@pytest.mark.parametrize("fold_after, steady", [(1.0, True), (2.0, False)])
def test_a_take_off_whose_entropy_held_is_forecast_from_the_steady_rates_and_says_so(fold_after, steady):
    rates = rg.learn(_cases())
    run = _takeoff(fold_after)
    fc = forecast(run, fit_steps=60.0, at_steps=[300.0], methods=["last-value"], regime_rates=rates)
    r = fc.regime
    assert fc.regime_name == "take-off" and (r["entropy_fold"] < RISING) == steady
    # a flat method takes the rates' draws alone: its centre is the rates' median rho times the window's climb
    take = rates["take-off"]["steady"] if steady else rates["take-off"]
    rho = float(np.median(take["rho"]))
    span = np.log(301.0 / (1 + fc.window_end))
    want = special.expit(r["z_end"] + (rho * r["c"] if rho >= 0 else rho) * span)
    assert fc.methods["last-value"].forecast["forecast"].iloc[-1] == pytest.approx(want, abs=1e-6)
    said = " ".join(" ".join(fc.warnings).split())
    assert (HELD in said) == steady


def _shared(*parts):
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"../shared/data/{'/'.join(parts)} is absent (only CI and developers have it)")
    sys.path.insert(0, str(ROOT / "analysis"))
    import bench_forecast_runs as br

    return br, path


@pytest.mark.shared
def test_stored_rates_a_cs336_take_off_whose_entropy_held_is_told_to_continue_and_it_climbed_on():
    """The stored rates hold steady take-offs apart; a CS336 run at 25 % (entropy ~1.0-fold, 0.21 at step
    ~60 of 238) is forecast from them: the call is continue, and it ended 25 points higher."""
    br, path = _shared("real-cs336-wandb", "reference", "grpo_grpo_clip_lr1e-05_epoch1_train_batch256__whra6cbi.csv")
    df = br.read_shared(path)
    run = RunData.from_table(df, df["run_id"].iloc[0])
    fc = forecast(run, fit_frac=0.25, methods=["default"])
    assert fc.regime_name == "take-off" and fc.regime["entropy_fold"] < RISING
    assert HELD in " ".join(" ".join(fc.warnings).split())
    d = fc.decision
    assert d["call"] == "continue" and d["gain"]["lo"] > d["threshold"]
    now = float(run.window(fc.window_end).target.values[-1])
    assert float(run.target.values[-1]) - now > d["threshold"]  # it did climb on (0.205 -> 0.455)


@pytest.mark.shared
def test_rasbt_take_off_whose_entropy_rose_keeps_every_cases_fall():
    """rasbt 7_4 at 15 %: a take-off (0.45 at step 50) whose entropy rose 2.3-fold, which then fell to 0.42:
    its rates keep the falls, and the call is not continue."""
    br, path = _shared("real-rasbt", "7_4_plus_clip_ratio_metrics.csv")
    df = br.read_rasbt(path)
    run = RunData.from_table(df, df["run_id"].iloc[0])
    fc = forecast(run, fit_frac=0.15, methods=["default"])
    assert fc.regime["entropy_fold"] >= RISING
    assert HELD not in " ".join(" ".join(fc.warnings).split())
    assert fc.decision["call"] != "continue"
