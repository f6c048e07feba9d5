"""The stored calibration is the current code's: ``calibration.json``'s factors scale the raw
intervals that the forecast draws now. A change of the draws (a step's draws made independent of
the other steps asked did it) leaves the factors calibrated for other intervals, unsaid; the raw
intervals of a few shipped runs, stored by the backtest beside the factors, must still be drawn."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from entropylaw.fit.forecast import calibrate as cal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "analysis"))

from bench_forecast_calibration import FINGERPRINT, raw_interval  # noqa: E402

STORED = cal.stored().get("fingerprint") or []


def test_the_backtest_stored_the_fingerprint_of_its_runs():
    assert [(f["path"], f["method"]) for f in STORED] == list(FINGERPRINT), \
        "calibration.json holds no fingerprint of the runs it was calibrated on: run analysis/bench_forecast.py"


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
