"""The stored calibration is the current code's: ``calibration.json``'s factors scale the raw
intervals that the forecast draws now. A change of the draws (a step's draws made independent of
the other steps asked did it) leaves the factors calibrated for other intervals, unsaid; the raw
intervals of a few shipped runs, stored by the backtest beside the factors, must still be drawn."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

from entropylaw.fit.forecast import calibrate as cal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analysis"))

from bench_forecast_calibration import FINGERPRINT, raw_interval, write_calibration  # noqa: E402
from entropylaw.fit.forecast.names import NEW_TASK  # noqa: E402

STORED = cal.stored().get("fingerprint") or []


def test_the_backtest_stored_the_fingerprint_of_its_runs():
    assert [(f["path"], f["method"]) for f in STORED] == list(FINGERPRINT), \
        "calibration.json holds no fingerprint of the runs it was calibrated on: run analysis/bench_forecast.py"
    # a task the prior does not know (MATH, an unnamed score) draws logit-drift otherwise (t_posterior)
    assert any(method == NEW_TASK for _, method in FINGERPRINT)


@pytest.mark.printed
def test_a_calibration_written_with_a_moved_prior_passes_its_own_fingerprint(tmp_path, monkeypatch):
    """The fingerprint is drawn with the prior of the file it is written in: drawn with the
    previous file's (read once and kept), a fresh calibration whose prior had moved failed here."""
    doc = copy.deepcopy(cal.stored())
    cal.stored()  # the shipped file read and kept, as the backtest's forecasts leave it
    prior = doc["shape_prior"]["validation"]
    prior["new_task"]["c"][0] += 0.2
    prior["tasks"]["gsm8k"]["prior"]["rates"] = [c + 0.2 for c in prior["tasks"]["gsm8k"]["prior"]["rates"]]
    monkeypatch.setattr(cal, "PATH", tmp_path / "calibration.json")
    try:
        write_calibration(ROOT, doc)
        written = json.loads(cal.PATH.read_text())["fingerprint"]
        moved = [f for f, old in zip(written, STORED) if f["mid"] != pytest.approx(old["mid"], rel=1e-6)]
        assert len(moved) >= 2, "the prior moved too little to test anything"
        for f in written:
            assert raw_interval(ROOT, f["path"], f["method"], f["frac"])["mid"] == pytest.approx(f["mid"], rel=1e-6)
    finally:
        cal.stored.cache_clear()


@pytest.mark.printed
@pytest.mark.parametrize("stored", STORED, ids=[f"{Path(f['path']).stem}-{f['method']}" for f in STORED])
def test_the_raw_intervals_the_factors_were_calibrated_on_are_still_drawn(stored):
    now = raw_interval(ROOT, stored["path"], stored["method"], stored["frac"])
    for key in ("mid", "lo", "hi"):
        # seeded draws: equal on any BLAS to far better than 1e-6 (a kernel moves the last bits only)
        assert now[key] == pytest.approx(stored[key], rel=1e-6, abs=1e-9), (
            f"{stored['path']} {stored['method']} {key}: drawn {now[key]!r}, calibrated on {stored[key]!r}: the "
            "forecast's raw intervals changed since calibration.json's factors were measured: run "
            "`python analysis/bench_forecast.py --ks 10,15,25,50` and commit its calibration.json")


def test_the_factors_were_measured_on_the_runs_shipped_now():
    """A run added to data/ (or removed) moves the factors without moving any draw: the backtest
    stores the runs it calibrated on, and they must be the ones it reads now."""
    from bench_forecast import default_sources, load_runs, run_data

    now = [run.run_id for _, run in run_data(load_runs(default_sources())[0], say=False)]
    assert sorted(now) == cal.stored().get("run_ids"), (
        "calibration.json was measured on other runs than data/ holds now: run "
        "`python analysis/bench_forecast.py --ks 10,15,25,50` and commit its calibration.json")
