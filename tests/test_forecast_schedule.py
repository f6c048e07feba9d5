"""A learning rate that falls after the window: said beside the forecast, from the log's own
learning-rate metric or the printed config's schedule, never from noise or a warm-up; checked
against the schedule's closed form and against the later steps of a real TRL run's log."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from entropylaw import table
from entropylaw.fit.forecast.core import forecast, forecast_table
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.log_facts import log_facts
from entropylaw.fit.forecast.schedule import LR_SAID, lr_note

ROOT = Path(__file__).resolve().parents[1]


def _linear_decay(peak=1e-4, warmup=15, total=200, every=5):
    """HF's linear schedule: a warm-up to ``peak`` at step ``warmup``, then a straight line to 0 at ``total``."""
    steps = np.arange(every, total + 1, every, dtype=float)
    lr = np.where(steps <= warmup, peak * steps / warmup, peak * (total - steps) / (total - warmup))
    return steps, lr


def test_a_linear_decay_is_said_with_the_step_where_it_reaches_zero():
    steps, lr = _linear_decay()
    note = lr_note((steps, lr), end=30.0)
    assert note.startswith(LR_SAID)
    assert "fell from 0.0001 (step 15) to 9.19e-05 (step 30)" in note
    # the closed form: a straight line from the peak reaches 0 at the schedule's last step
    assert "on a straight line it reaches 0 near step 200" in note
    assert "may overstate what the rest adds" in note
    # the window's end (34.25) is not a logged step: the last rate read is step 30's, none after it
    assert "(step 30)" in lr_note((steps, lr), end=34.25) and "(step 35)" not in lr_note((steps, lr), end=34.25)


def test_a_cosine_is_said_without_a_step_where_it_reaches_zero():
    """A cosine's first points are no straight line: a line through them would put 0 near step 748
    (from step 30), where the schedule reaches 0 at 200."""
    steps = np.arange(5.0, 201.0, 5.0)
    lr = np.where(steps <= 15, 1e-4 * steps / 15, 1e-4 * 0.5 * (1 + np.cos(np.pi * (steps - 15) / 185)))
    for end in (30.0, 50.0):
        note = lr_note((steps, lr), end=end)
        assert note.startswith(LR_SAID) and "reaches 0" not in note


def test_repeated_unsorted_and_unusable_rates_are_read_as_the_schedule_they_hold():
    steps, lr = _linear_decay()
    want = lr_note((steps, lr), end=30.0)
    order = np.random.default_rng(0).permutation(len(steps))
    assert lr_note((steps[order], lr[order]), end=30.0) == want  # any order
    twice = np.r_[steps, [15.0, 15.0]], np.r_[lr, [lr[2], lr[2]]]  # the peak logged three times
    assert lr_note(twice, end=30.0) == want
    bad = np.r_[steps, [16.0, 17.0, 18.0]], np.r_[lr, [-1.0, np.nan, np.inf]]  # none of them a rate
    assert lr_note(bad, end=30.0) == want


@pytest.mark.parametrize("case, lr", [
    ("constant", np.full(8, 1e-6)),
    ("warm-up only", np.linspace(1e-6, 1e-5, 8)),
    ("a set rate that rose again after a dip", np.array([1e-5, 1e-5, 9.8e-6, 9.9e-6, 9.7e-6, 9.6e-6, 9.8e-6, 9.5e-6])),
    ("falling under 1 %", np.array([1e-5] * 4 + [0.999e-5, 0.998e-5, 0.997e-5, 0.996e-5])),
    ("logged as 0 (veRL's actor/lr when it is not set)", np.zeros(8)),
    ("two points", np.array([1e-5, 9e-6])),
])
def test_no_note_without_a_schedule_falling_step_after_step(case, lr):
    steps = np.arange(1.0, len(lr) + 1)
    assert lr_note((steps, lr), end=float(len(lr))) is None, case
    assert lr_note(None, end=10.0) is None


def test_the_rate_after_the_window_is_not_read():
    steps, lr = _linear_decay(warmup=40)
    assert lr_note((steps, lr), end=30.0) is None  # still warming up in the window: what follows is unseen
    assert lr_note((steps, lr), end=60.0) is not None


def test_the_printed_configs_schedule_is_said_only_where_the_log_records_no_rate():
    steps = np.arange(1.0, 9.0)
    assert "the config's learning-rate schedule is cosine" in lr_note(None, 8.0, {"lr_schedule": " Cosine "})
    assert "schedule is linear" in lr_note((steps, np.zeros(8)), 8.0, {"lr_schedule": "linear"})  # logged as 0
    for other in ("constant", "reduce_lr_on_plateau", "1.5", ""):
        assert lr_note(None, 8.0, {"lr_schedule": other}) is None, other
    assert lr_note(None, 8.0, {}) is None
    # the log's own flat rate over the window is what the run did: the config does not overrule it
    assert lr_note((steps, np.full(8, 1e-6)), 8.0, {"lr_schedule": "cosine"}) is None


