"""The call on a window whose regime moves the forecast: a take-off the default method refuses is
read through the forecast the output recommends (last-value moved by what take-off runs did next),
a continue may leave the end open when the lower bound alone clears the threshold, and a stop is
never made from a window that cannot bound the upside."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import special

from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData

pytestmark = pytest.mark.printed
ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


def _rates(rho, reached=0.9):
    """Take-off rates stored as the task's own (val/math): a flat method's draws are the rates'
    alone (with other recipes' only, in a sweep, half are the climb carried on at the sweep's
    rate: test_forecast_regimes)."""
    take = {"rho": list(np.linspace(*rho, 21)), "reached": list(np.linspace(0.3, reached, 21)),
            "cases": 20, "runs": 8, "recipes": ["a", "b"]}
    return {"take-off": {**take, "tasks": {"math": dict(take)}}}


def _takeoff():
    """A MATH-like score taking off from 0.04 (its logit linear in ln(1 + step)); by step 12 the
    window holds 3 points (0.035, 0.101, 0.163), and logit-drift refuses: it ends inside the take-off."""
    steps = np.r_[1.0, np.arange(5.0, 301.0, 5.0)]
    z = special.logit(0.04) + 0.9 * np.log1p(steps) - 0.9 * np.log(2.0)
    y = np.random.default_rng(0).binomial(5000, special.expit(z)) / 5000
    return RunData.from_arrays(steps, y, np.arange(1.0, 301.0), np.full(300, 0.3), target_key="val/math")


def test_a_take_off_the_default_refuses_is_called_from_the_regimes_forecast():
    run = _takeoff()
    fc = forecast(run, fit_steps=12, methods=["default"], regime_rates=_rates((0.5, 1.5)), n_boot=200)
    d, r = fc.decision, fc.regime
    assert fc.regime_name == "take-off" and fc.default == "last-value" and d["method"] == "last-value"
    assert d["call"] == "continue" and d["gain"]["lo"] > d["threshold"] and "no_forecast" not in d
    # the expected gain, computed here: the median rho (1.0) times the window's climb on the logit
    # scale to the run's last step, from the fitted level at the window's end, minus that same level
    # (final and now from one curve: the take-off's anchor, not the last noisy value)
    start = special.expit(r["z_end"])
    final = special.expit(r["z_end"] + 1.0 * r["c"] * np.log((1 + 300.0) / (1 + fc.window_end)))
    assert d["gain"]["to_step"] == 300.0
    assert d["gain"]["expected"] == pytest.approx(final - start, abs=1e-9)
    # the gain's bounds are the final draws' own quantiles less the anchor: joint draws, so the
    # gain's interval is the final score's shifted, never wider
    assert d["gain"]["hi"] - d["gain"]["lo"] <= d["final"]["hi"] - d["final"]["lo"] + 1e-9
    q10, q90 = np.quantile(fc.final_draws, [0.1, 0.9])  # the gain's 90 % bounds are one-sided
    assert (d["gain"]["lo"], d["gain"]["hi"]) == pytest.approx((q10 - start, q90 - start), abs=1e-9)


def test_instability_alone_does_not_make_a_flat_method_give_a_stop():
    """Instability moves only a forecast's lower end: last-value on a collapsed floor would read a
    gain of exactly [0, 0] and 'stop' by construction. It is not a method that models change."""
    from entropylaw.fit.forecast import regimes

    rates = {"instability": {"r": [0.5] * 21, "cases": 9, "collapsed": 6, "recipes": ["a", "b"]}}
    assert not regimes.moves({"name": "instability"}, rates)
    assert regimes.moves({"name": "take-off", "c": 0.9}, _rates((0.5, 1.5)))


def test_a_continue_may_leave_the_end_open_and_says_so():
    fc = forecast(_takeoff(), fit_steps=12, methods=["default"], regime_rates=_rates((0.2, 2.0), 0.95), n_boot=200)
    d = fc.decision
    assert d["final"]["hi"] - d["final"]["lo"] > 0.5  # the window does not say where the run ends
    assert d["call"] == "continue" and d["gain"]["lo"] > d["threshold"]
    said = f"no forecast: the {d['method']} forecast's interval"
    assert d["no_forecast"].startswith(said)
    text = " ".join(str(fc).split())
    assert "call: continue: at least +" in text and said in text


def test_a_collapsed_runs_call_names_the_method_whose_interval_is_no_forecast():
    """A run that collapsed to 0: the table recommends last-value, 0 [0, 0.49]; the call reads
    another method (a flat one gives no call in instability) and said "no forecast: the interval
    [0.00, 1.00] spans 100 %", an interval shown nowhere. It names whose interval it is. With the
    stored rates of runs on their floor after a collapse, last-value itself gives the call: stop."""
    steps = np.arange(5.0, 61.0, 5.0)
    val = np.array([0.173, 0.276, 0.358, 0.405, 0.476, 0.458, 0.321, 0.16, 0.0, 0.0, 0.0, 0.0])
    h = np.arange(1.0, 61.0)
    run = RunData.from_arrays(steps, val, h, 1.0355 * np.exp(-h / 17.0), target_key="val-core/openai/gsm8k/acc/mean@1")
    from entropylaw.fit.forecast import calibrate as cal

    stored = cal.stored()["regimes"]
    # without the rates of runs on their floor after a collapse (regimes.on_floor): last-value does not move
    fc = forecast(run, horizon=119.0, methods=["default"], n_boot=200,
                  regime_rates={k: v for k, v in stored.items() if k != "floor"})
    d = fc.decision
    assert d["method"] != "last-value" and d["call"] is None, d
    assert d["reason"].startswith(f"no forecast: the {d['method']} forecast's interval ["), d["reason"]
    assert f"call: none: no forecast: the {d['method']} forecast's interval" in " ".join(str(fc).split())
    # with them (stored): last-value is moved to where such runs ended, and its gain from the floor gives the call
    d = forecast(run, horizon=119.0, methods=["default"], n_boot=200).decision
    assert d["method"] == "last-value" and d["call"] == "stop" and d["gain"]["hi"] == pytest.approx(0.0, abs=1e-9)


def test_rates_that_hold_a_stall_give_no_continue_and_no_stop():
    fc = forecast(_takeoff(), fit_steps=12, methods=["default"], regime_rates=_rates((-1.0, 1.0)), n_boot=200)
    d = fc.decision
    assert d["method"] == "last-value" and d["gain"]["lo"] < d["threshold"] < d["gain"]["hi"]
    assert d["call"] not in ("stop", "continue")


def test_without_take_off_rates_nothing_moves_last_value_and_the_call_says_why():
    fc = forecast(_takeoff(), fit_steps=12, methods=["default"], regime_rates={}, n_boot=200)
    d = fc.decision
    assert d["method"] is None and d["call"] is None and "unless the window's regime moves them" in d["reason"]


@pytest.mark.shared
def test_a_cs336_take_off_at_15_percent_is_told_to_continue():
    """Its 15 % window holds steps 1 and 5 (0.044, 0.118); the run ends at 0.580. With the stored
    rates (runs of task 'math' in take-off) the call is continue, the end left open."""
    import sys

    path = SHARED / "real-cs336-wandb" / "reference" / "grpo_grpo_clip_lr1e-05_epoch2_train_batch128__5f987owm.csv"
    if not path.exists():
        pytest.skip("../shared/data/real-cs336-wandb is absent (only CI and developers have it)")
    sys.path.insert(0, str(ROOT / "analysis"))
    import bench_forecast_runs as br

    df = br.read_shared(path)
    run = RunData.from_table(df, df["run_id"].iloc[0])
    fc = forecast(run, fit_frac=0.15, methods=["default"])
    d = fc.decision
    assert fc.regime_name == "take-off" and d["method"] == "last-value"
    assert d["call"] == "continue" and d["gain"]["lo"] > d["threshold"]
    assert run.target.values[-1] - run.target.values[1] > d["gain"]["lo"]  # it then gained +46 points


def test_an_open_ended_continue_reads_at_least_on_the_page_and_the_screen():
    """Where the final score has no forecast, the page and the screen show the gain's lower bound
    ('at least +G'), not an expected gain the window cannot give."""
    from entropylaw.page.forecasts import call_cell
    from entropylaw.results.columns import _gain

    f = {"call": "continue", "gain": 0.30, "gain_ci": (0.093, 0.62), "point": 0.01, "open_end": True,
         "call_method": "last-value", "gain_to": 300.0, "threshold": 0.01, "threshold_source": "one binomial SE"}
    cell = call_cell(f)
    assert "at least +9.3 · continue" in cell and "+30.0" not in cell.split(">", 1)[1]
    assert _gain({"fc": f}) == "at least +9.3"
    closed = {**f, "open_end": False}
    assert "+30.0 · continue" in call_cell(closed) and _gain({"fc": closed}) == "+30.0 [+9.3, +62.0]"


def test_a_gain_in_score_units_is_written_alike_on_the_screen_the_page_and_the_forecast():
    """A score in [-1, 1] has no points: the forecast wrote its gain '+0.000 [+0.000, +0.020]', while the
    demo and the report wrote '+0 [+0, +0.0196]', each bound to its own precision."""
    from entropylaw.fit.forecast.text import gain_text
    from entropylaw.page.forecasts import call_cell
    from entropylaw.results.columns import _gain

    f = {"call": "stop", "gain": -0.00001, "gain_ci": (0.0, 0.0196), "point": None, "call_method": "last-value",
         "gain_to": 260.0, "threshold": 0.033, "threshold_source": "the window's noise"}
    assert _gain({"fc": f}) == "+0.000 [+0.000, +0.020]"
    assert "+0.000 · stop" in call_cell(f)
    d = {"gain": {"expected": -0.00001, "lo": 0.0, "hi": 0.0196}, "point": None}
    assert gain_text(d) == "+0.000 [+0.000, +0.020]"