def _sweep_table(n=4, lr=True):
    """``n`` runs logging a validation score, entropy and (``lr``) HF's linear schedule's learning rate."""
    frames = []
    steps, rates = _linear_decay()
    for i in range(n):
        recs = [(int(s), "val/gsm8k", 0.8 - (0.4 + 0.02 * i) * np.exp(-s / 40)) for s in steps]
        recs += [(int(s), "entropy", 0.5 * np.exp(-s / 80)) for s in steps]
        recs += [(int(s), "learning_rate", float(r)) for s, r in zip(steps, rates)] if lr else []
        frames.append(table.from_records(recs, run_id=f"r{i}"))
    return pd.concat(frames, ignore_index=True)


def test_a_forecast_says_it_beside_its_numbers_and_the_one_line_view_groups_the_runs():
    df = _sweep_table()
    fcs = forecast_table(df, fit_frac=0.15, methods=["default"], n_boot=50)
    for fc in fcs.values():
        assert any(w.startswith(LR_SAID) and "reaches 0 near step 200" in w for w in fc.warnings), fc.warnings
        assert any("(step 30)" in w for w in fc.warnings)  # read up to the window's end (step 30 of 200), not past it
    text = str(fcs)
    assert "4 runs with the learning rate falling after the window (r0, r1, r2, ...)" in text
    assert text.count("fell from 0.0001") == 0  # grouped, not said four times
    assert "learning rate falling" in fcs.to_dict()[0]["warnings"][-1]
    # the same runs without the metric: nothing said
    plain = forecast_table(_sweep_table(lr=False), fit_frac=0.15, methods=["default"], n_boot=50)
    assert not any(LR_SAID in w for fc in plain.values() for w in fc.warnings)


def test_the_first_learning_rate_key_that_holds_a_rate_is_read():
    """veRL logs ``actor/lr`` as 0 where no rate is set: a ``learning_rate`` beside it is read."""
    df = _sweep_table(1)
    zeros = df[df["metric"] == "learning_rate"].assign(metric="actor/lr", value=0.0)
    both = pd.concat([df, zeros], ignore_index=True)
    steps, rates = log_facts(both, "r0")["lr"]
    assert rates.max() == pytest.approx(1e-4)
    fc = forecast(RunData.from_table(both, "r0"), fit_frac=0.15, methods=["default"], n_boot=50,
                  log=log_facts(both, "r0"))
    assert any(w.startswith(LR_SAID) for w in fc.warnings)


def test_the_config_alone_is_read_from_the_run():
    df = _sweep_table(1, lr=False)
    run = RunData.from_table(df, "r0")
    fc = forecast(replace(run, config={"lr_schedule": "cosine"}), fit_frac=0.15, methods=["default"], n_boot=50)
    assert any("schedule is cosine" in w for w in fc.warnings)
    fc = forecast(run, fit_frac=0.15, methods=["default"], n_boot=50, log=log_facts(df, "r0"))
    assert not any(LR_SAID in w for w in fc.warnings)


def test_a_real_trl_run_is_told_where_its_rate_reaches_zero_and_its_later_log_agrees():
    """TRL's Qwen2.5-7B run (data/real): a warm-up to step 15, then HF's linear decay. From 15 %
    of its steps (step 34.25; the rate logged every 5 steps), the note says the rate reaches 0 near
    step 200 or 201; the log, past the window, holds 5.3e-07 at its last step, 200 (under 1 % of
    its peak)."""
    import entropylaw as el

    df = el.load(str(ROOT / "data" / "real"), warn=False)
    rid = "qwen2.5-7b__exp1a__rho1.00_seed42"
    fc = forecast_table(df, run_ids=[rid], fit_frac=0.15, methods=["default"], n_boot=50)[rid]
    [note] = [w for w in fc.warnings if w.startswith(LR_SAID)]
    assert "to 9e-05 (step 30)" in note  # the window's last logged rate, none after it
    at = float(note.split("reaches 0 near step ")[1].split(";")[0])
    steps, rates = log_facts(df, rid)["lr"]
    assert steps[-1] == 200 and rates[-1] < 0.01 * rates.max()
    assert abs(at - steps[-1]) <= 5


def test_the_reports_forecast_section_names_it_where_the_regime_says_nothing_else():
    from entropylaw.results.rows import regime_shown

    fcs = forecast_table(_sweep_table(3), fit_frac=0.15, methods=["default"], n_boot=50)
    from entropylaw.page.forecasts import tags

    shown = regime_shown(fcs["r0"])
    assert shown["regime"] == "" and shown["caution"] == "learning rate falling"
    assert "reaches 0 near step 200" in shown["regime_note"]
    # the forecast section names it, with its words on hover; the first screen keeps to the regimes
    assert ">learning rate falling</span>" in tags("", shown, caution=True) and "reaches 0 near step 200" in \
        tags("", shown, caution=True)
    assert tags("", shown) == ""
    plain = forecast_table(_sweep_table(3, lr=False), fit_frac=0.15, methods=["default"], n_boot=50)
    assert regime_shown(plain["r0"])["caution"] == ""
